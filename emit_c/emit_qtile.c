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
 * lookup in an int32 table, and stored as 8 bits. Per vector of lanes:
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
    const Expr *tab;   /* the int32 table load, or NULL */
    int clamp;         /* clo/chi apply */
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

static int epi_requant(const Kernel *k, const Expr *e, QEpi *q)
{
    const Expr *m;
    int ok = 1;
    if (!is_bin(e, BIN_MIN) || e->dtype != DT_INT32 || !is_int(e->b, &q->hi))
        return 0;
    e = e->a;
    if (!is_bin(e, BIN_MAX) || !is_int(e->b, &q->lo))
        return 0;
    e = e->a;
    if (!is_bin(e, BIN_ADD) || !is_int(e->b, &q->Z) || !is_cast(e->a, DT_INT32))
        return 0;
    e = e->a->a;
    if (!is_bin(e, BIN_SHR) || e->dtype != DT_UINT64 || !is_int(e->b, &q->S) || q->S < 32 || q->S > 62 ||
        !is_cast(e->a, DT_UINT64))
        return 0;
    e = e->a->a;
    if (!is_bin(e, BIN_ADD) || e->dtype != DT_INT64 || !is_int(e->b, &q->K))
        return 0;
    e = e->a;
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
    if (v->kind == EX_LOAD) {
        /* tab[int64(Q) - qlo], Q = int8(requant) */
        q->tab = v;
        if (v->dtype != DT_INT32 || k->bufs[v->buf].dtype != DT_INT32 || k->bufs[v->buf].numel < 256 ||
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
        if (q->tab) {
            indent(f, d + 1);
            if (lanes == 16)
                fprintf(f, "a = _mm512_i32gather_epi32(_mm512_sub_epi32(a, _mm512_set1_epi32(%lld)), (const void *)%s, 4);\n",
                        (long long)q->qlo, k->bufs[q->tab->buf].name);
            else
                fprintf(f, "a = _mm256_i32gather_epi32((const int *)(const void *)%s, _mm256_sub_epi32(a, _mm256_set1_epi32(%lld)), 4);\n",
                        k->bufs[q->tab->buf].name, (long long)q->qlo);
        }
        indent(f, d + 1);
        if (lanes == 16) {
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
