/*
 * Shape and type inference for the normalisations (LayerNormalization,
 * InstanceNormalization, MeanVarianceNormalization, LRN), CumSum, OneHot,
 * the scatters (ScatterElements, its deprecated form Scatter, ScatterND) and
 * the window generators (Hann, Hamming, Blackman). The maths is in
 * lower/op_norm.c, lower/op_index.c and lower/op_extra.c.
 *
 * OneHot's depth and a window's length are shape-like inputs: when they are
 * not compile-time constants the declared output shape is used.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

int infer_LayerNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x, *p;
    int axis, i, j, r;
    int64_t dims[TVMCC_MAX_RANK];
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (infer_axis(n, attr_int(n, "axis", -1, d), x->rank, &axis, d, "axis"))
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
    int i;
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
    int64_t na, i;
    const int64_t *axes;
    int ax;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    axes = attr_ints(n, "axes", &na, d);
    for (i = 0; axes && i < na; i++)
        if (infer_axis(n, axes[i], x->rank, &ax, d, "axes"))
            return 1;
    if (!axes && x->rank != 4)
        return diag_error(d, n, "axes", "the default axes [0,2,3] need a rank-4 input");
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_LRN(Graph *g, Node *n, Diag *d)
{
    Value *x;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 3)
        return diag_error(d, n, "input[0]", "rank %d is below 3 (N x C x spatial)", x->rank);
    if (attr_int(n, "size", 0, d) < 1)
        return diag_error(d, n, "size", "required positive attribute is missing or invalid");
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_CumSum(Graph *g, Node *n, Diag *d)
{
    Value *x, *a;
    const int64_t *av;
    int ax;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    a = in_val(g, n, 1);
    if (x->dtype == DT_BOOL || x->rank < 1)
        return diag_error(d, n, "input[0]", "a numeric tensor of rank >= 1 is required");
    if ((a->dtype != DT_INT32 && a->dtype != DT_INT64) || value_numel(a) != 1)
        return diag_error(d, n, "input[1]", "axis must be one int32 or int64 value");
    if (value_const_ints(g, n->in[1], &av) == 1 && infer_axis(n, av[0], x->rank, &ax, d, "axis"))
        return 1;
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_OneHot(Graph *g, Node *n, Diag *d)
{
    Value *idx, *vals;
    int64_t axis = attr_int(n, "axis", -1, d), dims[TVMCC_MAX_RANK];
    double depth;
    int ax, i, r = 0;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    idx = in_val(g, n, 0);
    vals = in_val(g, n, 2);
    if (value_numel(vals) != 2)
        return diag_error(d, n, "input[2]", "values must hold [off, on]");
    if (value_numel(in_val(g, n, 1)) != 1)
        return diag_error(d, n, "input[1]", "depth must be a single value");
    if (idx->rank + 1 > TVMCC_MAX_RANK)
        return diag_error(d, n, "input[0]", "rank too large");
    if (infer_axis(n, axis, idx->rank + 1, &ax, d, "axis"))
        return 1;
    if (value_const_double(g, n->in[1], &depth)) {
        if (infer_use_declared(g, n, 0, d, "depth is computed at run time"))
            return 1;
        if (out_val(g, n, 0)->rank != idx->rank + 1)
            return diag_error(d, n, "output[0]", "declared rank %d is not the indices' rank + 1",
                              out_val(g, n, 0)->rank);
        return 0;
    }
    if (!(depth >= 1 && depth <= (double)INT32_MAX)) /* NaN too */
        return diag_error(d, n, "input[1]", "depth %g is not a positive size", depth);
    for (i = 0; i <= idx->rank; i++)
        dims[i] = i == ax ? (int64_t)depth : idx->dims[r++];
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], vals->dtype, idx->rank + 1, dims, d, n);
}

static int check_reduction(const Node *n, Diag *d)
{
    const char *red = attr_string(n, "reduction", "none", d);
    if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") &&
        strcmp(red, "min"))
        return diag_error(d, n, "reduction", "unknown value '%s'", red);
    return 0;
}

static int infer_scatter_el(Graph *g, Node *n, Diag *d)
{
    Value *x, *idx, *u;
    int axis, i;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    x = in_val(g, n, 0);
    idx = in_val(g, n, 1);
    u = in_val(g, n, 2);
    if (idx->dtype != DT_INT32 && idx->dtype != DT_INT64)
        return diag_error(d, n, "input[1]", "index type %s is not int32 or int64",
                          dtype_name(idx->dtype));
    if (idx->rank != x->rank || u->rank != x->rank || x->rank < 1)
        return diag_error(d, n, "input[1]", "data, indices and updates must have one rank");
    if (u->dtype != x->dtype)
        return diag_error(d, n, "input[2]", "updates type differs from the data's");
    if (infer_axis(n, attr_int(n, "axis", 0, d), x->rank, &axis, d, "axis") ||
        check_reduction(n, d))
        return 1;
    for (i = 0; i < x->rank; i++) {
        if (idx->dims[i] != u->dims[i])
            return diag_error(d, n, "input[2]", "updates shape differs from the indices'");
        if (i != axis && idx->dims[i] > x->dims[i])
            return diag_error(d, n, "input[1]", "indices dimension %d exceeds the data's", i);
    }
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_ScatterElements(Graph *g, Node *n, Diag *d) { return infer_scatter_el(g, n, d); }
int infer_Scatter(Graph *g, Node *n, Diag *d) { return infer_scatter_el(g, n, d); }

int infer_ScatterND(Graph *g, Node *n, Diag *d)
{
    Value *x, *idx, *u;
    int64_t k;
    int i, q;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    x = in_val(g, n, 0);
    idx = in_val(g, n, 1);
    u = in_val(g, n, 2);
    if (idx->dtype != DT_INT64)
        return diag_error(d, n, "input[1]", "index type %s is not int64", dtype_name(idx->dtype));
    if (idx->rank < 1 || x->rank < 1)
        return diag_error(d, n, "input[1]", "data and indices need rank >= 1");
    if (check_reduction(n, d))
        return 1;
    q = idx->rank;
    k = idx->dims[q - 1];
    if (k < 1 || k > x->rank)
        return diag_error(d, n, "input[1]", "last indices dimension %lld is not in 1..%d",
                          (long long)k, x->rank);
    if (u->dtype != x->dtype || u->rank != q - 1 + x->rank - k)
        return diag_error(d, n, "input[2]", "updates must be %s of rank %lld",
                          dtype_name(x->dtype), (long long)(q - 1 + x->rank - k));
    for (i = 0; i < u->rank; i++) {
        int64_t want = i < q - 1 ? idx->dims[i] : x->dims[k + i - (q - 1)];
        if (u->dims[i] != want)
            return diag_error(d, n, "input[2]", "updates dimension %d is %lld, expected %lld", i,
                              (long long)u->dims[i], (long long)want);
    }
    return infer_same_shape_out(g, n, 0, x, d);
}

static int infer_window(Graph *g, Node *n, Diag *d)
{
    Value *s;
    double len;
    int64_t dims[1];
    DType t = (DType)attr_int(n, "output_datatype", 1, d);
    if (need_input(g, n, 0, d))
        return 1;
    s = in_val(g, n, 0);
    if (value_numel(s) != 1 || (s->dtype != DT_INT32 && s->dtype != DT_INT64))
        return diag_error(d, n, "input[0]", "size must be one int32 or int64 value");
    if (!dtype_size(t) || t == DT_BOOL)
        return diag_error(d, n, "output_datatype", "type %d is not supported", (int)t);
    if (value_const_double(g, n->in[0], &len)) {
        if (infer_use_declared(g, n, 0, d, "size is computed at run time"))
            return 1;
        if (out_val(g, n, 0)->rank != 1)
            return diag_error(d, n, "output[0]", "a window is 1-D, the declared rank is %d",
                              out_val(g, n, 0)->rank);
        return 0;
    }
    if (len < 0 || len > (double)INT32_MAX)
        return diag_error(d, n, "input[0]", "size %g is out of range", len);
    dims[0] = (int64_t)len;
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], t, 1, dims, d, n);
}

int infer_HannWindow(Graph *g, Node *n, Diag *d) { return infer_window(g, n, d); }
int infer_HammingWindow(Graph *g, Node *n, Diag *d) { return infer_window(g, n, d); }
int infer_BlackmanWindow(Graph *g, Node *n, Diag *d) { return infer_window(g, n, d); }
