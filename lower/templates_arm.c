/*
 * Schedule templates for Arm microcontrollers with a scalar FPU (Cortex-M4
 * with FPv4-SP, Cortex-M7 with FPv5): register tiles sized to the FPU's 32
 * single-precision registers, built from the primitives of sched.c.
 *
 * The FPU has no SIMD, so a tile is a block of scalar accumulators that the
 * compiler keeps in S registers: every operand loaded in the reduction loop
 * is reused across a row or a column of the block. For a reduction stage:
 *
 *   vector axis  the innermost output axis of extent > 1 (the output
 *                channel of an NHWC conv, the column of a matmul);
 *   row axis     for a sum of products, the innermost other output axis of
 *                extent > 1 along which some operand does not vary (the
 *                output pixel of a conv, whose weight is reused across
 *                pixels; depthwise convs included; the row of a matmul).
 *
 *  1. the output band is reordered to (other axes, row axis, vector axis);
 *  2. the row axis (the vector axis when there is no row axis) is
 *     partitioned into border and interior pieces, so that the interior is
 *     free of padding tests (a conv's left and right columns);
 *  3. in each piece the row axis is split by R and the vector axis by L
 *     (R x L <= acc accumulators; L = lanes when there is a row axis, up to
 *     acc otherwise; each a divisor of the extent near the wish, or the
 *     whole extent when it is small, so a 5-pixel row is one tile of 5),
 *     the tile loops are moved innermost and cache_write turns the scalar
 *     accumulator into an R x L local array;
 *  4. the tile loops are unrolled: every accumulator index is a constant,
 *     so the array lives in registers, and the reduction loop around the
 *     tile loads R + L operands for R x L multiply-adds. With NHWC layout
 *     the innermost reduce loop (input channel) walks both the input and
 *     the OHWI weights with unit stride;
 *  5. a small innermost reduce loop (a depthwise or first-layer kernel
 *     column, extent <= unroll_red) is unrolled around the tile;
 *  6. the other output loops and the split loops are partitioned (padding
 *     rows, guards of a partial last tile) and decided tests dropped.
 *
 * The reduce loops keep their order, so each output point is computed in
 * the naive schedule's order. An injective stage keeps its loops (its
 * innermost one is marked vectorized, which only matters under OpenMP).
 */
#include "templates_arm.h"
#include "loopq.h"
#include "templates_a64q.h"
#include "tpl_packed.h"

#include <string.h>

/* Widest border (in iterations) worth a separate copy. */
#define ARM_MAX_BORDER 8
/* Most multiply-add statements an unrolled reduce loop may leave. */
#define ARM_MAX_UNROLLED 64

/* The family hook (ir/family.c): with an FPU, these templates with the
 * target's "schedule" knobs (targets/NAME.json: on Cortex-M4/M7, 32 S
 * registers hold 12 accumulators (3 x 4) next to the operands of an
 * unrolled reduce loop, larger tiles spill on the depthwise and
 * first-layer convs of bench/arm's models; the integer tiles of the DSP
 * pairs are a row of 8 (core registers, 13 usable, also hold the packed
 * operand pairs, pointers and loop counters: measured on bench/arm's
 * convint and int8cnn under qemu, a row of 8 beats 3 x 4, which spills
 * every accumulator, 2 x 2 and 4 x 4 by 10-25%); the Cortex-M55's Helium
 * has 8 Q registers: 4 rows x 4 lanes; AArch64's NEON 32: 6 rows of one
 * float32x4_t next to the operands); without one, the generic
 * templates. */
void template_arm(Lower *L, const Target *t)
{
    ArmKnobs k;
    if (!t->has_fpu) {
        template_generic(L, t);
        return;
    }
    memset(&k, 0, sizeof k);
    k.acc = t->knobs.acc;
    k.lanes = t->knobs.lanes;
    k.unroll_red = t->knobs.unroll_red;
    k.dsp = t->knobs.dsp;
    k.int_acc = t->knobs.int_acc;
    k.int_lanes = t->knobs.int_lanes;
    k.vec = t->knobs.vec;
    k.dot = t->knobs.dot;
    /* Helium: the Armv8.1-M cores with vectors (the float lanes knob) */
    k.mve = t->isa && strcmp(t->isa, "armv8.1-m") == 0 && k.vec > 0;
    template_arm_apply(L, &k);
}

/* A divisor of n in [want/2, want] above 1, n itself when n <= want, else
 * want (a partial last tile). */
static int64_t fit(int64_t n, int64_t want)
{
    int64_t d;
    if (want < 1)
        want = 1;
    if (n <= want)
        return n;
    for (d = want; d >= (want + 1) / 2 && d > 1; d--)
        if (n % d == 0)
            return d;
    return want;
}

/* The largest divisor of n that is at most want (at least 1). */
static int64_t divisor_le(int64_t n, int64_t want)
{
    int64_t d;
    for (d = want < n ? want : n; d > 1; d--)
        if (n % d == 0)
            return d;
    return 1;
}

/* Whether e has a load whose offset does not depend on var. */
static int load_invariant(const Expr *e, int var)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && !lq_uses_var(e->a, var))
        return 1;
    return load_invariant(e->a, var) || load_invariant(e->b, var) || load_invariant(e->c, var);
}

/* Whether e has a load whose offset depends on both a and b. */
static int load_varies_both(const Expr *e, int a, int b)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && lq_uses_var(e->a, a) && lq_uses_var(e->a, b))
        return 1;
    return load_varies_both(e->a, a, b) || load_varies_both(e->b, a, b) ||
           load_varies_both(e->c, a, b);
}

static int is_sum_of_products(const Compute *c)
{
    const Expr *b = c->body;
    while (b && b->kind == EX_CAST)
        b = b->a;
    return c->rop == RED_SUM && b && b->kind == EX_BINARY && b->op == BIN_MUL;
}

/* Splits var (extent n) by f unless f covers it: returns 0 and sets the
 * outer (-1 when not split) and inner variables, or nonzero on refusal. */
static int split_or_keep(Sched *s, int var, int64_t n, int64_t f, int *outer, int *inner)
{
    *outer = -1;
    *inner = var;
    if (f < n)
        return sched_split(s, var, f, outer, inner);
    return 0;
}

/* A sum of products computed in int32 (the integer contractions of
 * op_quant.c: QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger). */
static int is_int_sum_of_products(const Compute *c)
{
    return is_sum_of_products(c) && c->body->dtype == DT_INT32;
}

/* Splits the longest even reduce axis of c by 2 and moves the pair loop
 * innermost in the reduce band (integer sums are exact modulo 2^32, so the
 * new order gives the same bits). emit_arm.c prints that loop, around the
 * register tile, as one SMLAD per accumulator. Returns the pair loop's
 * variable, or -1 when the stage has no even reduce axis or a primitive
 * refused (the reduce loops are then as before). */
static int pair_reduce(Sched *s, const Compute *c)
{
    int i, best = -1, band[TVMCC_MAX_RANK + 1], n = 0, outer, inner;
    for (i = 0; i < c->n_raxes; i++)
        if (c->raxes[i].extent % 2 == 0 && (best < 0 || c->raxes[i].extent > c->raxes[best].extent))
            best = i;
    if (best < 0 || sched_split(s, c->raxes[best].var, 2, &outer, &inner))
        return -1;
    for (i = 0; i < c->n_raxes; i++)
        band[n++] = i == best ? outer : c->raxes[i].var;
    band[n++] = inner;
    if (n > 2 && best < c->n_raxes - 1 && sched_reorder(s, n, band))
        return -1;
    return inner;
}

/* (int32) of an 8-bit load, seen through a padding select: the load. */
static const Expr *byte_load(const Lower *L, const Expr *e)
{
    DType t;
    if (e->kind == EX_SELECT)
        e = e->b;
    if (e->kind != EX_CAST || e->dtype != DT_INT32 || e->a->kind != EX_LOAD)
        return NULL;
    t = L->k->bufs[e->a->buf].dtype;
    return t == DT_INT8 || t == DT_UINT8 ? e->a : NULL;
}

/* Coefficient of var in index e, reading a clamp min(max(x, lo), hi) to a
 * window's bounds as x (the interior pieces partition leaves have none);
 * *ok cleared when e is not of that form. */
static int64_t coef_unclamped(const Expr *e, int var, int *ok)
{
    int64_t a, b;
    switch (e->kind) {
    case EX_INT: return 0;
    case EX_VAR: return e->var == var;
    case EX_CAST: return coef_unclamped(e->a, var, ok);
    case EX_BINARY:
        a = coef_unclamped(e->a, var, ok);
        b = coef_unclamped(e->b, var, ok);
        switch (e->op) {
        case BIN_ADD: return a + b;
        case BIN_SUB: return a - b;
        case BIN_MUL:
            if (e->a->kind == EX_INT)
                return e->a->ival * b;
            if (e->b->kind == EX_INT)
                return e->b->ival * a;
            if (a || b)
                *ok = 0;
            return 0;
        case BIN_MIN: case BIN_MAX:
            if (e->b->kind == EX_INT)
                return a;
            if (a || b)
                *ok = 0;
            return 0;
        default:
            if (a || b || lq_uses_var(e, var))
                *ok = 0;
            return 0;
        }
    default:
        if (lq_uses_var(e, var))
            *ok = 0;
        return 0;
    }
}

static int unit_unclamped(const Expr *e, int var)
{
    int ok = 1;
    return coef_unclamped(e, var, &ok) == 1 && ok;
}

/* An integer sum of products of two 8-bit operands whose innermost reduce
 * axis (of extent > 1) walks both with unit stride and runs a multiple of
 * 4 times: that loop stays whole and innermost in the reduce band, and
 * emit_arm.c prints it four iterations at a time with one 32-bit load per
 * operand (quad_loop) instead of pairing iterations. */
static int quad_reduce(const Lower *L, const Compute *c)
{
    const Expr *a, *b;
    int i, o, ok;
    if (c->body->kind != EX_BINARY || c->body->op != BIN_MUL)
        return 0;
    a = byte_load(L, c->body->a);
    b = byte_load(L, c->body->b);
    for (i = c->n_raxes - 1; i >= 0 && c->raxes[i].extent == 1; i--)
        ;
    if (!a || !b || i < 0 || !unit_unclamped(a->a, c->raxes[i].var) ||
        !unit_unclamped(b->a, c->raxes[i].var))
        return 0;
    if (c->raxes[i].extent >= 4)
        return 1;
    /* a short axis (3 input channels) inside one that continues it in both
     * operands (the kernel column): step 7 merges the two */
    for (o = i - 1; o >= 0 && c->raxes[o].extent == 1; o--)
        ;
    if (o < 0 || o != i - 1 || c->raxes[o].extent * c->raxes[i].extent < 4)
        return 0;
    ok = 1;
    ok &= coef_unclamped(a->a, c->raxes[o].var, &ok) == c->raxes[i].extent;
    ok &= coef_unclamped(b->a, c->raxes[o].var, &ok) == c->raxes[i].extent;
    return ok;
}

/* An integer sum of products of two 8-bit operands that both walk the
 * vector axis (the innermost output axis of extent > 1) with unit stride,
 * a multiple of 4 long: an NHWC depthwise conv, whose input and [1, KH, KW,
 * C] weights hold the channels of one tap side by side. The tile takes 4
 * lanes, and emit_arm.c prints each group of 4 lanes as one 32-bit load per
 * operand and four 16 x 16-bit multiply-accumulates (lane_quads). */
static int lane_quad(const Lower *L, const Compute *c)
{
    const Expr *a, *b;
    int v;
    if (c->body->kind != EX_BINARY || c->body->op != BIN_MUL)
        return 0;
    a = byte_load(L, c->body->a);
    b = byte_load(L, c->body->b);
    for (v = c->n_axes - 1; v >= 0 && c->axes[v].extent == 1; v--)
        ;
    return a && b && v >= 0 && c->axes[v].extent % 4 == 0 &&
           lq_unit_stride(a->a, c->axes[v].var) && lq_unit_stride(b->a, c->axes[v].var);
}

/* Every loop over outer whose only statement is the loop over inner, in
 * the tree at slot, merged into one loop by fuse_flat where both walk one
 * contiguous range in every index: a window's kernel column and input
 * channels of an NHWC conv (KW x C bytes in a row of the input and of the
 * OHWI weights), so the four-at-a-time loop runs over the whole row. The
 * pieces with padding along the column keep their loops (fuse_flat
 * refuses the clamped index). */
static void fuse_quad_rows(Sched *s, Stmt **slot, int outer, int inner)
{
    Stmt *a = *slot, **save;
    int i;
    if (!a)
        return;
    if (a->kind == ST_FOR && a->var == outer && a->body[0] && a->body[0]->kind == ST_FOR &&
        a->body[0]->var == inner) {
        save = s->scope;
        s->scope = slot;
        sched_fuse_flat(s, outer, inner, NULL);
        s->scope = save;
        return;
    }
    for (i = 0; i < a->n_body; i++)
        fuse_quad_rows(s, &a->body[i], outer, inner);
}

/* The length of the loop quad_reduce's stage runs four at a time: its
 * innermost reduce axis of extent > 1, times the one around it when that
 * axis is the last and shorter than 4 (input channels that step 7 merges
 * with the kernel column). */
static int64_t quad_extent(const Compute *c)
{
    int i, o;
    for (i = c->n_raxes - 1; i >= 0 && c->raxes[i].extent == 1; i--)
        ;
    if (i < 0)
        return 0;
    for (o = i - 1; o >= 0 && c->raxes[o].extent == 1; o--)
        ;
    return o >= 0 && i == c->n_raxes - 1 && c->raxes[i].extent < 4
               ? c->raxes[i].extent * c->raxes[o].extent
               : c->raxes[i].extent;
}

static void tile_stage(Sched *s, const Compute *c, const ArmKnobs *k)
{
    Stmt **root = &s->L->k->body;
    int v = -1, r = -1, i, n = 0, p, np = 1, part, vpart;
    int band[TVMCC_MAX_RANK + 2], pieces[3], ro[3], ri[3], vo[3], vi[3];
    int64_t acc = k->acc > 0 ? k->acc : 1, lanes = k->lanes > 0 ? k->lanes : 1;
    int64_t tile_stmts = 1;
    int int_dsp = k->dsp && is_int_sum_of_products(c);
    /* a float32 stage on a vector target: vector tiles */
    int vec = k->vec > 1 && c->body->dtype == DT_FLOAT32 &&
              s->L->k->bufs[c->out_buf].dtype == DT_FLOAT32 ? k->vec : 0;
    int paired = 0, lanequad = 0, quad = 0;
    A64qPlan a64;
    if (vec)
        lanes = vec;
    if (int_dsp) {
        /* (a split reduce axis names no loop any more: step 5 then
         * leaves the pair loop alone) */
        acc = k->int_acc > 0 ? k->int_acc : 1;
        lanes = k->int_lanes > 0 ? k->int_lanes : 1;
        if (lane_quad(s->L, c)) {
            lanes = 4;
            acc = 8; /* 2 rows x 4 lanes: each weight word serves two rows */
            lanequad = 1;
        } else if (quad_reduce(s->L, c)) {
            quad = 1;
            /* a short reduction (a first conv's kernel row: 4 to 9 bytes)
             * runs the C form of emit_arm.c's loop, whose register tile
             * pays for more accumulators: 3 x 2 rather than 2 x 2
             * (bench/arm's DS-CNN first conv 1.53 M against 1.94 M) */
            if (quad_extent(c) < 16)
                acc = acc * 3 / 2;
        } else {
            paired = pair_reduce(s, c) >= 0;
        }
    }
    if (k->dot && a64q_plan(s->L, c, &a64)) { /* AArch64 NEON int8 (templates_a64q.c) */
        int_dsp = 1;
        quad = a64.dot;
        lanequad = a64.lane;
        acc = a64.acc;
        lanes = a64.lanes;
    }
    for (i = c->n_axes - 1; i >= 0 && v < 0; i--)
        if (c->axes[i].extent > 1)
            v = i;
    if (v < 0)
        return;
    if (vec && is_sum_of_products(c))
        /* vector tiles: the row axis is one along which some operand does
         * not vary and no operand varies together with the vector axis
         * (an NCHW conv's output channel: one input vector and one
         * broadcast weight per row), so a tile loads R + 1 operands */
        for (i = v - 1; i >= 0 && r < 0; i--)
            if (c->axes[i].extent > 1 && load_invariant(c->body, c->axes[i].var) &&
                !load_varies_both(c->body, c->axes[i].var, c->axes[v].var))
                r = i;
    if (is_sum_of_products(c))
        for (i = v - 1; i >= 0 && r < 0; i--)
            if (c->axes[i].extent > 1 && load_invariant(c->body, c->axes[i].var))
                r = i;
    /* vector tiles partition the vector axis (its padding tests would be
     * lane-wise selects), the others the row axis */
    vpart = vec && r >= 0;
    /* 1. output band: the other axes, the row axis, the vector axis (the
     * vector axis, then the row axis, when it is the one partitioned) */
    for (i = 0; i < c->n_axes; i++)
        if (i != v && i != r)
            band[n++] = c->axes[i].var;
    if (r >= 0 && !vpart)
        band[n++] = c->axes[r].var;
    band[n++] = c->axes[v].var;
    if (vpart)
        band[n++] = c->axes[r].var;
    if (n > 1 && sched_reorder(s, n, band))
        return;
    n -= 1 + (r >= 0); /* band[0..n) are the other axes */
    /* 2. border and interior pieces of the row axis */
    part = c->axes[r >= 0 && !vpart ? r : v].var;
    pieces[0] = part;
    if (sched_partition_pieces(s, part, ARM_MAX_BORDER, pieces, &np))
        np = 1;
    /* 3. a tile in each piece */
    for (p = 0; p < np; p++) {
        int64_t re, ve, rf, vf;
        int order[4], no = 0, tile[2], nt = 0;
        /* the row and vector loops of this piece */
        int rowv = vpart ? c->axes[r].var : pieces[p], vecv = vpart ? pieces[p] : c->axes[v].var;
        s->scope = sched_find_loop(root, pieces[p]);
        if (!s->scope)
            return;
        re = sched_extent(*s->scope, rowv);
        ve = sched_extent(*s->scope, vecv);
        ro[p] = vo[p] = -1;
        ri[p] = vi[p] = -1;
        if (r >= 0) {
            /* cache_write takes one split guard: at most one of the two
             * factors may leave a partial tile */
            int64_t rf2, vf2 = divisor_le(ve, lanes);
            vf = fit(ve, lanes);
            if (vec && ve >= vec)
                vf = vf2 = vec; /* whole vectors; a partial last one stays scalar */
            rf = ve % vf ? divisor_le(re, acc / vf) : fit(re, acc / vf);
            rf2 = fit(re, acc / vf2);
            if (rf2 * vf2 > rf * vf && (!vec || ve % vf2 == 0)) {
                rf = rf2;
                vf = vf2;
            }
            if (rf == re && rf * vf < acc / 2 && !vec) /* a short piece: widen the row */
                vf = fit(ve, acc / rf);
            if (split_or_keep(s, rowv, re, rf, &ro[p], &ri[p]) ||
                split_or_keep(s, vecv, ve, vf, &vo[p], &vi[p]))
                break;
            if (vpart && vo[p] >= 0)
                order[no++] = vo[p];
            if (ro[p] >= 0)
                order[no++] = ro[p];
            if (!vpart && vo[p] >= 0)
                order[no++] = vo[p];
            order[no++] = ri[p];
            order[no++] = vi[p];
            /* (also moves split's guards under the tile band) */
            if (sched_reorder(s, no, order))
                break;
            tile[nt++] = ri[p];
        } else {
            vf = vec && re >= vec ? vec : fit(re, acc);
            rf = 1;
            if (split_or_keep(s, pieces[p], re, vf, &vo[p], &vi[p]))
                break;
        }
        tile[nt++] = vi[p];
        s->pad_inner = vec; /* tile rows in whole vectors */
        if (sched_cache_write(s, nt, tile)) {
            s->pad_inner = 0;
            break;
        }
        s->pad_inner = 0;
        if (rf * vf > tile_stmts)
            tile_stmts = rf * vf;
    }
    s->scope = NULL;
    np = p; /* pieces actually tiled */
    /* 4. constant accumulator indices */
    for (p = 0; p < np; p++) {
        if (ri[p] >= 0)
            sched_unroll(s, ri[p]);
        if (vec)
            sched_vectorize(s, vi[p]);
        else
            sched_unroll(s, vi[p]);
    }
    /* 5. a short innermost reduce loop */
    /* (with no even reduce axis the innermost reduce loop stays a loop:
     * emit_arm.c pairs its iterations, the odd last one scalar) */
    if (np > 0 && k->unroll_red > 1 && !(int_dsp && !paired && !lanequad)) {
        for (i = c->n_raxes - 1; i >= 0 && c->raxes[i].extent == 1; i--)
            ;
        if (i >= 0 && c->raxes[i].extent <= k->unroll_red &&
            c->raxes[i].extent * tile_stmts <= ARM_MAX_UNROLLED)
            sched_unroll(s, c->raxes[i].var);
    }
    /* 6. padding along the other axes, guards of partial tiles */
    for (i = 0; i < n; i++)
        if (sched_extent(*root, band[i]) > 1)
            sched_partition(s, band[i], ARM_MAX_BORDER);
    for (p = 0; p < np; p++) {
        if (ro[p] >= 0)
            sched_partition(s, ro[p], ARM_MAX_BORDER);
        if (vo[p] >= 0)
            sched_partition(s, vo[p], ARM_MAX_BORDER);
    }
    sched_simplify(s);
    if (quad) { /* 7. the quad axis with the reduce axis around it */
        int q = -1, o = -1;
        for (i = c->n_raxes - 1; i >= 0; i--)
            if (c->raxes[i].extent > 1) {
                if (q < 0)
                    q = i;
                else if (o < 0)
                    o = i;
            }
        if (q >= 0 && o >= 0 && o == q - 1)
            fuse_quad_rows(s, root, c->raxes[o].var, c->raxes[q].var);
    }
}

void template_arm_apply(Lower *L, const ArmKnobs *k)
{
    Sched s;
    int i;
    int first = 0;
    /* an int8 conv or matrix product on a core with the DSP extension,
     * maybe with injective stages after it (a layout Transpose): im2col
     * and the 2 x 3 SMLAD tile, or the depthwise 3 x 3 rows
     * (tpl_qconv_m4.c); the other stages as below */
    if (k->dsp && !k->dot && L->k->n_stages >= 1 &&
        (!tpl_qconv_m4(L, &L->k->stages[0], k->mve) || !tpl_qdw_m4(L, &L->k->stages[0])))
        first = 1;
    sched_init(&s, L);
    for (i = first; i < L->k->n_stages; i++) {
        const Compute *c = &L->k->stages[i];
        if (c->rop != RED_NONE && c->n_raxes > 0)
            tile_stage(&s, c, k);
        else if (c->rop == RED_NONE && c->n_axes > 0)
            sched_vectorize(&s, c->axes[c->n_axes - 1].var);
    }
    /* every requantization of the nest on a product's high word (the
     * templates' epilogues, an elementwise Add / Mul / rescale) */
    if (k->dsp && !k->dot && L->k->body)
        L->k->body = lq_stmt_rewrite(L, L->k->body, m4q_requant_all, NULL);
}
