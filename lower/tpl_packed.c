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
 * With AVX-512 the file also takes single-stage float32 sums over the
 * innermost contiguous axes of their loads (plane_sum: global average
 * pooling), with the vectors along the plane instead of across channels;
 * that sum is reassociated (rtol 1e-4), not bit-identical.
 */
#include "sched.h"
#include "knobs.h"
#include "loopq.h"

#include <stdlib.h>
#include <string.h>

/* The tile every shape shares: for r0, r1, r2 (the first marked
 * FOR_TENSORIZE, the fma_tile pattern): for p: for v:
 * acc[ai] += a * b. */
static Stmt *mk_tile(Lower *L, int acc, Expr *ai, Expr *a, Expr *b, const IterVar *rv,
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

/* ---- index analysis ---- */

/* The index inside a clamp to [0, hi] (*clamped set), or e itself. */
static const Expr *strip_clamp(const Expr *e, int64_t hi, int *clamped)
{
    *clamped = 0;
    if (e->kind == EX_BINARY && e->op == BIN_MIN && e->b->kind == EX_INT && e->b->ival == hi &&
        e->a->kind == EX_BINARY && e->a->op == BIN_MAX && e->a->b->kind == EX_INT &&
        e->a->b->ival == 0) {
        *clamped = 1;
        return e->a->a;
    }
    if (e->kind == EX_BINARY && e->op == BIN_MAX && e->b->kind == EX_INT && e->b->ival == 0 &&
        e->a->kind == EX_BINARY && e->a->op == BIN_MIN && e->a->b->kind == EX_INT &&
        e->a->b->ival == hi) {
        *clamped = 1;
        return e->a->a;
    }
    return e;
}

/* ---- the plan ---- */

typedef struct Plan {
    int lanes, V, VL, P;
    int64_t co;         /* output channels (columns) */
    int64_t ncb;        /* channel blocks of VL */
    int nr;             /* reduce loops */
    int64_t rext[3];
    int64_t wco, wr[3], wc0; /* weight offset = wc0 + co*wco + sum r_i*wr[i] */
    int wbuf;           /* original constant buffer */
    int pbuf;           /* packed constant buffer */
} Plan;

/* Vector registers of the target (32 zmm with AVX-512, 16 ymm with AVX2
 * when the description does not say). */
static int regs_of(const Target *t)
{
    if (t->vector_registers > 0)
        return t->vector_registers;
    return t->vector_bits >= 512 ? 32 : 16;
}

/* The target's L2 (1 MB when the description does not say). */
static int64_t l2_bytes(const Target *t)
{
    return t->l2_bytes > 0 ? t->l2_bytes : (int64_t)1 << 20;
}

/* Bytes of a matmul's packed row panels kept in L2 at a time: half the
 * target's L2 (the column panel and the output share the rest). */
static int64_t l2_budget(const Target *t)
{
    return l2_bytes(t) / 2;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Rows per tile for a row of n positions: the whole row when it fits, else
 * the size in [3/4 max, max] that wastes least in the last tile. */
static int pick_rows(int64_t n, int pmax)
{
    int p, best = pmax;
    int64_t waste = -1;
    if (n <= pmax)
        return (int)n;
    for (p = pmax; p >= (3 * pmax + 3) / 4; p--) {
        int64_t w = ceil_div(n, p) * p - n;
        if (waste < 0 || w < waste) {
            waste = w;
            best = p;
        }
    }
    return best;
}

static void plan_tile(Plan *pl, const Target *t, int64_t co, int64_t rows)
{
    int regs = regs_of(t), pmax;
    pl->lanes = t->vector_bits / 32;
    pl->co = co;
    pl->V = ceil_div(co, pl->lanes) % 2 == 0 ? 2 : 1;
    pl->VL = pl->V * pl->lanes;
    pl->ncb = ceil_div(co, pl->VL);
    pmax = (regs - pl->V - 2) / pl->V;
    /* at most one vector of rows: the epilogue stores a tile column as
     * one (gathered) vector */
    if (pmax > pl->lanes)
        pmax = pl->lanes;
    pl->P = pick_rows(rows, pmax);
}

/* ---- the knobs seam (lower/knobs.h): the defaults derived above from the
 * target, replaced by a tuning log's knobs for this workload when given ---- */

static TileKnobs choose_knobs(Lower *L, const Target *t, TileShape shape, const char *op, const char *desc,
                              int64_t rows, int64_t cols, int64_t K, int P, int V, int64_t G, int64_t kc)
{
    TileSpace sp;
    TileKnobs kn;
    memset(&sp, 0, sizeof sp);
    sp.shape = shape;
    sp.lanes = t->vector_bits / 32;
    sp.regs = regs_of(t);
    sp.rows = rows;
    sp.cols = cols;
    sp.K = K;
    sp.macs = L->k->macs;
    sp.l2_bytes = t->l2_bytes;
    memset(&kn, 0, sizeof kn);
    kn.P = P;
    kn.V = V;
    kn.G = G;
    kn.kc = kc;
    knobs_choose(L, t, op, desc, &sp, &kn);
    return kn;
}

static void plan_set(Plan *pl, const TileKnobs *kn)
{
    pl->P = kn->P;
    pl->V = kn->V;
    pl->VL = pl->V * pl->lanes;
    pl->ncb = ceil_div(pl->co, pl->VL);
}

/* Workload description of a conv for its key: shapes, strides,
 * dilations, pads (begin h, w, end h, w). */
static const char *conv_desc(Lower *L, int64_t N, int64_t C, int64_t H, int64_t W, int64_t Co, int64_t KH,
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
static void strided_rows(Plan *pl, const Target *t, int64_t S, int64_t KW, int64_t rows)
{
    int pmax = (regs_of(t) - pl->V - 2) / (pl->V + 1);
    if (S > 1 && KW > S && pl->P > pmax && !commoning_off(t))
        pl->P = pick_rows(rows, pmax);
}

/* New graph constant holding the weights in panels [cb][r1][r2][r3][VL]. */
static int pack_weights(Lower *L, Plan *pl)
{
    Graph *g = L->g;
    const Buffer *wb = &L->k->bufs[pl->wbuf];
    const float *src;
    float *dst;
    int64_t rtot = pl->rext[0] * pl->rext[1] * pl->rext[2], n, cb, r, v;
    int32_t vi;
    Value *nv;
    if (!g || wb->value < 0 || !g->values[wb->value].data)
        return 1;
    /* a few channels padded to whole vectors would multiply the weight
     * bytes: leave such layers to the generic template */
    if (pl->ncb * pl->VL > 2 * pl->co)
        return 1;
    src = g->values[wb->value].data;
    n = pl->ncb * rtot * pl->VL;
    dst = lower_alloc(L, (size_t)n * sizeof *dst);
    for (cb = 0; cb < pl->ncb; cb++)
        for (r = 0; r < rtot; r++) {
            int64_t r3 = r % pl->rext[2], r2 = r / pl->rext[2] % pl->rext[1],
                    r1 = r / pl->rext[2] / pl->rext[1];
            for (v = 0; v < pl->VL; v++) {
                int64_t co = cb * pl->VL + v, off;
                if (co >= pl->co)
                    continue;
                off = pl->wc0 + co * pl->wco + r1 * pl->wr[0] + r2 * pl->wr[1] + r3 * pl->wr[2];
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

/* Reduce steps ahead of the current one whose weights a conv or matmul
 * tile prefetches (32 steps: 4 KB at 32 lanes; gemm1024: 32 steps ~2.5%
 * faster than none, 8 steps ~1.7%). */
#define TILE_PREFETCH_STEPS 32

/* The update nest: for r1 [tensorized]: for r2: for r3: for p: for v:
 *   acc[accb + p*VL + v] += A[aidx] * wp[(((cb*R1 + r1')*R2 + r2)*R3 + r3)*VL + v]
 * with r1' = r1e (the first reduce index, r1 plus its block's start when
 * the reduction is blocked) and accb the tile's place in acc. */
static Stmt *update_nest(Lower *L, const Target *t, const Plan *pl, int acc, const IterVar *rv,
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
     * faster with weights evicted, unchanged when they are in L2) */
    s->prefetch = TILE_PREFETCH_STEPS * pl->VL;
    /* weights more than twice the L2 come from memory on every call: also
     * fetch the next reduce block's into L2 while this one runs
     * (resnet18's layer3-4 convs: 7% less time; the smaller convs of
     * squeezenet1_1 and mobilenet_v2 gained nothing from it) */
    if (pl->ncb * pl->rext[0] * pl->rext[1] * pl->rext[2] * pl->VL * 4 > 2 * l2_bytes(t))
        s->prefetch_l2 = rv[0].extent * rv[1].extent * rv[2].extent * pl->VL;
    return s;
}

/* A float32 load of a float32 buffer (no cast in between). */
static int f32_load(const Kernel *k, const Expr *e)
{
    return e && e->kind == EX_LOAD && e->dtype == DT_FLOAT32 && k->bufs[e->buf].dtype == DT_FLOAT32;
}

/* The constant operand of a product: a float32 load of a constant with
 * graph data. */
static int const_load(const Lower *L, const Expr *e)
{
    const Buffer *b;
    if (!f32_load(L->k, e))
        return 0;
    b = &L->k->bufs[e->buf];
    return b->scope == BUF_CONST && L->g && b->value >= 0 && L->g->values[b->value].data;
}

/* Term of a padding condition: `pos >= 0` or `pos < hi` for pos one of the
 * window positions; sets the bit of what it tests. */
static int cond_terms(const Expr *c, const Expr *const *pos, const int64_t *hi, int *bits)
{
    int i;
    if (c->kind == EX_INT)
        return c->ival != 0;
    if (c->kind == EX_BINARY && c->op == BIN_AND)
        return cond_terms(c->a, pos, hi, bits) && cond_terms(c->b, pos, hi, bits);
    if (c->kind != EX_BINARY || c->b->kind != EX_INT)
        return 0;
    for (i = 0; i < 2; i++) {
        if (!lq_same_expr(c->a, pos[i]))
            continue;
        if (c->op == BIN_GE && c->b->ival == 0) {
            *bits |= 1 << (2 * i);
            return 1;
        }
        if (c->op == BIN_LT && c->b->ival == hi[i]) {
            *bits |= 2 << (2 * i);
            return 1;
        }
    }
    return 0;
}

/* Vectors in a row copy or fill printed one after the other instead of
 * as a loop: GCC turns a short loop of whole-vector copies into `rep movs`
 * (or a fill into `rep stos`), whose startup costs more than the copy of
 * one padded row (a third of a depthwise kernel's time). */
#define VEC_ROW_UNROLL 8

/* xp[dst + z] = x[src + S*z] (x < 0: = 0) for z in [0, n): whole vectors
 * of `lanes` (a stride-2 source is two loads and a permute in
 * emit_intrin.c), unrolled up to VEC_ROW_UNROLL of them, and a shorter
 * masked vector for the rest. */
static Stmt *vec_copy(Lower *L, int xp, Expr *dst, int x, Expr *src, int64_t S, int64_t n, int lanes)
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
        Expr *v = x < 0 ? ex_float(L, DT_FLOAT32, 0.0) : ex_load(L, x, ex_add(L, src, ex_mul(L, z, ex_int(L, S))));
        st = st_store(L, xp, ex_add(L, dst, z), v);
        st = st_for(L, &zi, st);
        st->for_kind = FOR_VECTORIZE;
        seq->body[m++] = unroll ? st : st_for(L, &zo, st);
    }
    if (n % lanes) {
        IterVar zt = lower_itervar(L, "iw", n % lanes);
        Expr *z = ex_add(L, ex_var(L, &zt), ex_int(L, nv * lanes));
        Expr *v = x < 0 ? ex_float(L, DT_FLOAT32, 0.0) : ex_load(L, x, ex_add(L, src, ex_mul(L, z, ex_int(L, S))));
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
static int copy_lanes(const Target *t)
{
    return !strcmp(t->isa, "c") ? 0 : t->vector_bits / 32;
}

/* Zero-padded copy of image n of x (Ci planes of H x W) into xp (Ci planes
 * of Hp rows of S phases of Wj columns): xp[((ci*Hp + r)*S + ph)*Wj + j] =
 * x[n][ci][row0 + r + lo0][S*j + ph + lo1] inside x, else 0 (row0: an
 * expression, the first row of a band of rows, or NULL for 0). Per row and
 * phase: zeros left of the image, a copy (contiguous when S == 1), zeros
 * right of it; rows outside the image are zeros. */
static Stmt *copy_phased_at(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                            int64_t Hp, int64_t S, int64_t Wj, int64_t lo0, Expr *row0, int64_t lo1, int lanes,
                            Expr *xchan, int64_t Cx)
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
    zrow = vec_copy(L, xp, ex_mul(L, rowbase, ex_int(L, Wj)), -1, NULL, 1, S * Wj, lanes);
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
            part->body[n++] = vec_copy(L, xp, base, -1, NULL, 1, j0, lanes);
        if (j1 > j0)
            part->body[n++] = vec_copy(L, xp, ex_add(L, base, ex_int(L, j0)), x,
                                       ex_add(L, xrow, ex_int(L, S * j0 + ph + lo1)), S, j1 - j0, lanes);
        if (j1 < Wj) {
            int64_t from = j1 > j0 ? j1 : j0;
            part->body[n++] = vec_copy(L, xp, ex_add(L, base, ex_int(L, from)), -1, NULL, 1, Wj - from, lanes);
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

static Stmt *copy_phased(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                         int64_t Hp, int64_t S, int64_t Wj, int64_t lo0, int64_t lo1, int lanes, Expr *xchan,
                         int64_t Cx)
{
    return copy_phased_at(L, xp, x, nv, Ci, H, W, Hp, S, Wj, lo0, NULL, lo1, lanes, xchan, Cx);
}

static Stmt *copy_padded(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                         int64_t Hp, int64_t Wp, int64_t lo0, int64_t lo1, int lanes)
{
    return copy_phased(L, xp, x, nv, Ci, H, W, Hp, 1, Wp, lo0, lo1, lanes, NULL, 0);
}

/* Whether every use of the variables oh and ow in e is inside a load index
 * affine in them with coef(oh) == ow_extent * coef(ow): then oh := 0,
 * ow := q (the flattened position) gives the same offsets. */
static int flat_ok(Lower *L, const Expr *e, int oh, int ow, int64_t OW)
{
    LqAffine a;
    if (!e)
        return 1;
    if (e->kind == EX_VAR)
        return e->var != oh && e->var != ow;
    if (e->kind == EX_LOAD) {
        if (!lq_affine(e->a, &a))
            return !lq_uses_var(e->a, oh) && !lq_uses_var(e->a, ow);
        return lq_aff_coef(&a, oh) == OW * lq_aff_coef(&a, ow);
    }
    return flat_ok(L, e->a, oh, ow, OW) && flat_ok(L, e->b, oh, ow, OW) && flat_ok(L, e->c, oh, ow, OW);
}

static int64_t l1_budget(const Target *t);

/* A 1x1 convolution over whole planes, Y[co][q] = sum_ci W[co][ci] X[ci][q],
 * with the vectors along the positions q (contiguous in X and Y): tiles of
 * R output channels (broadcast weights, packed [cb][ci][R]) x VL positions.
 * The epilogue then stores whole vectors of one channel. */
static int conv_positions(Lower *L, const Target *t, Compute *c, Plan *pl, int xbuf, int64_t N,
                          int64_t Ci, int64_t OH, int64_t OW)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, regs = regs_of(t), V, R, rmax, acc, src;
    int64_t Q = OH * OW, Co = c->axes[1].extent, VL, T, Qp;
    IterVar nv, cbv, tv, pv, vv, vo, vi, rv[3];
    Expr **map, *aidx, *bidx, *q, *co, *accidx;
    Stmt *body = NULL, *tile, *init, *epi, *seq, *decl, *loops;
    int flat_sub;
    /* two vectors of positions per tile unless that pads the plane by a
     * fifth more than one vector does: with one, every FMA also needs its
     * own broadcast load (squeezenet1_1's 13x13 classifier conv, 169
     * positions: 1000 channels as 77 tiles of 13 x 32 ran ~15% faster than
     * 40 tiles of 25 x 16 although they compute 192 instead of 176 positions) */
    V = ceil_div(Q, 2 * lanes) * 2 * lanes * 5 <= ceil_div(Q, lanes) * lanes * 6 ? 2 : 1;
    if (!strcmp(t->isa, "c") && Q >= 4 * lanes)
        V = 2; /* the portable target: a 16-float row is one zmm with AVX-512
                  (7x7 planes: 4 instead of 7 FMAs per row and step; AVX2
                  runs 8 ymm instead of 7) */
    rmax = (regs - V - 2) / V;
    if (rmax > 28)
        rmax = 28;
    R = pick_rows(Co, rmax);
    {
        int64_t one[2] = {1, 1}, zero[2] = {0, 0}, hi[2];
        TileKnobs kn;
        hi[0] = OH - 1;
        hi[1] = OW - 1;
        kn = choose_knobs(L, t, TS_CONV_POS, "conv2d", conv_desc(L, N, Ci, OH, OW, Co, 1, 1, one, one, zero, hi),
                          Co, Q, Ci, R, V, 0, 0);
        R = kn.P;
        V = kn.V;
    }
    VL = (int64_t)V * lanes;
    T = ceil_div(Q, VL);
    Qp = T * VL;
    pl->V = V;
    pl->lanes = lanes;
    pl->P = R;
    pl->VL = R; /* weight panels hold R channels */
    pl->co = Co;
    pl->ncb = ceil_div(Co, R);
    if (pack_weights(L, pl))
        return 1;
    flat_sub = flat_ok(L, c->post, c->axes[2].var, c->axes[3].var, OW) &&
               flat_ok(L, c->init, c->axes[2].var, c->axes[3].var, OW) &&
               flat_ok(L, c->out_index, c->axes[2].var, c->axes[3].var, OW);
    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", pl->ncb);
    tv = lower_itervar(L, "qt", T);
    pv = lower_itervar(L, "p", R);
    vv = lower_itervar(L, "v", VL);
    vo = lower_itervar(L, "vo", V);
    vi = lower_itervar(L, "vi", lanes);
    rv[0] = lower_itervar(L, "rc", Ci);
    rv[1] = lower_itervar(L, "ru", 1);
    rv[2] = lower_itervar(L, "ru", 1);
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, (int64_t)R * VL);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1; /* the init loop below writes all of it */
    if (Qp != Q) {
        src = lower_buf_temp(L, "xpad", DT_FLOAT32, Ci * Qp);
        body = copy_padded(L, src, xbuf, &nv, Ci, 1, Q, 1, Qp, 0, 0, copy_lanes(t));
    } else {
        src = xbuf;
    }
    /* update: acc[p*VL + v] += wp[(cb*Ci + rc)*R + p] * X[plane*Qp + qt*VL + v] */
    {
        Expr *plane = ex_var(L, &rv[0]);
        Expr *accix = ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_var(L, &vv));
        if (src == xbuf)
            plane = ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, Ci)), plane);
        aidx = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, Ci)), ex_var(L, &rv[0])),
                                ex_int(L, R)),
                      ex_var(L, &pv));
        bidx = ex_add(L, ex_add(L, ex_mul(L, plane, ex_int(L, Qp)), ex_mul(L, ex_var(L, &tv), ex_int(L, VL))),
                      ex_var(L, &vv));
        tile = mk_tile(L, acc, accix, ex_load(L, pl->pbuf, aidx), ex_load(L, src, bidx), rv, &pv,
                       &vv);
        /* the input planes beyond L1: each reduce step's row of X comes
         * from L2, one line per vector, Ci rows apart (more streams than
         * the hardware prefetchers follow); fetch the row of the tile two
         * to the right meanwhile */
        if (Ci * Qp * 4 > l1_budget(t))
            tile->prefetch = 2 * VL;
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    co = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, R)), ex_var(L, &pv));
    q = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &tv), ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
               ex_var(L, &vi));
    accidx = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
                    ex_var(L, &vi));
    map[c->axes[0].var] = ex_var(L, &nv);
    {
        Expr *qc = Qp != Q ? ex_binary(L, BIN_MIN, q, ex_int(L, Q - 1)) : q;
        Expr *iv;
        map[c->axes[1].var] = Co % R ? ex_binary(L, BIN_MIN, co, ex_int(L, Co - 1)) : co;
        map[c->axes[2].var] = flat_sub ? ex_int(L, 0) : ex_binary(L, BIN_DIV, qc, ex_int(L, OW));
        map[c->axes[3].var] = flat_sub ? qc : ex_binary(L, BIN_MOD, qc, ex_int(L, OW));
        iv = c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
        init = st_store(L, acc, accidx, iv);
        init = st_for(L, &vi, init);
        init->for_kind = FOR_VECTORIZE;
        init = st_for(L, &vo, init);
        init = st_for(L, &pv, init);
    }
    {
        Expr *index, *accv = ex_load(L, acc, accidx);
        map[c->axes[1].var] = co;
        map[c->axes[2].var] = flat_sub ? ex_int(L, 0) : ex_binary(L, BIN_DIV, q, ex_int(L, OW));
        map[c->axes[3].var] = flat_sub ? q : ex_binary(L, BIN_MOD, q, ex_int(L, OW));
        index = lower_out_index(L, c);
        if (!strcmp(t->isa, "c")) {
            /* the portable target: one loop over the VL positions (a
             * 16-float zmm of AVX-512 where gcc otherwise makes two ymm
             * of the 8-lane halves, for an exp and a division per
             * element in a Swish; the store of a partial last tile is a
             * loop to the row's end, vectorized the same) */
            Expr *qv = ex_add(L, ex_mul(L, ex_var(L, &tv), ex_int(L, VL)), ex_var(L, &vv));
            Expr *av = ex_load(L, acc, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_var(L, &vv)));
            map[c->axes[1].var] = co;
            map[c->axes[2].var] = flat_sub ? ex_int(L, 0) : ex_binary(L, BIN_DIV, qv, ex_int(L, OW));
            map[c->axes[3].var] = flat_sub ? qv : ex_binary(L, BIN_MOD, qv, ex_int(L, OW));
            epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), c->post ? lq_subst(L, c->post, map, av) : av);
            if (Qp != Q)
                epi = st_if(L, ex_lt(L, qv, ex_int(L, Q)), epi);
            epi = st_for(L, &vv, epi);
            epi->for_kind = FOR_VECTORIZE;
        } else {
            epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), c->post ? lq_subst(L, c->post, map, accv) : accv);
            if (Qp != Q)
                epi = st_if(L, ex_lt(L, q, ex_int(L, Q)), epi);
            epi = st_for(L, &vi, epi);
            epi->for_kind = FOR_VECTORIZE;
            epi = st_for(L, &vo, epi);
        }
        if (Co % R)
            epi = st_if(L, ex_lt(L, co, ex_int(L, Co)), epi);
        epi = st_for(L, &pv, epi);
    }
    seq = st_seq(L, 3);
    seq->body[0] = init;
    seq->body[1] = tile;
    seq->body[2] = epi;
    decl = st_decl(L, acc, seq);
    loops = st_for(L, &tv, decl);
    loops = st_for(L, &cbv, loops);
    if (pl->ncb > 1)
        loops->for_kind = FOR_PARALLEL;
    else if (T > 1)
        loops->body[0]->for_kind = FOR_PARALLEL;
    if (body) {
        Stmt *s2 = st_seq(L, 2);
        s2->body[0] = body;
        s2->body[1] = loops;
        loops = s2;
    }
    k->body = st_for(L, &nv, loops);
    if (!lq_stmt_uses_buf(k->body, pl->wbuf))
        k->bufs[pl->wbuf].scope = BUF_UNUSED;
    return 0;
}

/* Largest padded plane a depthwise kernel copies into a local array (on
 * the stack, per channel) instead of a whole-image temp. */
#define DW_LOCAL_PLANE_BYTES ((int64_t)128 << 10)

/* A padded plane larger than a quarter of the target's L1 is copied a band at a
 * time: before each row of tiles, only the input rows those tiles read
 * (P*s0 + (KH-1)*d0 rows, re-copying the KH-1 rows two bands share). The
 * band stays in L1 for its tiles; a whole plane copied first would be read
 * back from L2 (a depthwise tile does one FMA per loaded vector). */
static int64_t dw_band_bytes(const Target *t)
{
    return (t->l1_bytes > 0 ? t->l1_bytes : (int64_t)32 << 10) / 4;
}

typedef struct Window {
    int64_t N, C, H, W, OH, OW, KH, KW, s[2], d[2], lo[2], hi[2];
} Window;

/* Output rows per depthwise tile: pick_rows, unless the fewest tiles of
 * equal height waste fewer rows (14 rows in tiles of at most 12: two
 * tiles of 7, not two of 9 with 4 rows computed for nothing). */
static int dw_rows(int64_t OH, int pmax)
{
    int P = pick_rows(OH, pmax);
    int64_t nt = ceil_div(OH, pmax), Pb = ceil_div(OH, nt);
    if (ceil_div(OH, Pb) * Pb - OH < ceil_div(OH, P) * P - OH)
        return (int)Pb;
    return P;
}

/* Depthwise convolution of a small plane (row shorter than a vector, unit
 * strides), with the vectors along the flattened padded plane: the
 * channel's padded copy has rows of Wr = OW + (KW-1)*d1 columns, and
 * output q = oh*Wr + ow (ow < Wr; the columns past OW are computed and
 * dropped) reads tap (kh, kw) at xp[q + kh*d0*Wr + kw*d1], contiguous in q.
 * One tile of NV vectors holds the whole plane: a 7x7 plane and a 3x3
 * window take 4 vectors instead of 7 rows of one 16-lane vector each.
 * The epilogue stores row oh from acc[oh*Wr ...]. Returns 1 when the shape
 * does not fit (the caller then uses conv_depthwise's row tiles). */
static int conv_depthwise_flat(Lower *L, const Target *t, Compute *c, const Plan *pl, int xbuf,
                               const Window *w)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, acc, xp;
    int64_t Wr = w->OW + (w->KW - 1) * w->d[1], NV = ceil_div(w->OH * Wr, lanes), Hp, reach;
    int64_t rowvecs = w->OH * ceil_div(w->OW, lanes);
    int64_t C = w->C, G;
    IterVar nv, cgv, gv, ge, pv, vv, ohv, vo, vi, rv[3];
    Expr **map, *aidx, *bidx, *ow, *iv, *ch, *acc0;
    Stmt *cp, *tile, *init, *epi, *seq, *decl, *d2, *loops, *tiles;
    if (w->s[0] != 1 || w->s[1] != 1 || w->OW >= lanes || NV >= rowvecs ||
        NV > (regs_of(t) * 3 / 8) || lq_uses_var(c->init, c->axes[2].var) || lq_uses_var(c->init, c->axes[3].var))
        return 1;
    /* rows of the copy: the image and its padding, and enough zero rows
     * below that the last vector's farthest tap stays inside */
    reach = NV * lanes + (w->KH - 1) * w->d[0] * Wr + (w->KW - 1) * w->d[1];
    Hp = w->hi[0] - w->lo[0] + 1;
    if (Hp * Wr < reach)
        Hp = ceil_div(reach, Wr);
    if (Hp * Wr * 4 > DW_LOCAL_PLANE_BYTES / 4)
        return 1;
    nv = lower_itervar(L, "n", w->N);
    pv = lower_itervar(L, "p", NV);
    vv = lower_itervar(L, "v", lanes);
    ohv = lower_itervar(L, "oh", w->OH);
    vo = lower_itervar(L, "vo", ceil_div(w->OW, lanes));
    vi = lower_itervar(L, "vi", lanes);
    rv[0] = lower_itervar(L, "ru", 1);
    rv[1] = lower_itervar(L, "rh", w->KH);
    rv[2] = lower_itervar(L, "rw", w->KW);
    /* G channels at a time: their copies, then their tiles, then their
     * epilogues, so that no load waits for a just-stored row (a masked
     * row store does not forward to the tap's vector load spanning it, nor
     * an accumulator vector to an epilogue row across two of them) */
    G = C % 4 == 0 ? 4 : C % 2 == 0 ? 2 : 1;
    gv = lower_itervar(L, "g", G);
    ge = lower_itervar(L, "g", G);
    cgv = lower_itervar(L, "c", C / G);
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, G * NV * lanes);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1; /* the init loop below writes all of it */
    xp = lower_buf_temp(L, "xpad", DT_FLOAT32, G * Hp * Wr);
    k->bufs[xp].scope = BUF_LOCAL;
    k->bufs[xp].no_init = 1; /* copy_phased writes every row and column */
    cp = copy_phased(L, xp, xbuf, &nv, G, w->H, w->W, Hp, 1, Wr, w->lo[0], w->lo[1], copy_lanes(t),
                     ex_mul(L, ex_var(L, &cgv), ex_int(L, G)), C);
    /* channel cg*G + g; its accumulators at g*NV*lanes, its copy at g*Hp*Wr */
    ch = ex_add(L, ex_mul(L, ex_var(L, &cgv), ex_int(L, G)), ex_var(L, &gv));
    acc0 = ex_mul(L, ex_var(L, &gv), ex_int(L, NV * lanes));
    /* update: acc[p*lanes + v] += w[c, kh, kw] * xp[p*lanes + v + kh*d0*Wr + kw*d1] */
    aidx = ex_add(L, ex_add(L, ex_add(L, ex_int(L, pl->wc0), ex_mul(L, ch, ex_int(L, pl->wco))),
                            ex_mul(L, ex_var(L, &rv[1]), ex_int(L, pl->wr[1]))),
                  ex_mul(L, ex_var(L, &rv[2]), ex_int(L, pl->wr[2])));
    bidx = ex_add(L, ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &gv), ex_int(L, Hp * Wr)),
                                      ex_mul(L, ex_var(L, &pv), ex_int(L, lanes))),
                            ex_add(L, ex_mul(L, ex_var(L, &rv[1]), ex_int(L, w->d[0] * Wr)),
                                   ex_mul(L, ex_var(L, &rv[2]), ex_int(L, w->d[1])))),
                  ex_var(L, &vv));
    tile = mk_tile(L, acc, ex_add(L, acc0, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, lanes)), ex_var(L, &vv))),
                   ex_load(L, pl->wbuf, aidx), ex_load(L, xp, bidx), rv, &pv, &vv);
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[1].var] = ch;
    /* init: the same value for every position of the channel */
    iv = c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
    init = st_store(L, acc, ex_add(L, acc0, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, lanes)), ex_var(L, &vi))),
                    iv);
    init = st_for(L, &vi, init);
    init->for_kind = FOR_VECTORIZE;
    init = st_for(L, &pv, init);
    seq = st_seq(L, 2);
    seq->body[0] = init;
    seq->body[1] = tile;
    tiles = st_for(L, &gv, seq);
    {
        Expr *index, *accv;
        ow = ex_add(L, ex_mul(L, ex_var(L, &vo), ex_int(L, lanes)), ex_var(L, &vi));
        accv = ex_load(L, acc, ex_add(L, ex_mul(L, ex_var(L, &ge), ex_int(L, NV * lanes)),
                                      ex_add(L, ex_mul(L, ex_var(L, &ohv), ex_int(L, Wr)), ow)));
        map[c->axes[1].var] = ex_add(L, ex_mul(L, ex_var(L, &cgv), ex_int(L, G)), ex_var(L, &ge));
        map[c->axes[2].var] = ex_var(L, &ohv);
        map[c->axes[3].var] = ow;
        index = lower_out_index(L, c);
        epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), c->post ? lq_subst(L, c->post, map, accv) : accv);
        if (ceil_div(w->OW, lanes) * lanes != w->OW)
            epi = st_if(L, ex_lt(L, ow, ex_int(L, w->OW)), epi);
        epi = st_for(L, &vi, epi);
        epi->for_kind = FOR_VECTORIZE;
        epi = st_for(L, &vo, epi);
        epi = st_for(L, &ohv, epi);
        epi = st_for(L, &ge, epi);
    }
    seq = st_seq(L, 3);
    seq->body[0] = cp;
    seq->body[1] = tiles;
    seq->body[2] = epi;
    decl = st_decl(L, acc, seq);
    d2 = st_decl(L, xp, decl);
    loops = st_for(L, &cgv, d2);
    if (C / G > 1)
        loops->for_kind = FOR_PARALLEL;
    k->body = st_for(L, &nv, loops);
    return 0;
}

/* Depthwise convolution (one input channel per output channel): vectors
 * along the output columns, tiles of P output rows x VL columns of one
 * channel, the channel's weight broadcast. The input plane is copied with
 * its padding and, for a column stride S > 1, split into S column phases
 * (input column S*j + ph at [ph][j]) so that every tap reads VL contiguous
 * elements. */
static int conv_depthwise(Lower *L, const Target *t, Compute *c, const Plan *pl, int xbuf, const Window *w)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, V, P, pmax, acc, xp, per_chan, band, cvec = !strcmp(t->isa, "c");
    int64_t VL, T, OT, S = w->s[1], Hp, Hb, Wj, C = w->C;
    IterVar nv, cv, otv, qtv, pv, vv, vo, vi, rv[3];
    Expr **map, *aidx, *bidx, *oh, *ow, *accidx, *accix2;
    Stmt *cp, *tile, *init, *epi, *seq, *decl, *loops;
    int64_t w1 = ceil_div(w->OW, 2 * lanes) * 2 * lanes - w->OW, w2 = ceil_div(w->OW, lanes) * lanes - w->OW;
    if (!conv_depthwise_flat(L, t, c, pl, xbuf, w))
        return 0;
    V = w->OW > lanes && (w1 <= w2 || cvec) ? 2 : 1; /* the portable target: a 16-float
                                                        zmm row (AVX-512) */
    pmax = (regs_of(t) * 3 / 8) / V;
    if (cvec)
        pmax = regs_of(t) * 3 / 8; /* the portable target: a row of 16
                                      floats is one zmm with AVX-512 (3 rows
                                      of two 8-float vectors left the FMAs
                                      latency-bound: mobilenet_v2's first
                                      depthwise conv took 6x AVX-512's time) */
    P = dw_rows(w->OH, pmax);
    {
        TileKnobs kn = choose_knobs(L, t, TS_DWCONV, "dwconv2d",
                                    conv_desc(L, w->N, C, w->H, w->W, C, w->KH, w->KW, w->s, w->d, w->lo, w->hi),
                                    w->OH, w->OW, w->KH * w->KW, P, V, 0, 0);
        P = kn.P;
        V = kn.V;
    }
    VL = (int64_t)V * lanes;
    T = ceil_div(w->OW, VL);
    OT = ceil_div(w->OH, P);
    Hp = w->hi[0] - w->lo[0] + 1;
    if ((OT * P - 1) * w->s[0] + (w->KH - 1) * w->d[0] + 1 > Hp)
        Hp = (OT * P - 1) * w->s[0] + (w->KH - 1) * w->d[0] + 1;
    Wj = T * VL + ((w->KW - 1) * w->d[1]) / S;
    Hb = (P - 1) * w->s[0] + (w->KH - 1) * w->d[0] + 1;
    band = OT > 1 && Hp * S * Wj * 4 > dw_band_bytes(t);
    /* a band's rows start on a vector boundary when that costs at most a
     * quarter more columns: the taps' loads then split fewer cache lines */
    if (band && ceil_div(Wj, lanes) * lanes - Wj <= Wj / 4)
        Wj = ceil_div(Wj, lanes) * lanes;
    nv = lower_itervar(L, "n", w->N);
    cv = lower_itervar(L, "c", C);
    otv = lower_itervar(L, "ot", OT);
    qtv = lower_itervar(L, "qt", T);
    pv = lower_itervar(L, "p", P);
    vv = lower_itervar(L, "v", VL);
    vo = lower_itervar(L, "vo", V);
    vi = lower_itervar(L, "vi", lanes);
    rv[0] = lower_itervar(L, "ru", 1);
    rv[1] = lower_itervar(L, "rh", w->KH);
    rv[2] = lower_itervar(L, "rw", w->KW);
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, (int64_t)P * VL);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1; /* the init loop below writes all of it */
    /* the padded, phase-split copy: of one channel at a time, in a local
     * array that stays in cache for the channel's tiles, when the plane is
     * small enough for the stack; else of the whole image first */
    per_chan = band || Hp * S * Wj * 4 <= DW_LOCAL_PLANE_BYTES;
    if (band) {
        xp = lower_buf_temp(L, "xpad", DT_FLOAT32, Hb * S * Wj);
        k->bufs[xp].scope = BUF_LOCAL;
        k->bufs[xp].no_init = 1; /* copy_phased_at writes every row, phase and column */
        cp = copy_phased_at(L, xp, xbuf, &nv, 1, w->H, w->W, Hb, S, Wj, w->lo[0],
                            ex_mul(L, ex_var(L, &otv), ex_int(L, (int64_t)P * w->s[0])), w->lo[1], copy_lanes(t),
                            ex_var(L, &cv), C);
    } else if (per_chan) {
        xp = lower_buf_temp(L, "xpad", DT_FLOAT32, Hp * S * Wj);
        k->bufs[xp].scope = BUF_LOCAL;
        k->bufs[xp].no_init = 1; /* copy_phased writes every row, phase and column */
        cp = copy_phased(L, xp, xbuf, &nv, 1, w->H, w->W, Hp, S, Wj, w->lo[0], w->lo[1], copy_lanes(t),
                         ex_var(L, &cv), C);
    } else {
        xp = lower_buf_temp(L, "xpad", DT_FLOAT32, C * Hp * S * Wj);
        cp = copy_phased(L, xp, xbuf, &nv, C, w->H, w->W, Hp, S, Wj, w->lo[0], w->lo[1], copy_lanes(t), NULL, 0);
    }
    /* update: acc[p*VL + v] += w[c, kh, kw] * xp[c][(ot*P + p)*s0 + kh*d0][(kw*d1) % S][qt*VL + v + (kw*d1) / S] */
    {
        Expr *kwd = ex_mul(L, ex_var(L, &rv[2]), ex_int(L, w->d[1]));
        /* the tile's row in the band, or in the whole plane */
        Expr *prow = band ? ex_var(L, &pv) : ex_add(L, ex_mul(L, ex_var(L, &otv), ex_int(L, P)), ex_var(L, &pv));
        Expr *row = ex_add(L, ex_mul(L, prow, ex_int(L, w->s[0])), ex_mul(L, ex_var(L, &rv[1]), ex_int(L, w->d[0])));
        Expr *phase = S > 1 ? ex_binary(L, BIN_MOD, kwd, ex_int(L, S)) : ex_int(L, 0);
        Expr *shift = S > 1 ? ex_binary(L, BIN_DIV, kwd, ex_int(L, S)) : kwd;
        accix2 = ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_var(L, &vv));
        aidx = ex_add(L, ex_add(L, ex_add(L, ex_int(L, pl->wc0), ex_mul(L, ex_var(L, &cv), ex_int(L, pl->wco))),
                                ex_mul(L, ex_var(L, &rv[1]), ex_int(L, pl->wr[1]))),
                      ex_mul(L, ex_var(L, &rv[2]), ex_int(L, pl->wr[2])));
        bidx = ex_add(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, per_chan ? ex_int(L, 0) : ex_var(L, &cv), ex_int(L, Hp)), row),
                                                             ex_int(L, S)),
                                                   phase),
                                         ex_int(L, Wj)),
                                ex_add(L, ex_mul(L, ex_var(L, &qtv), ex_int(L, VL)), shift)),
                      ex_var(L, &vv));
        tile = mk_tile(L, acc, accix2, ex_load(L, pl->wbuf, aidx), ex_load(L, xp, bidx), rv, &pv,
                       &vv);
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    oh = ex_add(L, ex_mul(L, ex_var(L, &otv), ex_int(L, P)), ex_var(L, &pv));
    ow = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &qtv), ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
                ex_var(L, &vi));
    accidx = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
                    ex_var(L, &vi));
    if (cvec) {
        /* the portable target: init and epilogue loop over the VL
         * positions at once (one zmm with AVX-512; gcc made 4-float
         * pieces of the two 8-lane halves of a Clip epilogue) */
        ow = ex_add(L, ex_mul(L, ex_var(L, &qtv), ex_int(L, VL)), ex_var(L, &vv));
        accidx = ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_var(L, &vv));
    }
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[1].var] = ex_var(L, &cv);
    {
        Expr *iv;
        map[c->axes[2].var] = OT * P != w->OH ? ex_binary(L, BIN_MIN, oh, ex_int(L, w->OH - 1)) : oh;
        map[c->axes[3].var] = T * VL != w->OW ? ex_binary(L, BIN_MIN, ow, ex_int(L, w->OW - 1)) : ow;
        iv = c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
        init = st_store(L, acc, accidx, iv);
        init = st_for(L, cvec ? &vv : &vi, init);
        init->for_kind = FOR_VECTORIZE;
        if (!cvec)
            init = st_for(L, &vo, init);
        init = st_for(L, &pv, init);
    }
    {
        Expr *index, *accv = ex_load(L, acc, accidx);
        map[c->axes[2].var] = oh;
        map[c->axes[3].var] = ow;
        index = lower_out_index(L, c);
        epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), c->post ? lq_subst(L, c->post, map, accv) : accv);
        if (T * VL != w->OW)
            epi = st_if(L, ex_lt(L, ow, ex_int(L, w->OW)), epi);
        epi = st_for(L, cvec ? &vv : &vi, epi);
        epi->for_kind = FOR_VECTORIZE;
        if (!cvec)
            epi = st_for(L, &vo, epi);
        if (OT * P != w->OH)
            epi = st_if(L, ex_lt(L, oh, ex_int(L, w->OH)), epi);
        epi = st_for(L, &pv, epi);
    }
    seq = st_seq(L, 3);
    seq->body[0] = init;
    seq->body[1] = tile;
    seq->body[2] = epi;
    decl = st_decl(L, acc, seq);
    loops = st_for(L, &qtv, decl);
    if (band) {
        seq = st_seq(L, 2);
        seq->body[0] = cp;
        seq->body[1] = loops;
        loops = st_for(L, &cv, st_for(L, &otv, st_decl(L, xp, seq)));
        if (C > 1)
            loops->for_kind = FOR_PARALLEL;
        k->body = st_for(L, &nv, loops);
        return 0;
    }
    loops = st_for(L, &otv, loops);
    if (per_chan) {
        seq = st_seq(L, 2);
        seq->body[0] = cp;
        seq->body[1] = loops;
        loops = st_for(L, &cv, st_decl(L, xp, seq));
        if (C > 1)
            loops->for_kind = FOR_PARALLEL;
        k->body = st_for(L, &nv, loops);
        return 0;
    }
    loops = st_for(L, &cv, loops);
    if (C > 1)
        loops->for_kind = FOR_PARALLEL;
    seq = st_seq(L, 2);
    seq->body[0] = cp;
    seq->body[1] = loops;
    k->body = st_for(L, &nv, seq);
    return 0;
}

/* Bytes of a conv's weight block kept in L1 while a group of tiles passes
 * over it: 3/4 of the target's L1 (32 KB when the description does not
 * say); the input rows a tile reads share the rest. */
static int64_t l1_budget(const Target *t)
{
    return (t->l1_bytes > 0 ? t->l1_bytes : (int64_t)32 << 10) * 3 / 4;
}

/* Largest accumulator array (partial sums of a group of tiles) a blocked
 * conv keeps on the stack: a quarter of the L1. */
static int64_t acc_budget(const Target *t)
{
    return (t->l1_bytes > 0 ? t->l1_bytes : (int64_t)32 << 10) / 4;
}
/* Fewest reduction steps (input channels x window) per block: each block
 * reloads and stores the tile's accumulators (on resnet18, blocks of 72
 * steps were slower than no blocking, blocks of 144 a little faster). */
#define CONV_BLOCK_MIN_STEPS 128

/* Reduction blocking of a conv: when a channel block's weight panel
 * (Ci*KHW steps of VL floats) does not fit l1_budget, the input channels
 * are cut into blocks of kc (a divisor of Ci) whose panel slice does, and
 * groups of G output rows (of T tiles each) pass over each slice while it
 * is in L1, their partial sums kept side by side in the accumulator array
 * between blocks. Sets *kc = Ci (no blocking) when the panel fits, no
 * divisor is large enough, or a group would be a single tile. */
static void conv_blocks(const Target *t, const Plan *pl, int64_t Ci, int64_t KHW, int64_t rows, int64_t T,
                        int64_t *kc, int64_t *G)
{
    int64_t step = KHW * pl->VL * 4, row = T * pl->P * pl->VL * 4, d, g;
    *kc = Ci;
    *G = 1;
    if (Ci * step <= l1_budget(t) || row > acc_budget(t))
        return;
    for (d = l1_budget(t) / step; d > 1 && Ci % d; d--)
        ;
    g = acc_budget(t) / row;
    if (g > rows)
        g = rows;
    if (d < 1 || d * KHW < CONV_BLOCK_MIN_STEPS || g * T < 2)
        return;
    /* as many groups as g allows, evened out */
    *G = ceil_div(rows, ceil_div(rows, g));
    *kc = d;
}

/* The window of a conv's data load xl: its indices 2 and 3 (rows and
 * columns, possibly clamped to the plane) affine in output axis 2+i and
 * reduce axis 1+i only, with strides s and dilations d >= 1, first and last
 * positions lo and hi. Every bound that can fail must be tested by cond
 * (the padding select, which then gives 0 there). Returns 1 when xl is not
 * such a window. */
static int conv_window(Lower *L, const Compute *c, const Expr *xl, const Expr *cond, int64_t H, int64_t W,
                       int64_t *s, int64_t *d, int64_t *lo, int64_t *hi)
{
    const Expr *pos[2];
    LqAffine ap[2];
    int i, clamped[2], bits = 0, need = 0;
    for (i = 0; i < 2; i++) {
        int vars[2];
        int64_t ext = i ? W : H;
        vars[0] = c->axes[2 + i].var;
        vars[1] = c->raxes[1 + i].var;
        pos[i] = strip_clamp(xl->idx[2 + i], ext - 1, &clamped[i]);
        if (!lq_affine(pos[i], &ap[i]) || !lq_aff_only(&ap[i], vars, 2))
            return 1;
        s[i] = lq_aff_coef(&ap[i], vars[0]);
        d[i] = lq_aff_coef(&ap[i], vars[1]);
        if (s[i] < 1 || d[i] < 1 || (c->axes[2 + i].extent == 1 && s[i] != 1))
            return 1;
        lo[i] = ap[i].c0;
        hi[i] = ap[i].c0 + s[i] * (c->axes[2 + i].extent - 1) + d[i] * (c->raxes[1 + i].extent - 1);
        if (lo[i] < 0 || hi[i] >= ext)
            need |= (lo[i] < 0 ? 1 : 0) << (2 * i) | (hi[i] >= ext ? 2 : 0) << (2 * i);
    }
    if (cond) {
        int64_t hh[2];
        hh[0] = H;
        hh[1] = W;
        if (!cond_terms(cond, pos, hh, &bits))
            return 1;
    }
    return (need & ~bits) != 0;
}

/* The reduce loops of a dense conv tile (try_conv, try_conv_nchwc) over R
 * input channels (or channel blocks), kc at a time (kc < R: conv_blocks'
 * reduction blocking): creates rv (extents pl->rext, rv[0] cut to kc) and
 * rcb, and gives the output row ohe, the first reduce index r1e and the
 * tile's place accb in the accumulator array, which it returns:
 *   blocked: rows og*G + oh, input channels rcb*kc + rr, the tile of
 *            (oh, ot) at its own place in acc (G*T tiles);
 *   else:    rows oh, channels rr, one tile at 0. */
static int conv_reduce_vars(Lower *L, const Plan *pl, int64_t R, int64_t kc, int64_t G, int64_t T,
                            const IterVar *ogv, const IterVar *ohv, const IterVar *owv, IterVar *rv,
                            IterVar *rcbv, Expr **ohe, Expr **r1e, Expr **accb)
{
    Kernel *k = L->k;
    int i, acc;
    for (i = 0; i < 3; i++)
        rv[i] = lower_itervar(L, "rr", pl->rext[i]);
    *rcbv = lower_itervar(L, "rcb", R / kc);
    if (kc < R) {
        rv[0].extent = kc;
        *ohe = ex_add(L, ex_mul(L, ex_var(L, ogv), ex_int(L, G)), ex_var(L, ohv));
        *r1e = ex_add(L, ex_mul(L, ex_var(L, rcbv), ex_int(L, kc)), ex_var(L, &rv[0]));
        *accb = ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, ohv), ex_int(L, T)), ex_var(L, owv)),
                       ex_int(L, (int64_t)pl->P * pl->VL));
    } else {
        *ohe = ex_var(L, ohv);
        *r1e = ex_var(L, &rv[0]);
        *accb = ex_int(L, 0);
    }
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, (kc < R ? G * T : 1) * pl->P * pl->VL);
    k->bufs[acc].scope = BUF_LOCAL;
    /* the init loop writes every tile the tile and epilogue read (blocked:
     * all G*T of the rows that exist, under the same guard) */
    k->bufs[acc].no_init = 1;
    return acc;
}

/* The loop nest of the dense conv tiles (try_conv, try_conv_nchwc):
 *   for n: copy; for cb [parallel]: decl acc {
 *     unblocked: for oh: for ot: init; tile; epilogue
 *     blocked:   for og: { for oh, ot: init; for rcb: for oh, ot: tile;
 *                          for oh, ot: epilogue }   (oh < OHx tested when
 *                the G rows of the last group run past it) }
 * as the kernel's body; the original weights are unused afterwards. */
static void conv_tile_nest(Lower *L, const Plan *pl, int acc, Stmt *copy, Stmt *init, Stmt *tile, Stmt *epi,
                           int blocked, Expr *ohe, int64_t OHx, int64_t G, const IterVar *nv,
                           const IterVar *cbv, const IterVar *ogv, const IterVar *ohv, const IterVar *owv,
                           const IterVar *rcbv)
{
    Kernel *k = L->k;
    Stmt *seq = st_seq(L, 3), *decl, *loops, *body;
    int i;
    if (blocked) {
        Stmt *ph[3];
        ph[0] = init;
        ph[1] = tile;
        ph[2] = epi;
        for (i = 0; i < 3; i++) {
            Stmt *b = ph[i];
            if (OHx % G)
                b = st_if(L, ex_lt(L, ohe, ex_int(L, OHx)), b);
            b = st_for(L, ohv, st_for(L, owv, b));
            seq->body[i] = i == 1 ? st_for(L, rcbv, b) : b;
        }
    } else {
        seq->body[0] = init;
        seq->body[1] = tile;
        seq->body[2] = epi;
    }
    decl = st_decl(L, acc, seq);
    loops = blocked ? st_for(L, ogv, decl) : st_for(L, ohv, st_for(L, owv, decl));
    loops = st_for(L, cbv, loops);
    if (pl->ncb > 1)
        loops->for_kind = FOR_PARALLEL;
    if (copy) {
        body = st_seq(L, 2);
        body->body[0] = copy;
        body->body[1] = loops;
    } else {
        body = loops;
    }
    body = st_for(L, nv, body);
    k->body = body;
    if (!lq_stmt_uses_buf(body, pl->wbuf))
        k->bufs[pl->wbuf].scope = BUF_UNUSED;
}

/* Set by try_conv when it lowers a depthwise conv (template_packed's
 * threshold for a parallel region). */
static int dw_kernel;

static int try_conv(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *xv, *wl, *cond = NULL, *xl;
    LqAffine a0, a1, aw;
    Plan pl;
    int i, copy, flat, dw;
    int64_t N, Ci, H, W, OH, OW, s[2], d[2], lo[2], hi[2], KH, KW, Hp, Wp, T, OHx, kc, G;
    int xbuf, src, acc;
    IterVar nv, cbv, ohv, owv, pv, vv, rv[3], ogv, rcbv;
    Expr *map_axes[1], **map, *ohe, *r1e, *accb;
    Stmt *body, *tile, *init, *epi, *post1 = NULL;
    if (c->n_axes != 4 || c->n_raxes != 3)
        return 1;
    if (const_load(L, c->body->b)) {
        xv = c->body->a;
        wl = c->body->b;
    } else if (const_load(L, c->body->a)) {
        xv = c->body->b;
        wl = c->body->a;
    } else {
        return 1;
    }
    (void)map_axes;
    xl = xv;
    if (xv->kind == EX_SELECT) {
        if (xv->c->kind != EX_FLOAT || xv->c->fval != 0.0)
            return 1;
        cond = xv->a;
        xl = xv->b;
    }
    if (!f32_load(k, xl) || xl->nidx != 4 || !xl->dims || xl->buf == c->out_buf)
        return 1;
    N = c->axes[0].extent;
    Ci = c->raxes[0].extent;
    KH = c->raxes[1].extent;
    KW = c->raxes[2].extent;
    OH = c->axes[2].extent;
    OW = c->axes[3].extent;
    H = xl->dims[2];
    W = xl->dims[3];
    if (xl->dims[0] != N)
        return 1;
    /* batch and input channel indices: the reduce channel (group 1), or
     * the output channel itself (depthwise: one input channel per group) */
    if (!lq_affine(xl->idx[0], &a0) || !lq_affine(xl->idx[1], &a1) || a0.c0 || a1.c0)
        return 1;
    {
        int v0 = c->axes[0].var, v1 = c->raxes[0].var, vc[2];
        vc[0] = c->axes[1].var;
        vc[1] = v1;
        if (!lq_aff_only(&a0, &v0, 1) || (N > 1 && lq_aff_coef(&a0, v0) != 1))
            return 1;
        if (lq_aff_only(&a1, &v1, 1) && lq_aff_coef(&a1, v1) == 1 && xl->dims[1] == Ci)
            dw = 0;
        else if (Ci == 1 && lq_aff_only(&a1, vc, 2) && lq_aff_coef(&a1, vc[0]) == 1 && xl->dims[1] == c->axes[1].extent)
            dw = 1;
        else
            return 1;
    }
    if (conv_window(L, c, xl, cond, H, W, s, d, lo, hi))
        return 1;
    /* weights: affine in the output channel and the reduce axes */
    if (!lq_affine(wl->a, &aw))
        return 1;
    {
        int vars[4];
        vars[0] = c->axes[1].var;
        for (i = 0; i < 3; i++)
            vars[1 + i] = c->raxes[i].var;
        if (!lq_aff_only(&aw, vars, 4))
            return 1;
        memset(&pl, 0, sizeof pl);
        pl.wco = lq_aff_coef(&aw, vars[0]);
        for (i = 0; i < 3; i++)
            pl.wr[i] = lq_aff_coef(&aw, vars[1 + i]);
        pl.wc0 = aw.c0;
    }
    pl.wbuf = wl->buf;
    if (dw) {
        Window wn;
        wn.N = N;
        wn.C = c->axes[1].extent;
        wn.H = H;
        wn.W = W;
        wn.OH = OH;
        wn.OW = OW;
        wn.KH = KH;
        wn.KW = KW;
        for (i = 0; i < 2; i++) {
            wn.s[i] = s[i];
            wn.d[i] = d[i];
            wn.lo[i] = lo[i];
            wn.hi[i] = hi[i];
        }
        dw_kernel = 1;
        return conv_depthwise(L, t, c, &pl, xl->buf, &wn);
    }
    pl.nr = 3;
    pl.rext[0] = Ci;
    pl.rext[1] = KH;
    pl.rext[2] = KW;
    /* a 1x1 window over a whole unpadded plane is a matrix product over
     * the flattened positions */
    flat = KH == 1 && KW == 1 && !cond && s[0] == 1 && s[1] == 1 && lo[0] == 0 && lo[1] == 0 &&
           OH == H && OW == W;
    if (flat && OH * OW >= 4 * (t->vector_bits / 32))
        return conv_positions(L, t, c, &pl, xl->buf, N, Ci, OH, OW);
    plan_tile(&pl, t, c->axes[1].extent, flat ? OH * OW : OW);
    strided_rows(&pl, t, s[1], KW, flat ? OH * OW : OW);
    {
        TileKnobs kn = choose_knobs(L, t, TS_CONV, "conv2d",
                                    conv_desc(L, N, Ci, H, W, c->axes[1].extent, KH, KW, s, d, lo, hi),
                                    flat ? OH * OW : OW, c->axes[1].extent, Ci * KH * KW, pl.P, pl.V, 0, 0);
        plan_set(&pl, &kn);
    }
    if (pack_weights(L, &pl))
        return 1;
    {
        int64_t rows = flat ? OH * OW : OW;
        T = ceil_div(rows, pl.P);
        copy = cond || T * pl.P != rows || lo[0] != 0 || lo[1] != 0;
        if (flat) {
            Hp = 1;
            Wp = copy ? T * pl.P : H * W;
        } else {
            Hp = hi[0] - lo[0] + 1;
            Wp = hi[1] - lo[1] + 1;
            if ((T * pl.P - 1) * s[1] + d[1] * (KW - 1) + 1 > Wp)
                Wp = (T * pl.P - 1) * s[1] + d[1] * (KW - 1) + 1;
            if (!copy) {
                Hp = H;
                Wp = W;
            }
        }
    }
    xbuf = xl->buf;
    OHx = flat ? 1 : OH;
    conv_blocks(t, &pl, Ci, KH * KW, OHx, T, &kc, &G);
    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", pl.ncb);
    ogv = lower_itervar(L, "og", ceil_div(OHx, G));
    ohv = lower_itervar(L, "oh", kc < Ci ? G : OHx);
    owv = lower_itervar(L, "ot", T);
    pv = lower_itervar(L, "p", pl.P);
    vv = lower_itervar(L, "v", pl.VL);
    acc = conv_reduce_vars(L, &pl, Ci, kc, G, T, &ogv, &ohv, &owv, rv, &rcbv, &ohe, &r1e, &accb);
    /* source of the tile's products: plane base + row * Wp + column */
    if (copy) {
        src = lower_buf_temp(L, "xpad", DT_FLOAT32, Ci * Hp * Wp);
        body = copy_padded(L, src, xbuf, &nv, Ci, flat ? 1 : H, flat ? H * W : W, Hp, Wp,
                           flat ? 0 : lo[0], flat ? 0 : lo[1], copy_lanes(t));
    } else {
        src = xbuf;
        body = NULL;
    }
    /* A index of the tile */
    {
        Expr *row = ex_add(L, ex_mul(L, ohe, ex_int(L, s[0])),
                           ex_mul(L, ex_var(L, &rv[1]), ex_int(L, d[0])));
        Expr *col = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P)),
                                               ex_var(L, &pv)),
                                     ex_int(L, s[1])),
                           ex_mul(L, ex_var(L, &rv[2]), ex_int(L, d[1])));
        Expr *plane = r1e;
        Expr *aidx;
        if (!copy)
            plane = ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, Ci)), plane);
        if (!copy && !flat) {
            row = ex_add(L, row, ex_int(L, lo[0]));
            col = ex_add(L, col, ex_int(L, lo[1]));
        }
        aidx = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, plane, ex_int(L, Hp)), row), ex_int(L, Wp)), col);
        tile = update_nest(L, t, &pl, acc, rv, &pv, &vv, src, aidx, ex_var(L, &cbv), r1e, accb);
    }
    /* init and epilogue: the stage's axes in terms of the tile */
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    {
        Expr *co = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, pl.VL)), ex_var(L, &vv));
        Expr *q = ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P)), ex_var(L, &pv));
        Expr *rows = flat ? ex_int(L, OH * OW) : ex_int(L, OW);
        Expr *aidx = ex_add(L, accb, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, pl.VL)), ex_var(L, &vv)));
        Expr *accv = ex_load(L, acc, aidx);
        Expr *index;
        Expr *iv;
        map[c->axes[0].var] = ex_var(L, &nv);
        /* init may read per-channel data: clamp padded channels and rows */
        map[c->axes[1].var] = pl.co % pl.VL ? ex_binary(L, BIN_MIN, co, ex_int(L, pl.co - 1)) : co;
        if (flat) {
            Expr *qq = ex_binary(L, BIN_MIN, q, ex_int(L, OH * OW - 1));
            map[c->axes[2].var] = ex_binary(L, BIN_DIV, qq, ex_int(L, OW));
            map[c->axes[3].var] = ex_binary(L, BIN_MOD, qq, ex_int(L, OW));
        } else {
            map[c->axes[2].var] = ohe;
            map[c->axes[3].var] = T * pl.P != OW ? ex_binary(L, BIN_MIN, q, ex_int(L, OW - 1)) : q;
        }
        iv = c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
        {
            /* channels as vo vectors of vi lanes: a vectorized init */
            IterVar vo = lower_itervar(L, "vo", pl.V), vi = lower_itervar(L, "vi", pl.lanes);
            Expr *co2 = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, pl.VL)),
                                         ex_mul(L, ex_var(L, &vo), ex_int(L, pl.lanes))),
                               ex_var(L, &vi));
            Expr *ai2 = ex_add(L, accb, ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, pl.VL)),
                                                     ex_mul(L, ex_var(L, &vo), ex_int(L, pl.lanes))),
                                           ex_var(L, &vi)));
            map[c->axes[1].var] = pl.co % pl.VL ? ex_binary(L, BIN_MIN, co2, ex_int(L, pl.co - 1)) : co2;
            iv = c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
            init = st_store(L, acc, ai2, iv);
            init = st_for(L, &vi, init);
            init->for_kind = FOR_VECTORIZE;
            init = st_for(L, &vo, init);
            init = st_for(L, &pv, init);
        }
        /* the epilogue stores only real channels and positions */
        map[c->axes[1].var] = co;
        if (flat && flat_ok(L, c->post, c->axes[2].var, c->axes[3].var, OW) &&
            flat_ok(L, c->out_index, c->axes[2].var, c->axes[3].var, OW)) {
            map[c->axes[2].var] = ex_int(L, 0);
            map[c->axes[3].var] = q;
        } else if (flat) {
            map[c->axes[2].var] = ex_binary(L, BIN_DIV, q, ex_int(L, OW));
            map[c->axes[3].var] = ex_binary(L, BIN_MOD, q, ex_int(L, OW));
        } else {
            map[c->axes[3].var] = q;
        }
        index = lower_out_index(L, c);
        if (c->post && !strcmp(t->isa, "c")) {
            /* the portable target: the stored column of the tile is a
             * strided gather that the C compiler leaves scalar, so the
             * post (bias, activation, residual: a Swish's exp) first runs
             * in place over the tile's rows, whose channels are contiguous
             * (a vectorized loop), at clamped positions and channels in
             * the last tiles (computed, never stored); the epilogue then
             * only copies. Every element read there belongs to the tile,
             * so an output that aliases a residual is read before it is
             * written, as in the one-pass epilogue. */
            int64_t nq = flat ? OH * OW : OW;
            Expr **m1 = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *m1);
            Expr *qc = T * pl.P != nq ? ex_binary(L, BIN_MIN, q, ex_int(L, nq - 1)) : q;
            memcpy(m1, map, (size_t)(k->n_vars + 1) * sizeof *m1);
            m1[c->axes[1].var] = pl.co % pl.VL ? ex_binary(L, BIN_MIN, co, ex_int(L, pl.co - 1)) : co;
            if (flat && map[c->axes[2].var]->kind == EX_INT) {
                m1[c->axes[3].var] = qc;
            } else if (flat) {
                m1[c->axes[2].var] = ex_binary(L, BIN_DIV, qc, ex_int(L, OW));
                m1[c->axes[3].var] = ex_binary(L, BIN_MOD, qc, ex_int(L, OW));
            } else {
                m1[c->axes[3].var] = qc;
            }
            post1 = st_store(L, acc, aidx, lq_subst(L, c->post, m1, accv));
            post1 = st_for(L, &vv, post1);
            post1->for_kind = FOR_VECTORIZE;
            post1 = st_for(L, &pv, post1);
        }
        epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL),
                       c->post && !post1 ? lq_subst(L, c->post, map, accv) : accv);
        /* positions innermost: consecutive outputs of one channel, a
         * vector that gathers a column of the tile */
        if (T * pl.P != (flat ? OH * OW : OW))
            epi = st_if(L, ex_lt(L, q, rows), epi);
        epi = st_for(L, &pv, epi);
        epi->for_kind = FOR_VECTORIZE;
        if (pl.co % pl.VL)
            epi = st_if(L, ex_lt(L, co, ex_int(L, pl.co)), epi);
        epi = st_for(L, &vv, epi);
        if (post1) {
            Stmt *s2 = st_seq(L, 2);
            s2->body[0] = post1;
            s2->body[1] = epi;
            epi = s2;
        }
    }
    conv_tile_nest(L, &pl, acc, body, init, tile, epi, kc < Ci, ohe, OHx, G, &nv, &cbv, &ogv, &ohv, &owv, &rcbv);
    return 0;
}

/* ---- blocked convolution, NCHW<b>c (lower/op_layout.c) ----
 *
 * y[n][mb][oh][ow][mi] = post(init + sum x(..) * w[mb*b + mi][ci][kh][kw])
 * with x NCHW (reduce axes c, kh, kw) or blocked [N][C/b][H][W][b] (reduce
 * axes cb, kh, kw, ci; b = the target's lanes). The tile is P positions of
 * one output row x VL = V*b output channels, as in try_conv, but its
 * columns are V whole channel blocks, so the epilogue stores V contiguous
 * runs of P*b floats (one vector per position and block) instead of
 * scattering a transposed tile. The input is viewed as R1 planes (C, or
 * C/b blocks) of H rows of W*e floats (e = 1 NCHW, e = b blocked): the
 * zero-padded copy is copy_phased's with columns of e floats, and a
 * blocked input's (kw, ci) reduce pair is one reduce loop r3 = kw*b + ci
 * (contiguous in the copy when the column dilation is 1). Weights are
 * packed at compile time into wp[cbt][r1][kh][r3][VL]. */

/* wp[cbt][r1][r2][r3][VL] = w[off] with off affine in (mb, mi, r1, kh, kw,
 * ci): co[] the coefficients of (mb, mi, r1, kh, kw, ci), kw = r3 / e and
 * ci = r3 % e, mb = cbt*V + v / b, mi = v % b. */
static int pack_nchwc(Lower *L, Plan *pl, int64_t b, int64_t e, const int64_t *co, int64_t c0)
{
    Graph *g = L->g;
    const Buffer *wb = &L->k->bufs[pl->wbuf];
    const float *src;
    float *dst;
    int64_t rtot = pl->rext[0] * pl->rext[1] * pl->rext[2], n, cb, r, v;
    int32_t vi;
    Value *nv;
    if (!g || wb->value < 0 || !g->values[wb->value].data)
        return 1;
    src = g->values[wb->value].data;
    n = pl->ncb * rtot * pl->VL;
    dst = lower_alloc(L, (size_t)n * sizeof *dst);
    for (cb = 0; cb < pl->ncb; cb++)
        for (r = 0; r < rtot; r++) {
            int64_t r3 = r % pl->rext[2], r2 = r / pl->rext[2] % pl->rext[1],
                    r1 = r / pl->rext[2] / pl->rext[1];
            for (v = 0; v < pl->VL; v++) {
                int64_t mb = cb * pl->V + v / b, off;
                off = c0 + mb * co[0] + (v % b) * co[1] + r1 * co[2] + r2 * co[3] + (r3 / e) * co[4] +
                      (r3 % e) * co[5];
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

static int try_conv_nchwc(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *xv, *wl, *cond = NULL, *xl;
    LqAffine a0, a1, aw;
    Plan pl;
    int i, copy, flat, blocked_in = c->n_raxes == 4;
    int64_t N, Ci, R1, H, W, OH, OW, s[2], d[2], lo[2], hi[2], KH, KW, Hp, Wp, T, OHx, kc, G, b, e, Co,
        rows, wco[6];
    int xbuf, src, acc;
    IterVar nv, cbv, ohv, owv, pv, vv, rv[3], ogv, rcbv, vo, vi;
    Expr **map, *ohe, *r1e, *accb, *q;
    Stmt *body, *tile, *init, *epi;
    if (c->n_axes != 5 || (c->n_raxes != 3 && c->n_raxes != 4))
        return 1;
    b = c->axes[4].extent;
    if (b != t->vector_bits / 32)
        return 1;
    if (const_load(L, c->body->b)) {
        xv = c->body->a;
        wl = c->body->b;
    } else if (const_load(L, c->body->a)) {
        xv = c->body->b;
        wl = c->body->a;
    } else {
        return 1;
    }
    xl = xv;
    if (xv->kind == EX_SELECT) {
        if (xv->c->kind != EX_FLOAT || xv->c->fval != 0.0)
            return 1;
        cond = xv->a;
        xl = xv->b;
    }
    if (!f32_load(k, xl) || xl->nidx != 4 + blocked_in || !xl->dims || xl->buf == c->out_buf)
        return 1;
    e = blocked_in ? b : 1;
    N = c->axes[0].extent;
    R1 = c->raxes[0].extent;
    Ci = R1 * e;
    KH = c->raxes[1].extent;
    KW = c->raxes[2].extent;
    OH = c->axes[2].extent;
    OW = c->axes[3].extent;
    Co = c->axes[1].extent * b;
    H = xl->dims[2];
    W = xl->dims[3];
    if (xl->dims[0] != N || xl->dims[1] != R1 || (blocked_in && (xl->dims[4] != b || c->raxes[3].extent != b)))
        return 1;
    if (!lq_affine(xl->idx[0], &a0) || !lq_affine(xl->idx[1], &a1) || a0.c0 || a1.c0)
        return 1;
    {
        int v0 = c->axes[0].var, v1 = c->raxes[0].var;
        if (!lq_aff_only(&a0, &v0, 1) || (N > 1 && lq_aff_coef(&a0, v0) != 1) || !lq_aff_only(&a1, &v1, 1) ||
            lq_aff_coef(&a1, v1) != 1)
            return 1;
        if (blocked_in) {
            LqAffine a4;
            int v4 = c->raxes[3].var;
            if (!lq_affine(xl->idx[4], &a4) || a4.c0 || !lq_aff_only(&a4, &v4, 1) || lq_aff_coef(&a4, v4) != 1)
                return 1;
        }
    }
    if (conv_window(L, c, xl, cond, H, W, s, d, lo, hi) || (blocked_in && d[1] != 1))
        return 1;
    /* weights: affine in (mb, mi) and the reduce axes */
    if (!lq_affine(wl->a, &aw))
        return 1;
    {
        int vars[6], nvars = 2 + c->n_raxes;
        vars[0] = c->axes[1].var;
        vars[1] = c->axes[4].var;
        for (i = 0; i < c->n_raxes; i++)
            vars[2 + i] = c->raxes[i].var;
        if (!lq_aff_only(&aw, vars, nvars))
            return 1;
        for (i = 0; i < 6; i++)
            wco[i] = i < nvars ? lq_aff_coef(&aw, vars[i]) : 0;
    }
    memset(&pl, 0, sizeof pl);
    pl.wbuf = wl->buf;
    pl.nr = 3;
    pl.rext[0] = R1;
    pl.rext[1] = KH;
    pl.rext[2] = KW * e;
    /* a 1x1 window over a whole unpadded plane: positions flattened */
    flat = KH == 1 && KW == 1 && !cond && s[0] == 1 && s[1] == 1 && lo[0] == 0 && lo[1] == 0 && OH == H &&
           OW == W;
    rows = flat ? OH * OW : OW;
    plan_tile(&pl, t, Co, rows);
    {
        /* blocked tiles store whole vectors (no gathered epilogue): rows
         * beyond one vector's lanes, up to the registers and the declared
         * tile, where they divide the row exactly (no padded copy):
         * squeezenet1_1's 128-to-16-channel 1x1 conv over 55x55 in tiles of
         * 25 instead of 13 rows ran in 86 instead of 178 us; over 13x13,
         * 25 rows (7 tiles, a padded copy) were slower than 13 */
        int pmax = (regs_of(t) - pl.V - 2) / pl.V, p;
        int64_t dmax = 0;
        for (i = 0; i < t->n_tiles; i++)
            if (t->tiles[i].axes[0].max > dmax)
                dmax = t->tiles[i].axes[0].max;
        if (dmax > 0 && pmax > dmax)
            pmax = (int)dmax;
        p = pick_rows(rows, pmax);
        if (p > pl.P && rows % p == 0)
            pl.P = p;
    }
    strided_rows(&pl, t, s[1], KW, rows);
    {
        TileKnobs kn = choose_knobs(L, t, TS_CONV_NCHWC, "conv2d_nchwc", conv_desc(L, N, Ci, H, W, Co, KH, KW, s, d, lo, hi),
                                    rows, Co, Ci * KH * KW, pl.P, pl.V, 0, 0);
        plan_set(&pl, &kn);
    }
    if (pl.lanes != b || pl.ncb * pl.VL != Co || pl.P < 1)
        return 1;
    if (pack_nchwc(L, &pl, b, e, wco, aw.c0))
        return 1;
    T = ceil_div(rows, pl.P);
    copy = cond || T * pl.P != rows || lo[0] != 0 || lo[1] != 0;
    if (flat) {
        Hp = 1;
        Wp = copy ? T * pl.P : H * W;
    } else if (copy) {
        Hp = hi[0] - lo[0] + 1;
        Wp = hi[1] - lo[1] + 1;
        if ((T * pl.P - 1) * s[1] + d[1] * (KW - 1) + 1 > Wp)
            Wp = (T * pl.P - 1) * s[1] + d[1] * (KW - 1) + 1;
    } else {
        Hp = H;
        Wp = W;
    }
    xbuf = xl->buf;
    OHx = flat ? 1 : OH;
    conv_blocks(t, &pl, R1, KH * KW * e, OHx, T, &kc, &G);
    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", pl.ncb);
    ogv = lower_itervar(L, "og", ceil_div(OHx, G));
    ohv = lower_itervar(L, "oh", kc < R1 ? G : OHx);
    owv = lower_itervar(L, "ot", T);
    pv = lower_itervar(L, "p", pl.P);
    vv = lower_itervar(L, "v", pl.VL);
    vo = lower_itervar(L, "vo", pl.V);
    vi = lower_itervar(L, "vi", b);
    acc = conv_reduce_vars(L, &pl, R1, kc, G, T, &ogv, &ohv, &owv, rv, &rcbv, &ohe, &r1e, &accb);
    if (copy) {
        src = lower_buf_temp(L, "xpad", DT_FLOAT32, R1 * Hp * Wp * e);
        body = copy_phased(L, src, xbuf, &nv, R1, flat ? 1 : H, (flat ? H * W : W) * e, Hp, 1, Wp * e,
                           flat ? 0 : lo[0], flat ? 0 : lo[1] * e, t->vector_bits / 32, NULL, 0);
    } else {
        src = xbuf;
        body = NULL;
    }
    q = ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P)), ex_var(L, &pv));
    {
        /* ((plane*Hp + row)*Wp + q*s1)*e + r3 (blocked) or + r3*d1 (NCHW) */
        Expr *row = ex_add(L, ex_mul(L, ohe, ex_int(L, s[0])), ex_mul(L, ex_var(L, &rv[1]), ex_int(L, d[0])));
        Expr *plane = r1e, *aidx;
        if (!copy)
            plane = ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, R1)), plane);
        if (flat)
            row = ex_int(L, 0);
        aidx = ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, plane, ex_int(L, Hp)), row), ex_int(L, Wp)),
                                ex_mul(L, q, ex_int(L, s[1]))),
                      ex_int(L, e));
        aidx = ex_add(L, aidx, ex_mul(L, ex_var(L, &rv[2]), ex_int(L, blocked_in ? 1 : d[1])));
        tile = update_nest(L, t, &pl, acc, rv, &pv, &vv, src, aidx, ex_var(L, &cbv), r1e, accb);
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    {
        Expr *mb = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, pl.V)), ex_var(L, &vo));
        Expr *aix = ex_add(L, accb, ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, pl.VL)),
                                                   ex_mul(L, ex_var(L, &vo), ex_int(L, b))),
                                           ex_var(L, &vi)));
        Expr *accv = ex_load(L, acc, aix), *iv, *index;
        map[c->axes[0].var] = ex_var(L, &nv);
        map[c->axes[1].var] = mb;
        map[c->axes[4].var] = ex_var(L, &vi);
        /* init may read per-position data: clamp the rows past the end */
        if (flat) {
            Expr *qq = T * pl.P != rows ? ex_binary(L, BIN_MIN, q, ex_int(L, rows - 1)) : q;
            map[c->axes[2].var] = ex_binary(L, BIN_DIV, qq, ex_int(L, OW));
            map[c->axes[3].var] = ex_binary(L, BIN_MOD, qq, ex_int(L, OW));
        } else {
            map[c->axes[2].var] = ohe;
            map[c->axes[3].var] = T * pl.P != OW ? ex_binary(L, BIN_MIN, q, ex_int(L, OW - 1)) : q;
        }
        iv = c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
        init = st_store(L, acc, aix, iv);
        init = st_for(L, &vi, init);
        init->for_kind = FOR_VECTORIZE;
        init = st_for(L, &vo, init);
        init = st_for(L, &pv, init);
        if (flat && flat_ok(L, c->post, c->axes[2].var, c->axes[3].var, OW) &&
            flat_ok(L, c->out_index, c->axes[2].var, c->axes[3].var, OW)) {
            map[c->axes[2].var] = ex_int(L, 0);
            map[c->axes[3].var] = q;
        } else if (flat) {
            map[c->axes[2].var] = ex_binary(L, BIN_DIV, q, ex_int(L, OW));
            map[c->axes[3].var] = ex_binary(L, BIN_MOD, q, ex_int(L, OW));
        } else {
            map[c->axes[3].var] = q;
        }
        index = lower_out_index(L, c);
        /* for each channel block of the tile, P contiguous vectors */
        epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), c->post ? lq_subst(L, c->post, map, accv) : accv);
        epi = st_for(L, &vi, epi);
        epi->for_kind = FOR_VECTORIZE;
        if (T * pl.P != rows)
            epi = st_if(L, ex_lt(L, q, ex_int(L, rows)), epi);
        epi = st_for(L, &pv, epi);
        epi = st_for(L, &vo, epi);
    }
    conv_tile_nest(L, &pl, acc, body, init, tile, epi, kc < R1, ohe, OHx, G, &nv, &cbv, &ogv, &ohv, &owv, &rcbv);
    return 0;
}

/* Whether a matmul's tiles accumulate straight into its output: the
 * output rows are whole tiles of columns (N a multiple of VL) at a
 * row-major offset m*N + n, no buffer of the kernel shares memory with
 * another (the partial sums in the output would overwrite an input), init
 * and post do not read the output, and the target's tile printer takes a
 * tile whose rows lie N apart (the declared intrinsic, emit_tile.c; not
 * the portable target's plain loops, emit_ctile.c, which tile a local
 * array). Then no accumulator array, no copy out of it, and a partial
 * last row tile of its own height instead of clamped rows. */
static int mm_direct(Lower *L, const Target *t, const Compute *c, int mvar, int nvar, int64_t Nn, int VL)
{
    Kernel *k = L->k;
    Expr **map;
    LqAffine o;
    int i, vars[2];
    if (!strcmp(t->isa, "c") || Nn % VL)
        return 0;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].inplace)
            return 0;
    if (lq_loads(c->init, c->out_buf) || lq_loads(c->post, c->out_buf))
        return 0;
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    for (i = 0; i + 2 < c->n_axes; i++)
        map[c->axes[i].var] = ex_int(L, 0);
    if (!lq_affine(lq_subst(L, lower_out_index(L, c), map, NULL), &o))
        return 0;
    vars[0] = mvar;
    vars[1] = nvar;
    return lq_aff_only(&o, vars, 2) && lq_aff_coef(&o, nvar) == 1 && lq_aff_coef(&o, mvar) == Nn;
}

/* The three phases of the row tile mte (rows mte*P + p for p < R) and
 * column block cb, accumulating in buffer ob: the output itself (direct,
 * all R rows exist) or the local array acc (R = P, rows and columns past
 * the end computed from clamped indices and not stored):
 *   init: for p: for v: ob[o] = init
 *   tile: for rk [tensorized]: for p: for v: ob[o] += ap[..] * wp[..]
 *   epi:  for p: for v: out[..] = post(ob[o])   (direct: in place, and
 *         none without a post)
 * With a blocked reduction (kbv), rk runs over block kb and acc holds the
 * G tiles of a row block side by side (tile mi at mi*P*VL). */
static void mm_phases(Lower *L, const Compute *c, const Plan *pl, int ob, int64_t R, int64_t M, int64_t Nn,
                      int64_t K, int64_t kc, int mvar, int nvar, Expr *mte, const IterVar *cbv,
                      const IterVar *vv, const IterVar *rv, const IterVar *kbv, const IterVar *miv, int apbuf,
                      Stmt **init, Stmt **tile, Stmt **epi)
{
    Kernel *k = L->k;
    int direct = ob == c->out_buf, i;
    IterVar pv = lower_itervar(L, "p", R);
    Expr **map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    Expr *n = ex_add(L, ex_mul(L, ex_var(L, cbv), ex_int(L, pl->VL)), ex_var(L, vv));
    Expr *m = ex_add(L, ex_mul(L, mte, ex_int(L, pl->P)), ex_var(L, &pv));
    Expr *kk = rv[1].extent > 1 ? ex_add(L, ex_mul(L, ex_var(L, &rv[0]), ex_int(L, rv[1].extent)), ex_var(L, &rv[1]))
                                : ex_var(L, &rv[0]);
    Expr *aidx;
    Expr *widx, *index = lower_out_index(L, c), *oix, *iv, *accv;
    Stmt *st;
    if (kbv)
        kk = ex_add(L, ex_mul(L, ex_var(L, kbv), ex_int(L, kc)), kk);
    aidx = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, mte, ex_int(L, K)), kk), ex_int(L, pl->P)), ex_var(L, &pv));
    widx = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, cbv), ex_int(L, K)), kk), ex_int(L, pl->VL)),
                  ex_var(L, vv));
    for (i = 0; i + 2 < c->n_axes; i++)
        map[c->axes[i].var] = ex_int(L, 0);
    if (direct) {
        map[nvar] = n;
        map[mvar] = m;
        oix = lq_subst(L, index, map, NULL);
    } else {
        Expr *base = kbv ? ex_mul(L, ex_var(L, miv), ex_int(L, (int64_t)pl->P * pl->VL)) : ex_int(L, 0);
        oix = ex_add(L, base, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, pl->VL)), ex_var(L, vv)));
        map[nvar] = ex_binary(L, BIN_MIN, n, ex_int(L, Nn - 1));
        map[mvar] = ex_binary(L, BIN_MIN, m, ex_int(L, M - 1));
    }
    iv = c->init ? lq_subst(L, ex_cast(L, DT_FLOAT32, c->init), map, NULL) : ex_float(L, DT_FLOAT32, 0.0);
    *init = st_for(L, &pv, st_for(L, vv, st_store(L, ob, oix, iv)));
    *tile = mk_tile(L, ob, oix, ex_load(L, apbuf, aidx), ex_load(L, pl->pbuf, widx), rv, &pv, vv);
    /* B's column panel streams from L2 once per row tile */
    (*tile)->prefetch = TILE_PREFETCH_STEPS * pl->VL;
    if (rv[1].extent > 1)
        (*tile)->body[0]->for_kind = FOR_UNROLL;
    accv = ex_load(L, ob, oix);
    if (direct) {
        *epi = c->post ? st_for(L, &pv, st_for(L, vv, st_store(L, ob, oix, lq_subst(L, c->post, map, accv)))) : NULL;
        return;
    }
    {
        Expr *guard = ex_const_int(L, DT_BOOL, 1);
        if (Nn % pl->VL)
            guard = ex_lt(L, n, ex_int(L, Nn));
        if (ceil_div(M, pl->P) * pl->P != M)
            guard = ex_and(L, guard, ex_lt(L, m, ex_int(L, M)));
        map[nvar] = n;
        map[mvar] = m;
        st = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), c->post ? lq_subst(L, c->post, map, accv) : accv);
        *epi = st_for(L, &pv, st_for(L, vv, st_if(L, guard, st)));
    }
}

/* Columns of A per step of the row-panel copy. */
#define PACK_KB 16

/* The row-panel copy (stage `stage`, axes mt, k, p of pk) is moved into
 * the row block loop mb by compute_at, so that each block copies the
 * panels of its own G tiles (G*K*P floats, in L2 while the tiles read
 * them) instead of all of A before the first tile; then its k loop is
 * split by PACK_KB and the nest reordered to mt, kb, p, k, so that both
 * the P source rows' blocks (one cache line each) and the block of the
 * panel being written stay in L1, rather than for k: for p (P rows a
 * matrix stride apart per column). The block's copy stays serial (about
 * 2% of the time): a parallel region of its own per block, next to the
 * tiles' one, doubled the barriers, which cost whole time slices when the
 * machine is oversubscribed. A refusal of compute_at leaves the copy whole
 * before the tiles, its mt loop parallel. */
static void mm_pack_schedule(Lower *L, int stage, const IterVar *pk, int mb)
{
    Sched s;
    int ko, ki, order[4], n = 0, i, cand[4], moved;
    sched_init(&s, L);
    moved = !sched_compute_at(&s, stage, mb);
    if (pk[1].extent % PACK_KB == 0 && pk[1].extent > PACK_KB && !sched_split(&s, pk[1].var, PACK_KB, &ko, &ki)) {
        cand[0] = pk[0].var;
        cand[1] = ko;
        cand[2] = pk[2].var;
        cand[3] = ki;
        for (i = 0; i < 4; i++)
            if (sched_extent(L->k->body, cand[i]) >= 0)
                order[n++] = cand[i];
        if (n > 1)
            sched_reorder(&s, n, order);
    }
    if (!moved && sched_extent(L->k->body, pk[0].var) > 1)
        sched_parallel(&s, pk[0].var);
}

/* MatMul / Gemm: out[.., m, n] = post(init + sum_k A(m, k) * B(k, n)) with B
 * constant; leading output axes of extent 1. */
/* A matmul's default blocking: row tiles in groups of G whose panels
 * (G*P*K floats) stay in L2 while every column panel passes over them;
 * with row groups, the reduction cut into blocks of kc (a divisor of K
 * near 256) so that the column panel's block (kc*VL floats) stays in L1
 * while the group's tiles pass over it (the group's accumulator tiles then
 * live side by side in acc between blocks). Tiles that accumulate in the
 * output (direct) keep the whole reduction while the column panel (K*VL
 * floats) fits in a quarter of the L2: each block would reload and store
 * the tile from output rows a row stride apart (at a multiple of 4 KiB
 * all in the same L1 sets), which cost more than streaming the panel from
 * L2 (gemm1024 on AVX-512: ~3% less time with kc = K than with 256). */
static void mm_blocking(const Target *t, int P, int64_t K, int64_t T, int VL, int direct, int64_t *G,
                        int64_t *kc)
{
    *G = l2_budget(t) / ((int64_t)P * K * 4);
    if (*G < 1)
        *G = 1;
    if (*G > T)
        *G = T;
    *kc = K;
    if (direct && K * VL * 4 <= l2_budget(t) / 2)
        return;
    if (*G < T && K >= 512) {
        int64_t d;
        for (d = 256; d >= 128; d--)
            if (K % d == 0) {
                *kc = d;
                break;
            }
    }
}

static int try_matmul(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *al, *bl;
    LqAffine aa, ab;
    Plan pl;
    int i, na = c->n_axes, mvar, nvar, kvar, vars[2], acc, apbuf, direct;
    int64_t M, Nn, K, T, cm, ck, nmb;
    IterVar cbv, vv, rv[3], mbv, miv, kbv, pk[3];
    Expr *mte;
    int64_t G, kc;
    Stmt *pack, *seq, *loops, *decl, *body;
    if (na < 2 || c->n_raxes != 1)
        return 1;
    for (i = 0; i + 2 < na; i++)
        if (c->axes[i].extent != 1)
            return 1;
    if (const_load(L, c->body->b)) {
        al = c->body->a;
        bl = c->body->b;
    } else if (const_load(L, c->body->a)) {
        al = c->body->b;
        bl = c->body->a;
    } else {
        return 1;
    }
    if (!f32_load(k, al) || al->buf == c->out_buf)
        return 1;
    mvar = c->axes[na - 2].var;
    nvar = c->axes[na - 1].var;
    kvar = c->raxes[0].var;
    M = c->axes[na - 2].extent;
    Nn = c->axes[na - 1].extent;
    K = c->raxes[0].extent;
    if (!lq_affine(al->a, &aa) || !lq_affine(bl->a, &ab))
        return 1;
    /* extent-1 axes are 0: drop their coefficients */
    for (i = 0; i + 2 < na; i++) {
        lq_aff_add(&aa, c->axes[i].var, -lq_aff_coef(&aa, c->axes[i].var));
        lq_aff_add(&ab, c->axes[i].var, -lq_aff_coef(&ab, c->axes[i].var));
    }
    vars[0] = mvar;
    vars[1] = kvar;
    if (!lq_aff_only(&aa, vars, 2))
        return 1;
    vars[0] = nvar;
    if (!lq_aff_only(&ab, vars, 2))
        return 1;
    cm = lq_aff_coef(&aa, mvar);
    ck = lq_aff_coef(&aa, kvar);
    memset(&pl, 0, sizeof pl);
    pl.wbuf = bl->buf;
    pl.wco = lq_aff_coef(&ab, nvar);
    pl.wr[0] = lq_aff_coef(&ab, kvar);
    pl.wc0 = ab.c0;
    pl.nr = 1;
    pl.rext[0] = K;
    pl.rext[1] = 1;
    pl.rext[2] = 1;
    plan_tile(&pl, t, Nn, M);
    T = ceil_div(M, pl.P);
    mm_blocking(t, pl.P, K, T, pl.VL, mm_direct(L, t, c, mvar, nvar, Nn, pl.VL), &G, &kc);
    {
        TileKnobs kn = choose_knobs(L, t, TS_MATMUL, "matmul",
                                    arena_printf(L->arena, "m%lld,k%lld,n%lld", (long long)M, (long long)K,
                                                 (long long)Nn),
                                    M, Nn, K, pl.P, pl.V, G, kc);
        plan_set(&pl, &kn);
        G = kn.G;
        kc = kn.kc;
    }
    if (pack_weights(L, &pl))
        return 1;
    T = ceil_div(M, pl.P);
    if (G > T)
        G = T;
    nmb = ceil_div(T, G);
    direct = mm_direct(L, t, c, mvar, nvar, Nn, pl.VL);
    cbv = lower_itervar(L, "cb", pl.ncb);
    vv = lower_itervar(L, "v", pl.VL);
    mbv = lower_itervar(L, "mb", nmb);
    miv = lower_itervar(L, "mi", G);
    mte = ex_add(L, ex_mul(L, ex_var(L, &mbv), ex_int(L, G)), ex_var(L, &miv));
    /* tiles accumulating in the output take the reduction two steps per
     * iteration (an unrolled inner reduce loop of 2, printed without the
     * declared loop prefix, emit_tile.c): half the loop control per FMA */
    rv[0] = lower_itervar(L, "rk", direct && kc % 2 == 0 ? kc / 2 : kc);
    rv[1] = lower_itervar(L, "ru", direct && kc % 2 == 0 ? 2 : 1);
    rv[2] = lower_itervar(L, "ru", 1);
    if (kc < K)
        kbv = lower_itervar(L, "kb", K / kc);
    acc = -1;
    if (!direct) {
        acc = lower_buf_temp(L, "acc", DT_FLOAT32, (kc < K ? G : 1) * (int64_t)pl.P * pl.VL);
        k->bufs[acc].scope = BUF_LOCAL;
        /* the init loop writes every tile the tile and epilogue read
         * (blocked: the G tiles of the rows that exist, under the same
         * guard) */
        k->bufs[acc].no_init = 1;
    }
    /* the row-panel copy, a stage of its own: ap[mt][k][p] = A(min(mt*P +
     * p, M-1), k) over the tiles of whole row blocks (nmb*G), which
     * compute_at below moves into the row block loop */
    {
        int64_t pd[3];
        Expr *pidx[3], *m, *aoff;
        Compute *ps;
        pd[0] = nmb * G;
        pd[1] = K;
        pd[2] = pl.P;
        apbuf = lower_buf_temp(L, "apack", DT_FLOAT32, pd[0] * K * pl.P);
        ps = lower_stage(L, "apack", apbuf, 3, pd);
        c = &k->stages[0];
        for (i = 0; i < 3; i++) {
            pk[i] = ps->axes[i];
            pidx[i] = ex_var(L, &pk[i]);
            pk[i].name = arena_printf(L->arena, "%s%d", i == 0 ? "mt" : i == 1 ? "k" : "p", pk[i].var);
            k->var_names[pk[i].var] = pk[i].name;
        }
        m = ex_binary(L, BIN_MIN, ex_add(L, ex_mul(L, pidx[0], ex_int(L, pl.P)), pidx[2]), ex_int(L, M - 1));
        aoff = ex_add(L, ex_add(L, ex_mul(L, m, ex_int(L, cm)), ex_mul(L, pidx[1], ex_int(L, ck))),
                      ex_int(L, aa.c0));
        ps->rop = RED_NONE;
        ps->body = ex_load(L, al->buf, aoff);
        pack = st_store(L, apbuf, ex_offset(L, 3, pd, pidx), ps->body);
        for (i = 2; i >= 0; i--)
            pack = st_for(L, &pk[i], pack);
    }
    /* the row tiles: all of P rows on the accumulator path (rows past M
     * computed from clamped copies, not stored); accumulating into the
     * output, M / P full tiles and one of the M % P rows left */
    {
        Stmt *ph[3][2];
        int nset = direct && M % pl.P ? 2 : 1, rs_, j;
        int64_t rows[2];
        Expr *cond[2];
        rows[0] = pl.P;
        rows[1] = M % pl.P;
        cond[0] = direct ? ex_lt(L, mte, ex_int(L, M / pl.P)) : ex_lt(L, mte, ex_int(L, T));
        cond[1] = ex_binary(L, BIN_EQ, mte, ex_int(L, M / pl.P));
        if (nmb * G == (direct ? M / pl.P : T))
            cond[0] = ex_const_int(L, DT_BOOL, 1);
        for (rs_ = 0; rs_ < nset; rs_++)
            mm_phases(L, c, &pl, direct ? c->out_buf : acc, rows[rs_], M, Nn, K, kc, mvar, nvar, mte,
                      &cbv, &vv, rv, kc < K ? &kbv : NULL, &miv, apbuf, ph[0] + rs_, ph[1] + rs_,
                      ph[2] + rs_);
        /* each phase: the guarded copies for the row sets (without
         * blocks, each row set's phases together: init next to its tile,
         * which the declared tile then starts from, emit_tile_init_loop) */
        for (rs_ = 0; rs_ < nset && kc == K; rs_++) {
            Stmt *q = st_seq(L, ph[2][rs_] ? 3 : 2);
            for (i = 0; i < q->n_body; i++)
                q->body[i] = ph[i][rs_];
            ph[0][rs_] = q;
            ph[1][rs_] = ph[2][rs_] = NULL;
        }
        for (j = 0; j < 3; j++) {
            Stmt *q = st_seq(L, nset);
            for (rs_ = 0; rs_ < nset; rs_++)
                q->body[rs_] = ph[j][rs_] ? st_if(L, cond[rs_], ph[j][rs_]) : NULL;
            ph[j][0] = q->body[0] ? (nset == 1 ? q->body[0] : q) : NULL; /* no epilogue: none */
        }
        if (kc < K) {
            /* for mb: for cb: { for mi: init; for kb: for mi: tile;
             * for mi: epilogue } */
            IterVar mis[3];
            seq = st_seq(L, ph[2][0] ? 3 : 2);
            for (j = 0; j < seq->n_body; j++) {
                Expr **mp = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *mp);
                mis[j] = j == 1 ? miv : lower_itervar(L, "mi", G);
                mp[miv.var] = ex_var(L, &mis[j]);
                seq->body[j] = st_for(L, &mis[j], j == 1 ? ph[j][0] : lq_stmt_subst(L, ph[j][0], mp));
                if (j == 1)
                    seq->body[j] = st_for(L, &kbv, seq->body[j]);
            }
            body = seq;
        } else {
            /* for mb: for cb: for mi: { init; tile; epilogue } */
            body = ph[0][0];
        }
        if (!direct) {
            decl = st_decl(L, acc, body);
            body = decl;
        }
        if (kc < K) {
            loops = st_for(L, &cbv, body);
        } else {
            loops = st_for(L, &miv, body);
            if (pl.ncb == 1 && G > 1)
                loops->for_kind = FOR_PARALLEL;
            loops = st_for(L, &cbv, loops);
        }
        if (pl.ncb > 1)
            loops->for_kind = FOR_PARALLEL;
        loops = st_for(L, &mbv, loops);
    }
    seq = st_seq(L, 2);
    seq->body[0] = pack;
    seq->body[1] = loops;
    k->body = seq;
    mm_pack_schedule(L, k->n_stages - 1, pk, mbv.var);
    if (!lq_stmt_uses_buf(k->body, pl.wbuf))
        k->bufs[pl.wbuf].scope = BUF_UNUSED;
    return 0;
}

/* Kernels with fewer multiply-accumulates run their tile loops serially
 * even when built with OpenMP. A depthwise kernel does one FMA per loaded
 * vector and copies its input: its channels are worth a parallel region
 * from 16 times fewer (mobilenet_v2's 14x14 and 7x7 ones, 0.25-1.4 M,
 * take 30-60 us on one thread). */
#define PARALLEL_MIN_MACS ((int64_t)1 << 21)
#define DW_PARALLEL_MIN_MACS (PARALLEL_MIN_MACS / 16)

static void serial_all(Stmt *s)
{
    int i;
    if (!s)
        return;
    if (s->kind == ST_FOR && s->for_kind == FOR_PARALLEL)
        s->for_kind = FOR_SERIAL;
    for (i = 0; i < s->n_body; i++)
        serial_all(s->body[i]);
}

/* ---- sums over trailing contiguous axes (GlobalAveragePool, ReduceMean) ---- */

/* Whether every use in e of the reduce axes r[0..n) is inside a load index
 * affine in them with coef(r[n-1]) == 1 and coef(r[i]) == extent(r[i+1]) *
 * coef(r[i+1]): then r[n-1] := q (the flattened reduce position) and the
 * others := 0 give the same offsets, contiguous in q. */
static int sum_flat_ok(Lower *L, const Expr *e, const IterVar *r, int n)
{
    int i;
    if (!e)
        return 1;
    if (e->kind == EX_VAR) {
        for (i = 0; i < n; i++)
            if (e->var == r[i].var)
                return 0;
        return 1;
    }
    if (e->kind == EX_LOAD) {
        LqAffine a;
        int uses = 0;
        for (i = 0; i < n; i++)
            uses |= lq_uses_var(e->a, r[i].var);
        if (!uses)
            return 1;
        if (!lq_affine(e->a, &a) || lq_aff_coef(&a, r[n - 1].var) != 1)
            return 0;
        for (i = 0; i + 1 < n; i++)
            if (lq_aff_coef(&a, r[i].var) != r[i + 1].extent * lq_aff_coef(&a, r[i + 1].var))
                return 0;
        return 1;
    }
    if (e->nidx)
        return 0;
    return sum_flat_ok(L, e->a, r, n) && sum_flat_ok(L, e->b, r, n) && sum_flat_ok(L, e->c, r, n);
}

#define SUM_ACCS 4 /* vector accumulators: an add's latency over its throughput */

/* A float32 sum whose reduce axes are the innermost, contiguous axes of
 * what it loads (a global average pool: out[n][c] = sum over the plane).
 * The generic template puts the vectors across the output channels, so
 * each lane reads a different plane (a gather per step); here the vectors
 * run along the flattened plane: SUM_ACCS vector accumulators of partial
 * sums, a masked last vector, then their lanes added into the total, which
 * starts from init, and post applied to it. The sum is reassociated (rtol
 * well inside 1e-4 for the planes of a CNN), not bit-identical. */
static int plane_sum(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, i, acc, tot, m = 0;
    int64_t R = 1, W = (int64_t)SUM_ACCS * lanes, nb, rest, j;
    IterVar qo, vi, fold;
    Expr **map, *q, *index;
    Stmt *seq, *st, *body, *decl, *dt, *tseq;
    if (c->rop != RED_SUM || c->n_raxes < 1 || !c->body || c->body->dtype != DT_FLOAT32 ||
        k->bufs[c->out_buf].dtype != DT_FLOAT32 || (c->post && c->post->dtype != DT_FLOAT32) ||
        (c->init && c->init->dtype != DT_FLOAT32) || !sum_flat_ok(L, c->body, c->raxes, c->n_raxes))
        return 1;
    for (i = 0; i < c->n_raxes; i++)
        R *= c->raxes[i].extent;
    if (R < W)
        return 1;
    for (i = 0; i < c->n_raxes; i++)
        if (lq_uses_var(c->init, c->raxes[i].var) || lq_uses_var(c->post, c->raxes[i].var))
            return 1;
    nb = R / W;
    rest = R % W;
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, W);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1; /* the zero loop below writes all of it */
    tot = lower_buf_temp(L, "tot", DT_FLOAT32, 1);
    k->bufs[tot].scope = BUF_LOCAL;
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    for (i = 0; i + 1 < c->n_raxes; i++)
        map[c->raxes[i].var] = ex_int(L, 0);
    qo = lower_itervar(L, "qo", nb);
    seq = st_seq(L, 2 * SUM_ACCS + 2 + (int)(rest / lanes) + 1 + 16);
    /* acc = 0 */
    for (j = 0; j < SUM_ACCS; j++) {
        vi = lower_itervar(L, "vi", lanes);
        st = st_store(L, acc, ex_add(L, ex_int(L, j * lanes), ex_var(L, &vi)), ex_float(L, DT_FLOAT32, 0.0));
        st = st_for(L, &vi, st);
        st->for_kind = FOR_VECTORIZE;
        seq->body[m++] = st;
    }
    /* for qo: acc[j*lanes + vi] += body(q = qo*W + j*lanes + vi), j unrolled */
    body = st_seq(L, SUM_ACCS);
    for (j = 0; j < SUM_ACCS; j++) {
        Expr *ai;
        vi = lower_itervar(L, "vi", lanes);
        ai = ex_add(L, ex_int(L, j * lanes), ex_var(L, &vi));
        q = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &qo), ex_int(L, W)), ex_int(L, j * lanes)), ex_var(L, &vi));
        map[c->raxes[c->n_raxes - 1].var] = q;
        st = st_store(L, acc, ai, ex_add(L, ex_load(L, acc, ai), lq_subst(L, c->body, map, NULL)));
        st = st_for(L, &vi, st);
        st->for_kind = FOR_VECTORIZE;
        body->body[j] = st;
    }
    seq->body[m++] = st_for(L, &qo, body);
    /* the rest: whole vectors into the first accumulators, then a masked one */
    for (j = 0; j * lanes < rest; j++) {
        int64_t n = rest - j * lanes < lanes ? rest - j * lanes : lanes;
        Expr *ai;
        vi = lower_itervar(L, "vi", n);
        ai = ex_add(L, ex_int(L, j * lanes), ex_var(L, &vi));
        q = ex_add(L, ex_int(L, nb * W + j * lanes), ex_var(L, &vi));
        map[c->raxes[c->n_raxes - 1].var] = q;
        st = st_store(L, acc, ai, ex_add(L, ex_load(L, acc, ai), lq_subst(L, c->body, map, NULL)));
        st = st_for(L, &vi, st);
        st->for_kind = FOR_VECTORIZE;
        seq->body[m++] = st;
    }
    /* the lanes folded in halves (acc[v] += acc[v + h], a tree of adds
     * instead of a chain of W), then tot = init + acc[0] + acc[1];
     * out = post(tot) */
    for (j = W / 2; j >= 2; j /= 2) {
        fold = lower_itervar(L, "v", j);
        seq->body[m++] = st_for(L, &fold, st_store(L, acc, ex_var(L, &fold),
                                                  ex_add(L, ex_load(L, acc, ex_var(L, &fold)),
                                                         ex_load(L, acc, ex_add(L, ex_var(L, &fold), ex_int(L, j))))));
    }
    tseq = st_seq(L, 2);
    tseq->body[0] = st_store(L, tot, ex_int(L, 0),
                             ex_add(L, c->init ? ex_add(L, ex_cast(L, DT_FLOAT32, c->init), ex_load(L, acc, ex_int(L, 0)))
                                              : ex_load(L, acc, ex_int(L, 0)),
                                    ex_load(L, acc, ex_int(L, 1))));
    index = lower_out_index(L, c);
    {
        Expr *tv = ex_load(L, tot, ex_int(L, 0));
        tseq->body[1] = st_store(L, c->out_buf, index, c->post ? lq_subst(L, c->post, map, tv) : tv);
    }
    dt = st_decl(L, tot, tseq);
    seq->body[m++] = dt;
    seq->n_body = m;
    decl = st_decl(L, acc, seq);
    st = decl;
    for (i = c->n_axes - 1; i >= 0; i--)
        st = st_for(L, &c->axes[i], st);
    k->body = st;
    /* threads take whole sums, split along the first output axis longer
     * than 1, once the input has 64K elements (as elementwise kernels) */
    {
        int64_t outs = 1;
        for (i = 0; i < c->n_axes; i++)
            outs *= c->axes[i].extent;
        while (st && st->kind == ST_FOR && st->extent == 1)
            st = st->body[0];
        if (st && st->kind == ST_FOR && outs * R >= ((int64_t)1 << 16))
            st->for_kind = FOR_PARALLEL;
    }
    return 0;
}

int template_packed(Lower *L, const Target *t)
{
    Compute *c;
    const Expr *b;
    Target portable;
    if (t && !strcmp(t->isa, "c") && t->vector_bits == 0) {
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
    if (!t || !t->fma_tile || t->vector_bits < 256 || !L->g)
        return 1;
    if (L->k->n_stages != 1)
        return 1;
    c = &L->k->stages[0];
    b = c->body;
    if (t->vector_bits >= 512 && !plane_sum(L, t, c))
        return 0;
    if (c->rop != RED_SUM || !b || b->kind != EX_BINARY || b->op != BIN_MUL || b->dtype != DT_FLOAT32 ||
        L->k->bufs[c->out_buf].dtype != DT_FLOAT32)
        return 1;
    if (c->post && c->post->dtype != DT_FLOAT32)
        return 1;
    dw_kernel = 0;
    if (try_conv(L, t, c) && try_conv_nchwc(L, t, c) && try_matmul(L, t, c)) {
        L->k->knobs = NULL; /* no tile of this template, no knobs */
        return 1;
    }
    /* a parallel region costs microseconds: not worth it for small kernels */
    if (L->k->macs < (dw_kernel ? DW_PARALLEL_MIN_MACS : PARALLEL_MIN_MACS))
        serial_all(L->k->body);
    return 0;
}
