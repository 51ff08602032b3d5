/*
 * Compile-time resolution of sequences, a graph rewrite run before shape
 * inference (after control-flow inlining). When every position that builds
 * a sequence is a compile-time constant, the sequence is just a list of
 * graph values, and its readers become plain tensor operators:
 *
 *   SequenceAt(s, p)            Identity(element p)
 *   SequenceLength(s)           Identity(constant L)
 *   ConcatFromSequence(s)       Concat of the elements (new_axis 0), or
 *                               Unsqueeze of each then Concat (new_axis 1)
 *
 * Lists are tracked through SequenceEmpty, SequenceConstruct, and
 * SequenceInsert / SequenceErase whose position is absent or an
 * initializer. The elements may then have different shapes, which the
 * stacked representation of frontend/infer_seq.c cannot hold. Producers
 * left without a reader are marked dead; anything not resolved here (a
 * run-time position, SplitToSequence, whose list length depends on shapes)
 * goes through the stacked path of infer_seq.c, which reports what it
 * cannot represent.
 *
 * The node list is rebuilt in order, as in control.c, so that inserted
 * Unsqueeze nodes stand before their Concat.
 */
#include "onnx.h"
#include "infer.h"

#include <string.h>

typedef struct SeqCtx {
    Graph *g;
    int32_t n_vals;      /* values that existed before the rewrite */
    int32_t **elems;     /* per value: element list of a resolved sequence */
    int64_t *len;        /* per value: list length, -1 when not resolved */
    int32_t serial;      /* makes new value names unique */
} SeqCtx;

static void *sq_alloc(Graph *g, size_t count, size_t size)
{
    void *p = arena_array(g->arena, count ? count : 1, size);
    if (!p)
        die("compile arena exhausted");
    return p;
}

static int32_t fresh_value(SeqCtx *S, const char *base)
{
    return graph_add_fresh_value(S->g, base, "seq", &S->serial);
}

/* A constant int64 tensor of rank 0 or 1 (count entries). */
static int32_t const_i64(SeqCtx *S, const char *base, int rank, const int64_t *vals,
                         int64_t count)
{
    int32_t vi = fresh_value(S, base);
    int64_t *p = sq_alloc(S->g, (size_t)count, sizeof *p);
    Value *v = &S->g->values[vi];
    memcpy(p, vals, (size_t)count * sizeof *p);
    v->dtype = DT_INT64;
    v->rank = rank;
    v->dims[0] = count;
    v->data = p;
    return vi;
}

/* Length of the resolved sequence vi, or -1. */
static int64_t seq_len(const SeqCtx *S, int32_t vi)
{
    return vi >= 0 && vi < S->n_vals ? S->len[vi] : -1;
}

/* Position input i of n as a constant normalised into [0, hi]: 1 when
 * known (absent: def), 0 otherwise (run time or out of range, left to
 * infer_seq.c, which reports the range error). */
static int const_pos(const SeqCtx *S, const Node *n, int i, int64_t len, int64_t hi,
                     int64_t def, int64_t *p)
{
    const Value *v;
    const int64_t *c;
    if (i >= n->n_in || n->in[i] < 0) {
        *p = def;
        return 1;
    }
    v = &S->g->values[n->in[i]];
    if (!v->data || (v->dtype != DT_INT64 && v->dtype != DT_INT32) ||
        value_const_ints(S->g, n->in[i], &c) != 1)
        return 0;
    *p = c[0] < 0 ? c[0] + len : c[0];
    return *p >= 0 && *p <= hi;
}

/* Records the element list of n's output when n builds a sequence from
 * resolved parts. */
static void track(SeqCtx *S, const Node *n)
{
    int32_t o = n->n_out > 0 ? n->out[0] : -1, *e;
    int64_t len, p, k;
    if (o < 0 || o >= S->n_vals)
        return;
    switch (n->op) {
    case OP_SequenceEmpty:
        S->len[o] = 0;
        S->elems[o] = NULL;
        return;
    case OP_SequenceConstruct:
        for (k = 0; k < n->n_in; k++)
            if (n->in[k] < 0 || seq_len(S, n->in[k]) >= 0)
                return;
        S->len[o] = n->n_in;
        S->elems[o] = n->in;
        return;
    case OP_SequenceInsert:
        len = seq_len(S, n->in[0]);
        if (len < 0 || n->in[1] < 0 || seq_len(S, n->in[1]) >= 0 ||
            !const_pos(S, n, 2, len, len, len, &p))
            return;
        e = sq_alloc(S->g, (size_t)(len + 1), sizeof *e);
        for (k = 0; k < len + 1; k++)
            e[k] = k < p ? S->elems[n->in[0]][k] : k == p ? n->in[1]
                                                           : S->elems[n->in[0]][k - 1];
        S->len[o] = len + 1;
        S->elems[o] = e;
        return;
    case OP_SequenceErase:
        len = seq_len(S, n->in[0]);
        if (len < 1 || !const_pos(S, n, 1, len, len - 1, len - 1, &p))
            return;
        e = sq_alloc(S->g, (size_t)(len - 1), sizeof *e);
        for (k = 0; k < len - 1; k++)
            e[k] = S->elems[n->in[0]][k < p ? k : k + 1];
        S->len[o] = len - 1;
        S->elems[o] = e;
        return;
    default:
        return;
    }
}

/* Appends a copy of node n (its arrays shared) and records its producers. */
static int32_t append(Graph *g, const Node *n)
{
    int32_t ni = graph_add_node(g, n->op, n->name, 0, 0);
    int k;
    g->nodes[ni] = *n;
    for (k = 0; k < g->nodes[ni].n_out; k++)
        if (g->nodes[ni].out[k] >= 0)
            g->values[g->nodes[ni].out[k]].producer = ni;
    return ni;
}

/* n rewritten as op over `count` inputs, keeping its outputs. op_type stays
 * the one written in the file, so that messages name the model's node. */
static void retarget(Graph *g, Node *n, OpKind op, const int32_t *in, int count, Attr *attr)
{
    n->op = op;
    n->n_in = count;
    n->in = sq_alloc(g, (size_t)count, sizeof *n->in);
    memcpy(n->in, in, (size_t)count * sizeof *in);
    n->n_attr = attr ? 1 : 0;
    n->attr = attr;
}

static Attr *axis_attr(Graph *g, int64_t axis)
{
    Attr *a = sq_alloc(g, 1, sizeof *a);
    memset(a, 0, sizeof *a);
    a->name = "axis";
    a->type = ATTR_INT;
    a->i = axis;
    return a;
}

/* Rewrites a reader of a resolved sequence into tensor operators, appending
 * them to the new node list. Returns 1 when rewritten, 0 to keep n. */
static int rewrite(SeqCtx *S, const Node *orig)
{
    Graph *g = S->g;
    Node n = *orig;
    int64_t len = n.n_in > 0 ? seq_len(S, n.in[0]) : -1, p, k;
    const int32_t *el;
    if (len < 0)
        return 0;
    el = S->elems[n.in[0]];
    switch (n.op) {
    case OP_SequenceAt:
        if (len < 1 || n.n_in < 2 || n.in[1] < 0 || !const_pos(S, &n, 1, len, len - 1, 0, &p))
            return 0;
        retarget(g, &n, OP_Identity, &el[p], 1, NULL);
        break;
    case OP_SequenceLength: {
        int32_t c = const_i64(S, "seq_len", 0, &len, 1);
        retarget(g, &n, OP_Identity, &c, 1, NULL);
        break;
    }
    case OP_ConcatFromSequence: {
        const Attr *ax = node_attr(&n, "axis"), *na = node_attr(&n, "new_axis");
        int32_t *u;
        if (len < 1 || !ax || ax->type != ATTR_INT || (na && na->type != ATTR_INT) ||
            len > 0x7fffffff)
            return 0;
        if (!na || na->i == 0) {
            retarget(g, &n, OP_Concat, el, (int)len, axis_attr(g, ax->i));
            break;
        }
        if (na->i != 1)
            return 0; /* infer_ConcatFromSequence reports it */
        u = sq_alloc(g, (size_t)len, sizeof *u);
        for (k = 0; k < len; k++) {
            Node un = *orig;
            int32_t in2[2];
            in2[0] = el[k];
            in2[1] = const_i64(S, "seq_axes", 1, &ax->i, 1);
            retarget(g, &un, OP_Unsqueeze, in2, 2, NULL);
            un.opset = 13; /* axes as an input */
            un.n_out = 1;
            un.out = sq_alloc(g, 1, sizeof *un.out);
            un.out[0] = u[k] = fresh_value(S, orig->name[0] ? orig->name : "seq_elem");
            append(g, &un);
        }
        retarget(g, &n, OP_Concat, u, (int)len, axis_attr(g, ax->i));
        break;
    }
    default:
        return 0;
    }
    append(g, &n);
    return 1;
}

static int is_seq_producer(OpKind op)
{
    return op == OP_SequenceEmpty || op == OP_SequenceConstruct || op == OP_SequenceInsert ||
           op == OP_SequenceErase;
}

int onnx_resolve_sequences(Graph *g, Diag *d)
{
    Node *old = g->nodes;
    int32_t n_old = g->n_nodes, i, k;
    int32_t *uses;
    SeqCtx S;
    (void)d;
    for (i = 0; i < n_old && !(is_seq_producer(old[i].op) && !old[i].dead); i++)
        ;
    if (i == n_old)
        return 0;
    memset(&S, 0, sizeof S);
    S.g = g;
    S.n_vals = g->n_values;
    S.elems = sq_alloc(g, (size_t)S.n_vals, sizeof *S.elems);
    S.len = sq_alloc(g, (size_t)S.n_vals, sizeof *S.len);
    for (i = 0; i < S.n_vals; i++)
        S.len[i] = -1;
    g->nodes = NULL;
    g->n_nodes = 0;
    g->cap_nodes = 0;
    for (i = 0; i < n_old; i++) {
        const Node *n = &old[i];
        if (n->dead)
            continue;
        track(&S, n);
        if (!rewrite(&S, n))
            append(g, n);
    }
    /* drop the producers nobody reads any more, last first so that chains go */
    uses = sq_alloc(g, (size_t)g->n_values, sizeof *uses);
    memset(uses, 0, (size_t)g->n_values * sizeof *uses);
    for (i = 0; i < g->n_nodes; i++)
        for (k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] >= 0)
                uses[g->nodes[i].in[k]]++;
    for (i = 0; i < g->n_outputs; i++)
        uses[g->outputs[i]]++;
    for (i = g->n_nodes - 1; i >= 0; i--) {
        Node *n = &g->nodes[i];
        if (!is_seq_producer(n->op) || n->out[0] < 0 || uses[n->out[0]] > 0)
            continue;
        n->dead = 1;
        for (k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                uses[n->in[k]]--;
    }
    return 0;
}
