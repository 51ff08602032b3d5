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
    int64_t P, VL, xstep;
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
    /* X: j step 1, v step 0, p a constant step; Y: j 1, v 4, p 0 */
    if (lq_coef(t->x->a, t->jloop->var, &ok) != 1 || !ok || lq_uses_var(t->x->a, t->vloop->var))
        return 0;
    t->xstep = lq_coef(t->x->a, t->ploop->var, &ok);
    if (!ok)
        return 0;
    if (lq_coef(t->y->a, t->jloop->var, &ok) != 1 || !ok || lq_coef(t->y->a, t->vloop->var, &ok) != 4 || !ok ||
        lq_uses_var(t->y->a, t->ploop->var))
        return 0;
    return 1;
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

int emit_qtile_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth)
{
    QTile t;
    int lanes = pr->vec_lanes;
    if (lanes != 8 && lanes != 16)
        return 0;
    if (loop->kind != ST_FOR || loop->for_kind != FOR_TENSORIZE || !match(k, loop, lanes, &t))
        return 0;
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
