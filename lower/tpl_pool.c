/*
 * Max pooling (2-D, float32) on the x86 vector targets, bit-identical to
 * the generic schedule.
 *
 * NCHW: through the depthwise conv's row tiles (tpl_dwconv.c): the stage
 * lower_MaxPool builds, acc = max(acc, x[n][c][oh*s0 - p0 + kh*d0][ow*s1 -
 * p1 + kw*d1]) over the window with the taps outside the image reading
 * -inf (the padding select), matched here, then tiled like a depthwise
 * conv without weights: each channel's plane copied with -inf around it
 * and, for a column stride S > 1, split into S column phases, so that
 * every tap of a tile reads whole contiguous vectors; P output rows x VL
 * columns of accumulators updated tap by tap in the window's order.
 *
 * Blocked (NCHW<b>c with b the target's lanes, lower_maxpool_nchwc): the
 * vector is a channel block at one position; a tile holds P positions of
 * an output row (P independent vector maxima, where the generic schedule
 * had one chain of KH*KW dependent ones per position), and each band of
 * output rows first copies the input rows it reads with their -inf
 * padding.
 *
 * Every output element starts at the stage's init (-inf) and takes
 * tvmrt_maxf(acc, x) for the taps in the same order (emit_intrin.c prints
 * that rule lane-wise, NaN included); a padded tap reads -inf where the
 * select gave -inf.
 *
 * Left to the generic schedule: other ranks, a body that is not a plain
 * load of the input under its padding select (a fused producer), the
 * Indices output (a second stage), the portable `c` target (gcc vectorizes
 * its pooling loops itself).
 */
#include "tpl_packed.h"

#include <math.h>
#include <string.h>

/* Bytes of input rows a blocked pool copies per band of output rows: the
 * band stays in L1 while its tiles read each element up to KH*KW times
 * (bands of more rows copy fewer rows twice: a 3x3 stride-2 window reads
 * 2R + 1 input rows for R output rows). */
static int64_t band_budget(const Target *t)
{
    return tpl_l1_budget(t) / 2;
}

/* Largest band a blocked pool copies into a local array (on the stack):
 * a wider image (rows of more than 5K positions) keeps the generic
 * schedule. */
#define POOL_LOCAL_BYTES ((int64_t)128 << 10)

/* A max pool's tile, the shape of tpl_tile without the weights: for r0,
 * r1, r2: acc[ai] = max(acc[ai], b) for each row p and each of the V
 * vectors of the row (unrolled here, one vector loop of `lanes` each: the
 * emitter prints each as one vector max, and with the tile's P*V
 * accumulators at constant places the C compiler keeps them in
 * registers). ai and b are in terms of pv and vv (VL = V*lanes). With
 * plain, max is (acc > b) ? acc : b, one vector instruction (emit_intrin.c),
 * which is tvmrt_maxf(acc, b) where neither is NaN (tpl_nan_guard). */
Stmt *tpl_max_tile(Lower *L, int acc, Expr *ai, Expr *b, const IterVar *rv, const IterVar *pv, const IterVar *vv,
                   int V, int lanes, int plain)
{
    Expr *a = ex_load(L, acc, ai);
    Stmt *u = st_store(L, acc, ai, plain ? ex_select(L, ex_binary(L, BIN_GT, a, b), a, b) : ex_binary(L, BIN_MAX, a, b));
    Stmt *seq = st_seq(L, (int)pv->extent * V);
    int p, vo, i, n = 0;
    for (p = 0; p < pv->extent; p++)
        for (vo = 0; vo < V; vo++) {
            IterVar vi = lower_itervar(L, "vi", lanes);
            Stmt *s = lq_stmt_subst_var(L, u, pv->var, ex_int(L, p));
            s = lq_stmt_subst_var(L, s, vv->var, ex_add(L, ex_int(L, (int64_t)vo * lanes), ex_var(L, &vi)));
            s = st_for(L, &vi, s);
            s->for_kind = FOR_VECTORIZE;
            seq->body[n++] = s;
        }
    u = seq;
    for (i = 2; i >= 0; i--)
        u = st_for(L, &rv[i], u);
    return u;
}


/* The depthwise conv's tile in the blocked layout: tpl_max_tile's shape
 * with acc[ai] += a * b, a (the weights) a vector along vv too. */
Stmt *tpl_vec_fma_tile(Lower *L, int acc, Expr *ai, Expr *a, Expr *b, const IterVar *rv, const IterVar *pv,
                       const IterVar *vv, int lanes)
{
    Stmt *u = st_store(L, acc, ai, ex_add(L, ex_load(L, acc, ai), ex_mul(L, a, b)));
    Stmt *seq = st_seq(L, (int)pv->extent);
    int p, i;
    for (p = 0; p < pv->extent; p++) {
        IterVar vi = lower_itervar(L, "vi", lanes);
        Stmt *s = lq_stmt_subst_var(L, u, pv->var, ex_int(L, p));
        s = lq_stmt_subst_var(L, s, vv->var, ex_var(L, &vi));
        s = st_for(L, &vi, s);
        s->for_kind = FOR_VECTORIZE;
        seq->body[p] = s;
    }
    u = seq;
    for (i = 2; i >= 0; i--)
        u = st_for(L, &rv[i], u);
    return u;
}

/* Whether e is a float32 -inf constant (the padding select's value). */
static int is_minus_inf(const Expr *e)
{
    return e && e->kind == EX_FLOAT && e->dtype == DT_FLOAT32 && isinf(e->fval) && e->fval < 0;
}

/* Whether index e is exactly axis variable var (or 0 when the axis has one
 * position). */
static int index_is_axis(const Expr *e, const IterVar *axis)
{
    LqAffine a;
    int v = axis->var;
    if (!lq_affine(e, &a) || a.c0 != 0 || !lq_aff_only(&a, &v, 1))
        return 0;
    return axis->extent == 1 || lq_aff_coef(&a, v) == 1;
}

/* Accumulators of the NaN test (tpl_nan_guard): independent vector sums,
 * so that the adds are not one chain of dependent ones. */
#define NAN_SUMS 4

/* sum[lo] + ... + sum[hi - 1] as a balanced tree of scalar adds. */
static Expr *lane_sum(Lower *L, int sum, int lo, int hi)
{
    int mid = (lo + hi) / 2;
    if (hi - lo == 1)
        return ex_load(L, sum, ex_int(L, lo));
    return ex_add(L, lane_sum(L, sum, lo, mid), lane_sum(L, sum, mid, hi));
}

/* if (xp[0 .. n) holds a NaN) exact; else fast: the test adds the n floats
 * up in NAN_SUMS vectors (the last, partial vectors masked), those into
 * one vector tot and its lanes into one float (a tree of adds), which is NaN
 * when one of them is (or when +inf and -inf meet: then the exact path
 * runs, with the same result). The max pool's tiles read only the copy
 * xp, so where it has no NaN, tvmrt_maxf(acc, x) is (acc > x) ? acc : x:
 * one vector max instead of AVX2's three operations (AVX-512's two) per
 * tap. */
Stmt *tpl_nan_guard(Lower *L, int xp, int64_t n, int lanes, Stmt *exact, Stmt *fast)
{
    Kernel *k = L->k;
    int sum = lower_buf_temp(L, "nansum", DT_FLOAT32, (int64_t)NAN_SUMS * lanes), u, m = 0;
    int64_t nb = n / ((int64_t)NAN_SUMS * lanes), rest = n - nb * NAN_SUMS * lanes;
    IterVar iv = lower_itervar(L, "i", nb > 0 ? nb : 1), v;
    Stmt *seq = st_seq(L, 2 * NAN_SUMS + 4), *add = st_seq(L, NAN_SUMS), *st;
    int tot = lower_buf_temp(L, "nantot", DT_FLOAT32, lanes);
    Expr *t0 = ex_load(L, tot, ex_int(L, 0)), *si, *xi, *e;
    k->bufs[sum].scope = BUF_LOCAL;
    k->bufs[sum].no_init = 1; /* the zero vectors below */
    k->bufs[tot].scope = BUF_LOCAL;
    k->bufs[tot].no_init = 1; /* written before it is read */
    for (u = 0; u < NAN_SUMS; u++) {
        v = lower_itervar(L, "v", lanes);
        st = st_for(L, &v, st_store(L, sum, ex_add(L, ex_int(L, (int64_t)u * lanes), ex_var(L, &v)),
                                    ex_float(L, DT_FLOAT32, 0.0)));
        st->for_kind = FOR_VECTORIZE;
        seq->body[m++] = st;
        v = lower_itervar(L, "v", lanes);
        si = ex_add(L, ex_int(L, (int64_t)u * lanes), ex_var(L, &v));
        xi = ex_add(L, ex_mul(L, ex_var(L, &iv), ex_int(L, (int64_t)NAN_SUMS * lanes)), si);
        st = st_for(L, &v, st_store(L, sum, si, ex_add(L, ex_load(L, sum, si), ex_load(L, xp, xi))));
        st->for_kind = FOR_VECTORIZE;
        add->body[u] = st;
    }
    if (nb > 0)
        seq->body[m++] = st_for(L, &iv, add);
    /* the rest: up to NAN_SUMS vectors, the last one partial */
    for (u = 0; (int64_t)u * lanes < rest; u++) {
        v = lower_itervar(L, "v", rest - (int64_t)u * lanes < lanes ? rest - (int64_t)u * lanes : lanes);
        si = ex_add(L, ex_int(L, (int64_t)u * lanes), ex_var(L, &v));
        xi = ex_add(L, ex_int(L, nb * NAN_SUMS * lanes + (int64_t)u * lanes), ex_var(L, &v));
        st = st_for(L, &v, st_store(L, sum, si, ex_add(L, ex_load(L, sum, si), ex_load(L, xp, xi))));
        st->for_kind = FOR_VECTORIZE;
        seq->body[m++] = st;
    }
    /* the sums into one vector, its lanes into tot[0] */
    v = lower_itervar(L, "v", lanes);
    e = ex_load(L, sum, ex_var(L, &v));
    for (u = 1; u < NAN_SUMS; u++)
        e = ex_add(L, e, ex_load(L, sum, ex_add(L, ex_int(L, (int64_t)u * lanes), ex_var(L, &v))));
    st = st_for(L, &v, st_store(L, tot, ex_var(L, &v), e));
    st->for_kind = FOR_VECTORIZE;
    seq->body[m++] = st;
    seq->body[m++] = st_store(L, tot, ex_int(L, 0), lane_sum(L, tot, 0, lanes));
    seq->body[m++] = st_if_else(L, ex_binary(L, BIN_NE, t0, t0), exact, fast);
    seq->n_body = m;
    return st_decl(L, sum, st_decl(L, tot, seq));
}

/* The data load of a max pool stage of n_axes axes and 2 reduce axes:
 * x[n][c]... under an optional padding select whose other value is -inf;
 * NULL when the body is not that. */
static const Expr *pool_load(const Kernel *k, const Compute *c, int n_axes, const Expr **cond)
{
    const Expr *xl = c->body;
    *cond = NULL;
    if (c->rop != RED_MAX || c->n_axes != n_axes || c->n_raxes != 2 || !c->window || c->window->nsp != 2 || !xl ||
        k->bufs[c->out_buf].dtype != DT_FLOAT32)
        return NULL;
    if ((c->post && c->post->dtype != DT_FLOAT32) || (c->init && c->init->dtype != DT_FLOAT32))
        return NULL;
    if (xl->kind == EX_SELECT) {
        if (!is_minus_inf(xl->c))
            return NULL;
        *cond = xl->a;
        xl = xl->b;
    }
    if (!tpl_f32_load(k, xl) || xl->nidx != n_axes || !xl->dims || xl->buf == c->out_buf ||
        xl->dims[0] != c->axes[0].extent || xl->dims[1] != c->axes[1].extent)
        return NULL;
    if (!index_is_axis(xl->idx[0], &c->axes[0]) || !index_is_axis(xl->idx[1], &c->axes[1]))
        return NULL;
    return xl;
}

/* The blocked window tile (see the top of the file), a max pool's (wl
 * NULL) or a depthwise conv's (weights wl, one vector of b channels per
 * tap): for n, channel block cb, band rt of R output rows: copy input
 * rows rt*R*s0 + lo0 ... (Hb of them, Wp positions of b floats, the
 * padding -inf or 0 outside the image) into xp; then for each row r of
 * the band and tile ot of P positions:
 *   acc[p*b + v] = init;
 *   for kh, kw: acc[p*b + v] = max(acc[p*b + v], xp[r*s0 + kh*d0][(ot*P + p)*s1 + kw*d1][v]);
 *           or  acc[p*b + v] += w[cb][kh][kw][v] * xp[...][v];
 *   out[n][cb][rt*R + r][ot*P + p][v] = post(acc[p*b + v]) (positions < OW). */
static int window_nchwc(Lower *L, const Target *t, Compute *c, const Expr *xl, const Expr *cond, const Expr *wl)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, P, acc, xp;
    int64_t s[2], d[2], lo[2], hi[2], N, CB, H, W, OH, OW, KH, KW, b, OT, Wp, R, RT, Hb;
    IterVar nv, cbv, rtv, rv0, otv, pv, vv, vi, rv[3];
    Expr **map, *oh, *ow, *accidx, *iv, *bidx, *widx = NULL;
    Stmt *cp, *init, *epi, *seq, *tiles[2];
    LqAffine a4;
    int v4, plain, conv = wl != NULL;
    if (!xl || c->axes[4].extent != lanes || xl->dims[4] != lanes)
        return 1;
    v4 = c->axes[4].var;
    if (!lq_affine(xl->idx[4], &a4) || a4.c0 != 0 || !lq_aff_only(&a4, &v4, 1) || lq_aff_coef(&a4, v4) != 1)
        return 1;
    if (conv) {
        /* the weight vector: contiguous in the lane, the same at every
         * position and image */
        if (!lq_affine(wl->a, &a4) || lq_aff_coef(&a4, v4) != 1 || lq_uses_var(wl->a, c->axes[0].var) ||
            lq_uses_var(wl->a, c->axes[2].var) || lq_uses_var(wl->a, c->axes[3].var))
            return 1;
    }
    if (tpl_window(L, c, xl, cond, 0, xl->dims[2], xl->dims[3], s, d, lo, hi))
        return 1;
    N = c->axes[0].extent;
    CB = c->axes[1].extent;
    OH = c->axes[2].extent;
    OW = c->axes[3].extent;
    H = xl->dims[2];
    W = xl->dims[3];
    KH = c->raxes[0].extent;
    KW = c->raxes[1].extent;
    b = lanes;
    /* half the registers as accumulators, the rest for the loaded taps
     * (and a conv's weight vector) */
    P = tpl_pick_rows(OW, tpl_regs(t) / 2);
    OT = tpl_ceil_div(OW, P);
    Wp = (OT * P - 1) * s[1] + (KW - 1) * d[1] + 1;
    if (Wp < hi[1] - lo[1] + 1)
        Wp = hi[1] - lo[1] + 1;
    /* the most output rows whose input rows fit the band, evened out over
     * the bands (the last band's rows past OH are skipped) */
    for (R = OH; R > 1; R--)
        if (((R - 1) * s[0] + (KH - 1) * d[0] + 1) * Wp * b * 4 <= band_budget(t))
            break;
    R = tpl_ceil_div(OH, tpl_ceil_div(OH, R));
    RT = tpl_ceil_div(OH, R);
    Hb = (R - 1) * s[0] + (KH - 1) * d[0] + 1;
    if (Hb * Wp * b * 4 > POOL_LOCAL_BYTES)
        return 1;
    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", CB);
    rtv = lower_itervar(L, "rt", RT);
    rv0 = lower_itervar(L, "r", R);
    otv = lower_itervar(L, "ot", OT);
    pv = lower_itervar(L, "p", P);
    vv = lower_itervar(L, "v", b);
    vi = lower_itervar(L, "vi", b);
    rv[0] = lower_itervar(L, "ru", 1);
    rv[1] = lower_itervar(L, "rh", KH);
    rv[2] = lower_itervar(L, "rw", KW);
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, (int64_t)P * b);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1; /* the init loop below writes all of it */
    xp = lower_buf_temp(L, "xpad", DT_FLOAT32, Hb * Wp * b);
    k->bufs[xp].scope = BUF_LOCAL;
    k->bufs[xp].no_init = 1; /* copy_phased_at writes every row and column */
    cp = tpl_copy_phased_at(L, xp, xl->buf, &nv, 1, H, W * b, Hb, 1, Wp * b, lo[0],
                            ex_mul(L, ex_var(L, &rtv), ex_int(L, R * s[0])), lo[1] * b, lanes, ex_var(L, &cbv), CB,
                            conv ? 0.0 : -HUGE_VAL);
    /* xp[(r*s0 + kh*d0)*Wp*b + ((ot*P + p)*s1 + kw*d1)*b + v] */
    bidx = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &rv0), ex_int(L, s[0])),
                                      ex_mul(L, ex_var(L, &rv[1]), ex_int(L, d[0]))),
                            ex_int(L, Wp * b)),
                  ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &otv), ex_int(L, P)),
                                                                ex_var(L, &pv)),
                                                      ex_int(L, s[1])),
                                            ex_mul(L, ex_var(L, &rv[2]), ex_int(L, d[1]))),
                                   ex_int(L, b)),
                         ex_var(L, &vv)));
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    if (conv) {
        map[c->axes[1].var] = ex_var(L, &cbv);
        map[c->axes[4].var] = ex_var(L, &vv);
        map[c->raxes[0].var] = ex_var(L, &rv[1]);
        map[c->raxes[1].var] = ex_var(L, &rv[2]);
        widx = lq_subst(L, wl->a, map, NULL);
        memset(map, 0, (size_t)(k->n_vars + 1) * sizeof *map);
    }
    oh = ex_add(L, ex_mul(L, ex_var(L, &rtv), ex_int(L, R)), ex_var(L, &rv0));
    ow = ex_add(L, ex_mul(L, ex_var(L, &otv), ex_int(L, P)), ex_var(L, &pv));
    accidx = ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, b)), ex_var(L, &vi));
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[1].var] = ex_var(L, &cbv);
    map[c->axes[2].var] = oh;
    map[c->axes[3].var] = OT * P != OW ? ex_binary(L, BIN_MIN, ow, ex_int(L, OW - 1)) : ow;
    map[c->axes[4].var] = ex_var(L, &vi);
    iv = c->init || conv ? tpl_init_value(L, c, map) : ex_float(L, DT_FLOAT32, -HUGE_VAL);
    init = st_store(L, acc, accidx, iv);
    init = st_for(L, &vi, init);
    init->for_kind = FOR_VECTORIZE;
    init = st_for(L, &pv, init);
    map[c->axes[3].var] = ow;
    epi = tpl_store_out(L, c, lower_out_index(L, c), map, ex_load(L, acc, accidx));
    epi = st_for(L, &vi, epi);
    epi->for_kind = FOR_VECTORIZE;
    if (OT * P != OW)
        epi = st_if(L, ex_lt(L, ow, ex_int(L, OW)), epi);
    epi = st_for(L, &pv, epi);
    for (plain = 0; plain < (c->init || conv ? 1 : 2); plain++) {
        Expr *ai = ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, b)), ex_var(L, &vv));
        Stmt *t1 = conv ? tpl_vec_fma_tile(L, acc, ai, ex_load(L, wl->buf, widx), ex_load(L, xp, bidx), rv, &pv, &vv,
                                           lanes)
                        : tpl_max_tile(L, acc, ai, ex_load(L, xp, bidx), rv, &pv, &vv, 1, lanes, plain);
        t1 = st_for(L, &otv, tpl_acc_block(L, acc, lq_stmt_subst_var(L, init, -1, NULL), t1,
                                           lq_stmt_subst_var(L, epi, -1, NULL)));
        if (RT * R != OH)
            t1 = st_if(L, ex_lt(L, oh, ex_int(L, OH)), t1);
        tiles[plain] = st_for(L, &rv0, t1);
    }
    seq = st_seq(L, 2);
    seq->body[0] = cp;
    seq->body[1] = c->init || conv ? tiles[0] : tpl_nan_guard(L, xp, Hb * Wp * b, lanes, tiles[0], tiles[1]);
    seq = st_for(L, &cbv, st_for(L, &rtv, st_decl(L, xp, seq)));
    if (CB > 1)
        seq->for_kind = FOR_PARALLEL;
    k->body = st_for(L, &nv, seq);
    return 0;
}

/* A depthwise conv in the blocked layout (lower/op_layout.c,
 * dwconv_nchwc): x[n][cb][ih][iw][v] (under the zero padding select) times
 * the constant w[cb][0][kh][kw][v], summed over the window. */
int tpl_dwconv_nchwc(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *xl, *wl, *cond;
    if (t->family->portable || c->n_axes != 5 || c->n_raxes != 2 || !c->window || c->window->nsp != 2 ||
        c->rop != RED_SUM || !c->body || c->body->kind != EX_BINARY || c->body->op != BIN_MUL ||
        (c->init && c->init->dtype != DT_FLOAT32) || tpl_operands(L, c, &xl, &wl, &cond))
        return 1;
    if (!tpl_f32_load(k, xl) || !tpl_f32_load(k, wl) || xl->nidx != 5 || !xl->dims || xl->buf == c->out_buf ||
        xl->dims[0] != c->axes[0].extent || xl->dims[1] != c->axes[1].extent ||
        !index_is_axis(xl->idx[0], &c->axes[0]) || !index_is_axis(xl->idx[1], &c->axes[1]))
        return 1;
    return window_nchwc(L, t, c, xl, cond, wl);
}

int tpl_maxpool(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *xl, *cond;
    int64_t s[2], d[2], lo[2], hi[2];
    Window w;
    if (t->family->portable || t->vector_bits < 256)
        return 1;
    /* AVX-512's generic pooling loads a stride-2 window column as two
     * vectors and a permute and takes the NaN rule in two operations; the
     * copies cost more there than they save (squeezenet1_1's pools 1.35x
     * the time, googlenet's stride-2 ones 1.3-1.8x) */
    if (t->vector_bits >= 512 && c->window && (c->window->strides[0] > 1 || c->window->strides[1] > 1))
        return 1;
    if (c->n_axes == 5) {
        xl = pool_load(k, c, 5, &cond);
        return window_nchwc(L, t, c, xl, cond, NULL);
    }
    xl = pool_load(k, c, 4, &cond);
    if (!xl || tpl_window(L, c, xl, cond, 0, xl->dims[2], xl->dims[3], s, d, lo, hi))
        return 1;
    /* rows shorter than half a vector: most lanes would be computed for
     * nothing (googlenet's 7x7 pools with AVX-512: 1.4x the time) */
    if (c->axes[3].extent * 2 < t->vector_bits / 32)
        return 1;
    w = tpl_window_make(c->axes[0].extent, c->axes[1].extent, xl->dims[2], xl->dims[3], c->axes[2].extent,
                        c->axes[3].extent, c->raxes[0].extent, c->raxes[1].extent, s, d, lo, hi);
    return tpl_conv_depthwise(L, t, c, NULL, xl->buf, &w);
}
