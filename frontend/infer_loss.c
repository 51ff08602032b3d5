/*
 * Shape and type inference for the loss operators NegativeLogLikelihoodLoss
 * and SoftmaxCrossEntropyLoss. Both take scores [N, C, d1..dk], class labels
 * [N, d1..dk] and optional per-class weights [C]; the loss is per label
 * position with reduction "none", else a scalar. SoftmaxCrossEntropyLoss
 * may also return the log-probabilities, shaped like the scores.
 */
#include "infer.h"

#include <string.h>

static int infer_loss(Graph *g, Node *n, Diag *d)
{
    Value *x, *t;
    const char *red = attr_string(n, "reduction", "mean", d);
    int i;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    t = in_val(g, n, 1);
    if (!dtype_is_float(x->dtype))
        return diag_error(d, n, "input[0]", "element type %s is not supported (float expected)",
                          dtype_name(x->dtype));
    if (t->dtype != DT_INT64 && t->dtype != DT_INT32)
        return diag_error(d, n, "input[1]", "label type %s is not int32 or int64",
                          dtype_name(t->dtype));
    if (x->rank < 2)
        return diag_error(d, n, "input[0]", "rank %d is below 2 (N x C expected)", x->rank);
    if (t->rank != x->rank - 1)
        return diag_error(d, n, "input[1]", "label rank %d is not the score rank %d minus 1",
                          t->rank, x->rank);
    for (i = 0; i < t->rank; i++)
        if (t->dims[i] != x->dims[i == 0 ? 0 : i + 1])
            return diag_error(d, n, "input[1]", "label dimension %d (%lld) does not match the "
                              "scores", i, (long long)t->dims[i]);
    if (x->dims[1] < 1)
        return diag_error(d, n, "input[0]", "there are no classes");
    if (n->n_in > 2 && n->in[2] >= 0) {
        Value *w;
        if (need_input(g, n, 2, d))
            return 1;
        w = in_val(g, n, 2);
        if (w->rank != 1 || w->dims[0] != x->dims[1] || w->dtype != x->dtype)
            return diag_error(d, n, "input[2]", "weights must be a 1-D %s tensor of length %lld",
                              dtype_name(x->dtype), (long long)x->dims[1]);
    }
    if (strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
        return diag_error(d, n, "reduction", "must be none, sum or mean, not '%s'", red);
    {
        LossParams p;
        memset(&p, 0, sizeof p);
        p.reduction = !strcmp(red, "none") ? LOSS_NONE : !strcmp(red, "sum") ? LOSS_SUM : LOSS_MEAN;
        p.has_ignore_index = node_attr(n, "ignore_index") != NULL;
        p.ignore_index = attr_int(n, "ignore_index", 0, d);
        node_set_params(g, n, PARAMS_LOSS, &p, sizeof p);
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    if (value_set(g, n->out[0], x->dtype, strcmp(red, "none") ? 0 : t->rank, t->dims, d, n))
        return 1;
    if (out_val(g, n, 1))
        return value_set(g, n->out[1], x->dtype, x->rank, x->dims, d, n);
    return 0;
}

int infer_NegativeLogLikelihoodLoss(Graph *g, Node *n, Diag *d) { return infer_loss(g, n, d); }
int infer_SoftmaxCrossEntropyLoss(Graph *g, Node *n, Diag *d) { return infer_loss(g, n, d); }
