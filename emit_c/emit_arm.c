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

#include <stdlib.h>

#include "emit.h"
#include "emit_a64q.h"
#include "emit_loopq.h"
#include "emit_tile.h"

#define DSP_GUARD "#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)\n"
/* tvmcc_ssat8(x)...: SSAT / USAT to 8 or 16 bits as one instruction (the
 * ACLE macros convert their result with a sign change that -Wconversion
 * reports in the caller's code), else a plain clamp */
#define SAT_ASM(op, b)                                                                \
    "static inline __attribute__((always_inline, unused)) int32_t tvmcc_" op #b "(int32_t x)\n" \
    "{\n    int32_t r;\n    __asm__(\"" op " %%0, #" #b ", %%1\" : \"=r\"(r) : \"r\"(x));\n" \
    "    return r;\n}\n"
#define SAT_C(op, b, lo, hi)                                   \
    "static inline TVMCC_UNUSED int32_t tvmcc_" op #b "(int32_t x)\n" \
    "{\n    return x < " lo " ? " lo " : x > " hi " ? " hi " : x;\n}\n"
/* Most stores / distinct operands of a loop body printed as SMLAD. */
#define DSP_MAX_STORES 64
#define DSP_MAX_OPS 128

/* ---- the 2 x 3 SMLAD tile of lower/tpl_qconv_m4.c ----
 *
 * tvmcc_m4q_2x3(wp, xc, acc, init, kg, np): for each of np pairs of output
 * channels, the pair's two init values into six accumulators (two rows x
 * three columns), then kg groups of four reduce points, each: one LDRD of
 * the pair's two weight words (4 int8 each), 4 SXTB16 (even and odd bytes
 * of each word), and per column one LDRD of two words of int16 pairs
 * (k0,k2 and k1,k3) and 4 SMLADs: 24 MACs in 28 cycles on a Cortex-M4; then
 * the six sums stored to acc with one STM. Four groups per loop step
 * (each 20 instructions of 4 bytes), entered by a computed branch at the
 * group that leaves a multiple of four (kg = 4m + 3 starts at the second);
 * the loop's end, the pointers of
 * init and acc and the pair count live on the stack, since the step needs
 * all 14 core registers (r7 and r9 included, which is why the function is
 * naked assembly saving them itself; a build for RWPI, where r9 is the
 * static base, and compilers other than GCC and Clang get the C loops).
 * Registers: r0-r2 row 0 and r3-r5 row 1 (columns 0-2), r6/r7 and r8/r9
 * the two rows' even/odd weight pairs, r10/r11 a column's pairs, r12 xc,
 * lr wp. Stack: [sp] xc, [sp+4] xc's end, [sp+8] acc, [sp+12] init,
 * [sp+16] pairs left, [sp+20] the entry address (Thumb bit set); kg and np
 * at [sp+64], [sp+68]. */
#define M4Q_L(x) "        \"" x "\\n\\t\"\n"
#define M4Q_GROUP                                                                               \
    M4Q_L("ldrd r6, r8, [lr], #8") M4Q_L("sxtb16 r7, r6, ror #8") M4Q_L("sxtb16 r6, r6")       \
    M4Q_L("sxtb16 r9, r8, ror #8") M4Q_L("sxtb16 r8, r8") M4Q_L("ldrd r10, r11, [r12], #8")    \
    M4Q_L("smlad r0, r10, r6, r0") M4Q_L("smlad r0, r11, r7, r0") M4Q_L("smlad r3, r10, r8, r3") \
    M4Q_L("smlad r3, r11, r9, r3") M4Q_L("ldrd r10, r11, [r12], #8")                            \
    M4Q_L("smlad r1, r10, r6, r1") M4Q_L("smlad r1, r11, r7, r1") M4Q_L("smlad r4, r10, r8, r4") \
    M4Q_L("smlad r4, r11, r9, r4") M4Q_L("ldrd r10, r11, [r12], #8")                            \
    M4Q_L("smlad r2, r10, r6, r2") M4Q_L("smlad r2, r11, r7, r2") M4Q_L("smlad r5, r10, r8, r5") \
    M4Q_L("smlad r5, r11, r9, r5")
#define M4Q_UNUSED " __attribute__((unused))"
#define M4Q_FUNCTION                                                                                       \
    "/* the 2 x 3 SMLAD tile (emit_c/emit_arm.c): naked Thumb-2 assembly, all 14 core registers */\n"    \
    "#if defined(__GNUC__) && defined(__ARM_FEATURE_DSP) && defined(__thumb2__) && !defined(__ARM_RWPI)\n" \
    "#define TVMCC_M4Q 1\n"                                                                                \
    "static __attribute__((naked, noinline, unused)) void tvmcc_m4q_2x3(const int32_t *wp" M4Q_UNUSED    \
    ", const int16_t *xc" M4Q_UNUSED ", int32_t *acc" M4Q_UNUSED ", const int32_t *init" M4Q_UNUSED        \
    ", int32_t kg" M4Q_UNUSED ", int32_t np" M4Q_UNUSED ")\n"                                              \
    "{\n    __asm__ volatile(\n"                                                                           \
    M4Q_L("push {r4-r11, lr}") M4Q_L("sub sp, sp, #28") M4Q_L("ldr r4, [sp, #64]")                        \
    M4Q_L("ldr r5, [sp, #68]") M4Q_L("add r6, r4, r4, lsl #1") M4Q_L("add r6, r1, r6, lsl #3")          \
    M4Q_L("rsb r4, r4, #0") M4Q_L("and r4, r4, #3") M4Q_L("add r4, r4, r4, lsl #2")                      \
    M4Q_L("adr r7, 2f") M4Q_L("add r4, r7, r4, lsl #4") M4Q_L("orr r4, r4, #1")                           \
    M4Q_L("str r1, [sp, #0]") M4Q_L("str r6, [sp, #4]") M4Q_L("str r2, [sp, #8]")                         \
    M4Q_L("str r3, [sp, #12]") M4Q_L("str r5, [sp, #16]") M4Q_L("str r4, [sp, #20]") M4Q_L("mov lr, r0") \
    M4Q_L("1:") M4Q_L("ldr r12, [sp, #12]") M4Q_L("ldrd r0, r3, [r12], #8") M4Q_L("str r12, [sp, #12]")   \
    M4Q_L("mov r1, r0") M4Q_L("mov r2, r0") M4Q_L("mov r4, r3") M4Q_L("mov r5, r3")                      \
    M4Q_L("ldr r12, [sp, #0]") M4Q_L("ldr r10, [sp, #20]") M4Q_L("bx r10")                               \
    M4Q_L(".p2align 2") M4Q_L("2:") M4Q_GROUP M4Q_GROUP M4Q_GROUP M4Q_GROUP                              \
    M4Q_L("ldr r10, [sp, #4]") M4Q_L("cmp r12, r10") M4Q_L("bne 2b")                                      \
    M4Q_L("ldr r10, [sp, #8]") M4Q_L("stmia r10!, {r0-r5}") M4Q_L("str r10, [sp, #8]")                   \
    M4Q_L("ldr r10, [sp, #16]") M4Q_L("subs r10, r10, #1") M4Q_L("str r10, [sp, #16]") M4Q_L("bne 1b")   \
    M4Q_L("add sp, sp, #28") M4Q_L("pop {r4-r11, pc}")                                                    \
    "    );\n}\n"                                                                                          \
    "#else\n#define TVMCC_M4Q 0\n#endif\n"

/* The Printer's state for this file: arm_dsp (SMLAD pair loops);
 * arm_vec, the float32 vectors: the target's declared "lanes" intrinsic
 * (NEON on AArch64, MVE on the Cortex-M55: targets/NAME.json), or NULL;
 * pr->reg_locals, the local float32 buffers (register tiles) declared as
 * vector variables NAME_v0, NAME_v1... inside the vector branch being
 * printed; arm_fallback, the loop whose portable form is being printed
 * (not taken again). */

static int is_reg_local(const Printer *pr, int buf)
{
    int i;
    for (i = 0; i < pr->n_reg_locals; i++)
        if (pr->reg_locals[i] == buf)
            return 1;
    return 0;
}

void emit_arm_begin(Printer *pr, FILE *f, const Target *t)
{
    pr->arm_dsp = 0;
    pr->arm_vec = NULL;
    pr->arm_fallback = NULL;
    if (!t)
        return;
    emit_a64q_begin(pr, f, t);
    pr->arm_vec = t->lane_ops;
    if (pr->arm_vec && *pr->arm_vec->header)
        fprintf(f, "#if %s\n%s\n#endif\n\n", pr->arm_vec->guard, pr->arm_vec->header);
    /* the "dsp" knob: Armv7E-M is Armv7-M plus the DSP extension;
     * Armv8.1-M cores with Helium (Cortex-M55) have it too */
    pr->arm_dsp = t->knobs.dsp;
    if (pr->arm_dsp)
        fprintf(f, "/* the helpers below: a model uses some of them (Clang warns of an unused\n"
                   " * static inline function) */\n"
                   "#if defined(__GNUC__)\n#define TVMCC_UNUSED __attribute__((unused))\n"
                   "#else\n#define TVMCC_UNUSED\n#endif\n"
                   DSP_GUARD "#include <arm_acle.h>\n"
                   /* the integer Helium instructions (the MVE form of the
                    * int8 tile) */
                   "#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)\n#include <arm_mve.h>\n#endif\n"
                   "/* SXTB16 of the word rotated by 8 (the odd bytes): one instruction; ACLE\n"
                   " * has no rotate operand, so GCC and Clang get it as inline assembly */\n"
                   "#if defined(__GNUC__)\n"
                   "static inline __attribute__((always_inline, unused)) int32_t tvmcc_sxtb16_odd(uint32_t x)\n"
                   "{\n    int32_t r;\n    __asm__(\"sxtb16 %%0, %%1, ror #8\" : \"=r\"(r) : \"r\"(x));\n"
                   "    return r;\n}\n"
                   "static inline __attribute__((always_inline, unused)) int32_t tvmcc_uxtb16_odd(uint32_t x)\n"
                   "{\n    int32_t r;\n    __asm__(\"uxtb16 %%0, %%1, ror #8\" : \"=r\"(r) : \"r\"(x));\n"
                   "    return r;\n}\n"
                   "#else\n"
                   "#define tvmcc_sxtb16_odd(x) ((int32_t)__sxtb16((int32_t)((x) >> 8 | (x) << 24)))\n"
                   "#define tvmcc_uxtb16_odd(x) ((int32_t)__uxtb16((x) >> 8 | (x) << 24))\n"
                   "#endif\n"
                   "#endif\n"
                   /* the clamp of a requantization: SSAT / USAT where the core
                    * saturates (emit_expr.c prints a clamp to a type range so) */
                   "#if defined(__ARM_FEATURE_SAT) && defined(__GNUC__)\n"
                   SAT_ASM("ssat", 8) SAT_ASM("ssat", 16) SAT_ASM("usat", 8) SAT_ASM("usat", 16)
                   /* x >> k saturated to b bits in one SSAT / USAT (x, k
                    * int32, 1 <= k <= 30; GCC and Clang shift a negative
                    * int right arithmetically) */
                   "#define tvmcc_ssat_asr(x, k, b) ((int32_t)__builtin_arm_ssat((int32_t)(x) >> (k), b))\n"
                   "#define tvmcc_usat_asr(x, k, b) ((int32_t)__builtin_arm_usat((int32_t)(x) >> (k), b))\n"
                   "#else\n"
                   SAT_C("ssat", 8, "-128", "127") SAT_C("ssat", 16, "-32768", "32767")
                   SAT_C("usat", 8, "0", "255") SAT_C("usat", 16, "0", "65535")
                   /* floor(x / 2^k) without a signed right shift */
                   "static inline TVMCC_UNUSED int32_t tvmcc_asr(int32_t x, int k)\n"
                   "{\n    return x >= 0 ? x >> k : -1 - (int32_t)((uint32_t)(-1 - x) >> k);\n}\n"
                   "#define tvmcc_ssat_asr(x, k, b) tvmcc_ssat##b(tvmcc_asr(x, k))\n"
                   "#define tvmcc_usat_asr(x, k, b) tvmcc_usat##b(tvmcc_asr(x, k))\n"
                   "#endif\n"
                   M4Q_FUNCTION
                   "/* two int16 values in one word, lo in the low half (SMLAD's operand) */\n"
                   "static inline TVMCC_UNUSED int32_t tvmcc_pk16(int32_t lo, int32_t hi)\n"
                   "{\n    return (int32_t)(((uint32_t)hi << 16) | ((uint32_t)lo & 0xffffu));\n}\n"
                   "static inline TVMCC_UNUSED int32_t tvmcc_imax(int32_t a, int32_t b)\n"
                   "{\n    return a > b ? a : b;\n}\n"
                   /* round half to even, as nearbyintf in the default mode:
                    * below 2^23 adding and subtracting 2^23 leaves the
                    * integer nearest |x| (ties to even) in float32 */
                   "static inline TVMCC_UNUSED float tvmcc_roundevenf(float x)\n"
                   "{\n    float a = x < 0.0f ? -x : x;\n"
                   "    if (!(a < 8388608.0f))\n        return x; /* integral, infinite or NaN */\n"
                   "    a = (a + 8388608.0f) - 8388608.0f;\n"
                   "    return x < 0.0f ? -a : x == 0.0f ? x : a; /* -0 stays -0 */\n}\n\n");
}

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", depth * 4, "");
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
    if (b->scope != BUF_LOCAL || b->dtype != DT_INT32 || lq_uses_var(s->index, var) ||
        loads_local(k, s->index))
        return 0;
    if (!v || v->kind != EX_BINARY || v->op != BIN_ADD || v->dtype != DT_INT32)
        return 0;
    if (v->a->kind != EX_LOAD || v->a->buf != s->buf || !lq_same_expr(v->a->a, s->index))
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
        if (lq_same_expr(ops[i], e))
            return i;
    ops[*n] = e;
    return (*n)++;
}

static void print_acc(Printer *pr, FILE *f, const Kernel *k, const Stmt *s)
{
    const Buffer *b = &k->bufs[s->buf];
    if (b->numel == 1) {
        fprintf(f, "%s", b->name);
        return;
    }
    fprintf(f, "%s[", b->name);
    emit_index(pr, f, k, s->index, 0);
    fprintf(f, "]");
}

static int dsp_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *st[DSP_MAX_STORES];
    const Expr *ops[DSP_MAX_OPS];
    int n = 0, nops = 0, i, h, ia[DSP_MAX_STORES], ib[DSP_MAX_STORES], sub[DSP_MAX_OPS];
    const Expr *ops_x[DSP_MAX_OPS];
    const char *r = k->var_names[s->var];
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
         * from both halves at once (SSUB16 wraps each half; exact, as the
         * difference is in int16: half_ok) */
        const Expr *e = ops[i];
        int64_t lo, hi;
        sub[i] = e->kind == EX_BINARY && e->op == BIN_SUB && !lq_uses_var(e->b, s->var) &&
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
            emit_expr(pr, f, k, sub[i] ? ops_x[i]->a : ops[i]);
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
            emit_expr(pr, f, k, ops_x[i]->b);
            fprintf(f, ") & 0xFFFFu) * 0x10001u))");
        }
        fprintf(f, ";\n");
    }
    for (i = 0; i < n; i++) {
        indent(f, depth + 2);
        print_acc(pr, f, k, st[i]);
        fprintf(f, " = __smlad(dsp_p[%d], dsp_p[%d], ", ia[i], ib[i]);
        print_acc(pr, f, k, st[i]);
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
        emit(pr, f, k, s->body[0], depth + 2);
        indent(f, depth + 1);
        fprintf(f, "}\n");
    }
    indent(f, depth);
    fprintf(f, "}\n#else\n");
    /* the portable form keeps the pairs (two copies of the body per
     * iteration, which compilers schedule better than a loop of two) */
    indent(f, depth);
    fprintf(f, "for (int32_t %s_pair = 0; %s_pair < %lld; %s_pair++) {\n", r, r,
            (long long)(s->extent / 2), r);
    for (h = 0; h < 2; h++) {
        indent(f, depth + 1);
        fprintf(f, "{\n");
        indent(f, depth + 2);
        fprintf(f, "const int32_t %s = 2 * %s_pair%s;\n", r, r, h ? " + 1" : "");
        indent(f, depth + 2);
        fprintf(f, "(void)%s;\n", r);
        emit(pr, f, k, s->body[0], depth + 2);
        indent(f, depth + 1);
        fprintf(f, "}\n");
    }
    indent(f, depth);
    fprintf(f, "}\n");
    if (s->extent % 2) {
        indent(f, depth);
        fprintf(f, "{\n");
        indent(f, depth + 1);
        fprintf(f, "const int32_t %s = %lld;\n", r, (long long)(s->extent - 1));
        indent(f, depth + 1);
        fprintf(f, "(void)%s;\n", r);
        emit(pr, f, k, s->body[0], depth + 1);
        indent(f, depth);
        fprintf(f, "}\n");
    }
    fprintf(f, "#endif\n");
    return 1;
}

/* ---------------------------------------------------------------------
 * float32 vectors (the target's declared "lanes" intrinsic: NEON, MVE).
 * A loop marked FOR_VECTORIZE with exactly `lanes` iterations (one
 * vector) qualifies when its body is a sequence of float32 stores at
 * v + (invariant) whose values are built from +, -, *, / (only with a
 * declared "div": MVE has no vector divide), min, max (tvmrt_minf/maxf's NaN
 * rule), float32 casts of float32 and selects on invariant conditions, over
 * loads at v + invariant (one vector load) and subexpressions invariant in
 * v (one broadcast); a buffer the body stores is loaded only at the index
 * it is stored at, and no buffer shares memory with another. Lane l of
 * every vector statement is then iteration v = l of the scalar loop, so
 * the statements can run one after the other on whole vectors. The body
 * is printed once with v bound to 0, each vector operation from its
 * template in the declaration (vld1q_f32, vfmaq_n_f32... in aarch64.json
 * and cortex-m55.json). x + a * b becomes one fused multiply-add ("fma",
 * or "fma_scalar" when a factor is invariant), as the
 * scalar code is contracted under -ffp-contract=fast (the Arm targets'
 * flags); the other operations round exactly like the scalar ones.
 */

/* idx = c + v (or v) with c a constant: returns c, or -1 when idx has
 * another form. */
static int64_t block_base(const Expr *idx)
{
    if (idx->kind == EX_VAR)
        return 0;
    if (idx->kind == EX_BINARY && idx->op == BIN_ADD && idx->a->kind == EX_INT && idx->b->kind == EX_VAR)
        return idx->a->ival;
    if (idx->kind == EX_BINARY && idx->op == BIN_ADD && idx->b->kind == EX_INT && idx->a->kind == EX_VAR)
        return idx->b->ival;
    return -1;
}

/* An access to local buf inside vector loop var: a whole block
 * buf[L*j .. L*j + L-1] (L lanes) at lane 0 = v. */
static int block_access(const Printer *pr, const Kernel *k, int buf, const Expr *idx, int var)
{
    int64_t c = block_base(idx);
    const Expr *v = idx->kind == EX_VAR ? idx : idx->a->kind == EX_VAR ? idx->a : idx->b;
    return c >= 0 && c % pr->arm_vec->lanes == 0 && c + pr->arm_vec->lanes <= k->bufs[buf].numel && v->kind == EX_VAR &&
           v->var == var;
}

static int vec_expr_ok(const Printer *pr, const Kernel *k, const Stmt *body, const Expr *e, int var)
{
    const Expr *sidx;
    if (!lq_uses_var(e, var))
        return e->dtype == DT_FLOAT32 && !lq_loads_stored(body, e);
    if (e->dtype != DT_FLOAT32)
        return 0;
    switch (e->kind) {
    case EX_LOAD:
        if (k->bufs[e->buf].dtype != DT_FLOAT32 || k->bufs[e->buf].inplace || !lq_unit_stride(e->a, var))
            return 0;
        return !lq_stored_at(body, e->buf, &sidx) || lq_same_expr(sidx, e->a);
    case EX_BINARY:
        switch (e->op) {
        case BIN_DIV:
            if (!pr->arm_vec->tpl[LT_DIV]) /* (MVE has no vector divide) */
                return 0;
            /* fall through */
        case BIN_ADD: case BIN_SUB: case BIN_MUL: case BIN_MIN: case BIN_MAX:
            return vec_expr_ok(pr, k, body, e->a, var) && vec_expr_ok(pr, k, body, e->b, var);
        default:
            return 0;
        }
    case EX_CAST:
        return e->a->dtype == DT_FLOAT32 && vec_expr_ok(pr, k, body, e->a, var);
    case EX_SELECT:
        return !lq_uses_var(e->a, var) && !lq_loads_stored(body, e->a) &&
               vec_expr_ok(pr, k, body, e->b, var) && vec_expr_ok(pr, k, body, e->c, var);
    default:
        return 0;
    }
}

static int vec_stmt_ok(const Printer *pr, const Kernel *k, const Stmt *body, const Stmt *s, int var)
{
    int i;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            if (!s->body[i] || !vec_stmt_ok(pr, k, body, s->body[i], var))
                return 0;
        return s->n_body > 0;
    }
    if (s->kind != ST_STORE)
        return 0;
    if (k->bufs[s->buf].dtype != DT_FLOAT32 || k->bufs[s->buf].inplace ||
        (k->bufs[s->buf].scope == BUF_LOCAL && k->bufs[s->buf].numel == 1))
        return 0;
    return lq_unit_stride(s->index, var) && !lq_loads_stored(body, s->index) &&
           vec_expr_ok(pr, k, body, s->value, var);
}

static void vec_expr(Printer *pr, FILE *f, const Kernel *k, const Expr *e, int var);

/* The operands of one template: printed as vectors, or as scalar C. */
typedef struct VecArgs {
    const Kernel *k;
    int var;
    const Expr *e[3];
    int scalar[3];
} VecArgs;

static void vec_arg(Printer *pr, FILE *f, int i, const void *ctx)
{
    const VecArgs *v = ctx;
    if (v->scalar[i])
        emit_expr(pr, f, v->k, v->e[i]);
    else
        vec_expr(pr, f, v->k, v->e[i], v->var);
}

/* Prints operation op of the declared templates on operands e0, e1, e2
 * (those in `scalar`, a bit mask, printed as scalar C). */
static void vec_op(Printer *pr, FILE *f, const Kernel *k, int var, int op, const Expr *e0, const Expr *e1, const Expr *e2,
                   unsigned scalar)
{
    static const char *const ab[] = {"a", "b"}, *const fma[] = {"acc", "a", "b"},
                             *const fmas[] = {"acc", "a", "x"}, *const x[] = {"x"};
    VecArgs v;
    int i;
    v.k = k;
    v.var = var;
    v.e[0] = e0;
    v.e[1] = e1;
    v.e[2] = e2;
    for (i = 0; i < 3; i++)
        v.scalar[i] = (scalar >> i) & 1u;
    emit_template(pr, f, pr->arm_vec->tpl[op], op == LT_BROADCAST ? x : op == LT_FMA ? fma : op == LT_FMA_SCALAR ? fmas : ab,
                  op == LT_BROADCAST ? 1 : op == LT_FMA || op == LT_FMA_SCALAR ? 3 : 2, vec_arg, &v);
}

static void str_arg(Printer *pr, FILE *f, int i, const void *ctx)
{
    fputs(((const char *const *)ctx)[i], f);
}

/* $ptr of load and store: &NAME[index] */
typedef struct PtrArg {
    const Kernel *k;
    int buf;
    const Expr *index;
} PtrArg;

static void ptr_arg(Printer *pr, FILE *f, int i, const void *ctx)
{
    const PtrArg *p = ctx;
    (void)i;
    fprintf(f, "&%s[", p->k->bufs[p->buf].name);
    emit_index(pr, f, p->k, p->index, 0);
    fprintf(f, "]");
}

static void vec_expr(Printer *pr, FILE *f, const Kernel *k, const Expr *e, int var)
{
    static const int ops[] = {LT_ADD, LT_SUB, LT_MUL, LT_DIV};
    if (!lq_uses_var(e, var)) {
        vec_op(pr, f, k, var, LT_BROADCAST, e, NULL, NULL, 1u);
        return;
    }
    switch (e->kind) {
    case EX_LOAD: {
        static const char *const ptr[] = {"ptr"};
        PtrArg p;
        if (is_reg_local(pr, e->buf)) {
            fprintf(f, "%s_v%lld", k->bufs[e->buf].name, (long long)(block_base(e->a) / pr->arm_vec->lanes));
            return;
        }
        p.k = k;
        p.buf = e->buf;
        p.index = e->a;
        emit_template(pr, f, pr->arm_vec->tpl[LT_LOAD], ptr, 1, ptr_arg, &p);
        return;
    }
    case EX_CAST:
        vec_expr(pr, f, k, e->a, var);
        return;
    case EX_SELECT:
        fprintf(f, "((");
        emit_expr(pr, f, k, e->a);
        fprintf(f, ") ? ");
        vec_expr(pr, f, k, e->b, var);
        fprintf(f, " : ");
        vec_expr(pr, f, k, e->c, var);
        fprintf(f, ")");
        return;
    case EX_BINARY:
        if (e->op == BIN_MIN || e->op == BIN_MAX) {
            /* the templates keep tvmrt_minf / tvmrt_maxf's rule: a where
             * a < b (a > b) or a is NaN, else b */
            vec_op(pr, f, k, var, e->op == BIN_MIN ? LT_MIN : LT_MAX, e->a, e->b, NULL, 0u);
            return;
        }
        if (e->op == BIN_ADD && e->b->kind == EX_BINARY && e->b->op == BIN_MUL &&
            e->b->dtype == DT_FLOAT32 && (pr->arm_vec->tpl[LT_FMA] || pr->arm_vec->tpl[LT_FMA_SCALAR])) {
            /* x + a * b: one fused multiply-add (the scalar one is
             * contracted too, under the target's -ffp-contract=fast) */
            const Expr *a = e->b->a, *b = e->b->b;
            if (pr->arm_vec->tpl[LT_FMA_SCALAR] && (!lq_uses_var(b, var) || !lq_uses_var(a, var))) {
                const Expr *sc = lq_uses_var(b, var) ? a : b;
                vec_op(pr, f, k, var, LT_FMA_SCALAR, e->a, sc == a ? b : a, sc, 4u);
                return;
            }
            if (pr->arm_vec->tpl[LT_FMA]) {
                vec_op(pr, f, k, var, LT_FMA, e->a, a, b, 0u);
                return;
            }
        }
        vec_op(pr, f, k, var, ops[e->op - BIN_ADD], e->a, e->b, NULL, 0u);
        return;
    default:
        return;
    }
}

/* $ptr and $x of store */
typedef struct StoreArgs {
    PtrArg p;
    const Expr *value;
    int var;
} StoreArgs;

static void store_arg(Printer *pr, FILE *f, int i, const void *ctx)
{
    const StoreArgs *a = ctx;
    if (i == 0)
        ptr_arg(pr, f, 0, &a->p);
    else
        vec_expr(pr, f, a->p.k, a->value, a->var);
}

static void vec_stmt(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int var, int depth)
{
    int i;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            vec_stmt(pr, f, k, s->body[i], var, depth);
        return;
    }
    indent(f, depth);
    if (is_reg_local(pr, s->buf)) {
        fprintf(f, "%s_v%lld = ", k->bufs[s->buf].name, (long long)(block_base(s->index) / pr->arm_vec->lanes));
        vec_expr(pr, f, k, s->value, var);
        fprintf(f, ";\n");
        return;
    }
    {
        static const char *const names[] = {"ptr", "x"};
        StoreArgs a;
        a.p.k = k;
        a.p.buf = s->buf;
        a.p.index = s->index;
        a.value = s->value;
        a.var = var;
        emit_template(pr, f, pr->arm_vec->tpl[LT_STORE], names, 2, store_arg, &a);
    }
    fprintf(f, ";\n");
}

static int vec_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    if (s->for_kind != FOR_VECTORIZE || s->extent != pr->arm_vec->lanes || !s->body[0] || !small_kernel(k) ||
        !vec_stmt_ok(pr, k, s->body[0], s->body[0], s->var))
        return 0;
    fprintf(f, "#if %s\n", pr->arm_vec->guard);
    indent(f, depth);
    fprintf(f, "{\n");
    indent(f, depth + 1);
    fprintf(f, "const int32_t %s = 0; /* lane 0 of a %s (%s) */\n", k->var_names[s->var], pr->arm_vec->vector_type,
            pr->arm_vec->name);
    indent(f, depth + 1);
    fprintf(f, "(void)%s;\n", k->var_names[s->var]);
    vec_stmt(pr, f, k, s->body[0], s->var, depth + 1);
    indent(f, depth);
    fprintf(f, "}\n");
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    return 1;
}

/* Whether every access to local buf in e is a whole block in a vector
 * loop (var >= 0: the innermost qualifying vector loop around e, else -1). */
static int expr_blocks(const Printer *pr, const Kernel *k, const Expr *e, int buf, int var)
{
    if (!e)
        return 1;
    if (e->kind == EX_LOAD && e->buf == buf && (var < 0 || !block_access(pr, k, buf, e->a, var)))
        return 0;
    return expr_blocks(pr, k, e->a, buf, var) && expr_blocks(pr, k, e->b, buf, var) &&
           expr_blocks(pr, k, e->c, buf, var);
}

static int stmt_blocks(const Printer *pr, const Kernel *k, const Stmt *s, int buf, int var)
{
    int i;
    if (!s)
        return 1;
    if (s->kind == ST_FOR && s->for_kind == FOR_VECTORIZE && s->extent == pr->arm_vec->lanes && s->body[0] &&
        vec_stmt_ok(pr, k, s->body[0], s->body[0], s->var))
        var = s->var;
    else if (s->kind == ST_FOR)
        var = -1; /* (a loop inside a vector loop is not printed as vectors) */
    if (s->kind == ST_DECL && s->buf == buf)
        return 0;
    if (s->kind == ST_STORE && s->buf == buf && (var < 0 || !block_access(pr, k, buf, s->index, var)))
        return 0;
    if (!expr_blocks(pr, k, s->index, buf, var) || !expr_blocks(pr, k, s->value, buf, var) ||
        !expr_blocks(pr, k, s->cond, buf, var))
        return 0;
    for (i = 0; i < s->n_body; i++)
        if (!stmt_blocks(pr, k, s->body[i], buf, var))
            return 0;
    return 1;
}

/* A register tile: a local float32 array every access of which is a whole
 * vector in a loop printed as vectors is declared as float32x4_t variables
 * in the vector branch, so the accumulators stay in vector registers (the
 * compiler would keep an array whose address vld1q/vst1q take in memory). */
static int vec_decl(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Buffer *b = &k->bufs[s->buf];
    int64_t j;
    if (b->dtype != DT_FLOAT32 || b->scope != BUF_LOCAL || b->numel % pr->arm_vec->lanes || b->numel > 16 * pr->arm_vec->lanes ||
        pr->n_reg_locals >= MAX_REG_LOCALS || !small_kernel(k) || !stmt_blocks(pr, k, s->body[0], s->buf, -1))
        return 0;
    fprintf(f, "#if %s\n", pr->arm_vec->guard);
    indent(f, depth);
    fprintf(f, "{\n");
    indent(f, depth + 1);
    fprintf(f, "%s", pr->arm_vec->vector_type);
    for (j = 0; j < b->numel / pr->arm_vec->lanes; j++) {
        static const char *const x[] = {"x"}, *const zero = "0.0f";
        fprintf(f, "%s %s_v%lld = ", j ? "," : "", b->name, (long long)j);
        emit_template(pr, f, pr->arm_vec->tpl[LT_BROADCAST], x, 1, str_arg, &zero);
    }
    fprintf(f, ";\n");
    /* (a partial tile uses the first rows only) */
    indent(f, depth + 1);
    for (j = 0; j < b->numel / pr->arm_vec->lanes; j++)
        fprintf(f, "%s(void)%s_v%lld;", j ? " " : "", b->name, (long long)j);
    fprintf(f, "\n");
    pr->reg_locals[pr->n_reg_locals++] = s->buf;
    emit(pr, f, k, s->body[0], depth + 1);
    pr->n_reg_locals--;
    indent(f, depth);
    fprintf(f, "}\n");
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    return 1;
}

/* ---- 8-bit operands four at a time ----
 *
 * A reduce loop over r whose stores are all
 *     acc[c] = acc[c] + (int32)X[i + r] * (int32)W[j + r]
 * with X and W 8-bit buffers (int8 or uint8) indexed with unit stride in r
 * and an extent that is a multiple of 4 (lower/templates_arm.c leaves the
 * innermost reduce loop of such a sum whole) is printed four iterations at
 * a time: each distinct operand is one 32-bit load (memcpy: Cortex-M4/M7
 * load unaligned words), widened by SXTB16 (UXTB16 for uint8) into its
 * even bytes and, rotated by 8, its odd bytes, as two pairs of 16-bit
 * values; both operands are widened the same way, so the even pairs of X
 * and W line up and so do the odd ones, and each store becomes two SMLADs:
 *     acc = __smlad(X.even, W.even, acc); acc = __smlad(X.odd, W.odd, acc);
 * which adds X[r]W[r] + X[r+2]W[r+2] and X[r+1]W[r+1] + X[r+3]W[r+3]: the
 * same four products, summed modulo 2^32 like the scalar loop. A register
 * tile of R rows and L lanes loads R + L words for 4 R L multiply-adds,
 * where the byte-pair form above loads 2 (R + L) bytes per 2 R L. */

/* b's affine form is a's plus d (same terms): 1 and *d, else 0. */
static int aff_delta(const Expr *a, const Expr *b, int64_t *d)
{
    LqAffine fa, fb;
    if (!lq_affine(a, &fa) || !lq_affine(b, &fb))
        return 0;
    *d = fb.c0 - fa.c0;
    fb.c0 = fa.c0;
    return lq_same_affine(&fa, &fb);
}

/* collect_stores, also through loops of one iteration (an unrolled
 * window's single input channel), whose variables go to vars. */
static int collect_stores1(const Stmt *s, const Stmt **out, int *n, int *vars, int *nv)
{
    int i;
    if (s->kind == ST_FOR && s->extent == 1 && s->body[0]) {
        for (i = 0; i < *nv && vars[i] != s->var; i++)
            ;
        if (i == *nv) {
            if (*nv >= DSP_MAX_STORES)
                return 0;
            vars[(*nv)++] = s->var;
        }
        return collect_stores1(s->body[0], out, n, vars, nv);
    }
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            if (!s->body[i] || !collect_stores1(s->body[i], out, n, vars, nv))
                return 0;
        return 1;
    }
    if (s->kind != ST_STORE || *n >= DSP_MAX_STORES)
        return 0;
    out[(*n)++] = s;
    return 1;
}

/* (int32)load of an 8-bit buffer with unit stride in var, possibly under a
 * padding select whose condition does not move with var and whose other
 * arm is a constant of the buffer's type: the load (and the condition and
 * constant, else NULL), or NULL. */
static const Expr *byte_operand(const Kernel *k, const Expr *e, int var, const Expr **cond,
                                const Expr **other)
{
    DType t;
    *cond = *other = NULL;
    if (e->kind == EX_SELECT) {
        if (e->c->kind != EX_INT || lq_uses_var(e->a, var) || loads_local(k, e->a))
            return NULL;
        *cond = e->a;
        *other = e->c;
        e = e->b;
    }
    if (e->kind != EX_CAST || e->dtype != DT_INT32 || e->a->kind != EX_LOAD)
        return NULL;
    t = k->bufs[e->a->buf].dtype;
    if ((t != DT_INT8 && t != DT_UINT8) || k->bufs[e->a->buf].scope == BUF_LOCAL ||
        !lq_unit_stride(e->a->a, var) || loads_local(k, e->a->a))
        return NULL;
    if (*other && (t == DT_INT8 ? (*other)->ival < -128 || (*other)->ival > 127
                                : (*other)->ival < 0 || (*other)->ival > 255))
        return NULL;
    return e->a;
}

/* The four-at-a-time loop of a tile of at most 2 x 2 accumulators, every
 * operand of one side at a constant offset (0..4095) from that side's
 * pointer and none padded, as GCC/Clang inline assembly: the 4 accumulators,
 * 2 pointers and 6 temporaries are 12 core registers (the iteration count
 * stays in memory), so nothing spills, which the C form does not get from
 * GCC (it spilled two accumulators and the loop bound of a 3 x 2 tile),
 * and a build that reserves one more register (r7 as frame pointer, or r9
 * as platform register) still has them. Per step and row: one
 * LDR, SXTB16 to even and odd pairs (the lane words once per step), two
 * SMLADs per lane. Returns 0 (printing nothing) when the loop does not
 * fit. */
static int quad_asm(Printer *pr, FILE *f, const Kernel *k, const Stmt *const *st, int n, const int *ia,
                    const int *ib, const int *base, const int64_t *off, const Expr *const *ld,
                    const Expr *const *cnd, int nops, int64_t steps, int depth)
{
    int side[DSP_MAX_OPS], slot[DSP_MAX_OPS], cnt[2] = {0, 0}, bs[2] = {-1, -1}, i, j, h, u, st4;
    int unroll;
    int acc_of[2][2];
    const char *ext[2];
    if (steps < 1 || steps > (1 << 24) || n > 4)
        return 0;
    for (i = 0; i < nops; i++)
        side[i] = -1;
    for (i = 0; i < n; i++) {
        if (side[ia[i]] == 1 || side[ib[i]] == 0)
            return 0;
        side[ia[i]] = 0;
        side[ib[i]] = 1;
    }
    for (i = 0; i < nops; i++) {
        if (side[i] < 0 || cnd[i] || off[i] < 0 || off[i] > 4095 - 16)
            return 0;
        if (bs[side[i]] < 0)
            bs[side[i]] = base[i];
        else if (bs[side[i]] != base[i])
            return 0;
        if (cnt[side[i]] >= 2)
            return 0;
        slot[i] = cnt[side[i]]++;
    }
    for (h = 0; h < 2; h++) {
        const Expr *e = ld[bs[h]];
        ext[h] = k->bufs[e->buf].dtype == DT_UINT8 ? "uxtb16" : "sxtb16";
    }
    for (i = 0; i < 2; i++)
        for (j = 0; j < 2; j++)
            acc_of[i][j] = -1;
    for (i = 0; i < n; i++) {
        if (acc_of[slot[ia[i]]][slot[ib[i]]] >= 0)
            return 0;
        acc_of[slot[ia[i]]][slot[ib[i]]] = i;
    }
    unroll = steps % 4 == 0 ? 4 : steps % 2 == 0 ? 2 : 1;
    /* (not at -O0, where the frame pointer leaves 12 registers) */
    fprintf(f, "#if defined(__GNUC__) && defined(__OPTIMIZE__)\n");
    indent(f, depth + 1);
    fprintf(f, "{\n");
    for (i = 0; i < n; i++) {
        indent(f, depth + 2);
        fprintf(f, "int32_t q_a%d = ", i);
        print_acc(pr, f, k, st[i]);
        fprintf(f, ";\n");
    }
    indent(f, depth + 2);
    fprintf(f, "int32_t q_n = %lld;\n", (long long)(steps / unroll));
    indent(f, depth + 2);
    fprintf(f, "uint32_t q_t0, q_t1, q_t2, q_t3, q_t4, q_t5;\n");
    indent(f, depth + 2);
    fprintf(f, "__asm__(\"1:\\n\"\n");
    /* per step: side 1 words (up to 2) widened into t0/t1 and t2/t3, then
     * each side 0 word into t4/t5 and its multiply-accumulates; `unroll`
     * steps per iteration */
    for (st4 = 0; st4 < unroll; st4++) {
        for (u = 0; u < nops; u++) {
            if (side[u] != 1)
                continue;
            indent(f, depth + 4);
            fprintf(f, "\"ldr %%[t%d], [%%[p1], #%lld]\\n\"\n", 2 * slot[u] + 1,
                    (long long)(off[u] + 4 * st4));
            indent(f, depth + 4);
            fprintf(f, "\"%s %%[t%d], %%[t%d]\\n\"\n", ext[1], 2 * slot[u], 2 * slot[u] + 1);
            indent(f, depth + 4);
            fprintf(f, "\"%s %%[t%d], %%[t%d], ror #8\\n\"\n", ext[1], 2 * slot[u] + 1, 2 * slot[u] + 1);
        }
        for (u = 0; u < nops; u++) {
            if (side[u] != 0)
                continue;
            indent(f, depth + 4);
            fprintf(f, "\"ldr %%[t5], [%%[p0], #%lld]\\n\"\n", (long long)(off[u] + 4 * st4));
            indent(f, depth + 4);
            fprintf(f, "\"%s %%[t4], %%[t5]\\n\"\n", ext[0]);
            indent(f, depth + 4);
            fprintf(f, "\"%s %%[t5], %%[t5], ror #8\\n\"\n", ext[0]);
            for (j = 0; j < 2; j++) {
                int a = acc_of[slot[u]][j];
                if (a < 0)
                    continue;
                indent(f, depth + 4);
                fprintf(f, "\"smlad %%[a%d], %%[t4], %%[t%d], %%[a%d]\\n\"\n", a, 2 * j, a);
                indent(f, depth + 4);
                fprintf(f, "\"smlad %%[a%d], %%[t5], %%[t%d], %%[a%d]\\n\"\n", a, 2 * j + 1, a);
            }
        }
    }
    indent(f, depth + 4);
    fprintf(f, "\"add %%[p0], %%[p0], #%d\\n\"\n", 4 * unroll);
    indent(f, depth + 4);
    fprintf(f, "\"add %%[p1], %%[p1], #%d\\n\"\n", 4 * unroll);
    indent(f, depth + 4);
    fprintf(f, "\"ldr %%[t0], %%[n]\\n\"\n");
    indent(f, depth + 4);
    fprintf(f, "\"subs %%[t0], %%[t0], #1\\n\"\n");
    indent(f, depth + 4);
    fprintf(f, "\"str %%[t0], %%[n]\\n\"\n");
    indent(f, depth + 4);
    fprintf(f, "\"bne 1b\\n\"\n");
    indent(f, depth + 4);
    fprintf(f, ": ");
    for (i = 0; i < n; i++)
        fprintf(f, "[a%d] \"+r\"(q_a%d), ", i, i);
    fprintf(f, "[p0] \"+r\"(q_p%d), [p1] \"+r\"(q_p%d), [n] \"+m\"(q_n),\n", bs[0], bs[1]);
    indent(f, depth + 4);
    fprintf(f, "  [t0] \"=&r\"(q_t0), [t1] \"=&r\"(q_t1), [t2] \"=&r\"(q_t2), [t3] \"=&r\"(q_t3), "
               "[t4] \"=&r\"(q_t4), [t5] \"=&r\"(q_t5)\n");
    indent(f, depth + 4);
    fprintf(f, ":\n");
    indent(f, depth + 4);
    fprintf(f, ": \"cc\");\n");
    indent(f, depth + 2);
    fprintf(f, "(void)q_t0; (void)q_t1; (void)q_t2; (void)q_t3; (void)q_t4; (void)q_t5;\n");
    for (i = 0; i < n; i++) {
        indent(f, depth + 2);
        print_acc(pr, f, k, st[i]);
        fprintf(f, " = q_a%d;\n", i);
    }
    indent(f, depth + 1);
    fprintf(f, "}\n#else\n");
    return 1;
}

static int quad_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *st[DSP_MAX_STORES];
    const Expr *ops[DSP_MAX_OPS];
    int n = 0, nops = 0, i, j, u, unroll, ia[DSP_MAX_STORES], ib[DSP_MAX_STORES], base[DSP_MAX_OPS];
    int64_t off[DSP_MAX_OPS], steps;
    int asm_form;
    const Expr *ld[DSP_MAX_OPS], *cnd[DSP_MAX_OPS], *oth[DSP_MAX_OPS];
    const char *r = k->var_names[s->var];
    int ones[DSP_MAX_STORES], nones = 0;
    if (s->kind != ST_FOR || s->for_kind == FOR_PARALLEL || s->extent < 4 ||
        s->extent >= (1 << 30) || !s->body[0] || !collect_stores1(s->body[0], st, &n, ones, &nones) || n == 0 ||
        !small_kernel(k))
        return 0;
    for (i = 0; i < n; i++) {
        const Expr *c, *o;
        if (!mac_store(k, st[i], s->var) || nops + 2 > DSP_MAX_OPS)
            return 0;
        if (!byte_operand(k, st[i]->value->b->a, s->var, &c, &o) ||
            !byte_operand(k, st[i]->value->b->b, s->var, &c, &o))
            return 0;
        ia[i] = op_index(ops, &nops, st[i]->value->b->a);
        ib[i] = op_index(ops, &nops, st[i]->value->b->b);
    }
    for (i = 0; i < nops; i++)
        ld[i] = byte_operand(k, ops[i], s->var, &cnd[i], &oth[i]);
    /* one pointer per buffer, every operand at a constant offset from it,
     * all moving by 4 bytes per step */
    for (i = 0; i < nops; i++) {
        base[i] = i;
        off[i] = 0;
        for (j = 0; j < i; j++)
            if (base[j] == j && ld[j]->buf == ld[i]->buf && aff_delta(ld[j]->a, ld[i]->a, &off[i])) {
                base[i] = j;
                break;
            }
    }
    steps = s->extent / 4;
    unroll = 1;
    fprintf(f, DSP_GUARD);
    indent(f, depth);
    fprintf(f, "{ /* %s: four iterations per step, one 32-bit load per operand, SXTB16 into even "
               "and odd pairs, two SMLADs per accumulator */\n", r);
    for (i = 0; i < nops; i++)
        if (base[i] == i) {
            indent(f, depth + 1);
            fprintf(f, "const %s *q_p%d;\n", emit_ctype(k->bufs[ld[i]->buf].dtype), i);
        }
    for (i = 0; i < nones; i++) {
        indent(f, depth + 1);
        fprintf(f, "const int32_t %s = 0;\n", k->var_names[ones[i]]);
        indent(f, depth + 1);
        fprintf(f, "(void)%s;\n", k->var_names[ones[i]]);
    }
    indent(f, depth + 1);
    fprintf(f, "{\n");
    indent(f, depth + 2);
    fprintf(f, "const int32_t %s = 0;\n", r);
    indent(f, depth + 2);
    fprintf(f, "(void)%s;\n", r);
    for (i = 0; i < nops; i++)
        if (base[i] == i) {
            indent(f, depth + 2);
            fprintf(f, "q_p%d = &%s[", i, k->bufs[ld[i]->buf].name);
            emit_index(pr, f, k, ld[i]->a, 0);
            fprintf(f, "];\n");
        }
    indent(f, depth + 1);
    fprintf(f, "}\n");
    asm_form = quad_asm(pr, f, k, st, n, ia, ib, base, off, ld, cnd, nops, steps, depth);
    indent(f, depth + 1);
    fprintf(f, "for (int32_t %s_quad = 0; %s_quad < %lld; %s_quad++) {\n", r, r,
            (long long)(steps / unroll), r);
    indent(f, depth + 2);
    fprintf(f, "uint32_t q_w[%d];\n", nops);
    indent(f, depth + 2);
    fprintf(f, "int32_t q_e[%d], q_o[%d];\n", nops, nops);
    /* in the order the registers allow: each operand loaded and widened
     * just before the first multiply-accumulate that needs it */
    for (u = 0; u < unroll; u++) {
        int done[DSP_MAX_OPS];
        for (i = 0; i < nops; i++)
            done[i] = 0;
        for (i = 0; i < n; i++) {
            int h, o2[2], t;
            o2[0] = ia[i];
            o2[1] = ib[i];
            for (t = 0; t < 2; t++) {
                const char *x;
                j = o2[t];
                if (done[j])
                    continue;
                done[j] = 1;
                x = k->bufs[ld[j]->buf].dtype == DT_UINT8 ? "__uxtb16" : "__sxtb16";
                indent(f, depth + 2);
                if (cnd[j]) { /* the padding: the zero point in all four bytes */
                    fprintf(f, "if (");
                    emit_expr(pr, f, k, cnd[j]);
                    fprintf(f, ")\n");
                    indent(f, depth + 3);
                }
                fprintf(f, "memcpy(&q_w[%d], q_p%d + %lld, 4);\n", j, base[j],
                        (long long)(off[j] + 4 * u));
                if (cnd[j]) {
                    indent(f, depth + 2);
                    fprintf(f, "else\n");
                    indent(f, depth + 3);
                    fprintf(f, "q_w[%d] = 0x%08lxu;\n", j,
                            (unsigned long)((uint32_t)(uint8_t)oth[j]->ival * 0x01010101u));
                }
                indent(f, depth + 2);
                fprintf(f, "q_e[%d] = (int32_t)%s(%sq_w[%d]);\n", j, x,
                        x[2] == 's' ? "(int32_t)" : "", j);
                indent(f, depth + 2);
                fprintf(f, "q_o[%d] = tvmcc_%s_odd(q_w[%d]);\n", j, x + 2, j);
            }
            for (h = 0; h < 2; h++) {
                indent(f, depth + 2);
                print_acc(pr, f, k, st[i]);
                fprintf(f, " = __smlad(q_%c[%d], q_%c[%d], ", h ? 'o' : 'e', ia[i], h ? 'o' : 'e',
                        ib[i]);
                print_acc(pr, f, k, st[i]);
                fprintf(f, ");\n");
            }
        }
    }
    for (i = 0; i < nops; i++)
        if (base[i] == i) {
            indent(f, depth + 2);
            fprintf(f, "q_p%d += %d;\n", i, 4 * unroll);
        }
    indent(f, depth + 1);
    fprintf(f, "}\n");
    if (asm_form)
        fprintf(f, "#endif\n");
    for (i = 0; i < s->extent % 4; i++) { /* the last iterations one at a time */
        indent(f, depth + 1);
        fprintf(f, "{\n");
        indent(f, depth + 2);
        fprintf(f, "const int32_t %s = %lld;\n", r, (long long)(steps * 4 + i));
        indent(f, depth + 2);
        fprintf(f, "(void)%s;\n", r);
        emit(pr, f, k, s->body[0], depth + 2);
        indent(f, depth + 1);
        fprintf(f, "}\n");
    }
    indent(f, depth);
    fprintf(f, "}\n");
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    return 1;
}

/* ---- 8-bit lanes four at a time ----
 *
 * A loop whose body is a register tile of stores
 *     acc[a + l] = acc[a + l] + X_l * W_l        (l = 0, 1, 2, 3)
 * where X_l = (int32)x[i + l] (possibly under a padding select whose
 * condition is the same for the four lanes, which then yields the zero
 * point) and W_l = (int32)w[j + l], x and w 8-bit buffers: the four lanes
 * of X are one 32-bit load, widened by SXTB16 (UXTB16 for uint8) into
 * lanes 0 and 2 (even) and, rotated by 8, lanes 1 and 3 (odd); W likewise;
 * each lane is then one 16 x 16-bit multiply-accumulate of the matching
 * halves: SMLABB for lanes 0 and 1, SMLATT for lanes 2 and 3. The products
 * and sums are those of the scalar body (exact in int32). The NHWC
 * depthwise convs of lower/templates_arm.c (lane_quad) take this form. */

/* The load under e (through a select and the int32 cast), the condition
 * (or NULL) and the value a false condition gives. */
static const Expr *lane_operand(const Kernel *k, const Expr *e, const Expr **cond, const Expr **other)
{
    DType t;
    *cond = *other = NULL;
    if (e->kind == EX_INT) /* the zero point where the window is all padding */
        return e->dtype == DT_INT32 && e->ival >= -128 && e->ival <= 255 ? e : NULL;
    if (e->kind == EX_SELECT) {
        if (e->c->kind != EX_INT || e->c->dtype != DT_INT32 || loads_local(k, e->a))
            return NULL;
        *cond = e->a;
        *other = e->c;
        e = e->b;
    }
    if (e->kind != EX_CAST || e->dtype != DT_INT32 || e->a->kind != EX_LOAD)
        return NULL;
    t = k->bufs[e->a->buf].dtype;
    if ((t != DT_INT8 && t != DT_UINT8) || k->bufs[e->a->buf].scope == BUF_LOCAL ||
        loads_local(k, e->a->a))
        return NULL;
    if (*other && (t == DT_INT8 ? (*other)->ival < -128 || (*other)->ival > 127
                                : (*other)->ival < 0 || (*other)->ival > 255))
        return NULL;
    return e->a;
}

/* Store s2 is lane l of the group whose lane 0 is s1. */
static int is_lane(const Kernel *k, const Stmt *s1, const Stmt *s2, int64_t l)
{
    const Expr *m1 = s1->value->b, *m2 = s2->value->b, *c1, *c2, *o1, *o2, *x1, *x2;
    int64_t d;
    int h;
    if (s1->buf != s2->buf || !aff_delta(s1->index, s2->index, &d) || d != l)
        return 0;
    for (h = 0; h < 2; h++) {
        x1 = lane_operand(k, h ? m1->b : m1->a, &c1, &o1);
        x2 = lane_operand(k, h ? m2->b : m2->a, &c2, &o2);
        if (!x1 || !x2)
            return 0;
        if (x1->kind == EX_INT || x2->kind == EX_INT) {
            if (x1->kind != x2->kind || x1->ival != x2->ival)
                return 0;
            continue;
        }
        if (x1->buf != x2->buf || !aff_delta(x1->a, x2->a, &d) || d != l)
            return 0;
        if (!c1 != !c2 || (c1 && (!lq_same_expr(c1, c2) || o1->ival != o2->ival)))
            return 0;
    }
    return 1;
}

/* op_index for lane operands, two reading the same address (the same
 * load, condition and padding value; index expressions compared by their
 * affine forms: a depthwise tile's next row at tap j reads what this row
 * reads at tap j + 1) counting as one. */
static int lane_op_index(const Kernel *k, const Expr **ops, int *n, const Expr *e)
{
    const Expr *c1, *o1, *x1 = lane_operand(k, e, &c1, &o1), *c2, *o2, *x2;
    int64_t d;
    int i;
    for (i = 0; i < *n; i++) {
        if (lq_same_expr(ops[i], e))
            return i;
        x2 = lane_operand(k, ops[i], &c2, &o2);
        if (!x1 || !x2 || x1->kind != EX_LOAD || x2->kind != EX_LOAD || x1->buf != x2->buf ||
            !aff_delta(x1->a, x2->a, &d) || d != 0 || !c1 != !c2)
            continue;
        if (c1 && (!lq_same_expr(c1, c2) || o1->ival != o2->ival))
            continue;
        return i;
    }
    ops[*n] = e;
    return (*n)++;
}

static int lane_quads(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    int ones[DSP_MAX_STORES], nones = 0;
    const Stmt *st[DSP_MAX_STORES];
    const Expr *ops[DSP_MAX_OPS];
    int grp[DSP_MAX_STORES][4], ia[DSP_MAX_STORES], ib[DSP_MAX_STORES], used[DSP_MAX_STORES];
    int n = 0, nops = 0, ng = 0, i, j, l;
    const char *r = k->var_names[s->var];
    if (s->kind != ST_FOR || s->for_kind == FOR_PARALLEL || s->extent >= (1 << 30) || !s->body[0] ||
        !collect_stores1(s->body[0], st, &n, ones, &nones) || n == 0 || n % 4 || !small_kernel(k))
        return 0;
    for (i = 0; i < n; i++) {
        const Expr *c, *o;
        if (!mac_store(k, st[i], -1) || !lane_operand(k, st[i]->value->b->a, &c, &o) ||
            !lane_operand(k, st[i]->value->b->b, &c, &o))
            return 0;
        used[i] = 0;
    }
    for (i = 0; i < n; i++) {
        if (used[i])
            continue;
        grp[ng][0] = i;
        used[i] = 1;
        for (l = 1; l < 4; l++) {
            for (j = 0; j < n && (used[j] || !is_lane(k, st[i], st[j], l)); j++)
                ;
            if (j == n)
                return 0;
            grp[ng][l] = j;
            used[j] = 1;
        }
        if (nops + 2 > DSP_MAX_OPS)
            return 0;
        ia[ng] = lane_op_index(k, ops, &nops, st[i]->value->b->a);
        ib[ng] = lane_op_index(k, ops, &nops, st[i]->value->b->b);
        ng++;
    }
    fprintf(f, DSP_GUARD);
    indent(f, depth);
    fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) { /* lanes in fours: one 32-bit load per "
               "operand, SXTB16, SMLABB / SMLATT */\n", r, r, (long long)s->extent, r);
    for (i = 0; i < nones; i++) {
        indent(f, depth + 1);
        fprintf(f, "const int32_t %s = 0;\n", k->var_names[ones[i]]);
        indent(f, depth + 1);
        fprintf(f, "(void)%s;\n", k->var_names[ones[i]]);
    }
    indent(f, depth + 1);
    fprintf(f, "uint32_t l_w[%d];\n", nops);
    indent(f, depth + 1);
    fprintf(f, "int32_t l_e[%d], l_o[%d];\n", nops, nops);
    for (i = 0; i < nops; i++) {
        const Expr *c, *o, *x = lane_operand(k, ops[i], &c, &o);
        const char *w;
        if (x->kind == EX_INT) { /* the same value in each half of both pairs */
            indent(f, depth + 1);
            fprintf(f, "l_e[%d] = l_o[%d] = (int32_t)0x%08lxu;\n", i, i,
                    (unsigned long)((uint32_t)(uint16_t)x->ival * 0x10001u));
            continue;
        }
        w = k->bufs[x->buf].dtype == DT_UINT8 ? "uxtb16" : "sxtb16";
        indent(f, depth + 1);
        if (c) {
            fprintf(f, "if (");
            emit_expr(pr, f, k, c);
            fprintf(f, ")\n");
            indent(f, depth + 2);
        }
        fprintf(f, "memcpy(&l_w[%d], &%s[", i, k->bufs[x->buf].name);
        emit_index(pr, f, k, x->a, 0);
        fprintf(f, "], 4);\n");
        if (c) {
            indent(f, depth + 1);
            fprintf(f, "else\n");
            indent(f, depth + 2);
            fprintf(f, "l_w[%d] = 0x%08lxu;\n", i,
                    (unsigned long)((uint32_t)(uint8_t)o->ival * 0x01010101u));
        }
        indent(f, depth + 1);
        fprintf(f, "l_e[%d] = (int32_t)__%s(%sl_w[%d]);\n", i, w, w[0] == 's' ? "(int32_t)" : "", i);
        indent(f, depth + 1);
        fprintf(f, "l_o[%d] = tvmcc_%s_odd(l_w[%d]);\n", i, w, i);
    }
    for (i = 0; i < ng; i++)
        for (l = 0; l < 4; l++) {
            indent(f, depth + 1);
            print_acc(pr, f, k, st[grp[i][l]]);
            fprintf(f, " = __smla%s(l_%c[%d], l_%c[%d], ", l < 2 ? "bb" : "tt", l % 2 ? 'o' : 'e',
                    ia[i], l % 2 ? 'o' : 'e', ib[i]);
            print_acc(pr, f, k, st[grp[i][l]]);
            fprintf(f, ");\n");
        }
    indent(f, depth);
    fprintf(f, "}\n");
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    return 1;
}

/* The first load of dtype t in e whose buffer is not skip. */
static const Expr *m4q_load(const Kernel *k, const Expr *e, DType t, int skip)
{
    const Expr *r;
    if (!e)
        return NULL;
    if (e->kind == EX_LOAD && e->buf != skip && k->bufs[e->buf].dtype == t)
        return e;
    if ((r = m4q_load(k, e->a, t, skip)) || (r = m4q_load(k, e->b, t, skip)))
        return r;
    return m4q_load(k, e->c, t, skip);
}

/* The #else branch of an intrinsic form: the nest's portable loops (not a
 * miss of the printers); 1, for the printer to return. */
static int m4_portable_else(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    pr->in_portable++;
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    pr->in_portable--;
    return 1;
}

/* The nest of tpl_qconv_m4.c: for pr: { for rr: for cc: acc[..] = init[..];
 * for g: for rr: for cc: for h: acc[..] += xc[..] * byte of wp[..] },
 * printed as one call of tvmcc_m4q_2x3 at the nest's start (every index
 * is 0 at pr = g = 0), the loops under #else. */
static int m4q_tile(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *seq = s->body[0], *in, *up;
    const Expr *ib, *xc, *wp;
    int acc;
    if (!seq || seq->kind != ST_SEQ || seq->n_body != 2)
        return 0;
    for (in = seq->body[0]; in && in->kind == ST_FOR; in = in->body[0])
        ;
    for (up = seq->body[1]; up && up->kind == ST_FOR; up = up->body[0])
        ;
    if (!in || !up || in->kind != ST_STORE || up->kind != ST_STORE || seq->body[1]->kind != ST_FOR)
        return 0;
    acc = in->buf;
    ib = in->value;
    xc = m4q_load(k, up->value, DT_INT16, acc);
    wp = m4q_load(k, up->value, DT_INT32, acc);
    if (ib->kind != EX_LOAD || !xc || !wp || up->buf != acc)
        return 0;
    fprintf(f, "#if TVMCC_M4Q\n");
    indent(f, depth);
    fprintf(f, "tvmcc_m4q_2x3(%s, %s, %s, %s, %lld, %lld);\n", k->bufs[wp->buf].name, k->bufs[xc->buf].name,
            k->bufs[acc].name, k->bufs[ib->buf].name, (long long)seq->body[1]->extent, (long long)s->extent);
    return m4_portable_else(pr, f, k, s, depth, emit);
}


/* The Helium form of tpl_qconv_m4.c's tile (TZ_MVE_2X3): for pr: { for rr,
 * cc: acc[(2pr + rr)*3 + cc] = init[2pr + rr]; for k < Kp: for rr, cc:
 * acc += int32(xm[cc*Kp + k]) * int32(wm[(2pr + rr)*Kp + k]) }. Per step of
 * 16 reduce points three column vectors and the pair's two weight vectors
 * (VLDRB.8) and six VMLADAVA.S8 into scalar sums. */
static int mve_tile(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *seq = s->body[0], *in, *up;
    const Expr *prod, *xm, *wm, *ib;
    int64_t Kp = s->tz_arg[0];
    int acc, r, c;
    if (!seq || seq->kind != ST_SEQ || seq->n_body != 2 || Kp % 16)
        return 0;
    for (in = seq->body[0]; in && in->kind == ST_FOR; in = in->body[0])
        ;
    for (up = seq->body[1]; up && up->kind == ST_FOR; up = up->body[0])
        ;
    if (!in || !up || in->kind != ST_STORE || up->kind != ST_STORE || in->value->kind != EX_LOAD ||
        up->value->kind != EX_BINARY || up->value->op != BIN_ADD)
        return 0;
    acc = in->buf;
    ib = in->value;
    prod = up->value->b;
    if (prod->kind != EX_BINARY || prod->op != BIN_MUL || prod->a->kind != EX_CAST || prod->b->kind != EX_CAST ||
        prod->a->a->kind != EX_LOAD || prod->b->a->kind != EX_LOAD)
        return 0;
    xm = prod->a->a;
    wm = prod->b->a;
    if (k->bufs[xm->buf].dtype != DT_INT8 || k->bufs[wm->buf].dtype != DT_INT8)
        return 0;
    fprintf(f, "#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)\n");
    indent(f, depth);
    fprintf(f, "for (int32_t m4_p = 0; m4_p < %lld; m4_p++) { /* Helium: VMLADAVA.S8, 2 x 3 sums */\n",
            (long long)s->extent);
    indent(f, depth + 1);
    fprintf(f, "const int8_t *m4_w0 = &%s[m4_p * %lld], *m4_w1 = m4_w0 + %lld;\n", k->bufs[wm->buf].name,
            (long long)(2 * Kp), (long long)Kp);
    for (r = 0; r < 2; r++) {
        indent(f, depth + 1);
        fprintf(f, "int32_t m4_a%d0 = %s[m4_p * 2 + %d], m4_a%d1 = m4_a%d0, m4_a%d2 = m4_a%d0;\n", r,
                k->bufs[ib->buf].name, r, r, r, r, r);
    }
    indent(f, depth + 1);
    fprintf(f, "for (int32_t m4_k = 0; m4_k < %lld; m4_k += 16) {\n", (long long)Kp);
    for (c = 0; c < 3; c++) {
        indent(f, depth + 2);
        fprintf(f, "const int8x16_t m4_x%d = vldrbq_s8(&%s[%lld + m4_k]);\n", c, k->bufs[xm->buf].name,
                (long long)(c * Kp));
    }
    for (r = 0; r < 2; r++) {
        indent(f, depth + 2);
        fprintf(f, "const int8x16_t m4_v%d = vldrbq_s8(m4_w%d + m4_k);\n", r, r);
    }
    for (r = 0; r < 2; r++)
        for (c = 0; c < 3; c++) {
            indent(f, depth + 2);
            fprintf(f, "m4_a%d%d = vmladavaq_s8(m4_a%d%d, m4_x%d, m4_v%d);\n", r, c, r, c, c, r);
        }
    indent(f, depth + 1);
    fprintf(f, "}\n");
    for (r = 0; r < 2; r++)
        for (c = 0; c < 3; c++) {
            indent(f, depth + 1);
            fprintf(f, "%s[(m4_p * 2 + %d) * 3 + %d] = m4_a%d%d;\n", k->bufs[acc].name, r, c, r, c);
        }
    indent(f, depth);
    fprintf(f, "}\n");
    return m4_portable_else(pr, f, k, s, depth, emit);
}

/* The im2col step of tpl_qconv_m4.c: for c4: four stores xc[i0 + pos] =
 * int16(D) of the bytes x[j0 .. j0+3] (D: int32 of the load, under a
 * padding select with the zero point). Printed as one 32-bit load (the
 * zero point in all four bytes for the padding) split by SXTB16 (UXTB16
 * for uint8) into the even bytes (halfwords 0, 1: k0, k2) and the odd ones
 * (halfwords 2, 3: k1, k3). */
/* A copy of index e without its clamps min(max(x, lo), hi) to constant
 * bounds (x in their place), its new nodes taken from the pool; NULL when
 * e has no clamp or the pool is too small. */
typedef struct M4qPool {
    Expr node[96];
    int n;
} M4qPool;

static Expr *m4q_unclamp(M4qPool *p, const Expr *e)
{
    Expr *n, *a, *b, *c;
    if (!e)
        return NULL;
    if (e->kind == EX_BINARY && (e->op == BIN_MIN || e->op == BIN_MAX) && e->b->kind == EX_INT &&
        e->a->kind == EX_BINARY && e->a->op == (e->op == BIN_MIN ? BIN_MAX : BIN_MIN) && e->a->b->kind == EX_INT) {
        /* a clamp to both bounds (a lone min, the last tile's position
         * clamp, stays) */
        a = m4q_unclamp(p, e->a->a);
        return a ? a : (Expr *)e->a->a;
    }
    a = m4q_unclamp(p, e->a);
    b = m4q_unclamp(p, e->b);
    c = m4q_unclamp(p, e->c);
    if ((!a && !b && !c) || p->n == (int)(sizeof p->node / sizeof p->node[0]))
        return NULL;
    n = &p->node[p->n++];
    *n = *e;
    n->nidx = 0;
    n->idx = NULL;
    n->a = a ? a : e->a;
    n->b = b ? b : e->b;
    n->c = c ? c : e->c;
    return n;
}

/* The two stores of one group: the even halfwords (k0, k2) at the
 * store's index, the odd ones (k1, k3) two halfwords on. */
static void m4q_widen_store(Printer *pr, FILE *f, const Kernel *k, const Stmt *st, const char *e, const char *o,
                            int depth)
{
    indent(f, depth);
    fprintf(f, "memcpy(&%s[", k->bufs[st->buf].name);
    emit_index(pr, f, k, st->index, 0);
    fprintf(f, "], &%s, 4);\n", e);
    indent(f, depth);
    fprintf(f, "memcpy(&%s[(", k->bufs[st->buf].name);
    emit_index(pr, f, k, st->index, 0);
    fprintf(f, ") + 2], &%s, 4);\n", o);
}

/* The loop over the groups: per group one word of x, SXTB16 (UXTB16) even
 * and odd. cond (NULL: none) is tested per group, the zero point in all
 * four bytes where it fails; unclamp: the index without its clamps to the
 * image (inside the window they change nothing and the plain index
 * strength-reduces). */
static void m4q_widen_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, const Stmt *st, const Expr *ld,
                           int u8, const Expr *cond, int unclamp, int64_t zx, int depth)
{
    const char *xv = k->var_names[s->var];
    int64_t n = s->extent, un = n <= 4 ? n : n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1, i;
    indent(f, depth);
    fprintf(f, "for (int32_t m4_u = 0; m4_u < %lld; m4_u += %lld) { /* four bytes: one load, %s even and odd */\n",
            (long long)n, (long long)un, u8 ? "UXTB16" : "SXTB16");
    indent(f, depth + 1);
    fprintf(f, "uint32_t m4_w;\n");
    indent(f, depth + 1);
    fprintf(f, "int32_t m4_e, m4_o;\n");
    for (i = 0; i < un; i++) { /* unrolled: the loop's compare and branch cost as much as the copy */
        indent(f, depth + 1);
        fprintf(f, "{\n");
        indent(f, depth + 2);
        fprintf(f, "const int32_t %s = m4_u + %lld;\n", xv, (long long)i);
        indent(f, depth + 2);
        if (cond) {
            fprintf(f, "if (");
            emit_expr(pr, f, k, cond);
            fprintf(f, ")\n");
            indent(f, depth + 3);
        }
        fprintf(f, "memcpy(&m4_w, &%s[", k->bufs[ld->buf].name);
        if (unclamp) {
            M4qPool *pool = malloc(sizeof *pool);
            const Expr *plain = NULL;
            if (pool) {
                pool->n = 0;
                plain = m4q_unclamp(pool, ld->a);
            }
            emit_index(pr, f, k, plain ? plain : ld->a, 0);
            free(pool);
        } else {
            emit_index(pr, f, k, ld->a, 0);
        }
        fprintf(f, "], 4);\n");
        if (cond) {
            indent(f, depth + 2);
            fprintf(f, "else\n");
            indent(f, depth + 3);
            fprintf(f, "m4_w = 0x%08lxu;\n", (unsigned long)((uint32_t)(uint8_t)zx * 0x01010101u));
        }
        indent(f, depth + 2);
        if (u8)
            fprintf(f, "m4_e = (int32_t)__uxtb16(m4_w);\n");
        else
            fprintf(f, "m4_e = (int32_t)__sxtb16((int32_t)m4_w);\n");
        indent(f, depth + 2);
        fprintf(f, "m4_o = tvmcc_%s_odd(m4_w);\n", u8 ? "uxtb16" : "sxtb16");
        m4q_widen_store(pr, f, k, st, "m4_e", "m4_o", depth + 2);
        indent(f, depth + 1);
        fprintf(f, "}\n");
    }
    indent(f, depth);
    fprintf(f, "}\n");
}

static int m4q_widen(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *st = s->body[0] && s->body[0]->kind == ST_SEQ && s->body[0]->n_body == 4 ? s->body[0]->body[0] : NULL;
    const Expr *v, *cond = NULL, *ld;
    int64_t zx = 0;
    int u8;
    const char *xv = k->var_names[s->var];
    if (!st || st->kind != ST_STORE)
        return 0;
    v = st->value;
    if (v->kind == EX_CAST)
        v = v->a;
    if (v->kind == EX_SELECT) {
        if (v->c->kind != EX_INT)
            return 0;
        cond = v->a;
        zx = v->c->ival;
        v = v->b;
    }
    if (v->kind != EX_CAST || v->a->kind != EX_LOAD)
        return 0;
    ld = v->a;
    u8 = k->bufs[ld->buf].dtype == DT_UINT8;
    if (!u8 && k->bufs[ld->buf].dtype != DT_INT8)
        return 0;
    /* the padding value as one byte of the data's type (the zero point) */
    if (cond && (u8 ? zx < 0 || zx > 255 : zx < -128 || zx > 127))
        return 0;
    fprintf(f, DSP_GUARD);
    if (cond && !lq_uses_var(cond, s->var)) {
        /* the window test does not change over the four-byte groups:
         * tested once, the padding's halfwords stored as constants */
        uint32_t h = (uint32_t)(uint16_t)(int16_t)zx * 0x10001u;
        indent(f, depth);
        fprintf(f, "if (");
        emit_expr(pr, f, k, cond);
        fprintf(f, ") {\n");
        m4q_widen_loop(pr, f, k, s, st, ld, u8, NULL, 1, zx, depth + 1);
        indent(f, depth);
        fprintf(f, "} else {\n");
        indent(f, depth + 1);
        fprintf(f, "const int32_t m4_z = (int32_t)0x%08lxu;\n", (unsigned long)h);
        indent(f, depth + 1);
        fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) {\n", xv, xv, (long long)s->extent, xv);
        m4q_widen_store(pr, f, k, st, "m4_z", "m4_z", depth + 2);
        indent(f, depth + 1);
        fprintf(f, "}\n");
        indent(f, depth);
        fprintf(f, "}\n");
    } else {
        m4q_widen_loop(pr, f, k, s, st, ld, u8, cond, cond != NULL, zx, depth);
    }
    return m4_portable_else(pr, f, k, s, depth, emit);
}

/* The widening of one channel into tpl_qdw_m4's int16 plane (TZ_M4Q_PLANE):
 * for ih: for iw: xw[(ih + pt) * Wp + iw + pl] = int16(x[.. iw * C + c]).
 * Printed two columns per word store (two byte loads and a pack), from an
 * even plane column: when the first image column pl is odd, the first word
 * is the zero point (the padding column pl - 1, which the plane already
 * holds) and column 0; two words per loop step. */
static int m4q_plane(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *wl = s->body[0], *st;
    const Expr *v;
    const char *ih = k->var_names[s->var], *iw, *xt;
    int64_t pl = s->tz_arg[0], C = s->tz_arg[1], zx = s->tz_arg[2], n, j;
    if (!wl || wl->kind != ST_FOR || !(st = wl->body[0]) || st->kind != ST_STORE ||
        k->bufs[st->buf].dtype != DT_INT16)
        return 0;
    v = st->value;
    if (v->kind != EX_CAST || v->a->kind != EX_LOAD)
        return 0;
    v = v->a;
    if (k->bufs[v->buf].dtype != DT_INT8 && k->bufs[v->buf].dtype != DT_UINT8)
        return 0;
    xt = k->bufs[v->buf].dtype == DT_INT8 ? "int8_t" : "uint8_t";
    iw = k->var_names[wl->var];
    n = wl->extent;
    fprintf(f, DSP_GUARD);
    indent(f, depth);
    fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) { /* two columns per word */\n", ih, ih, (long long)s->extent, ih);
    indent(f, depth + 1);
    fprintf(f, "const %s *m4_s;\n", xt);
    indent(f, depth + 1);
    fprintf(f, "int16_t *m4_d;\n");
    indent(f, depth + 1);
    fprintf(f, "int32_t m4_v;\n");
    indent(f, depth + 1);
    fprintf(f, "{\n");
    indent(f, depth + 2);
    fprintf(f, "const int32_t %s = 0;\n", iw);
    indent(f, depth + 2);
    fprintf(f, "m4_s = &%s[", k->bufs[v->buf].name);
    emit_index(pr, f, k, v->a, 0);
    fprintf(f, "];\n");
    indent(f, depth + 2);
    fprintf(f, "m4_d = &%s[", k->bufs[st->buf].name);
    emit_index(pr, f, k, st->index, 0);
    fprintf(f, "];\n");
    indent(f, depth + 1);
    fprintf(f, "}\n");
    if (pl % 2 && n > 0) {
        indent(f, depth + 1);
        fprintf(f, "m4_v = tvmcc_pk16(%lld, m4_s[0]);\n", (long long)zx);
        indent(f, depth + 1);
        fprintf(f, "memcpy(m4_d - 1, &m4_v, 4);\n");
        indent(f, depth + 1);
        fprintf(f, "m4_s += %lld;\n", (long long)C);
        indent(f, depth + 1);
        fprintf(f, "m4_d += 1;\n");
        n--;
    }
    if (n >= 4) {
        indent(f, depth + 1);
        fprintf(f, "for (int32_t m4_j = 0; m4_j < %lld; m4_j += 4) {\n", (long long)(n / 4 * 4));
        for (j = 0; j < 4; j += 2) {
            indent(f, depth + 2);
            fprintf(f, "m4_v = tvmcc_pk16(m4_s[(m4_j + %lld) * %lld], m4_s[(m4_j + %lld) * %lld]);\n", (long long)j,
                    (long long)C, (long long)(j + 1), (long long)C);
            indent(f, depth + 2);
            fprintf(f, "memcpy(m4_d + m4_j + %lld, &m4_v, 4);\n", (long long)j);
        }
        indent(f, depth + 1);
        fprintf(f, "}\n");
    }
    for (j = n / 4 * 4; j + 1 < n; j += 2) {
        indent(f, depth + 1);
        fprintf(f, "m4_v = tvmcc_pk16(m4_s[%lld], m4_s[%lld]);\n", (long long)(j * C), (long long)((j + 1) * C));
        indent(f, depth + 1);
        fprintf(f, "memcpy(m4_d + %lld, &m4_v, 4);\n", (long long)j);
    }
    if (n % 2) {
        indent(f, depth + 1);
        fprintf(f, "m4_d[%lld] = (int16_t)m4_s[%lld];\n", (long long)(n - 1), (long long)((n - 1) * C));
    }
    indent(f, depth);
    fprintf(f, "}\n");
    return m4_portable_else(pr, f, k, s, depth, emit);
}

/* The sums of output m4_ow (into m4_a0) and, when two, of m4_ow + 1 (into
 * m4_a1, stride 1): per kernel row r, m4_q<r> is the word of int16
 * columns S*m4_ow, S*m4_ow + 1 (carried from the step before: its m4_p),
 * m4_p the word two columns on, and two multiply-accumulates per output;
 * m4_p is carried to the next step (two columns on at stride 1 with two
 * outputs per step, and at stride 2 with one). */
static void m4q_dw3_sums(FILE *f, int depth, int64_t Wp, int64_t S, int two)
{
    int r;
    for (r = 0; r < 3; r++) {
        indent(f, depth);
        fprintf(f, "memcpy(&m4_p, m4_r0 + %lld + %lld * m4_ow, 4);\n", (long long)(r * Wp + 2), (long long)S);
        indent(f, depth);
        fprintf(f, "m4_a0 = __smlabt(m4_p, m4_wb%d, __smlad(m4_q%d, m4_wa%d, m4_a0));\n", r, r, r);
        if (two) {
            indent(f, depth);
            fprintf(f, "m4_a1 = __smlad(m4_p, m4_wb%d, __smlatb(m4_q%d, m4_wa%d, m4_a1));\n", r, r, r);
        }
        indent(f, depth);
        fprintf(f, "m4_q%d = m4_p;\n", r);
    }
}

/* The epilogue store of output `at` of the row (the loop epi's body with
 * its variable bound), printed right after the sum is stored, so that the
 * compiler forwards the sum instead of reloading it and the row needs no
 * second loop. */
static void m4q_dw3_epilogue(Printer *pr, FILE *f, const Kernel *k, const Stmt *epi, const char *at, int depth,
                             EmitStmtFn emit)
{
    indent(f, depth);
    fprintf(f, "{\n");
    indent(f, depth + 1);
    fprintf(f, "const int32_t %s = %s;\n", k->var_names[epi->var], at);
    emit(pr, f, k, epi->body[0], depth + 1);
    indent(f, depth);
    fprintf(f, "}\n");
}

/* The rows of tpl_qdw_m4's depthwise 3 x 3 (its comment has the scheme):
 * for oh: { for ow: { acc[ow] = init[c]; for kh: for kw: acc[ow] +=
 * int32(xw[..]) * int32(wq[c*9 + kh*3 + kw]) }; epilogue }. The weights of
 * the channel paired once, the rows' sums with SMLAD / SMLABT / SMLATB,
 * the epilogue printed as it is. */
static int m4q_dw3(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *seq = s->body[0], *row, *rb, *mac, *epi;
    const Expr *ib, *xw, *wq, *prod;
    const char *oh = k->var_names[s->var];
    int64_t S = s->tz_arg[0], Wp = s->tz_arg[1], OW;
    int acc, kh;
    if (!seq || seq->kind != ST_SEQ || seq->n_body != 2 || (row = seq->body[0])->kind != ST_FOR)
        return 0;
    rb = row->body[0];
    OW = row->extent;
    if (!rb || rb->kind != ST_SEQ || rb->n_body != 2 || rb->body[0]->kind != ST_STORE)
        return 0;
    for (mac = rb->body[1]; mac && mac->kind == ST_FOR; mac = mac->body[0])
        ;
    if (!mac || mac->kind != ST_STORE || mac->value->kind != EX_BINARY || mac->value->op != BIN_ADD)
        return 0;
    acc = rb->body[0]->buf;
    ib = rb->body[0]->value;
    prod = mac->value->b;
    if (ib->kind != EX_LOAD || prod->kind != EX_BINARY || prod->op != BIN_MUL || prod->a->kind != EX_CAST ||
        prod->b->kind != EX_CAST || prod->a->a->kind != EX_LOAD || prod->b->a->kind != EX_LOAD)
        return 0;
    xw = prod->a->a;
    wq = prod->b->a;
    epi = seq->body[1];
    if (epi->kind != ST_FOR || !epi->body[0] || epi->body[0]->kind != ST_STORE)
        return 0;
    fprintf(f, DSP_GUARD);
    indent(f, depth);
    fprintf(f, "{ /* depthwise 3 x 3 rows: weights paired per channel, SMLAD / SMLABT / SMLATB */\n");
    indent(f, depth + 1);
    fprintf(f, "const int8_t *m4_q = &%s[", k->bufs[wq->buf].name);
    {
        /* wq[c*9 + kh*3 + kw] at kh = kw = 0: the index with c only */
        const Expr *e = wq->a;
        while (e->kind == EX_BINARY && e->op == BIN_ADD && e->b->kind == EX_VAR)
            e = e->a; /* + kw */
        if (e->kind == EX_BINARY && e->op == BIN_MUL)
            e = e->a; /* (c*3 + kh) */
        if (e->kind == EX_BINARY && e->op == BIN_ADD && e->b->kind == EX_VAR)
            e = e->a; /* c*3 */
        fprintf(f, "(");
        emit_index(pr, f, k, e, 0);
        fprintf(f, ") * 3");
    }
    fprintf(f, "];\n");
    indent(f, depth + 1);
    fprintf(f, "const int32_t m4_i = %s[", k->bufs[ib->buf].name);
    emit_index(pr, f, k, ib->a, 0);
    fprintf(f, "];\n");
    for (kh = 0; kh < 3; kh++) {
        indent(f, depth + 1);
        fprintf(f, "const int32_t m4_wa%d = tvmcc_pk16(m4_q[%d], m4_q[%d]), m4_wb%d = tvmcc_pk16(m4_q[%d], m4_q[%d]);\n",
                kh, 3 * kh, 3 * kh + 1, kh, 3 * kh + 1, 3 * kh + 2);
    }
    indent(f, depth + 1);
    fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) {\n", oh, oh, (long long)s->extent, oh);
    indent(f, depth + 2);
    fprintf(f, "const int16_t *m4_r0 = &%s[%s * %lld];\n", k->bufs[xw->buf].name, oh, (long long)(S * Wp));
    indent(f, depth + 2);
    fprintf(f, "int32_t m4_ow = 0, m4_q0, m4_q1, m4_q2;\n");
    for (kh = 0; kh < 3; kh++) {
        indent(f, depth + 2);
        fprintf(f, "memcpy(&m4_q%d, m4_r0 + %lld, 4);\n", kh, (long long)(kh * Wp));
    }
    indent(f, depth + 2);
    if (S == 1)
        fprintf(f, "for (; m4_ow + 1 < %lld; m4_ow += 2) {\n", (long long)OW);
    else
        fprintf(f, "for (; m4_ow < %lld; m4_ow++) {\n", (long long)OW);
    indent(f, depth + 3);
    fprintf(f, "int32_t m4_a0 = m4_i, m4_a1 = m4_i, m4_p;\n");
    m4q_dw3_sums(f, depth + 3, Wp, S, S == 1);
    indent(f, depth + 3);
    fprintf(f, "%s[m4_ow] = m4_a0;\n", k->bufs[acc].name);
    m4q_dw3_epilogue(pr, f, k, epi, "m4_ow", depth + 3, emit);
    indent(f, depth + 3);
    if (S == 1) {
        fprintf(f, "%s[m4_ow + 1] = m4_a1;\n", k->bufs[acc].name);
        m4q_dw3_epilogue(pr, f, k, epi, "m4_ow + 1", depth + 3, emit);
    } else {
        fprintf(f, "(void)m4_a1;\n");
    }
    indent(f, depth + 2);
    fprintf(f, "}\n");
    if (S == 1 && OW % 2) { /* the last output alone */
        indent(f, depth + 2);
        fprintf(f, "{\n");
        indent(f, depth + 3);
        fprintf(f, "int32_t m4_a0 = m4_i, m4_p;\n");
        m4q_dw3_sums(f, depth + 3, Wp, S, 0);
        indent(f, depth + 3);
        fprintf(f, "%s[m4_ow] = m4_a0;\n", k->bufs[acc].name);
        m4q_dw3_epilogue(pr, f, k, epi, "m4_ow", depth + 3, emit);
        indent(f, depth + 2);
        fprintf(f, "}\n");
    }
    indent(f, depth + 1);
    fprintf(f, "}\n");
    indent(f, depth);
    fprintf(f, "}\n");
    return m4_portable_else(pr, f, k, s, depth, emit);
}

/* The store of a float QuantizeLinear to 8 bits,
 *   y = T(min(max(round(q) + float(z), lo), hi)), T int8 [-128, 127] or
 *   uint8 [0, 255]:
 * its type (0 when st is not one) and q, z. */
static DType m4_quant_store(const Kernel *k, const Stmt *st, const Expr **q, const Expr **z)
{
    const Expr *v, *mx, *ad;
    DType t;
    if (!st || st->kind != ST_STORE)
        return DT_UNDEF;
    t = k->bufs[st->buf].dtype;
    v = st->value;
    if (v->kind != EX_CAST || v->dtype != t || (t != DT_INT8 && t != DT_UINT8))
        return DT_UNDEF;
    v = v->a;
    if (v->kind != EX_BINARY || v->op != BIN_MIN || v->dtype != DT_FLOAT32 || v->b->kind != EX_FLOAT ||
        v->b->fval != (t == DT_INT8 ? 127.0 : 255.0))
        return DT_UNDEF;
    mx = v->a;
    if (mx->kind != EX_BINARY || mx->op != BIN_MAX || mx->b->kind != EX_FLOAT ||
        mx->b->fval != (t == DT_INT8 ? -128.0 : 0.0))
        return DT_UNDEF;
    ad = mx->a;
    if (ad->kind != EX_BINARY || ad->op != BIN_ADD || ad->a->kind != EX_UNARY || ad->a->op != UN_ROUND ||
        ad->a->dtype != DT_FLOAT32 || ad->b->kind != EX_CAST || ad->b->dtype != DT_FLOAT32 ||
        (ad->b->a->dtype != DT_INT8 && ad->b->a->dtype != DT_UINT8 && ad->b->a->dtype != DT_INT32))
        return DT_UNDEF;
    *q = ad->a->a;
    *z = ad->b->a;
    return t;
}

#define M4Q_GUARD                                                                                            \
    "#if defined(__GNUC__) && defined(__ARM_FP) && (__ARM_FP & 4) && defined(__ARM_FEATURE_SAT) && "           \
    "defined(__ARM_FEATURE_QBIT) && defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)\n"

/* The division form of one element, the caller having declared
 * float m4_q = x / s (VDIV) and int32_t m4_z: VCVTR (round to nearest, ties
 * to even, in the default rounding mode as the portable round; saturating
 * to int32), a saturating QADD of the zero point and SSAT / USAT into
 * `out`; NaN gives 0 as the portable conversion does. */
static void m4_quant_div(FILE *f, int depth, DType t, const char *out)
{
    indent(f, depth);
    fprintf(f, "float m4_t;\n");
    indent(f, depth);
    fprintf(f, "int32_t m4_n;\n");
    indent(f, depth);
    fprintf(f, "__asm__(\"vcvtr.s32.f32 %%0, %%1\" : \"=t\"(m4_t) : \"t\"(m4_q));\n");
    indent(f, depth);
    fprintf(f, "memcpy(&m4_n, &m4_t, 4);\n");
    indent(f, depth);
    fprintf(f, "%s = (%s)(m4_q == m4_q ? tvmcc_%s8(__qadd(m4_n, m4_z)) : 0);\n", out,
            t == DT_INT8 ? "int8_t" : "uint8_t", t == DT_INT8 ? "ssat" : "usat");
}

/* A perfect loop nest whose body is the store of a float QuantizeLinear
 * (m4_quant_store) of x[...] / s with a scale s and zero point z that no
 * loop of the nest changes (per-tensor; an 8-bit z), x a float32 load
 * affine in the innermost loop of extent > 1 (the group loop, walked in
 * groups of G = 3, 2 or 1 elements, whichever divides its extent). Printed
 * without a division per element (VDIV: 14 cycles):
 *
 *   r = 1 / s once (NaN when |s| is outside [2^-125, 2^125]), c = z + 1/2 +
 *   16/65536 (exact in float32 for |z| < 256), and per element
 *   y = fl(x * r), w = fl(y + c), F = trunc(w * 2^16) saturated to int32
 *   (VCVT to 16.16 fixed point: round toward zero, NaN -> 0), result
 *   SSAT8 / USAT8 (F >> 16) (arithmetic shift: floor(F / 2^16)) unless
 *   F mod 2^16 < 32 for an element of the group, when the group takes the
 *   division form (m4_quant_div), which is the definition.
 *
 * Why the fast result is the reference R = sat(rint(Q) + z), Q = fl(x / s)
 * (rint: half to even), in the default FPSCR mode (round to nearest, no
 * flush to zero; the portable code and the division form assume it too).
 * u = 2^-24, v = 2^-16. Let q = x / s exactly.
 * 1. Error of y. 1/s lies in [2^-125, 2^125], so r = (1/s)(1 + d1), and
 *    y = x r (1 + d2) + e2, Q = q (1 + d3) + e3, |di| <= u, |ei| <= 2^-150
 *    (e: underflow). So |y - Q| <= (3u + u^2)|q| + 2^-149 and
 *    |q| <= (|y| + 2^-150) / (1 - u)^2.
 * 2. Case |y| < 2^9. Then |y - Q| < 3.0001 u 2^9 + 2^-148 < 6.01 v;
 *    |y + c| < 2^10 so |w - (y + c)| <= u 2^10 = 4 v (rounding of a sum of
 *    two floats); |w| < 2^15 so F is not saturated and |F v - w| < v. Hence
 *    |F v - (Q + c)| < 11.01 v < 16 v. If F mod 2^16 >= 32, with
 *    K = floor(F v): F v in [K + 32 v, K + 1), so Q + c lies in
 *    (K + 16 v, K + 1 + 16 v), i.e. Q + z in (K - 1/2, K + 1/2): Q is no tie,
 *    rint(Q) + z = K, and sat(K) = R. (A tie, Q + c = K' + 16 v for an
 *    integer K', gives F mod 2^16 in (4, 28): always the division.)
 * 3. Case |y| >= 2^9, finite. The result saturates both ways: y >= 2^9
 *    gives w >= 2^9 - 128 + 1/2 (monotone rounding), F >> 16 >= 384 (or F
 *    saturated at 2^31 - 1: >> 16 is 32767), fast result hi; and
 *    Q >= 2^9 (1 - 4u) (step 1) so rint(Q) + z >= 511 - 128, R = hi.
 *    y <= -2^9 gives w <= -2^9 + 255 + 1/2 + 16 v < -256, F v <= w + v
 *    (toward zero), F >> 16 <= -256 (or F = -2^31), fast result lo; and
 *    rint(Q) + z <= -511 + 255, R = lo.
 * 4. y = +inf: F = 2^31 - 1, fast result hi; Q >= 2^127 (x r overflowed:
 *    step 1 without e2), R = hi. y = -inf: F = -2^31, F mod 2^16 = 0:
 *    division. y NaN (x NaN, or r NaN: every element): F = 0: division.
 * The group's test: t_j = (F_j >> 5) & 2047 is 0 iff F_j mod 2^16 < 32;
 * the product of at most three t_j (each below 2^11, so with at most 10
 * factors 2 if nonzero) is 0 mod 2^32 iff one is 0.
 * Cost on a Cortex-M4 per element: VLDR, VMUL, VADD, VCVT, VMOV, UBFX, a
 * third of MUL and branch, SSAT, STRB, against about 36 cycles with VDIV
 * (bench/arm's MobileNet input). */
static int m4_quant_fixed(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *loops[TVMCC_MAX_RANK + 4];
    const Stmt *st = s;
    const Expr *q, *z, *x;
    const char *it = pr->idx_type;
    int n = 0, g = -1, i, j, ok = 1, d;
    int64_t G, xs, os;
    DType t;
    char out[64];
    while (st && st->kind == ST_FOR && st->n_body == 1 && st->for_kind != FOR_TENSORIZE &&
           n < TVMCC_MAX_RANK + 4) {
        loops[n++] = st;
        st = st->body[0];
    }
    t = m4_quant_store(k, st, &q, &z);
    if (!n || t == DT_UNDEF || q->kind != EX_BINARY || q->op != BIN_DIV || q->a->kind != EX_LOAD ||
        q->a->dtype != DT_FLOAT32 || q->b->dtype != DT_FLOAT32 || (z->dtype != DT_INT8 && z->dtype != DT_UINT8))
        return 0;
    x = q->a;
    for (i = 0; i < n; i++) {
        if (lq_uses_var(q->b, loops[i]->var) || lq_uses_var(z, loops[i]->var))
            return 0;
        if (loops[i]->extent > 1)
            g = i;
    }
    if (g < 0)
        return 0;
    xs = lq_coef(x->a, loops[g]->var, &ok);
    os = lq_coef(st->index, loops[g]->var, &ok);
    if (!ok)
        return 0;
    G = loops[g]->extent % 3 == 0 ? 3 : loops[g]->extent % 2 == 0 ? 2 : 1;
    fprintf(f, M4Q_GUARD);
    indent(f, depth);
    fprintf(f, "{ /* QuantizeLinear: x * (1 / scale) + zero point + 1/2 to 16.16 fixed point (VMUL, VADD, "
               "VCVT), %s of the integer part; the division where the fraction is within 2^-11 of 0 "
               "(exact: emit_c/emit_arm.c m4_quant_fixed) */\n",
            t == DT_INT8 ? "SSAT" : "USAT");
    indent(f, depth + 1);
    fprintf(f, "const float m4_s = ");
    emit_expr(pr, f, k, q->b);
    fprintf(f, ";\n");
    indent(f, depth + 1);
    fprintf(f, "const float m4_r = __builtin_fabsf(m4_s) >= 0x1p-125f && __builtin_fabsf(m4_s) <= 0x1p125f ? "
               "1.0f / m4_s : __builtin_nanf(\"\");\n");
    indent(f, depth + 1);
    fprintf(f, "const int32_t m4_z = (int32_t)");
    emit_expr(pr, f, k, z);
    fprintf(f, ";\n");
    indent(f, depth + 1);
    fprintf(f, "const float m4_c = (float)m4_z + 0x1.002p-1f; /* z + 1/2 + 16/65536 */\n");
    for (i = 0, d = depth + 1; i < n; i++, d++) {
        const char *v = k->var_names[loops[i]->var];
        indent(f, d);
        if (loops[i]->extent == 1 || (i == g && loops[i]->extent == G))
            fprintf(f, "{\n%*sconst %s %s = 0;\n%*s(void)%s;\n", 4 * (d + 1), "", it, v, 4 * (d + 1), "", v);
        else if (i == g)
            fprintf(f, "for (%s %s = 0; %s < %lld; %s += %lld) {\n", it, v, v, (long long)loops[i]->extent, v,
                    (long long)G);
        else
            fprintf(f, "for (%s %s = 0; %s < %lld; %s++) {\n", it, v, v, (long long)loops[i]->extent, v);
    }
    indent(f, d);
    fprintf(f, "const float *m4_x = &%s[", k->bufs[x->buf].name);
    emit_index(pr, f, k, x->a, 0);
    fprintf(f, "];\n");
    indent(f, d);
    fprintf(f, "%s *m4_o = &%s[", t == DT_INT8 ? "int8_t" : "uint8_t", k->bufs[st->buf].name);
    emit_index(pr, f, k, st->index, 0);
    fprintf(f, "];\n");
    for (j = 0; j < G; j++) {
        indent(f, d);
        fprintf(f, "float m4_y%d = m4_x[%lld] * m4_r;\n", j, (long long)(j * xs));
        indent(f, d);
        fprintf(f, "int32_t m4_f%d;\n", j);
        indent(f, d); /* no fused multiply-add: VFMA costs 3 cycles, VMUL and VADD 1 each */
        fprintf(f, "__asm__(\"\" : \"+t\"(m4_y%d));\n", j);
        indent(f, d);
        fprintf(f, "m4_y%d += m4_c;\n", j);
        indent(f, d);
        fprintf(f, "__asm__(\"vcvt.s32.f32 %%0, %%0, #16\\n\\tvmov %%1, %%0\" : \"+t\"(m4_y%d), \"=r\"(m4_f%d));\n", j, j);
        indent(f, d); /* before the test, so that m4_fj need not live across it */
        fprintf(f, "int32_t m4_v%d;\n", j);
        indent(f, d);
        fprintf(f, "__asm__(\"%s %%0, #8, %%1, asr #16\" : \"=r\"(m4_v%d) : \"r\"(m4_f%d));\n",
                t == DT_INT8 ? "ssat" : "usat", j, j);
    }
    indent(f, d);
    fprintf(f, "if (__builtin_expect(");
    for (j = 0; j < G; j++)
        fprintf(f, "%s((uint32_t)m4_f%d >> 5 & 2047u)", j ? " * " : "", j);
    fprintf(f, " == 0u, 0)) {\n");
    indent(f, d + 1);
    fprintf(f, "for (int32_t m4_j = 0; m4_j < %lld; m4_j++) {\n", (long long)G);
    indent(f, d + 2);
    fprintf(f, "float m4_q = m4_x[m4_j * %lld] / m4_s;\n", (long long)xs);
    snprintf(out, sizeof out, "m4_o[m4_j * %lld]", (long long)os);
    m4_quant_div(f, d + 2, t, out);
    indent(f, d + 1);
    fprintf(f, "}\n");
    indent(f, d);
    fprintf(f, "} else {\n");
    for (j = 0; j < G; j++) {
        indent(f, d + 1);
        fprintf(f, "m4_o[%lld] = (%s)m4_v%d;\n", (long long)(j * os), t == DT_INT8 ? "int8_t" : "uint8_t", j);
    }
    indent(f, d);
    fprintf(f, "}\n");
    for (i = n - 1; i >= 0; i--) {
        indent(f, --d);
        fprintf(f, "}\n");
    }
    indent(f, depth);
    fprintf(f, "}\n");
    pr->in_portable++; /* the portable nest: plain loops all through */
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    pr->in_portable--;
    return 1;
}

/* A loop whose body is the store of a float QuantizeLinear to 8 bits
 * (m4_quant_store) that m4_quant_fixed does not take (a scale or zero
 * point that changes in this loop, an int32 zero point, a computed x):
 * the division form per element (m4_quant_div; bench/arm's MobileNet
 * input: 89 cycles per element with the float clamps and conversion
 * calls, about 36 this way, about 13 with m4_quant_fixed). */
static int m4_quantize_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    const Stmt *st = s->body[0];
    const Expr *q, *z;
    const char *var = k->var_names[s->var];
    DType t;
    if (pr->in_portable)
        return 0;
    if (m4_quant_fixed(pr, f, k, s, depth, emit))
        return 1;
    t = m4_quant_store(k, st, &q, &z);
    if (t == DT_UNDEF)
        return 0;
    fprintf(f, M4Q_GUARD);
    indent(f, depth);
    fprintf(f, "for (%s %s = 0; %s < %lld; %s++) { /* QuantizeLinear: VDIV, VCVTR, QADD, %s */\n", pr->idx_type,
            var, var, (long long)s->extent, var, t == DT_INT8 ? "SSAT" : "USAT");
    indent(f, depth + 1);
    fprintf(f, "const int32_t m4_z = (int32_t)");
    emit_expr(pr, f, k, z);
    fprintf(f, ";\n");
    indent(f, depth + 1);
    fprintf(f, "%s *m4_o = &%s[", t == DT_INT8 ? "int8_t" : "uint8_t", k->bufs[st->buf].name);
    emit_index(pr, f, k, st->index, 0);
    fprintf(f, "];\n");
    indent(f, depth + 1);
    fprintf(f, "float m4_q = ");
    emit_expr(pr, f, k, q);
    fprintf(f, ";\n");
    m4_quant_div(f, depth + 1, t, "*m4_o");
    indent(f, depth);
    fprintf(f, "}\n");
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    return 1;
}

int emit_arm_stmt(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    if (s == pr->arm_fallback)
        return 0;
    if (s->kind == ST_DECL)
        return pr->arm_vec && vec_decl(pr, f, k, s, depth, emit);
    if (s->kind != ST_FOR)
        return 0;
    if (pr->arm_dsp && s->for_kind == FOR_TENSORIZE && s->tz == TZ_M4Q_2X3)
        return m4q_tile(pr, f, k, s, depth, emit);
    if (pr->arm_dsp && s->for_kind == FOR_TENSORIZE && s->tz == TZ_M4Q_WIDEN4)
        return m4q_widen(pr, f, k, s, depth, emit);
    if (pr->arm_dsp && s->for_kind == FOR_TENSORIZE && s->tz == TZ_M4Q_DW3)
        return m4q_dw3(pr, f, k, s, depth, emit);
    if (pr->arm_dsp && s->for_kind == FOR_TENSORIZE && s->tz == TZ_M4Q_PLANE)
        return m4q_plane(pr, f, k, s, depth, emit);
    if (pr->arm_dsp && s->for_kind == FOR_TENSORIZE && s->tz == TZ_MVE_2X3)
        return mve_tile(pr, f, k, s, depth, emit);
    if (pr->a64_dot && emit_a64q_stmt(pr, f, k, s, depth, emit))
        return 1;
    if (pr->arm_dsp && m4_quantize_loop(pr, f, k, s, depth, emit))
        return 1;
    if (pr->arm_dsp && quad_loop(pr, f, k, s, depth, emit))
        return 1;
    if (pr->arm_dsp && lane_quads(pr, f, k, s, depth, emit))
        return 1;
    if (pr->arm_dsp && dsp_loop(pr, f, k, s, depth, emit))
        return 1;
    if (pr->arm_vec && vec_loop(pr, f, k, s, depth, emit))
        return 1;
    return 0;
}
