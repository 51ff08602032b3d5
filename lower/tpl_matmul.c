/*
 * MatMul / Gemm tiles of the packed-panel template (tpl_packed.c): the
 * constant right operand packed into column panels, the left one copied
 * into row panels per row block (a stage of its own that compute_at moves
 * into the block loop) or, for small row tiles, read in place
 * (MM_UNPACKED_A_BYTES), L2 row groups and L1 reduction blocks, and on the
 * x86 targets tiles that accumulate in the output itself (mm_direct).
 */
#include "tpl_packed.h"

#include <string.h>

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
    if (t->family->portable || Nn % VL)
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

/* Where a tile reads A: the row panels the copy wrote (packed: buf is
 * ap[mt][k][p]) or A itself (buf is A; direct tiles only, whose rows all
 * exist). A's row m, column k is at c0 + m*cm + k*ck of A's buffer. */
typedef struct ASrc {
    int buf, packed;
    int64_t cm, ck, c0;
} ASrc;

/* The offset of A(m, k) in A's buffer. */
static Expr *mm_a_offset(Lower *L, const ASrc *as, Expr *m, Expr *k)
{
    return ex_add(L, ex_add(L, ex_mul(L, m, ex_int(L, as->cm)), ex_mul(L, k, ex_int(L, as->ck))),
                  ex_int(L, as->c0));
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
static void mm_phases(Lower *L, const Target *t, const Compute *c, const Plan *pl, int ob, int64_t R, int64_t M,
                      int64_t Nn, int64_t K, int64_t kc, int mvar, int nvar, Expr *mte, const IterVar *cbv,
                      const IterVar *vv, const IterVar *rv, const IterVar *kbv, const IterVar *miv, const ASrc *as,
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
    if (as->packed)
        aidx = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, mte, ex_int(L, K)), kk), ex_int(L, pl->P)), ex_var(L, &pv));
    else
        aidx = mm_a_offset(L, as, m, kk);
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
    iv = tpl_init_value(L, c, map);
    *init = st_for(L, &pv, st_for(L, vv, st_store(L, ob, oix, iv)));
    *tile = tpl_tile(L, ob, oix, ex_load(L, as->buf, aidx), ex_load(L, pl->pbuf, widx), rv, &pv, vv);
    /* B's column panel streams from L2 once per row tile */
    (*tile)->prefetch = tpl_weight_prefetch(t, pl->VL);
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
        if (tpl_ceil_div(M, pl->P) * pl->P != M)
            guard = ex_and(L, guard, ex_lt(L, m, ex_int(L, M)));
        map[nvar] = n;
        map[mvar] = m;
        st = tpl_store_out(L, c, index, map, accv);
        *epi = st_for(L, &pv, st_for(L, vv, st_if(L, guard, st)));
    }
}

/* Column panels (of VL columns) up to which the tiles' parallel loop runs
 * over the row tiles instead of the column panels (when there are at
 * least twice as many row tiles): with few columns, the column split made
 * each thread read the block's whole row panel, which the copy had just
 * written on one core, for a few columns of B; over the rows each thread
 * reads half of it and all of B (at most 4 * VL columns, small).
 * Winograd's products are such (resnet18's 64-channel ones: 784 x 64 x
 * 64). Paired medians at two threads, Intel family 6 model 207, AVX2
 * (bench/ab.sh THREADS=2): resnet18 0.94-0.996, googlenet 0.98,
 * squeezenet1_1 0.986; at one thread (the loop order alone) 1.00. Up to 8
 * panels: squeezenet1_1 1.011, so 4. (Tiles that read A in place,
 * MM_UNPACKED_A_BYTES, always run parallel over the rows.) */
#define MM_ROWS_PARALLEL_NCB 4

/* Largest row tile of A (P rows of K floats) that direct tiles read in
 * place instead of from the row-panel copy, when A's rows are contiguous
 * (not a transposed A: P floats per cache line), all of B (the column
 * panels each row tile passes over) fits the L2 budget and there are at
 * least twice as many row tiles as column panels (or one panel): the
 * tile's rows stay in L1 while its column panels pass over them, so the
 * copy (a read and a write of all of A, serial per row block, before the
 * parallel loop) bought nothing; with it gone the row tiles need no blocks
 * and run as one parallel loop over rows. Winograd's products are such
 * (resnet18's: 784 x 64 x 64, 196 x 128 x 128). Paired medians, Intel
 * family 6 model 207, AVX2 (bench/ab.sh): resnet18 two threads 0.91 then
 * 0.96 (the 128-channel products, 8 panels), one thread 0.955 and 0.99;
 * googlenet 0.96 / 0.97 (two / one thread). */
#define MM_UNPACKED_A_BYTES 16384

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
    *G = tpl_l2_budget(t) / ((int64_t)P * K * 4);
    if (*G < 1)
        *G = 1;
    if (*G > T)
        *G = T;
    *kc = K;
    if (direct && K * VL * 4 <= tpl_l2_budget(t) / 2)
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

int tpl_matmul(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *al, *bl;
    LqAffine aa, ab;
    Plan pl;
    int i, na = c->n_axes, mvar, nvar, kvar, vars[2], acc, direct, rows_par;
    int64_t M, Nn, K, T, cm, ck, nmb;
    IterVar cbv, vv, rv[3], mbv, miv, kbv, pk[3];
    ASrc as;
    Expr *mte;
    int64_t G, kc;
    Stmt *pack, *seq, *loops, *decl, *body;
    if (na < 2 || c->n_raxes != 1)
        return 1;
    for (i = 0; i + 2 < na; i++)
        if (c->axes[i].extent != 1)
            return 1;
    if (tpl_operands(L, c, &al, &bl, NULL))
        return 1;
    if (!tpl_f32_load(k, al) || al->buf == c->out_buf)
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
    tpl_plan_tile(&pl, t, Nn, M);
    T = tpl_ceil_div(M, pl.P);
    mm_blocking(t, pl.P, K, T, pl.VL, mm_direct(L, t, c, mvar, nvar, Nn, pl.VL), &G, &kc);
    {
        TileKnobs kn = tpl_choose_knobs(L, t, TS_MATMUL, "matmul",
                                    arena_printf(L->arena, "m%lld,k%lld,n%lld", (long long)M, (long long)K,
                                                 (long long)Nn),
                                    M, Nn, K, pl.P, pl.V, G, kc);
        tpl_plan_set(&pl, &kn);
        G = kn.G;
        kc = kn.kc;
    }
    if (tpl_pack_weights(L, &pl))
        return 1;
    T = tpl_ceil_div(M, pl.P);
    if (G > T)
        G = T;
    direct = mm_direct(L, t, c, mvar, nvar, Nn, pl.VL);
    as.cm = cm;
    as.ck = ck;
    as.c0 = aa.c0;
    as.packed = !(direct && kc == K && ck == 1 && (int64_t)pl.P * K * 4 <= MM_UNPACKED_A_BYTES &&
                  K * Nn * 4 <= tpl_l2_budget(t) && (pl.ncb == 1 || T >= 2 * pl.ncb));
    rows_par = kc == K && pl.ncb > 1 && (!as.packed || (pl.ncb <= MM_ROWS_PARALLEL_NCB && G >= 2 * pl.ncb));
    as.buf = al->buf; /* the copy's buffer replaces it below when packed */
    if (!as.packed)
        G = T; /* each tile reads its rows of A in place: one block of all the row tiles */
    nmb = tpl_ceil_div(T, G);
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
    pack = NULL;
    /* the row-panel copy, a stage of its own: ap[mt][k][p] = A(min(mt*P +
     * p, M-1), k) over the tiles of whole row blocks (nmb*G), which
     * compute_at below moves into the row block loop */
    if (as.packed) {
        int64_t pd[3];
        Expr *pidx[3], *m;
        Compute *ps;
        pd[0] = nmb * G;
        pd[1] = K;
        pd[2] = pl.P;
        as.buf = lower_buf_temp(L, "apack", DT_FLOAT32, pd[0] * K * pl.P);
        ps = lower_stage(L, "apack", as.buf, 3, pd);
        c = &k->stages[0];
        for (i = 0; i < 3; i++) {
            pk[i] = ps->axes[i];
            pidx[i] = ex_var(L, &pk[i]);
            pk[i].name = arena_printf(L->arena, "%s%d", i == 0 ? "mt" : i == 1 ? "k" : "p", pk[i].var);
            k->var_names[pk[i].var] = pk[i].name;
        }
        m = ex_binary(L, BIN_MIN, ex_add(L, ex_mul(L, pidx[0], ex_int(L, pl.P)), pidx[2]), ex_int(L, M - 1));
        ps->rop = RED_NONE;
        ps->body = ex_load(L, al->buf, mm_a_offset(L, &as, m, pidx[1]));
        pack = st_store(L, as.buf, ex_offset(L, 3, pd, pidx), ps->body);
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
            mm_phases(L, t, c, &pl, direct ? c->out_buf : acc, rows[rs_], M, Nn, K, kc, mvar, nvar, mte,
                      &cbv, &vv, rv, kc < K ? &kbv : NULL, &miv, &as, ph[0] + rs_, ph[1] + rs_,
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
            if (pl.ncb > 1)
                loops->for_kind = FOR_PARALLEL;
        } else if (rows_par) {
            /* for mb: parallel for mi: for cb: { init; tile; epilogue } */
            loops = st_for(L, &cbv, body);
            loops = st_for(L, &miv, loops);
            loops->for_kind = FOR_PARALLEL;
        } else {
            loops = st_for(L, &miv, body);
            if (pl.ncb == 1 && G > 1)
                loops->for_kind = FOR_PARALLEL;
            loops = st_for(L, &cbv, loops);
            if (pl.ncb > 1)
                loops->for_kind = FOR_PARALLEL;
        }
        loops = st_for(L, &mbv, loops);
    }
    if (as.packed) {
        seq = st_seq(L, 2);
        seq->body[0] = pack;
        seq->body[1] = loops;
        k->body = seq;
        mm_pack_schedule(L, k->n_stages - 1, pk, mbv.var);
    } else {
        k->body = loops;
    }
    if (!lq_stmt_uses_buf(k->body, pl.wbuf))
        k->bufs[pl.wbuf].scope = BUF_UNUSED;
    return 0;
}
