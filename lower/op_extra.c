/*
 * Lowering of the smaller operators added after the first op set: IsInf,
 * Shrink, ThresholdedRelu, Celu, CastLike, Mod, BitShift, ArgMax/ArgMin,
 * Hardmax, Trilu, EyeLike and the window generators. The other unary maths
 * (Tan ... Atanh, Round, IsNaN) are OP_UNARY rows of ir/ops.h, lowered by
 * lower_unary_row() in op_elemwise.c.
 *
 * The elementwise ones are one stage each, like lower/op_elemwise.c. The
 * arg-reductions cannot carry a (value, index) pair through one reduction,
 * so they take two: the extreme value along the axis into a scratch buffer,
 * then the first (or, with select_last_index, the last) position holding
 * it, as a min (max) reduction over a select. Hardmax adds a third stage
 * that writes the one-hot rows. All of them view the input as
 * [outer, R, inner] around the reduced axis, so the output order is the
 * same with or without keepdims.
 */
#include "lower.h"

#include <math.h>
#include <string.h>

static Expr *const_of(Lower *L, DType dt, double v)
{
    if (dtype_is_float(dt))
        return ex_float(L, dt, v);
    return ex_const_int(L, dtype_compute(dt), dtype_float_to_int(dtype_compute(dt), v));
}

static DType in_type(Lower *L, const Node *n, int i)
{
    return L->g->values[n->in[i]].dtype;
}

static Expr *load_in(Lower *L, const Node *n, int i, const Compute *c)
{
    const Value *v = &L->g->values[n->in[i]];
    return ex_load_broadcast(L, lower_buf_value(L, n->in[i]), v->rank, v->dims, c);
}

int lower_IsInf(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *x = load_in(L, n, 0, c);
    DType t = in_type(L, n, 0);
    int neg = node_scalar(n)->detect_negative, pos = node_scalar(n)->detect_positive;
    if (neg && pos)
        c->body = ex_unary(L, UN_ISINF, x);
    else if (neg || pos)
        c->body = ex_binary(L, BIN_EQ, x, ex_float(L, t, pos ? HUGE_VAL : -HUGE_VAL));
    else
        c->body = ex_const_int(L, DT_BOOL, 0);
    return 0;
}

/* x < -lambd: x + bias; x > lambd: x - bias; else 0. An integer x is
 * compared and shifted in double and the result converted back (with the
 * runtime's saturating rule), as the reference computes x + bias in float
 * and then casts: int32 5 with bias 1.5 gives trunc(3.5) = 3, not 5 - 1. */
int lower_Shrink(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *x = load_in(L, n, 0, c);
    DType t = in_type(L, n, 0), ct = dtype_is_float(t) ? t : DT_FLOAT64;
    double lambd = node_scalar(n)->lambd, bias = node_scalar(n)->bias;
    Expr *lo, *hi, *y;
    x = ex_cast(L, ct, x);
    lo = ex_binary(L, BIN_LT, x, ex_float(L, ct, -lambd));
    hi = ex_binary(L, BIN_GT, x, ex_float(L, ct, lambd));
    if (dtype_is_unsigned_int(t))
        lo = ex_const_int(L, DT_BOOL, 0); /* x < -lambd never holds (lambd >= 0) */
    y = ex_select(L, lo, ex_add(L, x, ex_float(L, ct, bias)),
                  ex_select(L, hi, ex_sub(L, x, ex_float(L, ct, bias)), ex_float(L, ct, 0)));
    c->body = ex_cast(L, t, y);
    return 0;
}

int lower_ThresholdedRelu(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *x = load_in(L, n, 0, c);
    DType t = in_type(L, n, 0);
    double alpha = node_scalar(n)->alpha;
    c->body = ex_select(L, ex_binary(L, BIN_GT, x, const_of(L, t, alpha)), x, const_of(L, t, 0));
    return 0;
}

/* max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) */
int lower_Celu(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *x = load_in(L, n, 0, c);
    DType t = in_type(L, n, 0);
    double alpha = node_scalar(n)->alpha;
    Expr *e = ex_unary(L, UN_EXP, ex_binary(L, BIN_DIV, x, const_of(L, t, alpha)));
    Expr *neg = ex_mul(L, const_of(L, t, alpha), ex_sub(L, e, const_of(L, t, 1)));
    c->body = ex_add(L, ex_binary(L, BIN_MAX, x, const_of(L, t, 0)),
                     ex_binary(L, BIN_MIN, neg, const_of(L, t, 0)));
    return 0;
}

int lower_CastLike(Lower *L, Node *n)
{
    return lower_Cast(L, n);
}

/* Integer Mod takes the sign of the divisor (Python's %) unless fmod=1,
 * which truncates like C. A zero divisor gives 0 instead of undefined
 * behaviour, and so does -1 (INT_MIN % -1 traps on some machines). */
int lower_Mod(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *a = load_in(L, n, 0, c), *b = load_in(L, n, 1, c), *r, *zero;
    DType t = in_type(L, n, 0);
    int fm = node_scalar(n)->fmod;
    zero = const_of(L, t, 0);
    if (dtype_is_float(t)) {
        r = ex_binary(L, BIN_MOD, a, b);
        if (!fm) {
            Expr *fix = ex_and(L, ex_binary(L, BIN_NE, r, zero),
                               ex_binary(L, BIN_NE, ex_lt(L, r, zero), ex_lt(L, b, zero)));
            r = ex_select(L, fix, ex_add(L, r, b), r);
        }
        c->body = r;
        return 0;
    }
    if (dtype_is_unsigned_int(t)) {
        Expr *bz = ex_binary(L, BIN_EQ, b, zero);
        r = ex_binary(L, BIN_MOD, a, ex_select(L, bz, const_of(L, t, 1), b));
        c->body = r;
        return 0;
    }
    {
        Expr *bad = ex_binary(L, BIN_OR, ex_binary(L, BIN_EQ, b, zero),
                              ex_binary(L, BIN_EQ, b, const_of(L, t, -1)));
        Expr *bs = ex_select(L, bad, const_of(L, t, 1), b);
        r = ex_binary(L, BIN_MOD, a, bs);
        if (!fm) {
            Expr *fix = ex_and(L, ex_binary(L, BIN_NE, r, zero),
                               ex_binary(L, BIN_NE, ex_lt(L, r, zero), ex_lt(L, bs, zero)));
            r = ex_select(L, fix, ex_add(L, r, bs), r);
        }
        c->body = r;
    }
    return 0;
}

int lower_BitShift(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *a = load_in(L, n, 0, c), *b = load_in(L, n, 1, c);
    int left = node_scalar(n)->left;
    c->body = ex_binary(L, left ? BIN_SHL : BIN_SHR, a, b);
    return 0;
}

/* [outer, R, inner] view of x around `axis`. */
static void view3(const Value *x, int axis, int64_t *v3)
{
    int i;
    v3[0] = v3[1] = v3[2] = 1;
    for (i = 0; i < x->rank; i++)
        v3[i < axis ? 0 : i == axis ? 1 : 2] *= x->dims[i];
}

/* Stages writing, into buffer ib (int64, [outer, inner]), the first or last
 * index along R of the max (or min) of x; returns the temp holding the
 * extreme values. */
static void arg_stages(Lower *L, int xb, const int64_t *v3, DType xt, int is_max, int last,
                       int ib)
{
    DType ct = dtype_compute(xt);
    int64_t d2[2];
    int mb;
    Compute *c;
    Expr *xi[3], *oi[2], *hit;
    d2[0] = v3[0];
    d2[1] = v3[2];
    mb = lower_buf_temp(L, "ext", ct, v3[0] * v3[2]);
    c = lower_stage(L, is_max ? "max" : "min", mb, 2, d2);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, lower_raxis(L, c, v3[1]));
    xi[2] = ex_var(L, &c->axes[1]);
    c->rop = is_max ? RED_MAX : RED_MIN;
    c->body = ex_load_nd(L, xb, 3, v3, xi);

    c = lower_stage(L, "argindex", ib, 2, d2);
    xi[0] = oi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, lower_raxis(L, c, v3[1]));
    xi[2] = oi[1] = ex_var(L, &c->axes[1]);
    hit = ex_binary(L, BIN_EQ, ex_load_nd(L, xb, 3, v3, xi), ex_load_nd(L, mb, 2, d2, oi));
    c->rop = last ? RED_MAX : RED_MIN;
    /* with NaN nothing compares equal: fall back to index 0 */
    c->body = ex_select(L, hit, xi[1], ex_int(L, last ? 0 : v3[1] - 1));
}

static int lower_arg(Lower *L, Node *n, int is_max)
{
    const Value *x = &L->g->values[n->in[0]];
    int64_t v3[3];
    int last = node_axis(n)->select_last_index;
    view3(x, node_axis(n)->axis, v3);
    arg_stages(L, lower_buf_value(L, n->in[0]), v3, x->dtype, is_max, last,
               lower_buf_value(L, n->out[0]));
    return 0;
}

int lower_ArgMax(Lower *L, Node *n) { return lower_arg(L, n, 1); }
int lower_ArgMin(Lower *L, Node *n) { return lower_arg(L, n, 0); }

/* 1 at the first maximum along the axis (before opset 13: of the rows of
 * the input coerced to 2-D at axis), 0 elsewhere. */
int lower_Hardmax(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int64_t v3[3], d2[2];
    int ib, i;
    Compute *c;
    Expr *xi[3], *oi[2];
    view3(x, node_axis(n)->axis, v3);
    if (n->opset < 13) {
        v3[1] *= v3[2];
        v3[2] = 1;
    }
    d2[0] = v3[0];
    d2[1] = v3[2];
    ib = lower_buf_temp(L, "argmax", DT_INT64, v3[0] * v3[2]);
    arg_stages(L, lower_buf_value(L, n->in[0]), v3, x->dtype, 1, 0, ib);
    c = lower_stage(L, "hardmax", lower_buf_value(L, n->out[0]), 3, v3);
    for (i = 0; i < 3; i++)
        xi[i] = ex_var(L, &c->axes[i]);
    oi[0] = xi[0];
    oi[1] = xi[2];
    c->body = ex_select(L, ex_binary(L, BIN_EQ, xi[1], ex_load_nd(L, ib, 2, d2, oi)),
                        const_of(L, x->dtype, 1), const_of(L, x->dtype, 0));
    return 0;
}

/* Keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower). */
int lower_Trilu(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    int upper = node_scalar(n)->upper;
    Expr *k = ex_int(L, 0), *diff, *keep;
    if (n->n_in > 1 && n->in[1] >= 0) {
        const int64_t *kv;
        if (value_const_ints(L->g, n->in[1], &kv) == 1)
            k = ex_int(L, kv[0]);
        else
            k = ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, n->in[1]), ex_int(L, 0)));
    }
    diff = ex_sub(L, ex_var(L, &c->axes[x->rank - 1]), ex_var(L, &c->axes[x->rank - 2]));
    keep = ex_binary(L, upper ? BIN_GE : BIN_LE, diff, k);
    c->body = ex_select(L, keep, load_in(L, n, 0, c), const_of(L, x->dtype, 0));
    return 0;
}

int lower_EyeLike(Lower *L, Node *n)
{
    const Value *y = &L->g->values[n->out[0]];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    int64_t k = node_scalar(n)->k;
    Expr *on = ex_binary(L, BIN_EQ, ex_sub(L, ex_var(L, &c->axes[1]), ex_var(L, &c->axes[0])),
                         ex_int(L, k));
    if (y->dtype == DT_BOOL)
        c->body = on;
    else
        c->body = ex_select(L, on, const_of(L, y->dtype, 1), const_of(L, y->dtype, 0));
    return 0;
}

/* Window generators: w[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N),
 * N = size when periodic, size - 1 when symmetric; computed in double. */
static int window(Lower *L, Node *n, double a0, double a1, double a2)
{
    const Value *y = &L->g->values[n->out[0]];
    int periodic = node_scalar(n)->periodic;
    int64_t size = y->dims[0], N = periodic ? size : size - 1;
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    double step = 2.0 * 3.14159265358979323846 / (double)(N > 0 ? N : 1);
    Expr *t = ex_mul(L, ex_cast(L, DT_FLOAT64, ex_var(L, &c->axes[0])),
                     ex_float(L, DT_FLOAT64, step));
    Expr *w = ex_sub(L, ex_float(L, DT_FLOAT64, a0),
                     ex_mul(L, ex_float(L, DT_FLOAT64, a1), ex_unary(L, UN_COS, t)));
    if (a2 != 0.0)
        w = ex_add(L, w, ex_mul(L, ex_float(L, DT_FLOAT64, a2),
                                ex_unary(L, UN_COS, ex_mul(L, t, ex_float(L, DT_FLOAT64, 2.0)))));
    c->body = ex_cast(L, y->dtype, w);
    return 0;
}

int lower_HannWindow(Lower *L, Node *n) { return window(L, n, 0.5, 0.5, 0.0); }
int lower_HammingWindow(Lower *L, Node *n) { return window(L, n, 25.0 / 46.0, 21.0 / 46.0, 0.0); }
int lower_BlackmanWindow(Lower *L, Node *n) { return window(L, n, 0.42, 0.5, 0.08); }
