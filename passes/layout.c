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

static const int64_t to_nhwc[4] = {0, 2, 3, 1};
static const int64_t to_nchw[4] = {0, 3, 1, 2};
static const int64_t to_ihwo[4] = {1, 2, 3, 0};

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

/* Appends Transpose(in, perm) -> out (perm of n axes) and returns the
 * node index. */
static int32_t add_transpose(Graph *g, int32_t in, int32_t out, const int64_t *perm, int n, const char *name)
{
    int32_t ni = graph_add_node(g, OP_Transpose, name, 1, 1);
    Attr a;
    int64_t *p = arena_array(g->arena, (size_t)n, sizeof *p);
    if (!p)
        die("compile arena exhausted");
    memcpy(p, perm, (size_t)n * sizeof *p);
    memset(&a, 0, sizeof a);
    a.name = "perm";
    a.type = ATTR_INTS;
    a.n = n;
    a.ints = p;
    node_add_attr(g, ni, a);
    node_set_perm(g, &g->nodes[ni], n, perm);
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
    ni = add_transpose(g, r4, out, to_nhwc, 4, "layout_const");
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
    int dw;
    Attr a;
    const char *name = c->name;
    if (x < 0 || w < 0 || y < 0 || g->values[x].rank != 4 || !g->values[w].data ||
        g->values[w].rank != 4 || c->n_out != 1)
        return 0;
    /* an integer depthwise conv takes its weights as [1, KH, KW, C]: the
     * channels of one tap side by side, as its input's (lower/op_layout.c) */
    dw = c->quant && g->values[w].dims[1] == 1 && node_window(c)->group > 1 &&
         node_window(c)->group == g->values[w].dims[0];
    xt = permuted_value(g, x, to_nhwc, "nhwc");
    add_transpose(g, x, xt, to_nhwc, 4, arena_printf(g->arena, "%s/to_nhwc", name));
    wt = permuted_value(g, w, dw ? to_ihwo : to_nhwc, dw ? "ihwo" : "ohwi");
    ni = add_transpose(g, w, wt, dw ? to_ihwo : to_nhwc, 4,
                       arena_printf(g->arena, "%s/weights_%s", name, dw ? "ihwo" : "ohwi"));
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
    add_transpose(g, yt, y, to_nchw, 4, arena_printf(g->arena, "%s/to_nchw", name));
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
    const PermParams *pp;
    int i;
    if (p < 0)
        return 0;
    t = &g->nodes[p];
    if (t->dead || t->op != OP_Transpose)
        return 0;
    pp = node_perm(t);
    if (pp->rank != 4)
        return 0;
    for (i = 0; i < 4; i++)
        if (pp->perm[i] != to_nchw[i])
            return 0;
    return 1;
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
    add_transpose(g, nout, out, to_nchw, 4, arena_printf(g->arena, "%s/to_nchw", g->nodes[ei].name));
    return 1;
}

/* ---- blocked channels, NCHW[b]c (x86: b = the floats of one vector) ----
 *
 * A tensor [N,C,H,W] with C % b == 0 may be stored as [N,C/b,H,W,b]. The
 * pass walks the nodes in order and records, for each value, its blocked
 * twin (blk[v], -1 when there is none):
 *
 * - a 2-D Conv with constant weights, groups of whole blocks
 *   (groups_blockable) and an output C % b == 0 writes a blocked output;
 *   it reads its input blocked when the input has a twin, else in NCHW
 *   (the first conv, convs after a pool: no transform on the way in). Its
 *   weights stay OIHW: the lowering reads them at the blocked channel
 *   (lower/op_layout.c) and the x86 template packs them at compile time
 *   anyway. A depthwise conv (the target's dw_nchwc knob) is the
 *   exception: its weights become [C/b,1,KH,KW,b] and an NCHW input gets
 *   a transform (its lanes are channels).
 * - an elementwise node (checked on its lowered kernel as sink() does)
 *   with a non-constant operand that has a twin runs on the twins; its other
 *   non-constant operands (of the output's shape, or [N,C,1,1]) get a
 *   transform to the blocked layout (add_block: Reshape + Transpose, made
 *   once per value; resnet's first residual add, beside the max pool's
 *   output), its constant operands are re-laid out at compile time
 *   (relayout_const).
 * - a Concat along the channels whose inputs all have twins concatenates
 *   the twins along axis 1 (C/b blocks of whole channels).
 * - a 2-D MaxPool, GlobalAveragePool or GlobalMaxPool whose input has a
 *   twin pools the twin.
 * Every node the pass moves to the blocked form leaves behind, for its old
 * NCHW output, a transform back (Transpose [0,1,4,2,3] + Reshape; the
 * Reshape alone for one position per channel); the transforms that no
 * NCHW reader needs die in dce, so they remain only where a blocked
 * producer meets a consumer without a blocked form (graph outputs,
 * Flatten, a conv whose output channels are not a multiple of b). */

/* b of "NCHW<b>c", 0 for any other layout. */
static int block_of(const char *layout)
{
    int b = 0;
    const char *p;
    if (!layout || strncmp(layout, "NCHW", 4) != 0)
        return 0;
    for (p = layout + 4; *p >= '0' && *p <= '9' && b < 1024; p++)
        b = b * 10 + (*p - '0');
    return p[0] == 'c' && p[1] == 0 && b > 1 ? b : 0;
}

/* The blocked twin [N,C/b,H,W,b] of rank-4 value v. */
static int32_t blocked_value(Graph *g, int32_t v, int b)
{
    int32_t nv = graph_add_value(g, arena_printf(g->arena, "%s/nchw%dc", g->values[v].name, b));
    Value *t = &g->values[nv];
    const Value *s = &g->values[v];
    t->dtype = s->dtype;
    t->rank = 5;
    t->dims[0] = s->dims[0];
    t->dims[1] = s->dims[1] / b;
    t->dims[2] = s->dims[2];
    t->dims[3] = s->dims[3];
    t->dims[4] = b;
    return nv;
}

static void set_layout_attr(Graph *g, int32_t ni, const char *layout)
{
    Attr a;
    memset(&a, 0, sizeof a);
    a.name = "tvmcc.layout";
    a.type = ATTR_STRING;
    a.s = layout;
    node_add_attr(g, ni, a);
}

/* Constant int64 shape operand shp of n dims. */
static void set_shape_const(Graph *g, int32_t shp, const int64_t *dims, int n)
{
    int64_t *sd = arena_array(g->arena, (size_t)n, sizeof *sd);
    int i;
    if (!sd)
        die("compile arena exhausted");
    for (i = 0; i < n; i++)
        sd[i] = dims[i];
    g->values[shp].dtype = DT_INT64;
    g->values[shp].rank = 1;
    g->values[shp].dims[0] = n;
    g->values[shp].data = sd;
}

/* Appends Reshape(in, shp) -> out, run where `like`'s producer runs;
 * returns the node. */
static int32_t add_reshape(Graph *g, int32_t in, int32_t shp, int32_t out, const char *name, int32_t like)
{
    int32_t ri = graph_add_node(g, OP_Reshape, name, 2, 1);
    g->nodes[ri].in[0] = in;
    g->nodes[ri].in[1] = shp;
    g->nodes[ri].out[0] = out;
    g->values[out].producer = ri;
    g->nodes[ri].index = g->values[like].producer >= 0 ? g->nodes[g->values[like].producer].index : 0;
    return ri;
}

/* Appends the transform of blocked v5 back to NCHW value v (which node
 * `from` produced until now): Transpose [0,1,4,2,3] to [N,C/b,b,H,W], then
 * Reshape to [N,C,H,W]. */
static void add_unblock(Graph *g, int32_t v5, int32_t v, int b, const char *name)
{
    static const int64_t perm[5] = {0, 1, 4, 2, 3};
    /* one position: [N,C/b,1,1,b] is [N,C,1,1] in the same order, the
     * Reshape alone */
    int one = g->values[v].dims[2] * g->values[v].dims[3] == 1;
    int32_t mid = one ? v5 : graph_add_value(g, arena_printf(g->arena, "%s/nchw_b", g->values[v].name));
    int32_t shp = graph_add_value(g, arena_printf(g->arena, "%s/shape", g->values[v].name));
    int32_t ti = -1, ri;
    if (!one) {
        g->values[mid] = g->values[v5];
        g->values[mid].name = arena_printf(g->arena, "%s/nchw_b", g->values[v].name);
        g->values[mid].dims[2] = b;
        g->values[mid].dims[3] = g->values[v5].dims[2];
        g->values[mid].dims[4] = g->values[v5].dims[3];
        g->values[mid].producer = -1;
        g->values[mid].input_index = -1;
        g->values[mid].is_initializer = 0;
        g->values[mid].data = NULL;
        ti = add_transpose(g, v5, mid, perm, 5, arena_printf(g->arena, "%s/to_nchw", name));
    }
    set_shape_const(g, shp, g->values[v].dims, 4);
    ri = add_reshape(g, mid, shp, v, arena_printf(g->arena, "%s/to_nchw_reshape", name), v5);
    if (ti >= 0)
        g->nodes[ti].index = g->nodes[ri].index;
}

/* The blocked twin of NCHW value v through a transform: Reshape to
 * [N,C/b,b,H,W], then Transpose [0,1,3,4,2]. */
static int32_t add_block(Graph *g, int32_t v, int b)
{
    static const int64_t perm[5] = {0, 1, 3, 4, 2};
    const char *vn = g->values[v].name;
    int32_t mid, shp, v5, ti, ri;
    if (g->values[v].dims[2] * g->values[v].dims[3] == 1) {
        /* one position: the same order, a Reshape to [N,C/b,1,1,b] */
        shp = graph_add_value(g, arena_printf(g->arena, "%s/split_shape", vn));
        v5 = blocked_value(g, v, b);
        set_shape_const(g, shp, g->values[v5].dims, 5);
        add_reshape(g, v, shp, v5, arena_printf(g->arena, "%s/to_nchwc_reshape", vn), v);
        return v5;
    }
    mid = graph_add_value(g, arena_printf(g->arena, "%s/split_c", vn));
    shp = graph_add_value(g, arena_printf(g->arena, "%s/split_shape", vn));
    v5 = blocked_value(g, v, b);
    g->values[mid].dtype = g->values[v].dtype;
    g->values[mid].rank = 5;
    g->values[mid].dims[0] = g->values[v].dims[0];
    g->values[mid].dims[1] = g->values[v].dims[1] / b;
    g->values[mid].dims[2] = b;
    g->values[mid].dims[3] = g->values[v].dims[2];
    g->values[mid].dims[4] = g->values[v].dims[3];
    set_shape_const(g, shp, g->values[mid].dims, 5);
    ri = add_reshape(g, v, shp, mid, arena_printf(g->arena, "%s/to_nchwc_reshape", vn), v);
    ti = add_transpose(g, mid, v5, perm, 5, arena_printf(g->arena, "%s/to_nchwc", vn));
    g->nodes[ti].index = g->nodes[ri].index;
    return v5;
}

/* Constant data [A][C][I] (elements of es bytes) as [A][C/b][I][b], in
 * the compile arena: each block's b channels innermost. */
static void *split_channel_blocks(Graph *g, const void *src, int64_t A, int64_t C, int64_t I, int b, size_t es)
{
    char *dst = arena_array(g->arena, (size_t)(A * C * I), es);
    int64_t a, cb, i, ci;
    if (!dst)
        die("compile arena exhausted");
    for (a = 0; a < A; a++)
        for (cb = 0; cb < C / b; cb++)
            for (i = 0; i < I; i++)
                for (ci = 0; ci < b; ci++)
                    memcpy(dst + (((a * (C / b) + cb) * I + i) * b + ci) * es,
                           (const char *)src + ((a * C + cb * b + ci) * I + i) * es, es);
    return dst;
}

/* Constant operand vi (rank <= 4, broadcasting against [N,C,H,W]) in the
 * blocked layout: rank 5, its channel axis split into [C/b] and [b] when
 * it has C channels, else a 1 there. -1 when it does not broadcast. */
static int32_t relayout_const(Graph *g, int32_t vi, int64_t C, int b)
{
    const Value *v = &g->values[vi];
    int64_t d4[4];
    size_t es = dtype_size(v->dtype);
    int32_t nv;
    Value *t;
    int i;
    if (v->rank == 0)
        return vi;
    if (v->rank > 4 || !es)
        return -1;
    for (i = 0; i < 4; i++)
        d4[i] = i < 4 - v->rank ? 1 : v->dims[i - (4 - v->rank)];
    if (d4[1] != 1 && d4[1] != C)
        return -1;
    nv = graph_add_value(g, arena_printf(g->arena, "%s/nchw%dc", g->values[vi].name, b));
    v = &g->values[vi];
    t = &g->values[nv];
    t->dtype = v->dtype;
    t->rank = 5;
    t->dims[0] = d4[0];
    t->dims[1] = d4[1] == C ? C / b : 1;
    t->dims[2] = d4[2];
    t->dims[3] = d4[3];
    t->dims[4] = d4[1] == C ? b : 1;
    if (d4[1] == 1) {
        t->data = v->data; /* same order: a reshape */
        return nv;
    }
    t->data = split_channel_blocks(g, v->data, d4[0], C, d4[2] * d4[3], b, es);
    return nv;
}

/* Fewest output positions (OH*OW) of a blocked conv with 16-channel
 * blocks. On a small plane the NCHW tile's transposed epilogue (one
 * vector scatter per tile column with AVX-512) costs little next to its
 * long reduction, and the blocked tile measured slower: resnet18's 7x7
 * layer4 convs took ~10% more CPU time blocked (perf samples,
 * x86-64-avx512), its 14x14 and larger ones the same or less. Such convs
 * stay NCHW (an NCHW input read through one transform). With 8-channel
 * blocks (AVX2, no scatter: the NCHW epilogue stores lane by lane) every
 * plane is blocked: resnet18 ran 2% faster with layer4 blocked too. */
#define NCHWC_MIN_POSITIONS 64

/* Whether conv node c is a depthwise conv (one input and one output
 * channel per group) the blocked layout takes: C a multiple of b, the
 * target's dw_nchwc knob set. Its lanes are b channels at one position
 * (lower/op_layout.c, the template in tpl_pool.c). */
static int conv_depthwise_blockable(const Graph *g, const Node *c, int b)
{
    int64_t grp = node_window(c)->group;
    const Value *w = &g->values[c->in[1]];
    return g->settings.target && g->settings.target->knobs.dw_nchwc && grp > 1 && w->rank == 4 &&
           w->dims[0] == grp && w->dims[1] == 1 && grp % b == 0;
}

/* Whether conv node c's groups fit whole channel blocks of b: group 1,
 * or a grouped conv whose groups have a multiple of b input and output
 * channels (each group its own blocks: RegNet's group width 16 with
 * b = 8 or 16; not a depthwise conv). */
static int groups_blockable(const Graph *g, const Node *c, int b)
{
    int64_t grp = node_window(c)->group;
    const Value *w = &g->values[c->in[1]];
    if (grp == 1)
        return 1;
    if (conv_depthwise_blockable(g, c, b))
        return 1;
    return grp > 1 && w->rank == 4 && w->dims[1] % b == 0 && w->dims[0] % grp == 0 && (w->dims[0] / grp) % b == 0;
}

/* Whether conv node ci can write the blocked layout: 2-D, groups of whole
 * blocks (groups_blockable), constant float32 weights, output channels a
 * multiple of b and, for blocks of 16, a plane of at least
 * NCHWC_MIN_POSITIONS. */
static int conv_blockable(Graph *g, int32_t ci, int b)
{
    const Node *c = &g->nodes[ci];
    const Value *x, *w, *y;
    if (c->n_in < 2 || c->n_out != 1 || c->in[0] < 0 || c->in[1] < 0 || c->out[0] < 0)
        return 0;
    x = &g->values[c->in[0]];
    w = &g->values[c->in[1]];
    y = &g->values[c->out[0]];
    if (x->rank != 4 || w->rank != 4 || y->rank != 4 || !w->data || x->dtype != DT_FLOAT32 ||
        w->dtype != DT_FLOAT32 || y->dtype != DT_FLOAT32 || !value_is_static(y) || !value_is_static(x))
        return 0;
    if (c->n_in > 2 && c->in[2] >= 0 && !g->values[c->in[2]].data)
        return 0;
    return groups_blockable(g, c, b) && y->dims[1] % b == 0 && w->dims[1] * node_window(c)->group == x->dims[1] &&
           (b < 16 || y->dims[2] * y->dims[3] >= NCHWC_MIN_POSITIONS);
}

/* Moves node ni's output to the blocked twin and adds the transform back
 * for its old output. */
static int32_t retarget_output(Graph *g, int32_t ni, int b)
{
    int32_t y = g->nodes[ni].out[0], y5 = blocked_value(g, y, b);
    g->nodes[ni].out[0] = y5;
    g->values[y5].producer = ni;
    add_unblock(g, y5, y, b, g->nodes[ni].name);
    return y5;
}

/* A depthwise conv's weights [C,1,KH,KW] as [C/b,1,KH,KW,b]: the b
 * channels of a block innermost, one vector per tap (lower/op_layout.c).
 * -1 when they are not float32 constants. */
static int32_t dw_weights_blocked(Graph *g, int32_t wi, int b)
{
    const Value *w = &g->values[wi];
    int64_t C = w->dims[0];
    void *dst;
    int32_t nv;
    Value *t;
    if (w->rank != 4 || w->dtype != DT_FLOAT32 || !w->data || w->dims[1] != 1 || C % b)
        return -1;
    dst = split_channel_blocks(g, w->data, 1, C, w->dims[2] * w->dims[3], b, sizeof(float));
    nv = graph_add_value(g, arena_printf(g->arena, "%s/nchw%dc", g->values[wi].name, b));
    w = &g->values[wi];
    t = &g->values[nv];
    t->dtype = DT_FLOAT32;
    t->rank = 5;
    t->dims[0] = C / b;
    t->dims[1] = 1;
    t->dims[2] = w->dims[2];
    t->dims[3] = w->dims[3];
    t->dims[4] = b;
    t->data = dst;
    return nv;
}

static int blocked_conv(Graph *g, int32_t ni, int32_t *blk, int b, const char *layout)
{
    int32_t x = g->nodes[ni].in[0], y = g->nodes[ni].out[0];
    if (!conv_blockable(g, ni, b))
        return 0;
    /* a depthwise conv reads only the blocked layout (its lanes are
     * channels): an NCHW input is transformed once */
    if (conv_depthwise_blockable(g, &g->nodes[ni], b)) {
        int32_t w5 = dw_weights_blocked(g, g->nodes[ni].in[1], b);
        if (w5 < 0)
            return 0;
        g->nodes[ni].in[1] = w5;
        if (blk[x] < 0)
            blk[x] = add_block(g, x, b);
    }
    if (blk[x] >= 0)
        g->nodes[ni].in[0] = blk[x];
    blk[y] = retarget_output(g, ni, b);
    set_layout_attr(g, ni, layout);
    return 1;
}

/* Whether non-constant operand v of an elementwise node with output y
 * takes the blocked layout beside it: y's shape, or one value per image
 * and channel ([N,C,1,1]: a squeeze-and-excitation scale, whose twin
 * [N,C/b,1,1,b] broadcasts against [N,C/b,H,W,b]). */
static int same_or_per_channel(const Value *v, const Value *y)
{
    if (v->rank != 4)
        return 0;
    return !memcmp(v->dims, y->dims, 4 * sizeof y->dims[0]) ||
           (v->dims[0] == y->dims[0] && v->dims[1] == y->dims[1] && v->dims[2] == 1 && v->dims[3] == 1);
}

static int blocked_elementwise(Graph *g, int32_t ni, int32_t *blk, int b, Diag *d)
{
    Node *e = &g->nodes[ni];
    const Value *y;
    Kernel *k;
    int i, any = 0, errs = d->errors;
    int32_t nin[16];
    if (e->dead || e->n_out != 1 || e->out[0] < 0 || e->n_in > 16 || e->op == OP_Transpose ||
        e->op == OP_Reshape)
        return 0;
    y = &g->values[e->out[0]];
    if (y->rank != 4 || y->data || !value_is_static(y) || y->dims[1] % b)
        return 0;
    for (i = 0; i < e->n_in; i++) {
        int32_t v = e->in[i];
        if (v < 0)
            continue;
        if (blk[v] >= 0 && !memcmp(g->values[v].dims, y->dims, 4 * sizeof y->dims[0]))
            any = 1;
        else if (!g->values[v].data && !same_or_per_channel(&g->values[v], y))
            return 0;
    }
    if (!any)
        return 0;
    d->quiet++;
    k = lower_node(g, ni, "layout_check", NULL, d);
    d->quiet--;
    if (!k || !fuse_is_elementwise(k)) {
        d->errors = errs;
        return 0;
    }
    for (i = 0; i < g->nodes[ni].n_in; i++) {
        int32_t v = g->nodes[ni].in[i];
        if (v < 0 || !g->values[v].data)
            continue;
        nin[i] = relayout_const(g, v, g->values[g->nodes[ni].out[0]].dims[1], b);
        if (nin[i] < 0)
            return 0;
    }
    /* an NCHW operand beside a blocked one: transformed once, its twin
     * kept for later readers */
    for (i = 0; i < g->nodes[ni].n_in; i++) {
        int32_t v = g->nodes[ni].in[i];
        if (v < 0)
            nin[i] = v;
        else if (!g->values[v].data)
            nin[i] = blk[v] >= 0 ? blk[v] : (blk[v] = add_block(g, v, b));
    }
    for (i = 0; i < g->nodes[ni].n_in; i++)
        g->nodes[ni].in[i] = nin[i];
    blk[g->nodes[ni].out[0]] = retarget_output(g, ni, b);
    return 1;
}

static int blocked_concat(Graph *g, int32_t ni, int32_t *blk, int b)
{
    Node *n = &g->nodes[ni];
    Attr *a = NULL;
    int i;
    if (n->n_out != 1 || n->out[0] < 0 || g->values[n->out[0]].rank != 4)
        return 0;
    for (i = 0; i < n->n_attr; i++)
        if (!strcmp(n->attr[i].name, "axis") && n->attr[i].type == ATTR_INT)
            a = &n->attr[i];
    if (!a || (a->i != 1 && a->i != -3))
        return 0;
    for (i = 0; i < n->n_in; i++)
        if (n->in[i] < 0 || blk[n->in[i]] < 0)
            return 0;
    for (i = 0; i < n->n_in; i++)
        n->in[i] = blk[n->in[i]];
    a->i = 1; /* the block axis of [N,C/b,H,W,b] */
    blk[n->out[0]] = retarget_output(g, ni, b);
    return 1;
}

/* A 2-D float32 MaxPool without the Indices output whose input has a
 * twin pools the twin (lower/op_layout.c). */
static int blocked_maxpool(Graph *g, int32_t ni, int32_t *blk, int b, const char *layout)
{
    const Node *n = &g->nodes[ni];
    int32_t x = n->in[0];
    if (n->n_in != 1 || x < 0 || blk[x] < 0 || n->out[0] < 0 || (n->n_out > 1 && n->out[1] >= 0) ||
        g->values[n->out[0]].rank != 4 || g->values[x].dtype != DT_FLOAT32 ||
        node_window(n)->storage_order != 0)
        return 0;
    g->nodes[ni].in[0] = blk[x];
    blk[g->nodes[ni].out[0]] = retarget_output(g, ni, b);
    set_layout_attr(g, ni, layout);
    return 1;
}

/* A float32 GlobalAveragePool or GlobalMaxPool of a rank-4 value with a
 * twin pools the twin into [N,C/b,1,1,b] (lower/op_nn.c), which is
 * [N,C,1,1] in the same order: the transform back is a Reshape. */
static int blocked_global_pool(Graph *g, int32_t ni, int32_t *blk, int b, const char *layout)
{
    const Node *n = &g->nodes[ni];
    int32_t x = n->in[0];
    if (n->n_in != 1 || n->n_out != 1 || x < 0 || blk[x] < 0 || n->out[0] < 0 || n->quant ||
        g->values[x].rank != 4 || g->values[x].dtype != DT_FLOAT32 || g->values[n->out[0]].rank != 4)
        return 0;
    g->nodes[ni].in[0] = blk[x];
    blk[g->nodes[ni].out[0]] = retarget_output(g, ni, b);
    set_layout_attr(g, ni, layout);
    return 1;
}

/* Whether blocking pays for this graph: not when it has depthwise convs
 * (mobilenet_v2 ran 1.25 and efficientnet_b0 6 times slower with x86-64-avx2
 * when blocked around NCHW depthwise convs). A grouped conv whose groups do
 * not fill whole blocks (ResNeXt's group width 4) stays NCHW inside a
 * blocked graph: one transform to NCHW before it, and the 1x1 conv after
 * it reads its NCHW output directly; resnext50_32x4d ran 10% faster so
 * (its 1x1 convs are 80% of the run and take the blocked tiles). */
static int blocking_pays(const Graph *g, int b)
{
    int32_t ni;
    int convs = 0;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        const Value *w;
        if (n->dead || n->op != OP_Conv)
            continue;
        if (n->n_in < 2 || n->in[1] < 0)
            return 0;
        w = &g->values[n->in[1]];
        if (!groups_blockable(g, n, b) && (w->rank != 4 || w->dims[1] == 1))
            return 0; /* depthwise (one input channel per group) */
        convs++;
    }
    return convs > 0;
}

static int layout_nchwc(Graph *g, Diag *d, int b)
{
    int32_t ni, n0 = g->n_nodes, *blk;
    int32_t cap;
    if (!blocking_pays(g, b))
        return 0;
    /* every value the pass adds gets an entry: at most 3 per node moved,
     * 3 per operand transformed and 1 per constant re-laid out */
    cap = 8 * g->n_values + 8 * n0 + 16;
    blk = malloc((size_t)cap * sizeof *blk);
    if (!blk)
        die("out of memory");
    for (ni = 0; ni < cap; ni++)
        blk[ni] = -1;
    for (ni = 0; ni < n0; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        if (n->op == OP_Conv)
            blocked_conv(g, ni, blk, b, g->settings.target->preferred_layout);
        else if (n->op == OP_Concat)
            blocked_concat(g, ni, blk, b);
        else if (n->op == OP_MaxPool)
            blocked_maxpool(g, ni, blk, b, g->settings.target->preferred_layout);
        else if (n->op == OP_GlobalAveragePool || n->op == OP_GlobalMaxPool)
            blocked_global_pool(g, ni, blk, b, g->settings.target->preferred_layout);
        else
            blocked_elementwise(g, ni, blk, b, d);
        if (d->errors) {
            free(blk);
            return 1;
        }
        if (g->n_values + 8 >= cap)
            break; /* no room to record more twins: the rest stays NCHW */
    }
    free(blk);
    graph_toposort(g);
    return pass_dce(g, d);
}

int pass_layout(Graph *g, Diag *d)
{
    int32_t ni, n0 = g->n_nodes;
    int changed = 1, rounds = 0, quant_only;
    if (g->settings.target && block_of(g->settings.target->preferred_layout))
        return layout_nchwc(g, d, block_of(g->settings.target->preferred_layout));
    /* the "dot" knob (AArch64's NEON int8 kernels): the integer convs
     * alone take NHWC, whatever the preferred layout of the float ones */
    quant_only = g->settings.target && g->settings.target->knobs.dot &&
                 (!g->settings.target->preferred_layout ||
                  strcmp(g->settings.target->preferred_layout, "NHWC") != 0);
    if (!quant_only && (!g->settings.target || !g->settings.target->preferred_layout ||
                        strcmp(g->settings.target->preferred_layout, "NHWC") != 0))
        return 0;
    for (ni = 0; ni < n0; ni++) {
        const Node *n = &g->nodes[ni];
        if (!n->dead && n->op == OP_Conv && (!quant_only || n->quant) && convert_conv(g, ni, d))
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
