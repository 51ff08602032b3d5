/*
 * Depthwise convolution tiles of the packed-panel template (tpl_packed.c),
 * reached from tpl_conv (tpl_conv.c) once the window is matched: vectors
 * along the output columns (or, for a small plane, along the flattened
 * padded plane), each channel's weight broadcast, the input copied with
 * its padding per channel, per band of rows or per image.
 *
 * A max pool (tpl_pool.c) takes the same row tiles without weights: the
 * copy's padding is -inf instead of 0 and each tap updates the tile as
 * acc = max(acc, x) (tvmrt_maxf's rule, which emit_intrin.c prints lane-wise)
 * instead of acc += w * x, the taps in the window's order.
 */
#include "tpl_packed.h"

#include <math.h>
#include <string.h>

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

/* Output rows per depthwise tile: pick_rows, unless the fewest tiles of
 * equal height waste fewer rows (14 rows in tiles of at most 12: two
 * tiles of 7, not two of 9 with 4 rows computed for nothing). */
static int dw_rows(int64_t OH, int pmax)
{
    int P = tpl_pick_rows(OH, pmax);
    int64_t nt = tpl_ceil_div(OH, pmax), Pb = tpl_ceil_div(OH, nt);
    if (tpl_ceil_div(OH, Pb) * Pb - OH < tpl_ceil_div(OH, P) * P - OH)
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
    int64_t Wr = w->OW + (w->KW - 1) * w->d[1], NV = tpl_ceil_div(w->OH * Wr, lanes), Hp, reach;
    int64_t rowvecs = w->OH * tpl_ceil_div(w->OW, lanes);
    int64_t C = w->C, G;
    IterVar nv, cgv, gv, ge, pv, vv, ohv, vo, vi, rv[3];
    Expr **map, *aidx, *bidx, *ow, *iv, *ch, *acc0;
    Stmt *cp, *tile, *init, *epi, *seq, *decl, *d2, *loops, *tiles;
    if (w->s[0] != 1 || w->s[1] != 1 || w->OW >= lanes || NV >= rowvecs ||
        NV > (tpl_regs(t) * 3 / 8) || lq_uses_var(c->init, c->axes[2].var) || lq_uses_var(c->init, c->axes[3].var))
        return 1;
    /* rows of the copy: the image and its padding, and enough zero rows
     * below that the last vector's farthest tap stays inside */
    reach = NV * lanes + (w->KH - 1) * w->d[0] * Wr + (w->KW - 1) * w->d[1];
    Hp = w->hi[0] - w->lo[0] + 1;
    if (Hp * Wr < reach)
        Hp = tpl_ceil_div(reach, Wr);
    if (Hp * Wr * 4 > DW_LOCAL_PLANE_BYTES / 4)
        return 1;
    nv = lower_itervar(L, "n", w->N);
    pv = lower_itervar(L, "p", NV);
    vv = lower_itervar(L, "v", lanes);
    ohv = lower_itervar(L, "oh", w->OH);
    vo = lower_itervar(L, "vo", tpl_ceil_div(w->OW, lanes));
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
    cp = tpl_copy_phased(L, xp, xbuf, &nv, G, w->H, w->W, Hp, 1, Wr, w->lo[0], w->lo[1], tpl_copy_lanes(t),
                     ex_mul(L, ex_var(L, &cgv), ex_int(L, G)), C, 0.0);
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
    tile = tpl_tile(L, acc, ex_add(L, acc0, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, lanes)), ex_var(L, &vv))),
                   ex_load(L, pl->wbuf, aidx), ex_load(L, xp, bidx), rv, &pv, &vv);
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[1].var] = ch;
    /* init: the same value for every position of the channel */
    iv = tpl_init_value(L, c, map);
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
        epi = tpl_store_out(L, c, index, map, accv);
        if (tpl_ceil_div(w->OW, lanes) * lanes != w->OW)
            epi = st_if(L, ex_lt(L, ow, ex_int(L, w->OW)), epi);
        epi = st_for(L, &vi, epi);
        epi->for_kind = FOR_VECTORIZE;
        epi = st_for(L, &vo, epi);
        epi = st_for(L, &ohv, epi);
        epi = st_for(L, &ge, epi);
    }
    decl = tpl_acc_block(L, acc, cp, tiles, epi);
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
int tpl_conv_depthwise(Lower *L, const Target *t, Compute *c, const Plan *pl, int xbuf, const Window *w)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, V, P, pmax, acc, xp, per_chan, band, cvec = t->family->portable;
    double fill = pl ? 0.0 : -HUGE_VAL; /* the padding: what a tap outside the image adds nothing to */
    int64_t VL, T, OT, S = w->s[1], Hp, Hb, Wj, C = w->C;
    IterVar nv, cv, otv, qtv, pv, vv, vo, vi, rv[3];
    Expr **map, *aidx, *bidx, *oh, *ow, *accidx, *accix2;
    Stmt *cp, *tile, *init, *epi, *seq, *decl, *loops, *tile2 = NULL, *loops2 = NULL;
    int64_t w1 = tpl_ceil_div(w->OW, 2 * lanes) * 2 * lanes - w->OW, w2 = tpl_ceil_div(w->OW, lanes) * lanes - w->OW;
    if (pl && !conv_depthwise_flat(L, t, c, pl, xbuf, w))
        return 0;
    V = w->OW > lanes && (w1 <= w2 || cvec) ? 2 : 1; /* the portable target: a 16-float
                                                        zmm row (AVX-512) */
    /* 3/8 of the registers as accumulators; half of AVX2's 16 (8: 4 rows
     * of two vectors, 8 of one), which covers the FMA latency where 3 rows
     * of two did not: `tvmcc tune -t x86-64-avx2` on efficientnet_b0 chose
     * 4x2 for the 112x112 3x3 depthwise conv (271 against 315 us) and 7 or
     * 8 x1 for the stride-2 one (420-425 against 479 us), an AVX-512 host
     * shared with other jobs */
    pmax = (tpl_regs(t) <= 16 ? tpl_regs(t) / 2 : tpl_regs(t) * 3 / 8) / V;
    if (cvec)
        pmax = tpl_regs(t) * 3 / 8; /* the portable target: a row of 16
                                      floats is one zmm with AVX-512 (3 rows
                                      of two 8-float vectors left the FMAs
                                      latency-bound: mobilenet_v2's first
                                      depthwise conv took 6x AVX-512's time) */
    P = dw_rows(w->OH, pmax);
    if (pl) {
        TileKnobs kn = tpl_choose_knobs(L, t, TS_DWCONV, "dwconv2d",
                                    tpl_conv_desc(L, w->N, C, w->H, w->W, C, w->KH, w->KW, w->s, w->d, w->lo, w->hi),
                                    w->OH, w->OW, w->KH * w->KW, P, V, 0, 0);
        P = kn.P;
        V = kn.V;
    }
    VL = (int64_t)V * lanes;
    T = tpl_ceil_div(w->OW, VL);
    OT = tpl_ceil_div(w->OH, P);
    Hp = w->hi[0] - w->lo[0] + 1;
    if ((OT * P - 1) * w->s[0] + (w->KH - 1) * w->d[0] + 1 > Hp)
        Hp = (OT * P - 1) * w->s[0] + (w->KH - 1) * w->d[0] + 1;
    Wj = T * VL + ((w->KW - 1) * w->d[1]) / S;
    Hb = (P - 1) * w->s[0] + (w->KH - 1) * w->d[0] + 1;
    band = OT > 1 && Hp * S * Wj * 4 > dw_band_bytes(t);
    /* a band's rows start on a vector boundary when that costs at most a
     * quarter more columns: the taps' loads then split fewer cache lines */
    if (band && tpl_ceil_div(Wj, lanes) * lanes - Wj <= Wj / 4)
        Wj = tpl_ceil_div(Wj, lanes) * lanes;
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
        cp = tpl_copy_phased_at(L, xp, xbuf, &nv, 1, w->H, w->W, Hb, S, Wj, w->lo[0],
                            ex_mul(L, ex_var(L, &otv), ex_int(L, (int64_t)P * w->s[0])), w->lo[1], tpl_copy_lanes(t),
                            ex_var(L, &cv), C, fill);
    } else if (per_chan) {
        xp = lower_buf_temp(L, "xpad", DT_FLOAT32, Hp * S * Wj);
        k->bufs[xp].scope = BUF_LOCAL;
        k->bufs[xp].no_init = 1; /* copy_phased writes every row, phase and column */
        cp = tpl_copy_phased(L, xp, xbuf, &nv, 1, w->H, w->W, Hp, S, Wj, w->lo[0], w->lo[1], tpl_copy_lanes(t),
                         ex_var(L, &cv), C, fill);
    } else {
        xp = lower_buf_temp(L, "xpad", DT_FLOAT32, C * Hp * S * Wj);
        cp = tpl_copy_phased(L, xp, xbuf, &nv, C, w->H, w->W, Hp, S, Wj, w->lo[0], w->lo[1], tpl_copy_lanes(t), NULL, 0,
                             fill);
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
        bidx = ex_add(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, per_chan ? ex_int(L, 0) : ex_var(L, &cv), ex_int(L, Hp)), row),
                                                             ex_int(L, S)),
                                                   phase),
                                         ex_int(L, Wj)),
                                ex_add(L, ex_mul(L, ex_var(L, &qtv), ex_int(L, VL)), shift)),
                      ex_var(L, &vv));
        if (pl) {
            aidx = ex_add(L, ex_add(L, ex_add(L, ex_int(L, pl->wc0), ex_mul(L, ex_var(L, &cv), ex_int(L, pl->wco))),
                                    ex_mul(L, ex_var(L, &rv[1]), ex_int(L, pl->wr[1]))),
                          ex_mul(L, ex_var(L, &rv[2]), ex_int(L, pl->wr[2])));
            tile = tpl_tile(L, acc, accix2, ex_load(L, pl->wbuf, aidx), ex_load(L, xp, bidx), rv, &pv, &vv);
        } else {
            tile = tpl_max_tile(L, acc, accix2, ex_load(L, xp, bidx), rv, &pv, &vv, V, lanes, 0);
            if (!c->init) /* the same without NaN in the copy (tpl_nan_guard) */
                tile2 = tpl_max_tile(L, acc, accix2, ex_load(L, xp, bidx), rv, &pv, &vv, V, lanes, 1);
        }
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
        iv = pl || c->init ? tpl_init_value(L, c, map) : ex_float(L, DT_FLOAT32, -HUGE_VAL);
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
        epi = tpl_store_out(L, c, index, map, accv);
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
    decl = tpl_acc_block(L, acc, init, tile, epi);
    loops = st_for(L, &qtv, decl);
    if (tile2)
        loops2 = st_for(L, &qtv, tpl_acc_block(L, acc, lq_stmt_subst_var(L, init, -1, NULL), tile2,
                                               lq_stmt_subst_var(L, epi, -1, NULL)));
    if (band) {
        seq = st_seq(L, 2);
        seq->body[0] = cp;
        seq->body[1] = tile2 ? tpl_nan_guard(L, xp, Hb * S * Wj, lanes, loops, loops2) : loops;
        loops = st_for(L, &cv, st_for(L, &otv, st_decl(L, xp, seq)));
        if (C > 1)
            loops->for_kind = FOR_PARALLEL;
        k->body = st_for(L, &nv, loops);
        return 0;
    }
    loops = st_for(L, &otv, loops);
    if (tile2)
        loops2 = st_for(L, &otv, loops2);
    if (per_chan) {
        seq = st_seq(L, 2);
        seq->body[0] = cp;
        seq->body[1] = tile2 ? tpl_nan_guard(L, xp, Hp * S * Wj, lanes, loops, loops2) : loops;
        loops = st_for(L, &cv, st_decl(L, xp, seq));
        if (C > 1)
            loops->for_kind = FOR_PARALLEL;
        k->body = st_for(L, &nv, loops);
        return 0;
    }
    loops = st_for(L, &cv, loops);
    if (C > 1)
        loops->for_kind = FOR_PARALLEL;
    if (tile2) {
        loops2 = st_for(L, &cv, loops2);
        if (C > 1)
            loops2->for_kind = FOR_PARALLEL;
        loops = tpl_nan_guard(L, xp, C * Hp * S * Wj, lanes, loops, loops2);
    }
    seq = st_seq(L, 2);
    seq->body[0] = cp;
    seq->body[1] = loops;
    k->body = st_for(L, &nv, seq);
    return 0;
}
