/*
 * layout: stores activations in the layout the target prefers.
 *
 * Each target's JSON names a preferred layout ("preferred_layout"). For
 * "NHWC" (Cortex-M: the channel is innermost, so a convolution's inner
 * reduction and its output channel loop walk contiguous memory):
 *
 * 1. Every 2-D Conv with constant weights becomes an NHWC Conv (attribute
 *    tvmcc.layout, lowered by lower/op_layout.c): a Transpose to NHWC on its
 *    input, its weights transposed OIHW -> OHWI at compile time (the
 *    Transpose is folded at once), and a Transpose back to NCHW on its
 *    output. Graph inputs and outputs keep the ONNX layout.
 * 2. Transposes back to NCHW sink below elementwise ops (any op whose
 *    kernel reads every operand at its own position up to broadcasting,
 *    checked on the lowered kernel, lower/fuse.c): the op then runs in NHWC,
 *    with constant operands re-laid out at compile time.
 * 3. A Transpose to NHWC that reads a Transpose back to NCHW cancels with it
 *    (the simplify pass), so transforms remain only where a producer and a
 *    consumer disagree: at graph inputs and outputs and around ops that
 *    have no NHWC form yet.
 * New nodes are appended and the node list is put back in topological
 * order at the end. "NCHW" (and anything else) leaves the graph alone.
 */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

#include "../lower/fuse.h"
#include "../lower/lower.h"

const Target *passes_target;

static const int64_t to_nhwc[4] = {0, 2, 3, 1};
static const int64_t to_nchw[4] = {0, 3, 1, 2};

/* A value with the dims of `like` permuted by perm. */
static int32_t permuted_value(Graph *g, int32_t like, const int64_t *perm, const char *suffix)
{
    int32_t v = graph_add_value(g, arena_printf(g->arena, "%s/%s", g->values[like].name, suffix));
    Value *nv = &g->values[v];
    const Value *lv = &g->values[like];
    int i;
    nv->dtype = lv->dtype;
    nv->rank = lv->rank;
    for (i = 0; i < lv->rank; i++)
        nv->dims[i] = lv->dims[perm[i]];
    return v;
}

/* Appends Transpose(in, perm) -> out and returns the node index. */
static int32_t add_transpose(Graph *g, int32_t in, int32_t out, const int64_t *perm, const char *name)
{
    int32_t ni = graph_add_node(g, OP_Transpose, name, 1, 1);
    Attr a;
    int64_t *p = arena_array(g->arena, 4, sizeof *p);
    if (!p)
        die("compile arena exhausted");
    memcpy(p, perm, 4 * sizeof *p);
    memset(&a, 0, sizeof a);
    a.name = "perm";
    a.type = ATTR_INTS;
    a.n = 4;
    a.ints = p;
    node_add_attr(g, ni, a);
    g->nodes[ni].in[0] = in;
    g->nodes[ni].out[0] = out;
    g->nodes[ni].index = g->values[in].producer >= 0 ? g->nodes[g->values[in].producer].index : 0;
    g->values[out].producer = ni;
    return ni;
}

/* A constant operand of rank <= 4, broadcast to rank 4 and permuted. */
static int32_t permuted_const(Graph *g, int32_t vi, Diag *d)
{
    const Value *v = &g->values[vi];
    int32_t r4, out, ni;
    int i;
    if (v->rank == 0)
        return vi;
    r4 = graph_add_value(g, arena_printf(g->arena, "%s/rank4", g->values[vi].name));
    v = &g->values[vi];
    g->values[r4] = *v;
    g->values[r4].name = arena_printf(g->arena, "%s/rank4", v->name);
    g->values[r4].rank = 4;
    g->values[r4].producer = -1;
    g->values[r4].input_index = -1;
    g->values[r4].is_initializer = 0;
    for (i = 0; i < 4; i++)
        g->values[r4].dims[i] = i < 4 - v->rank ? 1 : v->dims[i - (4 - v->rank)];
    out = permuted_value(g, r4, to_nhwc, "nhwc");
    ni = add_transpose(g, r4, out, to_nhwc, "layout_const");
    if (fold_node(g, ni, d))
        return -1;
    g->nodes[ni].dead = 1;
    g->values[out].producer = -1;
    return g->values[out].data ? out : -1;
}

static int convert_conv(Graph *g, int32_t ci, Diag *d)
{
    Node *c = &g->nodes[ci];
    int32_t x = c->in[0], w = c->in[1], y = c->out[0], xt, wt, yt, ni;
    Attr a;
    const char *name = c->name;
    if (x < 0 || w < 0 || y < 0 || g->values[x].rank != 4 || !g->values[w].data ||
        g->values[w].rank != 4 || c->n_out != 1)
        return 0;
    xt = permuted_value(g, x, to_nhwc, "nhwc");
    add_transpose(g, x, xt, to_nhwc, arena_printf(g->arena, "%s/to_nhwc", name));
    wt = permuted_value(g, w, to_nhwc, "ohwi");
    ni = add_transpose(g, w, wt, to_nhwc, arena_printf(g->arena, "%s/weights_ohwi", name));
    if (fold_node(g, ni, d))
        return 1;
    if (!g->values[wt].data)
        return 0; /* over the folding budget: leave this conv in NCHW */
    g->nodes[ni].dead = 1;
    g->values[wt].producer = -1;
    yt = permuted_value(g, y, to_nhwc, "nhwc");
    c = &g->nodes[ci];
    c->in[0] = xt;
    c->in[1] = wt;
    c->out[0] = yt;
    g->values[yt].producer = ci;
    add_transpose(g, yt, y, to_nchw, arena_printf(g->arena, "%s/to_nchw", name));
    memset(&a, 0, sizeof a);
    a.name = "tvmcc.layout";
    a.type = ATTR_STRING;
    a.s = "NHWC";
    node_add_attr(g, ci, a);
    return 0;
}

static int is_transpose_to_nchw(const Graph *g, int32_t vi)
{
    int32_t p = vi >= 0 ? g->values[vi].producer : -1;
    const Node *t;
    int64_t cnt;
    const int64_t *perm;
    if (p < 0)
        return 0;
    t = &g->nodes[p];
    if (t->dead || t->op != OP_Transpose)
        return 0;
    perm = attr_ints(t, "perm", &cnt, NULL);
    return perm && cnt == 4 && !memcmp(perm, to_nchw, sizeof to_nchw);
}

/* Moves the Transposes to NCHW at the inputs of elementwise node ei below
 * it. Returns 1 if it did. */
static int sink(Graph *g, int32_t ei, Diag *d)
{
    Node *e = &g->nodes[ei];
    Kernel *k;
    int i, any = 0, errs = d->errors;
    int32_t out, nout;
    if (e->dead || e->op == OP_Transpose || e->n_out != 1 || e->out[0] < 0 ||
        g->values[e->out[0]].rank != 4 || g->values[e->out[0]].data)
        return 0;
    for (i = 0; i < e->n_in; i++) {
        int32_t v = e->in[i];
        if (v < 0)
            continue;
        if (is_transpose_to_nchw(g, v))
            any = 1;
        else if (!g->values[v].data || g->values[v].rank > 4)
            return 0;
    }
    if (!any)
        return 0;
    d->quiet++;
    k = lower_node(g, ei, "layout_check", NULL, d);
    d->quiet--;
    if (!k || !fuse_is_elementwise(k)) {
        d->errors = errs;
        return 0;
    }
    for (i = 0; i < e->n_in; i++) {
        int32_t v = g->nodes[ei].in[i], nv;
        if (v < 0)
            continue;
        if (is_transpose_to_nchw(g, v)) {
            nv = g->nodes[g->values[v].producer].in[0];
        } else {
            nv = permuted_const(g, v, d);
            if (nv < 0)
                return 0;
        }
        g->nodes[ei].in[i] = nv;
    }
    out = g->nodes[ei].out[0];
    nout = permuted_value(g, out, to_nhwc, "nhwc");
    g->nodes[ei].out[0] = nout;
    g->values[nout].producer = ei;
    add_transpose(g, nout, out, to_nchw, arena_printf(g->arena, "%s/to_nchw", g->nodes[ei].name));
    return 1;
}

int pass_layout(Graph *g, Diag *d)
{
    int32_t ni, n0 = g->n_nodes;
    int changed = 1, rounds = 0;
    if (!passes_target || !passes_target->preferred_layout ||
        strcmp(passes_target->preferred_layout, "NHWC") != 0)
        return 0;
    for (ni = 0; ni < n0; ni++) {
        const Node *n = &g->nodes[ni];
        if (!n->dead && n->op == OP_Conv && convert_conv(g, ni, d))
            return 1;
    }
    while (changed && rounds++ < 64) {
        changed = 0;
        for (ni = 0; ni < g->n_nodes; ni++)
            changed |= sink(g, ni, d);
        if (d->errors)
            return 1;
    }
    graph_toposort(g);
    return pass_simplify(g, d) || pass_dce(g, d);
}
