/*
 * Plane sums of the packed-panel template (tpl_packed.c), AVX2 and AVX-512:
 * single-stage float32 sums over the innermost contiguous axes of their
 * loads (global average pooling, ReduceMean over a plane), with the
 * vectors along the plane instead of across the output channels. The sum
 * is reassociated (rtol 1e-4), not bit-identical.
 */
#include "tpl_packed.h"

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
int tpl_plane_sum(Lower *L, const Target *t, Compute *c)
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
