/*
 * An interpreter for the loop IR. Constant folding runs the very kernel the
 * emitter would print, on constant inputs, so every operator has exactly one
 * implementation of its maths. Values are carried as double (float types,
 * rounded to float after every float32 operation, as C does with
 * FLT_EVAL_METHOD 0) or as int64 (integer types, wrapped to their width).
 * Only folding uses it: speed is not a goal, but it never recurses deeper
 * than the expression tree.
 */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Val {
    double f;
    int64_t i;
} Val;

typedef struct Ev {
    const Kernel *k;
    void **bufs;
    int64_t *vars;
    int err;
} Ev;

/* Wrap an integer to the width and signedness of t. */
static int64_t wrap(DType t, int64_t v)
{
    switch (t) {
    case DT_INT8: return (int8_t)v;
    case DT_UINT8: return (uint8_t)v;
    case DT_INT16: return (int16_t)v;
    case DT_UINT16: return (uint16_t)v;
    case DT_INT32: return (int32_t)v;
    case DT_UINT32: return (uint32_t)v;
    case DT_BOOL: return v != 0;
    default: return v;
    }
}

static Val mkf(DType t, double f)
{
    Val v;
    v.f = t == DT_FLOAT64 ? f : (double)(float)f;
    v.i = 0;
    return v;
}

static Val mki(DType t, int64_t i)
{
    Val v;
    v.i = wrap(t, i);
    v.f = 0;
    return v;
}

static Val load(Ev *ev, int b, int64_t off)
{
    const Buffer *buf = &ev->k->bufs[b];
    const unsigned char *p = ev->bufs[b];
    DType t = buf->dtype;
    if (off < 0 || off >= buf->numel) {
        ev->err = 1;
        return mki(DT_INT64, 0);
    }
    switch (t) {
    case DT_FLOAT32: { float x; memcpy(&x, p + off * 4, 4); return mkf(t, x); }
    case DT_FLOAT64: { double x; memcpy(&x, p + off * 8, 8); return mkf(t, x); }
    case DT_FLOAT16: { uint16_t x; memcpy(&x, p + off * 2, 2); return mkf(DT_FLOAT32, dtype_f16_to_f32(x)); }
    case DT_BFLOAT16: { uint16_t x; memcpy(&x, p + off * 2, 2); return mkf(DT_FLOAT32, dtype_bf16_to_f32(x)); }
    case DT_INT8: return mki(t, ((const int8_t *)p)[off]);
    case DT_UINT8: case DT_BOOL: return mki(t, p[off]);
    case DT_INT16: { int16_t x; memcpy(&x, p + off * 2, 2); return mki(t, x); }
    case DT_UINT16: { uint16_t x; memcpy(&x, p + off * 2, 2); return mki(t, x); }
    case DT_INT32: { int32_t x; memcpy(&x, p + off * 4, 4); return mki(t, x); }
    case DT_UINT32: { uint32_t x; memcpy(&x, p + off * 4, 4); return mki(t, x); }
    case DT_INT64: case DT_UINT64: { int64_t x; memcpy(&x, p + off * 8, 8); return mki(t, x); }
    case DT_INT4: case DT_INT2: return mki(DT_INT8, dtype_packed_get(t, p, off));
    case DT_UINT4: case DT_UINT2: return mki(DT_UINT8, dtype_packed_get(t, p, off));
    case DT_FLOAT4E2M1: return mkf(DT_FLOAT32, dtype_f8_to_f32(t, (unsigned)dtype_packed_get(t, p, off)));
    case DT_FLOAT8E4M3FN: case DT_FLOAT8E4M3FNUZ: case DT_FLOAT8E5M2: case DT_FLOAT8E5M2FNUZ:
    case DT_FLOAT8E8M0:
        return mkf(DT_FLOAT32, dtype_f8_to_f32(t, p[off]));
    default: ev->err = 1; return mki(DT_INT64, 0);
    }
}

static void store(Ev *ev, int b, int64_t off, Val v)
{
    const Buffer *buf = &ev->k->bufs[b];
    unsigned char *p = ev->bufs[b];
    DType t = buf->dtype;
    if (off < 0 || off >= buf->numel) {
        ev->err = 1;
        return;
    }
    switch (t) {
    case DT_FLOAT32: { float x = (float)v.f; memcpy(p + off * 4, &x, 4); break; }
    case DT_FLOAT64: memcpy(p + off * 8, &v.f, 8); break;
    case DT_FLOAT16: { uint16_t x = dtype_f32_to_f16((float)v.f); memcpy(p + off * 2, &x, 2); break; }
    case DT_BFLOAT16: { uint16_t x = dtype_f32_to_bf16((float)v.f); memcpy(p + off * 2, &x, 2); break; }
    case DT_INT8: case DT_UINT8: case DT_BOOL: p[off] = (unsigned char)v.i; break;
    case DT_INT16: case DT_UINT16: { uint16_t x = (uint16_t)v.i; memcpy(p + off * 2, &x, 2); break; }
    case DT_INT32: case DT_UINT32: { uint32_t x = (uint32_t)v.i; memcpy(p + off * 4, &x, 4); break; }
    case DT_INT64: case DT_UINT64: memcpy(p + off * 8, &v.i, 8); break;
    case DT_INT4: case DT_INT2: case DT_UINT4: case DT_UINT2: dtype_packed_set(t, p, off, (int)v.i); break;
    case DT_FLOAT4E2M1: dtype_packed_set(t, p, off, (int)dtype_f32_to_f8(t, (float)v.f)); break;
    case DT_FLOAT8E4M3FN: case DT_FLOAT8E4M3FNUZ: case DT_FLOAT8E5M2: case DT_FLOAT8E5M2FNUZ:
    case DT_FLOAT8E8M0:
        p[off] = (unsigned char)dtype_f32_to_f8(t, (float)v.f);
        break;
    default: ev->err = 1;
    }
}

static double round_half_even(double x)
{
    double r = floor(x + 0.5);
    if (r - x == 0.5 && fmod(r, 2.0) != 0.0)
        r -= 1.0;
    return r;
}

static Val eval(Ev *ev, const Expr *e, Val acc);

static Val eval_unary(Ev *ev, const Expr *e, Val acc)
{
    Val a = eval(ev, e->a, acc);
    DType t = e->a->dtype;
    int fl = dtype_is_float(t);
    double x = a.f;
    switch ((UnaryOp)e->op) {
    case UN_NEG: return fl ? mkf(t, -x) : mki(t, (int64_t)(0 - (uint64_t)a.i));
    case UN_ABS: return fl ? mkf(t, fabs(x)) : mki(t, a.i < 0 ? (int64_t)(0 - (uint64_t)a.i) : a.i);
    case UN_EXP: return mkf(t, exp(x));
    case UN_LOG: return mkf(t, log(x));
    case UN_SQRT: return mkf(t, sqrt(x));
    case UN_TANH: return mkf(t, tanh(x));
    case UN_SIGMOID: return mkf(t, 1.0 / (1.0 + exp(-x)));
    case UN_ERF: return mkf(t, erf(x));
    case UN_FLOOR: return mkf(t, floor(x));
    case UN_CEIL: return mkf(t, ceil(x));
    case UN_ROUND: return mkf(t, round_half_even(x));
    case UN_SIN: return mkf(t, sin(x));
    case UN_COS: return mkf(t, cos(x));
    case UN_TAN: return mkf(t, tan(x));
    case UN_ASIN: return mkf(t, asin(x));
    case UN_ACOS: return mkf(t, acos(x));
    case UN_ATAN: return mkf(t, atan(x));
    case UN_SINH: return mkf(t, sinh(x));
    case UN_COSH: return mkf(t, cosh(x));
    case UN_ASINH: return mkf(t, asinh(x));
    case UN_ACOSH: return mkf(t, acosh(x));
    case UN_ATANH: return mkf(t, atanh(x));
    case UN_NOT: return mki(DT_BOOL, fl ? x == 0 : a.i == 0);
    case UN_BITNOT: return mki(t, ~a.i);
    case UN_ISNAN: return mki(DT_BOOL, fl && isnan(x));
    case UN_ISINF: return mki(DT_BOOL, fl && isinf(x));
    case UN_SIGN: return fl ? mkf(t, x > 0 ? 1.0 : x < 0 ? -1.0 : x) : mki(t, a.i > 0 ? 1 : a.i < 0 ? -1 : 0);
    case UN_RECIP: return mkf(t, 1.0 / x);
    case UN_LOG1P: return mkf(t, log1p(x));
    case UN_EXPM1: return mkf(t, expm1(x));
    case UN_E8M0_DOWN: case UN_E8M0_NEAREST: case UN_E8M0_NEAREST_NOSAT: case UN_E8M0_UP_NOSAT:
        return mkf(DT_FLOAT32, dtype_e8m0_round((float)x, e->op - UN_E8M0_DOWN));
    }
    unreachable();
}

static int is_unsigned(DType t)
{
    return dtype_is_unsigned_int(t);
}

static Val eval_binary(Ev *ev, const Expr *e, Val acc)
{
    Val a = eval(ev, e->a, acc), b = eval(ev, e->b, acc);
    DType t = e->a->dtype;
    int fl = dtype_is_float(t);
    uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
    switch ((BinaryOp)e->op) {
    case BIN_ADD: return fl ? mkf(t, a.f + b.f) : mki(t, (int64_t)(ua + ub));
    case BIN_SUB: return fl ? mkf(t, a.f - b.f) : mki(t, (int64_t)(ua - ub));
    case BIN_MUL: return fl ? mkf(t, a.f * b.f) : mki(t, (int64_t)(ua * ub));
    case BIN_DIV:
        if (fl)
            return mkf(t, a.f / b.f);
        if (b.i == 0) return mki(t, 0);
        if (t == DT_UINT64) return mki(t, (int64_t)(ua / ub));
        if (b.i == -1) return mki(t, (int64_t)(0 - ua));
        return mki(t, a.i / b.i);
    case BIN_MOD:
        if (fl)
            return mkf(t, fmod(a.f, b.f));
        if (b.i == 0) return mki(t, 0);
        if (t == DT_UINT64) return mki(t, (int64_t)(ua % ub));
        if (b.i == -1) return mki(t, 0);
        return mki(t, a.i % b.i);
    case BIN_FLOORDIV:
        if (b.i == 0) return mki(t, 0);
        if (b.i == -1) return mki(t, (int64_t)(0 - ua));
        {
            int64_t q = a.i / b.i;
            if ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0)))
                q--;
            return mki(t, q);
        }
    case BIN_POW:
        if (fl)
            return mkf(t, pow(a.f, b.f));
        return mki(t, dtype_float_to_int(t, pow(is_unsigned(t) ? (double)ua : (double)a.i,
                                                 is_unsigned(t) ? (double)ub : (double)b.i)));
    case BIN_MIN:
        if (fl) return mkf(t, (isnan(a.f) || isnan(b.f)) ? NAN : a.f < b.f ? a.f : b.f);
        return is_unsigned(t) ? mki(t, ua < ub ? a.i : b.i) : mki(t, a.i < b.i ? a.i : b.i);
    case BIN_MAX:
        if (fl) return mkf(t, (isnan(a.f) || isnan(b.f)) ? NAN : a.f > b.f ? a.f : b.f);
        return is_unsigned(t) ? mki(t, ua > ub ? a.i : b.i) : mki(t, a.i > b.i ? a.i : b.i);
    case BIN_EQ: return mki(DT_BOOL, fl ? a.f == b.f : a.i == b.i);
    case BIN_NE: return mki(DT_BOOL, fl ? a.f != b.f : a.i != b.i);
    case BIN_LT: return mki(DT_BOOL, fl ? a.f < b.f : is_unsigned(t) ? ua < ub : a.i < b.i);
    case BIN_LE: return mki(DT_BOOL, fl ? a.f <= b.f : is_unsigned(t) ? ua <= ub : a.i <= b.i);
    case BIN_GT: return mki(DT_BOOL, fl ? a.f > b.f : is_unsigned(t) ? ua > ub : a.i > b.i);
    case BIN_GE: return mki(DT_BOOL, fl ? a.f >= b.f : is_unsigned(t) ? ua >= ub : a.i >= b.i);
    case BIN_AND: return mki(DT_BOOL, a.i && b.i);
    case BIN_OR: return mki(DT_BOOL, a.i || b.i);
    case BIN_XOR: return mki(DT_BOOL, (a.i != 0) != (b.i != 0));
    case BIN_BITAND: return mki(t, a.i & b.i);
    case BIN_BITOR: return mki(t, a.i | b.i);
    case BIN_BITXOR: return mki(t, a.i ^ b.i);
    case BIN_SHL: return mki(t, ub >= 64 ? 0 : (int64_t)(ua << ub));
    case BIN_SHR: return mki(t, ub >= 64 ? 0 : (int64_t)(ua >> ub));
    }
    unreachable();
}

static Val cast(DType from, DType to, Val v)
{
    int ff = dtype_is_float(from), tf = dtype_is_float(to);
    if (to == DT_BOOL)
        return mki(to, ff ? v.f != 0 : v.i != 0);
    if (ff && tf)
        return mkf(to, v.f);
    if (!ff && tf)
        return mkf(to, from == DT_UINT64 ? (double)(uint64_t)v.i : (double)v.i);
    if (ff && !tf) /* NaN and out-of-range values as the emitted code converts them */
        return mki(to, dtype_float_to_int(to, v.f));
    return mki(to, v.i);
}

static Val eval(Ev *ev, const Expr *e, Val acc)
{
    switch (e->kind) {
    case EX_INT: return mki(e->dtype, e->ival);
    case EX_FLOAT: return mkf(e->dtype, e->fval);
    case EX_VAR: return mki(DT_INT64, ev->vars[e->var]);
    case EX_ACC: return acc;
    case EX_LOAD: {
        Val off = eval(ev, e->a, acc);
        return load(ev, e->buf, off.i);
    }
    case EX_UNARY: return eval_unary(ev, e, acc);
    case EX_BINARY: return eval_binary(ev, e, acc);
    case EX_SELECT: {
        Val c = eval(ev, e->a, acc);
        return c.i ? eval(ev, e->b, acc) : eval(ev, e->c, acc);
    }
    case EX_CAST: return cast(e->a->dtype, e->dtype, eval(ev, e->a, acc));
    }
    unreachable();
}

static void run(Ev *ev, const Stmt *s)
{
    Val none = {0, 0};
    int i;
    if (!s || ev->err)
        return;
    switch (s->kind) {
    case ST_SEQ:
        for (i = 0; i < s->n_body && !ev->err; i++)
            run(ev, s->body[i]);
        break;
    case ST_FOR: {
        int64_t v;
        for (v = 0; v < s->extent && !ev->err; v++) {
            ev->vars[s->var] = v;
            run(ev, s->body[0]);
        }
        break;
    }
    case ST_STORE: {
        Val off = eval(ev, s->index, none);
        store(ev, s->buf, off.i, eval(ev, s->value, none));
        break;
    }
    case ST_IF:
        if (eval(ev, s->cond, none).i)
            run(ev, s->body[0]);
        else if (s->n_body > 1)
            run(ev, s->body[1]);
        break;
    case ST_DECL: {
        const Buffer *b = &ev->k->bufs[s->buf];
        void *save = ev->bufs[s->buf];
        size_t bytes = (size_t)b->numel * dtype_size(b->dtype);
        ev->bufs[s->buf] = calloc(bytes ? bytes : 1, 1);
        if (!ev->bufs[s->buf])
            die("out of memory in constant folding");
        /* a no_init array is not zeroed in the emitted C: poison it (all
         * ones: NaN floats, -1 integers) so that a kernel that reads one
         * of its elements before writing it gives wrong results here,
         * which the schedule property tests compare with the naive ones */
        if (b->no_init)
            memset(ev->bufs[s->buf], 0xff, bytes);
        run(ev, s->body[0]);
        free(ev->bufs[s->buf]);
        ev->bufs[s->buf] = save;
        break;
    }
    }
}

int lower_eval(const Kernel *k, void **bufs)
{
    Ev ev;
    if (k->ext)
        return 1; /* runtime calls are not interpreted (no constant strings) */
    ev.k = k;
    ev.bufs = bufs;
    ev.err = 0;
    ev.vars = calloc((size_t)(k->n_vars ? k->n_vars : 1), sizeof *ev.vars);
    if (!ev.vars)
        die("out of memory in constant folding");
    run(&ev, k->body);
    free(ev.vars);
    return ev.err;
}
