/*
 * Lowering of the quantization operators: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv, onnxruntime's com.microsoft QOperator ops (QLinearAdd,
 * QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat,
 * QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QGemm: in float, below)
 * and the integer operators of passes/quantize.c (Node.quant).
 *
 * Quantizing is saturate(round_half_even(x / scale) + zero_point), computed
 * in the scale's float type and clamped to the range of the quantized type
 * before the store converts it. The integer products accumulate exactly in
 * int32 with the zero points subtracted first; the QLinear forms then
 * requantize the int32 sum in float64 (a_scale * b_scale / y_scale applied
 * to an exact integer) so that ties round the same way as the reference.
 * Padding of the conv forms contributes zero after the zero point is
 * subtracted, as in the reference definition.
 *
 * A parameter (scale or zero point) is a scalar or a 1-D tensor along one
 * axis of the output; param() loads the right element for either.
 */
#include "lower.h"

#include <string.h>

static int present(const Node *n, int i)
{
    return i < n->n_in && n->in[i] >= 0;
}

/* Parameter input i at output axis `axis` of stage c (scalar when it has one
 * element), converted to type t; `def` when the input is omitted. A blocked
 * parameter (QuantizeLinear/DequantizeLinear with block_size) has the
 * output's rank and is indexed by the output position, its axis `axis`
 * divided by the block size. */
static Expr *param(Lower *L, const Node *n, int i, const Compute *c, int axis, DType t,
                   int64_t def)
{
    Expr *e;
    if (!present(n, i))
        return dtype_is_float(t) ? ex_float(L, t, (double)def) : ex_const_int(L, t, def);
    if (axis >= 0 && (n->op == OP_QuantizeLinear || n->op == OP_DequantizeLinear) &&
        node_axis(n)->blocksize > 0) {
        const Value *pv = &L->g->values[n->in[i]];
        Expr *idx[TVMCC_MAX_RANK];
        int k;
        for (k = 0; k < pv->rank; k++) {
            idx[k] = ex_var(L, &c->axes[k]);
            if (k == axis)
                idx[k] = ex_binary(L, BIN_FLOORDIV, idx[k], ex_int(L, node_axis(n)->blocksize));
        }
        return ex_cast(L, t, ex_load_nd(L, lower_buf_value(L, n->in[i]), pv->rank, pv->dims, idx));
    }
    if (value_numel(&L->g->values[n->in[i]]) == 1 || axis < 0)
        e = ex_load(L, lower_buf_value(L, n->in[i]), ex_int(L, 0));
    else
        e = ex_load(L, lower_buf_value(L, n->in[i]), ex_var(L, &c->axes[axis]));
    return ex_cast(L, t, e);
}

static void type_range(DType t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case DT_INT8: *lo = -128; *hi = 127; break;
    case DT_UINT8: *lo = 0; *hi = 255; break;
    case DT_INT16: *lo = -32768; *hi = 32767; break;
    case DT_UINT16: *lo = 0; *hi = 65535; break;
    case DT_INT4: *lo = -8; *hi = 7; break;
    case DT_UINT4: *lo = 0; *hi = 15; break;
    case DT_INT2: *lo = -2; *hi = 1; break;
    case DT_UINT2: *lo = 0; *hi = 3; break;
    default: *lo = INT32_MIN; *hi = INT32_MAX; break;
    }
}

/* saturate(round(v) + zp) for quantized type qt; v and zp of float type. */
static Expr *requant(Lower *L, Expr *v, Expr *zp, DType qt)
{
    int64_t lo, hi;
    DType ft = v->dtype;
    type_range(qt, &lo, &hi);
    v = ex_add(L, ex_unary(L, UN_ROUND, v), zp);
    v = ex_binary(L, BIN_MAX, v, ex_float(L, ft, (double)lo));
    v = ex_binary(L, BIN_MIN, v, ex_float(L, ft, (double)hi));
    return ex_cast(L, qt, v);
}

int lower_QuantizeLinear(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    DType ft = dtype_compute(L->g->values[n->in[1]].dtype);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    int ax = node_axis(n)->axis; /* -1: per-tensor parameters */
    Expr *v = ex_load_broadcast(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, c);
    const Attr *prec = node_attr(n, "precision"), *sat = node_attr(n, "saturate");
    if (prec && prec->i != 0) /* opset 23+: the division's type */
        ft = dtype_compute((DType)prec->i);
    v = ex_binary(L, BIN_DIV, ex_cast(L, ft, v), param(L, n, 1, c, ax, ft, 1));
    if (dtype_is_float(y->dtype)) {
        /* float8 / float4e2m1: x / scale + zero point, converted by the
         * store (round to nearest even); float8 saturates unless
         * saturate=0, float4e2m1 always does */
        v = ex_add(L, v, param(L, n, 2, c, ax, ft, 0));
        if (y->dtype != DT_FLOAT4E2M1 && (!sat || sat->i != 0))
            v = lower_f8_saturate(L, ex_cast(L, DT_FLOAT32, v), y->dtype);
        c->body = ex_cast(L, y->dtype, v);
        return 0;
    }
    c->body = requant(L, v, param(L, n, 2, c, ax, ft, 0), y->dtype);
    return 0;
}

int lower_DequantizeLinear(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    DType ft = dtype_compute(L->g->values[n->out[0]].dtype);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    int ax = node_axis(n)->axis; /* -1: per-tensor parameters */
    Expr *v = ex_load_broadcast(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, c);
    /* the difference is taken in float: exact for every 8, 16 and 32-bit input */
    v = ex_sub(L, ex_cast(L, DT_FLOAT64, v), param(L, n, 2, c, ax, DT_FLOAT64, 0));
    c->body = ex_mul(L, ex_cast(L, ft, v), param(L, n, 1, c, ax, ft, 1));
    return 0;
}

/* Range [min(0, min x), max(0, max x)] mapped onto 0..255. */
int lower_DynamicQuantizeLinear(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int64_t numel = value_numel(x), one = 1;
    int xb = lower_buf_value(L, n->in[0]);
    int sb = lower_buf_value(L, n->out[1]), zb = lower_buf_value(L, n->out[2]);
    int lo = lower_buf_temp(L, "lo", DT_FLOAT32, 1), hi = lower_buf_temp(L, "hi", DT_FLOAT32, 1);
    int zf = lower_buf_temp(L, "zp", DT_FLOAT32, 1);
    Compute *c;
    Expr *r, *scale, *zpf;
    int k;
    for (k = 0; k < 2; k++) {
        c = lower_stage(L, k ? "max" : "min", k ? hi : lo, 1, &one);
        r = ex_var(L, lower_raxis(L, c, numel));
        c->rop = k ? RED_MAX : RED_MIN;
        c->init = ex_float(L, DT_FLOAT32, 0.0);
        c->body = ex_load(L, xb, r);
    }
    c = lower_stage(L, "scale", sb, 0, NULL);
    c->body = ex_binary(L, BIN_DIV, ex_sub(L, ex_load(L, hi, ex_int(L, 0)),
                                           ex_load(L, lo, ex_int(L, 0))),
                        ex_float(L, DT_FLOAT32, 255.0));
    scale = ex_load(L, sb, ex_int(L, 0));
    c = lower_stage(L, "zero_point_f", zf, 0, NULL);
    zpf = ex_binary(L, BIN_DIV, ex_unary(L, UN_NEG, ex_load(L, lo, ex_int(L, 0))), scale);
    zpf = ex_unary(L, UN_ROUND, zpf);
    zpf = ex_binary(L, BIN_MAX, zpf, ex_float(L, DT_FLOAT32, 0.0));
    c->body = ex_binary(L, BIN_MIN, zpf, ex_float(L, DT_FLOAT32, 255.0));
    c = lower_stage(L, "zero_point", zb, 0, NULL);
    c->body = ex_cast(L, DT_UINT8, ex_load(L, zf, ex_int(L, 0)));
    c = lower_elemwise_stage(L, n, n->out[0]);
    r = ex_binary(L, BIN_DIV, ex_load_broadcast(L, xb, x->rank, x->dims, c), scale);
    c->body = requant(L, r, ex_load(L, zf, ex_int(L, 0)), DT_UINT8);
    return 0;
}

/* Integer matmul of inputs ia, ib (zero points iaz, ibz, per row of a and
 * per column of b when 1-D) into int32 buffer ob of shape y. */
static void int_matmul(Lower *L, const Node *n, int ia, int iaz, int ib, int ibz, int ob,
                       const Value *y)
{
    const Value *a = &L->g->values[n->in[ia]], *b = &L->g->values[n->in[ib]];
    Compute *c = lower_stage(L, "matmul_int", ob, y->rank, y->dims);
    int64_t k = a->dims[a->rank - 1];
    IterVar *rk = lower_raxis(L, c, k);
    int nb = y->rank - (a->rank >= 2) - (b->rank >= 2), i, r;
    int row = a->rank >= 2 ? nb : -1, col = b->rank >= 2 ? y->rank - 1 : -1;
    Expr *ai[TVMCC_MAX_RANK], *bi[TVMCC_MAX_RANK], *av, *bv;
    r = 0;
    for (i = 0; i < a->rank - 2; i++)
        ai[r++] = a->dims[i] == 1 ? ex_int(L, 0)
                                  : ex_var(L, &c->axes[nb - (a->rank - 2) + i]);
    if (a->rank >= 2)
        ai[r++] = ex_var(L, &c->axes[nb]);
    ai[r++] = ex_var(L, rk);
    r = 0;
    for (i = 0; i < b->rank - 2; i++)
        bi[r++] = b->dims[i] == 1 ? ex_int(L, 0)
                                  : ex_var(L, &c->axes[nb - (b->rank - 2) + i]);
    bi[r++] = ex_var(L, rk);
    if (b->rank >= 2)
        bi[r++] = ex_var(L, &c->axes[y->rank - 1]);
    av = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, n->in[ia]), a->rank, a->dims, ai));
    bv = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, n->in[ib]), b->rank, b->dims, bi));
    av = ex_sub(L, av, param(L, n, iaz, c, row, DT_INT32, 0));
    bv = ex_sub(L, bv, param(L, n, ibz, c, col, DT_INT32, 0));
    c->rop = RED_SUM;
    c->body = ex_mul(L, av, bv);
    L->k->macs += value_numel(y) * k;
}

int lower_MatMulInteger(Lower *L, Node *n)
{
    int_matmul(L, n, 0, 2, 1, 3, lower_buf_value(L, n->out[0]), &L->g->values[n->out[0]]);
    return 0;
}

/* Elementwise stage requantizing the int32 sums in `acc` into output 0:
 * y = saturate(round(acc * sx * sw / sy) + zy). The weight scale is per
 * output channel (output axis waxis) when 1-D. */
static void requant_stage(Lower *L, Node *n, int acc, int isx, int isw, int isy, int izy,
                          int waxis)
{
    const Value *y = &L->g->values[n->out[0]];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *v, *sc;
    int64_t i;
    Expr *idx[TVMCC_MAX_RANK];
    for (i = 0; i < y->rank; i++)
        idx[i] = ex_var(L, &c->axes[i]);
    v = ex_cast(L, DT_FLOAT64, ex_load_nd(L, acc, y->rank, y->dims, idx));
    sc = ex_mul(L, param(L, n, isx, c, -1, DT_FLOAT32, 1),
                param(L, n, isw, c, waxis, DT_FLOAT32, 1));
    sc = ex_binary(L, BIN_DIV, sc, param(L, n, isy, c, -1, DT_FLOAT32, 1));
    v = ex_mul(L, v, ex_cast(L, DT_FLOAT64, sc));
    c->body = requant(L, v, param(L, n, izy, c, -1, DT_FLOAT64, 0), y->dtype);
}

int lower_QLinearMatMul(Lower *L, Node *n)
{
    const Value *y = &L->g->values[n->out[0]];
    int acc = lower_buf_temp(L, "acc32", DT_INT32, value_numel(y));
    int_matmul(L, n, 0, 2, 3, 5, acc, y);
    /* b's scale: per tensor, or per column of b (the output's last axis) */
    requant_stage(L, n, acc, 1, 4, 6, 7, L->g->values[n->in[3]].rank >= 2 ? y->rank - 1 : -1);
    return 0;
}

/* Integer convolution of input ix (zero point ixz, scalar) by weights iw
 * (zero point iwz, scalar or per output channel) plus optional int32 bias
 * input ib, into int32 buffer ob shaped like output 0. */
static void int_conv(Lower *L, const Node *n, int ix, int ixz, int iw, int iwz, int ib, int ob)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[ix]], *w = &g->values[n->in[iw]];
    const Value *y = &g->values[n->out[0]];
    const ConvWindow *win = node_window(n);
    int64_t group = win->group, mg = w->dims[0] / group, kvol = 1;
    int nsp = win->nsp, i;
    Compute *c = lower_stage(L, "conv_int", ob, y->rank, y->dims);
    IterVar *rc = lower_raxis(L, c, w->dims[1]), rk[TVMCC_MAX_RANK];
    Expr *xi[TVMCC_MAX_RANK], *wi[TVMCC_MAX_RANK], *cond = ex_const_int(L, DT_BOOL, 1);
    Expr *xv, *wv;
    for (i = 0; i < nsp; i++) {
        rk[i] = *lower_raxis(L, c, w->dims[2 + i]);
        kvol *= w->dims[2 + i];
    }
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, rc);
    if (group > 1)
        xi[1] = ex_add(L, ex_mul(L, ex_binary(L, BIN_DIV, ex_var(L, &c->axes[1]), ex_int(L, mg)),
                                 ex_int(L, w->dims[1])),
                       xi[1]);
    for (i = 0; i < nsp; i++) {
        int64_t s = win->strides[i], dil = win->dilations[i], in = x->dims[2 + i];
        int64_t pb = win->pad_begin[i];
        Expr *pos;
        pos = ex_add(L, ex_sub(L, ex_mul(L, ex_var(L, &c->axes[2 + i]), ex_int(L, s)),
                               ex_int(L, pb)),
                     ex_mul(L, ex_var(L, &rk[i]), ex_int(L, dil)));
        cond = ex_and(L, cond, ex_and(L, ex_binary(L, BIN_GE, pos, ex_int(L, 0)),
                                      ex_lt(L, pos, ex_int(L, in))));
        pos = ex_binary(L, BIN_MAX, pos, ex_int(L, 0));
        xi[2 + i] = ex_binary(L, BIN_MIN, pos, ex_int(L, in - 1));
    }
    xv = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, n->in[ix]), x->rank, x->dims, xi));
    xv = ex_sub(L, xv, param(L, n, ixz, c, -1, DT_INT32, 0));
    xv = ex_select(L, cond, xv, ex_const_int(L, DT_INT32, 0));
    wi[0] = ex_var(L, &c->axes[1]);
    wi[1] = ex_var(L, rc);
    for (i = 0; i < nsp; i++)
        wi[2 + i] = ex_var(L, &rk[i]);
    wv = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, n->in[iw]), w->rank, w->dims, wi));
    wv = ex_sub(L, wv, param(L, n, iwz, c, 1, DT_INT32, 0));
    c->window = win;
    c->rop = RED_SUM;
    c->body = ex_mul(L, xv, wv);
    if (ib >= 0 && present(n, ib))
        c->init = ex_load(L, lower_buf_value(L, n->in[ib]), ex_var(L, &c->axes[1]));
    L->k->macs += value_numel(y) * w->dims[1] * kvol;
}

int lower_ConvInteger(Lower *L, Node *n)
{
    int_conv(L, n, 0, 2, 1, 3, -1, lower_buf_value(L, n->out[0]));
    return 0;
}

int lower_QLinearConv(Lower *L, Node *n)
{
    const Value *y = &L->g->values[n->out[0]];
    int acc = lower_buf_temp(L, "acc32", DT_INT32, value_numel(y));
    int_conv(L, n, 0, 2, 3, 5, 8, acc);
    requant_stage(L, n, acc, 1, 4, 6, 7, 1);
    return 0;
}

/* ---- integer operators (Node.quant, set by passes/quantize.c) ----
 *
 * The sums (Conv in every layout, Gemm, MatMul, the average pools) are
 * lowered by their own lower_<Op>() and handed to lower_quant_sum(), which
 * turns the stage into its integer form: int32 products of the raw
 * integers (the padding of a window reads the zero point), the folded
 * int32 start per channel, and the requantizing epilogue. The elementwise
 * forms (Add, Mul, the Identity that rescales, the table lookups) are
 * lowered by lower_quant_elemwise() instead of their op's function. */

/* The requantization of ir/params.h: prod is acc * mult (or a sum of such
 * products) in int64; the result is clamped to [lo, hi] in int32 and
 * stored into the quantized type by the store. The shifted value is
 * (prod + 2^62 + 2^(s-1)) >> s as uint64, that is 2^(62-s) above the
 * rounded quotient; the int32 add of zy - 2^(62-s) wraps modulo 2^32,
 * which is exact when the quotient itself fits in int32: always for
 * s >= 32 (|prod| <= 2^62), and for smaller shifts when bound, a known
 * maximum of |prod| (0: not known), is below 2^(s+30). Otherwise the add
 * and the clamp stay in int64 (a Cortex-M4 pays a 64-bit compare chain for
 * that, three times the instructions of an SSAT). */
static Expr *requant_int(Lower *L, const QuantParams *q, Expr *prod, uint64_t bound)
{
    int s = q->shift;
    int64_t off = (int64_t)1 << (62 - s), add;
    DType t = s >= 32 || (bound && bound < (UINT64_C(1) << (s + 30))) ? DT_INT32 : DT_INT64;
    Expr *v = ex_add(L, prod, ex_const_int(L, DT_INT64, ((int64_t)1 << 62) + ((int64_t)1 << (s - 1))));
    v = ex_binary(L, BIN_SHR, ex_cast(L, DT_UINT64, v), ex_const_int(L, DT_UINT64, s));
    add = (int64_t)q->zy - off;
    if (t == DT_INT32) { /* modulo 2^32 into int32's range, as the int32 add wraps */
        add = (int64_t)((uint64_t)add & UINT64_C(0xffffffff));
        if (add >= ((int64_t)1 << 31))
            add -= (int64_t)1 << 32;
    }
    v = ex_add(L, ex_cast(L, t, v), ex_const_int(L, t, add));
    v = ex_binary(L, BIN_MAX, v, ex_const_int(L, t, q->lo));
    v = ex_binary(L, BIN_MIN, v, ex_const_int(L, t, q->hi));
    return v;
}

static Expr *mult_of(Lower *L, const QuantParams *q, Expr *chan)
{
    if (q->nch > 1 && chan)
        return ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, q->mult_v), chan));
    return ex_const_int(L, DT_INT64, q->mult[0]);
}

/* The load under the casts the float-style product put on an operand (a
 * product of int8 and uint8 converts one to the other's type). */
static Expr *uncast(Expr *e)
{
    while (e->kind == EX_CAST)
        e = e->a;
    return e;
}

/* x as int32; a select of the padding reads the zero point instead of 0. */
static Expr *quant_x(Lower *L, const QuantParams *q, Expr *e)
{
    e = uncast(e);
    if (e->kind == EX_SELECT)
        return ex_select(L, e->a, ex_cast(L, DT_INT32, uncast(e->b)),
                         ex_const_int(L, DT_INT32, q->zx));
    return ex_cast(L, DT_INT32, e);
}

void lower_quant_sum(Lower *L, const Node *n, Compute *c, const IterVar *chan)
{
    const QuantParams *q = n->quant;
    Expr *ch = chan ? ex_var(L, chan) : NULL;
    if (q->kind == QK_SUM) {
        Expr *w = ex_cast(L, DT_INT32, uncast(c->body->b));
        if (q->zw)
            w = ex_sub(L, w, ex_const_int(L, DT_INT32, q->zw));
        c->body = ex_mul(L, quant_x(L, q, c->body->a), w);
        c->init = ex_load(L, lower_buf_value(L, q->init), q->nch > 1 && ch ? ch : ex_int(L, 0));
    } else { /* QK_POOL: every window counts all its taps (passes/quantize.c) */
        int64_t taps = 1;
        int i;
        for (i = 0; i < c->n_raxes; i++)
            taps *= c->raxes[i].extent;
        c->body = quant_x(L, q, c->body);
        c->init = ex_const_int(L, DT_INT32, -taps * (int64_t)q->zx);
    }
    c->rop = RED_SUM;
    c->post = requant_int(L, q, ex_mul(L, ex_cast(L, DT_INT64, ex_acc(L, DT_INT32)),
                                       mult_of(L, q, ch)), 0);
}

static uint64_t mag(int32_t m)
{
    return m < 0 ? (uint64_t)-(int64_t)m : (uint64_t)m;
}

static Expr *centered(Lower *L, Expr *v, int32_t z)
{
    v = ex_cast(L, DT_INT32, v);
    return z ? ex_sub(L, v, ex_const_int(L, DT_INT32, z)) : v;
}

int lower_quant_elemwise(Lower *L, Node *n)
{
    Graph *g = L->g;
    const QuantParams *q = n->quant;
    const Value *a = &g->values[n->in[0]];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *va = ex_load_broadcast(L, lower_buf_value(L, n->in[0]), a->rank, a->dims, c), *vb, *p;
    uint64_t span, bound;
    if (q->kind == QK_TABLE) {
        int64_t lo = a->dtype == DT_INT8 ? -128 : 0;
        Expr *i = ex_cast(L, DT_INT64, va);
        if (lo)
            i = ex_sub(L, i, ex_int(L, lo));
        c->body = ex_load(L, lower_buf_value(L, q->table), i);
        return 0;
    }
    /* the centred inputs' magnitude: 255 for 8-bit types, 65535 for 16 */
    span = dtype_size((DType)q->xtype) == 1 ? 255 : dtype_size((DType)q->xtype) == 2 ? 65535 : 0;
    va = centered(L, va, q->zx);
    if (q->kind == QK_RESCALE) {
        c->body = requant_int(L, q, ex_mul(L, ex_cast(L, DT_INT64, va), mult_of(L, q, NULL)),
                              span * mag(q->mult[0]));
        return 0;
    }
    {
        const Value *b = &g->values[n->in[1]];
        vb = centered(L, ex_load_broadcast(L, lower_buf_value(L, n->in[1]), b->rank, b->dims, c),
                      q->zx2);
    }
    if (q->kind == QK_ADD) {
        p = ex_add(L, ex_mul(L, ex_cast(L, DT_INT64, va), ex_const_int(L, DT_INT64, q->mult[0])),
                   ex_mul(L, ex_cast(L, DT_INT64, vb), ex_const_int(L, DT_INT64, q->mult2)));
        bound = span * (mag(q->mult[0]) + mag(q->mult2));
    } else {
        p = ex_mul(L, ex_cast(L, DT_INT64, ex_mul(L, va, vb)), mult_of(L, q, NULL));
        bound = span * span * mag(q->mult[0]);
    }
    c->body = requant_int(L, q, p, bound);
    return 0;
}

/* ---- onnxruntime's com.microsoft QOperator ops, in float ----
 *
 * What passes/quantize_qop.c leaves (parameters computed at run time, a
 * QGemm with a float output, a count that varies over the window, softmax)
 * is computed as onnxruntime defines it: dequantize, the float op,
 * quantize (round half to even, saturate). The parameters are loaded from
 * their inputs; an omitted zero point is 0. */

/* (x - zp) * scale in float type ft, for scale input is and zero point iz. */
static Expr *deq(Lower *L, const Node *n, Expr *x, int is, int iz, const Compute *c, DType ft)
{
    Expr *v = ex_sub(L, ex_cast(L, ft, x), param(L, n, iz, c, -1, ft, 0));
    return ex_mul(L, v, param(L, n, is, c, -1, ft, 1));
}

/* saturate(round(v / scale) + zp) into quantized type qt. */
static Expr *quant(Lower *L, const Node *n, Expr *v, int is, int iz, const Compute *c, DType qt)
{
    DType ft = v->dtype;
    v = ex_binary(L, BIN_DIV, v, param(L, n, is, c, -1, ft, 1));
    return requant(L, v, param(L, n, iz, c, -1, ft, 0), qt);
}

/* Quantized input ix (scale ix + 1, zero point ix + 2) dequantized at the
 * points of stage c (broadcast to its axes). */
static Expr *deq_input(Lower *L, const Node *n, int ix, const Compute *c)
{
    const Value *x = &L->g->values[n->in[ix]];
    Expr *v = ex_load_broadcast(L, lower_buf_value(L, n->in[ix]), x->rank, x->dims, c);
    return deq(L, n, v, ix + 1, ix + 2, c, DT_FLOAT32);
}

static int qop_binary(Lower *L, Node *n, BinaryOp op)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *v = ex_binary(L, op, deq_input(L, n, 0, c), deq_input(L, n, 3, c));
    c->body = quant(L, n, v, 6, 7, c, L->g->values[n->out[0]].dtype);
    return 0;
}

int lower_QLinearAdd(Lower *L, Node *n) { return qop_binary(L, n, BIN_ADD); }
int lower_QLinearMul(Lower *L, Node *n) { return qop_binary(L, n, BIN_MUL); }

static int qop_unary(Lower *L, Node *n, int leaky)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *v = deq_input(L, n, 0, c);
    if (leaky) {
        Expr *neg = ex_mul(L, v, ex_float(L, DT_FLOAT32, (float)node_scalar(n)->alpha));
        v = ex_select(L, ex_binary(L, BIN_GE, v, ex_float(L, DT_FLOAT32, 0.0)), v, neg);
    } else {
        v = ex_unary(L, UN_SIGMOID, v);
    }
    c->body = quant(L, n, v, 3, 4, c, L->g->values[n->out[0]].dtype);
    return 0;
}

int lower_QLinearSigmoid(Lower *L, Node *n) { return qop_unary(L, n, 0); }
int lower_QLinearLeakyRelu(Lower *L, Node *n) { return qop_unary(L, n, 1); }

/* One int32 sum per (batch, channel) over the other axes; the channel axis
 * is node_axis() (1, or the last with channels_last). The output [N, C,
 * 1...] or [N, 1..., C] is N x C in memory either way. */
int lower_QLinearGlobalAveragePool(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int cax = node_axis(n)->axis, i;
    int64_t d2[2], cnt = 1;
    Compute *c;
    Expr *xi[TVMCC_MAX_RANK], *v;
    d2[0] = x->dims[0];
    d2[1] = x->dims[cax];
    c = lower_stage(L, "qglobalavg", lower_buf_value(L, n->out[0]), 2, d2);
    for (i = 0; i < x->rank; i++) {
        if (i == 0 || i == cax) {
            xi[i] = ex_var(L, &c->axes[i == 0 ? 0 : 1]);
            continue;
        }
        xi[i] = ex_var(L, lower_raxis(L, c, x->dims[i]));
        cnt *= x->dims[i];
    }
    c->rop = RED_SUM;
    c->body = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, xi));
    /* (sum - count * zx) * sx / count, in double */
    v = ex_sub(L, ex_cast(L, DT_FLOAT64, ex_acc(L, DT_INT32)),
               ex_mul(L, ex_float(L, DT_FLOAT64, (double)cnt), param(L, n, 2, c, -1, DT_FLOAT64, 0)));
    v = ex_binary(L, BIN_DIV, ex_mul(L, v, param(L, n, 1, c, -1, DT_FLOAT64, 1)),
                  ex_float(L, DT_FLOAT64, (double)cnt));
    c->post = quant(L, n, v, 3, 4, c, y->dtype);
    return 0;
}

/* Dequantized into a float copy, AveragePool's stage, quantized. */
int lower_QLinearAveragePool(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int xf = lower_buf_temp(L, "xf", DT_FLOAT32, value_numel(x));
    int yf = lower_buf_temp(L, "yf", DT_FLOAT32, value_numel(y));
    Compute *c = lower_stage(L, "dequantize", xf, x->rank, x->dims);
    c->body = deq_input(L, n, 0, c);
    lower_avgpool_stage(L, n, xf, DT_FLOAT32, yf, DT_FLOAT32, 1);
    c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = quant(L, n, ex_load_broadcast(L, yf, y->rank, y->dims, c), 3, 4, c, y->dtype);
    return 0;
}

/* Each input requantized to the output's parameters where it lands. */
int lower_QLinearConcat(Lower *L, Node *n)
{
    const Value *o = &L->g->values[n->out[0]];
    int axis = node_axis(n)->axis, i, k, obuf = lower_buf_value(L, n->out[0]);
    int64_t off = 0;
    for (i = 2; i + 2 < n->n_in; i += 3) {
        const Value *x = &L->g->values[n->in[i]];
        Expr *in_idx[TVMCC_MAX_RANK], *out_idx[TVMCC_MAX_RANK];
        Compute *c;
        if (value_numel(x) == 0)
            continue;
        c = lower_stage(L, "qconcat", obuf, x->rank, x->dims);
        for (k = 0; k < x->rank; k++) {
            in_idx[k] = ex_var(L, &c->axes[k]);
            out_idx[k] = k == axis ? ex_add(L, in_idx[k], ex_int(L, off)) : in_idx[k];
        }
        c->body = quant(L, n, deq_input(L, n, i, c), 0, 1, c, o->dtype);
        c->out_index = ex_offset(L, o->rank, o->dims, out_idx);
        off += x->dims[axis];
    }
    return 0;
}

/* Dequantized, softmax in float32 (lower/op_reduce.c's stages), quantized. */
int lower_QLinearSoftmax(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    const AxisParams *p = node_axis(n);
    int xf = lower_buf_temp(L, "xf", DT_FLOAT32, value_numel(x));
    int yf = lower_buf_temp(L, "yf", DT_FLOAT32, value_numel(x));
    int64_t v3[3] = {1, 1, 1};
    Compute *c;
    int i;
    for (i = 0; i < x->rank; i++)
        v3[i < p->axis ? 0 : (i == p->axis || p->coerce_2d) ? 1 : 2] *= x->dims[i];
    c = lower_stage(L, "dequantize", xf, x->rank, x->dims);
    c->body = deq_input(L, n, 0, c);
    lower_softmax_stages(L, xf, yf, v3, DT_FLOAT32, 0);
    c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = quant(L, n, ex_load_broadcast(L, yf, y->rank, y->dims, c), 3, 4, c, y->dtype);
    return 0;
}

/* int32 sums C + (A - za)(B - zb) (zb per tensor or per output column),
 * then y = acc * alpha * sa * sb[col] [/ sy, quantized], or float32 when
 * y_scale is absent. */
int lower_QGemm(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *a = &g->values[n->in[0]], *b = &g->values[n->in[3]];
    const Value *y = &g->values[n->out[0]];
    const ScalarParams *p = node_scalar(n);
    int acc = lower_buf_temp(L, "acc32", DT_INT32, value_numel(y));
    Compute *c = lower_stage(L, "qgemm_int", acc, 2, y->dims);
    int64_t k = p->trans_a ? a->dims[0] : a->dims[1];
    IterVar *rk = lower_raxis(L, c, k);
    Expr *ai[2], *bi[2], *av, *bv, *v, *sc;
    ai[p->trans_a ? 1 : 0] = ex_var(L, &c->axes[0]);
    ai[p->trans_a ? 0 : 1] = ex_var(L, rk);
    bi[p->trans_b ? 1 : 0] = ex_var(L, rk);
    bi[p->trans_b ? 0 : 1] = ex_var(L, &c->axes[1]);
    av = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, n->in[0]), 2, a->dims, ai));
    bv = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, n->in[3]), 2, b->dims, bi));
    av = ex_sub(L, av, param(L, n, 2, c, -1, DT_INT32, 0));
    bv = ex_sub(L, bv, param(L, n, 5, c, 1, DT_INT32, 0));
    c->rop = RED_SUM;
    c->body = ex_mul(L, av, bv);
    if (present(n, 6)) {
        const Value *cv = &g->values[n->in[6]];
        c->init = ex_load_broadcast(L, lower_buf_value(L, n->in[6]), cv->rank, cv->dims, c);
    }
    L->k->macs += value_numel(y) * k;
    c = lower_elemwise_stage(L, n, n->out[0]);
    v = ex_cast(L, DT_FLOAT64, ex_load_broadcast(L, acc, y->rank, y->dims, c));
    sc = ex_mul(L, param(L, n, 1, c, -1, DT_FLOAT32, 1), param(L, n, 4, c, 1, DT_FLOAT32, 1));
    sc = ex_mul(L, sc, ex_float(L, DT_FLOAT32, (float)p->alpha));
    if (!present(n, 7)) {
        c->body = ex_cast(L, DT_FLOAT32, ex_mul(L, v, ex_cast(L, DT_FLOAT64, sc)));
        return 0;
    }
    sc = ex_binary(L, BIN_DIV, sc, param(L, n, 7, c, -1, DT_FLOAT32, 1));
    v = ex_mul(L, v, ex_cast(L, DT_FLOAT64, sc));
    c->body = requant(L, v, param(L, n, 8, c, -1, DT_FLOAT64, 0), y->dtype);
    return 0;
}
