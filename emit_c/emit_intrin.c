/*
 * Vector loops printed as x86 intrinsics (see emit_intrin.h).
 *
 * A loop over v with extent E <= LANES qualifies when its body is a
 * sequence of float32 stores, optionally under one guard `if (a < b)` with
 * a = v + (invariant) and b invariant (split's guard of a last, partial
 * vector), in which
 *   - every store index is v + (something invariant in v),
 *   - every value is built from float32 +, -, *, /, min, max, casts
 *     float32 -> float32 and selects on an invariant condition, of: loads
 *     at v + invariant (one vector load), and subexpressions invariant in v
 *     (one broadcast),
 *   - a buffer the body stores is loaded only at that same index, and no
 *     buffer shares memory with another (in-place reuse) unless the body
 *     is a single store (the in-place input is then read only where the
 *     store writes).
 * Then lane l of every vector operation is exactly iteration v = l of the
 * scalar loop, statement by statement, so the results do not change: min
 * and max keep tvmrt_minf/maxf's NaN rule, and a*b + c stays a separate
 * multiply and add that the compiler contracts exactly as it contracts the
 * scalar code. The body is printed once with v bound to 0, so each index
 * names lane 0's element. When E < LANES or a guard is present, loads and
 * stores are masked to the lanes the scalar loop runs (AVX-512 masks; AVX2
 * maskload, and stores of the leading lanes in 16-, 8- and 4-byte parts),
 * so no element outside them is touched.
 */
#include "emit_intrin.h"
#include "emit_loopq.h"
#include "emit_tile.h"
#include "emit_qtile.h"

#include <stdlib.h>
#include <string.h>

#include "emit.h"

typedef struct Isa {
    const char *p;    /* intrinsic prefix: "_mm512" or "_mm256" */
    int masked;       /* a lane mask `vmask` is in scope */
    int lanes;
    int64_t fixed;    /* lanes run when that is a constant (no guard), else 0 */
    const char *mask; /* AVX-512: mask of the lanes a load may touch inside
                         the true arm of a lane-wise select, else NULL */
} Isa;


int emit_intrin_lanes(const Target *t)
{
    /* the x86 family's hook (ir/family.c): AVX-512, AVX2, else none */
    if (t->vector_bits >= 512)
        return 16;
    if (t->vector_bits >= 256)
        return 8;
    return 0;
}

void emit_intrin_begin(Printer *pr, FILE *f, const Target *t)
{
    pr->vec_lanes = emit_intrin_lanes(t);
    if (!pr->vec_lanes)
        return;
    if (!emit_tile_has_header(t, "<immintrin.h>"))
        fprintf(f, "#include <immintrin.h>\n\n");
    emit_intrin_helpers(f, pr->vec_lanes);
}

int emit_intrin_stmt(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit)
{
    if (s->kind == ST_FOR && s->for_kind == FOR_TENSORIZE)
        return emit_qtile_loop(pr, f, k, s, depth); /* the int8 tile (emit_qtile.c) */
    return s->kind == ST_FOR && s->for_kind == FOR_VECTORIZE && s->extent <= pr->vec_lanes &&
           emit_intrin_loop(pr, f, k, s, depth, pr->vec_lanes);
}

static int has_load(const Expr *e)
{
    if (!e)
        return 0;
    return e->kind == EX_LOAD || has_load(e->a) || has_load(e->b) || has_load(e->c);
}

/* Whether every load in e has an index that depends on var. */
static int all_loads_vary(const Expr *e, int var)
{
    if (!e)
        return 1;
    if (e->kind == EX_LOAD && !lq_uses_var(e->a, var))
        return 0;
    return all_loads_vary(e->a, var) && all_loads_vary(e->b, var) && all_loads_vary(e->c, var);
}

/* A condition printable as a lane mask: a conjunction of comparisons of
 * affine int64 indices, or of invariant conditions. */
static int lane_cond_ok(const Stmt *body, const Expr *c, int var)
{
    int ok = 1;
    if (!c || c->dtype != DT_BOOL || lq_loads_stored(body, c))
        return 0;
    if (!lq_uses_var(c, var))
        return 1;
    if (c->kind != EX_BINARY)
        return 0;
    if (c->op == BIN_AND)
        return lane_cond_ok(body, c->a, var) && lane_cond_ok(body, c->b, var);
    if (c->op != BIN_GE && c->op != BIN_GT && c->op != BIN_LT && c->op != BIN_LE)
        return 0;
    if (c->a->dtype != DT_INT64 || c->b->dtype != DT_INT64)
        return 0;
    lq_coef(c->a, var, &ok);
    lq_coef(c->b, var, &ok);
    return ok;
}

/* Whether select e is (a > b) ? a : b or (a < b) ? a : b of float32
 * operands: exactly _mm*_max_ps(a, b) / _mm*_min_ps(a, b), a NaN in either
 * giving b (the max pool template's path for data without NaN,
 * lower/tpl_pool.c). */
static int is_plain_minmax(const Expr *e)
{
    const Expr *c = e->a;
    return e->kind == EX_SELECT && e->dtype == DT_FLOAT32 && c->kind == EX_BINARY &&
           (c->op == BIN_GT || c->op == BIN_LT) && c->a->dtype == DT_FLOAT32 && lq_same_expr(c->a, e->b) &&
           lq_same_expr(c->b, e->c);
}

/* (pr->intrin_lanes: lane-wise selects need AVX-512; pr->intrin_single:
 * the body is one store, and buffers sharing memory (in-place reuse, see
 * fuse_inplace_pair()) are then fine: the input is read only at the
 * element the store writes, and the vector statement reads all its lanes
 * before it writes any) */
static int vec_expr_ok(const Printer *pr, const Kernel *k, const Stmt *body, const Expr *e, int var)
{
    const Expr *sidx;
    if (!e || e->dtype != DT_FLOAT32)
        return 0;
    if (!lq_uses_var(e, var))
        return !lq_loads_stored(body, e);
    switch (e->kind) {
    case EX_LOAD:
        if (k->bufs[e->buf].dtype != DT_FLOAT32 || (k->bufs[e->buf].inplace && !pr->intrin_single))
            return 0;
        if (!lq_unit_stride(e->a, var)) {
            /* strided (a convolution's stride): AVX-512 permute or gather,
             * AVX2 stride 2 only (two loads and two shuffles, or a gather) */
            int ok = 1;
            int64_t c = lq_coef(e->a, var, &ok);
            if (!ok || (pr->intrin_lanes != 16 && !(pr->intrin_lanes == 8 && c == 2)) || c < 2 || c > 64 ||
                (k->bufs[e->buf].scope == BUF_LOCAL && k->bufs[e->buf].numel == 1) ||
                lq_stored_at(body, e->buf, &sidx))
                return 0;
        }
        if (lq_stored_at(body, e->buf, &sidx) && !lq_same_expr(sidx, e->a))
            return 0;
        return 1;
    case EX_BINARY:
        switch (e->op) {
        case BIN_ADD: case BIN_SUB: case BIN_MUL: case BIN_DIV: case BIN_MIN: case BIN_MAX:
            return vec_expr_ok(pr, k, body, e->a, var) && vec_expr_ok(pr, k, body, e->b, var);
        default:
            return 0;
        }
    case EX_CAST:
        return vec_expr_ok(pr, k, body, e->a, var);
    case EX_UNARY:
        /* exp (and sigmoid through it) by tvmcc_exp16/8 below: within a
         * few ulp of expf, not bit-identical */
        return (e->op == UN_EXP || e->op == UN_SIGMOID || e->op == UN_NEG || e->op == UN_ROUND) &&
               vec_expr_ok(pr, k, body, e->a, var);
    case EX_SELECT:
        if (is_plain_minmax(e))
            return vec_expr_ok(pr, k, body, e->b, var) && vec_expr_ok(pr, k, body, e->c, var);
        if (!lq_uses_var(e->a, var))
            return !lq_loads_stored(body, e->a) && vec_expr_ok(pr, k, body, e->b, var) &&
                   vec_expr_ok(pr, k, body, e->c, var);
        /* lane-wise: a mask from affine index tests; the true arm loads
         * only under the mask, the false arm loads nothing */
        return pr->intrin_lanes == 16 && lane_cond_ok(body, e->a, var) && !has_load(e->c) &&
               all_loads_vary(e->b, var) && vec_expr_ok(pr, k, body, e->b, var) &&
               vec_expr_ok(pr, k, body, e->c, var);
    default:
        return 0;
    }
}

/* The guard of a partial vector: if (a < b), a unit-stride in var, b
 * invariant, no else; NULL when s is not one. */
static const Stmt *lane_guard(const Stmt *body, const Stmt *s, int var)
{
    const Expr *c = s->cond;
    if (s->kind != ST_IF || (s->n_body > 1 && s->body[1]) || !c || c->kind != EX_BINARY ||
        c->op != BIN_LT || c->a->dtype != DT_INT64 || !lq_unit_stride(c->a, var) ||
        lq_uses_var(c->b, var) || lq_loads_stored(body, c))
        return NULL;
    return s;
}

/* The float32 operand F of an 8-bit store's value int8(int32(F)) (casts
 * to 8-bit types around it; each keeps the low byte), or NULL. */
static const Expr *q8_float(const Kernel *k, const Stmt *s)
{
    const Expr *e = s->value;
    DType t = k->bufs[s->buf].dtype;
    if (t != DT_INT8 && t != DT_UINT8)
        return NULL;
    /* 8-bit casts of 8-bit values, then one cast of a float32 (an 8-bit
     * one converts through int32_t, tvmrt.h) */
    while (e->kind == EX_CAST && (e->dtype == DT_INT8 || e->dtype == DT_UINT8) &&
           (e->a->dtype == DT_INT8 || e->a->dtype == DT_UINT8))
        e = e->a;
    if (e->kind != EX_CAST || (e->dtype != DT_INT32 && e->dtype != DT_INT8 && e->dtype != DT_UINT8) ||
        e->a->dtype != DT_FLOAT32)
        return NULL;
    return e->a;
}

static int vec_stmt_ok(const Printer *pr, const Kernel *k, const Stmt *body, const Stmt *s, int var)
{
    int i;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            if (!vec_stmt_ok(pr, k, body, s->body[i], var))
                return 0;
        return 1;
    }
    if (s->kind != ST_STORE)
        return 0;
    if (q8_float(k, s))
        /* a quantization to 8 bits (whole vectors only, emit_intrin_loop) */
        return !k->bufs[s->buf].inplace && k->bufs[s->buf].scope != BUF_LOCAL && lq_unit_stride(s->index, var) &&
               !lq_loads(q8_float(k, s), s->buf) && vec_expr_ok(pr, k, body, q8_float(k, s), var);
    if (k->bufs[s->buf].dtype != DT_FLOAT32 || (k->bufs[s->buf].inplace && !pr->intrin_single))
        return 0;
    if (k->bufs[s->buf].scope == BUF_LOCAL && k->bufs[s->buf].numel == 1)
        return 0;
    return lq_unit_stride(s->index, var) && vec_expr_ok(pr, k, body, s->value, var);
}

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", depth * 4, "");
}

/* Largest extent of a loop over var in s. */
static int64_t loop_extent(const Stmt *s, int var)
{
    int64_t m = 0, c;
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->var == var)
        m = s->extent;
    for (i = 0; i < s->n_body; i++)
        if ((c = loop_extent(s->body[i], var)) > m)
            m = c;
    return m;
}

/* Whether idx, an index into local buffer b, is c + v with c a multiple
 * of lanes and v a loop of at most lanes iterations (a block). */
static int block_index(const Kernel *k, const Buffer *b, const Expr *idx, int lanes)
{
    int64_t c = 0;
    const Expr *v = idx;
    if (idx->kind == EX_BINARY && idx->op == BIN_ADD && idx->a->kind == EX_INT) {
        c = idx->a->ival;
        v = idx->b;
    } else if (idx->kind == EX_BINARY && idx->op == BIN_ADD && idx->b->kind == EX_INT) {
        c = idx->b->ival;
        v = idx->a;
    }
    return v->kind == EX_VAR && c >= 0 && c % lanes == 0 && c + lanes <= b->numel &&
           loop_extent(k->body, v->var) <= lanes;
}

static int expr_blocks(const Kernel *k, const Expr *e, int buf, int lanes)
{
    if (!e)
        return 1;
    if (e->kind == EX_LOAD && e->buf == buf && !block_index(k, &k->bufs[buf], e->a, lanes))
        return 0;
    return expr_blocks(k, e->a, buf, lanes) && expr_blocks(k, e->b, buf, lanes) &&
           expr_blocks(k, e->c, buf, lanes);
}

static int stmt_blocks(const Kernel *k, const Stmt *s, int buf, int lanes)
{
    int i;
    if (!s)
        return 1;
    if (s->kind == ST_STORE && s->buf == buf && !block_index(k, &k->bufs[buf], s->index, lanes))
        return 0;
    if (!expr_blocks(k, s->index, buf, lanes) || !expr_blocks(k, s->value, buf, lanes) ||
        !expr_blocks(k, s->cond, buf, lanes))
        return 0;
    for (i = 0; i < s->n_body; i++)
        if (!stmt_blocks(k, s->body[i], buf, lanes))
            return 0;
    return 1;
}

/* Whether an access to buf may use all lanes even where the loop runs
 * fewer: a local array (the register tile) every access of which is to a
 * block of `lanes` elements of its own. Lanes past the loop then hold
 * values nothing else reads, and the array stays in registers. */
static int whole_vector(const Kernel *k, const Isa *x, int buf)
{
    const Buffer *b = &k->bufs[buf];
    return b->scope == BUF_LOCAL && b->numel % x->lanes == 0 && stmt_blocks(k, k->body, buf, x->lanes);
}

/* Prints condition c (lane_cond_ok) as an __mmask16. */
static void mask_expr(Printer *pr, FILE *f, const Kernel *k, const Expr *c, int var)
{
    int ok = 1, l;
    int64_t d;
    const char *cmp;
    if (!lq_uses_var(c, var)) {
        fprintf(f, "((");
        emit_expr(pr, f, k, c);
        fprintf(f, ") ? (__mmask16)0xFFFF : (__mmask16)0)");
        return;
    }
    if (c->op == BIN_AND) {
        fprintf(f, "(");
        mask_expr(pr, f, k, c->a, var);
        fprintf(f, " & ");
        mask_expr(pr, f, k, c->b, var);
        fprintf(f, ")");
        return;
    }
    /* lane l compares a - b = (a - b at lane 0) + d * l with 0 */
    d = lq_coef(c->a, var, &ok) - lq_coef(c->b, var, &ok);
    cmp = c->op == BIN_GE ? "_MM_CMPINT_NLT" : c->op == BIN_GT ? "_MM_CMPINT_NLE"
        : c->op == BIN_LT ? "_MM_CMPINT_LT" : "_MM_CMPINT_LE";
    fprintf(f, "_mm512_cmp_epi32_mask(_mm512_add_epi32(_mm512_set1_epi32((int32_t)((");
    emit_index(pr, f, k, c->a, 0);
    fprintf(f, ") - (");
    emit_index(pr, f, k, c->b, 0);
    fprintf(f, "))), _mm512_setr_epi32(");
    for (l = 0; l < 16; l++)
        fprintf(f, "%s%lld", l ? ", " : "", (long long)(d * l));
    fprintf(f, ")), _mm512_setzero_si512(), %s)", cmp);
}

/* An AVX2 load of 8 lanes reading every second element of e's buffer
 * from e's index (m: under the loop's lane mask). With the lanes run a
 * constant n, elements 0 .. 2n-2 only: a = elements 0..7 and b = 7..14
 * (each load masked where it would pass 2n-2), their even and odd lanes
 * picked by one shuffle and put in order by one permute; else a gather
 * under the mask. */
static void stride2_avx2(Printer *pr, FILE *f, const Kernel *k, const Isa *x, const Expr *e, int m)
{
    const char *name = k->bufs[e->buf].name;
    int64_t last = 2 * ((m ? x->fixed : 8) - 1);
    int half, l;
    if (m && !x->fixed) {
        fprintf(f, "_mm256_mask_i32gather_ps(_mm256_setzero_ps(), &%s[", name);
        emit_index(pr, f, k, e->a, 0);
        fprintf(f, "], _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14), _mm256_castsi256_ps(vmask), 4)");
        return;
    }
    fprintf(f, "_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(");
    for (half = 0; half < 2; half++) {
        int64_t first = half ? 7 : 0, n = last - first + 1; /* elements this load may read */
        if (half)
            fprintf(f, ", ");
        if (n <= 0) {
            fprintf(f, "_mm256_setzero_ps()");
            continue;
        }
        if (n >= 8)
            fprintf(f, "_mm256_loadu_ps(&%s[", name);
        else
            fprintf(f, "_mm256_maskload_ps(&%s[", name);
        emit_index(pr, f, k, e->a, 0);
        fprintf(f, half ? " + 7]" : "]");
        if (n < 8) {
            fprintf(f, ", _mm256_setr_epi32(");
            for (l = 0; l < 8; l++)
                fprintf(f, "%s%d", l ? ", " : "", l < n ? -1 : 0);
            fprintf(f, ")");
        }
        fprintf(f, ")");
    }
    /* per 128-bit half: a's elements 0, 2 and b's 1, 3 (elements 8, 10 of
     * the row); then the 64-bit pairs in the order 0, 2, 1, 3 */
    fprintf(f, ", _MM_SHUFFLE(3, 1, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)))");
}

static void vec_expr(Printer *pr, FILE *f, const Kernel *k, const Isa *x, const Expr *e, int var)
{
    static const char *const names[] = {"add", "sub", "mul", "div"};
    if (!lq_uses_var(e, var)) {
        fprintf(f, "%s_set1_ps(", x->p);
        emit_expr(pr, f, k, e);
        fprintf(f, ")");
        return;
    }
    switch (e->kind) {
    case EX_LOAD: {
        int m = x->masked && !whole_vector(k, x, e->buf), ok = 1, l;
        int64_t c = lq_coef(e->a, var, &ok);
        if (c != 1) {
            /* lanes l read element c*l: two loads and a permute when the
             * stride is 2 and the lanes run are a constant count (the
             * second load stops at the last element read; under a select's
             * lane mask each load reads only the even elements of the lanes
             * it keeps, tvmcc_even16), else a gather under the lane mask */
            if (x->lanes == 8) {
                stride2_avx2(pr, f, k, x, e, m);
                return;
            }
            if (c == 2 && (!m || x->fixed)) {
                /* elements 0 .. 2 * (lanes run - 1) */
                int64_t last = 2 * ((m ? x->fixed : 16) - 1);
                unsigned m0 = last >= 15 ? 0xFFFFu : (1u << (last + 1)) - 1u;
                unsigned m1 = last < 16 ? 0u : (1u << (last - 15)) - 1u;
                int half;
                fprintf(f, "_mm512_permutex2var_ps(");
                for (half = 0; half < 2; half++) {
                    if (half)
                        fprintf(f, ", _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, "
                                   "30), ");
                    if (x->mask)
                        fprintf(f, "_mm512_maskz_loadu_ps((__mmask16)(0x%Xu & tvmcc_even16((unsigned)(%s)%s)), &%s[",
                                half ? m1 : m0, x->mask, half ? " >> 8" : "", k->bufs[e->buf].name);
                    else
                        fprintf(f, "_mm512_maskz_loadu_ps((__mmask16)0x%X, &%s[", half ? m1 : m0,
                                k->bufs[e->buf].name);
                    emit_index(pr, f, k, e->a, 0);
                    fprintf(f, half ? " + 16])" : "])");
                }
                fprintf(f, ")");
                return;
            }
            if (m || x->mask)
                fprintf(f, "_mm512_mask_i32gather_ps(_mm512_setzero_ps(), %s%s%s, ",
                        x->mask ? x->mask : "", x->mask && m ? " & " : "", m ? "vmask" : "");
            else
                fprintf(f, "_mm512_i32gather_ps(");
            fprintf(f, "_mm512_setr_epi32(");
            for (l = 0; l < 16; l++)
                fprintf(f, "%s%lld", l ? ", " : "", (long long)(c * l));
            fprintf(f, "), &%s[", k->bufs[e->buf].name);
            emit_index(pr, f, k, e->a, 0);
            fprintf(f, "], 4)");
            return;
        }
        if (x->mask)
            fprintf(f, "_mm512_maskz_loadu_ps(%s%s, &%s[", x->mask, m ? " & vmask" : "",
                    k->bufs[e->buf].name);
        else if (m && !strcmp(x->p, "_mm512"))
            fprintf(f, "_mm512_maskz_loadu_ps(vmask, &%s[", k->bufs[e->buf].name);
        else if (m)
            fprintf(f, "_mm256_maskload_ps(&%s[", k->bufs[e->buf].name);
        else
            fprintf(f, "%s_loadu_ps(&%s[", x->p, k->bufs[e->buf].name);
        emit_index(pr, f, k, e->a, 0);
        fprintf(f, m && strcmp(x->p, "_mm512") ? "], vmask)" : "])");
        return;
    }
    case EX_SELECT:
        if (is_plain_minmax(e)) {
            fprintf(f, "%s_%s_ps(", x->p, e->a->op == BIN_GT ? "max" : "min");
            vec_expr(pr, f, k, x, e->b, var);
            fprintf(f, ", ");
            vec_expr(pr, f, k, x, e->c, var);
            fprintf(f, ")");
            return;
        }
        if (lq_uses_var(e->a, var)) {
            Isa in = *x;
            char *mtext = NULL;
            size_t mlen = 0;
            FILE *mf = open_memstream(&mtext, &mlen);
            if (!mf)
                die("out of memory");
            fprintf(mf, "(");
            if (x->mask)
                fprintf(mf, "%s & ", x->mask);
            mask_expr(pr, mf, k, e->a, var);
            fprintf(mf, ")");
            fclose(mf);
            in.mask = mtext;
            fprintf(f, "_mm512_mask_blend_ps(%s, ", mtext);
            vec_expr(pr, f, k, x, e->c, var);
            fprintf(f, ", ");
            vec_expr(pr, f, k, &in, e->b, var);
            fprintf(f, ")");
            free(mtext);
            return;
        }
        fprintf(f, "(");
        emit_expr(pr, f, k, e->a);
        fprintf(f, " ? ");
        vec_expr(pr, f, k, x, e->b, var);
        fprintf(f, " : ");
        vec_expr(pr, f, k, x, e->c, var);
        fprintf(f, ")");
        return;
    case EX_CAST:
        vec_expr(pr, f, k, x, e->a, var);
        return;
    case EX_UNARY: {
        const char *ex = x->lanes == 16 ? "tvmcc_exp16" : "tvmcc_exp8";
        const char *si = x->lanes == 16 ? "_mm512" : "_mm256";
        /* -a: the sign bit flipped, exactly the scalar negation */
        if (e->op == UN_SIGMOID) {
            fprintf(f, "tvmcc_sigmoid%d(", x->lanes);
            vec_expr(pr, f, k, x, e->a, var);
            fprintf(f, ")");
            return;
        }
        if (e->op == UN_ROUND) {
            /* nearbyintf: the current rounding mode, no inexact exception
             * (the scalar code's vroundss $0xc) */
            fprintf(f, x->lanes == 16 ? "_mm512_roundscale_ps(" : "_mm256_round_ps(");
            vec_expr(pr, f, k, x, e->a, var);
            fprintf(f, ", _MM_FROUND_CUR_DIRECTION | _MM_FROUND_NO_EXC)");
            return;
        }
        if (e->op == UN_NEG || e->op == UN_SIGMOID) {
            if (e->op == UN_SIGMOID)
                fprintf(f, "%s_div_ps(%s_set1_ps(1.0f), %s_add_ps(%s_set1_ps(1.0f), %s(", x->p, x->p, x->p, x->p, ex);
            if (x->lanes == 16)
                fprintf(f, "_mm512_castsi512_ps(_mm512_xor_si512(_mm512_set1_epi32((int32_t)0x80000000u), "
                           "_mm512_castps_si512(");
            else
                fprintf(f, "_mm256_xor_ps(_mm256_set1_ps(-0.0f), (");
            vec_expr(pr, f, k, x, e->a, var);
            fprintf(f, x->lanes == 16 ? ")))" : "))");
            if (e->op == UN_SIGMOID)
                fprintf(f, ")))");
            (void)si;
            return;
        }
        fprintf(f, "%s(", ex);
        vec_expr(pr, f, k, x, e->a, var);
        fprintf(f, ")");
        return;
    }
    case EX_BINARY:
        if (e->op == BIN_MIN || e->op == BIN_MAX) {
            /* tvmrt_maxf(a, b) = (a > b || a != a) ? a : b, lane-wise */
            if (!strcmp(x->p, "_mm512")) {
                /* _mm512_max_ps(a, b) is (a > b) ? a : b, the rule itself
                 * but for a NaN a, whose lanes the mask keeps as a */
                fprintf(f, "_mm512_mask_%s_ps(", e->op == BIN_MIN ? "min" : "max");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", _mm512_cmp_ps_mask(");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", _CMP_ORD_Q), ");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(pr, f, k, x, e->b, var);
                fprintf(f, ")");
            } else {
                /* _mm256_max_ps(a, b) likewise, and a where a is NaN:
                 * three operations (a compare of a with b, a compare of
                 * a with itself, an or and a blend were four) */
                fprintf(f, "_mm256_blendv_ps(_mm256_%s_ps(", e->op == BIN_MIN ? "min" : "max");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(pr, f, k, x, e->b, var);
                fprintf(f, "), ");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", _mm256_cmp_ps(");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(pr, f, k, x, e->a, var);
                fprintf(f, ", _CMP_UNORD_Q))");
            }
            return;
        }
        fprintf(f, "%s_%s_ps(", x->p, names[e->op - BIN_ADD]);
        vec_expr(pr, f, k, x, e->a, var);
        fprintf(f, ", ");
        vec_expr(pr, f, k, x, e->b, var);
        fprintf(f, ")");
        return;
    default:
        unreachable();
    }
}

static void vec_stmt(Printer *pr, FILE *f, const Kernel *k, const Isa *x, const Stmt *s, int var, int depth)
{
    int i, m;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            vec_stmt(pr, f, k, x, s->body[i], var, depth);
        return;
    }
    if (q8_float(k, s)) {
        /* int32(F) as tvmrt_f32_to_i32 (truncation; NaN 0 and values
         * below -2^31 give 0x80000000, whose low byte 0 is theirs; values
         * from 2^31 up INT32_MAX), then the low bytes */
        const int w = x->lanes == 16;
        indent(f, depth);
        fprintf(f, "{\n");
        indent(f, depth + 1);
        fprintf(f, "const %s qf = ", w ? "__m512" : "__m256");
        vec_expr(pr, f, k, x, q8_float(k, s), var);
        fprintf(f, ";\n");
        indent(f, depth + 1);
        if (w)
            fprintf(f, "const __m512i qi = _mm512_mask_mov_epi32(_mm512_cvttps_epi32(qf), _mm512_cmp_ps_mask(qf, "
                       "_mm512_set1_ps(2147483648.0f), _CMP_GE_OQ), _mm512_set1_epi32(INT32_MAX));\n");
        else
            fprintf(f, "const __m256i qi = _mm256_blendv_epi8(_mm256_cvttps_epi32(qf), _mm256_set1_epi32(INT32_MAX), "
                       "_mm256_castps_si256(_mm256_cmp_ps(qf, _mm256_set1_ps(2147483648.0f), _CMP_GE_OQ)));\n");
        indent(f, depth + 1);
        if (w) {
            fprintf(f, "_mm_storeu_si128((__m128i *)(void *)&%s[", k->bufs[s->buf].name);
            emit_index(pr, f, k, s->index, 0);
            fprintf(f, "], _mm512_cvtepi32_epi8(qi));\n");
        } else {
            fprintf(f, "const __m256i qb = _mm256_shuffle_epi8(qi, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, "
                       "-1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));\n");
            indent(f, depth + 1);
            fprintf(f, "_mm_storel_epi64((__m128i *)(void *)&%s[", k->bufs[s->buf].name);
            emit_index(pr, f, k, s->index, 0);
            fprintf(f, "], _mm_unpacklo_epi32(_mm256_castsi256_si128(qb), _mm256_extracti128_si256(qb, 1)));\n");
        }
        indent(f, depth);
        fprintf(f, "}\n");
        return;
    }
    m = x->masked && !whole_vector(k, x, s->buf);
    indent(f, depth);
    /* AVX2: the vn leading lanes by plain stores (tvmcc_store8_n), not
     * vmaskmovps, which AMD's cores microcode: a depthwise conv's padded
     * copy (rows of 14 in segments of 8 and 6) ran 2x faster on Zen 3 */
    if (m && !strcmp(x->p, "_mm512"))
        fprintf(f, "_mm512_mask_storeu_ps(&%s[", k->bufs[s->buf].name);
    else if (m)
        fprintf(f, "tvmcc_store8_n(&%s[", k->bufs[s->buf].name);
    else
        fprintf(f, "%s_storeu_ps(&%s[", x->p, k->bufs[s->buf].name);
    emit_index(pr, f, k, s->index, 0);
    fprintf(f, m ? (x->lanes == 16 ? "], vmask, " : "], vn, ") : "], ");
    vec_expr(pr, f, k, x, s->value, var);
    fprintf(f, ");\n");
}

static int has_store(const Stmt *s)
{
    int i;
    if (s->kind == ST_STORE)
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (s->body[i] && has_store(s->body[i]))
            return 1;
    return 0;
}

static int has_q8_store(const Kernel *k, const Stmt *s)
{
    int i;
    if (s->kind == ST_STORE)
        return q8_float(k, s) != NULL;
    for (i = 0; i < s->n_body; i++)
        if (s->body[i] && has_q8_store(k, s->body[i]))
            return 1;
    return 0;
}

int emit_intrin_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth, int lanes)
{
    Isa x;
    const Stmt *body, *guard;
    if (!lanes || loop->kind != ST_FOR || loop->extent > lanes || loop->extent < 2 || !loop->body[0])
        return 0;
    body = loop->body[0];
    pr->intrin_lanes = lanes;
    guard = lane_guard(body, body, loop->var);
    if (guard)
        body = guard->body[0];
    pr->intrin_single = body && body->kind == ST_STORE;
    if (!body || !has_store(body) || !vec_stmt_ok(pr, k, body, body, loop->var))
        return 0;
    if ((guard || loop->extent < lanes) && has_q8_store(k, body))
        return 0;
    x.p = lanes == 16 ? "_mm512" : "_mm256";
    x.masked = guard || loop->extent < lanes;
    x.lanes = lanes;
    x.mask = NULL;
    x.fixed = guard ? 0 : loop->extent;
    indent(f, depth);
    fprintf(f, "{\n");
    indent(f, depth + 1);
    fprintf(f, "const int32_t %s = 0; /* lane 0 of a %d-lane vector */\n", k->var_names[loop->var], lanes);
    if (x.masked) {
        /* vn: how many leading lanes the scalar loop runs */
        indent(f, depth + 1);
        if (guard) {
            fprintf(f, "const int32_t vg = (int32_t)(");
            emit_index(pr, f, k, guard->cond->b, 0);
            fprintf(f, " - (");
            emit_index(pr, f, k, guard->cond->a, 0);
            fprintf(f, "));\n");
            indent(f, depth + 1);
            fprintf(f, "const int32_t vn = vg < %lld ? vg : %lld;\n", (long long)loop->extent,
                    (long long)loop->extent);
        } else {
            fprintf(f, "const int32_t vn = %lld;\n", (long long)loop->extent);
        }
        indent(f, depth + 1);
        if (lanes == 16)
            fprintf(f, "const __mmask16 vmask = (__mmask16)(vn <= 0 ? 0u : (1u << vn) - 1u);\n");
        else
            fprintf(f, "const __m256i vmask = _mm256_cmpgt_epi32(_mm256_set1_epi32(vn), "
                       "_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));\n");
        indent(f, depth + 1);
        fprintf(f, "(void)vmask; /* unused when only the register tile is accessed */\n");
        indent(f, depth + 1);
        fprintf(f, "if (vn > 0) {\n");
        vec_stmt(pr, f, k, &x, body, loop->var, depth + 2);
        indent(f, depth + 1);
        fprintf(f, "}\n");
    } else {
        vec_stmt(pr, f, k, &x, body, loop->var, depth + 1);
    }
    indent(f, depth);
    fprintf(f, "}\n");
    return 1;
}

/* exp(x) on vectors: n = round(x / ln 2), r = x - n ln 2 in two parts
 * (|r| <= ln 2 / 2), exp(r) by its Taylor polynomial to degree 7 (relative
 * error below 2e-8 on that range, so a few ulp after rounding), times
 * 2^n. The input is first limited to [-104, 89] (exp is 0 or inf beyond,
 * in float32); NaN passes through (min/max return their second operand for
 * a NaN). */
/* 1 / d for the sigmoid, d = 1 + exp(-x) >= 1: the 14-bit reciprocal
 * estimate and one Newton step r + r * (1 - d * r), within 2 ulp of the
 * division and without its long latency. An infinite d gives the estimate
 * 0 (the step would give NaN: inf * 0), a NaN d passes through. */
static void emit_recip16(FILE *f)
{
    fprintf(f, "static inline TVMCC_MAYBE_UNUSED __m512 tvmcc_recip16(__m512 d)\n{\n");
    fprintf(f, "    const __m512 r = _mm512_rcp14_ps(d);\n");
    fprintf(f, "    const __mmask16 fin = _mm512_cmp_ps_mask(d, _mm512_set1_ps(3.40282347e38f), _CMP_LE_OQ);\n");
    fprintf(f, "    return _mm512_mask_fmadd_ps(r, fin, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(1.0f)), r);\n}\n\n");
}

/* The body the two sigmoid helpers share (prefix p: _mm512 or _mm256):
 * x limited, n = round(-x / ln 2), s = x + n ln 2 = -r, q = exp(r) by
 * the polynomial in s. */
static void emit_sigmoid_poly(FILE *f, const char *p)
{
    /* p(r) = sum c_k r^k, k <= 5, fitted to exp for the least maximum
     * relative error on |r| <= ln 2 / 2 (7.5e-8 with exact coefficients);
     * listed from c_5 to c_0, c_k times (-1)^k for the argument s = -r */
    static const char *const c[] = {"-0.008297654800f", "0.04191538319f", "-0.1666757464f", "0.4999889433f",
                                    "-0.9999997020f", "1.000000119f"};
    int i;
    fprintf(f, "    x = %s_min_ps(%s_set1_ps(104.0f), x);\n", p, p);
    fprintf(f, "    x = %s_max_ps(%s_set1_ps(-89.0f), x);\n", p, p);
    fprintf(f, "    n = %s_sub_ps(%s_fmadd_ps(x, %s_set1_ps(-1.44269504f), shift), shift);\n", p, p, p);
    fprintf(f, "    s = %s_fmadd_ps(n, %s_set1_ps(0.693145752f), x);\n", p, p);
    fprintf(f, "    s = %s_fmadd_ps(n, %s_set1_ps(1.42860677e-6f), s);\n", p, p);
    fprintf(f, "    q = %s_set1_ps(%s);\n", p, c[0]);
    for (i = 1; i < 6; i++)
        fprintf(f, "    q = %s_fmadd_ps(q, s, %s_set1_ps(%s));\n", p, p, c[i]);
}

/* The sigmoid 1 / (1 + exp(-x)) in one helper, 4 fewer instructions than
 * tvmcc_recip16 of 1 + tvmcc_exp16(-x) (the swish epilogues of efficientnet
 * are a fifth of its time): x limited to [-89, 104] (-x to exp16's range);
 * n = round(-x / ln 2) by adding and subtracting 1.5 * 2^23 (exact for
 * |n| < 2^22, round to nearest) instead of a roundscale; s = x + n ln 2
 * = -r in two parts, and exp(r) by a degree-5 polynomial in s, the
 * negation folded into the coefficients (within 3e-7 of the exact sigmoid
 * after float32 rounding, as the degree-6 Taylor polynomial, one FMA
 * fewer); then 2^n by scalef
 * and tvmcc_recip16 (0 where 1 + exp(-x) is infinite). NaN passes
 * through (min/max return their second operand for a NaN). */
static void emit_sigmoid16(FILE *f)
{
    fprintf(f, "static inline TVMCC_MAYBE_UNUSED __m512 tvmcc_sigmoid16(__m512 x)\n{\n");
    fprintf(f, "    const __m512 shift = _mm512_set1_ps(12582912.0f);\n");
    fprintf(f, "    __m512 n, s, q;\n");
    emit_sigmoid_poly(f, "_mm512");
    fprintf(f, "    return tvmcc_recip16(_mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_scalef_ps(q, n)));\n}\n\n");
}

/* The sigmoid on AVX2 vectors, as tvmcc_sigmoid16 (the same reduction and
 * degree-5 polynomial, the rounding of -x / ln 2 by adding and subtracting
 * 1.5 * 2^23), 2^n as two biased-exponent factors (n from -150 to 128:
 * 1 + exp(-x) may be infinite, giving 0) and one division (a reciprocal
 * estimate and a Newton step were no faster on Zen 3 and gave 5 ulp and
 * sigmoid(0) = 0.49999997). Within 4 ulp of the sigmoid over [-110, 110]
 * (1 / (1 + tvmcc_exp8(-x)): 2.3), exactly 0.5 at 0, 1 at +inf, 0 at -inf,
 * NaN for NaN; 15-25% faster than that form on Zen 3 (efficientnet_b0's
 * 16-to-96-channel conv and its swish: 1303 -> 1186 us, kernel minima). */
static void emit_sigmoid8(FILE *f)
{
    fprintf(f, "static inline TVMCC_MAYBE_UNUSED __m256 tvmcc_sigmoid8(__m256 x)\n{\n");
    fprintf(f, "    const __m256 shift = _mm256_set1_ps(12582912.0f);\n");
    fprintf(f, "    __m256 n, s, q, d;\n");
    fprintf(f, "    __m256i ni, h;\n");
    emit_sigmoid_poly(f, "_mm256");
    fprintf(f, "    ni = _mm256_cvtps_epi32(n);\n");
    fprintf(f, "    h = _mm256_srai_epi32(ni, 1);\n");
    fprintf(f, "    q = _mm256_mul_ps(q, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, "
               "_mm256_set1_epi32(127)), 23)));\n");
    fprintf(f, "    q = _mm256_mul_ps(q, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32("
               "_mm256_sub_epi32(ni, h), _mm256_set1_epi32(127)), 23)));\n");
    fprintf(f, "    d = _mm256_add_ps(_mm256_set1_ps(1.0f), q);\n");
    fprintf(f, "    return _mm256_div_ps(_mm256_set1_ps(1.0f), d);\n}\n\n");
}

void emit_intrin_helpers(FILE *f, int lanes)
{
    const char *v = lanes == 16 ? "__m512" : "__m256", *p = lanes == 16 ? "_mm512" : "_mm256";
    static const char *const c[] = {"1.0f / 5040.0f", "1.0f / 720.0f", "1.0f / 120.0f", "1.0f / 24.0f",
                                    "1.0f / 6.0f", "0.5f", "1.0f", "1.0f"};
    int i;
    if (!lanes)
        return;
    /* a kernel may not call it: no unused-function warning (clang warns
     * even for static inline functions) */
    fprintf(f, "#if defined(__GNUC__)\n#define TVMCC_MAYBE_UNUSED __attribute__((unused))\n#else\n"
               "#define TVMCC_MAYBE_UNUSED\n#endif\n");
    if (lanes == 8) {
        /* lanes 0..n-1 of v at p (n <= 0: none), as at most a 16-, an 8-
         * and a 4-byte store; no other element is touched */
        fprintf(f, "static inline TVMCC_MAYBE_UNUSED void tvmcc_store8_n(float *p, int32_t n, __m256 v)\n{\n");
        fprintf(f, "    __m128 q = _mm256_castps256_ps128(v);\n");
        fprintf(f, "    if (n >= 8) {\n        _mm256_storeu_ps(p, v);\n        return;\n    }\n");
        fprintf(f, "    if (n >= 4) {\n        _mm_storeu_ps(p, q);\n        p += 4;\n        n -= 4;\n"
                   "        q = _mm256_extractf128_ps(v, 1);\n    }\n");
        fprintf(f, "    if (n >= 2) {\n        _mm_storel_epi64((__m128i *)(void *)p, _mm_castps_si128(q));\n"
                   "        p += 2;\n        n -= 2;\n        q = _mm_movehl_ps(q, q);\n    }\n");
        fprintf(f, "    if (n >= 1)\n        _mm_store_ss(p, q);\n}\n\n");
    }
    fprintf(f, "static inline TVMCC_MAYBE_UNUSED %s tvmcc_exp%d(%s x)\n{\n", v, lanes, v);
    fprintf(f, "    %s n, r, q;\n", v);
    fprintf(f, "    x = %s_min_ps(%s_set1_ps(89.0f), x);\n", p, p);
    fprintf(f, "    x = %s_max_ps(%s_set1_ps(-104.0f), x);\n", p, p);
    if (lanes == 16)
        fprintf(f, "    n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)), "
                   "_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);\n");
    else
        fprintf(f, "    n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)), "
                   "_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);\n");
    fprintf(f, "    r = %s_fnmadd_ps(n, %s_set1_ps(0.693145752f), x);\n", p, p);
    fprintf(f, "    r = %s_fnmadd_ps(n, %s_set1_ps(1.42860677e-6f), r);\n", p, p);
    fprintf(f, "    q = %s_set1_ps(%s);\n", p, c[0]);
    for (i = 1; i < 8; i++)
        fprintf(f, "    q = %s_fmadd_ps(q, r, %s_set1_ps(%s));\n", p, p, c[i]);
    if (lanes == 16) {
        fprintf(f, "    return _mm512_scalef_ps(q, n);\n}\n\n");
        emit_recip16(f);
        emit_sigmoid16(f);
        /* bit i of m's low byte to bit 2i: the elements of a stride-2 load
         * that lanes 0..7 of a lane mask read */
        fprintf(f, "static inline TVMCC_MAYBE_UNUSED __mmask16 tvmcc_even16(unsigned m)\n{\n");
        fprintf(f, "    m &= 0xFFu;\n");
        fprintf(f, "    m = (m | (m << 4)) & 0x0F0Fu;\n");
        fprintf(f, "    m = (m | (m << 2)) & 0x3333u;\n");
        fprintf(f, "    return (__mmask16)((m | (m << 1)) & 0x5555u);\n}\n\n");
    } else {
        /* 2^n in two factors so that n down to -150 and up to 128 stay
         * representable: 2^(n/2) * 2^(n - n/2), each a biased exponent */
        fprintf(f, "    {\n");
        fprintf(f, "        const __m256i ni = _mm256_cvtps_epi32(n);\n");
        fprintf(f, "        const __m256i h = _mm256_srai_epi32(ni, 1);\n");
        fprintf(f, "        const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, "
                   "_mm256_set1_epi32(127)), 23));\n");
        fprintf(f, "        const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32("
                   "_mm256_sub_epi32(ni, h), _mm256_set1_epi32(127)), 23));\n");
        fprintf(f, "        return _mm256_mul_ps(_mm256_mul_ps(q, s1), s2);\n");
        fprintf(f, "    }\n}\n\n");
        emit_sigmoid8(f);
    }
}
