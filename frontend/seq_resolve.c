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
 * The same walk passes lists through Identity, Optional and
 * OptionalGetElement, splits a Where over two resolved sequences of one
 * length into a Where per element (a run-time If returning sequences), and
 * turns SplitToSequence with an absent or constant split over an input of
 * known shape into Split (+ Squeeze), whose outputs are the elements.
 *
 * Optionals are decided at compile time: an optional is absent when it is
 * a graph input given to --optional-absent (frontend/seq_io.c), the output
 * of Optional() without input, or an omitted input; every other optional
 * is its value. OptionalHasElement folds to a constant, OptionalGetElement
 * and Optional(x) become Identity (or pass a list on); reading an absent
 * optional in any other way is an error naming the node.
 *
 * Last, the graph outputs declared as sequences or optionals are bound
 * (Graph.out_tags): a sequence output becomes one output buffer per element
 * ("y[0]", "y[1]", ... through Identity nodes), an absent optional output
 * has no buffer and is listed in Graph.absent_outputs.
 *
 * The node list is rebuilt in order, as in control.c, so that inserted
 * Unsqueeze nodes stand before their Concat.
 */
#include "onnx.h"
#include "infer.h"

#include <string.h>

typedef struct SeqCtx {
    Graph *g;
    Diag *d;
    int32_t n_vals;      /* values the arrays below cover */
    int32_t **elems;     /* per value: element list of a resolved sequence */
    int64_t *len;        /* per value: list length, -1 when not resolved */
    uint8_t *absent;     /* per value: an optional without a value */
    int32_t serial;      /* makes new value names unique */
} SeqCtx;

static void *sq_alloc(Graph *g, size_t count, size_t size)
{
    void *p = arena_array(g->arena, count ? count : 1, size);
    if (!p)
        die("compile arena exhausted");
    return p;
}

/* Grows the per-value arrays to cover every value of the graph. */
static void cover(SeqCtx *S)
{
    int32_t n = S->g->n_values, i;
    int32_t **e;
    int64_t *l;
    uint8_t *a;
    if (n <= S->n_vals)
        return;
    n += n / 2 + 16;
    e = sq_alloc(S->g, (size_t)n, sizeof *e);
    l = sq_alloc(S->g, (size_t)n, sizeof *l);
    a = sq_alloc(S->g, (size_t)n, 1);
    for (i = 0; i < n; i++) {
        e[i] = i < S->n_vals ? S->elems[i] : NULL;
        l[i] = i < S->n_vals ? S->len[i] : -1;
        a[i] = i < S->n_vals ? S->absent[i] : 0;
    }
    S->elems = e;
    S->len = l;
    S->absent = a;
    S->n_vals = n;
}

static int32_t fresh_value(SeqCtx *S, const char *base)
{
    int32_t vi = graph_fresh_value(S->g, base, "seq", &S->serial);
    cover(S);
    return vi;
}

static int is_absent(const SeqCtx *S, int32_t vi)
{
    return vi < 0 || (vi < S->n_vals && S->absent[vi]);
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

static int32_t const_bool(SeqCtx *S, const char *base, int truth)
{
    int32_t vi = fresh_value(S, base);
    uint8_t *p = sq_alloc(S->g, 1, 1);
    Value *v = &S->g->values[vi];
    *p = (uint8_t)(truth != 0);
    v->dtype = DT_BOOL;
    v->rank = 0;
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
    case OP_Identity:
    case OP_Optional:
    case OP_OptionalGetElement:
        if (n->n_in < 1 || (len = seq_len(S, n->in[0])) < 0)
            return;
        S->len[o] = len;
        S->elems[o] = S->elems[n->in[0]];
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

/* A node with one output rewritten into `op` over `count` inputs (an
 * Identity or a Where), appended. */
static void emit1(SeqCtx *S, const Node *orig, OpKind op, const int32_t *in, int count,
                  int32_t out)
{
    Node n = *orig;
    retarget(S->g, &n, op, in, count, NULL);
    n.n_out = 1;
    n.out = sq_alloc(S->g, 1, sizeof *n.out);
    n.out[0] = out;
    append(S->g, &n);
}

/* "'x' is an optional without a value (...)": why value vi is absent. */
static const char *absent_why(const SeqCtx *S, int32_t vi)
{
    const Value *v;
    if (vi < 0)
        return "the input is omitted";
    v = &S->g->values[vi];
    if (v->io_kind & IO_OPTIONAL)
        return arena_printf(S->g->arena, "'%s' is absent (--optional-absent %s)", v->name,
                            v->name);
    return arena_printf(S->g->arena, "'%s' is an optional without a value", v->name);
}

/* SplitToSequence over an input of known shape with an absent or constant
 * split: Split (+ Squeeze) whose outputs are the elements. 1 when done. */
static int split_to_seq(SeqCtx *S, const Node *orig)
{
    Graph *g = S->g;
    int32_t x = orig->in[0], o = orig->out[0], split_v, *outs, *el;
    const Value *xv;
    const int64_t *c = NULL;
    int64_t nsplit = 0, axis, keep, dim, count, k, *sizes, pos;
    const Attr *ax = node_attr(orig, "axis"), *kd = node_attr(orig, "keepdims");
    Node n;
    if (o < 0 || x < 0)
        return 0;
    if (!value_is_static(&g->values[x]) && g->values[x].producer >= 0 &&
        infer_value_early(g, x, S->d) != 0)
        return 0;
    xv = &g->values[x];
    if (!value_is_static(xv) || xv->rank < 1)
        return 0;
    if (orig->n_in > 1 && orig->in[1] >= 0) {
        const Value *sv = &g->values[orig->in[1]];
        if (!sv->data || sv->rank > 1 || (nsplit = value_const_ints(g, orig->in[1], &c)) < 1)
            return 0;
        if (sv->rank == 1 && nsplit != sv->dims[0])
            return 0;
    }
    axis = ax && ax->type == ATTR_INT ? ax->i : 0;
    keep = kd && kd->type == ATTR_INT ? kd->i : 1;
    if (axis < -xv->rank || axis >= xv->rank)
        return 0; /* infer_SplitToSequence reports it */
    if (axis < 0)
        axis += xv->rank;
    dim = xv->dims[axis];
    if (!c) {
        count = dim;
    } else if (g->values[orig->in[1]].rank == 0) {
        if (c[0] <= 0)
            return 0;
        count = dim == 0 ? 0 : (dim + c[0] - 1) / c[0];
    } else {
        int64_t sum = 0;
        count = nsplit;
        for (k = 0; k < nsplit; k++) {
            if (c[k] < 0)
                return 0;
            sum += c[k];
        }
        if (sum != dim)
            return 0;
    }
    if (count < 1 || count > 4096)
        return 0;
    sizes = sq_alloc(g, (size_t)count, sizeof *sizes);
    for (k = 0, pos = 0; k < count; k++) {
        sizes[k] = !c ? 1 : g->values[orig->in[1]].rank == 0
                   ? (dim - pos < c[0] ? dim - pos : c[0]) : c[k];
        pos += sizes[k];
    }
    split_v = const_i64(S, "seq_split", 1, sizes, count);
    outs = sq_alloc(g, (size_t)count, sizeof *outs);
    el = sq_alloc(g, (size_t)count, sizeof *el);
    for (k = 0; k < count; k++)
        outs[k] = fresh_value(S, orig->name[0] ? orig->name : "seq_split");
    n = *orig;
    {
        int32_t in2[2];
        in2[0] = x;
        in2[1] = split_v;
        retarget(g, &n, OP_Split, in2, 2, axis_attr(g, axis));
    }
    n.opset = 13; /* split as an input */
    n.n_out = (int)count;
    n.out = outs;
    append(g, &n);
    for (k = 0; k < count; k++) {
        el[k] = outs[k];
        if (!c && !keep) {
            int32_t in2[2];
            in2[0] = outs[k];
            in2[1] = const_i64(S, "seq_axes", 1, &axis, 1);
            el[k] = fresh_value(S, orig->name[0] ? orig->name : "seq_elem");
            emit1(S, orig, OP_Squeeze, in2, 2, el[k]);
            S->g->nodes[S->g->n_nodes - 1].opset = 13;
        }
    }
    S->len[o] = count;
    S->elems[o] = el;
    return 1;
}

/* The optional operators, reads of absent optionals, Where over resolved
 * sequences and SplitToSequence. Returns 1 when n was handled (appended as
 * something else or dropped), 0 to go on, -1 after reporting. */
static int rewrite_opt(SeqCtx *S, const Node *n)
{
    Graph *g = S->g;
    int32_t o = n->n_out > 0 ? n->out[0] : -1, x = n->n_in > 0 ? n->in[0] : -1, c;
    int k;
    switch (n->op) {
    case OP_Optional:
        if (x < 0 || is_absent(S, x)) {
            if (o >= 0)
                S->absent[o] = 1;
            return 1;
        }
        track(S, n);
        emit1(S, n, OP_Identity, &x, 1, o);
        return 1;
    case OP_OptionalHasElement:
        c = const_bool(S, "has_element", !is_absent(S, x));
        emit1(S, n, OP_Identity, &c, 1, o);
        return 1;
    case OP_OptionalGetElement:
        if (is_absent(S, x))
            return -!!diag_error(S->d, n, "input[0]", "%s, so there is no element to get "
                                 "(optionals are decided at compile time)", absent_why(S, x));
        track(S, n);
        emit1(S, n, OP_Identity, &x, 1, o);
        return 1;
    case OP_Identity:
        if (x >= 0 && is_absent(S, x)) {
            if (o >= 0)
                S->absent[o] = 1;
            return 1;
        }
        break;
    case OP_Where: {
        int64_t l1, l2, i;
        int32_t *e;
        if (n->n_in < 3 || is_absent(S, n->in[1]) || is_absent(S, n->in[2]) ||
            (l1 = seq_len(S, n->in[1])) < 0 || (l2 = seq_len(S, n->in[2])) < 0)
            break; /* absent: reported below; not listed: the stacked path */
        if (l2 != l1)
            return -!!diag_error(S->d, n, NULL, "selects between sequences of %lld and %lld "
                                 "elements at run time (a sequence's length must be known at "
                                 "compile time)", (long long)l1, (long long)l2);
        e = sq_alloc(g, (size_t)l1 + 1, sizeof *e);
        for (i = 0; i < l1; i++) {
            int32_t in3[3];
            in3[0] = n->in[0];
            in3[1] = S->elems[n->in[1]][i];
            in3[2] = S->elems[n->in[2]][i];
            e[i] = fresh_value(S, n->name[0] ? n->name : "seq_where");
            emit1(S, n, OP_Where, in3, 3, e[i]);
        }
        if (o >= 0) {
            S->len[o] = l1;
            S->elems[o] = e;
        }
        return 1;
    }
    case OP_SplitToSequence:
        if (split_to_seq(S, n))
            return 1;
        break;
    default:
        break;
    }
    for (k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && is_absent(S, n->in[k]))
            return -!!diag_error(S->d, n, arena_printf(g->arena, "input[%d]", k),
                                 "%s; only Identity, OptionalHasElement and Optional may read "
                                 "an absent optional%s", absent_why(S, n->in[k]),
                                 n->op == OP_Where ? " (an optional that is present or not "
                                 "depending on a run-time value is not supported)" : "");
    return 0;
}

/* Graph output j declared as a sequence or an optional, or carrying a
 * resolved list: its element buffers (tagged), or none when absent.
 * Writes the new outputs through *outs / *tags. Returns 0 or -1. */
static int bind_output(SeqCtx *S, int32_t vi, int32_t *outs, IoTag *tags, int32_t *n_out)
{
    Graph *g = S->g;
    Value *v = &g->values[vi];
    uint8_t opt = (v->io_kind & IO_OPTIONAL) != 0;
    int64_t len = seq_len(S, vi), k;
    if (is_absent(S, vi)) {
        if (!opt)
            return -!!diag_error(S->d, NULL, NULL, "graph output '%s' has no value (%s), but "
                                 "the model does not declare it optional", v->name,
                                 absent_why(S, vi));
        g->absent_outputs[g->n_absent_outputs++] = v->name;
        return 0;
    }
    if (!(v->io_kind & IO_SEQUENCE) && len < 0) {
        tags[*n_out].optional = opt;
        outs[(*n_out)++] = vi;
        return 0;
    }
    if (len < 0) {
        /* not listed here: a stacked sequence (frontend/infer_seq.c), whose
         * length inference gives; bound by onnx_bind_stacked_outputs */
        tags[*n_out].seq = v->name;
        tags[*n_out].index = -1;
        tags[*n_out].optional = opt;
        outs[(*n_out)++] = vi;
        return 0;
    }
    for (k = 0; k < len; k++) {
        const char *en = arena_printf(g->arena, "%s[%lld]", g->values[vi].name, (long long)k);
        int32_t ei, ni;
        if (!en)
            die("compile arena exhausted");
        if (graph_find_value(g, en) >= 0)
            en = arena_printf(g->arena, "%s~out", en);
        ei = graph_add_value(g, en);
        cover(S);
        ni = graph_add_node(g, OP_Identity, g->values[vi].name, 1, 1);
        g->nodes[ni].in[0] = S->elems[vi][k];
        g->nodes[ni].out[0] = ei;
        g->nodes[ni].index = -1;
        g->values[ei].producer = ni;
        tags[*n_out].seq = g->values[vi].name;
        tags[*n_out].index = (int32_t)k;
        tags[*n_out].optional = opt;
        outs[(*n_out)++] = ei;
    }
    return 0;
}

static int bind_outputs(SeqCtx *S)
{
    Graph *g = S->g;
    int32_t j, total = 0, n_old = g->n_outputs, *old = g->outputs, *outs;
    IoTag *tags;
    int any = g->in_tags != NULL;
    for (j = 0; j < n_old; j++) {
        int32_t vi = old[j];
        int64_t l = seq_len(S, vi);
        any |= g->values[vi].io_kind != 0 || l >= 0 || is_absent(S, vi);
        total += l >= 0 ? (int32_t)l : 1;
    }
    if (!any)
        return 0;
    outs = sq_alloc(g, (size_t)total + 1, sizeof *outs);
    tags = sq_alloc(g, (size_t)total + 1, sizeof *tags);
    g->absent_outputs = sq_alloc(g, (size_t)n_old, sizeof *g->absent_outputs);
    g->n_outputs = 0;
    for (j = 0; j < n_old; j++)
        if (bind_output(S, old[j], outs, tags, &g->n_outputs))
            return 1;
    g->outputs = outs;
    g->out_tags = tags;
    return 0;
}

static int is_seq_producer(OpKind op)
{
    return op == OP_SequenceEmpty || op == OP_SequenceConstruct || op == OP_SequenceInsert ||
           op == OP_SequenceErase;
}

/* Has the graph anything for this pass to do? */
static int needs_resolution(const Graph *g)
{
    int32_t i;
    if (g->in_tags || g->n_absent_inputs)
        return 1;
    for (i = 0; i < g->n_outputs; i++)
        if (g->values[g->outputs[i]].io_kind)
            return 1;
    for (i = 0; i < g->n_nodes; i++) {
        OpKind op = g->nodes[i].op;
        if (!g->nodes[i].dead && (is_seq_producer(op) || op == OP_Optional ||
                                  op == OP_OptionalHasElement || op == OP_OptionalGetElement ||
                                  op == OP_SplitToSequence))
            return 1;
    }
    return 0;
}

int onnx_resolve_sequences(Graph *g, Diag *d)
{
    Node *old = g->nodes;
    int32_t n_old = g->n_nodes, i, k;
    int32_t *uses;
    SeqCtx S;
    if (!needs_resolution(g))
        return 0;
    memset(&S, 0, sizeof S);
    S.g = g;
    S.d = d;
    cover(&S);
    for (i = 0; i < g->n_values; i++)
        S.absent[i] = g->values[i].absent;
    g->nodes = NULL;
    g->n_nodes = 0;
    g->cap_nodes = 0;
    for (i = 0; i < n_old; i++) {
        const Node *n = &old[i];
        int rc;
        if (n->dead)
            continue;
        rc = rewrite_opt(&S, n);
        if (rc < 0)
            return 1;
        if (rc)
            continue;
        track(&S, n);
        if (!rewrite(&S, n))
            append(g, n);
    }
    if (bind_outputs(&S))
        return 1;
    /* drop the producers nobody reads any more, last first so that chains
     * go: sequence operators and the Identity-like nodes passing a
     * resolved list on */
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
        if (n->n_out < 1 || n->out[0] < 0 || uses[n->out[0]] > 0 ||
            !(is_seq_producer(n->op) || seq_len(&S, n->out[0]) >= 0))
            continue;
        n->dead = 1;
        for (k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0)
                uses[n->in[k]]--;
    }
    return 0;
}

int onnx_bind_stacked_outputs(Graph *g, Diag *d)
{
    int32_t j, total = 0, n = 0, *outs, serial = 0;
    IoTag *tags;
    int pending = 0;
    for (j = 0; g->out_tags && j < g->n_outputs; j++) {
        const Value *v = &g->values[g->outputs[j]];
        if (g->out_tags[j].index >= 0) {
            total++;
            continue;
        }
        pending = 1;
        if (!v->is_sequence || v->rank < 1 || v->dims[0] < 0 || v->dims[0] > 4096)
            return diag_error(d, NULL, NULL, "graph output '%s' is a sequence whose elements are "
                              "not known at compile time (its length or a position depends on "
                              "a run-time value); tvmcc needs them to give each element a "
                              "buffer", v->name);
        total += (int32_t)v->dims[0];
    }
    if (!pending)
        return 0;
    outs = sq_alloc(g, (size_t)total + 1, sizeof *outs);
    tags = sq_alloc(g, (size_t)total + 1, sizeof *tags);
    for (j = 0; j < g->n_outputs; j++) {
        int32_t vi = g->outputs[j];
        int64_t k, len = g->values[vi].dims[0];
        if (g->out_tags[j].index >= 0) {
            tags[n] = g->out_tags[j];
            outs[n++] = vi;
            continue;
        }
        /* element k of the stacked sequence: SequenceAt at a constant */
        for (k = 0; k < len; k++) {
            const char *en = arena_printf(g->arena, "%s[%lld]", g->values[vi].name,
                                          (long long)k);
            int32_t pi, ei, ni;
            int64_t *pos = sq_alloc(g, 1, sizeof *pos);
            if (!en)
                die("compile arena exhausted");
            *pos = k;
            pi = graph_fresh_value(g, g->values[vi].name, "pos", &serial);
            g->values[pi].dtype = DT_INT64;
            g->values[pi].rank = 0;
            g->values[pi].data = pos;
            if (graph_find_value(g, en) >= 0)
                en = arena_printf(g->arena, "%s~out", en);
            ei = graph_add_value(g, en);
            ni = graph_add_node(g, OP_SequenceAt, g->values[vi].name, 2, 1);
            g->nodes[ni].in[0] = vi;
            g->nodes[ni].in[1] = pi;
            g->nodes[ni].out[0] = ei;
            g->nodes[ni].index = -1;
            g->nodes[ni].opset = 11;
            g->values[ei].producer = ni;
            tags[n].seq = g->values[vi].name;
            tags[n].index = (int32_t)k;
            tags[n].optional = g->out_tags[j].optional;
            outs[n++] = ei;
        }
    }
    g->outputs = outs;
    g->out_tags = tags;
    g->n_outputs = n;
    return infer_graph(g, d) != 0;
}

int seq_optional_presence(const Graph *g, int32_t vi)
{
    int depth;
    for (depth = 0; depth < 100000; depth++) {
        const Node *n;
        if (vi < 0 || vi >= g->n_values || g->values[vi].absent)
            return 0;
        if (g->values[vi].producer < 0 || g->values[vi].producer >= g->n_nodes)
            return 1;
        n = &g->nodes[g->values[vi].producer];
        switch (n->op) {
        case OP_Optional:
            return n->n_in > 0 && n->in[0] >= 0;
        case OP_Identity:
            vi = n->n_in > 0 ? n->in[0] : -1;
            break;
        case OP_Where:
        case OP_If:
        case OP_Loop:
            return -1;
        default:
            return 1;
        }
    }
    return -1;
}

int64_t seq_static_length(const Graph *g, int32_t vi)
{
    int depth, seen_seq = 0;
    int64_t add = 0;
    for (depth = 0; depth < 100000 && vi >= 0 && vi < g->n_values; depth++) {
        const Value *v = &g->values[vi];
        const Node *n;
        if (v->producer < 0 || v->producer >= g->n_nodes)
            return seen_seq ? -1 : -2;
        n = &g->nodes[v->producer];
        switch (n->op) {
        case OP_SequenceEmpty:
            return add;
        case OP_SequenceConstruct:
            return add + n->n_in;
        case OP_SequenceInsert:
            add++;
            seen_seq = 1;
            break;
        case OP_SequenceErase:
            add--;
            seen_seq = 1;
            break;
        case OP_Identity:
        case OP_Optional:
        case OP_OptionalGetElement:
            break;
        case OP_SplitToSequence:
            return -1;
        default:
            return seen_seq ? -1 : -2;
        }
        if (n->n_in < 1)
            return -1;
        vi = n->in[0];
    }
    return -1;
}

/* Resolved before inference (above); reaching inference is an internal
 * error. */
int infer_Optional(Graph *g, Node *n, Diag *d)
{
    (void)g;
    return diag_error(d, n, NULL, "internal: optionals are resolved before inference");
}

int infer_OptionalHasElement(Graph *g, Node *n, Diag *d)
{
    return infer_Optional(g, n, d);
}

int infer_OptionalGetElement(Graph *g, Node *n, Diag *d)
{
    return infer_Optional(g, n, d);
}
