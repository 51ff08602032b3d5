/*
 * Control-flow inlining: If, Loop and Scan become plain nodes of the main
 * graph before shape inference, so that nothing after the frontend ever
 * sees a subgraph.
 *
 * The node list is rebuilt in order; a control-flow node is replaced, at its
 * place, by copies of the nodes of its subgraph(s) with fresh, uniquely
 * named values. A Scope maps each subgraph value to a value of the main
 * graph; a name the subgraph does not define (an outer-scope reference, see
 * onnx_load.c) is looked up in the enclosing scopes, then in the main graph.
 * Control flow nested in a subgraph is inlined the same way, recursively.
 *
 *   If    constant condition: the taken branch. A condition computed from
 *         shapes or constants (the exporters' `if x.dim() == 3:` becomes
 *         Equal(Gather(Shape(x), 0), 3)) is made constant first: the nodes
 *         it depends on, all already in the rebuilt node list, are inferred
 *         and folded ahead of the rest (infer_value_early), so an If nested
 *         in a taken branch folds too and an untaken branch is never seen
 *         by inference. Run-time condition: both branches, and a Where per
 *         output selects the result; their nodes carry a note naming the If,
 *         which every message about them prints.
 *   Loop  unrolled. The trip count is the constant M when the condition is
 *         absent or constant true and the body passes it through unchanged;
 *         otherwise the iteration count is the declared length of a scan
 *         output (or a constant M) and each iteration is gated: a carried
 *         value only changes while `i < M` and the condition holds
 *         (Where on an And of both).
 *   Scan  unrolled over the scan axis: inputs sliced with Gather, outputs
 *         stacked with Unsqueeze + Concat (reversed where the direction says
 *         so). Opset 8's batch axis is one more unrolled level.
 *
 * The final value of each control-flow output is bound through an Identity
 * (removed by the simplify pass). Unrolling stops with an error beyond
 * CTL_MAX_NODES created nodes.
 */
#include "onnx.h"
#include "infer.h"

#include <string.h>

#define CTL_MAX_NODES 10000

typedef struct Scope Scope;
struct Scope {
    const Graph *sg;   /* subgraph whose values are mapped */
    int32_t *map;      /* sg value -> main-graph value, -1 while unset */
    Scope *up;         /* enclosing scope; NULL: the main graph */
};

typedef struct Ctx {
    Graph *g;          /* the main graph being rebuilt */
    Diag *d;
    int64_t added;     /* nodes created by unrolling so far */
    int32_t serial;    /* counter that makes value names unique */
    int32_t index;     /* Node.index given to created nodes (the top node's) */
    const char *note;  /* Node.note given to created nodes (a run-time If's branch) */
} Ctx;

static int is_control(const Node *n)
{
    return n->op == OP_If || n->op == OP_Loop || n->op == OP_Scan || n->op == OP_SequenceMap;
}

static void *ctl_alloc(Ctx *C, size_t n)
{
    void *p = arena_alloc(C->g->arena, n);
    if (!p)
        die("compile arena exhausted");
    return p;
}

/* New value of the main graph named after base, unique. */
static int32_t fresh_value(Ctx *C, const char *base)
{
    return graph_fresh_value(C->g, base, "", &C->serial);
}

/* A constant value (data shared, not copied). */
static int32_t const_value(Ctx *C, const char *base, DType t, int rank, const int64_t *dims,
                           void *data)
{
    int32_t vi = fresh_value(C, base);
    Value *v = &C->g->values[vi];
    int i;
    v->dtype = t;
    v->rank = rank;
    for (i = 0; i < rank; i++)
        v->dims[i] = dims[i];
    v->data = data;
    return vi;
}

static int32_t const_i64(Ctx *C, int64_t x, int rank)
{
    int64_t *p = ctl_alloc(C, sizeof *p), one = 1;
    *p = x;
    return const_value(C, "const", DT_INT64, rank, &one, p);
}

static int32_t const_true(Ctx *C)
{
    uint8_t *p = ctl_alloc(C, 1);
    *p = 1;
    return const_value(C, "true", DT_BOOL, 0, NULL, p);
}

/* Appends a node to the main graph; -1 after reporting when the unrolling
 * limit is reached. */
static int32_t add_node(Ctx *C, const Node *origin, OpKind op, const char *name, int n_in,
                        int n_out)
{
    int32_t ni;
    if (++C->added > CTL_MAX_NODES) {
        if (C->added == CTL_MAX_NODES + 1)
            diag_error(C->d, origin, NULL, "inlining the control flow needs more than %d "
                       "nodes (a trip count or scan length too large to unroll)",
                       CTL_MAX_NODES);
        return -1;
    }
    ni = graph_add_node(C->g, op, name, n_in, n_out);
    C->g->nodes[ni].index = C->index;
    C->g->nodes[ni].note = C->note;
    return ni;
}

/* Records node ni as the producer of its outputs. */
static void set_producers(Ctx *C, int32_t ni)
{
    const Node *n = &C->g->nodes[ni];
    int k;
    for (k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0)
            C->g->values[n->out[k]].producer = ni;
}

static Attr *int_attr(Ctx *C, const char *name, int64_t v)
{
    Attr *a = ctl_alloc(C, sizeof *a);
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = ATTR_INT;
    a->i = v;
    return a;
}

/* Emits op(a, b, c) (inputs -1 omitted from the end) into out, or into a
 * fresh value when out is -1. attr may be NULL. Returns the output or -1. */
static int32_t emit(Ctx *C, const Node *origin, OpKind op, int32_t a, int32_t b, int32_t c,
                    Attr *attr, int32_t out)
{
    int n_in = c >= 0 ? 3 : b >= 0 ? 2 : a >= 0 ? 1 : 0;
    int32_t ni = add_node(C, origin, op, origin->name, n_in, 1);
    Node *n;
    if (ni < 0)
        return -1;
    if (out < 0)
        out = fresh_value(C, origin->name[0] ? origin->name : op_info[op].name);
    n = &C->g->nodes[ni];
    if (n_in > 0) n->in[0] = a;
    if (n_in > 1) n->in[1] = b;
    if (n_in > 2) n->in[2] = c;
    n->out[0] = out;
    n->opset = 13; /* Unsqueeze takes axes as an input */
    if (attr) {
        n->n_attr = 1;
        n->attr = attr;
    }
    set_producers(C, ni);
    return out;
}

/* Unsqueeze every value at axis, then Concat them along it into out (or a
 * fresh value). Returns the result or -1. */
static int32_t stack(Ctx *C, const Node *origin, const int32_t *vals, int64_t count,
                     int64_t axis, int32_t out)
{
    int32_t ni, ax = const_i64(C, axis, 1), *u;
    Node *n;
    int64_t i;
    if (count <= 0 || count > CTL_MAX_NODES) {
        diag_error(C->d, origin, NULL, "a scan output would have %lld entries, which tvmcc "
                   "cannot unroll", (long long)count);
        return -1;
    }
    u = arena_array(C->g->arena, (size_t)count, sizeof *u);
    if (!u)
        die("compile arena exhausted");
    for (i = 0; i < count; i++)
        if ((u[i] = emit(C, origin, OP_Unsqueeze, vals[i], ax, -1, NULL, -1)) < 0)
            return -1;
    ni = add_node(C, origin, OP_Concat, origin->name, (int)count, 1);
    if (ni < 0)
        return -1;
    if (out < 0)
        out = fresh_value(C, origin->name[0] ? origin->name : "stack");
    n = &C->g->nodes[ni];
    for (i = 0; i < count; i++)
        n->in[i] = u[i];
    n->out[0] = out;
    n->n_attr = 1;
    n->attr = int_attr(C, "axis", axis);
    set_producers(C, ni);
    return out;
}

/* Value vi of the main graph as a compile-time boolean (an initializer, a
 * folded value or a Constant node's output). Returns 1 when known. */
static int const_truth(const Graph *g, int32_t vi, int *truth)
{
    const Value *v = &g->values[vi];
    const void *data = v->data;
    DType t = v->dtype;
    size_t k, sz;
    if (!data && v->producer >= 0 && g->nodes[v->producer].op == OP_Constant) {
        const Attr *a = node_attr(&g->nodes[v->producer], "value");
        if (a && a->type == ATTR_TENSOR && a->t && a->t->numel >= 1 &&
            a->t->dtype != DT_STRING) {
            data = a->t->data;
            t = a->t->dtype;
        }
    }
    if (!data && v->producer >= 0) {
        /* an optional's presence is decided at compile time
         * (frontend/seq_resolve.c): OptionalHasElement, through Not and
         * Identity (a Loop body testing its carried optional) */
        const Node *n = &g->nodes[v->producer];
        int p;
        if (n->op == OP_OptionalHasElement &&
            (p = seq_optional_presence(g, n->n_in > 0 ? n->in[0] : -1)) >= 0) {
            *truth = p;
            return 1;
        }
        if ((n->op == OP_Not || n->op == OP_Identity) && n->n_in == 1 && n->in[0] >= 0 &&
            const_truth(g, n->in[0], truth)) {
            if (n->op == OP_Not)
                *truth = !*truth;
            return 1;
        }
    }
    sz = dtype_size(t);
    if (!data || !sz)
        return 0;
    *truth = 0;
    for (k = 0; k < sz; k++)
        if (((const uint8_t *)data)[k])
            *truth = 1;
    return 1;
}

/* Value vi as a compile-time integer scalar. Returns 1 when known. */
static int const_int(const Graph *g, int32_t vi, int64_t *out)
{
    const Value *v = &g->values[vi];
    const int64_t *p;
    if (value_const_ints(g, vi, &p) >= 1) {
        *out = p[0];
        return 1;
    }
    /* the length of a sequence whose elements are listed before inference
     * (a sequence graph input, frontend/seq_io.c): a SequenceMap expanded
     * into a Loop over SequenceLength */
    if (!v->data && v->producer >= 0 && g->nodes[v->producer].op == OP_SequenceLength &&
        g->nodes[v->producer].n_in == 1 &&
        (*out = seq_static_length(g, g->nodes[v->producer].in[0])) >= 0)
        return 1;
    if (!v->data && v->producer >= 0 && g->nodes[v->producer].op == OP_Constant) {
        const Attr *a = node_attr(&g->nodes[v->producer], "value");
        if (a && a->type == ATTR_TENSOR && a->t && a->t->numel >= 1) {
            if (a->t->dtype == DT_INT64) {
                memcpy(out, a->t->data, sizeof *out);
                return 1;
            }
            if (a->t->dtype == DT_INT32) {
                int32_t x;
                memcpy(&x, a->t->data, sizeof x);
                *out = x;
                return 1;
            }
        }
    }
    return 0;
}

static int32_t lookup(Ctx *C, const Scope *s, const char *name)
{
    for (; s; s = s->up) {
        int32_t vi = graph_find_value(s->sg, name);
        if (vi >= 0 && s->map[vi] >= 0)
            return s->map[vi];
    }
    return graph_find_value(C->g, name);
}

/* Main-graph value for value vi of s->sg, -1 (after reporting) if it names
 * nothing visible. */
static int32_t resolve(Ctx *C, const Node *origin, const Scope *s, int32_t vi)
{
    int32_t r;
    if (vi < 0)
        return -1;
    if (s->map[vi] >= 0)
        return s->map[vi];
    r = lookup(C, s->up, s->sg->values[vi].name);
    if (r < 0)
        diag_error(C->d, origin, NULL, "subgraph value '%s' is not defined in the subgraph "
                   "nor in an enclosing graph", s->sg->values[vi].name);
    return r;
}

static int inline_node(Ctx *C, const Node *n, const int32_t *in, const int32_t *out,
                       Scope *up);

/* Copies subgraph sg with its inputs bound to `inputs` (main-graph values,
 * sg->n_inputs of them); res gets the main-graph values of its outputs.
 * Returns 0 or nonzero after reporting. */
static int run_subgraph(Ctx *C, const Node *origin, const Graph *sg, Scope *up,
                        const int32_t *inputs, int32_t *res)
{
    Scope s;
    int32_t i;
    s.sg = sg;
    s.up = up;
    s.map = arena_array(C->g->arena, (size_t)sg->n_values + 1, sizeof(int32_t));
    if (!s.map)
        die("compile arena exhausted");
    for (i = 0; i < sg->n_values; i++)
        s.map[i] = -1;
    for (i = 0; i < sg->n_inputs; i++)
        s.map[sg->inputs[i]] = inputs[i];
    for (i = 0; i < sg->n_values; i++) {
        const Value *v = &sg->values[i];
        if (v->data && s.map[i] < 0)
            s.map[i] = const_value(C, v->name, v->dtype, v->rank, v->dims, v->data);
    }
    for (i = 0; i < sg->n_nodes; i++) {
        const Node *sn = &sg->nodes[i];
        int32_t *ins, *outs, ni;
        int k;
        if (sn->dead)
            continue;
        ins = arena_array(C->g->arena, (size_t)sn->n_in + 1, sizeof(int32_t));
        outs = arena_array(C->g->arena, (size_t)sn->n_out + 1, sizeof(int32_t));
        if (!ins || !outs)
            die("compile arena exhausted");
        for (k = 0; k < sn->n_in; k++) {
            ins[k] = -1;
            if (sn->in[k] >= 0 && (ins[k] = resolve(C, sn, &s, sn->in[k])) < 0)
                return 1;
        }
        for (k = 0; k < sn->n_out; k++) {
            outs[k] = -1;
            if (sn->out[k] >= 0)
                s.map[sn->out[k]] = outs[k] = fresh_value(C, sg->values[sn->out[k]].name);
        }
        if (is_control(sn)) {
            if (inline_node(C, sn, ins, outs, &s))
                return 1;
            continue;
        }
        ni = add_node(C, sn, sn->op, sn->name, 0, 0);
        if (ni < 0)
            return 1;
        {
            Node *m = &C->g->nodes[ni];
            m->op_type = sn->op_type;
            m->domain = sn->domain;
            m->opset = sn->opset;
            m->n_in = sn->n_in;
            m->n_out = sn->n_out;
            m->in = ins;
            m->out = outs;
            m->n_attr = sn->n_attr;
            m->attr = sn->attr;
        }
        set_producers(C, ni);
    }
    for (i = 0; i < sg->n_outputs; i++)
        if ((res[i] = resolve(C, origin, &s, sg->outputs[i])) < 0)
            return 1;
    return 0;
}

static const Graph *graph_attr(Ctx *C, const Node *n, const char *name)
{
    const Attr *a = node_attr(n, name);
    if (!a || a->type != ATTR_GRAPH || !a->g) {
        diag_error(C->d, n, name, "the subgraph attribute is missing");
        return NULL;
    }
    return a->g;
}

static int32_t *vals(Ctx *C, int64_t count)
{
    int32_t *p = arena_array(C->g->arena, (size_t)(count > 0 ? count : 0) + 1, sizeof(int32_t));
    if (!p)
        die("compile arena exhausted");
    return p;
}

static int inline_if(Ctx *C, const Node *n, const int32_t *in, const int32_t *out, Scope *up)
{
    const Graph *tb = graph_attr(C, n, "then_branch"), *eb;
    int32_t *rt, *re;
    int truth, k, known;
    if (!tb || !(eb = graph_attr(C, n, "else_branch")))
        return 1;
    if (tb->n_inputs || eb->n_inputs)
        return diag_error(C->d, n, NULL, "If branches must not declare inputs");
    if (tb->n_outputs < n->n_out || eb->n_outputs < n->n_out || tb->n_outputs != eb->n_outputs)
        return diag_error(C->d, n, NULL, "the branches return %d and %d values for %d outputs",
                          tb->n_outputs, eb->n_outputs, n->n_out);
    rt = vals(C, tb->n_outputs);
    re = vals(C, eb->n_outputs);
    known = const_truth(C->g, in[0], &truth);
    if (!known) {
        int rc = infer_value_early(C->g, in[0], C->d);
        if (rc > 0)
            return 1;
        known = rc == 0 && const_truth(C->g, in[0], &truth);
    }
    if (known) {
        if (run_subgraph(C, n, truth ? tb : eb, up, NULL, rt))
            return 1;
        for (k = 0; k < n->n_out; k++)
            if (out[k] >= 0 && emit(C, n, OP_Identity, rt[k], -1, -1, NULL, out[k]) < 0)
                return 1;
        return 0;
    }
    {
        const char *saved = C->note, *cond = C->g->values[in[0]].name;
        int bad;
        C->note = arena_printf(C->g->arena, "in the then branch of If '%s', whose condition "
                               "'%s' is only known at run time, so both branches are compiled",
                               n->name, cond);
        bad = run_subgraph(C, n, tb, up, NULL, rt);
        C->note = arena_printf(C->g->arena, "in the else branch of If '%s', whose condition "
                               "'%s' is only known at run time, so both branches are compiled",
                               n->name, cond);
        bad = bad || run_subgraph(C, n, eb, up, NULL, re);
        C->note = saved;
        if (bad)
            return 1;
    }
    for (k = 0; k < n->n_out; k++)
        if (out[k] >= 0 && emit(C, n, OP_Where, in[0], rt[k], re[k], NULL, out[k]) < 0)
            return 1;
    return 0;
}

/* Is the body's condition output its condition input passed through? */
static int cond_passes_through(const Graph *body)
{
    int32_t co, ci;
    if (body->n_outputs < 1 || body->n_inputs < 2)
        return 0;
    co = body->outputs[0];
    ci = body->inputs[1];
    if (co == ci)
        return 1;
    return body->values[co].producer >= 0 &&
           body->nodes[body->values[co].producer].op == OP_Identity &&
           body->nodes[body->values[co].producer].in[0] == ci;
}

static int inline_loop(Ctx *C, const Node *n, const int32_t *in, const int32_t *out, Scope *up)
{
    const Graph *body = graph_attr(C, n, "body");
    int32_t m = n->n_in > 0 ? in[0] : -1, cond = n->n_in > 1 ? in[1] : -1;
    int n_car = n->n_in > 2 ? n->n_in - 2 : 0, n_scan, j, truth = 1, gated, known;
    int64_t trips = -1, iters = -1, i;
    int32_t *cur, *res, *bin, **scans, run;
    if (!body)
        return 1;
    n_scan = body->n_outputs - 1 - n_car;
    if (body->n_inputs != 2 + n_car || n_scan < 0 || n->n_out > n_car + n_scan)
        return diag_error(C->d, n, "body", "the body takes %d inputs and returns %d values, "
                          "which does not fit %d loop-carried values and %d outputs",
                          body->n_inputs, body->n_outputs, n_car, n->n_out);
    known = m >= 0 && const_int(C->g, m, &trips);
    if (cond >= 0 && !const_truth(C->g, cond, &truth))
        truth = -1;
    gated = !(known && truth == 1 && cond_passes_through(body));
    if (known && truth == 0)
        iters = 0;
    else if (!gated || known)
        iters = trips;
    else
        for (j = 0; j < n_scan && iters < 0; j++) {
            const Value *v = n_car + j < n->n_out && out[n_car + j] >= 0
                                 ? &C->g->values[out[n_car + j]] : NULL;
            if (v && v->declared && v->rank >= 1 && v->dims[0] >= 0)
                iters = v->dims[0];
        }
    if (iters < 0)
        return diag_error(C->d, n, "M", "the trip count is not a compile-time constant and no "
                          "scan output declares its length; tvmcc unrolls loops at compile "
                          "time");
    if (iters > CTL_MAX_NODES)
        return diag_error(C->d, n, "M", "%lld iterations are too many to unroll (limit %d)",
                          (long long)iters, CTL_MAX_NODES);
    cur = vals(C, n_car);
    res = vals(C, body->n_outputs);
    bin = vals(C, body->n_inputs);
    scans = arena_array(C->g->arena, (size_t)n_scan + 1, sizeof *scans);
    if (!scans)
        die("compile arena exhausted");
    for (j = 0; j < n_scan; j++)
        scans[j] = vals(C, iters);
    for (j = 0; j < n_car; j++)
        cur[j] = in[2 + j];
    run = cond >= 0 ? cond : const_true(C);
    for (i = 0; i < iters; i++) {
        int32_t it = const_i64(C, i, 0), active = run;
        if (gated && m >= 0) {
            int32_t lt = emit(C, n, OP_Less, it, m, -1, NULL, -1);
            if (lt < 0 || (active = emit(C, n, OP_And, run, lt, -1, NULL, -1)) < 0)
                return 1;
        }
        bin[0] = it;
        bin[1] = active;
        for (j = 0; j < n_car; j++)
            bin[2 + j] = cur[j];
        if (run_subgraph(C, n, body, up, bin, res))
            return 1;
        for (j = 0; j < n_car; j++) {
            if (!gated)
                cur[j] = res[1 + j];
            else if ((cur[j] = emit(C, n, OP_Where, active, res[1 + j], cur[j], NULL, -1)) < 0)
                return 1;
        }
        if (gated && (run = emit(C, n, OP_And, active, res[0], -1, NULL, -1)) < 0)
            return 1;
        for (j = 0; j < n_scan; j++)
            scans[j][i] = res[1 + n_car + j];
    }
    for (j = 0; j < n_car && j < n->n_out; j++)
        if (out[j] >= 0 && emit(C, n, OP_Identity, cur[j], -1, -1, NULL, out[j]) < 0)
            return 1;
    for (j = 0; j < n_scan && n_car + j < n->n_out; j++)
        if (out[n_car + j] >= 0 && stack(C, n, scans[j], iters, 0, out[n_car + j]) < 0)
            return 1;
    return 0;
}

/* One Scan over `len` steps: states start at state[], scan inputs xs[] are
 * sliced along xaxis[] (reversed where xrev[]). final[] gets the last states,
 * stacked[] the scan outputs (stacked along oaxis[], reversed where orev[];
 * into outs[] where given, else fresh values). */
static int scan_core(Ctx *C, const Node *n, const Graph *body, Scope *up, int n_state,
                     const int32_t *state, int nsi, const int32_t *xs, const int64_t *xaxis,
                     const int64_t *xrev, int64_t len, const int64_t *oaxis,
                     const int64_t *orev, int32_t *final, int32_t *stacked,
                     const int32_t *outs)
{
    int n_scan = body->n_outputs - n_state, j;
    int32_t *bin = vals(C, body->n_inputs), *res = vals(C, body->n_outputs), **per;
    int64_t t;
    per = arena_array(C->g->arena, (size_t)n_scan + 1, sizeof *per);
    if (!per)
        die("compile arena exhausted");
    for (j = 0; j < n_scan; j++)
        per[j] = vals(C, len);
    for (j = 0; j < n_state; j++)
        final[j] = state[j];
    for (t = 0; t < len; t++) {
        for (j = 0; j < n_state; j++)
            bin[j] = final[j];
        for (j = 0; j < nsi; j++) {
            int32_t pos = const_i64(C, xrev[j] ? len - 1 - t : t, 0);
            bin[n_state + j] = emit(C, n, OP_Gather, xs[j], pos, -1,
                                    int_attr(C, "axis", xaxis[j]), -1);
            if (bin[n_state + j] < 0)
                return 1;
        }
        if (run_subgraph(C, n, body, up, bin, res))
            return 1;
        for (j = 0; j < n_state; j++)
            final[j] = res[j];
        for (j = 0; j < n_scan; j++)
            per[j][orev[j] ? len - 1 - t : t] = res[n_state + j];
    }
    for (j = 0; j < n_scan; j++)
        if ((stacked[j] = stack(C, n, per[j], len, oaxis[j], outs ? outs[j] : -1)) < 0)
            return 1;
    return 0;
}

/* count zeros */
static int64_t *vals64(Ctx *C, int count)
{
    int64_t *r = arena_array(C->g->arena, (size_t)count + 1, sizeof(int64_t));
    if (!r)
        die("compile arena exhausted");
    memset(r, 0, ((size_t)count + 1) * sizeof(int64_t));
    return r;
}

/* An INTS attribute of `count` entries, default 0 each. */
static int64_t *ints_or_zero(Ctx *C, const Node *n, const char *name, int count)
{
    int64_t cnt, *r = arena_array(C->g->arena, (size_t)count + 1, sizeof(int64_t));
    const int64_t *a = attr_ints(n, name, &cnt, C->d);
    int i;
    if (!r)
        die("compile arena exhausted");
    if (cnt >= 0 && cnt != count) {
        diag_error(C->d, n, name, "has %lld entries for %d values", (long long)cnt, count);
        return NULL;
    }
    for (i = 0; i < count; i++)
        r[i] = cnt >= 0 ? a[i] : 0;
    return r;
}

static int inline_scan(Ctx *C, const Node *n, const int32_t *in, const int32_t *out, Scope *up)
{
    const Graph *body = graph_attr(C, n, "body");
    int v8 = n->opset < 9, first = v8 ? 1 : 0, nsi, n_state, n_scan, j;
    int64_t *xaxis, *xrev, *oaxis, *orev, len = -1, batch = 1, b;
    int32_t *xs, *final, *stacked, *outs;
    if (!body)
        return 1;
    nsi = (int)attr_int(n, "num_scan_inputs", -1, C->d);
    n_state = n->n_in - first - nsi;
    if (nsi < 1 || n_state < 0)
        return diag_error(C->d, n, "num_scan_inputs", "%d scan inputs do not fit %d inputs", nsi,
                          n->n_in);
    n_scan = body->n_outputs - n_state;
    if (body->n_inputs != n_state + nsi || n_scan < 0 || n->n_out > n_state + n_scan)
        return diag_error(C->d, n, "body", "the body takes %d inputs and returns %d values, "
                          "which does not fit %d states and %d scan inputs", body->n_inputs,
                          body->n_outputs, n_state, nsi);
    if (v8 && in[0] >= 0)
        return diag_error(C->d, n, "sequence_lens", "sequence_lens is not supported");
    xs = vals(C, nsi);
    for (j = 0; j < nsi; j++)
        xs[j] = in[first + n_state + j];
    if (v8) {
        /* opset 8 scans axis 1 (0 once the batch axis is removed) and has
         * no output directions */
        xaxis = vals64(C, nsi);
        xrev = ints_or_zero(C, n, "directions", nsi);
        oaxis = vals64(C, n_scan);
        orev = vals64(C, n_scan);
    } else {
        xaxis = ints_or_zero(C, n, "scan_input_axes", nsi);
        xrev = ints_or_zero(C, n, "scan_input_directions", nsi);
        oaxis = ints_or_zero(C, n, "scan_output_axes", n_scan);
        orev = ints_or_zero(C, n, "scan_output_directions", n_scan);
    }
    if (!xaxis || !xrev || !oaxis || !orev)
        return 1;
    {
        const Value *x = &C->g->values[xs[0]];
        int64_t ax = xaxis[0];
        if (x->rank >= 0 && ax < 0)
            ax += x->rank;
        if (x->rank >= 1 + v8 && ax >= 0 && ax + v8 < x->rank) {
            len = x->dims[ax + v8];
            if (v8)
                batch = x->dims[0];
        }
        if (len < 0 || batch < 0)
            return diag_error(C->d, n, "scan_input", "the length of scan input '%s' is not "
                              "known before inference; tvmcc unrolls scans at compile time",
                              x->name);
        if (len * batch > CTL_MAX_NODES)
            return diag_error(C->d, n, "scan_input", "%lld steps are too many to unroll "
                              "(limit %d)", (long long)(len * batch), CTL_MAX_NODES);
    }
    final = vals(C, n_state);
    stacked = vals(C, n_scan);
    outs = vals(C, n_state + n_scan);
    for (j = 0; j < n_state + n_scan; j++)
        outs[j] = j < n->n_out ? out[j] : -1;
    if (!v8) {
        if (scan_core(C, n, body, up, n_state, in, nsi, xs, xaxis, xrev, len, oaxis, orev,
                      final, stacked, outs + n_state))
            return 1;
        for (j = 0; j < n_state; j++)
            if (outs[j] >= 0 && emit(C, n, OP_Identity, final[j], -1, -1, NULL, outs[j]) < 0)
                return 1;
        return 0;
    } else {
        /* opset 8: every input has a leading batch axis; unroll it too */
        int32_t **bf = arena_array(C->g->arena, (size_t)(n_state + n_scan) + 1, sizeof *bf);
        int32_t *st = vals(C, n_state), *xb = vals(C, nsi);
        if (!bf)
            die("compile arena exhausted");
        for (j = 0; j < n_state + n_scan; j++)
            bf[j] = vals(C, batch);
        for (b = 0; b < batch; b++) {
            int32_t bi = const_i64(C, b, 0);
            for (j = 0; j < n_state; j++)
                if ((st[j] = emit(C, n, OP_Gather, in[1 + j], bi, -1, int_attr(C, "axis", 0),
                                  -1)) < 0)
                    return 1;
            for (j = 0; j < nsi; j++)
                if ((xb[j] = emit(C, n, OP_Gather, xs[j], bi, -1, int_attr(C, "axis", 0), -1)) <
                    0)
                    return 1;
            if (scan_core(C, n, body, up, n_state, st, nsi, xb, xaxis, xrev, len, oaxis, orev,
                          final, stacked, NULL))
                return 1;
            for (j = 0; j < n_state; j++)
                bf[j][b] = final[j];
            for (j = 0; j < n_scan; j++)
                bf[n_state + j][b] = stacked[j];
        }
        for (j = 0; j < n_state + n_scan; j++)
            if (outs[j] >= 0 && stack(C, n, bf[j], batch, 0, outs[j]) < 0)
                return 1;
        return 0;
    }
}

/* SequenceMap: the body once per position of the sequence inputs (their
 * length known before inference), tensor inputs passed whole, each output
 * a SequenceConstruct of the body's results (frontend/seq_resolve.c lists
 * their elements). */
static int inline_seqmap(Ctx *C, const Node *n, const int32_t *in, const int32_t *out,
                         Scope *up)
{
    const Graph *body = graph_attr(C, n, "body");
    int64_t len = -1, *lens, i;
    int32_t *bin, *res, **per;
    int k, j;
    if (!body)
        return 1;
    if (body->n_inputs != n->n_in || body->n_outputs != n->n_out)
        return diag_error(C->d, n, "body", "the body takes %d inputs and returns %d values for "
                          "%d inputs and %d outputs", body->n_inputs, body->n_outputs, n->n_in,
                          n->n_out);
    lens = vals64(C, n->n_in);
    for (k = 0; k < n->n_in; k++) {
        lens[k] = in[k] >= 0 ? seq_static_length(C->g, in[k]) : -2;
        if (k == 0 && lens[k] == -2)
            return diag_error(C->d, n, "input[0]", "'%s' is not a sequence",
                              in[0] >= 0 ? C->g->values[in[0]].name : "");
        if (lens[k] == -1)
            return diag_error(C->d, n, arena_printf(C->g->arena, "input[%d]", k), "the length "
                              "of sequence '%s' is not known at compile time; tvmcc unrolls "
                              "SequenceMap", C->g->values[in[k]].name);
        if (lens[k] >= 0 && len >= 0 && lens[k] != len)
            return diag_error(C->d, n, arena_printf(C->g->arena, "input[%d]", k), "sequence "
                              "'%s' has %lld elements, input[0] %lld; all sequences must have "
                              "the same length", C->g->values[in[k]].name, (long long)lens[k],
                              (long long)len);
        if (lens[k] >= 0)
            len = lens[k];
    }
    if (len > CTL_MAX_NODES)
        return diag_error(C->d, n, "input[0]", "%lld elements are too many to unroll (limit %d)",
                          (long long)len, CTL_MAX_NODES);
    bin = vals(C, n->n_in);
    res = vals(C, n->n_out);
    per = arena_array(C->g->arena, (size_t)n->n_out + 1, sizeof *per);
    if (!per)
        die("compile arena exhausted");
    for (j = 0; j < n->n_out; j++)
        per[j] = vals(C, len);
    for (i = 0; i < len; i++) {
        int32_t pos = const_i64(C, i, 0);
        for (k = 0; k < n->n_in; k++) {
            bin[k] = in[k];
            if (lens[k] >= 0 && (bin[k] = emit(C, n, OP_SequenceAt, in[k], pos, -1, NULL, -1)) < 0)
                return 1;
        }
        if (run_subgraph(C, n, body, up, bin, res))
            return 1;
        for (j = 0; j < n->n_out; j++)
            per[j][i] = res[j];
    }
    for (j = 0; j < n->n_out; j++) {
        int32_t ni;
        if (out[j] < 0)
            continue;
        ni = add_node(C, n, len ? OP_SequenceConstruct : OP_SequenceEmpty, n->name, (int)len, 1);
        if (ni < 0)
            return 1;
        for (i = 0; i < len; i++)
            C->g->nodes[ni].in[i] = per[j][i];
        C->g->nodes[ni].out[0] = out[j];
        C->g->nodes[ni].opset = 11;
        if (!len) {
            DType dt = body->values[body->outputs[j]].dtype;
            C->g->nodes[ni].n_attr = 1;
            C->g->nodes[ni].attr = int_attr(C, "dtype", dt != DT_UNDEF ? dt : DT_FLOAT32);
        }
        set_producers(C, ni);
    }
    return 0;
}

static int inline_node(Ctx *C, const Node *n, const int32_t *in, const int32_t *out,
                       Scope *up)
{
    switch (n->op) {
    case OP_If:
        return inline_if(C, n, in, out, up);
    case OP_Loop:
        return inline_loop(C, n, in, out, up);
    case OP_Scan:
        return inline_scan(C, n, in, out, up);
    case OP_SequenceMap:
        return inline_seqmap(C, n, in, out, up);
    default:
        die("inline_node: not control flow");
    }
}

int onnx_inline_control_flow(Graph *g, Diag *d)
{
    Node *old = g->nodes;
    int32_t n_old = g->n_nodes, i;
    Ctx C;
    for (i = 0; i < n_old && !is_control(&old[i]); i++)
        ;
    if (i == n_old)
        return 0;
    memset(&C, 0, sizeof C);
    C.g = g;
    C.d = d;
    g->nodes = NULL;
    g->n_nodes = 0;
    g->cap_nodes = 0;
    for (i = 0; i < n_old; i++) {
        const Node *n = &old[i];
        int32_t ni;
        if (n->dead)
            continue;
        if (is_control(n)) {
            C.index = n->index;
            if (inline_node(&C, n, n->in, n->out, NULL))
                return 1;
            continue;
        }
        ni = graph_add_node(g, n->op, n->name, 0, 0);
        g->nodes[ni] = *n;
        set_producers(&C, ni);
    }
    return 0;
}

/* Reached only when the inlining above did not run (it replaces every
 * control-flow node before inference). */
int infer_If(Graph *g, Node *n, Diag *d)
{
    (void)g;
    return diag_error(d, n, NULL, "control flow must be inlined before inference");
}

int infer_Loop(Graph *g, Node *n, Diag *d)
{
    return infer_If(g, n, d);
}

int infer_Scan(Graph *g, Node *n, Diag *d)
{
    return infer_If(g, n, d);
}

int infer_SequenceMap(Graph *g, Node *n, Diag *d)
{
    return infer_If(g, n, d);
}
