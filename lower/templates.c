/*
 * Schedule templates: which primitives (sched.c) each stage of a kernel gets,
 * chosen from the stage's structure and a few knobs derived from the target.
 *
 * On targets that declare the fma_tile intrinsic (x86 AVX2/AVX-512), and on
 * the portable `c` target (the same tiles printed as plain loops), a
 * kernel that is one float32 contraction with constant weights (Conv,
 * depthwise Conv, MatMul, Gemm, fused epilogues included) first goes to
 * the packed-panel template (tpl_packed.c); everything below applies to
 * the kernels it does not take.
 *
 * Stages are matched by shape, not by operator, so fused kernels (an
 * epilogue folded into init/post, or inlined into an injective body) take
 * the same path as single operators:
 *
 *   reduction with reduce axes (Conv, Gemm, MatMul, pooling, reductions):
 *     register tiling. The innermost output axis with extent > 1 is the
 *     vector axis; for a sum of products the innermost other output axis
 *     that some operand does not vary along the vector axis with (the output
 *     channel of a conv, the row of a matmul) is the row axis. In order:
 *      1. the row axis is split by `rows`, and the output band reordered to
 *         (other axes, row tiles, vector axis, row in tile);
 *      2. the vector axis is partitioned into border and interior pieces
 *         before it is cut into vectors (part_vec), so that every vector of
 *         the interior is free of padding tests (a tile starting at 0 would
 *         carry the left padding column into a whole vector);
 *      3. in each piece (a scoped Sched) the vector axis is split by
 *         `lanes` (with lane masks: by a divisor near lanes, so no guard),
 *         the row and vector tile loops moved innermost, and cache_write
 *         turns the scalar accumulator into a rows x lanes local tile
 *         (rows padded to whole vectors when `pad`);
 *      4. the row loop is unrolled and the vector loop vectorized (or, on
 *         the Cortex-M and plain x86-64 targets, unrolled too: constant
 *         accumulator indices stay in registers; the portable `c` target
 *         keeps the loop for the C compiler's vectorizer);
 *      5. the remaining output loops are partitioned (row padding, the
 *         guard of a partial last vector) and the bounds tests that the
 *         ranges or a select's own condition decide are dropped.
 *     The reduce loops thus run outside the tile, every loaded operand is
 *     reused across a row or a column of the tile, and each output point
 *     keeps its reduction order: results are bit-identical to the naive
 *     schedule.
 *   injective stage: the innermost loop is vectorized.
 *   the outermost output loop of every stage is marked parallel (OpenMP,
 *   ignored without it).
 *
 * On x86 with AVX2/AVX-512, emit_c prints a vectorized loop of at most one
 * vector width as intrinsics (emit_intrin.c): the tile becomes `rows`
 * vector accumulators updated by broadcast-FMA, which is why those targets
 * keep the vector loop instead of unrolling it.
 *
 * Knobs: lanes = vector_bits / 32 (8 for the portable `c` target, which is
 * expected to be built with -march=native; 2 on scalar microcontrollers),
 * rows = 4 (2 on microcontrollers, where registers and flash are scarce;
 * 8 on AVX-512 and 6 on AVX2, whose 32 / 16 vector registers hold that many
 * accumulators next to the operands).
 */
#include "sched.h"
#include "templates_arm.h"

#include <string.h>

/* Widest border (in iterations of a tiled loop) worth a separate copy. */
#define MAX_BORDER 8

typedef struct Knobs {
    int lanes;   /* vector tile (floats) */
    int rows;    /* row tile */
    int unroll;  /* unroll the row loop of the tile */
    int unroll_vec; /* unroll the vector loop of the tile up to this extent */
    int pad;     /* local tile rows padded to whole vectors (intrinsics) */
    int part_vec; /* partition the vector axis before splitting it (else
                     its bounds tests stay inside the vectors, as masks) */
} Knobs;

static Knobs knobs_of(const Target *t)
{
    Knobs k;
    k.lanes = t->vector_bits / 32;
    k.rows = 4;
    k.unroll = 1;
    k.unroll_vec = 16;
    k.pad = 0;
    k.part_vec = 1;
    if (!strcmp(t->isa, "x86-64") && t->vector_bits >= 256) {
        /* emit_c prints a vectorized loop of one vector width as
         * intrinsics: keep the vector loop, and as many rows of vector
         * accumulators as the register file holds next to the operands
         * (32 zmm on AVX-512, 16 ymm on AVX2) */
        k.rows = t->vector_bits >= 512 ? 8 : 6;
        k.unroll_vec = 0;
        k.pad = k.lanes;
        /* AVX-512 masks: a padding test along the vector axis costs a
         * compare, cheaper than border pieces of one column */
        k.part_vec = t->vector_bits < 512;
    }
    if (t->vector_bits == 0 && !strcmp(t->isa, "c")) {
        /* the portable target: the vector loop stays a loop that the C
         * compiler vectorizes (unrolled, its lanes become separate
         * statements that gcc only vectorizes across when they are
         * branch-free, which NaN-propagating max/min are not) */
        k.lanes = 8;
        k.unroll_vec = 0;
    }
    if (k.lanes < 4) {
        k.lanes = 2;
        k.rows = 2;
    }
    return k;
}

/* A tile size for an axis of extent n near `want`: the whole axis when it
 * is small, else a divisor in [want/2, want] so no tail guard is needed,
 * else `want` with a guard. */
static int64_t pick_factor(int64_t n, int64_t want)
{
    int64_t d;
    if (n <= want)
        return n;
    for (d = want; d >= (want + 1) / 2; d--)
        if (n % d == 0)
            return d;
    return want;
}

static int expr_has_var(const Expr *e, int var)
{
    if (!e)
        return 0;
    if (e->kind == EX_VAR && e->var == var)
        return 1;
    return expr_has_var(e->a, var) || expr_has_var(e->b, var) || expr_has_var(e->c, var);
}

/* Whether e contains a load whose offset depends on `with` but not on `without`. */
static int load_varies(const Expr *e, int with, int without)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && expr_has_var(e->a, with) && !expr_has_var(e->a, without))
        return 1;
    return load_varies(e->a, with, without) || load_varies(e->b, with, without) ||
           load_varies(e->c, with, without);
}

/* A sum of products of (selected, cast) loads: Conv/Gemm/MatMul-like. */
static int is_contraction(const Compute *c)
{
    const Expr *b = c->body;
    while (b && b->kind == EX_CAST)
        b = b->a;
    return c->rop == RED_SUM && b && b->kind == EX_BINARY && b->op == BIN_MUL;
}

/* Splits axis var of extent n by want unless it fits; returns the outer
 * variable (-1 when not split) and sets *inner. */
static int split_by(Sched *s, int var, int64_t n, int64_t want, int *inner)
{
    int o = -1;
    *inner = var;
    if (want < n && sched_split(s, var, want, &o, inner))
        return -2;
    return o;
}

static void tile_reduction(Sched *s, const Compute *c, const Knobs *kn)
{
    int v = -1, r = -1, i, n = 0, p, np = 1;
    int band[TVMCC_MAX_RANK + 2], pieces[3], po[3], pi[3];
    int ro = -1, ri = -1, nout;
    int64_t ext;
    Stmt **root = &s->L->k->body;
    for (i = c->n_axes - 1; i >= 0 && v < 0; i--)
        if (c->axes[i].extent > 1)
            v = i;
    if (v < 0)
        return;
    if (is_contraction(c))
        for (i = c->n_axes - 1; i >= 0 && r < 0; i--)
            if (i != v && c->axes[i].extent > 1 &&
                load_varies(c->body, c->axes[i].var, c->axes[v].var))
                r = i;
    if (r >= 0 && (ro = split_by(s, c->axes[r].var, c->axes[r].extent,
                                 pick_factor(c->axes[r].extent, kn->rows), &ri)) == -2)
        return;
    /* output band: the other axes, then the vector axis, then the row tile */
    for (i = 0; i < c->n_axes; i++)
        if (i == r) {
            if (ro >= 0)
                band[n++] = ro;
        } else if (i != v) {
            band[n++] = c->axes[i].var;
        }
    band[n++] = c->axes[v].var;
    if (ri >= 0)
        band[n++] = ri;
    nout = n - 1 - (ri >= 0);
    if (n > 1 && sched_reorder(s, n, band))
        return;
    /* the padding of the vector axis goes to border pieces before the axis
     * is cut into vectors, so that every vector of the interior piece is
     * free of bounds tests */
    pieces[0] = c->axes[v].var;
    if (!kn->part_vec || sched_partition_pieces(s, pieces[0], MAX_BORDER, pieces, &np))
        np = 1;
    for (p = 0; p < np; p++) {
        int tile[2], nt = 0;
        s->scope = sched_find_loop(root, pieces[p]);
        ext = sched_extent(*s->scope, pieces[p]);
        /* with lane masks, a divisor of the extent near the vector width
         * (a masked vector) beats full vectors and a guarded last one */
        po[p] = split_by(s, pieces[p], ext, kn->part_vec ? kn->lanes : pick_factor(ext, kn->lanes), &pi[p]);
        if (po[p] == -2) {
            s->scope = NULL;
            return;
        }
        if (ri >= 0)
            tile[nt++] = ri;
        tile[nt++] = pi[p];
        if (ri >= 0) {
            int b3[3], nb = 0;
            if (po[p] >= 0)
                b3[nb++] = po[p];
            b3[nb++] = ri;
            b3[nb++] = pi[p];
            if (sched_reorder(s, nb, b3)) {
                s->scope = NULL;
                return;
            }
        }
        s->pad_inner = kn->pad;
        if (sched_cache_write(s, nt, tile)) {
            s->scope = NULL;
            s->pad_inner = 0;
            return;
        }
        s->scope = NULL;
        s->pad_inner = 0;
    }
    if (ri >= 0 && kn->unroll)
        sched_unroll(s, ri);
    for (p = 0; p < np; p++) {
        /* unrolling the vector loop too leaves only constant accumulator
         * indices, which compilers keep in (vector) registers */
        if (kn->unroll_vec && sched_extent(*root, pi[p]) <= kn->unroll_vec)
            sched_unroll(s, pi[p]);
        else
            sched_vectorize(s, pi[p]);
    }
    for (i = 0; i < nout; i++)
        if (sched_extent(*root, band[i]) > 1) {
            sched_parallel(s, band[i]);
            break;
        }
    /* bounds tests of padding along the other axes, and the guards of the
     * last vector: interior copies without them */
    for (i = 0; i < nout; i++)
        if (sched_extent(*root, band[i]) > 1)
            sched_partition(s, band[i], MAX_BORDER);
    for (p = 0; p < np; p++)
        if (po[p] >= 0)
            sched_partition(s, po[p], MAX_BORDER);
    sched_simplify(s);
}

static void vectorize_injective(Sched *s, const Compute *c, const Target *t)
{
    if (c->n_axes == 0)
        return;
    int i, o, in = c->axes[c->n_axes - 1].var;
    /* x86 intrinsics print a vector loop of at most one vector: cut the
     * innermost loop into vectors (a guarded partial last one) */
    if (!strcmp(t->isa, "x86-64") && t->vector_bits >= 256 && c->axes[c->n_axes - 1].extent > t->vector_bits / 32 &&
        sched_split(s, in, pick_factor(c->axes[c->n_axes - 1].extent, t->vector_bits / 32), &o, &in))
        in = c->axes[c->n_axes - 1].var;
    sched_vectorize(s, in);
    {
        /* x86: a parallel region costs microseconds, more than a small
         * elementwise kernel takes */
        int64_t numel = 1;
        for (i = 0; i < c->n_axes; i++)
            numel *= c->axes[i].extent;
        if (t->fma_tile && numel < ((int64_t)1 << 16))
            return;
    }
    for (i = 0; i + 1 < c->n_axes; i++)
        if (c->axes[i].extent > 1) {
            sched_parallel(s, c->axes[i].var);
            break;
        }
}

void template_apply(Lower *L, const Target *t)
{
    Sched s;
    Knobs kn;
    ArmKnobs ak;
    int i;
    if (!t)
        return;
    if (template_arm_knobs(t, &ak)) { /* Cortex-M with FPU: templates_arm.c */
        template_arm_apply(L, &ak);
        return;
    }
    if (!template_packed(L, t))
        return;
    kn = knobs_of(t);
    sched_init(&s, L);
    for (i = 0; i < L->k->n_stages; i++) {
        const Compute *c = &L->k->stages[i];
        if (c->rop != RED_NONE && c->n_raxes > 0)
            tile_reduction(&s, c, &kn);
        else if (c->rop == RED_NONE)
            vectorize_injective(&s, c, t);
    }
}
