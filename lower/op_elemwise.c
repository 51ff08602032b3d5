/*
 * Lowering of the elementwise operators to one Compute stage each: the
 * output's axes, and a body that loads every input broadcast numpy-style to
 * those axes (ex_load_broadcast) and combines them. The maths follows the
 * ONNX reference implementation (numpy): integer Div truncates toward zero
 * like C (numpy's true division then a cast back), Pow with an integer base
 * is computed in double and converted back, Cast to bool is x != 0.
 *
 * Loads yield the compute type (float16/bfloat16 as float32) and the store
 * converts to the storage type, so each body is written once for all types.
 * Integer division by zero would be undefined behaviour in C: the divisor is
 * replaced by 1 there (the reference has no meaningful result either).
 *
 * The operators that are a single ex_unary or ex_binary of their inputs
 * are rows OP_UNARY(Name, UN_X) / OP_BINARY(Name, BIN_X) of ir/ops.h and
 * share lower_unary_row() / lower_binary_row(), which read the op there.
 */
#include "lower.h"

#include <string.h>

/* A constant of value v in the compute type of dt. */
static Expr *const_of(Lower *L, DType dt, double v)
{
    if (dtype_is_float(dt))
        return ex_float(L, dt, v);
    return ex_const_int(L, dtype_compute(dt), dtype_float_to_int(dtype_compute(dt), v));
}

/* Input i of n loaded at the stage's output position (broadcast). */
static Expr *load_in(Lower *L, Node *n, int i, const Compute *c)
{
    const Value *v = &L->g->values[n->in[i]];
    return ex_load_broadcast(L, lower_buf_value(L, n->in[i]), v->rank, v->dims, c);
}

/* A scalar input loaded at offset 0 (Clip bounds, fill values). */
static Expr *load_scalar(Lower *L, int32_t vi)
{
    return ex_load(L, lower_buf_value(L, vi), ex_int(L, 0));
}

static DType in_type(Lower *L, Node *n, int i)
{
    return L->g->values[n->in[i]].dtype;
}

/* Stage over output 0 with x = input 0 loaded; returns the stage. */
static Compute *unary(Lower *L, Node *n, Expr **x)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    *x = load_in(L, n, 0, c);
    return c;
}

/* The UnaryOp or BinaryOp column of n's OP_UNARY / OP_BINARY row. */
static int row_op(OpKind op, int binary)
{
    switch (op) {
#define OP(name, mi, ma, mo, mao, cat)
#define OP_NOT_LOWERED(name, mi, ma, mo, mao, cat)
#define OP_UNARY(name, un) case OP_##name: if (!binary) return (int)(un); break;
#define OP_BINARY(name, bin) case OP_##name: if (binary) return (int)(bin); break;
#include "../ir/ops.h"
#undef OP_BINARY
#undef OP_UNARY
#undef OP_NOT_LOWERED
#undef OP
    default:
        break;
    }
    die("%s has no %s row in ir/ops.h", op_info[op].name, binary ? "OP_BINARY" : "OP_UNARY");
    return 0;
}

int lower_unary_row(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    c->body = ex_unary(L, (UnaryOp)row_op(n->op, 0), x);
    return 0;
}

int lower_Abs(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    c->body = dtype_is_unsigned_int(in_type(L, n, 0)) ? x : ex_unary(L, UN_ABS, x);
    return 0;
}

int lower_Sign(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    if (dtype_is_unsigned_int(t)) /* 0 or 1: avoids a tautological x < 0 */
        c->body = ex_select(L, ex_binary(L, BIN_GT, x, const_of(L, t, 0)), const_of(L, t, 1),
                            const_of(L, t, 0));
    else
        c->body = ex_unary(L, UN_SIGN, x);
    return 0;
}

/* Erf is also defined for integer tensors: computed in double. */
int lower_Erf(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    if (dtype_is_float(t))
        c->body = ex_unary(L, UN_ERF, x);
    else
        c->body = ex_cast(L, t, ex_unary(L, UN_ERF, ex_cast(L, DT_FLOAT64, x)));
    return 0;
}

int lower_Relu(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    c->body = ex_binary(L, BIN_MAX, x, const_of(L, in_type(L, n, 0), 0));
    return 0;
}

int lower_LeakyRelu(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    double alpha = node_scalar(n)->alpha;
    c->body = ex_select(L, ex_binary(L, BIN_LT, x, const_of(L, t, 0)),
                        ex_mul(L, x, const_of(L, t, alpha)), x);
    return 0;
}

/* max(0, min(1, alpha * x + beta)) */
static Expr *hard_sigmoid(Lower *L, DType t, Expr *x, double alpha, double beta)
{
    Expr *y = ex_add(L, ex_mul(L, x, const_of(L, t, alpha)), const_of(L, t, beta));
    y = ex_binary(L, BIN_MIN, y, const_of(L, t, 1));
    return ex_binary(L, BIN_MAX, y, const_of(L, t, 0));
}

int lower_HardSigmoid(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    c->body = hard_sigmoid(L, in_type(L, n, 0), x, node_scalar(n)->alpha, node_scalar(n)->beta);
    return 0;
}

int lower_HardSwish(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    c->body = ex_mul(L, x, hard_sigmoid(L, in_type(L, n, 0), x, 1.0 / 6.0, 0.5));
    return 0;
}

int lower_Elu(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    double alpha = node_scalar(n)->alpha;
    Expr *neg = ex_mul(L, const_of(L, t, alpha),
                       ex_sub(L, ex_unary(L, UN_EXP, x), const_of(L, t, 1)));
    c->body = ex_select(L, ex_binary(L, BIN_LT, x, const_of(L, t, 0)), neg, x);
    return 0;
}

int lower_Selu(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    double alpha = node_scalar(n)->alpha, gamma = node_scalar(n)->gamma;
    Expr *neg = ex_sub(L, ex_mul(L, const_of(L, t, alpha), ex_unary(L, UN_EXP, x)),
                       const_of(L, t, alpha));
    Expr *v = ex_select(L, ex_binary(L, BIN_LE, x, const_of(L, t, 0)), neg, x);
    c->body = ex_mul(L, v, const_of(L, t, gamma));
    return 0;
}

int lower_Softplus(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    c->body = ex_unary(L, UN_LOG, ex_add(L, ex_unary(L, UN_EXP, x), const_of(L, t, 1)));
    return 0;
}

int lower_Softsign(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    c->body = ex_binary(L, BIN_DIV, x, ex_add(L, const_of(L, t, 1), ex_unary(L, UN_ABS, x)));
    return 0;
}

/* Clip: bounds from attributes (opset < 11) or optional scalar inputs.
 * min(max(x, lo), hi) also gives the ONNX answer hi when lo > hi. */
int lower_Clip(Lower *L, Node *n)
{
    Expr *x, *lo = NULL, *hi = NULL;
    Compute *c = unary(L, n, &x);
    DType t = in_type(L, n, 0);
    if (n->opset < 11) {
        const ScalarParams *p = node_scalar(n);
        if (p->has_min)
            lo = const_of(L, t, p->min);
        if (p->has_max)
            hi = const_of(L, t, p->max);
    } else {
        if (n->n_in > 1 && n->in[1] >= 0)
            lo = load_scalar(L, n->in[1]);
        if (n->n_in > 2 && n->in[2] >= 0)
            hi = load_scalar(L, n->in[2]);
    }
    if (lo)
        x = ex_binary(L, BIN_MAX, x, lo);
    if (hi)
        x = ex_binary(L, BIN_MIN, x, hi);
    c->body = x;
    return 0;
}

/* 1 for the float8 formats whose conversion Cast's `saturate` selects. */
static int f8_saturable(DType t)
{
    return t == DT_FLOAT8E4M3FN || t == DT_FLOAT8E4M3FNUZ || t == DT_FLOAT8E5M2 ||
           t == DT_FLOAT8E5M2FNUZ;
}

Expr *lower_f8_saturate(Lower *L, Expr *v, DType to)
{
    double m = dtype_f8_max(to);
    Expr *hi = ex_float(L, v->dtype, m), *lo = ex_float(L, v->dtype, -m);
    /* NaN fails both comparisons and stays NaN */
    v = ex_select(L, ex_binary(L, BIN_GT, v, hi), hi, v);
    return ex_select(L, ex_binary(L, BIN_LT, v, lo), lo, v);
}

/* Cast to a float8 type stores with the non-saturating conversion (round to
 * nearest even, overflow to infinity or NaN: saturate=0); the default
 * saturate=1 (opset 19+) clamps to the largest finite value first, which
 * gives the same rounding below it and the saturated value above. */
int lower_Cast(Lower *L, Node *n)
{
    Expr *x;
    Compute *c;
    DType from = in_type(L, n, 0), to = L->g->values[n->out[0]].dtype;
    if (from == DT_STRING || to == DT_STRING)
        return lower_string_cast(L, n);
    c = unary(L, n, &x);
    if (to == DT_BOOL && from != DT_BOOL) {
        c->body = ex_binary(L, BIN_NE, x, const_of(L, from, 0));
    } else {
        const Attr *sat = node_attr(n, "saturate"), *rm = node_attr(n, "round_mode");
        int saturate = !sat || sat->i != 0;
        c->body = ex_cast(L, to, x);
        if (f8_saturable(to) && from != to && saturate)
            c->body = lower_f8_saturate(L, c->body, to);
        if (to == DT_FLOAT8E8M0 && from != to) {
            /* the store rounds up and saturates; the other modes compute
             * the e8m0 value first, which the store keeps */
            const char *mode = rm && rm->s ? rm->s : "up";
            int op = !strcmp(mode, "down") ? UN_E8M0_DOWN :
                     !strcmp(mode, "nearest") ? (saturate ? UN_E8M0_NEAREST : UN_E8M0_NEAREST_NOSAT) :
                     saturate ? -1 : UN_E8M0_UP_NOSAT;
            if (op >= 0)
                c->body = ex_unary(L, (UnaryOp)op, ex_cast(L, DT_FLOAT32, c->body));
        }
    }
    return 0;
}

int lower_Identity(Lower *L, Node *n)
{
    Expr *x;
    Compute *c = unary(L, n, &x);
    c->body = x;
    return 0;
}

/* Dropout's random draw in training mode: u in [0, 1), the top 24 bits of
 * a 32-bit integer hash (xorshift-multiply rounds) of the element's
 * row-major index mixed with the seed attribute. Each round is a stage
 * into a uint32 scratch buffer, so that the printed expressions stay
 * linear (the loop IR has no let). The draw is deterministic: the same
 * mask on every call, not the stream of numpy or onnxruntime. Returns the
 * buffer holding the last round; dropout_keep() finishes the hash. */
static int dropout_hash(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int64_t numel = value_numel(x);
    uint32_t s = (uint32_t)node_scalar(n)->seed * 0x9e3779b9u;
    static const int64_t mult[2] = { 0x7feb352d, 0x846ca68b };
    int i, r, buf = -1;
    for (r = 0; r < 2; r++) {
        int ob = lower_buf_temp(L, r ? "hash2" : "hash1", DT_UINT32, numel);
        Compute *c = lower_stage(L, r ? "hash2" : "hash1", ob, x->rank, x->dims);
        Expr *h;
        if (!r) {
            Expr *idx = ex_int(L, 0);
            for (i = 0; i < x->rank; i++)
                idx = ex_add(L, ex_mul(L, idx, ex_int(L, x->dims[i])), ex_var(L, &c->axes[i]));
            h = ex_binary(L, BIN_BITXOR, ex_cast(L, DT_UINT32, idx),
                          ex_const_int(L, DT_UINT32, s));
        } else {
            h = ex_load_broadcast(L, buf, x->rank, x->dims, c);
        }
        h = ex_binary(L, BIN_BITXOR, h, ex_binary(L, BIN_SHR, h, ex_const_int(L, DT_UINT32, 16)));
        c->body = ex_mul(L, h, ex_const_int(L, DT_UINT32, mult[r]));
        buf = ob;
    }
    return buf;
}

/* keep = !train || u >= ratio at stage c's position (hb: dropout_hash). */
static Expr *dropout_keep(Lower *L, Node *n, Compute *c, int hb, Expr *train, Expr *ratio)
{
    const Value *x = &L->g->values[n->in[0]];
    Expr *h = ex_load_broadcast(L, hb, x->rank, x->dims, c), *u;
    h = ex_binary(L, BIN_BITXOR, h, ex_binary(L, BIN_SHR, h, ex_const_int(L, DT_UINT32, 16)));
    u = ex_mul(L, ex_cast(L, DT_FLOAT64, ex_binary(L, BIN_SHR, h, ex_const_int(L, DT_UINT32, 8))),
               ex_float(L, DT_FLOAT64, 1.0 / 16777216.0));
    return ex_binary(L, BIN_OR, ex_unary(L, UN_NOT, train),
                     ex_binary(L, BIN_GE, u, ex_cast(L, DT_FLOAT64, ratio)));
}

/* Inference: y = x, mask all true. Training (ScalarParams.training): y =
 * keep ? x / (1 - ratio) : 0, mask = keep (dropout_keep). */
int lower_Dropout(Lower *L, Node *n)
{
    Expr *x, *train, *ratio, *keep = NULL, *scale;
    int hb = node_scalar(n)->training ? dropout_hash(L, n) : -1;
    Compute *c = unary(L, n, &x);
    DType ct = x->dtype;
    int k;
    c->body = x;
    for (k = 0; k < n->n_out && k < 2; k++) {
        if (k && n->out[1] < 0)
            break;
        if (k)
            c = lower_elemwise_stage(L, n, n->out[1]);
        if (!node_scalar(n)->training) {
            c->body = k ? ex_const_int(L, DT_BOOL, 1) : x;
            continue;
        }
        train = ex_load(L, lower_buf_value(L, n->in[2]), ex_int(L, 0));
        ratio = n->in[1] >= 0 ? ex_cast(L, ct, ex_load(L, lower_buf_value(L, n->in[1]),
                                                       ex_int(L, 0)))
                              : ex_float(L, ct, 0.5);
        keep = dropout_keep(L, n, c, hb, train, ratio);
        if (k) {
            c->body = keep;
            break;
        }
        scale = ex_select(L, train,
                          ex_binary(L, BIN_DIV, ex_float(L, ct, 1.0),
                                    ex_binary(L, BIN_SUB, ex_float(L, ct, 1.0), ratio)),
                          ex_float(L, ct, 1.0));
        c->body = ex_select(L, keep, ex_mul(L, x, scale), ex_float(L, ct, 0.0));
    }
    return 0;
}

/* Stage over output 0 with a and b = inputs 0 and 1 loaded. */
static Compute *binary(Lower *L, Node *n, Expr **a, Expr **b)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    *a = load_in(L, n, 0, c);
    *b = load_in(L, n, 1, c);
    return c;
}

int lower_binary_row(Lower *L, Node *n)
{
    Expr *a, *b;
    Compute *c;
    if (n->op == OP_Equal && in_type(L, n, 0) == DT_STRING)
        return lower_string_equal(L, n);
    c = binary(L, n, &a, &b);
    c->body = ex_binary(L, (BinaryOp)row_op(n->op, 1), a, b);
    return 0;
}

int lower_Div(Lower *L, Node *n)
{
    Expr *a, *b;
    Compute *c = binary(L, n, &a, &b);
    DType t = in_type(L, n, 0);
    if (!dtype_is_float(t)) {
        Expr *zero = ex_binary(L, BIN_EQ, b, const_of(L, t, 0));
        b = ex_select(L, zero, const_of(L, t, 1), b);
    }
    c->body = ex_binary(L, BIN_DIV, a, b);
    return 0;
}

/* Pow(T base, T1 exponent) -> T. Float bases use pow in their own type;
 * integer bases go through double, which is exact for the results that fit
 * in 53 bits (all the reference tests). */
int lower_Pow(Lower *L, Node *n)
{
    Expr *a, *b;
    Compute *c = binary(L, n, &a, &b);
    DType t = in_type(L, n, 0);
    if (dtype_is_float(t))
        c->body = ex_binary(L, BIN_POW, a, ex_cast(L, a->dtype, b));
    else
        c->body = ex_cast(L, t, ex_binary(L, BIN_POW, ex_cast(L, DT_FLOAT64, a),
                                          ex_cast(L, DT_FLOAT64, b)));
    return 0;
}

/* Before opset 7 a 1-D slope of length C applies along the channel axis
 * (inference accepted it on that ground). */
int lower_PRelu(Lower *L, Node *n)
{
    Expr *x, *s;
    Compute *c = binary(L, n, &x, &s);
    DType t = in_type(L, n, 0);
    const Value *xv = &L->g->values[n->in[0]], *sv = &L->g->values[n->in[1]];
    if (n->opset < 7 && sv->rank == 1 && xv->rank >= 2 && sv->dims[0] == xv->dims[1])
        s = ex_load(L, lower_buf_value(L, n->in[1]),
                    sv->dims[0] == 1 ? ex_int(L, 0) : ex_var(L, &c->axes[1]));
    c->body = ex_select(L, ex_binary(L, BIN_LT, x, const_of(L, t, 0)), ex_mul(L, x, s), x);
    return 0;
}

int lower_Where(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = ex_select(L, load_in(L, n, 0, c), load_in(L, n, 1, c), load_in(L, n, 2, c));
    return 0;
}

/* Min/Max/Sum/Mean: a left fold over the inputs. */
static Expr *fold_inputs(Lower *L, Node *n, BinaryOp op, const Compute *c)
{
    Expr *acc = load_in(L, n, 0, c);
    int i;
    for (i = 1; i < n->n_in; i++)
        if (n->in[i] >= 0)
            acc = ex_binary(L, op, acc, load_in(L, n, i, c));
    return acc;
}

int lower_Min(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = fold_inputs(L, n, BIN_MIN, c);
    return 0;
}

int lower_Max(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = fold_inputs(L, n, BIN_MAX, c);
    return 0;
}

int lower_Sum(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = fold_inputs(L, n, BIN_ADD, c);
    return 0;
}

int lower_Mean(Lower *L, Node *n)
{
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    int i, count = 0;
    for (i = 0; i < n->n_in; i++)
        count += n->in[i] >= 0;
    c->body = ex_binary(L, BIN_DIV, fold_inputs(L, n, BIN_ADD, c),
                        const_of(L, in_type(L, n, 0), count));
    return 0;
}
