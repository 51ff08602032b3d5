/*
 * Schedules of the Winograd transforms (passes/winograd.c,
 * lower/op_winograd.c) on the x86 targets, whose vector is the block of
 * b channels (lanes == b):
 *
 *   WinogradInput: its 16 stages (one per transformed value V_xi) have the
 *     same axes (n, th, tw, cb, l); they run as one nest
 *       for n: parallel for th: for tw: for cb: vectorized for l:
 *           V_0[..] = ..; ...; V_15[..] = ..
 *     so that the 16 loads of a tile's 4 x 4 patch are loaded once for all
 *     16 (the C compiler shares them between the stores) and the input is
 *     read once instead of 16 times.
 *   WinogradOutput (with its fused activation and residual add): the
 *     outputs of one tile together,
 *       for n: parallel for kb: for th: for tw: for r < 2: for s < 2:
 *           if (2*th + r < OH && 2*tw + s < OW): vectorized for l: y = ..
 *     with (r, s) constants in each of the four copies, so that the
 *     selects on oh % 2 and ow % 2 fold to one arm: 9 of the 16 products'
 *     vectors per output, each loaded once for the tile's 4 outputs.
 */
#include "sched.h"
#include "loopq.h"
#include "tpl_packed.h"

static int lanes_of(const Target *t)
{
    return t && t->fma_tile && !t->family->portable ? t->vector_bits / 32 : 0;
}

static Stmt *vec_loop(Lower *L, IterVar *iv, Stmt *body)
{
    Stmt *s = st_for(L, iv, body);
    s->for_kind = FOR_VECTORIZE;
    return s;
}

static int winograd_input(Lower *L, const Target *t)
{
    Kernel *k = L->k;
    const Compute *c0 = &k->stages[0];
    IterVar v[5];
    Expr **map;
    Stmt *seq, *st;
    int i, j;
    if (k->n_stages != 16 || c0->n_axes != 5 || c0->axes[4].extent != lanes_of(t))
        return 1;
    for (i = 0; i < 16; i++) {
        const Compute *c = &k->stages[i];
        if (c->rop != RED_NONE || c->n_axes != 5)
            return 1;
        for (j = 0; j < 5; j++)
            if (c->axes[j].extent != c0->axes[j].extent)
                return 1;
    }
    for (j = 0; j < 5; j++)
        v[j] = lower_itervar(L, j == 0 ? "n" : j == 1 ? "th" : j == 2 ? "tw" : j == 3 ? "cb" : "l",
                             c0->axes[j].extent);
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    seq = st_seq(L, 16);
    for (i = 0; i < 16; i++) {
        const Compute *c = &k->stages[i];
        for (j = 0; j < 5; j++)
            map[c->axes[j].var] = ex_var(L, &v[j]);
        seq->body[i] = st_store(L, c->out_buf, lq_subst(L, lower_out_index(L, c), map, NULL),
                                lq_subst(L, c->body, map, NULL));
        for (j = 0; j < 5; j++)
            map[c->axes[j].var] = NULL;
    }
    st = vec_loop(L, &v[4], seq);
    st = st_for(L, &v[3], st);
    st = st_for(L, &v[2], st);
    st = st_for(L, &v[1], st);
    st->for_kind = FOR_PARALLEL;
    k->body = st_for(L, &v[0], st);
    return 0;
}

static int has_node(const Lower *L, int op)
{
    int i;
    for (i = 0; i < L->k->n_nodes; i++)
        if (L->g && (int)L->g->nodes[L->k->nodes[i]].op == op)
            return 1;
    return 0;
}

/* e (an expression of stage c) at output (n, kb, oh, ow, l): n, kb and l
 * plain renames, oh and ow through lq_subst_var, which refolds
 * (2*th + r) % 2 and / 2 and keeps a constant select's arm. */
static Expr *at_output(Lower *L, const Compute *c, Expr *e, Expr *const *at)
{
    int j;
    for (j = 0; j < 5; j++)
        e = lq_subst_var(L, e, c->axes[j].var, at[j]);
    return e;
}

static int winograd_output(Lower *L, const Target *t)
{
    Kernel *k = L->k;
    const Compute *c = &k->stages[k->n_stages - 1];
    IterVar n, kb, th, tw, l;
    int64_t OH, OW;
    Stmt *seq, *st;
    Expr *idx, *val;
    int i, r, s;
    if (c->rop != RED_NONE || c->n_axes != 5 || c->axes[4].extent != lanes_of(t))
        return 1;
    for (i = 0; i + 1 < k->n_stages; i++)
        if (k->bufs[k->stages[i].out_buf].scope != BUF_UNUSED)
            return 1;
    OH = c->axes[2].extent;
    OW = c->axes[3].extent;
    n = lower_itervar(L, "n", c->axes[0].extent);
    kb = lower_itervar(L, "kb", c->axes[1].extent);
    th = lower_itervar(L, "th", (OH + 1) / 2);
    tw = lower_itervar(L, "tw", (OW + 1) / 2);
    seq = st_seq(L, 4);
    for (r = 0; r < 2; r++)
        for (s = 0; s < 2; s++) {
            Expr *at[5], *guard = NULL;
            l = lower_itervar(L, "l", c->axes[4].extent);
            at[0] = ex_var(L, &n);
            at[1] = ex_var(L, &kb);
            at[2] = ex_add(L, ex_mul(L, ex_var(L, &th), ex_int(L, 2)), ex_int(L, r));
            at[3] = ex_add(L, ex_mul(L, ex_var(L, &tw), ex_int(L, 2)), ex_int(L, s));
            at[4] = ex_var(L, &l);
            idx = at_output(L, c, lower_out_index(L, c), at);
            val = at_output(L, c, c->body, at);
            st = vec_loop(L, &l, st_store(L, c->out_buf, idx, val));
            if (r && OH % 2)
                guard = ex_lt(L, ex_var(L, &th), ex_int(L, OH / 2));
            if (s && OW % 2) {
                Expr *g2 = ex_lt(L, ex_var(L, &tw), ex_int(L, OW / 2));
                guard = guard ? ex_and(L, guard, g2) : g2;
            }
            seq->body[2 * r + s] = guard ? st_if(L, guard, st) : st;
        }
    st = st_for(L, &tw, seq);
    st = st_for(L, &th, st);
    st = st_for(L, &kb, st);
    st->for_kind = FOR_PARALLEL;
    k->body = st_for(L, &n, st);
    return 0;
}

int tpl_winograd(Lower *L, const Target *t)
{
    if (!L->g || !lanes_of(t))
        return 1;
    if (L->k->op == OP_WinogradInput)
        return winograd_input(L, t);
    if (has_node(L, OP_WinogradOutput))
        return winograd_output(L, t);
    return 1;
}
