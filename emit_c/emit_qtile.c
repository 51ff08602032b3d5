/*
 * The int8 dot-product tile of the x86 targets (lower/tpl_qconv.c builds
 * it), printed by the x86 family's statement printer (emit_intrin.c).
 *
 * A FOR_TENSORIZE nest matches when it is
 *
 *   for r1: [for r2: [for r3:]] for p: for v: for j < 4:
 *     acc[base + p*VL + v] = acc[base + p*VL + v] + int32(X[..]) * int32(Y[..])
 *
 * with acc a local int32 array, X a uint8 buffer whose index has step 1 in
 * j, 0 in v and a constant step per row p, Y an int8 buffer with step 1 in
 * j, 4 in v and 0 in p (the four products of one accumulator are four
 * consecutive bytes of each), VL one or two vectors of int32 lanes. Each
 * reduce step then is, per row, one broadcast of X's four bytes and per
 * vector one
 *
 *   vpdpbusd   (AVX-512 VNNI, or AVX-VNNI / AVX-512 VNNI+VL for 256 bits)
 *
 * which adds the four u8 x s8 products to the int32 lane without
 * saturation; where the compiler offers no VNNI (no __AVX512VNNI__ /
 * __AVXVNNI__), two vpmaddwd on the bytes widened to 16 bits (even and odd
 * bytes of each lane: x0*w0 + x2*w2 and x1*w1 + x3*w3, exact in int32).
 * Integer addition is associative, so the accumulators hold the scalar
 * nest's sums exactly.
 */
#include "emit_qtile.h"

#include <string.h>

#include "emit.h"

typedef struct QTile {
    const Stmt *red[3];
    int nred;
    const Stmt *ploop, *vloop, *jloop, *store;
    const Expr *x, *y; /* the uint8 and int8 loads */
    int acc;
    int xvec; /* 1: X is the vector operand (step 4 in v), Y one broadcast per row */
    int64_t P, VL, xstep, ystep;
} QTile;

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", depth * 4, "");
}

/* int32(load of a buffer of type t) */
static const Expr *cast_load(const Kernel *k, const Expr *e, DType t)
{
    if (!e || e->kind != EX_CAST || e->dtype != DT_INT32 || e->a->kind != EX_LOAD || e->a->dtype != t ||
        k->bufs[e->a->buf].dtype != t)
        return NULL;
    return e->a;
}

static int match(const Kernel *k, const Stmt *loop, int lanes, QTile *t)
{
    const Stmt *s = loop;
    const Expr *v, *idx;
    int ok = 1, i;
    memset(t, 0, sizeof *t);
    while (s && s->kind == ST_FOR && t->nred < 3) {
        const Stmt *b = s->body[0];
        /* the last three loops are p, v, j */
        if (b && b->kind == ST_FOR && b->body[0] && b->body[0]->kind == ST_FOR && b->body[0]->body[0] &&
            b->body[0]->body[0]->kind == ST_FOR && b->body[0]->body[0]->body[0] &&
            b->body[0]->body[0]->body[0]->kind == ST_STORE) {
            t->red[t->nred++] = s;
            t->ploop = b;
            t->vloop = b->body[0];
            t->jloop = b->body[0]->body[0];
            t->store = t->jloop->body[0];
            break;
        }
        t->red[t->nred++] = s;
        s = b;
    }
    if (!t->store || t->jloop->extent != 4)
        return 0;
    t->P = t->ploop->extent;
    t->VL = t->vloop->extent;
    if (t->VL % lanes || t->VL / lanes > 2 || t->P < 1 || t->P * (t->VL / lanes) > 28)
        return 0;
    t->acc = t->store->buf;
    if (k->bufs[t->acc].scope != BUF_LOCAL || k->bufs[t->acc].dtype != DT_INT32 ||
        k->bufs[t->acc].numel < t->P * t->VL)
        return 0;
    idx = t->store->index;
    if (lq_coef(idx, t->ploop->var, &ok) != t->VL || !ok || lq_coef(idx, t->vloop->var, &ok) != 1 || !ok ||
        lq_uses_var(idx, t->jloop->var))
        return 0;
    for (i = 0; i < t->nred; i++)
        if (lq_uses_var(idx, t->red[i]->var))
            return 0;
    v = t->store->value;
    if (v->kind != EX_BINARY || v->op != BIN_ADD || v->dtype != DT_INT32 || v->a->kind != EX_LOAD ||
        v->a->buf != t->acc || !lq_same_expr(v->a->a, idx))
        return 0;
    v = v->b;
    if (v->kind != EX_BINARY || v->op != BIN_MUL || v->dtype != DT_INT32)
        return 0;
    t->x = cast_load(k, v->a, DT_UINT8);
    t->y = cast_load(k, v->b, DT_INT8);
    if (!t->x || !t->y)
        return 0;
    /* X: j step 1, v step 0, p a constant step; Y: j 1, v 4, p 0; or
     * exchanged: X j 1, v 4, p 0; Y j 1, v 0, p a constant step */
    if (lq_coef(t->x->a, t->jloop->var, &ok) != 1 || !ok || lq_coef(t->y->a, t->jloop->var, &ok) != 1 || !ok)
        return 0;
    if (!lq_uses_var(t->x->a, t->vloop->var)) {
        t->xstep = lq_coef(t->x->a, t->ploop->var, &ok);
        if (!ok)
            return 0;
        if (lq_coef(t->y->a, t->vloop->var, &ok) != 4 || !ok || lq_uses_var(t->y->a, t->ploop->var))
            return 0;
        return 1;
    }
    if (lq_coef(t->x->a, t->vloop->var, &ok) != 4 || !ok || lq_uses_var(t->x->a, t->ploop->var) ||
        lq_uses_var(t->y->a, t->vloop->var))
        return 0;
    t->ystep = lq_coef(t->y->a, t->ploop->var, &ok);
    t->xvec = 1;
    return ok;
}

/* The reduce step of the exchanged tile: the data's vectors loaded once,
 * per row one broadcast int32 of four weights. */
static void print_xvec(FILE *f, const QTile *t, int d, int lanes, int vnni)
{
    const char *P = lanes == 16 ? "_mm512" : "_mm256", *vt = lanes == 16 ? "__m512i" : "__m256i";
    const char *si = lanes == 16 ? "si512" : "si256";
    int64_t nv = t->VL / lanes, r, j;
    for (j = 0; j < nv; j++) {
        indent(f, d);
        fprintf(f, "const %s x%lld = %s_loadu_%s((const void *)(ta + %lld));\n", vt, (long long)j, P, si,
                (long long)(j * lanes * 4));
        if (!vnni) {
            /* the even bytes of each lane zero-extended to 16 bits, and the odd ones */
            indent(f, d);
            fprintf(f, "const %s xe%lld = %s_and_%s(x%lld, lo8), xo%lld = %s_srli_epi16(x%lld, 8);\n", vt,
                    (long long)j, P, si, (long long)j, (long long)j, P, (long long)j);
        }
    }
    for (r = 0; r < t->P; r++) {
        indent(f, d);
        fprintf(f, "{\n");
        indent(f, d + 1);
        fprintf(f, "const %s b = %s_broadcastd_epi32(_mm_loadu_si32(tb + %lld));\n", vt, P,
                (long long)(r * t->ystep));
        if (!vnni) {
            indent(f, d + 1);
            fprintf(f, "const %s be = %s_srai_epi16(%s_slli_epi16(b, 8), 8), bo = %s_srai_epi16(b, 8);\n", vt, P,
                    P, P);
        }
        for (j = 0; j < nv; j++) {
            indent(f, d + 1);
            if (vnni == 1)
                fprintf(f, "c%lld_%lld = %s_dpbusd_epi32(c%lld_%lld, x%lld, b);\n", (long long)r, (long long)j, P,
                        (long long)r, (long long)j, (long long)j);
            else if (vnni == 2)
                fprintf(f, "c%lld_%lld = %s_dpbusd_avx_epi32(c%lld_%lld, x%lld, b);\n", (long long)r, (long long)j,
                        P, (long long)r, (long long)j, (long long)j);
            else
                fprintf(f, "c%lld_%lld = %s_add_epi32(c%lld_%lld, %s_add_epi32(%s_madd_epi16(xe%lld, be), "
                           "%s_madd_epi16(xo%lld, bo)));\n",
                        (long long)r, (long long)j, P, (long long)r, (long long)j, P, P, (long long)j, P,
                        (long long)j);
        }
        indent(f, d);
        fprintf(f, "}\n");
    }
}

/* Prints one form of the tile: vnni 1 with vpdpbusd (vnni 2: the AVX-VNNI
 * spelling of the 256-bit one), 0 with vpmaddwd pairs. */
static void print_form(Printer *pr, FILE *f, const Kernel *k, const QTile *t, int depth, int lanes, int vnni)
{
    const char *P = lanes == 16 ? "_mm512" : "_mm256", *vt = lanes == 16 ? "__m512i" : "__m256i";
    const char *pn = k->var_names[t->ploop->var], *vn = k->var_names[t->vloop->var],
               *jn = k->var_names[t->jloop->var];
    const char *si = lanes == 16 ? "si512" : "si256";
    int64_t nv = t->VL / lanes, r, j;
    int i, d;
    indent(f, depth);
    fprintf(f, "{ /* int8 dot tile %lldx%lld: accumulators in registers */\n", (long long)t->P, (long long)t->VL);
    indent(f, depth + 1);
    fprintf(f, "int32_t *tc;\n");
    indent(f, depth + 1);
    fprintf(f, "{\n");
    indent(f, depth + 2);
    fprintf(f, "const int32_t %s = 0, %s = 0;\n", pn, vn);
    indent(f, depth + 2);
    fprintf(f, "tc = &%s[", k->bufs[t->acc].name);
    emit_index(pr, f, k, t->store->index, 0);
    fprintf(f, "];\n");
    indent(f, depth + 1);
    fprintf(f, "}\n");
    for (r = 0; r < t->P; r++)
        for (j = 0; j < nv; j++) {
            indent(f, depth + 1);
            fprintf(f, "%s c%lld_%lld = %s_loadu_%s((const void *)(tc + %lld));\n", vt, (long long)r, (long long)j,
                    P, si, (long long)(r * t->VL + j * lanes));
        }
    if (!vnni) {
        indent(f, depth + 1);
        fprintf(f, "const %s lo8 = %s_set1_epi16(0x00ff);\n", vt, P);
    }
    d = depth + 1;
    for (i = 0; i < t->nred; i++) {
        const char *rn = k->var_names[t->red[i]->var];
        if (i == 0 || t->red[i]->extent > 4) {
            fprintf(f, "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC unroll 1\n#endif\n");
        }
        indent(f, d);
        fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) {\n", rn, rn, (long long)t->red[i]->extent, rn);
        d++;
    }
    indent(f, d);
    fprintf(f, "const uint8_t *ta;\n");
    indent(f, d);
    fprintf(f, "const int8_t *tb;\n");
    indent(f, d);
    fprintf(f, "{\n");
    indent(f, d + 1);
    fprintf(f, "const int32_t %s = 0, %s = 0, %s = 0;\n", pn, vn, jn);
    indent(f, d + 1);
    fprintf(f, "(void)%s;\n", pn);
    indent(f, d + 1);
    fprintf(f, "(void)%s;\n", vn);
    indent(f, d + 1);
    fprintf(f, "(void)%s;\n", jn);
    indent(f, d + 1);
    fprintf(f, "ta = &%s[", k->bufs[t->x->buf].name);
    emit_index(pr, f, k, t->x->a, 0);
    fprintf(f, "];\n");
    indent(f, d + 1);
    fprintf(f, "tb = &%s[", k->bufs[t->y->buf].name);
    emit_index(pr, f, k, t->y->a, 0);
    fprintf(f, "];\n");
    indent(f, d);
    fprintf(f, "}\n");
    if (t->xvec) {
        print_xvec(f, t, d, lanes, vnni);
    } else {
        for (j = 0; j < nv; j++) {
            indent(f, d);
            fprintf(f, "const %s w%lld = %s_loadu_%s((const void *)(tb + %lld));\n", vt, (long long)j, P, si,
                    (long long)(j * lanes * 4));
            if (!vnni) {
                /* the even bytes of each lane sign-extended to 16 bits, and the odd ones */
                indent(f, d);
                fprintf(f, "const %s we%lld = %s_srai_epi16(%s_slli_epi16(w%lld, 8), 8);\n", vt, (long long)j, P, P,
                        (long long)j);
                indent(f, d);
                fprintf(f, "const %s wo%lld = %s_srai_epi16(w%lld, 8);\n", vt, (long long)j, P, (long long)j);
            }
        }
        for (r = 0; r < t->P; r++) {
            indent(f, d);
            fprintf(f, "{\n");
            indent(f, d + 1);
            fprintf(f, "const %s a = %s_broadcastd_epi32(_mm_loadu_si32(ta + %lld));\n", vt, P,
                    (long long)(r * t->xstep));
            if (!vnni) {
                indent(f, d + 1);
                fprintf(f, "const %s ae = %s_and_%s(a, lo8), ao = %s_srli_epi16(a, 8);\n", vt, P, si, P);
            }
            for (j = 0; j < nv; j++) {
                indent(f, d + 1);
                if (vnni == 1)
                    fprintf(f, "c%lld_%lld = %s_dpbusd_epi32(c%lld_%lld, a, w%lld);\n", (long long)r, (long long)j, P,
                            (long long)r, (long long)j, (long long)j);
                else if (vnni == 2)
                    fprintf(f, "c%lld_%lld = %s_dpbusd_avx_epi32(c%lld_%lld, a, w%lld);\n", (long long)r, (long long)j,
                            P, (long long)r, (long long)j, (long long)j);
                else
                    fprintf(f, "c%lld_%lld = %s_add_epi32(c%lld_%lld, %s_add_epi32(%s_madd_epi16(ae, we%lld), "
                               "%s_madd_epi16(ao, wo%lld)));\n",
                            (long long)r, (long long)j, P, (long long)r, (long long)j, P, P, (long long)j, P,
                            (long long)j);
            }
            indent(f, d);
            fprintf(f, "}\n");
        }
    }
    for (i = t->nred - 1; i >= 0; i--) {
        d--;
        indent(f, d);
        fprintf(f, "}\n");
    }
    for (r = 0; r < t->P; r++)
        for (j = 0; j < nv; j++) {
            indent(f, depth + 1);
            fprintf(f, "%s_storeu_%s((void *)(tc + %lld), c%lld_%lld);\n", P, si, (long long)(r * t->VL + j * lanes),
                    (long long)r, (long long)j);
        }
    indent(f, depth);
    fprintf(f, "}\n");
}

/* ---- the epilogue of the exchanged tile (lower/tpl_qconv.c) ----
 *
 *   for r: for v < VL: [if (q < rows)] out[o + v] = post(acc[a + v])
 *
 * (FOR_TENSORIZE on r; q, o and a with step 1 in v) where post is the
 * requantization of op_quant.c's requant_int() with a shift of 32 or more,
 *
 *   min(max(int32(uint64(int64(acc) * m + K) >> S) + Z, lo), hi)
 *
 * (m an int32 per row or a constant), optionally followed by a clamp or a
 * lookup in an 8-bit table (256 entries and 3 bytes of padding), and stored as 8 bits. Per vector of lanes:
 * the 64-bit products of the even and the odd lanes (vpmuldq: m fits in
 * int32), K added and shifted in 64 bits exactly as the scalar code does,
 * the low halves put back together, then the int32 add and clamps, the
 * table gathered, and the low bytes stored (a partial vector masked, or
 * through a local copy on AVX2). Every step is the scalar expression's own
 * integer operation, so the bytes are the same. */
typedef struct QEpi {
    const Stmt *rloop, *vloop, *store;
    const Expr *rows_q; /* the guard's q, or NULL */
    int64_t rows, K, S, Z, lo, hi, m, clo, chi, qlo;
    const Expr *mload; /* int32 load of the multiplier, or NULL: m */
    const Expr *acc;   /* the accumulator load */
    const Expr *tab;   /* the 8-bit table load, or NULL */
    int clamp;         /* clo/chi apply */
    /* a residual Add after the requantization (epi_residual):
     * req2(int64(Q - za) * m1 + int64(R - zb) * m2), R the 8-bit load */
    const Expr *res;   /* R, or NULL */
    int64_t za, zb, m1, m2, K2, S2, Z2, lo2, hi2;
    int wide;          /* req2's add and clamps in int64 (S2 < 32) */
} QEpi;

static int is_int(const Expr *e, int64_t *v)
{
    if (!e || e->kind != EX_INT)
        return 0;
    *v = e->ival;
    return 1;
}

static int is_bin(const Expr *e, int op)
{
    return e && e->kind == EX_BINARY && e->op == op;
}

static int is_cast(const Expr *e, DType t)
{
    return e && e->kind == EX_CAST && e->dtype == t;
}

/* requant_int()'s outer form in type t (int32 or int64),
 *
 *   min(max(t(uint64(P + K) >> S) + Z, lo), hi),
 *
 * with 1 <= S <= 62: gives P, or NULL when e is not of it. */
static const Expr *req_outer(const Expr *e, DType t, int64_t *hi, int64_t *lo, int64_t *Z, int64_t *S, int64_t *K)
{
    if (!is_bin(e, BIN_MIN) || e->dtype != t || !is_int(e->b, hi))
        return NULL;
    e = e->a;
    if (!is_bin(e, BIN_MAX) || !is_int(e->b, lo))
        return NULL;
    e = e->a;
    if (!is_bin(e, BIN_ADD) || !is_int(e->b, Z) || !is_cast(e->a, t))
        return NULL;
    e = e->a->a;
    if (!is_bin(e, BIN_SHR) || e->dtype != DT_UINT64 || !is_int(e->b, S) || *S < 1 || *S > 62 ||
        !is_cast(e->a, DT_UINT64))
        return NULL;
    e = e->a->a;
    if (!is_bin(e, BIN_ADD) || e->dtype != DT_INT64 || !is_int(e->b, K))
        return NULL;
    return e->a;
}

static int epi_requant(const Kernel *k, const Expr *e, QEpi *q)
{
    const Expr *m;
    int ok = 1;
    e = req_outer(e, DT_INT32, &q->hi, &q->lo, &q->Z, &q->S, &q->K);
    if (!e || q->S < 32)
        return 0;
    if (!is_bin(e, BIN_MUL) || e->dtype != DT_INT64 || !is_cast(e->a, DT_INT64))
        return 0;
    q->acc = e->a->a;
    m = e->b;
    if (q->acc->kind != EX_LOAD || q->acc->dtype != DT_INT32 || k->bufs[q->acc->buf].scope != BUF_LOCAL ||
        lq_coef(q->acc->a, q->vloop->var, &ok) != 1 || !ok)
        return 0;
    if (m->kind == EX_INT) {
        if (m->ival < INT32_MIN || m->ival > INT32_MAX)
            return 0;
        q->m = m->ival;
        q->mload = NULL;
    } else if (is_cast(m, DT_INT64) && m->a->kind == EX_LOAD && m->a->dtype == DT_INT32 &&
               k->bufs[m->a->buf].dtype == DT_INT32 && !lq_uses_var(m->a->a, q->vloop->var)) {
        q->mload = m->a;
    } else {
        return 0;
    }
    return q->Z >= INT32_MIN && q->Z <= INT32_MAX && q->lo <= q->hi;
}

/* An operand of the residual Add: int32(X) or int32(X) - z, X 8-bit. */
static const Expr *res_operand(const Expr *e, int64_t *z)
{
    *z = 0;
    if (is_bin(e, BIN_SUB) && e->dtype == DT_INT32 && is_int(e->b, z))
        e = e->a;
    if (!is_cast(e, DT_INT32) || (e->a->dtype != DT_INT8 && e->a->dtype != DT_UINT8))
        return NULL;
    return e->a;
}

/* The residual Add that op_quant.c's lower_quant_elemwise() prints, fused
 * after the conv's requantization:
 *
 *   min(max(T(uint64(int64(A) * m1 + int64(B) * m2 + K2) >> S2) + Z2, lo2), hi2)
 *
 * (T int64 when S2 < 32, else int32) with A and B the two centred 8-bit
 * operands: one the conv's requantized value (int8 of epi_requant's
 * form, the accumulator a local load), the other a load of the same
 * position (step 1 along the row). */
static int epi_residual(const Kernel *k, const Expr *v, DType ot, QEpi *q)
{
    const Expr *e = v, *p, *op[2], *x[2];
    int64_t m[2], z[2];
    DType t = v->dtype;
    int i, ok = 1, conv = -1;
    if (t != DT_INT32 && t != DT_INT64)
        return 0;
    p = req_outer(e, t, &q->hi2, &q->lo2, &q->Z2, &q->S2, &q->K2);
    if (!p || !is_bin(p, BIN_ADD) || p->dtype != DT_INT64)
        return 0;
    op[0] = p->a;
    op[1] = p->b;
    for (i = 0; i < 2; i++) {
        if (!is_bin(op[i], BIN_MUL) || op[i]->dtype != DT_INT64 || !is_cast(op[i]->a, DT_INT64) ||
            !is_int(op[i]->b, &m[i]) || m[i] < INT32_MIN || m[i] > INT32_MAX)
            return 0;
        x[i] = res_operand(op[i]->a->a, &z[i]);
        if (!x[i] || z[i] < -255 || z[i] > 255)
            return 0;
        if (is_cast(x[i], x[i]->dtype) && x[i]->a->dtype == DT_INT32) {
            /* the conv's value: its requantization within the 8-bit range */
            QEpi tq = *q;
            if (conv >= 0 || !epi_requant(k, x[i]->a, &tq) ||
                (x[i]->dtype == DT_INT8 ? tq.lo < -128 || tq.hi > 127 : tq.lo < 0 || tq.hi > 255))
                return 0;
            *q = tq;
            conv = i;
            continue;
        }
        while (is_cast(x[i], x[i]->dtype) && x[i]->a->dtype == x[i]->dtype)
            x[i] = x[i]->a; /* a load under a cast to its own type */
        if (x[i]->kind != EX_LOAD || k->bufs[x[i]->buf].dtype != x[i]->dtype ||
                   lq_coef(x[i]->a, q->vloop->var, &ok) != 1 || !ok || x[i]->buf == q->store->buf) {
            return 0;
        }
    }
    if (conv < 0)
        return 0;
    q->res = x[1 - conv];
    q->za = z[conv];
    q->zb = z[1 - conv];
    q->m1 = m[conv];
    q->m2 = m[1 - conv];
    q->wide = t == DT_INT64;
    if (!q->wide && (q->Z2 < INT32_MIN || q->Z2 > INT32_MAX))
        return 0;
    return ot == DT_INT8 ? q->lo2 >= -128 && q->hi2 <= 127 : q->lo2 >= 0 && q->hi2 <= 255;
}

static int epi_match(const Kernel *k, const Stmt *loop, int lanes, QEpi *q)
{
    const Stmt *s;
    const Expr *v, *x;
    DType ot;
    int ok = 1;
    memset(q, 0, sizeof *q);
    q->rloop = loop;
    s = loop->body[0];
    if (!s || s->kind != ST_FOR || s->extent % lanes || s->extent / lanes > 16)
        return 0;
    q->vloop = s;
    s = s->body[0];
    if (s && s->kind == ST_IF) {
        if (s->n_body > 1 && s->body[1])
            return 0;
        if (!is_bin(s->cond, BIN_LT) || !is_int(s->cond->b, &q->rows) ||
            lq_coef(s->cond->a, q->vloop->var, &ok) != 1 || !ok)
            return 0;
        q->rows_q = s->cond->a;
        s = s->body[0];
    }
    if (!s || s->kind != ST_STORE)
        return 0;
    q->store = s;
    ot = k->bufs[s->buf].dtype;
    if ((ot != DT_INT8 && ot != DT_UINT8) || lq_coef(s->index, q->vloop->var, &ok) != 1 || !ok)
        return 0;
    v = s->value;
    if (is_cast(v, ot))
        v = v->a;
    if (epi_residual(k, v, ot, q))
        return 1;
    q->res = NULL;
    if (v->kind == EX_LOAD) {
        /* tab[int64(Q) - qlo], Q = int8(requant) */
        q->tab = v;
        if ((v->dtype != DT_INT8 && v->dtype != DT_UINT8) || k->bufs[v->buf].dtype != v->dtype ||
            k->bufs[v->buf].numel < 256 + 3 ||
            !is_bin(v->a, BIN_SUB) || !is_int(v->a->b, &q->qlo) || !is_cast(v->a->a, DT_INT64))
            return 0;
        x = v->a->a->a;
    } else if (is_bin(v, BIN_MIN) && is_bin(v->a, BIN_MAX) && is_cast(v->a->a, DT_INT32) &&
               is_int(v->b, &q->chi) && is_int(v->a->b, &q->clo) &&
               (v->a->a->a->dtype == DT_INT8 || v->a->a->a->dtype == DT_UINT8)) {
        q->clamp = 1;
        x = v->a->a->a;
        if (!epi_requant(k, x->kind == EX_CAST ? x->a : x, q))
            return 0;
        return x->kind == EX_CAST && (x->dtype == DT_INT8 ? q->lo >= -128 && q->hi <= 127 : q->lo >= 0 && q->hi <= 255);
    } else {
        /* the requantized value stored as it is */
        return epi_requant(k, v, q) && (ot == DT_INT8 ? q->lo >= -128 && q->hi <= 127 : q->lo >= 0 && q->hi <= 255);
    }
    /* the table's operand */
    if (!x || x->kind != EX_CAST || (x->dtype != DT_INT8 && x->dtype != DT_UINT8) || !epi_requant(k, x->a, q))
        return 0;
    if (x->dtype == DT_INT8 ? !(q->lo >= -128 && q->hi <= 127) : !(q->lo >= 0 && q->hi <= 255))
        return 0;
    /* indices lo - qlo .. hi - qlo inside the table */
    return q->lo - q->qlo >= 0 && q->hi - q->qlo < 256 && q->hi - q->qlo < k->bufs[q->tab->buf].numel;
}

/* The residual Add on the vector a (the conv's requantized values): the
 * residual's bytes widened (a partial last vector read under the mask or
 * through a copy, never past the row), both operands centred, their 64-bit
 * products by the multipliers (vpmuldq on the even and the odd lanes),
 * K2 added and shifted as the scalar code does, then Z2 and the clamps in
 * int64 (S2 < 32) or int32, and the low halves put back into a. */
static void print_residual(FILE *f, const QEpi *q, int d, int lanes, int64_t o)
{
    const char *P = lanes == 16 ? "_mm512" : "_mm256", *vt = lanes == 16 ? "__m512i" : "__m256i";
    const char *w = q->res->dtype == DT_INT8 ? "epi8" : "epu8", *e64 = lanes == 16 ? "epi64" : "epi64x";
    indent(f, d);
    fprintf(f, "__m128i rb;\n");
    indent(f, d);
    if (q->rows_q)
        fprintf(f, "if (en >= %lld) ", (long long)(o + lanes));
    fprintf(f, lanes == 16 ? "rb = _mm_loadu_si128((const void *)(er + %lld));\n"
                           : "rb = _mm_loadl_epi64((const void *)(er + %lld));\n", (long long)o);
    if (q->rows_q) {
        indent(f, d);
        if (lanes == 16) {
            fprintf(f, "else rb = _mm_maskz_loadu_epi8((__mmask16)(en > %lld ? (1u << ((unsigned)(en - %lld) & 15u)) - 1u : 0u), "
                       "(const void *)(er + %lld));\n", (long long)o, (long long)o, (long long)o);
        } else {
            fprintf(f, "else {\n");
            indent(f, d + 1);
            fprintf(f, "uint8_t rt[16] = {0};\n");
            indent(f, d + 1);
            fprintf(f, "for (int64_t i = 0; i < en - %lld; i++)\n", (long long)o);
            indent(f, d + 2);
            fprintf(f, "rt[i] = (uint8_t)er[%lld + i];\n", (long long)o);
            indent(f, d + 1);
            fprintf(f, "rb = _mm_loadu_si128((const void *)rt);\n");
            indent(f, d);
            fprintf(f, "}\n");
        }
    }
    indent(f, d);
    fprintf(f, "const %s ra = %s_sub_epi32(a, %s_set1_epi32(%lld));\n", vt, P, P, (long long)q->za);
    indent(f, d);
    fprintf(f, "const %s rr = %s_sub_epi32(%s_cvt%s_epi32(rb), %s_set1_epi32(%lld));\n", vt, P, P, w, P,
            (long long)q->zb);
    indent(f, d);
    fprintf(f, "const %s m1 = %s_set1_%s(%lldLL), m2 = %s_set1_%s(%lldLL), k2 = %s_set1_%s(%lldLL);\n", vt, P, e64,
            (long long)q->m1, P, e64, (long long)q->m2, P, e64, (long long)q->K2);
    indent(f, d);
    fprintf(f, "%s re = %s_add_epi64(%s_mul_epi32(ra, m1), %s_mul_epi32(rr, m2));\n", vt, P, P, P);
    indent(f, d);
    fprintf(f, "%s ro = %s_add_epi64(%s_mul_epi32(%s_srli_epi64(ra, 32), m1), %s_mul_epi32(%s_srli_epi64(rr, 32), m2));\n",
            vt, P, P, P, P, P);
    indent(f, d);
    fprintf(f, "re = %s_srli_epi64(%s_add_epi64(re, k2), %lld);\n", P, P, (long long)q->S2);
    indent(f, d);
    fprintf(f, "ro = %s_srli_epi64(%s_add_epi64(ro, k2), %lld);\n", P, P, (long long)q->S2);
    if (q->wide) {
        int h;
        indent(f, d);
        fprintf(f, "const %s z2 = %s_set1_%s(%lldLL), l2 = %s_set1_%s(%lldLL), h2 = %s_set1_%s(%lldLL);\n", vt, P,
                e64, (long long)q->Z2, P, e64, (long long)q->lo2, P, e64, (long long)q->hi2);
        for (h = 0; h < 2; h++) {
            const char *r = h ? "ro" : "re";
            indent(f, d);
            fprintf(f, "%s = %s_add_epi64(%s, z2);\n", r, P, r);
            indent(f, d);
            if (lanes == 16)
                fprintf(f, "%s = _mm512_min_epi64(_mm512_max_epi64(%s, l2), h2);\n", r, r);
            else
                fprintf(f, "%s = _mm256_blendv_epi8(%s, l2, _mm256_cmpgt_epi64(l2, %s)); %s = _mm256_blendv_epi8(%s, h2, "
                           "_mm256_cmpgt_epi64(%s, h2));\n", r, r, r, r, r, r);
        }
    }
    indent(f, d);
    if (lanes == 16)
        fprintf(f, "a = _mm512_mask_blend_epi32((__mmask16)0xAAAA, re, _mm512_slli_epi64(ro, 32));\n");
    else
        fprintf(f, "a = _mm256_blend_epi32(re, _mm256_slli_epi64(ro, 32), 0xAA);\n");
    if (!q->wide) {
        indent(f, d);
        fprintf(f, "a = %s_add_epi32(a, %s_set1_epi32(%lld));\n", P, P, (long long)q->Z2);
        indent(f, d);
        fprintf(f, "a = %s_min_epi32(%s_max_epi32(a, %s_set1_epi32(%lld)), %s_set1_epi32(%lld));\n", P, P, P,
                (long long)q->lo2, P, (long long)q->hi2);
    }
}

static void print_epi(Printer *pr, FILE *f, const Kernel *k, const QEpi *q, int depth, int lanes)
{
    const char *P = lanes == 16 ? "_mm512" : "_mm256", *vt = lanes == 16 ? "__m512i" : "__m256i";
    const char *si = lanes == 16 ? "si512" : "si256", *ct = k->bufs[q->store->buf].dtype == DT_INT8 ? "int8_t" : "uint8_t";
    const char *rn = k->var_names[q->rloop->var], *vn = k->var_names[q->vloop->var];
    int64_t nv = q->vloop->extent / lanes, j;
    int d = depth + 1;
    indent(f, depth);
    fprintf(f, "for (int32_t %s = 0; %s < %lld; %s++) { /* requantized %lld per row, vectors of %d */\n", rn, rn,
            (long long)q->rloop->extent, rn, (long long)q->vloop->extent, lanes);
    indent(f, d);
    fprintf(f, "const int32_t %s = 0;\n", vn);
    indent(f, d);
    fprintf(f, "const int32_t *ea = &%s[", k->bufs[q->acc->buf].name);
    emit_index(pr, f, k, q->acc->a, 0);
    fprintf(f, "];\n");
    indent(f, d);
    fprintf(f, "%s *eo = &%s[", ct, k->bufs[q->store->buf].name);
    emit_index(pr, f, k, q->store->index, 0);
    fprintf(f, "];\n");
    if (q->res) {
        indent(f, d);
        fprintf(f, "const %s *er = &%s[", q->res->dtype == DT_INT8 ? "int8_t" : "uint8_t", k->bufs[q->res->buf].name);
        emit_index(pr, f, k, q->res->a, 0);
        fprintf(f, "];\n");
    }
    indent(f, d);
    if (q->mload) {
        fprintf(f, "const %s em = %s_set1_epi64%s((long long)", vt, P, lanes == 16 ? "" : "x");
        emit_expr(pr, f, k, q->mload);
        fprintf(f, ");\n");
    } else {
        fprintf(f, "const %s em = %s_set1_epi64%s(%lldLL);\n", vt, P, lanes == 16 ? "" : "x", (long long)q->m);
    }
    indent(f, d);
    fprintf(f, "const %s ek = %s_set1_epi64%s(%lldLL);\n", vt, P, lanes == 16 ? "" : "x", (long long)q->K);
    if (q->rows_q) {
        indent(f, d);
        fprintf(f, "const int64_t en = %lldLL - (int64_t)(", (long long)q->rows);
        emit_expr(pr, f, k, q->rows_q);
        fprintf(f, ");\n");
    }
    indent(f, d);
    fprintf(f, "(void)%s;\n", vn);
    if (q->tab && lanes == 16) {
        /* the table in four vectors of 64 bytes */
        fprintf(f, "#if defined(__AVX512VBMI__)\n");
        for (j = 0; j < 4; j++) {
            indent(f, d);
            fprintf(f, "const __m512i et%lld = _mm512_loadu_si512((const void *)(%s + %lld));\n", (long long)j,
                    k->bufs[q->tab->buf].name, (long long)(64 * j));
        }
        fprintf(f, "#endif\n");
    }
    for (j = 0; j < nv; j++) {
        int64_t o = j * lanes;
        indent(f, d);
        fprintf(f, "{\n");
        indent(f, d + 1);
        fprintf(f, "%s a = %s_loadu_%s((const void *)(ea + %lld));\n", vt, P, si, (long long)o);
        indent(f, d + 1);
        fprintf(f, "%s pe = %s_mul_epi32(a, em), po = %s_mul_epi32(%s_srli_epi64(a, 32), em);\n", vt, P, P, P);
        indent(f, d + 1);
        fprintf(f, "pe = %s_srli_epi64(%s_add_epi64(pe, ek), %lld);\n", P, P, (long long)q->S);
        indent(f, d + 1);
        fprintf(f, "po = %s_srli_epi64(%s_add_epi64(po, ek), %lld);\n", P, P, (long long)q->S);
        indent(f, d + 1);
        if (lanes == 16)
            fprintf(f, "a = _mm512_mask_blend_epi32((__mmask16)0xAAAA, pe, _mm512_slli_epi64(po, 32));\n");
        else
            fprintf(f, "a = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);\n");
        indent(f, d + 1);
        fprintf(f, "a = %s_add_epi32(a, %s_set1_epi32(%lld));\n", P, P, (long long)q->Z);
        indent(f, d + 1);
        fprintf(f, "a = %s_min_epi32(%s_max_epi32(a, %s_set1_epi32(%lld)), %s_set1_epi32(%lld));\n", P, P, P,
                (long long)q->lo, P, (long long)q->hi);
        if (q->clamp) {
            indent(f, d + 1);
            fprintf(f, "a = %s_min_epi32(%s_max_epi32(a, %s_set1_epi32(%lld)), %s_set1_epi32(%lld));\n", P, P, P,
                    (long long)q->clo, P, (long long)q->chi);
        }
        if (q->res)
            print_residual(f, q, d + 1, lanes, o);
        if (q->tab && lanes == 16) {
            /* VBMI: the 16 indices as bytes, two 128-entry byte permutes
             * and bit 7 choosing between them; else a gather of 4 bytes
             * at each index (the table is padded), the first kept */
            indent(f, d + 1);
            fprintf(f, "a = _mm512_sub_epi32(a, _mm512_set1_epi32(%lld));\n", (long long)q->qlo);
            fprintf(f, "#if defined(__AVX512VBMI__)\n");
            indent(f, d + 1);
            fprintf(f, "const __m512i ix = _mm512_zextsi128_si512(_mm512_cvtepi32_epi8(a));\n");
            indent(f, d + 1);
            fprintf(f, "const __m128i b = _mm512_castsi512_si128(_mm512_mask_blend_epi8(_mm512_movepi8_mask(ix), "
                       "_mm512_permutex2var_epi8(et0, ix, et1), _mm512_permutex2var_epi8(et2, ix, et3)));\n");
            fprintf(f, "#else\n");
            indent(f, d + 1);
            fprintf(f, "const __m128i b = _mm512_cvtepi32_epi8(_mm512_i32gather_epi32(a, (const void *)%s, 1));\n",
                    k->bufs[q->tab->buf].name);
            fprintf(f, "#endif\n");
        } else if (q->tab) {
            indent(f, d + 1);
            fprintf(f, "a = _mm256_i32gather_epi32((const int *)(const void *)%s, _mm256_sub_epi32(a, _mm256_set1_epi32(%lld)), 1);\n",
                    k->bufs[q->tab->buf].name, (long long)q->qlo);
        }
        indent(f, d + 1);
        if (lanes == 16 && q->tab) {
            /* b above */
            fprintf(f, "(void)0;\n");
        } else if (lanes == 16) {
            fprintf(f, "const __m128i b = _mm512_cvtepi32_epi8(a);\n");
        } else {
            fprintf(f, "const __m256i bb = _mm256_shuffle_epi8(a, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, "
                       "-1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));\n");
            indent(f, d + 1);
            fprintf(f, "const __m128i b = _mm_unpacklo_epi32(_mm256_castsi256_si128(bb), _mm256_extracti128_si256(bb, 1));\n");
        }
        indent(f, d + 1);
        if (q->rows_q)
            fprintf(f, "if (en >= %lld) ", (long long)(o + lanes));
        if (lanes == 16)
            fprintf(f, "_mm_storeu_si128((__m128i *)(void *)(eo + %lld), b);\n", (long long)o);
        else
            fprintf(f, "_mm_storel_epi64((__m128i *)(void *)(eo + %lld), b);\n", (long long)o);
        if (q->rows_q) {
            indent(f, d + 1);
            if (lanes == 16) {
                fprintf(f, "else if (en > %lld) _mm_mask_storeu_epi8((void *)(eo + %lld), (__mmask16)((1u << ((unsigned)(en - %lld) & 15u)) - 1u), b);\n",
                        (long long)o, (long long)o, (long long)o);
            } else {
                fprintf(f, "else if (en > %lld) {\n", (long long)o);
                indent(f, d + 2);
                fprintf(f, "%s tb[16];\n", ct);
                indent(f, d + 2);
                fprintf(f, "_mm_storeu_si128((__m128i *)(void *)tb, b);\n");
                indent(f, d + 2);
                fprintf(f, "for (int64_t i = 0; i < en - %lld; i++)\n", (long long)o);
                indent(f, d + 3);
                fprintf(f, "eo[%lld + i] = tb[i];\n", (long long)o);
                indent(f, d + 1);
                fprintf(f, "}\n");
            }
        }
        indent(f, d);
        fprintf(f, "}\n");
    }
    indent(f, depth);
    fprintf(f, "}\n");
}

/* A block that binds the loop variables vars (n of them) to 0 and sets
 * each pointer names[i] to &buf[idx] of loads[i] (a load or a store's
 * buffer and index): the first iteration's addresses. */
static void print_bases(Printer *pr, FILE *f, const Kernel *k, int d, const int *vars, int nv,
                        const char *const *names, const int *bufs, const Expr *const *idx, int n)
{
    int i;
    indent(f, d);
    fprintf(f, "{\n");
    for (i = 0; i < nv; i++) {
        indent(f, d + 1);
        fprintf(f, "const int32_t %s = 0;\n", k->var_names[vars[i]]);
        indent(f, d + 1);
        fprintf(f, "(void)%s;\n", k->var_names[vars[i]]);
    }
    for (i = 0; i < n; i++) {
        indent(f, d + 1);
        fprintf(f, "%s = &%s[", names[i], k->bufs[bufs[i]].name);
        emit_index(pr, f, k, idx[i], 0);
        fprintf(f, "];\n");
    }
    indent(f, d);
    fprintf(f, "}\n");
}

/* ---- the depthwise row (lower/tpl_qconv.c q_depthwise) ----
 *
 *   for ow < OWp (FOR_TENSORIZE):
 *     acc[o + ow] = init + sum_t int32(xp[b + s*ow + off_t]) * w_t
 *
 * with xp a local int16 plane, s 1 or 2, the offsets off_t constants, init
 * and the w_t (int32 of 8-bit loads or small constants) not varying along
 * the row. The taps are put in pairs (off, off + 1) (a tap without a
 * partner gets a zero weight) and each pair is one vpmaddwd: an int32 lane
 * loaded at xp[b + s*ow + off] holds the two int16 values of the pair for
 * column ow when s is 2; for s 1 the even columns and the odd ones are two
 * such vectors (loaded one element apart), interleaved after the sums.
 * The products are exact in int32 (|x| <= 255, |w| <= 128) and the adds
 * wrap like the scalar code's, so the sums are the same. */
#define DW_MAX 64

typedef struct QDw {
    const Stmt *loop, *store;
    const Expr *init;
    const Expr *x[DW_MAX], *w[DW_MAX];
    int64_t off[DW_MAX];
    int n, pair[DW_MAX]; /* pair[t]: the tap at off[t] + 1, or -1 */
    int lead[DW_MAX];     /* 1: t starts a pair (or stands alone) */
    int first;            /* the tap of the smallest offset */
    int64_t s;
} QDw;

/* A weight operand: an int32 of an 8-bit load or a constant that fits
 * int16, not varying along the row. */
static int dw_weight(const Expr *e, int var)
{
    if (lq_uses_var(e, var))
        return 0;
    if (e->kind == EX_INT)
        return e->ival >= -32768 && e->ival <= 32767;
    return is_cast(e, DT_INT32) && e->a->kind == EX_LOAD && (e->a->dtype == DT_INT8 || e->a->dtype == DT_UINT8);
}

static int dw_match(const Kernel *k, const Stmt *loop, int lanes, QDw *q)
{
    const Expr *v;
    LqAffine a0, at;
    int ok = 1, var = loop->var, i, j;
    memset(q, 0, sizeof *q);
    q->loop = loop;
    q->store = loop->body[0];
    if (!q->store || q->store->kind != ST_STORE || loop->n_body != 1)
        return 0;
    if (k->bufs[q->store->buf].scope != BUF_LOCAL || k->bufs[q->store->buf].dtype != DT_INT32 ||
        lq_coef(q->store->index, var, &ok) != 1 || !ok)
        return 0;
    v = q->store->value;
    while (is_bin(v, BIN_ADD) && v->dtype == DT_INT32 && is_bin(v->b, BIN_MUL) && q->n < DW_MAX) {
        const Expr *m = v->b, *x = cast_load(k, m->a, DT_INT16);
        if (!x || k->bufs[x->buf].scope != BUF_LOCAL || !dw_weight(m->b, var))
            return 0;
        q->x[q->n] = x;
        q->w[q->n] = m->b;
        q->n++;
        v = v->a;
    }
    q->init = v;
    if (!q->n || is_bin(v, BIN_ADD) || lq_uses_var(v, var) || v->dtype != DT_INT32)
        return 0;
    q->s = lq_coef(q->x[0]->a, var, &ok);
    if (!ok || (q->s != 1 && q->s != 2) || !lq_affine(q->x[0]->a, &a0))
        return 0;
    /* every tap the first one's index plus a constant */
    for (i = 0; i < q->n; i++) {
        if (q->x[i]->buf != q->x[0]->buf || !lq_affine(q->x[i]->a, &at) || at.n != a0.n)
            return 0;
        for (j = 0; j < at.n; j++)
            if (lq_aff_coef(&a0, at.var[j]) != at.coef[j])
                return 0;
        q->off[i] = at.c0 - a0.c0;
    }
    for (i = 0; i < q->n; i++)
        if (q->off[i] < q->off[q->first])
            q->first = i;
    for (i = 0; i < q->n; i++) {
        q->pair[i] = -1;
        q->lead[i] = 1;
    }
    /* pairs in the order of the offsets: each tap not yet taken takes the
     * tap one element after it when that one is free */
    for (;;) {
        int best = -1;
        for (i = 0; i < q->n; i++)
            if (q->lead[i] == 1 && q->pair[i] == -1 && (best < 0 || q->off[i] < q->off[best]))
                best = i;
        if (best < 0)
            break;
        q->pair[best] = -2; /* visited, no partner */
        for (j = 0; j < q->n; j++)
            if (j != best && q->lead[j] == 1 && q->pair[j] == -1 && q->off[j] == q->off[best] + 1) {
                q->pair[best] = j;
                q->lead[j] = 0;
                break;
            }
    }
    (void)lanes;
    return 1;
}

static void print_dw(Printer *pr, FILE *f, const Kernel *k, const QDw *q, int depth, int lanes)
{
    const char *P = lanes == 16 ? "_mm512" : "_mm256", *vt = lanes == 16 ? "__m512i" : "__m256i";
    const char *si = lanes == 16 ? "si512" : "si256";
    /* single: stride 1 and a row of one vector: one tap per vpmaddwd, the
     * data widened to int32 lanes (the high half the sign, weight 0) */
    int single = q->s == 1 && q->loop->extent % (2 * lanes) != 0;
    int64_t step = q->s == 1 && !single ? 2 * lanes : lanes, b = q->off[q->first];
    int i, np = 0, d = depth + 1, h;
    indent(f, depth);
    fprintf(f, "{ /* depthwise row: %d taps %s, vpmaddwd, stride %lld */\n", q->n, single ? "one by one" : "in pairs", (long long)q->s);
    indent(f, d);
    fprintf(f, "const int16_t *dx;\n");
    indent(f, d);
    fprintf(f, "int32_t *da;\n");
    {
        static const char *const nm[2] = {"dx", "da"};
        int bb[2];
        const Expr *ix[2];
        bb[0] = q->x[q->first]->buf;
        ix[0] = q->x[q->first]->a;
        bb[1] = q->store->buf;
        ix[1] = q->store->index;
        print_bases(pr, f, k, d, &q->loop->var, 1, nm, bb, ix, 2);
    }
    indent(f, d);
    fprintf(f, "const %s dinit = %s_set1_epi32((int)(", vt, P);
    emit_expr(pr, f, k, q->init);
    fprintf(f, "));\n");
    /* the weight pairs: the low half the first tap's, the high half its partner's */
    for (i = 0; i < q->n; i++) {
        if (single) {
            indent(f, d);
            fprintf(f, "const %s dw%d = %s_set1_epi32((int)((uint32_t)(", vt, i, P);
            emit_expr(pr, f, k, q->w[i]);
            fprintf(f, ") & 0xffffu));\n");
            continue;
        }
        if (!q->lead[i])
            continue;
        indent(f, d);
        fprintf(f, "const %s dw%d = %s_set1_epi32((int)(((uint32_t)(", vt, np, P);
        emit_expr(pr, f, k, q->w[i]);
        fprintf(f, ") & 0xffffu)");
        if (q->pair[i] >= 0) {
            fprintf(f, " | ((uint32_t)(");
            emit_expr(pr, f, k, q->w[q->pair[i]]);
            fprintf(f, ") << 16)");
        }
        fprintf(f, "));\n");
        np++;
    }
    if (q->s == 1 && lanes == 16 && !single) {
        indent(f, d);
        fprintf(f, "const __m512i dlo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);\n");
        indent(f, d);
        fprintf(f, "const __m512i dhi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);\n");
    }
    indent(f, d);
    fprintf(f, "for (int32_t dwo = 0; dwo < %lld; dwo += %lld) {\n", (long long)q->loop->extent, (long long)step);
    for (h = 0; h < (q->s == 1 && !single ? 2 : 1); h++) {
        indent(f, d + 1);
        fprintf(f, "%s s%d = dinit;\n", vt, h);
    }
    for (i = 0; single && i < q->n; i++) {
        indent(f, d + 1);
        if (lanes == 16)
            fprintf(f, "s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const "
                       "void *)(dx + dwo + %lld))), dw%d));\n", (long long)(q->off[i] - b), i);
        else
            fprintf(f, "s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(_mm256_cvtepi16_epi32(_mm_loadu_si128((const "
                       "void *)(dx + dwo + %lld))), dw%d));\n", (long long)(q->off[i] - b), i);
    }
    np = 0;
    for (i = 0; i < q->n && !single; i++) {
        if (!q->lead[i])
            continue;
        for (h = 0; h < (q->s == 1 ? 2 : 1); h++) {
            indent(f, d + 1);
            fprintf(f, "s%d = %s_add_epi32(s%d, %s_madd_epi16(%s_loadu_%s((const void *)(dx + %s%lld)), dw%d));\n",
                    h, P, h, P, P, si, q->s == 2 ? "2 * dwo + " : "dwo + ", (long long)(q->off[i] - b + h), np);
        }
        np++;
    }
    if (q->s == 2 || single) {
        indent(f, d + 1);
        fprintf(f, "%s_storeu_%s((void *)(da + dwo), s0);\n", P, si);
    } else if (lanes == 16) {
        indent(f, d + 1);
        fprintf(f, "_mm512_storeu_si512((void *)(da + dwo), _mm512_permutex2var_epi32(s0, dlo, s1));\n");
        indent(f, d + 1);
        fprintf(f, "_mm512_storeu_si512((void *)(da + dwo + 16), _mm512_permutex2var_epi32(s0, dhi, s1));\n");
    } else {
        indent(f, d + 1);
        fprintf(f, "const __m256i t0 = _mm256_unpacklo_epi32(s0, s1), t1 = _mm256_unpackhi_epi32(s0, s1);\n");
        indent(f, d + 1);
        fprintf(f, "_mm256_storeu_si256((void *)(da + dwo), _mm256_permute2x128_si256(t0, t1, 0x20));\n");
        indent(f, d + 1);
        fprintf(f, "_mm256_storeu_si256((void *)(da + dwo + 8), _mm256_permute2x128_si256(t0, t1, 0x31));\n");
    }
    indent(f, d);
    fprintf(f, "}\n");
    indent(f, depth);
    fprintf(f, "}\n");
}

/* ---- the plane copy of the depthwise conv (q_mark_rows) ----
 *
 *   for iw < n (FOR_TENSORIZE): xp[a + iw] = int16(int32(x[b + iw]))
 *
 * with xp int16 and x int8 or uint8: vectors of 8-bit values sign- or
 * zero-extended to 16 bits (vpmovsxbw / vpmovzxbw; 32, then 16 and 8 at
 * the end of the row), the last few scalar. */
static int copy_match(const Kernel *k, const Stmt *loop, const Expr **src)
{
    const Stmt *st = loop->body[0];
    const Expr *v;
    int ok = 1;
    if (loop->n_body != 1 || !st || st->kind != ST_STORE || k->bufs[st->buf].dtype != DT_INT16 ||
        lq_coef(st->index, loop->var, &ok) != 1 || !ok)
        return 0;
    v = st->value;
    while (v->kind == EX_CAST && (v->dtype == DT_INT16 || v->dtype == DT_INT32))
        v = v->a;
    if (v->kind != EX_LOAD || (v->dtype != DT_INT8 && v->dtype != DT_UINT8) || k->bufs[v->buf].dtype != v->dtype ||
        lq_coef(v->a, loop->var, &ok) != 1 || !ok)
        return 0;
    *src = v;
    return 1;
}

static void print_copy(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, const Expr *src, int depth, int lanes)
{
    const char *ct = src->dtype == DT_INT8 ? "int8_t" : "uint8_t";
    const char *cvt = src->dtype == DT_INT8 ? "epi8" : "epu8";
    int64_t n = loop->extent, w = lanes * 2, i;
    int d = depth + 1;
    indent(f, depth);
    fprintf(f, "{ /* %lld values widened to 16 bits */\n", (long long)n);
    indent(f, d);
    fprintf(f, "const %s *cs;\n", ct);
    indent(f, d);
    fprintf(f, "int16_t *cd;\n");
    {
        static const char *const nm[2] = {"cs", "cd"};
        int bb[2];
        const Expr *ix[2];
        bb[0] = src->buf;
        ix[0] = src->a;
        bb[1] = loop->body[0]->buf;
        ix[1] = loop->body[0]->index;
        print_bases(pr, f, k, d, &loop->var, 1, nm, bb, ix, 2);
    }
    for (i = 0; i + w <= n; i += w) {
        indent(f, d);
        if (lanes == 16)
            fprintf(f, "_mm512_storeu_si512((void *)(cd + %lld), _mm512_cvt%s_epi16(_mm256_loadu_si256((const void *)(cs + %lld))));\n",
                    (long long)i, cvt, (long long)i);
        else
            fprintf(f, "_mm256_storeu_si256((void *)(cd + %lld), _mm256_cvt%s_epi16(_mm_loadu_si128((const void *)(cs + %lld))));\n",
                    (long long)i, cvt, (long long)i);
    }
    if (lanes == 16 && i + 16 <= n) {
        indent(f, d);
        fprintf(f, "_mm256_storeu_si256((void *)(cd + %lld), _mm256_cvt%s_epi16(_mm_loadu_si128((const void *)(cs + %lld))));\n",
                (long long)i, cvt, (long long)i);
        i += 16;
    }
    if (i + 8 <= n) {
        indent(f, d);
        fprintf(f, "_mm_storeu_si128((void *)(cd + %lld), _mm_cvt%s_epi16(_mm_loadl_epi64((const void *)(cs + %lld))));\n",
                (long long)i, cvt, (long long)i);
        i += 8;
    }
    if (i < n) {
        indent(f, d);
        fprintf(f, "for (int32_t ci = %lld; ci < %lld; ci++)\n", (long long)i, (long long)n);
        indent(f, d + 1);
        fprintf(f, "cd[ci] = (int16_t)cs[ci];\n");
    }
    indent(f, depth);
    fprintf(f, "}\n");
}

/* ---- the 1x1 conv's copy (lower/tpl_qconv.c q_pointwise) ----
 *
 *   for p < n (FOR_TENSORIZE): for j < 4:
 *     xq[a + 4*p + j] = uint8(int32(x[b + p + R*j]) [+ c])
 *
 * four channel rows interleaved by position: per 16 positions one 16-byte
 * load of each row, two rounds of byte and word unpacks, c added modulo
 * 256 (the low byte of the int32 sum), 64 bytes stored; the rest scalar. */
typedef struct QIlv {
    const Stmt *st;
    const Expr *src;
    int64_t R, c;
} QIlv;

static int ilv_match(const Kernel *k, const Stmt *loop, QIlv *q)
{
    const Stmt *jl = loop->body[0];
    const Expr *v;
    int ok = 1;
    memset(q, 0, sizeof *q);
    if (loop->n_body != 1 || !jl || jl->kind != ST_FOR || jl->extent != 4 || jl->n_body != 1 || !jl->body[0] ||
        jl->body[0]->kind != ST_STORE)
        return 0;
    q->st = jl->body[0];
    if (k->bufs[q->st->buf].dtype != DT_UINT8 || lq_coef(q->st->index, loop->var, &ok) != 4 || !ok ||
        lq_coef(q->st->index, jl->var, &ok) != 1 || !ok)
        return 0;
    v = q->st->value;
    if (!is_cast(v, DT_UINT8))
        return 0;
    v = v->a;
    if (is_cast(v, DT_UINT8))
        v = v->a;
    if (is_bin(v, BIN_ADD) && v->dtype == DT_INT32 && is_int(v->b, &q->c))
        v = v->a;
    if (!is_cast(v, DT_INT32) || v->a->kind != EX_LOAD || (v->a->dtype != DT_INT8 && v->a->dtype != DT_UINT8))
        return 0;
    q->src = v->a;
    if (k->bufs[q->src->buf].dtype != q->src->dtype || lq_coef(q->src->a, loop->var, &ok) != 1 || !ok)
        return 0;
    q->R = lq_coef(q->src->a, jl->var, &ok);
    return ok && q->R >= 0;
}

static void print_ilv(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, const QIlv *q, int depth)
{
    const char *ct = q->src->dtype == DT_INT8 ? "int8_t" : "uint8_t";
    int64_t n = loop->extent, R = q->R;
    int d = depth + 1;
    indent(f, depth);
    fprintf(f, "{ /* 4 channel rows of %lld interleaved */\n", (long long)n);
    indent(f, d);
    fprintf(f, "const %s *is;\n", ct);
    indent(f, d);
    fprintf(f, "uint8_t *id;\n");
    {
        static const char *const nm[2] = {"is", "id"};
        int bb[2], vs[2];
        const Expr *ix[2];
        vs[0] = loop->var;
        vs[1] = loop->body[0]->var;
        bb[0] = q->src->buf;
        ix[0] = q->src->a;
        bb[1] = q->st->buf;
        ix[1] = q->st->index;
        print_bases(pr, f, k, d, vs, 2, nm, bb, ix, 2);
    }
    indent(f, d);
    fprintf(f, "const __m128i ic = _mm_set1_epi8((char)%lld);\n", (long long)(q->c & 0xff));
    indent(f, d);
    fprintf(f, "int64_t ip = 0;\n");
    indent(f, d);
    fprintf(f, "for (; ip + 16 <= %lld; ip += 16) {\n", (long long)n);
    indent(f, d + 1);
    fprintf(f, "const __m128i ya = _mm_loadu_si128((const void *)(is + ip)), yb = _mm_loadu_si128((const void *)(is + "
               "ip + %lld));\n", (long long)R);
    indent(f, d + 1);
    fprintf(f, "const __m128i yc = _mm_loadu_si128((const void *)(is + ip + %lld)), yd = _mm_loadu_si128((const void "
               "*)(is + ip + %lld));\n", (long long)(2 * R), (long long)(3 * R));
    indent(f, d + 1);
    fprintf(f, "const __m128i ua = _mm_unpacklo_epi8(ya, yb), ub = _mm_unpackhi_epi8(ya, yb);\n");
    indent(f, d + 1);
    fprintf(f, "const __m128i uc = _mm_unpacklo_epi8(yc, yd), ud = _mm_unpackhi_epi8(yc, yd);\n");
    indent(f, d + 1);
    fprintf(f, "_mm_storeu_si128((void *)(id + 4 * ip), _mm_add_epi8(_mm_unpacklo_epi16(ua, uc), ic));\n");
    indent(f, d + 1);
    fprintf(f, "_mm_storeu_si128((void *)(id + 4 * ip + 16), _mm_add_epi8(_mm_unpackhi_epi16(ua, uc), ic));\n");
    indent(f, d + 1);
    fprintf(f, "_mm_storeu_si128((void *)(id + 4 * ip + 32), _mm_add_epi8(_mm_unpacklo_epi16(ub, ud), ic));\n");
    indent(f, d + 1);
    fprintf(f, "_mm_storeu_si128((void *)(id + 4 * ip + 48), _mm_add_epi8(_mm_unpackhi_epi16(ub, ud), ic));\n");
    indent(f, d);
    fprintf(f, "}\n");
    indent(f, d);
    fprintf(f, "for (; ip < %lld; ip++)\n", (long long)n);
    indent(f, d + 1);
    fprintf(f, "for (int64_t ij = 0; ij < 4; ij++)\n");
    indent(f, d + 2);
    fprintf(f, "id[4 * ip + ij] = (uint8_t)(is[ip + %lld * ij] + %lld);\n", (long long)R, (long long)q->c);
    indent(f, depth);
    fprintf(f, "}\n");
}

int emit_qtile_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth)
{
    QTile t;
    int lanes = pr->vec_lanes;
    if (lanes != 8 && lanes != 16)
        return 0;
    if (loop->kind != ST_FOR || loop->for_kind != FOR_TENSORIZE)
        return 0;
    if (!match(k, loop, lanes, &t)) {
        QEpi q;
        QDw w;
        const Expr *src;
        QIlv il;
        if (ilv_match(k, loop, &il)) {
            print_ilv(pr, f, k, loop, &il, depth);
            return 1;
        }
        if (copy_match(k, loop, &src)) {
            print_copy(pr, f, k, loop, src, depth, lanes);
            return 1;
        }
        if (dw_match(k, loop, lanes, &w) && loop->extent % lanes == 0) {
            print_dw(pr, f, k, &w, depth, lanes);
            return 1;
        }
        if (!epi_match(k, loop, lanes, &q))
            return 0;
        print_epi(pr, f, k, &q, depth, lanes);
        return 1;
    }
    if (lanes == 16) {
        fprintf(f, "#if defined(__AVX512VNNI__)\n");
        print_form(pr, f, k, &t, depth, lanes, 1);
    } else {
        fprintf(f, "#if defined(__AVXVNNI__)\n");
        print_form(pr, f, k, &t, depth, lanes, 2);
        fprintf(f, "#elif defined(__AVX512VNNI__) && defined(__AVX512VL__)\n");
        print_form(pr, f, k, &t, depth, lanes, 1);
    }
    fprintf(f, "#else\n");
    print_form(pr, f, k, &t, depth, lanes, 0);
    fprintf(f, "#endif\n");
    return 1;
}
