/*
 * Prints loop-IR expressions as C. Arithmetic follows the IR's types:
 * float32 maths uses the float functions of <math.h> (expf...), float64 the
 * double ones; 16-bit floats are widened on load and narrowed on store by
 * the runtime's conversions. Integer add/sub/mul on tensor data (any
 * expression that loads from a buffer, or has no loop variable at all) goes
 * through the unsigned type of the same width, so overflow wraps instead of
 * being undefined; index arithmetic (loop variables and constants only,
 * bounded by the buffer sizes) stays plain int. Signed division and
 * remainder by a non-constant go through tvmrt_div_i32/i64 and
 * tvmrt_mod_i32/i64 (INT_MIN / -1 wraps), and float to integer conversions
 * through tvmrt_f32_to_i32 and friends (NaN -> 0, saturating), so no input
 * value reaches one of C's undefined cases. Min and max of floats propagate
 * NaN like numpy.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "../lower/loopq.h"

/* The requantization's last steps as lower/tpl_qconv_m4.c m4q_requant
 * writes them on the high word h of an int64 X, a product of two int32 or
 * a sum of products whose bound (lq_mag) is 2^62 at most (|h| <= 2^30):
 *   v = int32(uint32(h + 2^31 + c0) >> k) + d1 + d2 ...
 * With |c0| < 2^30 the uint32 sum does not wrap, so v is
 * floor((h + c0) / 2^k) + 2^(31-k) + d, d the sum of the d's, which is
 * floor((h + c) / 2^k) for c = c0 + (2^(31-k) + d) * 2^k; when |c| < 2^30
 * too, h + c fits in int32 and v is h + c shifted right arithmetically,
 * which SSAT / USAT do in the same instruction (tvmcc_ssat_asr of
 * emit_arm.c). Sets *h, *c, *sh and returns 1 on a match. */
static int requant_asr(const Expr *v, const Expr **h, int64_t *c, int64_t *sh)
{
    const Expr *u, *t, *p;
    int64_t d = 0, c0, kk;
    while (v->kind == EX_BINARY && v->op == BIN_ADD && v->dtype == DT_INT32 && v->b->kind == EX_INT) {
        d += v->b->ival;
        if (d < INT32_MIN || d > INT32_MAX)
            return 0;
        v = v->a;
    }
    if (v->kind != EX_CAST || v->dtype != DT_INT32)
        return 0;
    u = v->a;
    if (u->kind != EX_BINARY || u->op != BIN_SHR || u->dtype != DT_UINT32 || u->b->kind != EX_INT)
        return 0;
    kk = u->b->ival;
    t = u->a;
    if (kk < 1 || kk > 30 || t->kind != EX_BINARY || t->op != BIN_ADD || t->dtype != DT_UINT32 ||
        t->b->kind != EX_INT || t->a->kind != EX_CAST || t->a->a->dtype != DT_INT32)
        return 0;
    c0 = t->b->ival - ((int64_t)1 << 31);
    p = t->a->a; /* h = int32(uint64(X) >> 32), |X| <= 2^62 */
    if (c0 <= -((int64_t)1 << 30) || c0 >= ((int64_t)1 << 30) || p->kind != EX_CAST || p->a->kind != EX_BINARY ||
        p->a->op != BIN_SHR || p->a->b->kind != EX_INT || p->a->b->ival != 32 || p->a->a->kind != EX_CAST ||
        p->a->a->dtype != DT_UINT64 || p->a->a->a->dtype != DT_INT64 || lq_mag(p->a->a->a) > (UINT64_C(1) << 62))
        return 0;
    d += (int64_t)1 << (31 - kk);
    if (d <= -((int64_t)1 << 30) || d >= ((int64_t)1 << 30))
        return 0;
    *c = c0 + d * ((int64_t)1 << kk);
    if (*c <= -((int64_t)1 << 30) || *c >= ((int64_t)1 << 30))
        return 0;
    *h = p;
    *sh = kk;
    return 1;
}

/* min(max(v, lo), hi) on int32 with hi = 2^(b-1) - 1 (lo >= -2^(b-1)) or
 * lo = 0 and hi = 2^b - 1, b 8 or 16, on the Arm DSP targets: SSAT / USAT
 * (tvmcc_ssat8... that emit_arm.c defines; tvmcc_ssat_asr... with the
 * requantization's shift, see requant_asr), a lower bound above the
 * type's with a max. */
static int emit_saturate(Printer *pr, FILE *f, const Kernel *k, const Expr *e)
{
    const Expr *mx = e->a, *v, *h;
    int64_t lo, hi, c, sh;
    int b, asr;
    if (e->op != BIN_MIN || e->dtype != DT_INT32 || e->b->kind != EX_INT || mx->kind != EX_BINARY ||
        mx->op != BIN_MAX || mx->b->kind != EX_INT)
        return 0;
    v = mx->a;
    lo = mx->b->ival;
    hi = e->b->ival;
    asr = requant_asr(v, &h, &c, &sh);
    for (b = 8; b <= 16; b += 8) {
        int tight = lo == -((int64_t)1 << (b - 1)), u = lo == 0 && hi == ((int64_t)1 << b) - 1;
        if (!u && !(hi == ((int64_t)1 << (b - 1)) - 1 && lo >= -((int64_t)1 << (b - 1)) && lo <= hi))
            continue;
        if (!u && !tight)
            fprintf(f, "tvmcc_imax(");
        if (asr) {
            fprintf(f, "tvmcc_%ssat_asr(", u ? "u" : "s");
            emit_expr(pr, f, k, h);
            fprintf(f, " + %lld, %d, %d)", (long long)c, (int)sh, b);
        } else {
            fprintf(f, "tvmcc_%ssat%d(", u ? "u" : "s", b);
            emit_expr(pr, f, k, v);
            fprintf(f, ")");
        }
        if (!u && !tight)
            fprintf(f, ", %lld)", (long long)lo);
        return 1;
    }
    return 0;
}


static int has_var(const Expr *e)
{
    if (!e)
        return 0;
    if (e->kind == EX_VAR)
        return 1;
    return has_var(e->a) || has_var(e->b) || has_var(e->c);
}

static int has_load(const Expr *e)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD)
        return 1;
    return has_load(e->a) || has_load(e->b) || has_load(e->c);
}

/* Index arithmetic: loop variables and constants only. Its values are
 * bounded by the buffer sizes (below 2^31), so it is printed as plain int;
 * everything else on integers is tensor data and may overflow. */
static int is_index_arith(const Expr *e)
{
    return has_var(e) && !has_load(e);
}

/* Prints the start of a conversion of a floating value (of type `from`) to
 * integer type `to`, defined for every value: the caller prints the value
 * and then ")" (two for the types that need an outer cast). Returns the
 * number of closing parentheses. */
static int open_float_to_int(FILE *f, DType from, DType to)
{
    const char *src = from == DT_FLOAT64 ? "f64" : "f32";
    switch (to) {
    case DT_INT32:
        fprintf(f, "tvmrt_%s_to_i32(", src);
        return 1;
    case DT_INT64:
        fprintf(f, "tvmrt_%s_to_i64(", src);
        return 1;
    case DT_UINT64:
        fprintf(f, "tvmrt_%s_to_u64(", src);
        return 1;
    case DT_UINT32:
        fprintf(f, "((uint32_t)tvmrt_%s_to_i64(", src);
        return 2;
    default:
        fprintf(f, "((%s)tvmrt_%s_to_i32(", emit_compute_ctype(to), src);
        return 2;
    }
}

static void close_parens(FILE *f, int n)
{
    while (n-- > 0)
        fputc(')', f);
}

static const char *unsigned_of(DType t)
{
    return dtype_size(t) == 8 ? "uint64_t" : "uint32_t";
}

static void print_float(FILE *f, DType t, double v)
{
    char buf[64];
    const char *sfx = t == DT_FLOAT64 ? "" : "f";
    if (isnan(v)) {
        fprintf(f, t == DT_FLOAT64 ? "((double)NAN)" : "NAN");
        return;
    }
    if (isinf(v)) {
        fprintf(f, "%s%s", v < 0 ? "-" : "", t == DT_FLOAT64 ? "HUGE_VAL" : "HUGE_VALF");
        return;
    }
    snprintf(buf, sizeof buf, t == DT_FLOAT64 ? "%.17g" : "%.9g", v);
    if (!strpbrk(buf, ".e"))
        strcat(buf, ".0");
    if (v < 0)
        fprintf(f, "(%s%s)", buf, sfx);
    else
        fprintf(f, "%s%s", buf, sfx);
}

static void print_int(FILE *f, DType t, int64_t v)
{
    if (t == DT_UINT64) {
        fprintf(f, "UINT64_C(%llu)", (unsigned long long)(uint64_t)v);
    } else if (t == DT_UINT32) {
        fprintf(f, "%lluu", (unsigned long long)(uint32_t)v);
    } else if (v == INT64_MIN) {
        fprintf(f, "INT64_MIN");
    } else if (v > INT32_MAX || v < -INT32_MAX) {
        fprintf(f, "%sINT64_C(%lld)", v < 0 ? "(" : "", (long long)v);
        if (v < 0)
            fprintf(f, ")");
    } else if (v < 0) {
        fprintf(f, "(%lld)", (long long)v);
    } else {
        fprintf(f, "%lld", (long long)v);
    }
}

static const char *fsfx(DType t)
{
    return t == DT_FLOAT64 ? "" : "f";
}

static void unary(Printer *pr, FILE *f, const Kernel *k, const Expr *e)
{
    static const char *const fn[] = {
        [UN_EXP] = "exp", [UN_LOG] = "log", [UN_SQRT] = "sqrt", [UN_TANH] = "tanh",
        [UN_ERF] = "erf", [UN_FLOOR] = "floor", [UN_CEIL] = "ceil", [UN_ROUND] = "nearbyint",
        [UN_SIN] = "sin", [UN_COS] = "cos", [UN_TAN] = "tan", [UN_ASIN] = "asin",
        [UN_ACOS] = "acos", [UN_ATAN] = "atan", [UN_SINH] = "sinh", [UN_COSH] = "cosh",
        [UN_ASINH] = "asinh", [UN_ACOSH] = "acosh", [UN_ATANH] = "atanh", [UN_LOG1P] = "log1p",
        [UN_EXPM1] = "expm1", [UN_ABS] = "fabs"};
    DType t = e->a->dtype;
    int fl = dtype_is_float(t);
    const char *ct = emit_compute_ctype(t);
    switch ((UnaryOp)e->op) {
    case UN_ROUND:
        /* the Cortex-M DSP targets' libm rounds in software (newlib's
         * nearbyintf: ~100 cycles); emit_arm.c defines an exact one */
        if (pr->arm_dsp && t == DT_FLOAT32) {
            fprintf(f, "tvmcc_roundevenf(");
            emit_expr(pr, f, k, e->a);
            fprintf(f, ")");
            return;
        }
        break;
    case UN_NEG:
        if (fl) {
            fprintf(f, "(-");
            emit_expr(pr, f, k, e->a);
            fprintf(f, ")");
        } else {
            fprintf(f, "((%s)(0u - (%s)", ct, unsigned_of(t));
            emit_expr(pr, f, k, e->a);
            fprintf(f, "))");
        }
        return;
    case UN_ABS:
        if (!fl) {
            if (dtype_is_unsigned_int(t)) {
                emit_expr(pr, f, k, e->a);
                return;
            }
            fprintf(f, "((%s)(", ct);
            emit_expr(pr, f, k, e->a);
            fprintf(f, " < 0 ? 0u - (%s)", unsigned_of(t));
            emit_expr(pr, f, k, e->a);
            fprintf(f, " : (%s)", unsigned_of(t));
            emit_expr(pr, f, k, e->a);
            fprintf(f, "))");
            return;
        }
        break;
    case UN_SIGMOID:
        if (pr->expf && t == DT_FLOAT32) {
            fprintf(f, "(1.0f / (1.0f + %s(-", pr->expf);
            emit_expr(pr, f, k, e->a);
            fprintf(f, ")))");
            return;
        }
        fprintf(f, "(1.0%s / (1.0%s + exp%s(-", fsfx(t), fsfx(t), fsfx(t));
        emit_expr(pr, f, k, e->a);
        fprintf(f, ")))");
        return;
    case UN_E8M0_DOWN: case UN_E8M0_NEAREST: case UN_E8M0_NEAREST_NOSAT: case UN_E8M0_UP_NOSAT:
        fprintf(f, "tvmrt_e8m0_round(");
        emit_expr(pr, f, k, e->a);
        fprintf(f, ", %d)", e->op - UN_E8M0_DOWN);
        return;
    case UN_RECIP:
        fprintf(f, "(1.0%s / ", fsfx(t));
        emit_expr(pr, f, k, e->a);
        fprintf(f, ")");
        return;
    case UN_NOT:
        fprintf(f, "(!");
        emit_expr(pr, f, k, e->a);
        fprintf(f, ")");
        return;
    case UN_BITNOT:
        fprintf(f, "((%s)~", ct);
        emit_expr(pr, f, k, e->a);
        fprintf(f, ")");
        return;
    case UN_ISNAN:
        if (!fl) {
            fprintf(f, "0");
            return;
        }
        fprintf(f, "(isnan(");
        emit_expr(pr, f, k, e->a);
        fprintf(f, ") != 0)");
        return;
    case UN_ISINF:
        if (!fl) {
            fprintf(f, "0");
            return;
        }
        fprintf(f, "(isinf(");
        emit_expr(pr, f, k, e->a);
        fprintf(f, ") != 0)");
        return;
    case UN_SIGN:
        fprintf(f, "(%s)(", ct);
        emit_expr(pr, f, k, e->a);
        fprintf(f, " > 0 ? 1 : ");
        emit_expr(pr, f, k, e->a);
        fprintf(f, " < 0 ? -1 : ");
        if (fl)
            emit_expr(pr, f, k, e->a);
        else
            fprintf(f, "0");
        fprintf(f, ")");
        return;
    default:
        break;
    }
    if (!fl || (size_t)e->op >= sizeof fn / sizeof fn[0] || !fn[e->op])
        die("no C for unary op %d on %s", e->op, dtype_name(t));
    if (e->op == UN_EXP && pr->expf && t == DT_FLOAT32)
        fprintf(f, "%s(", pr->expf);
    else
        fprintf(f, "%s%s(", fn[e->op], fsfx(t));
    emit_expr(pr, f, k, e->a);
    fprintf(f, ")");
}

static void binary(Printer *pr, FILE *f, const Kernel *k, const Expr *e)
{
    static const char *const sym[] = {
        [BIN_ADD] = "+", [BIN_SUB] = "-", [BIN_MUL] = "*", [BIN_DIV] = "/", [BIN_MOD] = "%",
        [BIN_EQ] = "==", [BIN_NE] = "!=", [BIN_LT] = "<", [BIN_LE] = "<=", [BIN_GT] = ">",
        [BIN_GE] = ">=", [BIN_AND] = "&&", [BIN_OR] = "||", [BIN_BITAND] = "&",
        [BIN_BITOR] = "|", [BIN_BITXOR] = "^", [BIN_SHL] = "<<", [BIN_SHR] = ">>"};
    DType t = e->a->dtype;
    int fl = dtype_is_float(t);
    const char *ct = emit_compute_ctype(t);
    BinaryOp op = (BinaryOp)e->op;
    switch (op) {
    case BIN_ADD:
    case BIN_SUB:
    case BIN_MUL:
        if (!fl && !is_index_arith(e) && t != DT_BOOL) {
            fprintf(f, "((%s)((%s)", ct, unsigned_of(t));
            emit_expr(pr, f, k, e->a);
            fprintf(f, " %s (%s)", sym[op], unsigned_of(t));
            emit_expr(pr, f, k, e->b);
            fprintf(f, "))");
            return;
        }
        break;
    case BIN_MOD:
        if (fl || (dtype_is_signed_int(t) && dtype_size(t) >= 4 &&
                   !(e->b->kind == EX_INT && e->b->ival != -1))) {
            if (fl)
                fprintf(f, "fmod%s(", fsfx(t));
            else
                fprintf(f, "tvmrt_mod_i%d(", (int)dtype_size(t) * 8);
            emit_expr(pr, f, k, e->a);
            fprintf(f, ", ");
            emit_expr(pr, f, k, e->b);
            fprintf(f, ")");
            return;
        }
        break;
    case BIN_FLOORDIV:
        fprintf(f, "tvmrt_floordiv(");
        emit_expr(pr, f, k, e->a);
        fprintf(f, ", ");
        emit_expr(pr, f, k, e->b);
        fprintf(f, ")");
        return;
    case BIN_POW: {
        int close = 0;
        if (fl) {
            fprintf(f, "pow%s(", fsfx(t));
        } else {
            close = open_float_to_int(f, DT_FLOAT64, t);
            fprintf(f, "pow((double)");
        }
        emit_expr(pr, f, k, e->a);
        fprintf(f, fl ? ", " : ", (double)");
        emit_expr(pr, f, k, e->b);
        fprintf(f, ")");
        close_parens(f, close);
        return;
    }
    case BIN_DIV:
        /* INT_MIN / -1 (the divisor is never 0: lowering selects 1) */
        if (dtype_is_signed_int(t) && dtype_size(t) >= 4 &&
            !(e->b->kind == EX_INT && e->b->ival != -1)) {
            fprintf(f, "tvmrt_div_i%d(", (int)dtype_size(t) * 8);
            emit_expr(pr, f, k, e->a);
            fprintf(f, ", ");
            emit_expr(pr, f, k, e->b);
            fprintf(f, ")");
            return;
        }
        break;
    case BIN_MIN:
    case BIN_MAX:
        if (pr->arm_dsp && emit_saturate(pr, f, k, e))
            return;
        if (fl) {
            fprintf(f, "tvmrt_%s%s(", op == BIN_MIN ? "min" : "max", t == DT_FLOAT64 ? "d" : "f");
            emit_expr(pr, f, k, e->a);
            fprintf(f, ", ");
            emit_expr(pr, f, k, e->b);
            fprintf(f, ")");
        } else {
            fprintf(f, "(");
            emit_expr(pr, f, k, e->a);
            fprintf(f, op == BIN_MIN ? " < " : " > ");
            emit_expr(pr, f, k, e->b);
            fprintf(f, " ? ");
            emit_expr(pr, f, k, e->a);
            fprintf(f, " : ");
            emit_expr(pr, f, k, e->b);
            fprintf(f, ")");
        }
        return;
    case BIN_XOR:
        fprintf(f, "((");
        emit_expr(pr, f, k, e->a);
        fprintf(f, " != 0) != (");
        emit_expr(pr, f, k, e->b);
        fprintf(f, " != 0))");
        return;
    case BIN_SHL:
    case BIN_SHR:
        fprintf(f, "(%s)(", ct);
        emit_expr(pr, f, k, e->b);
        fprintf(f, " >= %d ? 0 : ", (int)dtype_size(t) * 8);
        emit_expr(pr, f, k, e->a);
        fprintf(f, " %s ", sym[op]);
        emit_expr(pr, f, k, e->b);
        fprintf(f, ")");
        return;
    case BIN_BITAND:
    case BIN_BITOR:
    case BIN_BITXOR:
        fprintf(f, "(%s)", ct);
        break;
    default:
        break;
    }
    fprintf(f, "(");
    emit_expr(pr, f, k, e->a);
    fprintf(f, " %s ", sym[op]);
    emit_expr(pr, f, k, e->b);
    fprintf(f, ")");
}

/* Index arithmetic (loop variables, + - *) printed with only the
 * parentheses C's precedence needs: i0 * 20 + i1 * 5 + i2. */
void emit_index(Printer *pr, FILE *f, const Kernel *k, const Expr *e, int prec)
{
    int mine;
    if (e->kind != EX_BINARY || !has_var(e) || dtype_is_float(e->dtype) ||
        (e->op != BIN_ADD && e->op != BIN_SUB && e->op != BIN_MUL)) {
        emit_expr(pr, f, k, e);
        return;
    }
    mine = e->op == BIN_MUL ? 2 : 1;
    if (mine < prec)
        fputc('(', f);
    emit_index(pr, f, k, e->a, mine);
    fprintf(f, e->op == BIN_MUL ? " * " : e->op == BIN_ADD ? " + " : " - ");
    emit_index(pr, f, k, e->b, mine + 1);
    if (mine < prec)
        fputc(')', f);
}

void emit_expr(Printer *pr, FILE *f, const Kernel *k, const Expr *e)
{
    switch (e->kind) {
    case EX_INT:
        print_int(f, e->dtype, e->ival);
        return;
    case EX_FLOAT:
        print_float(f, e->dtype, e->fval);
        return;
    case EX_VAR:
        fputs(k->var_names[e->var], f);
        return;
    case EX_ACC:
        die("accumulator placeholder left in a scheduled kernel");
    case EX_LOAD: {
        const Buffer *b = &k->bufs[e->buf];
        const char *conv = b->dtype == DT_FLOAT16 ? "tvmrt_f16_to_f32(" :
                           b->dtype == DT_BFLOAT16 ? "tvmrt_bf16_to_f32(" : NULL;
        const char *small = b->scope == BUF_LOCAL ? NULL : emit_small_name(b->dtype);
        if (small && dtype_is_packed(b->dtype)) {
            /* packed: element i of the byte array */
            fprintf(f, "tvmrt_ld_%s(%s%s, ", small, b->numel == 1 && b->scope == BUF_LOCAL ? "&" : "",
                    b->name);
            emit_index(pr, f, k, e->a, 0);
            fputc(')', f);
            return;
        }
        if (small)
            fprintf(f, "tvmrt_%s_to_f32(", small);
        else if (conv)
            fputs(conv, f);
        if (b->scope == BUF_LOCAL && b->numel == 1) {
            fputs(b->name, f);
        } else {
            fprintf(f, "%s[", b->name);
            emit_index(pr, f, k, e->a, 0);
            fputc(']', f);
        }
        if (conv || small)
            fputc(')', f);
        return;
    }
    case EX_UNARY:
        unary(pr, f, k, e);
        return;
    case EX_BINARY:
        binary(pr, f, k, e);
        return;
    case EX_SELECT:
        fprintf(f, "(");
        emit_expr(pr, f, k, e->a);
        fprintf(f, " ? ");
        emit_expr(pr, f, k, e->b);
        fprintf(f, " : ");
        emit_expr(pr, f, k, e->c);
        fprintf(f, ")");
        return;
    case EX_CAST:
        if (e->dtype == DT_BOOL) {
            fprintf(f, "(");
            emit_expr(pr, f, k, e->a);
            fprintf(f, " != 0)");
        } else if (dtype_is_float(e->a->dtype) && !dtype_is_float(e->dtype)) {
            int close = open_float_to_int(f, e->a->dtype, e->dtype);
            emit_expr(pr, f, k, e->a);
            close_parens(f, close);
        } else {
            fprintf(f, "(%s)", emit_compute_ctype(e->dtype));
            emit_expr(pr, f, k, e->a);
        }
        return;
    }
}
