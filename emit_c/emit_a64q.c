/*
 * AArch64 NEON loops for 8-bit integer sums of products (see emit_a64q.h).
 *
 * lower/templates_a64q.c leaves, around a register tile of int32
 * accumulators, a nest of reduce loops whose innermost body is a sequence
 * of stores
 *     acc[c] = acc[c] + A * B
 * (acc a local int32 array, c constant in the nest) with A and B (int32)
 * of 8-bit loads, a padded window's operand under a select that gives the
 * zero point. The whole nest is printed with NEON vectors held in
 * registers, started at 0 and added to acc[c] after it (integer sums are
 * exact modulo 2^32, so the order does not change the bits):
 *
 *   dot   both operands of every store walk the innermost loop r with
 *         unit stride. Each store gets an int32x4_t; every 16 iterations
 *         each distinct operand is one 16-byte load and each store one
 *         tvmcc_sdot (SDOT with __ARM_FEATURE_DOTPROD: lane i += the four
 *         products of bytes 4i..4i+3; else SMULL, SMULL2 and two SADALP:
 *         the same total over the lanes), summed across lanes (ADDV) at
 *         the end. 8 more iterations are one load of 8 bytes with zeros
 *         above; the last (fewer than 8) run the scalar body. A uint8
 *         operand X is loaded as X - 128 in int8 (EOR 0x80), and
 *         128 * (sum of its partner W over the same iterations) is added
 *         back: one tvmcc_ssum per distinct W (sums of four bytes of W,
 *         SDOT by ones or SADDLP + SADALP), shared by the tile's rows.
 *   lane  the stores come in groups of 8 (acc[a + l], l = 0..7) whose
 *         operands are lanes l of one 8-byte load (unit stride), or one
 *         value for all lanes (broadcast). Each group is two int32x4_t;
 *         each operand is widened to int16x8 (SXTL / UXTL) and each group
 *         takes SMLAL + SMLAL2 (16 x 16-bit products, exact).
 *
 * Everything is under `#if defined(__ARM_NEON) && defined(__aarch64__)`,
 * with the unchanged loop under #else.
 */
#include "emit_a64q.h"

#include "emit.h"

#define A64_GUARD "#if defined(__ARM_NEON) && defined(__aarch64__)\n"
#define A64_MAX_STORES 128
#define A64_MAX_OPS 256
#define A64_MAX_NEST 8

void emit_a64q_begin(Printer *pr, FILE *f, const Target *t)
{
    pr->a64_dot = t && t->knobs.dot;
    pr->a64_in_else = 0;
    if (!pr->a64_dot)
        return;
    fprintf(f, A64_GUARD "#include <arm_neon.h>\n"
               "/* acc plus the products of x and w, four bytes into each lane, modulo\n"
               " * 2^32: SDOT with the dot product extension, else SMULL + SADALP (other\n"
               " * lanes, the same total) */\n"
               "static inline int32x4_t tvmcc_sdot(int32x4_t acc, int8x16_t x, int8x16_t w)\n"
               "{\n"
               "#if defined(__ARM_FEATURE_DOTPROD)\n"
               "    return vdotq_s32(acc, x, w);\n"
               "#else\n"
               "    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(w)));\n"
               "    return vpadalq_s16(acc, vmull_high_s8(x, w));\n"
               "#endif\n"
               "}\n"
               "/* acc plus the bytes of w, four into each lane */\n"
               "static inline int32x4_t tvmcc_ssum(int32x4_t acc, int8x16_t w)\n"
               "{\n"
               "#if defined(__ARM_FEATURE_DOTPROD)\n"
               "    return vdotq_s32(acc, vdupq_n_s8(1), w);\n"
               "#else\n"
               "    return vpadalq_s16(acc, vpaddlq_s8(w));\n"
               "#endif\n"
               "}\n"
               "/* uint8 bytes minus 128, as int8 */\n"
               "static inline int8x16_t tvmcc_u8off(uint8x16_t x)\n"
               "{\n    return vreinterpretq_s8_u8(veorq_u8(x, vdupq_n_u8(0x80)));\n}\n"
               "static inline int8x8_t tvmcc_u8off8(uint8x8_t x)\n"
               "{\n    return vreinterpret_s8_u8(veor_u8(x, vdup_n_u8(0x80)));\n}\n"
               "/* the sum of the lanes added to *a modulo 2^32 (plus 128 times c's) */\n"
               "static inline void tvmcc_addv(int32_t *a, int32x4_t v)\n"
               "{\n    *a = (int32_t)((uint32_t)*a + (uint32_t)vaddvq_s32(v));\n}\n"
               "static inline void tvmcc_addv128(int32_t *a, int32x4_t v, int32x4_t c)\n"
               "{\n    *a = (int32_t)((uint32_t)*a + (uint32_t)vaddvq_s32(v) + (uint32_t)vaddvq_s32(c) * 128u);\n}\n"
               "/* four lanes of v added to a[0..3] modulo 2^32 */\n"
               "static inline void tvmcc_addq(int32_t *a, int32x4_t v)\n"
               "{\n    vst1q_s32(a, vreinterpretq_s32_u32(vaddq_u32(vreinterpretq_u32_s32(vld1q_s32(a)),\n"
               "                                                 vreinterpretq_u32_s32(v))));\n}\n"
               "#endif\n\n");
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

/* The loops of the nest, outermost first, the stores of the innermost
 * body and the variables of its one-iteration loops. */
typedef struct Nest {
    const Stmt *loop[A64_MAX_NEST];
    int n;
    const Stmt *st[A64_MAX_STORES];
    int nst;
    int ones[A64_MAX_STORES], nones;
} Nest;

/* Stores of s, through sequences and one-iteration loops. */
static int stores_of(const Stmt *s, Nest *n)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->extent == 1 && s->for_kind != FOR_PARALLEL) {
        for (i = 0; i < n->nones && n->ones[i] != s->var; i++)
            ;
        if (i == n->nones) {
            if (n->nones >= A64_MAX_STORES)
                return 0;
            n->ones[n->nones++] = s->var;
        }
        return stores_of(s->body[0], n);
    }
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            if (!stores_of(s->body[i], n))
                return 0;
        return 1;
    }
    if (s->kind != ST_STORE || n->nst >= A64_MAX_STORES)
        return 0;
    n->st[n->nst++] = s;
    return 1;
}

static int uses_nest_var(const Nest *n, const Expr *e)
{
    int i;
    for (i = 0; i < n->n; i++)
        if (lq_uses_var(e, n->loop[i]->var))
            return 1;
    for (i = 0; i < n->nones; i++)
        if (lq_uses_var(e, n->ones[i]))
            return 1;
    return 0;
}

/* s, a loop nest whose innermost loop holds only stores: its loops and
 * stores into *n. */
static int find_nest(const Kernel *k, const Stmt *s, Nest *n)
{
    int i;
    n->n = n->nst = n->nones = 0;
    for (;;) {
        const Stmt *b;
        if (s->kind != ST_FOR || s->for_kind == FOR_PARALLEL || s->extent < 1 || s->extent >= (1 << 30) ||
            n->n >= A64_MAX_NEST || !s->body[0])
            return 0;
        n->loop[n->n++] = s;
        b = s->body[0];
        while (b->kind == ST_SEQ && b->n_body == 1 && b->body[0])
            b = b->body[0];
        if (b->kind == ST_FOR && (b->extent > 1 || (b->body[0] && b->body[0]->kind == ST_FOR)))
            s = b;
        else
            break;
    }
    for (i = 0; i < n->n && n->loop[i]->extent == 1; i++)
        ;
    if (i == n->n || !stores_of(n->loop[n->n - 1]->body[0], n) || n->nst == 0)
        return 0;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].numel >= ((int64_t)1 << 30))
            return 0;
    return 1;
}

/* acc[c] = acc[c] + A * B, acc an int32 local, c constant in the nest. */
static int mac_store(const Kernel *k, const Nest *n, const Stmt *s)
{
    const Expr *v = s->value;
    const Buffer *b = &k->bufs[s->buf];
    if (b->scope != BUF_LOCAL || b->dtype != DT_INT32 || uses_nest_var(n, s->index) || loads_local(k, s->index))
        return 0;
    if (!v || v->kind != EX_BINARY || v->op != BIN_ADD || v->dtype != DT_INT32 || v->a->kind != EX_LOAD ||
        v->a->buf != s->buf || !lq_same_expr(v->a->a, s->index))
        return 0;
    v = v->b;
    return v->kind == EX_BINARY && v->op == BIN_MUL && v->dtype == DT_INT32;
}

/* An 8-bit operand: (int32)load, possibly under select(cond, ., zero
 * point) with the zero point in the buffer's range; the load, the
 * condition and the constant (or NULL). An int32 constant in [-128, 255]
 * (a tap that is all padding) gives itself. */
static const Expr *operand(const Kernel *k, const Expr *e, const Expr **cond, const Expr **other)
{
    DType t;
    *cond = *other = NULL;
    if (e->kind == EX_INT)
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
    if ((t != DT_INT8 && t != DT_UINT8) || k->bufs[e->a->buf].scope == BUF_LOCAL || loads_local(k, e->a->a))
        return NULL;
    if (*other && (t == DT_INT8 ? (*other)->ival < -128 || (*other)->ival > 127
                                : (*other)->ival < 0 || (*other)->ival > 255))
        return NULL;
    return e->a;
}

static int is_u8(const Kernel *k, const Expr *ld)
{
    return ld->kind == EX_LOAD && k->bufs[ld->buf].dtype == DT_UINT8;
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

static void print_acc_ptr(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int plus)
{
    fprintf(f, "&%s[", k->bufs[s->buf].name);
    emit_index(pr, f, k, s->index, 0);
    if (plus)
        fprintf(f, " + %d", plus);
    fprintf(f, "]");
}

/* Opens the loops of the nest (the innermost too unless inner is 0),
 * returns the depth inside. */
static int open_loops(const Kernel *k, const Nest *n, int inner, FILE *f, int depth)
{
    int i;
    for (i = 0; i < n->n - (inner ? 0 : 1); i++) {
        const Stmt *l = n->loop[i];
        const char *v = k->var_names[l->var];
        indent(f, depth);
        if (l->extent == 1)
            fprintf(f, "{\n");
        else
            fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) {\n", v, v, (long long)l->extent, v);
        depth++;
        if (l->extent == 1) {
            indent(f, depth);
            fprintf(f, "const int32_t %s = 0;\n", v);
            indent(f, depth);
            fprintf(f, "(void)%s;\n", v);
        }
    }
    return depth;
}

static void close_loops(int count, FILE *f, int depth)
{
    int i;
    for (i = 0; i < count; i++) {
        indent(f, depth - 1 - i);
        fprintf(f, "}\n");
    }
}

static void bind_ones(const Kernel *k, const Nest *n, FILE *f, int depth)
{
    int i;
    for (i = 0; i < n->nones; i++) {
        indent(f, depth);
        fprintf(f, "const int32_t %s = 0;\n", k->var_names[n->ones[i]]);
        indent(f, depth);
        fprintf(f, "(void)%s;\n", k->var_names[n->ones[i]]);
    }
}

static void print_else(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    pr->a64_in_else++;
    lq_print_else(pr, f, k, s, depth, emit, &pr->arm_fallback);
    pr->a64_in_else--;
}

/* ---- dot: along the innermost loop ---- */

/* One 16- (or, with half, 8-) byte vector of operand j at the current r,
 * as int8x16_t. */
static void dot_load(Printer *pr, FILE *f, const Kernel *k, const Expr *ld, const Expr *cond, const Expr *other,
                     int half)
{
    int u = is_u8(k, ld);
    if (cond) {
        fprintf(f, "(");
        emit_expr(pr, f, k, cond);
        fprintf(f, ") ? ");
    }
    if (half)
        fprintf(f, "vcombine_s8(%s(&%s[", u ? "tvmcc_u8off8(vld1_u8" : "vld1_s8", k->bufs[ld->buf].name);
    else
        fprintf(f, "%s(&%s[", u ? "tvmcc_u8off(vld1q_u8" : "vld1q_s8", k->bufs[ld->buf].name);
    emit_index(pr, f, k, ld->a, 0);
    fprintf(f, "])%s%s", u ? ")" : "", half ? ", vdup_n_s8(0))" : "");
    if (cond) {
        /* the zero point, as the loaded bytes would be */
        long long z = other->ival - (u ? 128 : 0);
        if (half)
            fprintf(f, " : vcombine_s8(vdup_n_s8(%lld), vdup_n_s8(0))", z);
        else
            fprintf(f, " : vdupq_n_s8(%lld)", z);
    }
}

static int dot_nest(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, const Nest *n, int depth,
                    EmitStmtFn emit)
{
    const Stmt *in = n->loop[n->n - 1];
    const char *r = k->var_names[in->var];
    const Expr *ops[A64_MAX_OPS], *ld[A64_MAX_OPS], *cnd[A64_MAX_OPS], *oth[A64_MAX_OPS];
    int ia[A64_MAX_STORES], ib[A64_MAX_STORES], corr[A64_MAX_OPS], nops = 0, i, h, d, ncorr = 0;
    int64_t steps = in->extent / 16, half = in->extent % 16 >= 8, rest;
    if (in->extent < 8)
        return 0;
    for (i = 0; i < n->nst; i++) {
        const Expr *m, *c, *o, *la, *lb;
        if (!mac_store(k, n, n->st[i]) || nops + 2 > A64_MAX_OPS)
            return 0;
        m = n->st[i]->value->b;
        la = operand(k, m->a, &c, &o);
        if (!la || la->kind != EX_LOAD || (c && lq_uses_var(c, in->var)) || !lq_unit_stride(la->a, in->var))
            return 0;
        lb = operand(k, m->b, &c, &o);
        if (!lb || lb->kind != EX_LOAD || (c && lq_uses_var(c, in->var)) || !lq_unit_stride(lb->a, in->var))
            return 0;
        if (is_u8(k, la) && is_u8(k, lb))
            return 0;
        ia[i] = op_index(ops, &nops, m->a);
        ib[i] = op_index(ops, &nops, m->b);
    }
    for (i = 0; i < nops; i++) {
        ld[i] = operand(k, ops[i], &cnd[i], &oth[i]);
        corr[i] = -1;
    }
    /* the int8 partners of uint8 operands: one sum each */
    for (i = 0; i < n->nst; i++) {
        int w = is_u8(k, ld[ia[i]]) ? ib[i] : is_u8(k, ld[ib[i]]) ? ia[i] : -1;
        if (w >= 0 && corr[w] < 0)
            corr[w] = ncorr++;
    }
    fprintf(f, A64_GUARD);
    indent(f, depth);
    fprintf(f, "{ /* %s: 16 bytes per step, SDOT (SMULL + SADALP without the dot product extension) "
               "into %d int32x4_t */\n", r, n->nst);
    indent(f, depth + 1);
    fprintf(f, "int32x4_t");
    for (i = 0; i < n->nst; i++)
        fprintf(f, "%s n_a%d = vdupq_n_s32(0)", i ? "," : "", i);
    for (i = 0; i < ncorr; i++)
        fprintf(f, ", n_c%d = vdupq_n_s32(0)", i);
    fprintf(f, ";\n");
    d = open_loops(k, n, 0, f, depth + 1);
    for (h = 0; h < 2; h++) {
        if (h == 0 && steps == 0)
            continue;
        if (h == 1 && !half)
            continue;
        indent(f, d);
        if (h == 0)
            fprintf(f, "for (int32_t %s_v = 0; %s_v < %lld; %s_v++) {\n", r, r, (long long)steps, r);
        else
            fprintf(f, "{ /* 8 more, zeros above */\n");
        indent(f, d + 1);
        if (h == 0)
            fprintf(f, "const int32_t %s = 16 * %s_v;\n", r, r);
        else
            fprintf(f, "const int32_t %s = %lld;\n", r, (long long)(16 * steps));
        bind_ones(k, n, f, d + 1);
        for (i = 0; i < nops; i++) {
            indent(f, d + 1);
            fprintf(f, "const int8x16_t n_x%d = ", i);
            dot_load(pr, f, k, ld[i], cnd[i], oth[i], h);
            fprintf(f, ";\n");
        }
        for (i = 0; i < nops; i++)
            if (corr[i] >= 0) {
                indent(f, d + 1);
                fprintf(f, "n_c%d = tvmcc_ssum(n_c%d, n_x%d);\n", corr[i], corr[i], i);
            }
        for (i = 0; i < n->nst; i++) {
            indent(f, d + 1);
            fprintf(f, "n_a%d = tvmcc_sdot(n_a%d, n_x%d, n_x%d);\n", i, i, ia[i], ib[i]);
        }
        indent(f, d);
        fprintf(f, "}\n");
    }
    for (rest = 16 * steps + 8 * half; rest < in->extent; rest++) { /* the last ones, scalar */
        indent(f, d);
        fprintf(f, "{\n");
        indent(f, d + 1);
        fprintf(f, "const int32_t %s = %lld;\n", r, (long long)rest);
        indent(f, d + 1);
        fprintf(f, "(void)%s;\n", r);
        emit(pr, f, k, in->body[0], d + 1);
        indent(f, d);
        fprintf(f, "}\n");
    }
    close_loops(n->n - 1, f, d);
    for (i = 0; i < n->nst; i++) {
        int w = is_u8(k, ld[ia[i]]) ? ib[i] : is_u8(k, ld[ib[i]]) ? ia[i] : -1;
        indent(f, depth + 1);
        if (w >= 0) {
            fprintf(f, "tvmcc_addv128(");
            print_acc_ptr(pr, f, k, n->st[i], 0);
            fprintf(f, ", n_a%d, n_c%d);\n", i, corr[w]);
        } else {
            fprintf(f, "tvmcc_addv(");
            print_acc_ptr(pr, f, k, n->st[i], 0);
            fprintf(f, ", n_a%d);\n", i);
        }
    }
    indent(f, depth);
    fprintf(f, "}\n");
    print_else(pr, f, k, s, depth, emit);
    return 1;
}

/* ---- lane: groups of 8 accumulators ---- */

/* b's affine form is a's plus *d. */
static int aff_delta(const Expr *a, const Expr *b, int64_t *d)
{
    LqAffine fa, fb;
    if (!lq_affine(a, &fa) || !lq_affine(b, &fb))
        return 0;
    *d = fb.c0 - fa.c0;
    fb.c0 = fa.c0;
    return lq_same_affine(&fa, &fb);
}

/* Operand x2 is lane l of the vector whose lane 0 is x1: 1; the same value
 * (broadcast): 2; else 0. */
static int lane_of(const Kernel *k, const Expr *x1, const Expr *x2, int64_t l)
{
    const Expr *c1, *c2, *o1, *o2, *a, *b;
    int64_t d;
    if (lq_same_expr(x1, x2))
        return 2;
    a = operand(k, x1, &c1, &o1);
    b = operand(k, x2, &c2, &o2);
    if (!a || !b || a->kind != EX_LOAD || b->kind != EX_LOAD || a->buf != b->buf || !c1 != !c2)
        return 0;
    if (c1 && (!lq_same_expr(c1, c2) || o1->ival != o2->ival))
        return 0;
    return aff_delta(a->a, b->a, &d) && d == l;
}

/* Operand e (lane 0 of its group) widened to int16x8_t; bcast: the one
 * value in every lane. */
static void lane_load(Printer *pr, FILE *f, const Kernel *k, const Expr *e, int bcast)
{
    const Expr *c, *o, *ld = operand(k, e, &c, &o);
    int u;
    if (bcast || ld->kind == EX_INT) {
        fprintf(f, "vdupq_n_s16((int16_t)(");
        emit_expr(pr, f, k, e);
        fprintf(f, "))");
        return;
    }
    u = is_u8(k, ld);
    if (c) {
        fprintf(f, "(");
        emit_expr(pr, f, k, c);
        fprintf(f, ") ? ");
    }
    fprintf(f, "%s(&%s[", u ? "vreinterpretq_s16_u16(vmovl_u8(vld1_u8" : "vmovl_s8(vld1_s8", k->bufs[ld->buf].name);
    emit_index(pr, f, k, ld->a, 0);
    fprintf(f, "]))%s", u ? ")" : "");
    if (c)
        fprintf(f, " : vdupq_n_s16(%lld)", (long long)o->ival);
}

static int lane_nest(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, const Nest *n, int depth,
                     EmitStmtFn emit)
{
    const Expr *ops[A64_MAX_OPS];
    int grp[A64_MAX_STORES / 8], used[A64_MAX_STORES], ia[A64_MAX_STORES / 8], ib[A64_MAX_STORES / 8];
    int bc[A64_MAX_OPS], acc[A64_MAX_STORES / 8], ng = 0, nops = 0, nacc = 0, i, j, l, d;
    if (n->nst % 8)
        return 0;
    for (i = 0; i < n->nst; i++) {
        const Expr *c, *o;
        if (!mac_store(k, n, n->st[i]) || !operand(k, n->st[i]->value->b->a, &c, &o) ||
            !operand(k, n->st[i]->value->b->b, &c, &o))
            return 0;
        used[i] = 0;
    }
    for (i = 0; i < n->nst; i++) {
        int kind[2] = {0, 0};
        const Expr *m0;
        if (used[i])
            continue;
        m0 = n->st[i]->value->b;
        used[i] = 1;
        for (l = 1; l < 8; l++) {
            for (j = 0; j < n->nst; j++) {
                const Expr *m = n->st[j]->value->b;
                int64_t dd;
                int ka, kb;
                if (used[j] || n->st[j]->buf != n->st[i]->buf ||
                    !aff_delta(n->st[i]->index, n->st[j]->index, &dd) || dd != l)
                    continue;
                ka = lane_of(k, m0->a, m->a, l);
                kb = lane_of(k, m0->b, m->b, l);
                if (!ka || !kb || (kind[0] && ka != kind[0]) || (kind[1] && kb != kind[1]))
                    continue;
                kind[0] = ka;
                kind[1] = kb;
                break;
            }
            if (j == n->nst)
                return 0;
            used[j] = 1;
        }
        if (kind[0] == 2 && kind[1] == 2) /* (no lane varies: not a vector) */
            return 0;
        grp[ng] = i;
        for (acc[ng] = 0; acc[ng] < ng; acc[ng]++) /* groups into the same eight share theirs */
            if (n->st[grp[acc[ng]]]->buf == n->st[i]->buf && lq_same_expr(n->st[grp[acc[ng]]]->index, n->st[i]->index))
                break;
        for (l = 0; l < 2; l++) {
            int before = nops, x = op_index(ops, &nops, l ? m0->b : m0->a);
            /* (one expression a vector in one group, a broadcast in
             * another: refused) */
            if (x < before && bc[x] != (kind[l] == 2))
                return 0;
            bc[x] = kind[l] == 2;
            if (l)
                ib[ng] = x;
            else
                ia[ng] = x;
        }
        ng++;
    }
    fprintf(f, A64_GUARD);
    indent(f, depth);
    fprintf(f, "{ /* lanes in eights: 8-byte loads widened to int16x8, SMLAL + SMLAL2 into "
               "int32x4_t */\n");
    indent(f, depth + 1);
    fprintf(f, "int32x4_t");
    for (i = 0; i < ng; i++)
        if (acc[i] == i)
            fprintf(f, "%s n_a%d = vdupq_n_s32(0), n_a%d = vdupq_n_s32(0)", nacc++ ? "," : "", 2 * i, 2 * i + 1);
    fprintf(f, ";\n");
    d = open_loops(k, n, 1, f, depth + 1);
    bind_ones(k, n, f, d);
    for (i = 0; i < nops; i++) {
        indent(f, d);
        fprintf(f, "const int16x8_t n_x%d = ", i);
        lane_load(pr, f, k, ops[i], bc[i]);
        fprintf(f, ";\n");
    }
    for (i = 0; i < ng; i++) {
        indent(f, d);
        fprintf(f, "n_a%d = vmlal_s16(n_a%d, vget_low_s16(n_x%d), vget_low_s16(n_x%d));\n", 2 * acc[i],
                2 * acc[i], ia[i], ib[i]);
        indent(f, d);
        fprintf(f, "n_a%d = vmlal_high_s16(n_a%d, n_x%d, n_x%d);\n", 2 * acc[i] + 1, 2 * acc[i] + 1, ia[i],
                ib[i]);
    }
    close_loops(n->n, f, d);
    for (i = 0; i < ng; i++)
        for (l = 0; acc[i] == i && l < 2; l++) {
            indent(f, depth + 1);
            fprintf(f, "tvmcc_addq(");
            print_acc_ptr(pr, f, k, n->st[grp[i]], 4 * l);
            fprintf(f, ", n_a%d);\n", 2 * i + l);
        }
    indent(f, depth);
    fprintf(f, "}\n");
    print_else(pr, f, k, s, depth, emit);
    return 1;
}

int emit_a64q_stmt(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    Nest n;
    if (!pr->a64_dot || pr->a64_in_else || s == pr->arm_fallback || !find_nest(k, s, &n))
        return 0;
    return dot_nest(pr, f, k, s, &n, depth, emit) || lane_nest(pr, f, k, s, &n, depth, emit);
}
