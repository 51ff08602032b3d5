/*
 * Lowering of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
 *
 * Scores are viewed as [N, C, D] (D the product of the trailing dimensions)
 * and labels as [N, D]. The per-position loss is -score[n, t, d] * w[t]
 * where w is the class weight (1 without weights) and is 0 where the label
 * equals ignore_index. Reduction "none" writes it per position; "sum" is one
 * reduction stage to a scalar; "mean" divides by the sum of the weights that
 * were applied (a second scalar stage), or by N*D when neither weights nor
 * ignore_index are given, as the ONNX reference does. Labels are clamped
 * into [0, C) before any load so that an ignored label of any value (or a
 * bad one) never reads out of bounds.
 *
 * SoftmaxCrossEntropyLoss first computes log-softmax over the class axis
 * (max, sum of exp, normalise: three stages) into its second output or a
 * scratch buffer, then applies the same loss stages to it.
 */
#include "lower.h"

#include <string.h>

typedef struct Loss {
    int64_t v3[3];     /* scores as [N, C, D] */
    int lp;            /* buffer of the log-probabilities (or scores) */
    int tb;            /* labels */
    int wb;            /* weights, -1 if none */
    int has_ii;        /* ignore_index given */
    int64_t ii;
    DType ct;          /* compute type */
} Loss;

/* Weight applied at label position (n, d) of stage c, and the label clamped
 * into range through *tc. */
static Expr *pos_weight(Lower *L, const Loss *s, Expr *const *nd, Expr **tc)
{
    int64_t d2[2];
    Expr *t, *w;
    d2[0] = s->v3[0];
    d2[1] = s->v3[2];
    t = ex_cast(L, DT_INT64, ex_load_nd(L, s->tb, 2, d2, nd));
    *tc = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, t, ex_int(L, 0)), ex_int(L, s->v3[1] - 1));
    w = s->wb >= 0 ? ex_load(L, s->wb, *tc) : ex_float(L, s->ct, 1.0);
    if (s->has_ii)
        w = ex_select(L, ex_binary(L, BIN_EQ, t, ex_int(L, s->ii)), ex_float(L, s->ct, 0.0), w);
    return w;
}

/* -lp[n, tc, d] * weight at (n, d) */
static Expr *pos_loss(Lower *L, const Loss *s, Expr *const *nd)
{
    Expr *tc, *w = pos_weight(L, s, nd, &tc), *xi[3];
    xi[0] = nd[0];
    xi[1] = tc;
    xi[2] = nd[1];
    return ex_mul(L, ex_unary(L, UN_NEG, ex_load_nd(L, s->lp, 3, s->v3, xi)), w);
}

static int loss_stages(Lower *L, Node *n, const Loss *s)
{
    LossReduce red = (LossReduce)node_loss(n)->reduction;
    int ob = lower_buf_value(L, n->out[0]);
    int64_t d2[2];
    Expr *nd[2];
    Compute *c;
    d2[0] = s->v3[0];
    d2[1] = s->v3[2];
    if (red == LOSS_NONE) {
        c = lower_stage(L, "loss", ob, 2, d2);
        nd[0] = ex_var(L, &c->axes[0]);
        nd[1] = ex_var(L, &c->axes[1]);
        c->body = pos_loss(L, s, nd);
        return 0;
    }
    if (red == LOSS_MEAN && (s->wb >= 0 || s->has_ii)) {
        int sb = lower_buf_temp(L, "wsum", s->ct, 1);
        Expr *tc;
        c = lower_stage(L, "weight_sum", sb, 0, NULL);
        nd[0] = ex_var(L, lower_raxis(L, c, d2[0]));
        nd[1] = ex_var(L, lower_raxis(L, c, d2[1]));
        c->rop = RED_SUM;
        c->body = pos_weight(L, s, nd, &tc);
        c = lower_stage(L, "loss_mean", ob, 0, NULL);
        nd[0] = ex_var(L, lower_raxis(L, c, d2[0]));
        nd[1] = ex_var(L, lower_raxis(L, c, d2[1]));
        c->rop = RED_SUM;
        c->body = pos_loss(L, s, nd);
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, s->ct), ex_load(L, sb, ex_int(L, 0)));
        return 0;
    }
    c = lower_stage(L, "loss_sum", ob, 0, NULL);
    nd[0] = ex_var(L, lower_raxis(L, c, d2[0]));
    nd[1] = ex_var(L, lower_raxis(L, c, d2[1]));
    c->rop = RED_SUM;
    c->body = pos_loss(L, s, nd);
    if (red == LOSS_MEAN)
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, s->ct),
                            ex_float(L, s->ct, (double)(d2[0] * d2[1])));
    return 0;
}

static void loss_init(Lower *L, Node *n, Loss *s)
{
    const Value *x = &L->g->values[n->in[0]];
    int i;
    s->v3[0] = x->dims[0];
    s->v3[1] = x->dims[1];
    s->v3[2] = 1;
    for (i = 2; i < x->rank; i++)
        s->v3[2] *= x->dims[i];
    s->tb = lower_buf_value(L, n->in[1]);
    s->wb = n->n_in > 2 && n->in[2] >= 0 ? lower_buf_value(L, n->in[2]) : -1;
    s->has_ii = node_loss(n)->has_ignore_index;
    s->ii = node_loss(n)->ignore_index;
    s->ct = dtype_compute(x->dtype);
}

int lower_NegativeLogLikelihoodLoss(Lower *L, Node *n)
{
    Loss s;
    loss_init(L, n, &s);
    s.lp = lower_buf_value(L, n->in[0]);
    return loss_stages(L, n, &s);
}

int lower_SoftmaxCrossEntropyLoss(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int xb = lower_buf_value(L, n->in[0]), mb, sb, i;
    int64_t d2[2];
    Expr *xi[3], *oi[2];
    Compute *c;
    Loss s;
    loss_init(L, n, &s);
    d2[0] = s.v3[0];
    d2[1] = s.v3[2];
    if (n->n_out > 1 && n->out[1] >= 0)
        s.lp = lower_buf_value(L, n->out[1]);
    else
        s.lp = lower_buf_temp(L, "logp", x->dtype, value_numel(x));
    mb = lower_buf_temp(L, "max", s.ct, d2[0] * d2[1]);
    sb = lower_buf_temp(L, "sum", s.ct, d2[0] * d2[1]);

    c = lower_stage(L, "classmax", mb, 2, d2);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, lower_raxis(L, c, s.v3[1]));
    xi[2] = ex_var(L, &c->axes[1]);
    c->rop = RED_MAX;
    c->body = ex_load_nd(L, xb, 3, s.v3, xi);

    c = lower_stage(L, "classsum", sb, 2, d2);
    xi[0] = oi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, lower_raxis(L, c, s.v3[1]));
    xi[2] = oi[1] = ex_var(L, &c->axes[1]);
    c->rop = RED_SUM;
    c->body = ex_unary(L, UN_EXP, ex_binary(L, BIN_SUB, ex_load_nd(L, xb, 3, s.v3, xi),
                                            ex_load_nd(L, mb, 2, d2, oi)));

    c = lower_stage(L, "logsoftmax", s.lp, 3, s.v3);
    for (i = 0; i < 3; i++)
        xi[i] = ex_var(L, &c->axes[i]);
    oi[0] = xi[0];
    oi[1] = xi[2];
    c->body = ex_binary(L, BIN_SUB,
                        ex_binary(L, BIN_SUB, ex_load_nd(L, xb, 3, s.v3, xi),
                                  ex_load_nd(L, mb, 2, d2, oi)),
                        ex_unary(L, UN_LOG, ex_load_nd(L, sb, 2, d2, oi)));
    return loss_stages(L, n, &s);
}
