/*
 * Accumulator tiles on the portable `c` target. The packed-panel template
 * (lower/tpl_packed.c) gives it the same tiles as the x86 targets: inside a
 * FOR_TENSORIZE reduce nest, `for p: for v: acc[p*VL + v] += x[..p..] *
 * w[..v..]`. The x86 targets print that nest with intrinsics
 * (emit_tile.c); here it stays plain C99, printed so that gcc and clang
 * at -O3 keep the accumulators in vector registers:
 *
 *   - the row loop (p) is preceded by `#pragma GCC unroll P` (guarded:
 *     gcc 8 and later, clang): with the rows unrolled before vectorization
 *     the v loop of VL contiguous floats is vectorized on its own. Left
 *     rolled, gcc vectorizes the p x v nest as one loop of P*VL updates
 *     when VL is shorter than its preferred vector (8 floats in a 16-float
 *     zmm), interleaving rows with permutes instead of broadcasting x;
 *   - the update is printed as NAME_FMA(x, y, acc), fmaf() when <math.h>
 *     defines FP_FAST_FMAF (C99: fmaf is as fast as a multiply and an add,
 *     i.e. a hardware fused multiply-add), else x * y + acc. In ISO C mode
 *     (-std=c99) gcc does not contract a * b + c into an FMA, so without
 *     the macro the tile would run separate multiplies and adds.
 *
 *   - a tile at an offset of a larger accumulator array (a matmul's row
 *     group) goes through a local copy of P*VL floats, which gcc keeps in
 *     registers where it leaves the offset tile in memory.
 *
 * Every accumulator still receives its products in the reduce order; the
 * fused multiply-add rounds once per product instead of twice. Below the
 * tiles: epilogue bounds tests printed as loop ends (ctile_guarded_loop)
 * and the inline exp (ctile_expf_helper).
 */
#include <string.h>

#include "emit.h"
#include "emit_ctile.h"
#include "emit_loopq.h"

/* Whether here(t) holds for s or a statement nested in it. */
static int stmt_any(const Stmt *s, int (*here)(const Stmt *))
{
    int i;
    if (!s)
        return 0;
    if (here(s))
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (stmt_any(s->body[i], here))
            return 1;
    return 0;
}

/* Whether here holds for a statement of a generated (not external) kernel. */
static int kernels_any(const Kernel *const *kernels, int n, int (*here)(const Stmt *))
{
    int i;
    for (i = 0; i < n; i++)
        if (kernels[i] && !kernels[i]->ext && stmt_any(kernels[i]->body, here))
            return 1;
    return 0;
}

static int is_tensorize_loop(const Stmt *s)
{
    return s->kind == ST_FOR && s->for_kind == FOR_TENSORIZE;
}

int ctile_any(const Kernel *const *kernels, int n)
{
    return kernels_any(kernels, n, is_tensorize_loop);
}

void ctile_begin(FILE *f, const char *upper)
{
    fprintf(f, "/* Multiply-add of the accumulator tiles: fused where the compiler says\n"
               " * fmaf is fast (C99 FP_FAST_FMAF: a hardware FMA), else a * b + c. */\n"
               "#ifdef FP_FAST_FMAF\n#define %s_FMA(a, b, c) fmaf(a, b, c)\n"
               "#else\n#define %s_FMA(a, b, c) ((a) * (b) + (c))\n#endif\n\n",
            upper, upper);
}

/* Kernels inlined into NAME_run (static functions called once, so gcc
 * inlines them at -O3) see their buffers as offsets into one arena instead
 * of restrict parameters: gcc then versioned or gave up vectorizing some of
 * their loops (shufflenet_v2_x1_0's 8-lane loops ran as scalar FMAs with
 * stores, 1.7x the time of the kernels left as functions). The same
 * header turns gcc's loop distribution into memcpy/memset off: the padded
 * copies' row loops became `rep movsq`, a third of mobilenet_v2's first
 * depthwise conv. */
void ctile_noinline(FILE *f, const char *upper)
{
    fprintf(f, "/* Kernels stay functions, with their restrict parameters (gcc and clang\n"
               " * inline a static function called once). */\n"
               "#if defined(__GNUC__)\n#define %s_NOINLINE __attribute__((noinline))\n"
               "#else\n#define %s_NOINLINE\n#endif\n",
            upper, upper);
    fprintf(f, "/* gcc: copy and fill loops stay loops for the vectorizer instead of\n"
               " * becoming memcpy/memset calls, inlined as rep movs/stos whose startup\n"
               " * outlasts a row copy. */\n"
               "#if defined(__GNUC__) && !defined(__clang__)\n"
               "#pragma GCC optimize(\"no-tree-loop-distribute-patterns\")\n#endif\n\n");
}

/* The product of an update `acc[i] = acc[i] + x * y` to a local float
 * buffer, or NULL. */
static const Expr *update_product(const Kernel *k, const Stmt *s)
{
    const Expr *v;
    if (!s || s->kind != ST_STORE || k->bufs[s->buf].scope != BUF_LOCAL ||
        k->bufs[s->buf].dtype != DT_FLOAT32 || k->bufs[s->buf].numel < 2 || !s->index)
        return NULL;
    v = s->value;
    if (!v || v->kind != EX_BINARY || v->op != BIN_ADD || v->dtype != DT_FLOAT32)
        return NULL;
    if (v->a->kind != EX_LOAD || v->a->buf != s->buf || !lq_same_expr(v->a->a, s->index))
        return NULL;
    if (v->b->kind != EX_BINARY || v->b->op != BIN_MUL || v->b->dtype != DT_FLOAT32)
        return NULL;
    return v->b;
}

int ctile_vector_loop(const Kernel *k, const Stmt *loop)
{
    return loop && loop->kind == ST_FOR && loop->n_body == 1 && update_product(k, loop->body[0]) != NULL;
}

int ctile_row_loop(const Kernel *k, const Stmt *loop)
{
    return loop && loop->kind == ST_FOR && loop->n_body == 1 && ctile_vector_loop(k, loop->body[0]);
}

void ctile_unroll_pragma(FILE *f, int64_t n)
{
    fprintf(f, "#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)\n"
               "#pragma GCC unroll %lld\n#endif\n",
            (long long)n);
}

int ctile_update(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, const char *upper, const Stmt *offset_row)
{
    const Expr *m = update_product(k, s);
    const char *an;
    if (!m)
        return 0;
    an = k->bufs[s->buf].name;
    if (offset_row) {
        /* the update of an offset tile: its local copy at p*VL + v */
        const char *pn = k->var_names[offset_row->var], *vn = k->var_names[offset_row->body[0]->var];
        long long vl = (long long)offset_row->body[0]->extent;
        fprintf(f, "%*s%s_t[%s * %lld + %s] = %s_FMA(", depth * 4, "", an, pn, vl, vn, upper);
        emit_expr(pr, f, k, m->a);
        fprintf(f, ", ");
        emit_expr(pr, f, k, m->b);
        fprintf(f, ", %s_t[%s * %lld + %s]);\n", an, pn, vl, vn);
        return 1;
    }
    fprintf(f, "%*s%s[", depth * 4, "", an);
    emit_index(pr, f, k, s->index, 0);
    fprintf(f, "] = %s_FMA(", upper);
    emit_expr(pr, f, k, m->a);
    fprintf(f, ", ");
    emit_expr(pr, f, k, m->b);
    fprintf(f, ", %s[", an);
    emit_index(pr, f, k, s->index, 0);
    fprintf(f, "]);\n");
    return 1;
}

static int has_load(const Expr *e)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD)
        return 1;
    return has_load(e->a) || has_load(e->b) || has_load(e->c);
}

int ctile_guarded_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth, const char *idx_type,
                       EmitStmtFn emit_body)
{
    const Stmt *g;
    const Expr *c;
    const char *vn;
    int ok = 1;
    if (!loop || loop->kind != ST_FOR || loop->n_body != 1 || loop->extent < 2)
        return 0;
    g = loop->body[0];
    if (!g || g->kind != ST_IF || (g->n_body > 1 && g->body[1]) || !g->cond)
        return 0;
    c = g->cond;
    if (c->kind != EX_BINARY || c->op != BIN_LT || c->a->dtype != DT_INT64 || c->b->dtype != DT_INT64 ||
        has_load(c) || lq_uses_var(c->b, loop->var) || lq_coef(c->a, loop->var, &ok) != 1 || !ok)
        return 0;
    vn = k->var_names[loop->var];
    /* a + var < b for var in [0, extent): var < min(extent, b - a) */
    fprintf(f, "%*s{\n", depth * 4, "");
    fprintf(f, "%*s%s %s_end;\n", (depth + 1) * 4, "", idx_type, vn);
    fprintf(f, "%*s{\n", (depth + 1) * 4, "");
    fprintf(f, "%*sconst %s %s = 0;\n", (depth + 2) * 4, "", idx_type, vn);
    fprintf(f, "%*s%s_end = (%s)(", (depth + 2) * 4, "", vn, idx_type);
    emit_expr(pr, f, k, c->b);
    fprintf(f, " - ");
    emit_index(pr, f, k, c->a, 2);
    fprintf(f, ");\n");
    fprintf(f, "%*s}\n", (depth + 1) * 4, "");
    fprintf(f, "%*sif (%s_end > %lld)\n", (depth + 1) * 4, "", vn, (long long)loop->extent);
    fprintf(f, "%*s%s_end = %lld;\n", (depth + 2) * 4, "", vn, (long long)loop->extent);
    fprintf(f, "%*sfor (%s %s = 0; %s < %s_end; %s++) {\n", (depth + 1) * 4, "", idx_type, vn, vn, vn, vn);
    emit_body(pr, f, k, g->body[0], depth + 2);
    fprintf(f, "%*s}\n", (depth + 1) * 4, "");
    fprintf(f, "%*s}\n", depth * 4, "");
    return 1;
}

/* ---- exp ---- */

static int expr_expf(const Expr *e)
{
    if (!e)
        return 0;
    if (e->kind == EX_UNARY && (e->op == UN_EXP || e->op == UN_SIGMOID) && e->a && e->a->dtype == DT_FLOAT32)
        return 1;
    return expr_expf(e->a) || expr_expf(e->b) || expr_expf(e->c);
}

static int stmt_expf(const Stmt *s)
{
    return expr_expf(s->value) || expr_expf(s->index) || expr_expf(s->cond);
}

int ctile_uses_expf(const Kernel *const *kernels, int n)
{
    return kernels_any(kernels, n, stmt_expf);
}

/* A call of libm's expf in a loop keeps gcc and clang from vectorizing it
 * (glibc declares vector variants only under -ffast-math). NAME_expf is
 * straight-line float and integer arithmetic that they vectorize, the same
 * method as the x86 targets' vector exp (emit_intrin.c): n = round(x / ln
 * 2) (by adding and subtracting 1.5 * 2^23), r = x - n ln 2 in two parts
 * (|r| <= ln 2 / 2), exp(r) by its Taylor polynomial to degree 7 (relative
 * error below 2e-8), times 2^n built in two exponent fields so that n from
 * -150 to 128 stays representable. x is first limited to [-104, 89] (exp
 * is 0 or inf beyond); a NaN fails both tests and stays NaN (its n is
 * taken as 0, as converting a NaN to an integer is undefined). */
void ctile_expf_helper(FILE *f, const char *upper)
{
    static const char *const c[] = {"1.0f / 720.0f", "1.0f / 120.0f", "1.0f / 24.0f",
                                    "1.0f / 6.0f", "0.5f", "1.0f", "1.0f"};
    int i;
    fprintf(f, "/* exp without a libm call, so that loops using it vectorize: within a\n"
               " * few ulp of expf (tvmcc's emit_ctile.c) */\n");
    fprintf(f, "static inline float %s_expf(float x)\n{\n", upper);
    fprintf(f, "    union {\n        float f;\n        uint32_t u;\n    } s1, s2;\n");
    fprintf(f, "    float n, r, q;\n    int32_t ni, h;\n");
    fprintf(f, "    x = x > 89.0f ? 89.0f : x;\n");
    fprintf(f, "    x = x < -104.0f ? -104.0f : x;\n");
    fprintf(f, "    n = x * 1.44269504f + 12582912.0f;\n");
    fprintf(f, "    n = n - 12582912.0f;\n");
    fprintf(f, "    r = x - n * 0.693145752f;\n");
    fprintf(f, "    r = r - n * 1.42860677e-6f;\n");
    fprintf(f, "    q = 1.0f / 5040.0f;\n");
    for (i = 0; i < 7; i++)
        fprintf(f, "    q = q * r + %s;\n", c[i]);
    fprintf(f, "    ni = (int32_t)(n == n ? n : 0.0f);\n");
    fprintf(f, "    h = ni / 2;\n");
    fprintf(f, "    s1.u = (uint32_t)(h + 127) << 23;\n");
    fprintf(f, "    s2.u = (uint32_t)(ni - h + 127) << 23;\n");
    fprintf(f, "    return q * s1.f * s2.f;\n}\n\n");
}

/* ---- tiles at an offset of a larger accumulator array ---- */

/* The first row loop in the nest under s (depth first), or NULL. */
static const Stmt *find_row(const Kernel *k, const Stmt *s)
{
    int i;
    const Stmt *r;
    if (!s)
        return NULL;
    if (ctile_row_loop(k, s))
        return s;
    for (i = 0; i < s->n_body; i++)
        if ((r = find_row(k, s->body[i])) != NULL)
            return r;
    return NULL;
}

/* Whether the loops of s other than row and its vector loop leave idx
 * alone, and s stores or loads acc only in the row's update. */
static int nest_ok(const Kernel *k, const Stmt *s, const Stmt *row, const Expr *idx, int acc)
{
    int i;
    if (!s || s == row)
        return 1;
    if (s->kind == ST_FOR && lq_uses_var(idx, s->var))
        return 0;
    if (s->kind == ST_STORE && s->buf == acc)
        return 0;
    if (s->kind == ST_DECL && s->buf == acc)
        return 0;
    (void)k;
    for (i = 0; i < s->n_body; i++)
        if (!nest_ok(k, s->body[i], row, idx, acc))
            return 0;
    return 1;
}

static int loads_buf(const Expr *e, int buf)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && e->buf == buf)
        return 1;
    return loads_buf(e->a, buf) || loads_buf(e->b, buf) || loads_buf(e->c, buf);
}

static int stmt_loads_buf(const Stmt *s, const Stmt *skip, int buf)
{
    int i;
    if (!s || s == skip)
        return 0;
    if (loads_buf(s->index, buf) || loads_buf(s->value, buf) || loads_buf(s->cond, buf))
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (stmt_loads_buf(s->body[i], skip, buf))
            return 1;
    return 0;
}

int ctile_offset_tile(const Kernel *k, const Stmt *nest, const Stmt **row_out)
{
    const Stmt *row = find_row(k, nest), *vec, *st;
    int ok = 1;
    if (!row)
        return 0;
    vec = row->body[0];
    st = vec->body[0];
    /* acc[base + p*VL + v], base moving with a loop outside the nest */
    if (lq_coef(st->index, row->var, &ok) != vec->extent || !ok || lq_coef(st->index, vec->var, &ok) != 1 || !ok)
        return 0;
    if (has_load(st->index) || !nest_ok(k, nest, row, st->index, st->buf) || stmt_loads_buf(nest, row, st->buf))
        return 0;
    if (k->bufs[st->buf].numel <= row->extent * vec->extent)
        return 0; /* the tile is the whole array already */
    *row_out = row;
    return 1;
}

void ctile_offset_open(Printer *pr, FILE *f, const Kernel *k, const Stmt *row, int depth, const char *idx_type)
{
    const Stmt *vec = row->body[0], *st = vec->body[0];
    const char *an = k->bufs[st->buf].name;
    long long n = (long long)(row->extent * vec->extent);
    fprintf(f, "%*s{\n", depth * 4, "");
    fprintf(f, "%*s%s %s_base;\n", (depth + 1) * 4, "", idx_type, an);
    fprintf(f, "%*sfloat %s_t[%lld];\n", (depth + 1) * 4, "", an, n);
    fprintf(f, "%*s{\n", (depth + 1) * 4, "");
    fprintf(f, "%*sconst %s %s = 0, %s = 0;\n", (depth + 2) * 4, "", idx_type, k->var_names[row->var],
            k->var_names[vec->var]);
    fprintf(f, "%*s%s_base = (%s)(", (depth + 2) * 4, "", an, idx_type);
    emit_index(pr, f, k, st->index, 0);
    fprintf(f, ");\n");
    fprintf(f, "%*s}\n", (depth + 1) * 4, "");
    fprintf(f, "%*sfor (%s %s_i = 0; %s_i < %lld; %s_i++)\n", (depth + 1) * 4, "", idx_type, an, an, n, an);
    fprintf(f, "%*s%s_t[%s_i] = %s[%s_base + %s_i];\n", (depth + 2) * 4, "", an, an, an, an, an);
}

void ctile_offset_close(Printer *pr, FILE *f, const Kernel *k, const Stmt *row, int depth, const char *idx_type)
{
    const Stmt *vec = row->body[0], *st = vec->body[0];
    const char *an = k->bufs[st->buf].name;
    long long n = (long long)(row->extent * vec->extent);
    fprintf(f, "%*sfor (%s %s_i = 0; %s_i < %lld; %s_i++)\n", (depth + 1) * 4, "", idx_type, an, an, n, an);
    fprintf(f, "%*s%s[%s_base + %s_i] = %s_t[%s_i];\n", (depth + 2) * 4, "", an, an, an, an, an);
    fprintf(f, "%*s}\n", depth * 4, "");
}
