/*
 * Dense convolution tiles of the packed-panel template (tpl_packed.c):
 * Conv with constant weights, group 1 or depthwise, 2-D NCHW. The data
 * load is matched as a window (tpl_conv_window: strides, dilations and
 * padding recovered from its affine indices, the padding select checked
 * to test every bound that can fail); a depthwise conv goes to
 * tpl_dwconv.c, a 1x1 conv over whole unpadded planes to the positions
 * tile (conv_positions), every other one to a tile of P output positions
 * x VL output channels. The loop nest of the dense tiles (the image loop,
 * the padded copy, channel blocks, reduction blocking) is built by
 * tpl_conv_tile_nest, which the blocked-layout conv (tpl_nchwc.c) shares.
 */
#include "tpl_packed.h"

#include <string.h>

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

/* A grouped conv's input channel index, (co / mg) * cig + rc (op_nn.c's
 * lower_Conv; the product dropped when cig is 1), for output channel
 * variable co and reduce channel variable rc: gives mg (output channels
 * per group) and cig (input channels per group); 1 when e is not that. */
int tpl_grouped_channel(const Expr *e, int co, int rc, int64_t *mg, int64_t *cig)
{
    const Expr *q;
    if (e->kind != EX_BINARY || e->op != BIN_ADD || e->b->kind != EX_VAR || e->b->var != rc)
        return 1;
    q = e->a;
    *cig = 1;
    if (q->kind == EX_BINARY && q->op == BIN_MUL && q->b->kind == EX_INT) {
        *cig = q->b->ival;
        q = q->a;
    }
    if (q->kind != EX_BINARY || q->op != BIN_DIV || q->a->kind != EX_VAR || q->a->var != co ||
        q->b->kind != EX_INT || q->b->ival < 1 || *cig < 1)
        return 1;
    *mg = q->b->ival;
    return 0;
}

/* Whether every use of the variables oh and ow in e is inside a load index
 * affine in them with coef(oh) == ow_extent * coef(ow): then oh := 0,
 * ow := q (the flattened position) gives the same offsets. */
int tpl_flat_ok(Lower *L, const Expr *e, int oh, int ow, int64_t OW)
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
    return tpl_flat_ok(L, e->a, oh, ow, OW) && tpl_flat_ok(L, e->b, oh, ow, OW) && tpl_flat_ok(L, e->c, oh, ow, OW);
}

/* Packs the weights of a tile of R output channels (broadcast) x V
 * vectors of positions: panels of R channels. */
static int pack_channel_panels(Lower *L, Plan *pl, int64_t Co, int R, int V, int lanes)
{
    pl->V = V;
    pl->lanes = lanes;
    pl->P = R;
    pl->VL = R; /* weight panels hold R channels */
    pl->co = Co;
    pl->ncb = tpl_ceil_div(Co, R);
    return tpl_pack_weights(L, pl);
}

/* The init nest of a tile whose vectors lie along the output positions
 * (the positions and row tiles): acc[accidx] = init at the outputs map
 * gives, for p, vo and vector lanes vi. */
static Stmt *pos_tile_init(Lower *L, const Compute *c, Expr *const *map, int acc, Expr *accidx, const IterVar *pv,
                           const IterVar *vo, const IterVar *vi)
{
    Stmt *s = st_store(L, acc, accidx, tpl_init_value(L, c, map));
    s = st_for(L, vi, s);
    s->for_kind = FOR_VECTORIZE;
    s = st_for(L, vo, s);
    return st_for(L, pv, s);
}

/* Its epilogue: post(accv) stored at the outputs map gives, whole vectors
 * of one channel, under `pos_ok` (the tile's positions inside the plane)
 * and `co_ok` (its channel real), each NULL when always true. */
static Stmt *pos_tile_epilogue(Lower *L, const Compute *c, Expr *const *map, Expr *accv, Expr *pos_ok, Expr *co_ok,
                               const IterVar *pv, const IterVar *vo, const IterVar *vi)
{
    Stmt *s = tpl_store_out(L, c, lower_out_index(L, c), map, accv);
    if (pos_ok)
        s = st_if(L, pos_ok, s);
    s = st_for(L, vi, s);
    s->for_kind = FOR_VECTORIZE;
    s = st_for(L, vo, s);
    if (co_ok)
        s = st_if(L, co_ok, s);
    return st_for(L, pv, s);
}

/* A 1x1 convolution over whole planes, Y[co][q] = sum_ci W[co][ci] X[ci][q],
 * with the vectors along the positions q (contiguous in X and Y): tiles of
 * R output channels (broadcast weights, packed [cb][ci][R]) x VL positions.
 * The epilogue then stores whole vectors of one channel. */
static int conv_positions(Lower *L, const Target *t, Compute *c, Plan *pl, int xbuf, int64_t N,
                          int64_t Ci, int64_t OH, int64_t OW)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, regs = tpl_regs(t), V, R, rmax, acc, src;
    int64_t Q = OH * OW, Co = c->axes[1].extent, VL, T, Qp;
    IterVar nv, cbv, tv, qbv, pv, vv, vo, vi, rv[3];
    Expr **map, *aidx, *bidx, *q, *co, *accidx, *qt;
    Stmt *body = NULL, *tile, *init, *epi, *decl, *loops;
    int flat_sub;
    int64_t TB, nqb;
    /* two vectors of positions per tile unless that pads the plane by a
     * fifth more than one vector does: with one, every FMA also needs its
     * own broadcast load (squeezenet1_1's 13x13 classifier conv, 169
     * positions: 1000 channels as 77 tiles of 13 x 32 ran ~15% faster than
     * 40 tiles of 25 x 16 although they compute 192 instead of 176 positions) */
    V = tpl_ceil_div(Q, 2 * lanes) * 2 * lanes * 5 <= tpl_ceil_div(Q, lanes) * lanes * 6 ? 2 : 1;
    if (t->family->portable && Q >= 4 * lanes)
        V = 2; /* the portable target: a 16-float row is one zmm with AVX-512
                  (7x7 planes: 4 instead of 7 FMAs per row and step; AVX2
                  runs 8 ymm instead of 7) */
    rmax = (regs - V - 2) / V;
    if (rmax > 28)
        rmax = 28;
    R = tpl_pick_rows(Co, rmax);
    {
        int64_t one[2] = {1, 1}, zero[2] = {0, 0}, hi[2];
        TileKnobs kn;
        hi[0] = OH - 1;
        hi[1] = OW - 1;
        kn = tpl_choose_knobs(L, t, TS_CONV_POS, "conv2d", tpl_conv_desc(L, N, Ci, OH, OW, Co, 1, 1, one, one, zero, hi),
                          Co, Q, Ci, R, V, 0, 0);
        R = kn.P;
        V = kn.V;
    }
    VL = (int64_t)V * lanes;
    T = tpl_ceil_div(Q, VL);
    Qp = T * VL;
    if (pack_channel_panels(L, pl, Co, R, V, lanes))
        return 1;
    flat_sub = tpl_flat_ok(L, c->post, c->axes[2].var, c->axes[3].var, OW) &&
               tpl_flat_ok(L, c->init, c->axes[2].var, c->axes[3].var, OW) &&
               tpl_flat_ok(L, c->out_index, c->axes[2].var, c->axes[3].var, OW);
    /* Position blocks: when the input planes (Ci * Qp floats) do not stay
     * in L2 while every channel block passes over them, the channel blocks
     * run inside blocks of TB position tiles whose input strips fit in
     * half the L2 (resnext50's 1x1 convs over 256 x 56x56 planes read
     * all 3.2 MB from L3 once per channel block before: 26 GFLOP/s,
     * 58 after, AVX2 on an AVX-512 host). */
    TB = T;
    if (Ci * Qp * 4 > tpl_l2_budget(t)) {
        TB = tpl_l2_budget(t) / (Ci * VL * 4);
        if (TB < 1)
            TB = 1;
        TB = tpl_ceil_div(T, tpl_ceil_div(T, TB)); /* even blocks */
    }
    nqb = tpl_ceil_div(T, TB);
    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", pl->ncb);
    tv = lower_itervar(L, "qt", TB);
    qbv = lower_itervar(L, "qb", nqb);
    pv = lower_itervar(L, "p", R);
    vv = lower_itervar(L, "v", VL);
    vo = lower_itervar(L, "vo", V);
    vi = lower_itervar(L, "vi", lanes);
    rv[0] = lower_itervar(L, "rc", Ci);
    rv[1] = lower_itervar(L, "ru", 1);
    rv[2] = lower_itervar(L, "ru", 1);
    qt = nqb > 1 ? ex_add(L, ex_mul(L, ex_var(L, &qbv), ex_int(L, TB)), ex_var(L, &tv)) : ex_var(L, &tv);
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, (int64_t)R * VL);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1; /* the init loop below writes all of it */
    if (Qp != Q) {
        src = lower_buf_temp(L, "xpad", DT_FLOAT32, Ci * Qp);
        body = tpl_copy_padded(L, src, xbuf, &nv, Ci, 1, Q, 1, Qp, 0, 0, tpl_copy_lanes(t));
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
        bidx = ex_add(L, ex_add(L, ex_mul(L, plane, ex_int(L, Qp)), ex_mul(L, qt, ex_int(L, VL))),
                      ex_var(L, &vv));
        tile = tpl_tile(L, acc, accix, ex_load(L, pl->pbuf, aidx), ex_load(L, src, bidx), rv, &pv,
                       &vv);
        /* the input planes beyond L1: each reduce step's row of X comes
         * from L2, one line per vector, Ci rows apart (more streams than
         * the hardware prefetchers follow); fetch the row of the tile two
         * to the right meanwhile */
        if (Ci * Qp * 4 > tpl_l1_budget(t))
            tile->prefetch = 2 * VL;
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    co = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, R)), ex_var(L, &pv));
    q = ex_add(L, ex_add(L, ex_mul(L, qt, ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
               ex_var(L, &vi));
    accidx = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
                    ex_var(L, &vi));
    map[c->axes[0].var] = ex_var(L, &nv);
    {
        Expr *qc = Qp != Q ? ex_binary(L, BIN_MIN, q, ex_int(L, Q - 1)) : q;
        map[c->axes[1].var] = Co % R ? ex_binary(L, BIN_MIN, co, ex_int(L, Co - 1)) : co;
        map[c->axes[2].var] = flat_sub ? ex_int(L, 0) : ex_binary(L, BIN_DIV, qc, ex_int(L, OW));
        map[c->axes[3].var] = flat_sub ? qc : ex_binary(L, BIN_MOD, qc, ex_int(L, OW));
        init = pos_tile_init(L, c, map, acc, accidx, &pv, &vo, &vi);
    }
    {
        Expr *index, *accv = ex_load(L, acc, accidx);
        map[c->axes[1].var] = co;
        map[c->axes[2].var] = flat_sub ? ex_int(L, 0) : ex_binary(L, BIN_DIV, q, ex_int(L, OW));
        map[c->axes[3].var] = flat_sub ? q : ex_binary(L, BIN_MOD, q, ex_int(L, OW));
        index = lower_out_index(L, c);
        if (t->family->portable) {
            /* the portable target: one loop over the VL positions (a
             * 16-float zmm of AVX-512 where gcc otherwise makes two ymm
             * of the 8-lane halves, for an exp and a division per
             * element in a Swish; the store of a partial last tile is a
             * loop to the row's end, vectorized the same) */
            Expr *qv = ex_add(L, ex_mul(L, qt, ex_int(L, VL)), ex_var(L, &vv));
            Expr *av = ex_load(L, acc, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_var(L, &vv)));
            map[c->axes[1].var] = co;
            map[c->axes[2].var] = flat_sub ? ex_int(L, 0) : ex_binary(L, BIN_DIV, qv, ex_int(L, OW));
            map[c->axes[3].var] = flat_sub ? qv : ex_binary(L, BIN_MOD, qv, ex_int(L, OW));
            epi = tpl_store_out(L, c, index, map, av);
            if (Qp != Q)
                epi = st_if(L, ex_lt(L, qv, ex_int(L, Q)), epi);
            epi = st_for(L, &vv, epi);
            epi->for_kind = FOR_VECTORIZE;
            if (Co % R)
                epi = st_if(L, ex_lt(L, co, ex_int(L, Co)), epi);
            epi = st_for(L, &pv, epi);
        } else {
            epi = pos_tile_epilogue(L, c, map, accv, Qp != Q ? ex_lt(L, q, ex_int(L, Q)) : NULL,
                                    Co % R ? ex_lt(L, co, ex_int(L, Co)) : NULL, &pv, &vo, &vi);
        }
    }
    decl = tpl_acc_block(L, acc, init, tile, epi);
    if (nqb * TB != T)
        decl = st_if(L, ex_lt(L, qt, ex_int(L, T)), decl);
    loops = st_for(L, &tv, decl);
    loops = st_for(L, &cbv, loops);
    if (nqb > 1) {
        /* the threads take whole position blocks (each its own L2) when
         * there are enough of them, else share each block's channels */
        loops = st_for(L, &qbv, loops);
        if (nqb >= 4)
            loops->for_kind = FOR_PARALLEL;
        else
            loops->body[0]->for_kind = FOR_PARALLEL;
    } else if (pl->ncb > 1) {
        loops->for_kind = FOR_PARALLEL;
    } else if (T > 1) {
        loops->body[0]->for_kind = FOR_PARALLEL;
    }
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

/* Input channels up to which a group-1 conv with an NCHW output takes the
 * row tile below: the first convs of mobilenet_v2 and efficientnet_b0
 * (3 channels, 3x3, stride 2) reduce over only 27 products, and the
 * channel tile's epilogue gathered each channel's row from the tile
 * columns (a 6-lane strided store of the 112x112 outputs, the Swish on
 * partial vectors): efficientnet_b0's first conv took 11% of the model
 * with x86-64-avx2. */
#define ROWS_MAX_CHANNELS 4

/* A conv with few input channels over an NCHW output, with the vectors
 * along an output row: tiles of R output channels (broadcast weights,
 * packed [cb][ci][kh][kw][R]) x VL output columns of row oh, reading a
 * zero-padded, column-phase-split copy of the input (tpl_copy_phased,
 * as the strided depthwise tiles) so that every tap is a contiguous
 * vector: xp[ci][oh*s0 + kh*d0][(kw*d1) % S][ow + (kw*d1) / S]. The
 * epilogue stores whole vectors of one channel's row. The rows are the
 * outer loop (parallel): one row's input (Ci*KH phased rows) and all the
 * weights stay in L1 while the channel blocks pass over them. */
static int conv_rows(Lower *L, const Target *t, Compute *c, Plan *pl, int xbuf, const Window *w)
{
    Kernel *k = L->k;
    int lanes = t->vector_bits / 32, regs = tpl_regs(t), V = 2, R, xp;
    int64_t Ci = c->raxes[0].extent, Co = c->axes[1].extent, VL, T, S = w->s[1], Hp, Wj;
    IterVar nv, cbv, ohv, tv, pv, vv, vo, vi, rv[3];
    Expr **map, *aidx, *bidx, *ow, *co, *accidx;
    Stmt *cp, *tile, *init, *epi, *decl, *loops, *seq;
    int acc;
    VL = (int64_t)V * lanes;
    if (w->OW < VL)
        V = 1, VL = lanes;
    R = tpl_pick_rows(Co, (regs - V - 2) / V);
    T = tpl_ceil_div(w->OW, VL);
    Hp = (w->OH - 1) * w->s[0] + (w->KH - 1) * w->d[0] + 1;
    Wj = T * VL + (w->KW - 1) * w->d[1] / S;
    if (pack_channel_panels(L, pl, Co, R, V, lanes))
        return 1;
    nv = lower_itervar(L, "n", w->N);
    cbv = lower_itervar(L, "cb", pl->ncb);
    ohv = lower_itervar(L, "oh", w->OH);
    tv = lower_itervar(L, "ot", T);
    pv = lower_itervar(L, "p", R);
    vv = lower_itervar(L, "v", VL);
    vo = lower_itervar(L, "vo", V);
    vi = lower_itervar(L, "vi", lanes);
    rv[0] = lower_itervar(L, "rc", Ci);
    rv[1] = lower_itervar(L, "rh", w->KH);
    rv[2] = lower_itervar(L, "rw", w->KW);
    acc = lower_buf_temp(L, "acc", DT_FLOAT32, (int64_t)R * VL);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1; /* the init loop below writes all of it */
    xp = lower_buf_temp(L, "xpad", DT_FLOAT32, Ci * Hp * S * Wj);
    cp = tpl_copy_phased(L, xp, xbuf, &nv, Ci, w->H, w->W, Hp, S, Wj, w->lo[0], w->lo[1], tpl_copy_lanes(t), NULL,
                         0, 0.0);
    /* update: acc[p*VL + v] += wp[(((cb*Ci + ci)*KH + kh)*KW + kw)*R + p]
     *                          * xp[((ci*Hp + oh*s0 + kh*d0)*S + (kw*d1) % S)*Wj + ot*VL + (kw*d1) / S + v] */
    {
        Expr *kwd = ex_mul(L, ex_var(L, &rv[2]), ex_int(L, w->d[1]));
        Expr *row = ex_add(L, ex_mul(L, ex_var(L, &ohv), ex_int(L, w->s[0])),
                           ex_mul(L, ex_var(L, &rv[1]), ex_int(L, w->d[0])));
        Expr *phase = S > 1 ? ex_binary(L, BIN_MOD, kwd, ex_int(L, S)) : ex_int(L, 0);
        Expr *shift = S > 1 ? ex_binary(L, BIN_DIV, kwd, ex_int(L, S)) : kwd;
        Expr *accix = ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_var(L, &vv));
        Expr *r = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, Ci)), ex_var(L, &rv[0]));
        r = ex_add(L, ex_mul(L, r, ex_int(L, w->KH)), ex_var(L, &rv[1]));
        r = ex_add(L, ex_mul(L, r, ex_int(L, w->KW)), ex_var(L, &rv[2]));
        aidx = ex_add(L, ex_mul(L, r, ex_int(L, R)), ex_var(L, &pv));
        bidx = ex_add(L, ex_mul(L, ex_var(L, &rv[0]), ex_int(L, Hp)), row);
        bidx = ex_add(L, ex_mul(L, bidx, ex_int(L, S)), phase);
        bidx = ex_add(L, ex_mul(L, bidx, ex_int(L, Wj)),
                      ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &tv), ex_int(L, VL)), shift), ex_var(L, &vv)));
        tile = tpl_tile(L, acc, accix, ex_load(L, pl->pbuf, aidx), ex_load(L, xp, bidx), rv, &pv, &vv);
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    co = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, R)), ex_var(L, &pv));
    ow = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &tv), ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
                ex_var(L, &vi));
    accidx = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_mul(L, ex_var(L, &vo), ex_int(L, lanes))),
                    ex_var(L, &vi));
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[2].var] = ex_var(L, &ohv);
    map[c->axes[1].var] = Co % R ? ex_binary(L, BIN_MIN, co, ex_int(L, Co - 1)) : co;
    map[c->axes[3].var] = T * VL != w->OW ? ex_binary(L, BIN_MIN, ow, ex_int(L, w->OW - 1)) : ow;
    init = pos_tile_init(L, c, map, acc, accidx, &pv, &vo, &vi);
    map[c->axes[1].var] = co;
    map[c->axes[3].var] = ow;
    epi = pos_tile_epilogue(L, c, map, ex_load(L, acc, accidx),
                            T * VL != w->OW ? ex_lt(L, ow, ex_int(L, w->OW)) : NULL,
                            Co % R ? ex_lt(L, co, ex_int(L, Co)) : NULL, &pv, &vo, &vi);
    decl = tpl_acc_block(L, acc, init, tile, epi);
    loops = st_for(L, &tv, decl);
    loops = st_for(L, &cbv, loops);
    loops = st_for(L, &ohv, loops);
    if (w->OH > 1)
        loops->for_kind = FOR_PARALLEL;
    seq = st_seq(L, 2);
    seq->body[0] = cp;
    seq->body[1] = loops;
    k->body = st_for(L, &nv, seq);
    if (!lq_stmt_uses_buf(k->body, pl->wbuf))
        k->bufs[pl->wbuf].scope = BUF_UNUSED;
    return 0;
}

/* Largest accumulator array (partial sums of a group of tiles) a blocked
 * conv keeps on the stack: a quarter of the L1. */
static int64_t acc_budget(const Target *t)
{
    return (t->l1_bytes > 0 ? t->l1_bytes : (int64_t)32 << 10) / 4;
}
/* Bytes of weights one reduction block of a conv keeps in L1: the
 * target's conv_l1_pct of it, else tpl_l1_budget's 3/4. AMD Zen 3 (32 KiB
 * L1, x86-64-avx2 at 37): blocks of at most 12 KiB, so 256-channel 1x1
 * convs (16 KiB of one channel block's weights) are blocked too; resnext50
 * 118 -> 107 ms, googlenet 35.5 -> 34.7, regnet_x_400mf 10.1 -> 9.8 (min of
 * interleaved runs; resnet18 and squeezenet unchanged). */
static int64_t conv_l1_budget(const Target *t)
{
    if (t->knobs.conv_l1_pct > 0)
        return (t->l1_bytes > 0 ? t->l1_bytes : (int64_t)32 << 10) * t->knobs.conv_l1_pct / 100;
    return tpl_l1_budget(t);
}
/* Fewest reduction steps (input channels x window) per block: each block
 * reloads and stores the tile's accumulators (on resnet18, blocks of 72
 * steps were slower than no blocking, blocks of 144 a little faster). */
#define CONV_BLOCK_MIN_STEPS 128
/* The same for a 1x1 window, whose blocks reload the accumulators once per
 * kc channels (not per kc*KH*KW steps): shufflenet_v2's 464-to-1024
 * 1x1 conv over 7x7 (NCHW; 29.7 KiB of weights per channel block) in
 * blocks of 116 channels ran in 0.55 instead of 1.47 ms on AMD Zen 3
 * (x86-64-avx2, per-kernel minima; onnxruntime 0.55), other bench models
 * unchanged within 2%. */
#define CONV_BLOCK_MIN_STEPS_1X1 64

/* Reduction blocking of a conv: when a channel block's weight panel
 * (Ci*KHW steps of VL floats) does not fit l1_budget, the input channels
 * are cut into blocks of kc (a divisor of Ci) whose panel slice does, and
 * groups of G output rows (of T tiles each) pass over each slice while it
 * is in L1, their partial sums kept side by side in the accumulator array
 * between blocks. Sets *kc = Ci (no blocking) when the panel fits, no
 * divisor is large enough, or a group would be a single tile. */
void tpl_conv_blocks(const Target *t, const Plan *pl, int64_t Ci, int64_t KHW, int pointwise, int64_t rows,
                     int64_t T, int64_t *kc, int64_t *G)
{
    int64_t step = KHW * pl->VL * 4, row = T * pl->P * pl->VL * 4, d, g;
    *kc = Ci;
    *G = 1;
    if (Ci * step <= conv_l1_budget(t) || row > acc_budget(t))
        return;
    for (d = conv_l1_budget(t) / step; d > 1 && Ci % d; d--)
        ;
    g = acc_budget(t) / row;
    if (g > rows)
        g = rows;
    if (d < 1 || d * KHW < (pointwise ? CONV_BLOCK_MIN_STEPS_1X1 : CONV_BLOCK_MIN_STEPS) || g * T < 2)
        return;
    /* as many groups as g allows, evened out */
    *G = tpl_ceil_div(rows, tpl_ceil_div(rows, g));
    *kc = d;
}

/* Reduction blocking of a conv over a flattened plane (one row of T
 * tiles, tpl_conv_nchwc's flat 1x1 convs): the row is cut into *rows
 * chunks of *T tiles whose partial sums fit the accumulator array, and
 * tpl_conv_blocks blocks the input channels over those chunks. On AMD Zen 3
 * (x86-64-avx2) a 512-to-512-channel 1x1 conv over 28x28 in 5x16 tiles ran
 * at 69 GFLOP/s over the whole plane per channel block and at 95-97 in
 * chunks of 125 positions with 128 or 256 input channels per pass (a
 * hand-written kernel; onnxruntime's MLAS reached 93 on that conv). The
 * last chunk may run past the T tiles: the caller clamps its tiles to the
 * last one. Leaves *rows and *T as they are when tpl_conv_blocks does not
 * block (the weights fit the L1 budget, ...) or a chunk would be a single
 * tile. */
void tpl_conv_flat_blocks(const Target *t, const Plan *pl, int64_t Ci, int64_t KHW, int64_t *rows, int64_t *T,
                          int64_t *kc, int64_t *G)
{
    int64_t tc = acc_budget(t) / ((int64_t)pl->P * pl->VL * 4), n, tcc;
    *kc = Ci;
    *G = 1;
    if (tc < 2)
        return;
    n = tpl_ceil_div(*T, tc);
    tcc = tpl_ceil_div(*T, n);
    tpl_conv_blocks(t, pl, Ci, KHW, 1, n, tcc, kc, G);
    if (*kc < Ci) {
        *rows = n;
        *T = tcc;
    }
}

/* The window of conv stage c (its strides s, dilations d, first and last
 * input positions lo and hi per spatial axis) from the parameters lowering
 * tagged it with (Compute.window: ir/params.h). The data load xl must read
 * that window: its indices 2 and 3 (rows and columns, possibly clamped to
 * the plane) are checked to be output axis 2+i times the stride plus
 * reduce axis r0+i (the window's rows; 1 for a conv, after the input
 * channels) times the dilation minus the leading pad, and every bound
 * that can fail must be tested by cond (the padding select, which then
 * gives its padding value there). Returns 1 when c has no 2-d window, xl
 * does not read it, or an axis of one output position has a stride other
 * than 1. */
int tpl_window(Lower *L, const Compute *c, const Expr *xl, const Expr *cond, int r0, int64_t H, int64_t W,
               int64_t *s, int64_t *d, int64_t *lo, int64_t *hi)
{
    const Expr *pos[2];
    const ConvWindow *win = c->window;
    LqAffine ap[2];
    int i, clamped[2], bits = 0, need = 0;
    if (!win || win->nsp != 2)
        return 1;
    for (i = 0; i < 2; i++) {
        int vars[2];
        int64_t ext = i ? W : H;
        vars[0] = c->axes[2 + i].var;
        vars[1] = c->raxes[r0 + i].var;
        s[i] = win->strides[i];
        d[i] = win->dilations[i];
        lo[i] = -win->pad_begin[i];
        pos[i] = strip_clamp(xl->idx[2 + i], ext - 1, &clamped[i]);
        if (!lq_affine(pos[i], &ap[i]) || !lq_aff_only(&ap[i], vars, 2) ||
            lq_aff_coef(&ap[i], vars[0]) != s[i] || lq_aff_coef(&ap[i], vars[1]) != d[i] ||
            ap[i].c0 != lo[i])
            return 1;
        /* (an axis of one output position is tiled only at stride 1) */
        if (s[i] < 1 || d[i] < 1 || (c->axes[2 + i].extent == 1 && s[i] != 1))
            return 1;
        hi[i] = ap[i].c0 + s[i] * (c->axes[2 + i].extent - 1) + d[i] * (c->raxes[r0 + i].extent - 1);
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

int tpl_conv_window(Lower *L, const Compute *c, const Expr *xl, const Expr *cond, int64_t H, int64_t W,
                    int64_t *s, int64_t *d, int64_t *lo, int64_t *hi)
{
    return tpl_window(L, c, xl, cond, 1, H, W, s, d, lo, hi);
}

/* The reduce loops of a dense conv tile (tpl_conv, tpl_conv_nchwc) over R
 * input channels (or channel blocks), kc at a time (kc < R: conv_blocks'
 * reduction blocking): creates rv (extents pl->rext, rv[0] cut to kc) and
 * rcb, and gives the output row ohe, the first reduce index r1e and the
 * tile's place accb in the accumulator array, which it returns:
 *   blocked: rows og*G + oh, input channels rcb*kc + rr, the tile of
 *            (oh, ot) at its own place in acc (G*T tiles);
 *   else:    rows oh, channels rr, one tile at 0. */
int tpl_conv_reduce_vars(Lower *L, const Plan *pl, int64_t R, int64_t kc, int64_t G, int64_t T,
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

/* Sets the conv's row and column axes (2, 3) in map at the tile's
 * position q for its init: over the flattened plane (flat, OW columns) or
 * column q of row ohe; with clamp the tile runs past the last position,
 * which those past it read. */
void tpl_conv_map_init(Lower *L, const Compute *c, Expr **map, int flat, int clamp, Expr *q, Expr *ohe,
                       int64_t OH, int64_t OW)
{
    if (flat) {
        Expr *qq = clamp ? ex_binary(L, BIN_MIN, q, ex_int(L, OH * OW - 1)) : q;
        map[c->axes[2].var] = ex_binary(L, BIN_DIV, qq, ex_int(L, OW));
        map[c->axes[3].var] = ex_binary(L, BIN_MOD, qq, ex_int(L, OW));
    } else {
        map[c->axes[2].var] = ohe;
        map[c->axes[3].var] = clamp ? ex_binary(L, BIN_MIN, q, ex_int(L, OW - 1)) : q;
    }
}

/* The same for the epilogue (only real positions are stored, unclamped):
 * over a flattened plane that post and the output index address as one
 * range (tpl_flat_ok), row 0 and column q; else row q / OW, column
 * q % OW; not flat, column q (the row stays the init's). */
void tpl_conv_map_out(Lower *L, const Compute *c, Expr **map, int flat, Expr *q, int64_t OW)
{
    if (flat && tpl_flat_ok(L, c->post, c->axes[2].var, c->axes[3].var, OW) &&
        tpl_flat_ok(L, c->out_index, c->axes[2].var, c->axes[3].var, OW)) {
        map[c->axes[2].var] = ex_int(L, 0);
        map[c->axes[3].var] = q;
    } else if (flat) {
        map[c->axes[2].var] = ex_binary(L, BIN_DIV, q, ex_int(L, OW));
        map[c->axes[3].var] = ex_binary(L, BIN_MOD, q, ex_int(L, OW));
    } else {
        map[c->axes[3].var] = q;
    }
}

/* The loop nest of the dense conv tiles (tpl_conv, tpl_conv_nchwc):
 *   for n: copy; for cb [parallel]: decl acc {
 *     unblocked: for oh: for ot: init; tile; epilogue
 *     blocked:   for og: { for oh, ot: init; for rcb: for oh, ot: tile;
 *                          for oh, ot: epilogue }   (oh < OHx tested when
 *                the G rows of the last group run past it) }
 * as the kernel's body; the original weights are unused afterwards. */
void tpl_conv_tile_nest(Lower *L, const Plan *pl, int acc, Stmt *copy, Stmt *init, Stmt *tile, Stmt *epi,
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
    if (cbv->extent > 1)
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

/* Fewest output channels per group that the per-group tiles take: with
 * groups of 4, a tile's 8-lane vectors are half padding and resnext50's
 * first-stage grouped conv (128 channels, 56x56, 32 groups) ran 1.4 times
 * slower than with the generic tile on x86-64-avx2; groups of 8 in
 * 16-lane vectors (AVX-512) still ran in half its time. */
#define GROUP_MIN_WIDTH 8

/* The window the depthwise and row tiles take. */
Window tpl_window_make(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                       int64_t KW, const int64_t *s, const int64_t *d, const int64_t *lo, const int64_t *hi)
{
    Window wn;
    int i;
    wn.N = N;
    wn.C = C;
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
    return wn;
}

/* Output channel ch of the group starting at gbase (NULL: not grouped). */
static Expr *gch(Lower *L, Expr *gbase, Expr *ch)
{
    return gbase ? ex_add(L, gbase, ch) : ch;
}

int tpl_conv(Lower *L, const Target *t, Compute *c, int *depthwise)
{
    Kernel *k = L->k;
    const Expr *wl, *cond, *xl;
    LqAffine a0, a1, aw;
    Plan pl;
    int i, copy, flat, dw;
    int64_t N, Ci, H, W, OH, OW, s[2], d[2], lo[2], hi[2], KH, KW, Hp, Wp, T, OHx, kc, G;
    int64_t Co, ng = 1, Cx; /* output channels, groups, input channels */
    int xbuf, src, acc;
    IterVar nv, cbv, ohv, owv, pv, vv, rv[3], ogv, rcbv;
    Expr **map, *ohe, *r1e, *accb, *gbase = NULL, *xbase = NULL, *cbl;
    Stmt *body, *tile, *init, *epi, *post1 = NULL;
    if (c->n_axes != 4 || c->n_raxes != 3)
        return 1;
    if (tpl_operands(L, c, &xl, &wl, &cond))
        return 1;
    if (!tpl_f32_load(k, xl) || xl->nidx != 4 || !xl->dims || xl->buf == c->out_buf)
        return 1;
    N = c->axes[0].extent;
    Ci = c->raxes[0].extent;
    KH = c->raxes[1].extent;
    KW = c->raxes[2].extent;
    OH = c->axes[2].extent;
    OW = c->axes[3].extent;
    H = xl->dims[2];
    W = xl->dims[3];
    Co = c->axes[1].extent;
    Cx = xl->dims[1];
    if (xl->dims[0] != N)
        return 1;
    /* batch and input channel indices: the reduce channel (group 1), the
     * output channel itself (depthwise: one input channel per group), or
     * a grouped conv's (mg output channels of a group read its Ci input
     * channels: tiled per group below) */
    if (!lq_affine(xl->idx[0], &a0) || a0.c0)
        return 1;
    if (!lq_affine(xl->idx[1], &a1)) {
        int64_t mg, cig;
        if (tpl_grouped_channel(xl->idx[1], c->axes[1].var, c->raxes[0].var, &mg, &cig) || cig != Ci ||
            Co % mg || Cx != Co / mg * Ci || Co / mg < 2 || mg < GROUP_MIN_WIDTH)
            return 1;
        ng = Co / mg;
        a1.c0 = 0;
    } else if (a1.c0) {
        return 1;
    }
    {
        int v0 = c->axes[0].var, v1 = c->raxes[0].var, vc[2];
        vc[0] = c->axes[1].var;
        vc[1] = v1;
        if (!lq_aff_only(&a0, &v0, 1) || (N > 1 && lq_aff_coef(&a0, v0) != 1))
            return 1;
        if (ng > 1)
            dw = 0;
        else if (lq_aff_only(&a1, &v1, 1) && lq_aff_coef(&a1, v1) == 1 && xl->dims[1] == Ci)
            dw = 0;
        else if (Ci == 1 && lq_aff_only(&a1, vc, 2) && lq_aff_coef(&a1, vc[0]) == 1 && xl->dims[1] == c->axes[1].extent)
            dw = 1;
        else
            return 1;
    }
    if (tpl_conv_window(L, c, xl, cond, H, W, s, d, lo, hi))
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
        Window wn = tpl_window_make(N, c->axes[1].extent, H, W, OH, OW, KH, KW, s, d, lo, hi);
        *depthwise = 1;
        return tpl_conv_depthwise(L, t, c, &pl, xl->buf, &wn);
    }
    pl.nr = 3;
    pl.rext[0] = Ci;
    pl.rext[1] = KH;
    pl.rext[2] = KW;
    /* a 1x1 window over a whole unpadded plane is a matrix product over
     * the flattened positions */
    flat = KH == 1 && KW == 1 && !cond && s[0] == 1 && s[1] == 1 && lo[0] == 0 && lo[1] == 0 &&
           OH == H && OW == W;
    /* (on the x86 targets from 8 vectors of positions: a 7x7 plane is 49
     * positions, 64 in the positions tile's two 8-lane vectors of AVX2,
     * and the channel tile's 7 rows ran mobilenet_v2's 7x7 1x1 convs 5 to
     * 30% faster, minimum of 20 runs, x86-64-avx2 on an AVX-512 host) */
    if (flat && ng == 1 && OH * OW >= (t->family->portable ? 4 : 8) * (t->vector_bits / 32))
        return conv_positions(L, t, c, &pl, xl->buf, N, Ci, OH, OW);
    if (!flat && ng == 1 && Ci <= ROWS_MAX_CHANNELS && !t->family->portable && OW >= t->vector_bits / 32 &&
        Cx == Ci) {
        Window wn = tpl_window_make(N, Co, H, W, OH, OW, KH, KW, s, d, lo, hi);
        return conv_rows(L, t, c, &pl, xl->buf, &wn);
    }
    /* a grouped conv: the tiles of one group (Co / ng output channels
     * from its Ci input channels), the groups' channel blocks one after
     * the other in the cb loop */
    pl.groups = ng;
    tpl_plan_tile(&pl, t, Co / ng, flat ? OH * OW : OW);
    tpl_strided_rows(&pl, t, s[1], KW, flat ? OH * OW : OW);
    {
        const char *desc = tpl_conv_desc(L, N, Ci, H, W, Co / ng, KH, KW, s, d, lo, hi);
        TileKnobs kn;
        if (ng > 1)
            desc = arena_printf(L->arena, "%s,g%lld", desc, (long long)ng);
        kn = tpl_choose_knobs(L, t, TS_CONV, "conv2d", desc, flat ? OH * OW : OW, Co / ng, Ci * KH * KW, pl.P,
                              pl.V, 0, 0);
        tpl_plan_set(&pl, &kn);
    }
    if (tpl_pack_weights(L, &pl))
        return 1;
    {
        int64_t rows = flat ? OH * OW : OW;
        T = tpl_ceil_div(rows, pl.P);
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
    tpl_conv_blocks(t, &pl, Ci, KH * KW, KH * KW == 1, OHx, T, &kc, &G);
    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", ng * pl.ncb);
    ogv = lower_itervar(L, "og", tpl_ceil_div(OHx, G));
    ohv = lower_itervar(L, "oh", kc < Ci ? G : OHx);
    owv = lower_itervar(L, "ot", T);
    pv = lower_itervar(L, "p", pl.P);
    vv = lower_itervar(L, "v", pl.VL);
    acc = tpl_conv_reduce_vars(L, &pl, Ci, kc, G, T, &ogv, &ohv, &owv, rv, &rcbv, &ohe, &r1e, &accb);
    /* the channel block within its group (cbl) and, grouped, the group's
     * first output channel (gbase) */
    cbl = ex_var(L, &cbv);
    if (ng > 1) {
        Expr *gi = pl.ncb > 1 ? ex_binary(L, BIN_DIV, ex_var(L, &cbv), ex_int(L, pl.ncb)) : ex_var(L, &cbv);
        cbl = pl.ncb > 1 ? ex_binary(L, BIN_MOD, ex_var(L, &cbv), ex_int(L, pl.ncb)) : ex_int(L, 0);
        gbase = ex_mul(L, gi, ex_int(L, pl.co));
        xbase = ex_mul(L, gi, ex_int(L, Ci)); /* its first input channel */
    }
    /* source of the tile's products: plane base + row * Wp + column */
    if (copy) {
        src = lower_buf_temp(L, "xpad", DT_FLOAT32, Cx * Hp * Wp);
        body = tpl_copy_padded(L, src, xbuf, &nv, Cx, flat ? 1 : H, flat ? H * W : W, Hp, Wp,
                           flat ? 0 : lo[0], flat ? 0 : lo[1], tpl_copy_lanes(t));
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
        Expr *plane = xbase ? ex_add(L, xbase, r1e) : r1e;
        Expr *aidx;
        if (!copy)
            plane = ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, Cx)), plane);
        if (!copy && !flat) {
            row = ex_add(L, row, ex_int(L, lo[0]));
            col = ex_add(L, col, ex_int(L, lo[1]));
        }
        aidx = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, plane, ex_int(L, Hp)), row), ex_int(L, Wp)), col);
        tile = tpl_update_nest(L, t, &pl, acc, rv, &pv, &vv, src, aidx, ex_var(L, &cbv), r1e, accb);
    }
    /* init and epilogue: the stage's axes in terms of the tile */
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    {
        /* co: the channel within the group, gch() the stage's */
        Expr *co = ex_add(L, ex_mul(L, cbl, ex_int(L, pl.VL)), ex_var(L, &vv));
        Expr *q = ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, pl.P)), ex_var(L, &pv));
        Expr *rows = flat ? ex_int(L, OH * OW) : ex_int(L, OW);
        Expr *aidx = ex_add(L, accb, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, pl.VL)), ex_var(L, &vv)));
        Expr *accv = ex_load(L, acc, aidx);
        Expr *index;
        Expr *iv;
        map[c->axes[0].var] = ex_var(L, &nv);
        /* init may read per-channel data: clamp padded channels and rows */
        map[c->axes[1].var] = gch(L, gbase, pl.co % pl.VL ? ex_binary(L, BIN_MIN, co, ex_int(L, pl.co - 1)) : co);
        tpl_conv_map_init(L, c, map, flat, flat || T * pl.P != OW, q, ohe, OH, OW);
        {
            /* channels as vo vectors of vi lanes: a vectorized init */
            IterVar vo = lower_itervar(L, "vo", pl.V), vi = lower_itervar(L, "vi", pl.lanes);
            Expr *co2 = ex_add(L, ex_add(L, ex_mul(L, cbl, ex_int(L, pl.VL)),
                                         ex_mul(L, ex_var(L, &vo), ex_int(L, pl.lanes))),
                               ex_var(L, &vi));
            Expr *ai2 = ex_add(L, accb, ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, pl.VL)),
                                                     ex_mul(L, ex_var(L, &vo), ex_int(L, pl.lanes))),
                                           ex_var(L, &vi)));
            map[c->axes[1].var] =
                gch(L, gbase, pl.co % pl.VL ? ex_binary(L, BIN_MIN, co2, ex_int(L, pl.co - 1)) : co2);
            iv = tpl_init_value(L, c, map);
            init = st_store(L, acc, ai2, iv);
            init = st_for(L, &vi, init);
            init->for_kind = FOR_VECTORIZE;
            init = st_for(L, &vo, init);
            init = st_for(L, &pv, init);
        }
        /* the epilogue stores only real channels and positions */
        map[c->axes[1].var] = gch(L, gbase, co);
        tpl_conv_map_out(L, c, map, flat, q, OW);
        index = lower_out_index(L, c);
        if (c->post && t->family->portable) {
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
            m1[c->axes[1].var] = gch(L, gbase, pl.co % pl.VL ? ex_binary(L, BIN_MIN, co, ex_int(L, pl.co - 1)) : co);
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
    tpl_conv_tile_nest(L, &pl, acc, body, init, tile, epi, kc < Ci, ohe, OHx, G, &nv, &cbv, &ogv, &ohv, &owv, &rcbv);
    return 0;
}
