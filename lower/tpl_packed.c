/*
 * Packed-panel template for contractions with constant weights on x86
 * (AVX2 / AVX-512) and the portable `c` target: Conv (group 1, 2-D, NCHW) and MatMul/Gemm whose right
 * operand is a constant. See templates.c for where it is tried and
 * docs/architecture.md (Schedules) for the picture.
 *
 * The stage is matched by structure: a float32 sum of products in which one
 * operand is a load of a constant tensor at an index affine in the output
 * channel (the "column") and the reduce axes, and the other a load of the
 * data tensor (a conv window, possibly under its padding select, or a
 * matrix row). The template then replaces the kernel's loop nest by:
 *
 *   - the constant repacked at compile time into panels
 *     wp[cb][r1][r2][r3][VL] (VL = V vectors of output channels, zero
 *     beyond the last channel): a new graph constant, emitted by
 *     emit_weights.c in place of the original (which the kernel no longer
 *     reads);
 *   - when needed, a copy of the data into a kernel temp: for a conv, a
 *     zero-padded plane per image (so no bounds test is left in the
 *     reduction, and the last tile of a row may run past the output width);
 *     for a matmul, row panels ap[mt][k][P] (so the P rows a tile reads are
 *     adjacent instead of a row stride apart, which would alias in L1),
 *     a stage of its own that compute_at moves into the row block loop
 *     (each block copies the panels its tiles read, see mm_pack_schedule);
 *   - for each tile of P output positions x VL output channels: a local
 *     accumulator tile initialised from the stage's init, the reduction
 *     loops r1, r2, r3 around `for p: for v: acc[p*VL+v] += A[..p..] *
 *     wp[..v..]` (the first reduce loop is marked FOR_TENSORIZE: the
 *     emitter matches the nest against the target's broadcast-FMA tile
 *     intrinsic, keeping the P*V accumulators in registers: emit_tile.c;
 *     the `c` target prints it as plain C tiles: emit_ctile.c),
 *     then the stage's post (bias, activation, residual add: a fused
 *     epilogue) applied once per output element as it is stored. On the
 *     x86 targets a matmul whose columns are whole tiles accumulates in
 *     the output itself (mm_direct): init stored there, post applied in
 *     place, and a partial last row tile of its own height.
 *
 * Every output element still receives init, then the products in the
 * order of the reduce axes, then post: the naive schedule's computation
 * (products that the naive schedule's padding select zeroes read a zero of
 * the padded copy instead).
 *
 * On x86 the template also takes single-stage float32 sums over the
 * innermost contiguous axes of their loads (tpl_plane_sum: global average
 * pooling), with the vectors along the plane instead of across channels;
 * that sum is reassociated (rtol 1e-4), not bit-identical.
 *
 * This file holds the entry (template_packed), the planning of a tile and
 * its knobs, the weight packing, the padded data copies and the update
 * nest the shapes share; each shape has its file (tpl_packed.h lists
 * them).
 */
#include "tpl_packed.h"

#include <string.h>

/* The tile every shape shares: for r0, r1, r2 (the first marked
 * FOR_TENSORIZE, the fma_tile pattern): for p: for v:
 * acc[ai] += a * b. */
Stmt *tpl_tile(Lower *L, int acc, Expr *ai, Expr *a, Expr *b, const IterVar *rv,
               const IterVar *pv, const IterVar *vv)
{
    Stmt *u = st_store(L, acc, ai, ex_add(L, ex_load(L, acc, ai), ex_mul(L, a, b)));
    int i;
    u = st_for(L, vv, u);
    u = st_for(L, pv, u);
    for (i = 2; i >= 0; i--)
        u = st_for(L, &rv[i], u);
    u->for_kind = FOR_TENSORIZE;
    return u;
}

/* ---- the plan ---- */

/* Vector registers of the target (32 zmm with AVX-512, 16 ymm with AVX2
 * when the description does not say). */
int tpl_regs(const Target *t)
{
    if (t->vector_registers > 0)
        return t->vector_registers;
    return t->vector_bits >= 512 ? 32 : 16;
}

/* Most vectors per row the target's float32 tile intrinsics take along
 * their vector axis, 0 on a target that declares none (the portable
 * target's C tiles); knobs_vmax turns it into the knobs' bound. */
int tpl_vmax(const Target *t)
{
    int i, v = 0;
    for (i = 0; i < t->n_tiles; i++) {
        const TileIntrin *ti = &t->tiles[i];
        if (ti->lanes == t->vector_bits / 32 && ti->lanes > 0 && ti->axes[1].max / ti->lanes > v)
            v = (int)(ti->axes[1].max / ti->lanes);
    }
    return v;
}

/* The target's L2 (1 MB when the description does not say). */
static int64_t l2_bytes(const Target *t)
{
    return t->l2_bytes > 0 ? t->l2_bytes : (int64_t)1 << 20;
}

/* Bytes of a matmul's packed row panels kept in L2 at a time: half the
 * target's L2 (the column panel and the output share the rest). */
int64_t tpl_l2_budget(const Target *t)
{
    return l2_bytes(t) / 2;
}

/* Rows per tile for a row of n positions: the whole row when it fits, else
 * the size in [3/4 max, max] that wastes least in the last tile. */
int tpl_pick_rows(int64_t n, int pmax)
{
    int p, best = pmax;
    int64_t waste = -1;
    if (n <= pmax)
        return (int)n;
    for (p = pmax; p >= (3 * pmax + 3) / 4; p--) {
        int64_t w = tpl_ceil_div(n, p) * p - n;
        if (waste < 0 || w < waste) {
            waste = w;
            best = p;
        }
    }
    return best;
}

/* Rows of a tile of V vectors: as many as the registers hold beside the
 * V operand vectors and 2 spare, at most one vector of them (the epilogue
 * stores a tile column as one, gathered, vector). */
static int plan_rows(const Target *t, int V, int64_t rows)
{
    int pmax = (tpl_regs(t) - V - 2) / V, lanes = t->vector_bits / 32;
    return tpl_pick_rows(rows, pmax > lanes ? lanes : pmax);
}

/* Estimated cycles of the tiles covering one output row and 2 vectors of
 * channels, per reduce step: ceil(rows/P) tiles of P x V, (2/V) of them
 * side by side, each step taking the longest of its FMAs (2 per cycle),
 * its loads (P broadcasts and V vectors, 2 per cycle) and the FMA
 * latency (each accumulator's chain: 4 cycles). */
static double plan_cost(int64_t rows, int P, int V)
{
    double fma = P * V / 2.0, loads = (P + V) / 2.0, step = fma > loads ? fma : loads;
    if (step < 4.0)
        step = 4.0;
    return (double)tpl_ceil_div(rows, P) * (2.0 / V) * step;
}

void tpl_plan_tile(Plan *pl, const Target *t, int64_t co, int64_t rows)
{
    int64_t nv;
    pl->lanes = t->vector_bits / 32;
    pl->co = co;
    nv = tpl_ceil_div(co, pl->lanes);
    /* an odd count of vectors from 9 up: two-vector tiles too, the last
     * pair's second vector padding (zero weights; AVX2 and shufflenet_v2's
     * 232-channel 1x1 convs over 7x7 (29 vectors, NCHW): tiles of 6 x 2
     * vectors ran in 79 instead of 107 us, 7 x 1) */
    pl->V = nv % 2 == 0 || (nv >= 9 && !pl->whole) ? 2 : 1;
    pl->P = plan_rows(t, pl->V, rows);
    /* two vectors whose row tiles leave much of a short row unused: one
     * vector if its tiles cost less (AVX2's 16 registers and a 7-wide
     * row: 2 tiles of 5 x 2 vectors, 10 positions for 7, against one tile
     * of 7 x 1 per vector: resnet18's 7x7 convs 14-18% faster); an odd
     * count's padding counted */
    if (pl->V == 2) {
        int P1 = plan_rows(t, 1, rows);
        double pad = (double)(nv + nv % 2) / (double)nv;
        if (plan_cost(rows, P1, 1) < 0.9 * pad * plan_cost(rows, pl->P, 2)) {
            pl->V = 1;
            pl->P = P1;
        }
    }
    pl->VL = pl->V * pl->lanes;
    pl->ncb = tpl_ceil_div(co, pl->VL);
}

/* ---- the knobs seam (lower/knobs.h): the defaults derived above from the
 * target, replaced by a tuning log's knobs for this workload when given ---- */

TileKnobs tpl_choose_knobs(Lower *L, const Target *t, TileShape shape, const char *op, const char *desc,
                           int64_t rows, int64_t cols, int64_t K, int P, int V, int64_t G, int64_t kc)
{
    TileSpace sp;
    TileKnobs kn;
    memset(&sp, 0, sizeof sp);
    sp.shape = shape;
    sp.lanes = t->vector_bits / 32;
    sp.regs = tpl_regs(t);
    sp.rows = rows;
    sp.cols = cols;
    sp.K = K;
    sp.macs = L->k->macs;
    sp.l2_bytes = t->l2_bytes;
    sp.vmax = tpl_vmax(t);
    memset(&kn, 0, sizeof kn);
    kn.P = P;
    kn.V = V;
    kn.G = G;
    kn.kc = kc;
    knobs_choose(L, t, op, desc, &sp, &kn);
    return kn;
}

void tpl_plan_set(Plan *pl, const TileKnobs *kn)
{
    pl->P = kn->P;
    pl->V = kn->V;
    pl->VL = pl->V * pl->lanes;
    pl->ncb = tpl_ceil_div(pl->co, pl->VL);
}

/* Workload description of a conv for its key: shapes, strides,
 * dilations, pads (begin h, w, end h, w). */
const char *tpl_conv_desc(Lower *L, int64_t N, int64_t C, int64_t H, int64_t W, int64_t Co, int64_t KH,
                          int64_t KW, const int64_t *s, const int64_t *d, const int64_t *lo, const int64_t *hi)
{
    return arena_printf(L->arena, "n%lld,c%lld,h%lld,w%lld,k%lld,r%lldx%lld,s%lldx%lld,d%lldx%lld,p%lldx%lldx%lldx%lld",
                        (long long)N, (long long)C, (long long)H, (long long)W, (long long)Co, (long long)KH,
                        (long long)KW, (long long)s[0], (long long)s[1], (long long)d[0], (long long)d[1],
                        (long long)-lo[0], (long long)-lo[1], (long long)(hi[0] - (H - 1)),
                        (long long)(hi[1] - (W - 1)));
}

/* Whether the emitted C turns predictive commoning off: a declared tile's
 * header carries the pragma (the x86 targets). */
static int commoning_off(const Target *t)
{
    int i;
    for (i = 0; i < t->n_tiles; i++)
        if (strstr(t->tiles[i].header, "no-predictive-commoning"))
            return 1;
    return 0;
}

/* A column stride S > 1 with windows that overlap (KW > S): the C
 * compiler's predictive commoning keeps the broadcasts that later window
 * columns share in registers across the column loop (row p's at kw + S is
 * row p+1's at kw), about one more vector register per row; a full-size
 * tile then spills in its reduction. Rows are capped so that the tile, its
 * weight vectors and one carried broadcast per row fit, unless the emitted
 * C turns predictive commoning off (then every broadcast is folded into its
 * FMA and the full-size tile runs squeezenet1_1's first conv ~13% faster). */
void tpl_strided_rows(Plan *pl, const Target *t, int64_t S, int64_t KW, int64_t rows)
{
    int pmax = (tpl_regs(t) - pl->V - 2) / (pl->V + 1);
    if (S > 1 && KW > S && pl->P > pmax && !commoning_off(t))
        pl->P = tpl_pick_rows(rows, pmax);
}

/* New graph constant holding the weights in panels [cb][r1][r2][r3][VL]
 * (weight offset wc0 + co*wco + sum r_i*wr[i], channels past co zero). */
int tpl_pack_weights(Lower *L, Plan *pl)
{
    int64_t co[6];
    /* a few channels padded to whole vectors would multiply the weight
     * bytes: leave such layers to the generic template */
    if (pl->ncb * pl->VL > 2 * pl->co)
        return 1;
    co[0] = pl->wco;
    co[1] = 0;
    co[2] = pl->wr[0];
    co[3] = pl->wr[1];
    co[4] = pl->wr[2];
    co[5] = 0;
    return tpl_pack_panels(L, pl, 1, 1, co, pl->wc0);
}

/* The operands of the stage's product: *weights the float32 load of a
 * constant, *data the other one. With cond not NULL, a data operand
 * `cond ? load : 0` (a conv window's padding select) gives the load in
 * *data and the condition in *cond (else NULL). 1 when the product is not
 * of that shape. */
int tpl_operands(const Lower *L, const Compute *c, const Expr **data, const Expr **weights, const Expr **cond)
{
    const Expr *x;
    if (tpl_const_load(L, c->body->b)) {
        x = c->body->a;
        *weights = c->body->b;
    } else if (tpl_const_load(L, c->body->a)) {
        x = c->body->b;
        *weights = c->body->a;
    } else {
        return 1;
    }
    if (cond) {
        *cond = NULL;
        if (x->kind == EX_SELECT) {
            if (x->c->kind != EX_FLOAT || x->c->fval != 0.0)
                return 1;
            *cond = x->a;
            x = x->b;
        }
    }
    *data = x;
    return 0;
}

/* The stage's init at the tile's point map (its axes in terms of the
 * tile's loops), or 0. */
Expr *tpl_init_value(Lower *L, const Compute *c, Expr *const *map)
{
    return c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
}

/* out[index] = post(accv) at the tile's point map (index: the stage's
 * output index, lower_out_index). */
Stmt *tpl_store_out(Lower *L, const Compute *c, Expr *index, Expr *const *map, Expr *accv)
{
    return st_store(L, c->out_buf, lq_subst(L, index, map, NULL), c->post ? lq_subst(L, c->post, map, accv) : accv);
}

/* The update nest: for r1 [tensorized]: for r2: for r3: for p: for v:
 *   acc[accb + p*VL + v] += A[aidx] * wp[(((cb*R1 + r1')*R2 + r2)*R3 + r3)*VL + v]
 * with r1' = r1e (the first reduce index, r1 plus its block's start when
 * the reduction is blocked) and accb the tile's place in acc. */
Stmt *tpl_update_nest(Lower *L, const Target *t, const Plan *pl, int acc, const IterVar *rv,
                      const IterVar *pv, const IterVar *vv, int abuf, Expr *aidx, Expr *cb, Expr *r1e,
                      Expr *accb)
{
    Expr *widx = cb, *aix, *prod;
    Stmt *s;
    int i;
    for (i = 0; i < 3; i++)
        widx = ex_add(L, ex_mul(L, widx, ex_int(L, pl->rext[i])), i ? ex_var(L, &rv[i]) : r1e);
    widx = ex_add(L, ex_mul(L, widx, ex_int(L, pl->VL)), ex_var(L, vv));
    aix = ex_add(L, accb, ex_add(L, ex_mul(L, ex_var(L, pv), ex_int(L, pl->VL)), ex_var(L, vv)));
    prod = ex_mul(L, ex_load(L, abuf, aidx), ex_load(L, pl->pbuf, widx));
    s = st_store(L, acc, aix, ex_add(L, ex_load(L, acc, aix), prod));
    s = st_for(L, vv, s);
    s = st_for(L, pv, s);
    for (i = 2; i >= 0; i--)
        s = st_for(L, &rv[i], s);
    s->for_kind = FOR_TENSORIZE;
    /* the weight panel streams through L1 once per tile (and from DRAM on
     * its first pass, where the hardware prefetchers fall behind): fetch
     * the step TILE_PREFETCH_STEPS ahead (resnet18's 3x3 convs: 5-10%
     * faster with weights evicted, unchanged when they are in L2; on AMD
     * Zen 3 the prefetches cost more than they save: the no_tile_prefetch
     * knob of x86-64-avx2, tpl_weight_prefetch) */
    s->prefetch = tpl_weight_prefetch(t, pl->VL);
    /* weights more than twice the L2 come from memory on every call: also
     * fetch the next reduce block's into L2 while this one runs
     * (resnet18's layer3-4 convs: 7% less time; the smaller convs of
     * squeezenet1_1 and mobilenet_v2 gained nothing from it) */
    if (tpl_groups(pl) * pl->ncb * pl->rext[0] * pl->rext[1] * pl->rext[2] * pl->VL * 4 > 2 * l2_bytes(t))
        s->prefetch_l2 = rv[0].extent * rv[1].extent * rv[2].extent * pl->VL;
    return s;
}

/* How far ahead (in floats) a packed tile prefetches its weights into
 * L1: TILE_PREFETCH_STEPS reduce steps of VL floats, or 0 (none) when the
 * target sets no_tile_prefetch. x86-64-avx2 does: on AMD Zen 3 (the
 * machine its knobs were measured on) the medians of resnet18 and
 * resnext50_32x4d were 2-7% lower without them (bench/ab.sh, 25-60 runs
 * of each build alternating in one process; 3-5% with a memory-bound
 * process on the other core), the other bench models' within 2% either
 * way; their L2 prefetches (prefetch_l2) stay. */
int64_t tpl_weight_prefetch(const Target *t, int VL)
{
    return t->knobs.no_tile_prefetch ? 0 : (int64_t)TILE_PREFETCH_STEPS * VL;
}

/* A float32 load of a float32 buffer (no cast in between). */
int tpl_f32_load(const Kernel *k, const Expr *e)
{
    return e && e->kind == EX_LOAD && e->dtype == DT_FLOAT32 && k->bufs[e->buf].dtype == DT_FLOAT32;
}

/* The constant operand of a product: a float32 load of a constant with
 * graph data. */
int tpl_const_load(const Lower *L, const Expr *e)
{
    const Buffer *b;
    if (!tpl_f32_load(L->k, e))
        return 0;
    b = &L->k->bufs[e->buf];
    return b->scope == BUF_CONST && L->g && b->value >= 0 && L->g->values[b->value].data;
}

/* Vectors in a row copy or fill printed one after the other instead of
 * as a loop: GCC turns a short loop of whole-vector copies into `rep movs`
 * (or a fill into `rep stos`), whose startup costs more than the copy of
 * one padded row (a third of a depthwise kernel's time). */
#define VEC_ROW_UNROLL 8

/* xp[dst + z] = x[src + S*z] (x < 0: = fill) for z in [0, n): whole vectors
 * of `lanes` (a stride-2 source is two loads and a permute in
 * emit_intrin.c), unrolled up to VEC_ROW_UNROLL of them, and a shorter
 * masked vector for the rest. */
static Stmt *vec_copy(Lower *L, int xp, Expr *dst, int x, Expr *src, int64_t S, int64_t n, int lanes, double fill)
{
    int64_t nv, unroll, j;
    Stmt *seq, *st;
    int m = 0;
    if (lanes <= 0)
        lanes = n > 0 ? (int)n : 1; /* one loop (copy_lanes) */
    nv = n / lanes;
    unroll = nv <= VEC_ROW_UNROLL ? nv : 0;
    seq = st_seq(L, (int)unroll + 2);
    for (j = 0; j < nv; j += unroll ? 1 : nv) {
        IterVar zo = lower_itervar(L, "iw", unroll ? 1 : nv), zi = lower_itervar(L, "iw", lanes);
        Expr *z = ex_add(L, ex_mul(L, unroll ? ex_int(L, j) : ex_var(L, &zo), ex_int(L, lanes)), ex_var(L, &zi));
        Expr *v = x < 0 ? ex_float(L, DT_FLOAT32, fill) : ex_load(L, x, ex_add(L, src, ex_mul(L, z, ex_int(L, S))));
        st = st_store(L, xp, ex_add(L, dst, z), v);
        st = st_for(L, &zi, st);
        st->for_kind = FOR_VECTORIZE;
        seq->body[m++] = unroll ? st : st_for(L, &zo, st);
    }
    if (n % lanes) {
        IterVar zt = lower_itervar(L, "iw", n % lanes);
        Expr *z = ex_add(L, ex_var(L, &zt), ex_int(L, nv * lanes));
        Expr *v = x < 0 ? ex_float(L, DT_FLOAT32, fill) : ex_load(L, x, ex_add(L, src, ex_mul(L, z, ex_int(L, S))));
        st = st_store(L, xp, ex_add(L, dst, z), v);
        st = st_for(L, &zt, st);
        st->for_kind = FOR_VECTORIZE;
        seq->body[m++] = st;
    }
    seq->n_body = m;
    return seq;
}

/* The vector pieces of the templates' padded copies: the target's lanes,
 * or on the portable target 0, one loop per row piece (gcc vectorized
 * the 8-float pieces of a stride-2 phase copy not at all: scalar loads
 * and stores, 14% of mobilenet_v2's stride-2 depthwise convs). */
int tpl_copy_lanes(const Target *t)
{
    return t->family->portable ? 0 : t->vector_bits / 32;
}

/* Padded copy of image n of x (Ci planes of H x W) into xp (Ci planes of
 * Hp rows of S phases of Wj columns): xp[((ci*Hp + r)*S + ph)*Wj + j] =
 * x[n][ci][row0 + r + lo0][S*j + ph + lo1] inside x, else fill (0 for a
 * conv, -inf for a max pool; row0: an expression, the first row of a band
 * of rows, or NULL for 0). Per row and phase: fill left of the image, a
 * copy (contiguous when S == 1), fill right of it; rows outside the image
 * are fill. */
Stmt *tpl_copy_phased_at(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                         int64_t Hp, int64_t S, int64_t Wj, int64_t lo0, Expr *row0, int64_t lo1, int lanes,
                         Expr *xchan, int64_t Cx, double fill)
{
    IterVar ci = lower_itervar(L, "ci", Ci), r = lower_itervar(L, "ih", Hp);
    Expr *ir = ex_add(L, ex_var(L, &r), row0 ? ex_add(L, row0, ex_int(L, lo0)) : ex_int(L, lo0));
    Expr *inrow = ex_and(L, ex_binary(L, BIN_GE, ir, ex_int(L, 0)), ex_lt(L, ir, ex_int(L, H)));
    Expr *rowbase = ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &ci), ex_int(L, Hp)), ex_var(L, &r)), ex_int(L, S));
    /* x's plane: image n, channel ci (or the given channel of Cx) */
    Expr *xplane = xchan ? ex_add(L, ex_mul(L, ex_var(L, nv), ex_int(L, Cx)), ex_add(L, xchan, ex_var(L, &ci)))
                         : ex_add(L, ex_mul(L, ex_var(L, nv), ex_int(L, Ci)), ex_var(L, &ci));
    Expr *xrow = ex_mul(L, ex_add(L, ex_mul(L, xplane, ex_int(L, H)), ir), ex_int(L, W));
    Stmt *zrow, *part, *st;
    int64_t ph;
    int n = 0;
    zrow = vec_copy(L, xp, ex_mul(L, rowbase, ex_int(L, Wj)), -1, NULL, 1, S * Wj, lanes, fill);
    part = st_seq(L, (int)(3 * S));
    for (ph = 0; ph < S; ph++) {
        /* columns j of this phase inside the image: 0 <= S*j + ph + lo1 < W */
        int64_t j0 = 0, j1 = Wj; /* [j0, j1) */
        Expr *base = ex_mul(L, ex_add(L, rowbase, ex_int(L, ph)), ex_int(L, Wj));
        while (j0 < Wj && S * j0 + ph + lo1 < 0)
            j0++;
        while (j1 > j0 && S * (j1 - 1) + ph + lo1 >= W)
            j1--;
        if (j0 > 0)
            part->body[n++] = vec_copy(L, xp, base, -1, NULL, 1, j0, lanes, fill);
        if (j1 > j0)
            part->body[n++] = vec_copy(L, xp, ex_add(L, base, ex_int(L, j0)), x,
                                       ex_add(L, xrow, ex_int(L, S * j0 + ph + lo1)), S, j1 - j0, lanes, fill);
        if (j1 < Wj) {
            int64_t from = j1 > j0 ? j1 : j0;
            part->body[n++] = vec_copy(L, xp, ex_add(L, base, ex_int(L, from)), -1, NULL, 1, Wj - from, lanes, fill);
        }
    }
    part->n_body = n;
    if (lanes <= 0 && !row0) {
        /* the portable target: the rows above, inside and below the image
         * as three loops, without a test (gcc predicted `ih - 1 >= 0 &&
         * ih - 1 < 56` false, took the row copies for cold code and left
         * them scalar: 20% of mobilenet_v2's depthwise convs); a band of
         * rows (row0) keeps the test, its rows moving with the band */
        int64_t r0 = lo0 < 0 ? -lo0 : 0, r1 = H - lo0;
        IterVar ra, rb, rc;
        Expr **map;
        Stmt *q = st_seq(L, 3);
        int nq = 0;
        if (r0 > Hp)
            r0 = Hp;
        if (r1 > Hp)
            r1 = Hp;
        if (r1 < r0)
            r1 = r0;
        ra = lower_itervar(L, "ih", r0 > 0 ? r0 : 1);
        rb = lower_itervar(L, "ih", r1 > r0 ? r1 - r0 : 1);
        rc = lower_itervar(L, "ih", Hp > r1 ? Hp - r1 : 1);
        map = lower_alloc(L, (size_t)(L->k->n_vars + 1) * sizeof *map);
        if (r0 > 0) {
            map[r.var] = ex_var(L, &ra);
            q->body[nq++] = st_for(L, &ra, lq_stmt_subst(L, zrow, map));
        }
        if (r1 > r0) {
            map[r.var] = ex_add(L, ex_var(L, &rb), ex_int(L, r0));
            q->body[nq++] = st_for(L, &rb, lq_stmt_subst(L, part, map));
        }
        if (Hp > r1) {
            map[r.var] = ex_add(L, ex_var(L, &rc), ex_int(L, r1));
            q->body[nq++] = st_for(L, &rc, lq_stmt_subst(L, zrow, map));
        }
        q->n_body = nq;
        return st_for(L, &ci, q);
    }
    st = st_for(L, &r, st_if_else(L, inrow, part, zrow));
    return st_for(L, &ci, st);
}

Stmt *tpl_copy_phased(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                      int64_t Hp, int64_t S, int64_t Wj, int64_t lo0, int64_t lo1, int lanes, Expr *xchan,
                      int64_t Cx, double fill)
{
    return tpl_copy_phased_at(L, xp, x, nv, Ci, H, W, Hp, S, Wj, lo0, NULL, lo1, lanes, xchan, Cx, fill);
}

Stmt *tpl_copy_padded(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                      int64_t Hp, int64_t Wp, int64_t lo0, int64_t lo1, int lanes)
{
    return tpl_copy_phased(L, xp, x, nv, Ci, H, W, Hp, 1, Wp, lo0, lo1, lanes, NULL, 0, 0.0);
}

/* Bytes of a conv's weight block kept in L1 while a group of tiles passes
 * over it: 3/4 of the target's L1 (32 KB when the description does not
 * say); the input rows a tile reads share the rest. */
int64_t tpl_l1_budget(const Target *t)
{
    return (t->l1_bytes > 0 ? t->l1_bytes : (int64_t)32 << 10) * 3 / 4;
}

Stmt *tpl_acc_block(Lower *L, int acc, Stmt *first, Stmt *then, Stmt *last)
{
    Stmt *seq = st_seq(L, 3);
    seq->body[0] = first;
    seq->body[1] = then;
    seq->body[2] = last;
    return st_decl(L, acc, seq);
}

/* New graph constant holding the weights in panels
 * wp[cb][r1][r2][r3][VL] = w[off], off affine in (mb, mi, r1, r2, kw, ci)
 * with coefficients co[0..6) and constant c0, where the panel's channel
 * cb*VL + v is block mb = (cb*VL + v) / b, lane mi = (cb*VL + v) % b, and
 * kw = r3 / e, ci = r3 % e (a blocked conv: b the lanes, e = b for a
 * blocked input; every other tile: b = e = 1); channels past pl->co are
 * zero. A grouped conv (pl->groups > 1) has the panels of each group
 * after those of the group before, wp[g][cb]..., channel cb*VL + v of
 * group g being g*pl->co + cb*VL + v. Refuses (1) a weight the kernel has
 * no data for or an offset out of it. */
int tpl_pack_panels(Lower *L, Plan *pl, int64_t b, int64_t e, const int64_t *co, int64_t c0)
{
    Graph *g = L->g;
    const Buffer *wb = &L->k->bufs[pl->wbuf];
    const float *src;
    float *dst;
    int64_t rtot = pl->rext[0] * pl->rext[1] * pl->rext[2], n, cb, r, v, *chpart;
    int64_t ng = tpl_groups(pl), gw = pl->ncb * pl->VL; /* panel channels of a group */
    int32_t vi;
    Value *nv;
    if (!g || wb->value < 0 || !g->values[wb->value].data)
        return 1;
    src = g->values[wb->value].data;
    n = ng * pl->ncb * rtot * pl->VL;
    dst = lower_alloc(L, (size_t)n * sizeof *dst);
    /* the offset is a channel part plus a reduce part: each computed once
     * (no division per weight) */
    chpart = lower_alloc(L, (size_t)(ng * gw) * sizeof *chpart);
    for (v = 0; v < ng * gw; v++) {
        int64_t ch = v / gw * pl->co + v % gw;
        chpart[v] = ch / b * co[0] + ch % b * co[1];
    }
    for (r = 0; r < rtot; r++) {
        int64_t r3 = r % pl->rext[2], r2 = r / pl->rext[2] % pl->rext[1],
                r1 = r / pl->rext[2] / pl->rext[1];
        int64_t rpart = c0 + r1 * co[2] + r2 * co[3] + (r3 / e) * co[4] + (r3 % e) * co[5];
        for (cb = 0; cb < ng * pl->ncb; cb++)
            for (v = 0; v < pl->VL; v++) {
                int64_t ch = cb * pl->VL + v, off;
                if (ch % gw >= pl->co)
                    continue;
                off = rpart + chpart[ch];
                if (off < 0 || off >= wb->numel)
                    return 1;
                dst[(cb * rtot + r) * pl->VL + v] = src[off];
            }
    }
    vi = graph_add_value(g, arena_printf(L->arena, "%s.packed_%s", g->values[wb->value].name,
                                         L->k->name ? L->k->name : "k"));
    nv = &g->values[vi];
    nv->dtype = DT_FLOAT32;
    nv->rank = 1;
    nv->dims[0] = n;
    nv->data = dst;
    pl->pbuf = lower_buf_value(L, vi);
    return 0;
}

int template_packed(Lower *L, const Target *t)
{
    Compute *c;
    const Expr *b;
    Target portable;
    int dw = 0;
    if (t && t->family->portable && t->vector_bits == 0) {
        /* The portable target gets the same tiles, printed as plain loops
         * (emit_ctile.c) that the C compiler vectorizes: sized for 8-float
         * vectors (what -march=native gives on x86, AVX2 or better, and
         * what two NEON registers hold) and 28 vector registers, tuned
         * for AVX-512 hosts, where gcc makes one zmm of a 16-float row
         * (V = 2): 8-row conv tiles (at most one 8-float vector of rows),
         * 12-row positions tiles and up to 10-row depthwise tiles, enough
         * accumulators to cover the FMA latency (with 20 registers the
         * positions tiles had 8 zmm and were latency-bound); AVX2 hosts
         * spill some of the two-ymm rows. Measured with gcc 12 -O3
         * -march=native (interleaved minimums, 20 -> 28): squeezenet1_1
         * -12%, resnet18 -15%, efficientnet_b0 -8%, mobilenet_v2 within
         * noise. Earlier, 6 -> 8 rows: resnet18 -35% with AVX-512, -14%
         * with -march=haswell. */
        portable = *t;
        portable.vector_bits = 256;
        portable.vector_registers = 28;
        portable.fma_tile = 1;
        t = &portable;
    }
    if (t && !strcmp(t->family->name, "x86") && t->fma_tile && t->vector_bits >= 256 && L->g && L->k->n_stages == 1 &&
        !tpl_qconv(L, t, &L->k->stages[0])) {
        /* an int8 conv (tpl_qconv.c) */
        if (tpl_small_kernel(L, 0))
            tpl_serial_all(L->k->body);
        return 0;
    }
    if (!t || !t->fma_tile || t->vector_bits < 256 || !L->g)
        return 1;
    if (L->k->n_stages != 1)
        return 1;
    c = &L->k->stages[0];
    b = c->body;
    /* (x86 only: the portable target's sums stay in the order of the
     * naive schedule, its output the reference) */
    if (!t->family->portable && t->vector_bits >= 256 && !tpl_plane_sum(L, t, c))
        return 0;
    if (c->rop == RED_MAX) {
        if (tpl_maxpool(L, t, c))
            return 1;
        /* a max pool's work: one max per tap and output, like a
         * depthwise conv's multiply-add */
        tpl_threads_work(L, t, tpl_stage_work(c));
        return 0;
    }
    if (!tpl_dwconv_nchwc(L, t, c)) {
        /* a blocked depthwise conv (tpl_pool.c): one multiply-add per tap
         * and output */
        tpl_threads_work(L, t, tpl_stage_work(c));
        return 0;
    }
    if (c->rop != RED_SUM || !b || b->kind != EX_BINARY || b->op != BIN_MUL || b->dtype != DT_FLOAT32 ||
        L->k->bufs[c->out_buf].dtype != DT_FLOAT32)
        return 1;
    if (c->post && c->post->dtype != DT_FLOAT32)
        return 1;
    if (tpl_conv(L, t, c, &dw) && tpl_conv_nchwc(L, t, c) && tpl_matmul(L, t, c)) {
        L->k->knobs = NULL; /* no tile of this template, no knobs */
        return 1;
    }
    /* small kernels serial, the parallel loop widened, the copies split
     * across the threads (tpl_threads.c) */
    tpl_threads(L, t, dw);
    return 0;
}
