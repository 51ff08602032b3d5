/*
 * Shape and type inference for the normalisations (LayerNormalization,
 * InstanceNormalization, MeanVarianceNormalization, LRN, LpNormalization,
 * GroupNormalization). The maths is in
 * lower/op_norm.c, which reads the attributes parsed here (ScalarParams).
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

int infer_LayerNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x, *p;
    ScalarParams sp;
    int axis, i, j, r, errs = d->errors;
    int64_t dims[TVMCC_MAX_RANK];
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (infer_axis(n, attr_int(n, "axis", -1, d), x->rank, &axis, d, "axis"))
        return 1;
    memset(&sp, 0, sizeof sp);
    sp.axis = axis;
    sp.epsilon = attr_float(n, "epsilon", 1e-5, d);
    if (infer_set_scalar(g, n, &sp, errs, d))
        return 1;
    for (i = 1; i < n->n_in; i++) {
        char field[32];
        int64_t od[TVMCC_MAX_RANK];
        if (!(p = in_val(g, n, i)))
            continue;
        snprintf(field, sizeof field, "input[%d]", i);
        if (p->rank > x->rank || infer_broadcast(n, x->rank, x->dims, p->rank, p->dims, &r, od,
                                                 d, field))
            return p->rank > x->rank ? diag_error(d, n, field, "rank above the input's") : 1;
        for (j = 0; j < r; j++)
            if (od[j] != x->dims[j])
                return diag_error(d, n, field, "does not broadcast to the input's shape");
    }
    if (infer_same_shape_out(g, n, 0, x, d))
        return 1;
    for (i = 0; i < x->rank; i++)
        dims[i] = i < axis ? x->dims[i] : 1;
    for (i = 1; i < 3 && i < n->n_out; i++) {
        Value *o = out_val(g, n, i);
        DType t = DT_FLOAT32;
        if (!o)
            continue;
        if (o->declared && dtype_is_float(o->dtype))
            t = o->dtype;
        if (value_set(g, n->out[i], t, x->rank, dims, d, n))
            return 1;
    }
    return 0;
}

int infer_InstanceNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ScalarParams sp;
    int i, errs = d->errors;
    memset(&sp, 0, sizeof sp);
    sp.epsilon = attr_float(n, "epsilon", 1e-5, d);
    if (infer_set_scalar(g, n, &sp, errs, d))
        return 1;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 3)
        return diag_error(d, n, "input[0]", "rank %d is below 3 (N x C x spatial)", x->rank);
    for (i = 1; i < 3; i++) {
        Value *p = in_val(g, n, i);
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            return diag_error(d, n, i == 1 ? "input[1]" : "input[2]",
                              "must be 1-D with %lld channels", (long long)x->dims[1]);
    }
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_MeanVarianceNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ScalarParams p;
    int64_t na, i;
    const int64_t *axes;
    int ax;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    memset(&p, 0, sizeof p);
    axes = attr_ints(n, "axes", &na, d);
    for (i = 0; axes && i < na; i++) {
        if (infer_axis(n, axes[i], x->rank, &ax, d, "axes"))
            return 1;
        p.mask |= 1u << ax;
    }
    if (!axes && x->rank != 4)
        return diag_error(d, n, "axes", "the default axes [0,2,3] need a rank-4 input");
    if (!axes)
        p.mask = 1u | 4u | 8u;
    node_set_params(g, n, PARAMS_SCALAR, &p, sizeof p);
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_LRN(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ScalarParams p;
    int errs = d->errors;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 3)
        return diag_error(d, n, "input[0]", "rank %d is below 3 (N x C x spatial)", x->rank);
    memset(&p, 0, sizeof p);
    p.size = attr_int(n, "size", 0, d);
    p.alpha = attr_float(n, "alpha", 1e-4, d);
    p.beta = attr_float(n, "beta", 0.75, d);
    p.bias = attr_float(n, "bias", 1.0, d);
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
    if (p.size < 1)
        return diag_error(d, n, "size", "required positive attribute is missing or invalid");
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_LpNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ScalarParams p;
    int errs = d->errors, axis;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 1)
        return diag_error(d, n, "input[0]", "a scalar has no axis to normalise over");
    memset(&p, 0, sizeof p);
    if (infer_axis(n, attr_int(n, "axis", -1, d), x->rank, &axis, d, "axis"))
        return 1;
    p.axis = axis;
    p.p = attr_int(n, "p", 2, d);
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
    if (p.p != 1 && p.p != 2)
        return diag_error(d, n, "p", "must be 1 or 2, got %lld", (long long)p.p);
    return infer_same_shape_out(g, n, 0, x, d);
}

/* GroupNormalization: statistics per (batch, group of C / num_groups
 * channels); scale and bias are per group in opset 18, per channel from
 * 21. stash_type (21) names the precision of the statistics: tvmcc
 * computes them in the input's compute type (float32, float64 for
 * float64 inputs), at least as precise as any float stash type. */
int infer_GroupNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ScalarParams p;
    int errs = d->errors, i;
    int64_t stash, want;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 2)
        return diag_error(d, n, "input[0]", "rank %d is below 2 (N x C x ...)", x->rank);
    memset(&p, 0, sizeof p);
    p.epsilon = attr_float(n, "epsilon", 1e-5, d);
    p.num_groups = attr_int(n, "num_groups", 0, d);
    stash = attr_int(n, "stash_type", 1, d);
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
    if (p.num_groups < 1 || x->dims[1] % p.num_groups)
        return diag_error(d, n, "num_groups", "must be a positive divisor of the %lld channels, "
                          "got %lld", (long long)x->dims[1], (long long)p.num_groups);
    if (n->opset >= 21 && !dtype_is_float((DType)stash))
        return diag_error(d, n, "stash_type", "must name a floating type, got %lld",
                          (long long)stash);
    want = n->opset >= 21 ? x->dims[1] : p.num_groups;
    for (i = 1; i < 3; i++) {
        Value *v = in_val(g, n, i);
        if (v->dtype != x->dtype)
            return diag_error(d, n, i == 1 ? "scale" : "bias", "type %s differs from X's %s",
                              infer_type_name(v->dtype), infer_type_name(x->dtype));
        if (v->rank != 1 || v->dims[0] != want)
            return diag_error(d, n, i == 1 ? "scale" : "bias", "must be 1-D with %lld entries "
                              "(one per %s in opset %d)", (long long)want,
                              n->opset >= 21 ? "channel" : "group", n->opset);
    }
    return infer_same_shape_out(g, n, 0, x, d);
}
