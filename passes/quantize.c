/*
 * quantize: quantized patterns become integer operators.
 *
 * A QDQ model (onnxruntime's quantizer, PyTorch's and TensorFlow's
 * exporters) computes in float between DequantizeLinear (DQ) and
 * QuantizeLinear (Q) nodes. This pass finds the patterns whose result
 * integer arithmetic gives to within one step of the output scale and
 * rewrites each into the operator node itself, with integer inputs, the
 * quantized output and Node.quant (ir/params.h) describing the arithmetic;
 * lower/op_quant.c computes it with integers only. docs/quantization.md has
 * the list and the arithmetic.
 *
 *   DQ(x), DQ(w const), [DQ(b const)] -> Conv | Gemm | MatMul
 *                      [-> Relu | Clip] -> Q     QK_SUM (the activation
 *                                               narrows the output clamp)
 *   DQ(a), DQ(b) -> Add -> Q                     QK_ADD
 *   DQ(a), DQ(b) -> Mul -> Q                     QK_MUL
 *   DQ(x) -> AveragePool | GlobalAveragePool -> Q QK_POOL
 *   DQ(x) -> Sigmoid | Tanh | Relu | ... -> Q    QK_TABLE (256 entries,
 *                                               computed here)
 *   DQ(x) -> MaxPool | Reshape | Flatten | Transpose | Squeeze | Unsqueeze |
 *            Slice | Split | Pad | Resize (nearest) | Gather -> Q with the
 *            same scale and zero point            the op on the integers
 *   DQ(x) -> Concat -> Q                         Concat of the integers,
 *            each input whose scale or zero point differs rescaled first
 *            (an Identity with QK_RESCALE)
 *   QLinearConv, QLinearMatMul                   QK_SUM (QOperator form)
 *
 * The DQ and Q nodes a rewrite no longer needs die in dce. Anything else
 * keeps computing in float between its DQ and Q, so every quantized model
 * still compiles. Scales and zero points must be constants; weights must be
 * constant 8-bit tensors and activations of the sums 8-bit (int16
 * activations go through the other forms).
 */
#include "passes.h"
#include "quant_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int live_producer(const Graph *g, int32_t v, OpKind op)
{
    int32_t p;
    if (v < 0)
        return -1;
    p = g->values[v].producer;
    if (p < 0 || g->nodes[p].dead || g->nodes[p].op != op)
        return -1;
    return p;
}

/* v read through a DQ with constant parameters: fills *t. */
static int get_dq(const Ctx *c, int32_t v, QT *t)
{
    const Graph *g = c->g;
    int32_t p = live_producer(g, v, OP_DequantizeLinear);
    const Node *n;
    int64_t i;
    if (p < 0)
        return 0;
    n = &g->nodes[p];
    memset(t, 0, sizeof *t);
    t->node = p;
    t->q = n->in[0];
    t->scale = n->in[1];
    t->zp = n->n_in > 2 ? n->in[2] : -1;
    t->axis = node_axis(n)->axis;
    t->n = value_numel(&g->values[t->scale]);
    if (!g->values[t->scale].data || (t->zp >= 0 && !g->values[t->zp].data) || t->n < 1)
        return 0;
    if (t->n > 1 && n->params && node_axis(n)->blocksize > 0)
        return 0; /* blocked parameters: left to DequantizeLinear's own kernel */
    for (i = 0; i < t->n; i++) {
        double s = pelem(g, t->scale, i);
        if (!(s > 0) || !isfinite(s))
            return 0;
    }
    if (t->n == 1)
        t->axis = -1;
    return 1;
}

/* A per-tensor activation of a quantized type, not a constant. */
static int get_act(const Ctx *c, int32_t v, QT *t, int q8)
{
    const Value *qv;
    if (!get_dq(c, v, t) || t->axis >= 0)
        return 0;
    qv = &c->g->values[t->q];
    if (qv->data)
        return 0;
    return q8 ? is_q8(qv->dtype) : is_qtype(qv->dtype);
}

static int32_t zp_of(const Graph *g, const QT *t)
{
    return (int32_t)pelem(g, t->zp, 0);
}

/* The only live reader of v (not a graph output), or -1. */
static int32_t only_reader(const Ctx *c, int32_t v)
{
    const Graph *g = c->g;
    int32_t ni;
    int i;
    if (v < 0 || v >= c->n_uses || c->uses[v] != 1)
        return -1;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        for (i = 0; i < n->n_in; i++)
            if (n->in[i] == v)
                return ni;
    }
    return -1;
}

/* v's only reader is a per-tensor Q with constant parameters: its node, its
 * scale and zero point and output type. */
static int32_t get_q(const Ctx *c, int32_t v, double *sy, int32_t *zy, DType *ty)
{
    const Graph *g = c->g;
    int32_t r = only_reader(c, v);
    const Node *n;
    if (r < 0)
        return -1;
    n = &g->nodes[r];
    if (n->op != OP_QuantizeLinear || n->in[0] != v || n->out[0] < 0)
        return -1;
    if (value_numel(&g->values[n->in[1]]) != 1 || !g->values[n->in[1]].data)
        return -1;
    if (n->n_in > 2 && n->in[2] >= 0 && !g->values[n->in[2]].data)
        return -1;
    *sy = pelem(g, n->in[1], 0);
    *zy = n->n_in > 2 ? (int32_t)pelem(g, n->in[2], 0) : 0;
    *ty = g->values[n->out[0]].dtype;
    if (!(*sy > 0) || !isfinite(*sy) || !is_qtype(*ty))
        return -1;
    return r;
}

/* n now writes the Q's output (and reads ins); the nodes between die. */
static void take_output(Ctx *c, int32_t ni, int oi, int32_t qnode, int32_t act)
{
    Graph *g = c->g;
    int32_t old = g->nodes[ni].out[oi], qout = g->nodes[qnode].out[0];
    g->nodes[ni].out[oi] = qout;
    g->values[qout].producer = ni;
    g->values[old].producer = -1;
    g->nodes[qnode].dead = 1;
    if (act >= 0) {
        g->values[g->nodes[act].out[0]].producer = -1;
        g->nodes[act].dead = 1;
    }
    c->rewrites++;
}

/* The output clamp of a fused Relu or Clip with constant bounds, or 1. */
static int act_clamp(const Graph *g, const Node *a, double sy, int32_t zy, QuantParams *q)
{
    double lo = -INFINITY, hi = INFINITY, v;
    if (a->op == OP_Relu) {
        lo = 0;
    } else if (a->op == OP_Clip) {
        if (a->opset < 11) {
            const ScalarParams *p = node_scalar(a);
            if (p->has_min)
                lo = p->min;
            if (p->has_max)
                hi = p->max;
        } else {
            if (a->n_in > 1 && a->in[1] >= 0) {
                if (value_const_double(g, a->in[1], &v))
                    return 1;
                lo = v;
            }
            if (a->n_in > 2 && a->in[2] >= 0) {
                if (value_const_double(g, a->in[2], &v))
                    return 1;
                hi = v;
            }
        }
    } else {
        return 1;
    }
    /* the quantized bound: what Q gives for the bound itself */
    if (isfinite(lo) && nearbyint(lo / sy) + zy > q->lo)
        q->lo = (int32_t)fmin(nearbyint(lo / sy) + zy, (double)q->hi);
    if (isfinite(hi) && nearbyint(hi / sy) + zy < q->hi)
        q->hi = (int32_t)fmax(nearbyint(hi / sy) + zy, (double)q->lo);
    return 0;
}

/* The Q after node ni's output (through one Relu or Clip): its node, and the
 * activation node in *act (-1: none). */
static int32_t out_q(Ctx *c, int32_t ni, int32_t *act, double *sy, int32_t *zy, DType *ty)
{
    const Graph *g = c->g;
    int32_t y = g->nodes[ni].out[0], r, qn;
    *act = -1;
    if ((qn = get_q(c, y, sy, zy, ty)) >= 0)
        return qn;
    r = only_reader(c, y);
    if (r < 0 || (g->nodes[r].op != OP_Relu && g->nodes[r].op != OP_Clip) ||
        g->nodes[r].in[0] != y)
        return -1;
    if ((qn = get_q(c, g->nodes[r].out[0], sy, zy, ty)) < 0)
        return -1;
    *act = r;
    return qn;
}

/* ---- sums of products: Conv, Gemm, MatMul, QLinearConv, QLinearMatMul ---- */

/* The weights' layout of C channels with K reduced elements each: the
 * elements of one channel contiguous (Conv OIHW, Gemm with transB) or the
 * channels contiguous (MatMul's B, Gemm without transB). */
static void wlayout(WLayout *l, int64_t C, int64_t K, int channel_rows)
{
    l->C = C;
    l->K = K;
    l->cstride = channel_rows ? K : 1;
    l->kouter = channel_rows ? K : C;
    l->kinner = channel_rows ? K : 1;
}

/* What Conv, Gemm and MatMul share once their input x and weights w are
 * known: the bias (input `bias`, -1 for none: an int32 DQ or a float
 * constant), the Q after the output (through a Relu or Clip), the
 * parameters, and the node rewired to the integers: inputs (x, w, init),
 * or (x, w) for a MatMul. */
static void finish_sum(Ctx *c, int32_t ni, const QT *x, const QT *w, const WLayout *l, int32_t bias,
                       double alpha, double beta)
{
    Graph *g = c->g;
    Node *n;
    QT b;
    int has_b = 0;
    int32_t act, qn, zy, bias_f = -1;
    double sy;
    DType ty;
    QuantParams *q;
    if (bias >= 0) {
        if (get_dq(c, bias, &b) && g->values[b.q].data && g->values[b.q].dtype == DT_INT32 &&
            value_numel(&g->values[b.q]) == l->C && (b.n == 1 || b.n == l->C))
            has_b = 1;
        else if (bias_ok(g, bias, l->C))
            bias_f = bias;
        else
            return;
    }
    if ((qn = out_q(c, ni, &act, &sy, &zy, &ty)) < 0 || !is_q8(ty))
        return;
    q = new_params(g, QK_SUM, g->values[x->q].dtype, zp_of(g, x), sy, zy, ty);
    q->zw = zp_of(g, w);
    if (act >= 0 && act_clamp(g, &g->nodes[act], sy, zy, q))
        return;
    if (sum_params(c, ni, q, pelem(g, x->scale, 0), w, l, has_b ? &b : NULL, bias_f, alpha, beta,
                   sy))
        return;
    n = &g->nodes[ni];
    if (n->op != OP_MatMul) {
        new_inputs(g, n, 3);
        n->in[2] = q->init;
    }
    n->in[0] = x->q;
    n->in[1] = w->q;
    n->quant = q;
    take_output(c, ni, 0, qn, act);
}

static int32_t bias_input(const Node *n)
{
    return n->n_in > 2 && n->in[2] >= 0 ? n->in[2] : -1;
}

static void rewrite_conv(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    const Node *n = &g->nodes[ni];
    QT x, w;
    const Value *wv;
    WLayout l;
    if (n->n_out != 1 || !get_act(c, n->in[0], &x, 1) || !get_dq(c, n->in[1], &w))
        return;
    wv = &g->values[w.q];
    if (wv->rank < 3 || !weights_ok(g, &w, 0, wv->dims[0]))
        return;
    wlayout(&l, wv->dims[0], value_numel(wv) / wv->dims[0], 1);
    finish_sum(c, ni, &x, &w, &l, bias_input(n), 1, 1);
}

static void rewrite_gemm(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    const Node *n = &g->nodes[ni];
    const ScalarParams *p = node_scalar(n);
    QT x, w;
    const Value *wv;
    WLayout l;
    if (p->trans_a || !(p->alpha > 0) || n->n_out != 1 || !get_act(c, n->in[0], &x, 1) ||
        g->values[x.q].rank != 2 || !get_dq(c, n->in[1], &w))
        return;
    wv = &g->values[w.q];
    if (wv->rank != 2 || !weights_ok(g, &w, p->trans_b ? 0 : 1, wv->dims[p->trans_b ? 0 : 1]))
        return;
    wlayout(&l, wv->dims[p->trans_b ? 0 : 1], wv->dims[p->trans_b ? 1 : 0], p->trans_b);
    finish_sum(c, ni, &x, &w, &l, bias_input(n), p->alpha, p->beta);
}

static void rewrite_matmul(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    const Node *n = &g->nodes[ni];
    QT x, w;
    const Value *wv;
    WLayout l;
    if (n->n_out != 1 || !get_act(c, n->in[0], &x, 1) || !get_dq(c, n->in[1], &w))
        return;
    wv = &g->values[w.q];
    if (wv->rank != 2 || !weights_ok(g, &w, 1, wv->dims[1]))
        return;
    wlayout(&l, wv->dims[1], wv->dims[0], 0);
    finish_sum(c, ni, &x, &w, &l, -1, 1, 1);
}

/* QLinearConv (x, sx, zx, w, sw, zw, sy, zy, B) and QLinearMatMul (a, sa,
 * za, b, sb, zb, sy, zy) with constant parameters and weights: the same
 * integer Conv / MatMul. */
static void rewrite_qlinear(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    int conv = n->op == OP_QLinearConv, i;
    QT w;
    const Value *wv = &g->values[n->in[3]];
    WLayout l;
    QuantParams *q;
    double sy;
    int32_t zy;
    DType ty = g->values[n->out[0]].dtype;
    for (i = 1; i < 8; i++)
        if (i != 3 && n->in[i] >= 0 && !g->values[n->in[i]].data)
            return;
    if (value_numel(&g->values[n->in[1]]) != 1 || value_numel(&g->values[n->in[6]]) != 1 ||
        (n->in[2] >= 0 && value_numel(&g->values[n->in[2]]) != 1) ||
        (n->in[7] >= 0 && value_numel(&g->values[n->in[7]]) != 1))
        return;
    if (!is_q8(g->values[n->in[0]].dtype) || g->values[n->in[0]].data)
        return;
    memset(&w, 0, sizeof w);
    w.q = n->in[3];
    w.scale = n->in[4];
    w.zp = n->in[5];
    w.n = value_numel(&g->values[w.scale]);
    w.axis = w.n == 1 ? -1 : conv ? 0 : 1;
    if (conv ? wv->rank < 3 : wv->rank != 2)
        return;
    if (!weights_ok(g, &w, conv ? 0 : 1, wv->dims[conv ? 0 : 1]))
        return;
    sy = pelem(g, n->in[6], 0);
    zy = n->in[7] >= 0 ? (int32_t)pelem(g, n->in[7], 0) : 0;
    if (!(sy > 0) || !is_q8(ty))
        return;
    q = new_params(g, QK_SUM, g->values[n->in[0]].dtype,
                   n->in[2] >= 0 ? (int32_t)pelem(g, n->in[2], 0) : 0, sy, zy, ty);
    q->zw = w.zp >= 0 ? (int32_t)pelem(g, w.zp, 0) : 0;
    if (conv)
        wlayout(&l, wv->dims[0], value_numel(wv) / wv->dims[0], 1);
    else
        wlayout(&l, wv->dims[1], wv->dims[0], 0);
    {
        QT b;
        int has_b = conv && n->n_in > 8 && n->in[8] >= 0;
        if (has_b) {
            memset(&b, 0, sizeof b);
            b.q = n->in[8];
            if (!g->values[b.q].data || value_numel(&g->values[b.q]) != l.C)
                return;
            /* QLinearConv's bias is at scale sx * sw: scale it by nothing */
            b.scale = -1;
        }
        if (sum_params(c, ni, q, pelem(g, n->in[1], 0), &w, &l, NULL, -1, 1, 1, sy))
            return;
        if (has_b) {
            int32_t *init = g->values[q->init].data;
            int64_t ch;
            for (ch = 0; ch < l.C; ch++) {
                double v = (double)init[ch] + pelem(g, b.q, ch);
                if (!(fabs(v) < 2147483647.0))
                    return;
                init[ch] = (int32_t)v;
            }
        }
    }
    n = &g->nodes[ni];
    {
        int32_t xq = n->in[0], wq = n->in[3];
        new_inputs(g, n, conv ? 3 : 2);
        n->in[0] = xq;
        n->in[1] = wq;
        if (conv)
            n->in[2] = q->init;
    }
    n->op = conv ? OP_Conv : OP_MatMul;
    n->quant = q;
    c->rewrites++;
}

/* ---- elementwise and pooling ---- */

static void rewrite_binary(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    QT a, b;
    int32_t act, qn, zy, mult[2];
    double sy, m[2], sa, sb;
    DType ty, ta, tb;
    QuantParams *q;
    const Value *y = &g->values[n->out[0]];
    if (n->n_out != 1 || !get_act(c, n->in[0], &a, 0) || !get_act(c, n->in[1], &b, 0))
        return;
    ta = g->values[a.q].dtype;
    tb = g->values[b.q].dtype;
    /* the broadcast must already be the output's shape for one input at least */
    (void)y;
    if ((qn = out_q(c, ni, &act, &sy, &zy, &ty)) < 0)
        return;
    sa = pelem(g, a.scale, 0);
    sb = pelem(g, b.scale, 0);
    q = new_params(g, n->op == OP_Add ? QK_ADD : QK_MUL, ta, zp_of(g, &a), sy, zy, ty);
    q->zx2 = zp_of(g, &b);
    if (ta != tb && !(is_q8(ta) && is_q8(tb)))
        return;
    if (act >= 0 && act_clamp(g, &g->nodes[act], sy, zy, q))
        return;
    if (n->op == OP_Add) {
        m[0] = sa / sy;
        m[1] = sb / sy;
        if (fixed_point(m, 2, mult, &q->shift))
            return;
        q->nch = 1;
        q->mult = arena_array(g->arena, 1, sizeof *q->mult);
        ((int32_t *)q->mult)[0] = mult[0];
        q->mult2 = mult[1];
    } else {
        m[0] = sa * sb / sy;
        if (fixed_point(m, 1, mult, &q->shift))
            return;
        q->nch = 1;
        q->mult = arena_array(g->arena, 1, sizeof *q->mult);
        ((int32_t *)q->mult)[0] = mult[0];
    }
    n->in[0] = a.q;
    n->in[1] = b.q;
    n->quant = q;
    take_output(c, ni, 0, qn, act);
}

static void rewrite_pool(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    QT x;
    int32_t act, qn, zy, mult;
    double sy, m, count = 1;
    DType ty;
    QuantParams *q;
    const Value *xv;
    int i;
    if (n->n_out != 1 || !get_act(c, n->in[0], &x, 0))
        return;
    xv = &g->values[x.q];
    if (n->op == OP_AveragePool) {
        const ConvWindow *w = node_window(n);
        for (i = 0; i < w->nsp; i++) {
            if ((w->pad_begin[i] || w->pad_end[i] || w->ceil_mode) && !w->count_include_pad)
                return;
            if (w->ceil_mode)
                return;
            count *= (double)w->kernel[i];
        }
    } else {
        for (i = 2; i < xv->rank; i++)
            count *= (double)xv->dims[i];
    }
    if ((qn = out_q(c, ni, &act, &sy, &zy, &ty)) < 0 || ty != xv->dtype)
        return;
    q = new_params(g, QK_POOL, xv->dtype, zp_of(g, &x), sy, zy, ty);
    if (act >= 0 && act_clamp(g, &g->nodes[act], sy, zy, q))
        return;
    m = pelem(g, x.scale, 0) / (sy * count);
    if (fixed_point(&m, 1, &mult, &q->shift))
        return;
    q->nch = 1;
    q->mult = arena_array(g->arena, 1, sizeof *q->mult);
    ((int32_t *)q->mult)[0] = mult;
    n->in[0] = x.q;
    n->quant = q;
    take_output(c, ni, 0, qn, act);
}

/* f(x) of a unary op in float, as onnxruntime computes it; 1 if the op has
 * no table form. */
/* Clip's bounds (constant inputs, or the attributes before opset 11). */
static int clip_bounds(const Graph *g, const Node *n, double *lo, double *hi)
{
    *lo = -INFINITY;
    *hi = INFINITY;
    if (n->opset < 11) {
        const ScalarParams *p = node_scalar(n);
        if (p->has_min)
            *lo = p->min;
        if (p->has_max)
            *hi = p->max;
        return 0;
    }
    if (n->n_in > 1 && n->in[1] >= 0 && value_const_double(g, n->in[1], lo))
        return 1;
    if (n->n_in > 2 && n->in[2] >= 0 && value_const_double(g, n->in[2], hi))
        return 1;
    return 0;
}

static int unary_f(const Graph *g, const Node *n, float x, float *y)
{
    double v = x, lo, hi;
    switch (n->op) {
    case OP_Clip: /* ReLU6 kept between its own Q/DQ pairs */
        if (clip_bounds(g, n, &lo, &hi))
            return 1;
        v = v < (float)lo ? (float)lo : v > (float)hi ? (float)hi : v;
        break;
    case OP_Sigmoid: v = 1.0 / (1.0 + exp(-v)); break;
    case OP_Tanh: v = tanh(v); break;
    case OP_Relu: v = v > 0 ? v : 0; break;
    case OP_LeakyRelu: v = v >= 0 ? v : v * (float)node_scalar(n)->alpha; break;
    case OP_HardSigmoid: {
        const ScalarParams *p = node_scalar(n);
        v = fmax(0.0, fmin(1.0, (float)p->alpha * v + (float)p->beta));
        break;
    }
    case OP_HardSwish: v = v * fmax(0.0, fmin(1.0, v / 6.0 + 0.5)); break;
    case OP_Elu: v = v >= 0 ? v : (float)node_scalar(n)->alpha * (exp(v) - 1.0); break;
    case OP_Softsign: v = v / (1.0 + fabs(v)); break;
    case OP_Softplus: v = log1p(exp(-fabs(v))) + fmax(v, 0.0); break;
    case OP_Abs: v = fabs(v); break;
    case OP_Neg: v = -v; break;
    case OP_Exp: v = exp(v); break;
    case OP_Erf: v = erf(v); break;
    default: return 1;
    }
    (void)g;
    *y = (float)v;
    return 0;
}

static void rewrite_table(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    QT x;
    int32_t qn, zy, zx, lo, hi, i;
    double sy;
    float sx, fy;
    DType ty, tx;
    QuantParams *q;
    uint8_t *tab;
    if (n->n_out != 1 || !get_act(c, n->in[0], &x, 1))
        return;
    tx = g->values[x.q].dtype;
    if (unary_f(g, n, 0.0f, &fy))
        return;
    if ((qn = get_q(c, n->out[0], &sy, &zy, &ty)) < 0 || !is_q8(ty))
        return;
    zx = zp_of(g, &x);
    sx = (float)pelem(g, x.scale, 0);
    q = new_params(g, QK_TABLE, tx, zx, sy, zy, ty);
    qrange(tx, &lo, &hi);
    tab = arena_alloc(g->arena, 256);
    for (i = lo; i <= hi; i++) {
        float xf = (float)(i - zx) * sx, r;
        double v;
        if (unary_f(g, n, xf, &fy))
            return;
        r = fy / (float)sy;
        v = nearbyint((double)r) + zy;
        v = fmax((double)q->lo, fmin((double)q->hi, v));
        if (ty == DT_INT8)
            ((int8_t *)tab)[i - lo] = (int8_t)v;
        else
            tab[i - lo] = (uint8_t)v;
    }
    q->table = new_const(g, arena_printf(g->arena, "%s.qtable%ld", n->name, (long)g->n_values), ty, 256, tab);
    n = &g->nodes[ni];
    n->in[0] = x.q;
    n->n_in = 1; /* (Clip's bounds are in the table) */
    n->quant = q;
    take_output(c, ni, 0, qn, -1);
}

/* ops that move or select elements: the same op on the integers when the
 * output has the input's scale and zero point */
static int is_passthrough(const Node *n)
{
    switch (n->op) {
    case OP_MaxPool: return n->n_out == 1 || n->out[1] < 0;
    case OP_Reshape: case OP_Flatten: case OP_Transpose: case OP_Squeeze: case OP_Unsqueeze:
    case OP_Slice: case OP_Split: case OP_Gather: case OP_Pad: case OP_Identity:
    case OP_DepthToSpace: case OP_SpaceToDepth:
        return 1;
    case OP_Resize: return node_resize(n)->mode == RESIZE_NEAREST;
    default: return 0;
    }
}

static void rewrite_passthrough(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    QT x;
    int32_t qns[16], zy, zx;
    double sy, sx;
    DType ty, tx;
    int o;
    if (n->n_out > 16 || !get_dq(c, n->in[0], &x) || x.axis >= 0 || !is_qtype(g->values[x.q].dtype))
        return;
    tx = g->values[x.q].dtype;
    zx = zp_of(g, &x);
    sx = pelem(g, x.scale, 0);
    if (n->op == OP_Pad) {
        const PadParams *pp = node_pad(n);
        double v = 0;
        if (pp->mode != PAD_CONSTANT && pp->mode != PAD_EDGE && pp->mode != PAD_REFLECT)
            return;
        if (pp->mode == PAD_CONSTANT && n->opset >= 11 && n->n_in > 2 && n->in[2] >= 0 &&
            (value_const_double(g, n->in[2], &v) || v != 0))
            return;
        if (pp->mode == PAD_CONSTANT && n->opset < 11 && pp->value != 0)
            return;
        if (pp->mode == PAD_CONSTANT && n->opset < 11 && zx != 0)
            return; /* the attribute form has no input to carry the zero point */
    }
    for (o = 0; o < n->n_out; o++) {
        if (n->out[o] < 0) {
            qns[o] = -1;
            continue;
        }
        if ((qns[o] = get_q(c, n->out[o], &sy, &zy, &ty)) < 0 || ty != tx || zy != zx ||
            !same_scale(sy, sx))
            return;
    }
    if (n->op == OP_Pad && n->opset >= 11 && zx != 0) {
        void *data = arena_alloc(g->arena, dtype_size(tx));
        int32_t zv;
        if (tx == DT_INT8) *(int8_t *)data = (int8_t)zx;
        else if (tx == DT_UINT8) *(uint8_t *)data = (uint8_t)zx;
        else if (tx == DT_INT16) *(int16_t *)data = (int16_t)zx;
        else *(uint16_t *)data = (uint16_t)zx;
        zv = new_const(g, arena_printf(g->arena, "%s.qpad%ld", n->name, (long)g->n_values), tx, 1, data);
        g->values[zv].rank = 0;
        if (n->n_in < 3) {
            int32_t a = n->in[0], b = n->n_in > 1 ? n->in[1] : -1;
            new_inputs(g, n, 3);
            n->in[0] = a;
            n->in[1] = b;
        }
        n->in[2] = zv;
    } else if (n->op == OP_Pad && n->opset >= 11 && n->n_in > 2 && n->in[2] >= 0) {
        n->in[2] = -1;
    }
    n->in[0] = x.q;
    for (o = 0; o < n->n_out; o++)
        if (qns[o] >= 0)
            take_output(c, ni, o, qns[o], -1);
}

/* Concat: inputs rescaled to the output's parameters where they differ. */
static void rewrite_concat(Ctx *c, int32_t ni)
{
    Graph *g = c->g;
    Node *n = &g->nodes[ni];
    QT xs[64];
    int32_t qn, zy, i;
    double sy;
    DType ty;
    if (n->n_in > 64 || (qn = get_q(c, n->out[0], &sy, &zy, &ty)) < 0)
        return;
    for (i = 0; i < n->n_in; i++)
        if (!get_act(c, n->in[i], &xs[i], 0) || g->values[xs[i].q].dtype != ty)
            return;
    for (i = 0; i < n->n_in; i++) {
        double sx = pelem(g, xs[i].scale, 0), m;
        int32_t zx = zp_of(g, &xs[i]), mult, vi, ri;
        QuantParams *q;
        Node *r;
        if (same_scale(sx, sy) && zx == zy) {
            g->nodes[ni].in[i] = xs[i].q;
            continue;
        }
        q = new_params(g, QK_RESCALE, ty, zx, sy, zy, ty);
        m = sx / sy;
        if (fixed_point(&m, 1, &mult, &q->shift))
            return; /* the inputs before i are already integer: still valid */
        q->nch = 1;
        q->mult = arena_array(g->arena, 1, sizeof *q->mult);
        ((int32_t *)q->mult)[0] = mult;
        vi = graph_add_value(g, arena_printf(g->arena, "%s.rescaled%d", g->nodes[ni].name, (int)i));
        g->values[vi] = g->values[xs[i].q];
        g->values[vi].name = arena_printf(g->arena, "%s.rescaled%d", g->nodes[ni].name, (int)i);
        g->values[vi].data = NULL;
        g->values[vi].input_index = -1;
        g->values[vi].is_initializer = 0;
        ri = graph_add_node(g, OP_Identity, g->values[vi].name, 1, 1);
        r = &g->nodes[ri];
        r->in[0] = xs[i].q;
        r->out[0] = vi;
        r->index = g->nodes[ni].index;
        r->opset = g->nodes[ni].opset;
        r->quant = q;
        g->values[vi].producer = ri;
        g->nodes[ni].in[i] = vi;
    }
    take_output(c, ni, 0, qn, -1);
}

/* Live readers of every value, graph outputs counted as readers. */
static void count_uses(Ctx *c)
{
    Graph *g = c->g;
    int32_t ni;
    int64_t j;
    int i;
    free(c->uses);
    c->n_uses = g->n_values;
    c->uses = calloc((size_t)g->n_values + 1, sizeof *c->uses);
    if (!c->uses)
        die("out of memory");
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        for (i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                c->uses[n->in[i]]++;
    }
    for (j = 0; j < g->n_outputs; j++)
        c->uses[g->outputs[j]]++;
}

int pass_quantize(Graph *g, Diag *d)
{
    Ctx c;
    int32_t ni, n0 = g->n_nodes;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.d = d;
    count_uses(&c);
    for (ni = 0; ni < n0; ni++) {
        Node *n = &g->nodes[ni];
        if (n->dead || n->quant)
            continue;
        switch (n->op) {
        case OP_Conv: rewrite_conv(&c, ni); break;
        case OP_Gemm: rewrite_gemm(&c, ni); break;
        case OP_MatMul: rewrite_matmul(&c, ni); break;
        case OP_QLinearConv: case OP_QLinearMatMul: rewrite_qlinear(&c, ni); break;
        case OP_Add: case OP_Mul: rewrite_binary(&c, ni); break;
        case OP_AveragePool: case OP_GlobalAveragePool: rewrite_pool(&c, ni); break;
        case OP_Concat: rewrite_concat(&c, ni); break;
        case OP_QLinearAdd: case OP_QLinearMul: case OP_QLinearGlobalAveragePool:
        case OP_QLinearAveragePool: case OP_QLinearConcat: case OP_QLinearSigmoid:
        case OP_QLinearLeakyRelu: case OP_QGemm: rewrite_qop(&c, ni); break;
        default:
            if (is_passthrough(n))
                rewrite_passthrough(&c, ni);
            else if ((n->n_in == 1 || n->op == OP_Clip) && n->n_out == 1)
                rewrite_table(&c, ni);
            break;
        }
    }
    if (!c.rewrites) {
        free(c.uses);
        return 0;
    }
    graph_toposort(g);
    free(c.uses);
    return pass_dce(g, d);
}
