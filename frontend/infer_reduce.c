/*
 * Shape and type inference of the reductions: the ten Reduce* operators,
 * Softmax and LogSoftmax (lowered by lower/op_reduce.c).
 *
 * A Reduce* node's axes (an attribute, or from ReduceSum 13 and the others
 * 18 an input) and keepdims are parsed once into the node's ReduceParams
 * (ir/params.h). Axes given by an input that is not a compile-time constant
 * fall back to the declared output shape; the lowering then recovers them
 * from the two static shapes.
 */
#include "infer.h"

#include <string.h>

/* Axes input form: ReduceSum from opset 13, the others from opset 18. */
static int axes_from_input(const Node *n)
{
    return n->op == OP_ReduceSum ? n->opset >= 13 : n->opset >= 18;
}

static int infer_reduce(Graph *g, Node *n, Diag *d)
{
    Value *x;
    const int64_t *axes = NULL;
    int64_t na = -1, dims[TVMCC_MAX_RANK];
    int i, r = 0;
    ReduceParams p;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    /* bool: ReduceMax (any) and ReduceMin (all) from opset 20 */
    if (!(x->dtype == DT_BOOL && n->opset >= 20 &&
          (n->op == OP_ReduceMax || n->op == OP_ReduceMin)) &&
        infer_need_numeric(n, x, "input[0]", d))
        return 1;
    memset(&p, 0, sizeof p);
    p.keepdims = attr_int(n, "keepdims", 1, d) != 0;
    p.identity = attr_int(n, "noop_with_empty_axes", 0, d) != 0; /* until axes are read */
    if (axes_from_input(n)) {
        if (n->n_in > 1 && n->in[1] >= 0) {
            if (need_input(g, n, 1, d))
                return 1;
            na = value_const_ints(g, n->in[1], &axes);
            if (na < 0) {
                p.identity = 0;
                p.runtime_axes = 1;
                node_set_params(g, n, PARAMS_REDUCE, &p, sizeof p);
                return infer_use_declared_as(g, n, 0, x->dtype, d,
                                             "axes input is computed at run time");
            }
        }
    } else {
        if (n->n_in > 1 && n->in[1] >= 0)
            return diag_error(d, n, "input[1]", "axes is an attribute before opset %d",
                              n->op == OP_ReduceSum ? 13 : 18);
        axes = attr_ints(n, "axes", &na, d);
    }
    if (na <= 0 && !p.identity)
        p.mask = (1u << x->rank) - 1;
    for (i = 0; i < na; i++) {
        int ax;
        if (infer_axis(n, axes[i], x->rank, &ax, d, "axes"))
            return 1;
        p.mask |= 1u << ax;
    }
    p.identity = na <= 0 && p.identity;
    for (i = 0; i < x->rank; i++) {
        if (!((p.mask >> i) & 1))
            dims[r++] = x->dims[i];
        else if (p.keepdims)
            dims[r++] = 1;
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    node_set_params(g, n, PARAMS_REDUCE, &p, sizeof p);
    return value_set(g, n->out[0], x->dtype, r, dims, d, n);
}

int infer_ReduceMean(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceSum(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceMax(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceMin(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceProd(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceSumSquare(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceL1(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceL2(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceLogSum(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }
int infer_ReduceLogSumExp(Graph *g, Node *n, Diag *d) { return infer_reduce(g, n, d); }

static int infer_softmax(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int ax;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 1)
        return diag_error(d, n, "input[0]", "a scalar has no axis to normalise over");
    if (infer_axis(n, attr_int(n, "axis", n->opset >= 13 ? -1 : 1, d), x->rank, &ax, d, "axis"))
        return 1;
    infer_set_axis(g, n, ax, NULL);
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}

int infer_Softmax(Graph *g, Node *n, Diag *d) { return infer_softmax(g, n, d); }
int infer_LogSoftmax(Graph *g, Node *n, Diag *d) { return infer_softmax(g, n, d); }
