/*
 * Loops printed with Arm intrinsics (see emit_arm.h).
 *
 * DSP (SMLAD). lower/templates_arm.c gives an integer sum of products
 * (the int32 contractions of lower/op_quant.c) a reduce loop of two
 * iterations innermost, around a register tile of int32 accumulators. A
 * reduce loop over r of extent E >= 2 qualifies when its body is a
 * straight sequence of stores
 *     acc[c] = acc[c] + A * B
 * into int32 local accumulators whose index does not depend on r, where
 * A and B are int32 expressions whose values provably fit in 16 bits (an
 * 8- or 16-bit load, minus a zero point, under a padding select...: range
 * analysis below) and read no local buffer. Then iterations r = 2p and
 * r = 2p + 1 are done together: every distinct operand is evaluated at
 * both, the two values are packed into the halves of one 32-bit word, and
 * each store becomes
 *     acc[c] = __smlad(pack(A@2p, A@2p+1), pack(B@2p, B@2p+1), acc[c]);
 * which adds both 16 x 16-bit products to the accumulator (ACLE: dual
 * signed multiply, the products added to the 32-bit accumulator modulo
 * 2^32). An odd last iteration runs the scalar body. Integer addition
 * modulo 2^32 is associative, so the sums are exactly the scalar loop's
 * (the portable code wraps too). The intrinsic form stands under
 * `#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)` (GCC's
 * and Clang's <arm_acle.h> declare __smlad under the second), with the
 * scalar loop under #else.
 */
#include "emit_arm.h"

#include <string.h>

#include "emit.h"

#define DSP_GUARD "#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)\n"
/* Most stores / distinct operands of a loop body printed as SMLAD. */
#define DSP_MAX_STORES 64
#define DSP_MAX_OPS 128

static int dsp_on;
/* The loop whose portable form is being printed (not taken again). */
static const Stmt *fallback;

void emit_arm_begin(FILE *f, const Target *t)
{
    dsp_on = 0;
    fallback = NULL;
    if (!t || !t->isa)
        return;
    /* Armv7E-M is Armv7-M plus the DSP extension; Armv8.1-M cores with
     * Helium (Cortex-M55) have it too */
    dsp_on = !strcmp(t->isa, "armv7e-m") || !strcmp(t->isa, "armv8.1-m");
    if (dsp_on)
        fprintf(f, DSP_GUARD "#include <arm_acle.h>\n#endif\n\n");
}

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", depth * 4, "");
}

static int uses_var(const Expr *e, int var)
{
    if (!e)
        return 0;
    if (e->kind == EX_VAR && e->var == var)
        return 1;
    return uses_var(e->a, var) || uses_var(e->b, var) || uses_var(e->c, var);
}

static int same_expr(const Expr *a, const Expr *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->op != b->op)
        return 0;
    switch (a->kind) {
    case EX_INT: if (a->ival != b->ival) return 0; break;
    case EX_FLOAT: if (a->fval != b->fval) return 0; break;
    case EX_VAR: if (a->var != b->var) return 0; break;
    case EX_LOAD: if (a->buf != b->buf) return 0; break;
    default: break;
    }
    return same_expr(a->a, b->a) && same_expr(a->b, b->b) && same_expr(a->c, b->c);
}

static int loads_local(const Kernel *k, const Expr *e)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && k->bufs[e->buf].scope == BUF_LOCAL)
        return 1;
    return loads_local(k, e->a) || loads_local(k, e->b) || loads_local(k, e->c);
}

static int int_range(DType t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case DT_BOOL: *lo = 0; *hi = 1; return 1;
    case DT_INT8: *lo = -128; *hi = 127; return 1;
    case DT_UINT8: *lo = 0; *hi = 255; return 1;
    case DT_INT16: *lo = -32768; *hi = 32767; return 1;
    case DT_UINT16: *lo = 0; *hi = 65535; return 1;
    case DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
    case DT_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return 1;
    default: return 0;
    }
}

/* Bounds [lo, hi] of the values of integer expression e, or 0 when they
 * are not known (small ranges only: no arithmetic here can overflow). */
static int value_range(const Kernel *k, const Expr *e, int64_t *lo, int64_t *hi)
{
    int64_t alo, ahi, blo, bhi, tlo, thi;
    switch (e->kind) {
    case EX_INT:
        *lo = *hi = e->ival;
        return 1;
    case EX_LOAD:
        return int_range(k->bufs[e->buf].dtype, lo, hi) && *hi - *lo <= 65535;
    case EX_CAST:
        if (!int_range(e->dtype, &tlo, &thi) || !value_range(k, e->a, lo, hi))
            return 0;
        return *lo >= tlo && *hi <= thi;
    case EX_BINARY:
        if (e->dtype != DT_INT32 || (e->op != BIN_ADD && e->op != BIN_SUB) ||
            !value_range(k, e->a, &alo, &ahi) || !value_range(k, e->b, &blo, &bhi))
            return 0;
        if (e->op == BIN_ADD) {
            *lo = alo + blo;
            *hi = ahi + bhi;
        } else {
            *lo = alo - bhi;
            *hi = ahi - blo;
        }
        return 1;
    case EX_SELECT:
        if (!value_range(k, e->b, &alo, &ahi) || !value_range(k, e->c, &blo, &bhi))
            return 0;
        *lo = alo < blo ? alo : blo;
        *hi = ahi > bhi ? ahi : bhi;
        return 1;
    default:
        return 0;
    }
}

/* An operand of SMLAD: int32, every value in int16, no local buffer. */
static int half_ok(const Kernel *k, const Expr *e)
{
    int64_t lo, hi;
    return e->dtype == DT_INT32 && !loads_local(k, e) && value_range(k, e, &lo, &hi) &&
           lo >= -32768 && hi <= 32767;
}

/* acc[c] = acc[c] + A * B with acc an int32 local whose index does not
 * depend on var. */
static int mac_store(const Kernel *k, const Stmt *s, int var)
{
    const Buffer *b;
    const Expr *v;
    if (s->kind != ST_STORE)
        return 0;
    b = &k->bufs[s->buf];
    v = s->value;
    if (b->scope != BUF_LOCAL || b->dtype != DT_INT32 || uses_var(s->index, var) ||
        loads_local(k, s->index))
        return 0;
    if (!v || v->kind != EX_BINARY || v->op != BIN_ADD || v->dtype != DT_INT32)
        return 0;
    if (v->a->kind != EX_LOAD || v->a->buf != s->buf || !same_expr(v->a->a, s->index))
        return 0;
    v = v->b;
    return v->kind == EX_BINARY && v->op == BIN_MUL && v->dtype == DT_INT32 && half_ok(k, v->a) &&
           half_ok(k, v->b);
}

/* Flattens the body into its stores; 0 when it holds anything else. */
static int collect_stores(const Stmt *s, const Stmt **out, int *n)
{
    int i;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            if (!s->body[i] || !collect_stores(s->body[i], out, n))
                return 0;
        return 1;
    }
    if (s->kind != ST_STORE || *n >= DSP_MAX_STORES)
        return 0;
    out[(*n)++] = s;
    return 1;
}

static int small_kernel(const Kernel *k)
{
    const int64_t limit = (int64_t)1 << 30;
    int i;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].numel >= limit)
            return 0;
    return 1;
}

static int op_index(const Expr **ops, int *n, const Expr *e)
{
    int i;
    for (i = 0; i < *n; i++)
        if (same_expr(ops[i], e))
            return i;
    ops[*n] = e;
    return (*n)++;
}

static void print_acc(FILE *f, const Kernel *k, const Stmt *s)
{
    const Buffer *b = &k->bufs[s->buf];
    if (b->numel == 1) {
        fprintf(f, "%s", b->name);
        return;
    }
    fprintf(f, "%s[", b->name);
    emit_index(f, k, s->index, 0);
    fprintf(f, "]");
}

static int dsp_loop(FILE *f, const Kernel *k, const Stmt *s, int depth, EmitArmStmtFn emit)
{
    const Stmt *st[DSP_MAX_STORES];
    const Expr *ops[DSP_MAX_OPS];
    int n = 0, nops = 0, i, h, ia[DSP_MAX_STORES], ib[DSP_MAX_STORES], sub[DSP_MAX_OPS];
    const Expr *ops_x[DSP_MAX_OPS];
    const char *r = k->var_names[s->var];
    const Stmt *prev;
    if (s->kind != ST_FOR || s->for_kind == FOR_PARALLEL || s->extent < 2 || s->extent >= (1 << 30) ||
        !s->body[0] || !collect_stores(s->body[0], st, &n) || n == 0 || !small_kernel(k))
        return 0;
    for (i = 0; i < n; i++) {
        if (!mac_store(k, st[i], s->var))
            return 0;
        if (nops + 2 > DSP_MAX_OPS)
            return 0;
        ia[i] = op_index(ops, &nops, st[i]->value->b->a);
        ib[i] = op_index(ops, &nops, st[i]->value->b->b);
    }
    for (i = 0; i < nops; i++) {
        /* x - z with z invariant in var: x is packed, then z subtracted
         * from both halves at once (SSUB16, which cannot saturate: the
         * difference is in int16, half_ok) */
        const Expr *e = ops[i];
        int64_t lo, hi;
        sub[i] = e->kind == EX_BINARY && e->op == BIN_SUB && !uses_var(e->b, s->var) &&
                 value_range(k, e->a, &lo, &hi) && lo >= -32768 && hi <= 32767 &&
                 value_range(k, e->b, &lo, &hi) && lo >= -32768 && hi <= 32767;
        ops_x[i] = e;
    }
    fprintf(f, DSP_GUARD);
    indent(f, depth);
    fprintf(f, "{ /* %s: iterations in pairs, one SMLAD (two 16-bit multiply-accumulates) per "
               "accumulator */\n", r);
    indent(f, depth + 1);
    fprintf(f, "for (int32_t %s_pair = 0; %s_pair < %lld; %s_pair++) {\n", r, r,
            (long long)(s->extent / 2), r);
    indent(f, depth + 2);
    fprintf(f, "int32_t dsp_lo[%d], dsp_hi[%d], dsp_p[%d];\n", nops, nops, nops);
    for (h = 0; h < 2; h++) {
        indent(f, depth + 2);
        fprintf(f, "{\n");
        indent(f, depth + 3);
        fprintf(f, "const int32_t %s = 2 * %s_pair%s;\n", r, r, h ? " + 1" : "");
        indent(f, depth + 3);
        fprintf(f, "(void)%s;\n", r);
        for (i = 0; i < nops; i++) {
            indent(f, depth + 3);
            fprintf(f, "dsp_%s[%d] = ", h ? "hi" : "lo", i);
            emit_expr(f, k, sub[i] ? ops_x[i]->a : ops[i]);
            fprintf(f, ";\n");
        }
        indent(f, depth + 2);
        fprintf(f, "}\n");
    }
    for (i = 0; i < nops; i++) {
        int zero = sub[i] && ops_x[i]->b->kind == EX_INT && ops_x[i]->b->ival == 0;
        indent(f, depth + 2);
        fprintf(f, "dsp_p[%d] = ", i);
        fprintf(f, "%s(int32_t)(((uint32_t)dsp_lo[%d] & 0xFFFFu) | (uint32_t)dsp_hi[%d] << 16)",
                sub[i] && !zero ? "__ssub16(" : "", i, i);
        if (sub[i] && !zero) {
            /* z in both halves */
            fprintf(f, ", (int32_t)(((uint32_t)(");
            emit_expr(f, k, ops_x[i]->b);
            fprintf(f, ") & 0xFFFFu) * 0x10001u))");
        }
        fprintf(f, ";\n");
    }
    for (i = 0; i < n; i++) {
        indent(f, depth + 2);
        print_acc(f, k, st[i]);
        fprintf(f, " = __smlad(dsp_p[%d], dsp_p[%d], ", ia[i], ib[i]);
        print_acc(f, k, st[i]);
        fprintf(f, ");\n");
    }
    indent(f, depth + 1);
    fprintf(f, "}\n");
    if (s->extent % 2) {
        indent(f, depth + 1);
        fprintf(f, "{\n");
        indent(f, depth + 2);
        fprintf(f, "const int32_t %s = %lld;\n", r, (long long)(s->extent - 1));
        indent(f, depth + 2);
        fprintf(f, "(void)%s;\n", r);
        emit(f, k, s->body[0], depth + 2);
        indent(f, depth + 1);
        fprintf(f, "}\n");
    }
    indent(f, depth);
    fprintf(f, "}\n#else\n");
    prev = fallback;
    fallback = s;
    emit(f, k, s, depth);
    fallback = prev;
    fprintf(f, "#endif\n");
    return 1;
}

int emit_arm_loop(FILE *f, const Kernel *k, const Stmt *s, int depth, EmitArmStmtFn emit)
{
    if (s == fallback || s->kind != ST_FOR)
        return 0;
    if (dsp_on && dsp_loop(f, k, s, depth, emit))
        return 1;
    return 0;
}
