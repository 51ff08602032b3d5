/*
 * Blocked-layout convolution tiles of the packed-panel template
 * (tpl_packed.c): output NCHW<b>c, input NCHW or NCHW<b>c (lower/op_layout.c),
 * b the target's lanes. Window matching, reduction blocking and the loop
 * nest are the dense conv's (tpl_conv.c); what differs is the tile's
 * columns (whole channel blocks) and the weight packing (tpl_pack_panels).
 */
#include "tpl_packed.h"

#include <string.h>

/* ---- blocked convolution, NCHW<b>c (lower/op_layout.c) ----
 *
 * y[n][mb][oh][ow][mi] = post(init + sum x(..) * w[mb*b + mi][ci][kh][kw])
 * with x NCHW (reduce axes c, kh, kw) or blocked [N][C/b][H][W][b] (reduce
 * axes cb, kh, kw, ci; b = the target's lanes). The tile is P positions of
 * one output row x VL = V*b output channels, as in tpl_conv, but its
 * columns are V whole channel blocks, so the epilogue stores V contiguous
 * runs of P*b floats (one vector per position and block) instead of
 * scattering a transposed tile. The input is viewed as R1 planes (C, or
 * C/b blocks) of H rows of W*e floats (e = 1 NCHW, e = b blocked): the
 * zero-padded copy is copy_phased's with columns of e floats, and a
 * blocked input's (kw, ci) reduce pair is one reduce loop r3 = kw*b + ci
 * (contiguous in the copy when the column dilation is 1). Weights are
 * packed at compile time into wp[cbt][r1][kh][r3][VL]. A grouped conv
 * (groups of whole blocks, lower/op_layout.c) is tiled per group as in
 * tpl_conv: the plan is one group's, its panels [g][cb]..., the cb loop
 * over all groups' blocks (the output block is still cb*V + vo), the
 * tiles reading the group's R1 input planes. */

/* The subsampled copy of a strided 1x1 conv's blocked input (image n):
 * xs[((ci*OH + oh)*OW + ow)*e + l] = x[n][ci][oh*s0][ow*s1][l], whole
 * vectors of e lanes, so that the conv runs over the flattened output plane
 * as an unstrided one. */
static Stmt *subsample_copy(Lower *L, int xs, int x, const IterVar *nv, int64_t planes, int64_t H, int64_t W,
                            int64_t OH, int64_t OW, const int64_t *s, int64_t e)
{
    IterVar cv = lower_itervar(L, "ci", planes), hv = lower_itervar(L, "ih", OH), wv = lower_itervar(L, "iw", OW),
            lv = lower_itervar(L, "il", e);
    Expr *si, *di;
    Stmt *st;
    si = ex_add(L, ex_mul(L, ex_var(L, nv), ex_int(L, planes)), ex_var(L, &cv));
    si = ex_add(L, ex_mul(L, si, ex_int(L, H)), ex_mul(L, ex_var(L, &hv), ex_int(L, s[0])));
    si = ex_add(L, ex_mul(L, si, ex_int(L, W)), ex_mul(L, ex_var(L, &wv), ex_int(L, s[1])));
    si = ex_add(L, ex_mul(L, si, ex_int(L, e)), ex_var(L, &lv));
    di = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &cv), ex_int(L, OH)), ex_var(L, &hv)), ex_int(L, OW)),
                ex_var(L, &wv));
    di = ex_add(L, ex_mul(L, di, ex_int(L, e)), ex_var(L, &lv));
    st = st_store(L, xs, di, ex_load(L, x, si));
    st = st_for(L, &lv, st);
    st->for_kind = FOR_VECTORIZE;
    return st_for(L, &cv, st_for(L, &hv, st_for(L, &wv, st)));
}

/* Output blocks of an odd count (squeezenet1_1's 1000 channels, 125
 * blocks) allow only one-block tiles if every tile is whole; two-block
 * tiles whose last one is ragged (half its FMAs wasted, 1/ncb of the
 * work) are legal here: on Zen 3 squeezenet1_1's 1000-channel 1x1 conv
 * over 13x13 ran in 1929 instead of 2356 us (tiles of 5 x 16 against
 * 13 x 8; per-kernel minima, bench/kernel_minima.sh). tpl_plan_tile's
 * odd-count rule makes the first choice (it picks that 5 x 16); this is a
 * second look when it kept one block, against the blocked layout's longer
 * one-block tiles (P1 up to regs - 3 rows, its epilogue storing whole
 * vectors): 2 vectors of P2 rows against one of P1. On x86-64-avx2 it
 * never overturns tpl_plan_tile's choice; on x86-64-avx512 only for rows
 * of 30 with 9 or 11 blocks. */
static void ragged_tile(Plan *pl, const Target *t, int64_t rows)
{
    int regs = tpl_regs(t), P1 = regs - 3, P2 = (regs - 4) / 2; /* (regs - V - 2) / V */
    int64_t nb = pl->co / pl->lanes;
    double c1, c2;
    if (P1 > rows)
        P1 = (int)rows;
    if (P2 > rows)
        P2 = (int)rows;
    if (P2 < 2)
        return;
    /* cycles per reduce step over all tiles, each max(FMAs, loads) / 2:
     * (P1 + 1) / 2 for one block, P2 for two */
    c1 = (double)nb * (double)tpl_ceil_div(rows, P1) * (P1 + 1) / 2.0;
    c2 = (double)tpl_ceil_div(nb, 2) * (double)tpl_ceil_div(rows, P2) * P2;
    if (c2 < c1) {
        pl->V = 2;
        pl->P = tpl_pick_rows(rows, P2);
        pl->VL = 2 * pl->lanes;
        pl->ncb = tpl_ceil_div(pl->co, pl->VL);
    }
}

int tpl_conv_nchwc(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *wl, *cond, *xl;
    LqAffine a0, a1, aw;
    Plan pl;
    int i, copy, flat, ovl, subs, ragged, blocked_in = c->n_raxes == 4;
    int64_t T1, npos, N, Ci, R1, H, W, OH, OW, s[2], d[2], lo[2], hi[2], KH, KW, Hp, Wp, T, OHx, kc, G, b, e, Co,
        rows, wco[6], ng = 1, st_stride[2];
    int xbuf, src, acc;
    IterVar nv, cbv, ohv, owv, pv, pv1, vv, rv[3], ogv, rcbv, vo, vi;
    Expr **map, *ohe, *r1e, *accb, *q, *plane0 = NULL;
    Stmt *body, *tile, *init, *epi;
    if (c->n_axes != 5 || (c->n_raxes != 3 && c->n_raxes != 4))
        return 1;
    b = c->axes[4].extent;
    if (b != t->vector_bits / 32)
        return 1;
    if (tpl_operands(L, c, &xl, &wl, &cond))
        return 1;
    if (!tpl_f32_load(k, xl) || xl->nidx != 4 + blocked_in || !xl->dims || xl->buf == c->out_buf)
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
    {
        /* grouped: (mb / mgb) * R1 + rc, mgb output blocks per group (one:
         * mb * R1 + rc, affine) */
        int64_t mgb = 0, cig = 0;
        int vg[2];
        vg[0] = c->axes[1].var;
        vg[1] = c->raxes[0].var;
        if (!lq_affine(xl->idx[1], &a1)) {
            if (tpl_grouped_channel(xl->idx[1], vg[0], vg[1], &mgb, &cig))
                return 1;
            memset(&a1, 0, sizeof a1);
        } else if (lq_aff_only(&a1, vg, 2) && lq_aff_coef(&a1, vg[0]) != 0 && !a1.c0 && lq_aff_coef(&a1, vg[1]) == 1) {
            mgb = 1;
            cig = lq_aff_coef(&a1, vg[0]);
            memset(&a1, 0, sizeof a1);
        }
        if (mgb) {
            if (cig != R1 || c->axes[1].extent % mgb || c->axes[1].extent / mgb < 2)
                return 1;
            ng = c->axes[1].extent / mgb;
            Co /= ng;
        }
    }
    if (xl->dims[0] != N || xl->dims[1] != ng * R1 ||
        (blocked_in && (xl->dims[4] != b || c->raxes[3].extent != b)))
        return 1;
    if (!lq_affine(xl->idx[0], &a0) || a0.c0 || a1.c0)
        return 1;
    {
        int v0 = c->axes[0].var, v1 = c->raxes[0].var;
        if (!lq_aff_only(&a0, &v0, 1) || (N > 1 && lq_aff_coef(&a0, v0) != 1) ||
            (ng == 1 && (!lq_aff_only(&a1, &v1, 1) || lq_aff_coef(&a1, v1) != 1)))
            return 1;
        if (blocked_in) {
            LqAffine a4;
            int v4 = c->raxes[3].var;
            if (!lq_affine(xl->idx[4], &a4) || a4.c0 || !lq_aff_only(&a4, &v4, 1) || lq_aff_coef(&a4, v4) != 1)
                return 1;
        }
    }
    if (tpl_conv_window(L, c, xl, cond, H, W, s, d, lo, hi) || (blocked_in && d[1] != 1))
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
    pl.groups = ng;
    pl.wbuf = wl->buf;
    pl.nr = 3;
    pl.rext[0] = R1;
    pl.rext[1] = KH;
    pl.rext[2] = KW * e;
    /* a 1x1 window over a whole unpadded plane: positions flattened */
    flat = KH == 1 && KW == 1 && !cond && s[0] == 1 && s[1] == 1 && lo[0] == 0 && lo[1] == 0 && OH == H &&
           OW == W;
    /* a strided 1x1 window over a blocked, unpadded input: the same over
     * a subsampled copy of the input (whole vectors; OH*OW positions
     * instead of rows of OW, so 2-vector tiles and the flat blocking) */
    subs = !flat && KH == 1 && KW == 1 && !cond && blocked_in && lo[0] == 0 && lo[1] == 0 &&
           (s[0] > 1 || s[1] > 1) && OH * OW >= 2 * (t->vector_bits / 32);
    st_stride[0] = s[0];
    st_stride[1] = s[1];
    if (subs) {
        flat = 1;
        s[0] = s[1] = 1;
    }
    rows = flat ? OH * OW : OW;
    pl.whole = ng > 1; /* a grouped conv's tiles are whole */
    tpl_plan_tile(&pl, t, Co, rows);
    if (ng == 1 && pl.V == 1 && Co / b >= 9 && (Co / b) % 2 == 1)
        ragged_tile(&pl, t, rows);
    {
        /* blocked tiles store whole vectors (no gathered epilogue): rows
         * beyond one vector's lanes, up to the registers and the declared
         * tile, where they divide the row exactly (no padded copy):
         * squeezenet1_1's 128-to-16-channel 1x1 conv over 55x55 in tiles of
         * 25 instead of 13 rows ran in 86 instead of 178 us; over 13x13,
         * 25 rows (7 tiles, a padded copy) were slower than 13 */
        int pmax = (tpl_regs(t) - pl.V - 2) / pl.V, p;
        int64_t dmax = 0;
        for (i = 0; i < t->n_tiles; i++)
            if (t->tiles[i].axes[0].max > dmax)
                dmax = t->tiles[i].axes[0].max;
        if (dmax > 0 && pmax > dmax)
            pmax = (int)dmax;
        p = tpl_pick_rows(rows, pmax);
        if (p > pl.P && rows % p == 0)
            pl.P = p;
    }
    tpl_strided_rows(&pl, t, s[1], KW, rows);
    {
        /* (the conv's own strides: a subsampled one keeps its key) */
        const char *desc = tpl_conv_desc(L, N, Ci, H, W, Co, KH, KW, st_stride, d, lo, hi);
        TileKnobs kn;
        if (ng > 1)
            desc = arena_printf(L->arena, "%s,g%lld", desc, (long long)ng);
        kn = tpl_choose_knobs(L, t, ng > 1 ? TS_CONV_NCHWC_G : TS_CONV_NCHWC, "conv2d_nchwc", desc, rows, Co,
                              Ci * KH * KW, pl.P, pl.V, 0, 0);
        tpl_plan_set(&pl, &kn);
    }
    /* the last tile of the blocks may be ragged: its missing blocks' weights
     * are zero (tpl_pack_panels) and their stores guarded (one group only) */
    ragged = pl.ncb * pl.VL != Co;
    if (pl.lanes != b || pl.ncb * pl.VL < Co || (ragged && ng > 1) || pl.P < 1)
        return 1;
    if (tpl_pack_panels(L, &pl, b, e, wco, aw.c0))
        return 1;
    T = tpl_ceil_div(rows, pl.P);
    /* a flat row whose tiles do not divide it: the last tile starts P
     * positions before the end, overlapping the one before it (those
     * positions computed twice, each store the same value), instead of a
     * padded copy of the whole input */
    ovl = flat && T * pl.P != rows && rows >= pl.P;
    /* a row the tiles do not divide (not flat): its last T - T1 tiles one
     * position shorter, so that none is computed for nothing, where the
     * shorter tile still hides the FMA latency (resnet18's 56- and 28-wide
     * 3x3 convs: 6 tiles of 6 and 4 of 5 instead of 10 of 6) */
    T1 = T;
    if (!flat && T * pl.P != rows && (pl.P - 1) * pl.V >= SHORT_TILE_MIN_ACCS) {
        T1 = T - (T * pl.P - rows);
        if (T1 <= 0) /* all short (not the plan's choice): keep the padding */
            T1 = T;
    }
    npos = T1 < T ? rows : T * pl.P;
    copy = subs || cond || (npos != rows && !ovl) || lo[0] != 0 || lo[1] != 0;
    if (subs) {
        Hp = 1;
        Wp = OH * OW;
    } else if (flat) {
        Hp = 1;
        Wp = copy ? T * pl.P : H * W;
    } else if (copy) {
        Hp = hi[0] - lo[0] + 1;
        Wp = hi[1] - lo[1] + 1;
        if ((npos - 1) * s[1] + d[1] * (KW - 1) + 1 > Wp)
            Wp = (npos - 1) * s[1] + d[1] * (KW - 1) + 1;
    } else {
        Hp = H;
        Wp = W;
    }
    xbuf = xl->buf;
    OHx = flat ? 1 : OH;
    if (flat && (!copy || subs)) {
        int64_t Tall = T;
        tpl_conv_flat_blocks(t, &pl, R1, KH * KW * e, &OHx, &T, &kc, &G);
        /* chunks past the last tile clamp to it, as the overlap does */
        ovl = ovl || OHx * T != Tall;
    } else {
        tpl_conv_blocks(t, &pl, R1, KH * KW * e, KH * KW == 1, OHx, T, &kc, &G);
    }
    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", ng * pl.ncb);
    ogv = lower_itervar(L, "og", tpl_ceil_div(OHx, G));
    ohv = lower_itervar(L, "oh", kc < R1 ? G : OHx);
    owv = lower_itervar(L, "ot", T);
    pv = lower_itervar(L, "p", pl.P);
    pv1 = lower_itervar(L, "p", pl.P - 1);
    vv = lower_itervar(L, "v", pl.VL);
    vo = lower_itervar(L, "vo", pl.V);
    vi = lower_itervar(L, "vi", b);
    acc = tpl_conv_reduce_vars(L, &pl, R1, kc, G, T, &ogv, &ohv, &owv, rv, &rcbv, &ohe, &r1e, &accb);
    if (ng > 1) /* the group's first input plane */
        plane0 = ex_mul(L, pl.ncb > 1 ? ex_binary(L, BIN_DIV, ex_var(L, &cbv), ex_int(L, pl.ncb)) : ex_var(L, &cbv),
                        ex_int(L, R1));
    if (subs) {
        src = lower_buf_temp(L, "xsub", DT_FLOAT32, ng * R1 * Wp * e);
        body = subsample_copy(L, src, xbuf, &nv, ng * R1, H, W, OH, OW, st_stride, e);
    } else if (copy) {
        src = lower_buf_temp(L, "xpad", DT_FLOAT32, ng * R1 * Hp * Wp * e);
        body = tpl_copy_phased(L, src, xbuf, &nv, ng * R1, flat ? 1 : H, (flat ? H * W : W) * e, Hp, 1, Wp * e,
                           flat ? 0 : lo[0], flat ? 0 : lo[1] * e, t->vector_bits / 32, NULL, 0, 0.0);
    } else {
        src = xbuf;
        body = NULL;
    }
    if (flat) {
        /* tile ohe*T + ot of the flattened plane (ohe the chunk), clamped */
        Expr *ti = OHx > 1 ? ex_add(L, ex_mul(L, ohe, ex_int(L, T)), ex_var(L, &owv)) : ex_var(L, &owv);
        Expr *q0 = ex_mul(L, ti, ex_int(L, pl.P));
        if (ovl)
            q0 = ex_binary(L, BIN_MIN, q0, ex_int(L, rows - pl.P));
        q = ex_add(L, q0, ex_var(L, &pv));
    } else {
        q = ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P)), ex_var(L, &pv));
    }
    {
        /* ((plane*Hp + row)*Wp + q*s1)*e + r3 (blocked) or + r3*d1 (NCHW);
         * a short tile's q: T1*P + (ot - T1)*(P - 1) + p */
        Expr *row = ex_add(L, ex_mul(L, ohe, ex_int(L, s[0])), ex_mul(L, ex_var(L, &rv[1]), ex_int(L, d[0])));
        Expr *plane = plane0 ? ex_add(L, plane0, r1e) : r1e;
        Stmt *tiles[2];
        int j;
        if (!copy)
            plane = ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, ng * R1)), plane);
        if (flat)
            row = ex_int(L, 0);
        for (j = 0; j < (T1 < T ? 2 : 1); j++) {
            Expr *aidx, *qt = q;
            if (j)
                qt = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P - 1)), ex_int(L, T1)),
                            ex_var(L, &pv1));
            aidx = ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, plane, ex_int(L, Hp)), row), ex_int(L, Wp)),
                                    ex_mul(L, qt, ex_int(L, s[1]))),
                          ex_int(L, e));
            aidx = ex_add(L, aidx, ex_mul(L, ex_var(L, &rv[2]), ex_int(L, blocked_in ? 1 : d[1])));
            tiles[j] = tpl_update_nest(L, t, &pl, acc, rv, j ? &pv1 : &pv, &vv, src, aidx, ex_var(L, &cbv), r1e,
                                       accb);
        }
        tile = T1 < T ? st_if_else(L, ex_lt(L, ex_var(L, &owv), ex_int(L, T1)), tiles[0], tiles[1]) : tiles[0];
        if (T1 < T) /* the init and epilogue's position: min(ot*P, ot*(P-1) + T1) + p */
            q = ex_add(L, ex_binary(L, BIN_MIN, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P)),
                                    ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P - 1)), ex_int(L, T1))),
                       ex_var(L, &pv));
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    {
        Expr *mb = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, pl.V)), ex_var(L, &vo));
        Expr *aix = ex_add(L, accb, ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, pl.VL)),
                                                   ex_mul(L, ex_var(L, &vo), ex_int(L, b))),
                                           ex_var(L, &vi)));
        Expr *accv = ex_load(L, acc, aix), *iv, *index;
        map[c->axes[0].var] = ex_var(L, &nv);
        /* init may read per-channel data: a ragged tile's missing blocks
         * read the last block's */
        map[c->axes[1].var] = ragged ? ex_binary(L, BIN_MIN, mb, ex_int(L, Co / b - 1)) : mb;
        map[c->axes[4].var] = ex_var(L, &vi);
        /* init may read per-position data: clamp the rows past the end */
        tpl_conv_map_init(L, c, map, flat, !ovl && T * pl.P != rows, q, ohe, OH, OW);
        iv = tpl_init_value(L, c, map);
        map[c->axes[1].var] = mb;
        init = st_store(L, acc, aix, iv);
        init = st_for(L, &vi, init);
        init->for_kind = FOR_VECTORIZE;
        init = st_for(L, &vo, init);
        init = st_for(L, &pv, init);
        tpl_conv_map_out(L, c, map, flat, q, OW);
        index = lower_out_index(L, c);
        /* for each channel block of the tile, P contiguous vectors */
        epi = tpl_store_out(L, c, index, map, accv);
        epi = st_for(L, &vi, epi);
        epi->for_kind = FOR_VECTORIZE;
        if (T1 < T) /* a short tile's last position is not its own */
            epi = st_if(L, ex_binary(L, BIN_OR, ex_lt(L, ex_var(L, &owv), ex_int(L, T1)),
                                     ex_lt(L, ex_var(L, &pv), ex_int(L, pl.P - 1))),
                        epi);
        else if (!ovl && T * pl.P != rows)
            epi = st_if(L, ex_lt(L, q, ex_int(L, rows)), epi);
        epi = st_for(L, &pv, epi);
        if (ragged)
            epi = st_if(L, ex_lt(L, mb, ex_int(L, Co / b)), epi);
        epi = st_for(L, &vo, epi);
    }
    tpl_conv_tile_nest(L, &pl, acc, body, init, tile, epi, kc < R1, ohe, OHx, G, &nv, &cbv, &ogv, &ohv, &owv, &rcbv);
    return 0;
}
