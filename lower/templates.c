/*
 * Schedule templates: which primitives (sched.c) each stage of a kernel gets,
 * chosen from the stage's structure and a few knobs of the target.
 *
 * On targets that declare the fma_tile intrinsic (x86 AVX2/AVX-512), and on
 * the portable `c` target (the same tiles printed as plain loops), a
 * kernel that is one float32 contraction with constant weights (Conv,
 * depthwise Conv, MatMul, Gemm, fused epilogues included) first goes to
 * the packed-panel template (tpl_packed.c), as does, with AVX-512, a sum
 * over the trailing contiguous axes (global average pooling: vectors along
 * the plane); everything below applies to the kernels it does not take.
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
 *   producer stages of a multi-stage kernel whose temps the last stage
 *     reads row by row (Softmax, the normalizations): computed per row
 *     tile of the last stage by compute_at, register-tiled in their local
 *     regions (compute_at_rows, before the stages below);
 *   injective stage: the innermost loop is vectorized.
 *   the outermost output loop of every stage is marked parallel (OpenMP,
 *   ignored without it).
 *
 * On x86 with AVX2/AVX-512, emit_c prints a vectorized loop of at most one
 * vector width as intrinsics (emit_intrin.c): the tile becomes `rows`
 * vector accumulators updated by broadcast-FMA, which is why those targets
 * keep the vector loop instead of unrolling it.
 *
 * Knobs: the target file's "schedule" object (ir/target.c reads it; the
 * defaults are in target_default_knobs()): lanes = vector_bits / 32 (8 for
 * the portable `c` target, which is expected to be built with
 * -march=native; 2 on scalar microcontrollers), rows = 4 (2 on
 * microcontrollers, where registers and flash are scarce; 8 on AVX-512 and
 * 6 on AVX2, whose 32 / 16 vector registers hold that many accumulators
 * next to the operands). In the tunable families (ir/family.c: x86 and
 * `c`), `rows` of a kernel's first contraction stage may be replaced per
 * workload by a tuning log's (generic_knobs(), lower/knobs.h).
 *
 * template_generic() is the schedule hook of the families that use these
 * templates; template_apply() calls the target family's hook.
 */
#include "sched.h"
#include "loopq.h"
#include "knobs.h"

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
    int portable; /* the portable `c` target */
} Knobs;

/* The target's "schedule" knobs (targets/NAME.json, checked by
 * ir/target.c): on x86 with AVX2/AVX-512, whose printer takes a vector
 * loop of one vector width whole (emit_c/emit_intrin.c), the vector loop
 * is kept (unroll_vec 0), the tile rows are padded to whole vectors and as
 * many rows of vector accumulators as the register file holds next to the
 * operands (6 ymm rows of 16 registers, 8 zmm of 32); AVX-512 masks make a
 * padding test along the vector axis cheaper than border pieces of one
 * column (part_vec 0). The portable target keeps its 8-float vector loop
 * for the C compiler's vectorizer (unrolled, its lanes would become
 * separate statements that gcc only vectorizes across when they are
 * branch-free, which NaN-propagating max/min are not). */
static Knobs knobs_of(const Target *t)
{
    Knobs k;
    k.lanes = t->knobs.lanes;
    k.rows = t->knobs.rows;
    k.unroll = 1;
    k.unroll_vec = t->knobs.unroll_vec;
    k.pad = t->knobs.pad;
    k.part_vec = t->knobs.part_vec;
    k.portable = t->family->portable;
    return k;
}

/* Lanes of the vector loops the target's printer takes whole, or 0. */
static int loop_lanes(const Target *t)
{
    return t->family->loop_lanes ? t->family->loop_lanes(t) : 0;
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

/* Whether e contains a load whose offset depends on `with` but not on `without`. */
static int load_varies(const Expr *e, int with, int without)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && lq_uses_var(e->a, with) && !lq_uses_var(e->a, without))
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

/* The vector axis (innermost output axis with extent > 1; -1 if none) and
 * the row axis of a reduction stage (-1 if none), as described above. */
static int tile_axes(const Compute *c, int *rp)
{
    int v = -1, r = -1, i;
    for (i = c->n_axes - 1; i >= 0 && v < 0; i--)
        if (c->axes[i].extent > 1)
            v = i;
    if (v >= 0 && is_contraction(c))
        for (i = c->n_axes - 1; i >= 0 && r < 0; i--)
            if (i != v && c->axes[i].extent > 1 &&
                load_varies(c->body, c->axes[i].var, c->axes[v].var))
                r = i;
    *rp = r;
    return v;
}

static void tile_reduction(Sched *s, const Compute *c, const Knobs *kn)
{
    int v, r, i, n = 0, p, np = 1;
    int band[TVMCC_MAX_RANK + 2], pieces[3], po[3], pi[3];
    int ro = -1, ri = -1, nout;
    int64_t ext;
    Stmt **root = &s->L->k->body;
    v = tile_axes(c, &r);
    if (v < 0)
        return;
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

/* ---- the knobs seam (lower/knobs.h): `rows` of the first contraction
 * stage, replaced by a tuning log's for this workload when given ---- */

/* A structural hash of an expression: kinds, operators, types, constants,
 * the positions of the stage's axes, and the shapes of loaded buffers
 * (strides, pads and dilations are in the index arithmetic). */
static uint64_t expr_hash(const Kernel *k, const Compute *c, const Expr *e, uint64_t h)
{
    int i;
    uint64_t x;
    if (!e)
        return h * 1099511628211ull + 7;
    x = (uint64_t)e->kind * 31 + (uint64_t)e->op * 7 + (uint64_t)e->dtype;
    if (e->kind == EX_INT)
        x ^= (uint64_t)e->ival * 0x9E3779B97F4A7C15ull;
    else if (e->kind == EX_FLOAT) {
        /* the value in 2^-20 steps (the workload keys of tuning logs); the
         * bits for NaN and values too large for that, whose conversion to
         * an integer would be undefined */
        double fx = e->fval * 1048576.0;
        uint64_t bits;
        if (fx > -9223372036854775808.0 && fx < 9223372036854775808.0) {
            x ^= (uint64_t)(int64_t)fx;
        } else {
            memcpy(&bits, &e->fval, sizeof bits);
            x ^= bits;
        }
    } else if (e->kind == EX_VAR) {
        for (i = 0; i < c->n_axes; i++)
            if (c->axes[i].var == e->var)
                x ^= (uint64_t)(i + 1) << 20;
        for (i = 0; i < c->n_raxes; i++)
            if (c->raxes[i].var == e->var)
                x ^= (uint64_t)(i + 1) << 28;
    } else if (e->kind == EX_LOAD && e->buf >= 0 && e->buf < k->n_bufs) {
        x ^= (uint64_t)k->bufs[e->buf].numel << 32;
    }
    h = (h ^ x) * 1099511628211ull;
    h = expr_hash(k, c, e->a, h);
    h = expr_hash(k, c, e->b, h);
    h = expr_hash(k, c, e->c, h);
    for (i = 0; i < e->nidx; i++)
        h = expr_hash(k, c, e->idx[i], h);
    return h;
}

static void generic_knobs(Lower *L, const Target *t, const Compute *c, Knobs *kn)
{
    const char *us = strchr(L->k->name ? L->k->name : "", '_');
    char *desc;
    TileSpace sp;
    TileKnobs tk;
    int r, i;
    /* only where the benchmarks run on the machine that tunes */
    if (!t->family->tunable)
        return;
    if (tile_axes(c, &r) < 0 || r < 0 || c->n_raxes < 1)
        return;
    desc = arena_printf(L->arena, "o");
    for (i = 0; i < c->n_axes; i++)
        desc = arena_printf(L->arena, "%s%s%lld", desc, i ? "x" : "", (long long)c->axes[i].extent);
    desc = arena_printf(L->arena, "%s,r", desc);
    for (i = 0; i < c->n_raxes; i++)
        desc = arena_printf(L->arena, "%s%s%lld", desc, i ? "x" : "", (long long)c->raxes[i].extent);
    desc = arena_printf(L->arena, "%s,e%016llx", desc,
                        (unsigned long long)expr_hash(L->k, c, c->body, 14695981039346656037ull));
    memset(&sp, 0, sizeof sp);
    sp.shape = TS_GENERIC;
    sp.lanes = kn->lanes;
    sp.regs = knobs_regs(t);
    sp.rows = c->axes[r].extent;
    sp.cols = c->axes[c->n_axes - 1].extent;
    sp.K = 1;
    for (i = 0; i < c->n_raxes; i++)
        sp.K *= c->raxes[i].extent;
    sp.macs = L->k->macs;
    sp.l2_bytes = t->l2_bytes;
    memset(&tk, 0, sizeof tk);
    tk.P = kn->rows < sp.rows ? kn->rows : (int)sp.rows;
    tk.V = 1;
    knobs_choose(L, t, arena_printf(L->arena, "generic_%s", us ? us + 1 : "op"), desc, &sp, &tk);
    if (tk.P != (kn->rows < sp.rows ? kn->rows : (int)sp.rows))
        kn->rows = tk.P;
}

/* x86: the innermost output axes merged into one loop while every index
 * walks them as one contiguous range (a 7x7 plane scaled per channel: 49
 * elements, 4 vectors instead of 7 rows of a 7-lane masked vector, whose
 * in-place masked stores also stall the next row's load). Returns the
 * innermost loop's variable and sets *extent; *merged says how many axes
 * (from the innermost) it covers. */
static int flatten_inner(Sched *s, const Compute *c, const Target *t, int64_t *extent, int *merged)
{
    int in = c->axes[c->n_axes - 1].var, i, f;
    *extent = c->axes[c->n_axes - 1].extent;
    *merged = 1;
    if (loop_lanes(t) < 8)
        return in;
    for (i = c->n_axes - 2; i >= 0 && *extent < (int64_t)t->vector_bits / 32 * 64; i--) {
        if (sched_fuse_flat(s, c->axes[i].var, in, &f))
            break;
        in = f;
        *extent *= c->axes[i].extent;
        (*merged)++;
    }
    return in;
}

static void vectorize_injective(Sched *s, const Compute *c, const Target *t)
{
    if (c->n_axes == 0)
        return;
    int i, o = -1, merged, in;
    int64_t ext;
    in = flatten_inner(s, c, t, &ext, &merged);
    /* x86 intrinsics print a vector loop of at most one vector: cut the
     * innermost loop into vectors (a guarded partial last one). A divisor
     * near the width avoids the guard, but with AVX-512 masks the guard is
     * cheap: whole vectors and a masked last one when that takes fewer
     * vectors (a 55x55 plane: 190 of 16 lanes instead of 275 of 11). */
    if (loop_lanes(t) && ext > t->vector_bits / 32) {
        int whole = in;
        const int64_t lanes = t->vector_bits / 32;
        int64_t f = pick_factor(ext, lanes);
        if ((ext + lanes - 1) / lanes < ext / f)
            f = lanes;
        if (sched_split(s, in, f, &o, &in)) {
            in = whole;
            o = -1;
        }
    }
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
    for (i = 0; i + merged < c->n_axes; i++)
        if (c->axes[i].extent > 1) {
            sched_parallel(s, c->axes[i].var);
            return;
        }
    /* every outer axis merged: the loop over vectors */
    if (merged > 1 && o >= 0)
        sched_parallel(s, o);
}

/* A sum of products of two non-constant tensors (a batched matmul of two
 * activations: Attention's probabilities times V). Such a last stage is
 * better register-tiled as a matmul than used as the loop that the
 * producers of its temps are computed in: moving them in leaves it with a
 * scalar accumulator. */
static int is_activation_product(const Kernel *k, const Compute *c)
{
    const Expr *b = c->body;
    if (c->rop != RED_SUM || c->n_raxes == 0 || !b || b->kind != EX_BINARY || b->op != BIN_MUL)
        return 0;
    if (b->a->kind != EX_LOAD || b->b->kind != EX_LOAD)
        return 0;
    return k->bufs[b->a->buf].scope != BUF_CONST && k->bufs[b->b->buf].scope != BUF_CONST;
}

/* A kernel whose earlier stages write temps that its last stage reads row
 * by row (Softmax's row max and sum, the mean and deviation of the
 * normalizations): each such stage is computed inside a loop of the last
 * stage, so its temp shrinks to the rows one iteration reads (a local
 * array: no workspace) and those input rows stay in cache between the
 * passes over them. The loop is the outermost axis of the last stage
 * with extent > 1, first split by a divisor of its extent when one
 * iteration would need fewer than `lanes` points, since the moved
 * reductions are then register-tiled across those points as
 * tile_reduction would (cache_write over the region's innermost loop,
 * unrolled or vectorized): one point at a time would leave a single
 * dependent chain of adds. No point is computed twice (at_once) and a
 * kernel without such a loop keeps its schedule. When the last stage's
 * loop was split, its tile loop is the parallel one. */
static void compute_at_rows(Lower *L, const Knobs *kn, const Target *t)
{
    Kernel *k = L->k;
    const Compute *last;
    Sched s;
    int i, j, a, var, tv, split = 0, moved = 0;
    int64_t temps = 0, trips = 1, region, f;
    if (k->n_stages < 2)
        return;
    last = &k->stages[k->n_stages - 1];
    if (is_activation_product(k, last))
        return; /* keeps its own register tiling (Attention's P V) */
    for (i = 0; i + 1 < k->n_stages; i++)
        if (k->bufs[k->stages[i].out_buf].scope == BUF_TEMP) {
            int64_t n = k->bufs[k->stages[i].out_buf].numel;
            temps = n > temps ? n : temps;
        }
    for (j = 0; j < last->n_axes && last->axes[j].extent == 1; j++)
        ;
    if (!temps || j == last->n_axes)
        return;
    var = last->axes[j].var;
    trips = last->axes[j].extent;
    for (i = 0; i < j; i++)
        trips *= last->axes[i].extent;
    /* the temp must be split by these loops, else every iteration would
     * compute all of it again */
    if (trips <= 0 || trips > temps || temps % trips)
        return; /* an empty output (extent 0) has nothing to tile */
    region = temps / trips; /* points of the largest temp per iteration */
    sched_init(&s, L);
    if (region < kn->lanes) {
        int64_t want = (kn->lanes + (region > 0 ? region : 1) - 1) / (region > 0 ? region : 1);
        f = pick_factor(last->axes[j].extent, want);
        if (f < 2 || f >= last->axes[j].extent || last->axes[j].extent % f)
            return;
        if (sched_split(&s, var, f, &var, &tv))
            return;
        split = 1;
    }
    s.at_local = 1;
    s.at_once = 1;
    for (i = k->n_stages - 2; i >= 0; i--) {
        const Compute *c = &k->stages[i];
        if (k->bufs[c->out_buf].scope != BUF_TEMP || sched_compute_at(&s, i, var))
            continue;
        moved = 1;
        /* the region's innermost loop becomes the register tile */
        for (a = c->n_axes - 1; a >= 0 && !sched_find_loop(&k->body, c->axes[a].var); a--)
            ;
        if (a < 0 || c->rop == RED_NONE)
            continue;
        tv = c->axes[a].var;
        s.pad_inner = kn->pad;
        if (!sched_cache_write(&s, 1, &tv)) {
            if (kn->unroll_vec && sched_extent(k->body, tv) <= kn->unroll_vec)
                sched_unroll(&s, tv);
            else
                sched_vectorize(&s, tv);
        }
        s.pad_inner = 0;
    }
    /* the bounds tests that the region's ranges decide (the template of
     * the stage would have dropped them) */
    if (moved)
        sched_simplify(&s);
    if (split) {
        int64_t numel = 1;
        for (i = 0; i < last->n_axes; i++)
            numel *= last->axes[i].extent;
        if (!(t->fma_tile && numel < ((int64_t)1 << 16)))
            sched_parallel(&s, var);
    }
}

void template_apply(Lower *L, const Target *t)
{
    if (!t)
        return;
    t->family->schedule(L, t);
    tpl_parallel_chunks(L);
}

void template_generic(Lower *L, const Target *t)
{
    Sched s;
    Knobs kn;
    int i;
    if (!template_packed(L, t))
        return;
    if (!tpl_winograd(L, t)) {
        template_serial_small(L, t);
        return;
    }
    kn = knobs_of(t);
    compute_at_rows(L, &kn, t);
    sched_init(&s, L);
    for (i = 0; i < L->k->n_stages; i++) {
        const Compute *c = &L->k->stages[i];
        if (L->k->bufs[c->out_buf].scope == BUF_UNUSED)
            continue; /* computed inside the last stage (compute_at_rows) */
        if (c->rop != RED_NONE && c->n_raxes > 0 && !L->k->knobs)
            generic_knobs(L, t, c, &kn);
        if (c->rop != RED_NONE && c->n_raxes > 0 && kn.portable && (c->rop == RED_MAX || c->rop == RED_MIN)) {
            /* the portable target's max/min pooling: 16 lanes, so that
             * gcc loads a stride-2 window column as two zmm and one
             * permute (its 8-lane pieces went through xmm halves and the
             * stack: squeezenet1_1's first max pool -37% time) */
            Knobs k2 = kn;
            k2.lanes = 16;
            tile_reduction(&s, c, &k2);
        } else if (c->rop != RED_NONE && c->n_raxes > 0)
            tile_reduction(&s, c, &kn);
        else if (c->rop == RED_NONE)
            vectorize_injective(&s, c, t);
    }
    template_serial_small(L, t);
}
