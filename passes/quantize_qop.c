/*
 * quantize, QOperator half: onnxruntime's com.microsoft QLinear* ops become
 * the integer operators of passes/quantize.c (Node.quant, ir/params.h),
 * exactly as their DequantizeLinear -> op -> QuantizeLinear patterns do:
 *
 *   QLinearAdd, QLinearMul             Add QK_ADD, Mul QK_MUL
 *   QLinearGlobalAveragePool           GlobalAveragePool QK_POOL (channels
 *                                      first; channels_last=1 stays float)
 *   QLinearAveragePool                 AveragePool QK_POOL (every window
 *                                      counts all its taps)
 *   QLinearConcat                      Concat, each input whose parameters
 *                                      differ rescaled by an Identity QK_RESCALE
 *   QLinearSigmoid, QLinearLeakyRelu   Sigmoid, LeakyRelu QK_TABLE
 *   QGemm (quantized output)           Gemm QK_SUM (transA 0, alpha > 0,
 *                                      constant 8-bit B, C constant per column)
 *
 * The scales and zero points must be constant scalars (QGemm's b_scale and
 * b_zero_point per column too). Anything else, and QLinearSoftmax and a
 * QGemm with a float output, keeps the op, which lower/op_quant.c computes
 * in float between dequantizing and quantizing, as onnxruntime defines it.
 * The node keeps its index, name and output; its inputs become the
 * quantized tensors only.
 */
#include "quant_util.h"

#include <math.h>
#include <string.h>

/* Input i is omitted or a constant scalar. */
static int const_scalar(const Graph *g, const Node *n, int i)
{
    const Value *v;
    if (i >= n->n_in || n->in[i] < 0)
        return 1;
    v = &g->values[n->in[i]];
    return v->data && value_numel(v) == 1;
}

/* The constant scale input i (> 0 and finite), or 0. */
static double scale_of(const Graph *g, const Node *n, int i)
{
    double s;
    if (i >= n->n_in || n->in[i] < 0 || !const_scalar(g, n, i))
        return 0;
    s = pelem(g, n->in[i], 0);
    return s > 0 && isfinite(s) ? s : 0;
}

/* The constant zero point input i (0 when omitted). */
static int32_t zp_in(const Graph *g, const Node *n, int i)
{
    return i < n->n_in && n->in[i] >= 0 ? (int32_t)pelem(g, n->in[i], 0) : 0;
}

static int32_t *one_mult(Graph *g, int32_t m)
{
    int32_t *p = arena_array(g->arena, 1, sizeof *p);
    p[0] = m;
    return p;
}

/* n becomes op, reading the `count` inputs in[], with the arithmetic q. */
static void become(Ctx *c, int32_t ni, OpKind op, const int32_t *in, int count, QuantParams *q)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    int32_t keep[3];
    int i;
    for (i = 0; i < count; i++)
        keep[i] = in[i];
    new_inputs(g, n, count);
    for (i = 0; i < count; i++)
        n->in[i] = keep[i];
    n->op = op;
    n->quant = q;
    c->rewrites++;
}

/* QLinearAdd, QLinearMul: A, sa, za, B, sb, zb, sc, zc. */
static void rewrite_binary_qop(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    const Node *n = &g->nodes[ni];
    int add = n->op == OP_QLinearAdd, i;
    double sa = scale_of(g, n, 1), sb = scale_of(g, n, 4), sy = scale_of(g, n, 6), m[2];
    DType t = g->values[n->in[0]].dtype;
    int32_t mult[2], in[2];
    QuantParams *q;
    for (i = 2; i < 8; i += 3)
        if (!const_scalar(g, n, i))
            return;
    if (!sa || !sb || !sy || !is_q8(t))
        return;
    q = new_params(g, add ? QK_ADD : QK_MUL, t, zp_in(g, n, 2), sy, zp_in(g, n, 7), t);
    q->zx2 = zp_in(g, n, 5);
    if (add) {
        m[0] = sa / sy;
        m[1] = sb / sy;
        if (fixed_point(m, 2, mult, &q->shift))
            return;
        q->mult2 = mult[1];
    } else {
        m[0] = sa * sb / sy;
        if (fixed_point(m, 1, mult, &q->shift))
            return;
    }
    q->nch = 1;
    q->mult = one_mult(g, mult[0]);
    in[0] = n->in[0];
    in[1] = n->in[3];
    become(c, ni, add ? OP_Add : OP_Mul, in, 2, q);
}

/* QLinearGlobalAveragePool, QLinearAveragePool: X, sx, zx, sy, zy. */
static void rewrite_pool_qop(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    const Node *n = &g->nodes[ni];
    const Value *x = &g->values[n->in[0]];
    double sx = scale_of(g, n, 1), sy = scale_of(g, n, 3), count = 1, m;
    int32_t mult;
    QuantParams *q;
    int i;
    if (!sx || !sy || !const_scalar(g, n, 2) || !const_scalar(g, n, 4) || !is_q8(x->dtype))
        return;
    if (n->op == OP_QLinearAveragePool) {
        const ConvWindow *w = node_window(n);
        for (i = 0; i < w->nsp; i++) {
            /* a window's count must not depend on where it is */
            if (w->ceil_mode || ((w->pad_begin[i] || w->pad_end[i]) && !w->count_include_pad))
                return;
            count *= (double)w->kernel[i];
        }
    } else {
        if (node_axis(n)->axis != 1)
            return; /* channels_last */
        for (i = 2; i < x->rank; i++)
            count *= (double)x->dims[i];
    }
    q = new_params(g, QK_POOL, x->dtype, zp_in(g, n, 2), sy, zp_in(g, n, 4), x->dtype);
    m = sx / (sy * count);
    if (fixed_point(&m, 1, &mult, &q->shift))
        return;
    q->nch = 1;
    q->mult = one_mult(g, mult);
    become(c, ni, n->op == OP_QLinearAveragePool ? OP_AveragePool : OP_GlobalAveragePool,
           &n->in[0], 1, q);
}

/* f(x) of QLinearSigmoid / QLinearLeakyRelu in float, as onnxruntime's
 * lookup table computes it. */
static float unary_qop(const Node *n, float x)
{
    if (n->op == OP_QLinearSigmoid)
        return (float)(1.0 / (1.0 + exp(-(double)x)));
    return x >= 0 ? x : x * (float)node_scalar(n)->alpha;
}

/* QLinearSigmoid, QLinearLeakyRelu: X, sx, zx, sy, zy -> a 256-entry
 * table of dequantize, f, quantize. */
static void rewrite_table_qop(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    const Node *n = &g->nodes[ni];
    DType t = g->values[n->in[0]].dtype;
    double sy = scale_of(g, n, 3);
    float sx = (float)scale_of(g, n, 1);
    int32_t zx, zy, lo, hi, i;
    QuantParams *q;
    uint8_t *tab;
    if (!(sx > 0) || !sy || !const_scalar(g, n, 2) || !const_scalar(g, n, 4) || !is_q8(t))
        return;
    zx = zp_in(g, n, 2);
    zy = zp_in(g, n, 4);
    q = new_params(g, QK_TABLE, t, zx, sy, zy, t);
    qrange(t, &lo, &hi);
    tab = arena_alloc(g->arena, 256);
    for (i = lo; i <= hi; i++) {
        float r = unary_qop(n, (float)(i - zx) * sx) / (float)sy;
        double v = fmax((double)q->lo, fmin((double)q->hi, nearbyint((double)r) + zy));
        if (t == DT_INT8)
            ((int8_t *)tab)[i - lo] = (int8_t)v;
        else
            tab[i - lo] = (uint8_t)v;
    }
    q->table = new_const(g, arena_printf(g->arena, "%s.qtable%ld", n->name, (long)g->n_values),
                         t, 256, tab);
    n = &g->nodes[ni];
    become(c, ni, n->op == OP_QLinearSigmoid ? OP_Sigmoid : OP_LeakyRelu, &n->in[0], 1, q);
}

/* QLinearConcat: sy, zy, then (X, sx, zx) per input. An input whose scale
 * or zero point differs from the output's is rescaled first. */
static void rewrite_concat_qop(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    DType t = g->values[n->out[0]].dtype;
    double sy = scale_of(g, n, 0);
    int32_t zy, *in;
    int i, k = (n->n_in - 2) / 3;
    if (!sy || !const_scalar(g, n, 1) || !is_q8(t))
        return;
    for (i = 2; i < n->n_in; i += 3)
        if (!scale_of(g, n, i + 1) || !const_scalar(g, n, i + 2))
            return;
    zy = zp_in(g, n, 1);
    for (i = 0; i < k; i++) { /* every multiplier first: then nothing fails */
        double m = scale_of(g, n, 3 * i + 3) / sy;
        int32_t mult;
        int shift;
        if (fixed_point(&m, 1, &mult, &shift))
            return;
    }
    in = arena_array(g->arena, (size_t)k, sizeof *in);
    for (i = 0; i < k; i++) {
        double sx = scale_of(g, &g->nodes[ni], 3 * i + 3), m = sx / sy;
        int32_t zx = zp_in(g, &g->nodes[ni], 3 * i + 4), x = g->nodes[ni].in[3 * i + 2];
        int32_t mult, vi, ri;
        QuantParams *q;
        Node *r;
        if (same_scale(sx, sy) && zx == zy) {
            in[i] = x;
            continue;
        }
        q = new_params(g, QK_RESCALE, t, zx, sy, zy, t);
        fixed_point(&m, 1, &mult, &q->shift);
        q->nch = 1;
        q->mult = one_mult(g, mult);
        vi = graph_add_value(g, arena_printf(g->arena, "%s.rescaled%d", g->nodes[ni].name, i));
        g->values[vi] = g->values[x];
        g->values[vi].name = arena_printf(g->arena, "%s.rescaled%d", g->nodes[ni].name, i);
        g->values[vi].data = NULL;
        g->values[vi].input_index = -1;
        g->values[vi].is_initializer = 0;
        ri = graph_add_node(g, OP_Identity, g->values[vi].name, 1, 1);
        r = &g->nodes[ri];
        r->in[0] = x;
        r->out[0] = vi;
        r->index = g->nodes[ni].index;
        r->opset = (int)g->opset;
        r->quant = q;
        g->values[vi].producer = ri;
        in[i] = vi;
    }
    n = &g->nodes[ni];
    n->in = in;
    n->n_in = k;
    n->op = OP_Concat;
    n->quant = NULL; /* the integers themselves are concatenated */
    c->rewrites++;
}

/* QGemm: A, sa, za, B, sb, zb, [C], sy, zy with a quantized output. */
static void rewrite_gemm_qop(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    const Node *n = &g->nodes[ni];
    const ScalarParams *p = node_scalar(n);
    const Value *a = &g->values[n->in[0]], *wv = &g->values[n->in[3]];
    double sa = scale_of(g, n, 1), sy = scale_of(g, n, 7);
    DType ty = g->values[n->out[0]].dtype;
    int32_t bias = n->n_in > 6 ? n->in[6] : -1, in[3];
    int tb = p->trans_b, i;
    QuantParams *q;
    WLayout l;
    QT w;
    if (!sa || !sy || p->trans_a || !(p->alpha > 0) || !is_q8(a->dtype) || !is_q8(ty) ||
        !const_scalar(g, n, 2) || !const_scalar(g, n, 8) || !g->values[n->in[4]].data ||
        (n->in[5] >= 0 && !g->values[n->in[5]].data))
        return;
    memset(&w, 0, sizeof w);
    w.q = n->in[3];
    w.scale = n->in[4];
    w.zp = n->in[5];
    w.n = value_numel(&g->values[w.scale]);
    w.axis = w.n == 1 ? -1 : tb ? 0 : 1;
    for (i = 0; i < w.n; i++)
        if (!(pelem(g, w.scale, i) > 0) || !isfinite(pelem(g, w.scale, i)))
            return;
    l.C = wv->dims[tb ? 0 : 1];
    l.K = wv->dims[tb ? 1 : 0];
    if (!weights_ok(g, &w, tb ? 0 : 1, l.C))
        return;
    if (tb) {
        l.cstride = l.K;
        l.kouter = l.K;
        l.kinner = l.K;
    } else {
        l.cstride = 1;
        l.kouter = l.C;
        l.kinner = 1;
    }
    if (bias >= 0) { /* one value per output column (or one for all) */
        const Value *bv = &g->values[bias];
        int64_t nb = value_numel(bv);
        if (!bv->data || (nb != 1 && (nb != l.C || bv->dims[bv->rank - 1] != l.C)))
            return;
    }
    q = new_params(g, QK_SUM, a->dtype, zp_in(g, n, 2), sy, zp_in(g, n, 8), ty);
    q->zw = w.zp >= 0 ? (int32_t)pelem(g, w.zp, 0) : 0;
    if (sum_params(c, ni, q, sa, &w, &l, NULL, -1, p->alpha, 1, sy))
        return;
    if (bias >= 0) { /* C is at scale sa * sb: it adds to the int32 start */
        int32_t *init = g->values[q->init].data;
        int64_t ch;
        for (ch = 0; ch < l.C; ch++) {
            double v = (double)init[ch] + pelem(g, bias, ch);
            if (!(fabs(v) < 2147483647.0))
                return;
            init[ch] = (int32_t)v;
        }
    }
    n = &g->nodes[ni];
    in[0] = n->in[0];
    in[1] = n->in[3];
    in[2] = q->init;
    become(c, ni, OP_Gemm, in, 3, q);
}

void rewrite_qop(Ctx *c, int32_t ni)
{
    switch (c->g->nodes[ni].op) {
    case OP_QLinearAdd: case OP_QLinearMul: rewrite_binary_qop(c, ni); break;
    case OP_QLinearGlobalAveragePool: case OP_QLinearAveragePool: rewrite_pool_qop(c, ni); break;
    case OP_QLinearSigmoid: case OP_QLinearLeakyRelu: rewrite_table_qop(c, ni); break;
    case OP_QLinearConcat: rewrite_concat_qop(c, ni); break;
    case OP_QGemm: rewrite_gemm_qop(c, ni); break;
    default: break; /* QLinearSoftmax: computed in float (lower/op_quant.c) */
    }
}
