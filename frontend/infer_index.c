/*
 * Shape and type inference of the indexing operators (lowered by
 * lower/op_index.c): GatherElements, GatherND, DepthToSpace, SpaceToDepth,
 * CumSum, OneHot, ScatterElements (and the older Scatter) and ScatterND.
 * OneHot's depth is a shape-like input: when it is not a compile-time
 * constant the declared output shape is used.
 */
#include "infer.h"

#include <string.h>

static int need_index_type(const Node *n, const Value *v, const char *field, Diag *d)
{
    if (v->dtype != DT_INT64 && v->dtype != DT_INT32)
        return diag_error(d, n, field, "index type %s is not int32 or int64",
                          dtype_name(v->dtype));
    return 0;
}

int infer_GatherElements(Graph *g, Node *n, Diag *d)
{
    Value *x, *idx;
    AxisParams p;
    int axis, i;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    idx = in_val(g, n, 1);
    if (need_index_type(n, idx, "input[1]", d))
        return 1;
    if (x->rank < 1 || idx->rank != x->rank)
        return diag_error(d, n, "input[1]", "indices rank %d differs from data rank %d",
                          idx->rank, x->rank);
    if (infer_axis(n, attr_int(n, "axis", 0, d), x->rank, &axis, d, "axis"))
        return 1;
    memset(&p, 0, sizeof p);
    p.axis = axis;
    infer_set_axis(g, n, p.axis, &p);
    for (i = 0; i < x->rank; i++)
        if (i != axis && idx->dims[i] > x->dims[i])
            return diag_error(d, n, "input[1]", "indices dimension %d (%lld) exceeds the "
                              "data's (%lld)", i, (long long)idx->dims[i],
                              (long long)x->dims[i]);
    if (x->dims[axis] == 0 && value_numel(idx) > 0)
        return diag_error(d, n, "input[0]", "gathering from an empty axis");
    return value_set(g, n->out[0], x->dtype, idx->rank, idx->dims, d, n);
}

int infer_GatherND(Graph *g, Node *n, Diag *d)
{
    Value *x, *idx;
    int64_t b = attr_int(n, "batch_dims", 0, d), m, dims[TVMCC_MAX_RANK];
    AxisParams p;
    int i, r = 0;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    idx = in_val(g, n, 1);
    if (idx->dtype != DT_INT64)
        return diag_error(d, n, "input[1]", "index type %s is not int64", dtype_name(idx->dtype));
    if (x->rank < 1 || idx->rank < 1)
        return diag_error(d, n, "input[0]", "data and indices must have rank >= 1");
    if (b < 0 || b >= idx->rank || b >= x->rank)
        return diag_error(d, n, "batch_dims", "%lld is out of range", (long long)b);
    memset(&p, 0, sizeof p);
    p.axis = -1;
    p.batch_dims = b;
    infer_set_axis(g, n, p.axis, &p);
    m = idx->dims[idx->rank - 1];
    if (m < 1 || m > x->rank - b)
        return diag_error(d, n, "input[1]", "last indices dimension %lld must be in 1..%lld",
                          (long long)m, (long long)(x->rank - b));
    for (i = 0; i < b; i++)
        if (idx->dims[i] != x->dims[i])
            return diag_error(d, n, "input[1]", "batch dimension %d differs from the data's", i);
    for (i = 0; i < idx->rank - 1; i++)
        dims[r++] = idx->dims[i];
    for (i = (int)(b + m); i < x->rank; i++) {
        if (r >= TVMCC_MAX_RANK)
            return diag_error(d, n, "output[0]", "rank above %d", TVMCC_MAX_RANK);
        dims[r++] = x->dims[i];
    }
    return value_set(g, n->out[0], x->dtype, r, dims, d, n);
}

/* DepthToSpace and SpaceToDepth on N C H W. */
static int infer_block(Graph *g, Node *n, Diag *d, int to_space)
{
    Value *x;
    int64_t b = attr_int(n, "blocksize", 0, d), dims[4];
    const char *mode = attr_string(n, "mode", "DCR", d);
    AxisParams p;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->rank != 4)
        return diag_error(d, n, "input[0]", "rank %d is not 4", x->rank);
    if (b < 1 || b > 65536)
        return diag_error(d, n, "blocksize", "%lld is not a positive block size", (long long)b);
    if (to_space && strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        return diag_error(d, n, "mode", "must be DCR or CRD, not '%s'", mode);
    memset(&p, 0, sizeof p);
    p.axis = -1;
    p.blocksize = b;
    p.crd = to_space && !strcmp(mode, "CRD");
    infer_set_axis(g, n, p.axis, &p);
    dims[0] = x->dims[0];
    if (to_space) {
        if (x->dims[1] % (b * b))
            return diag_error(d, n, "blocksize", "%lld^2 does not divide %lld channels",
                              (long long)b, (long long)x->dims[1]);
        dims[1] = x->dims[1] / (b * b);
        dims[2] = x->dims[2] * b;
        dims[3] = x->dims[3] * b;
    } else {
        if (x->dims[2] % b || x->dims[3] % b)
            return diag_error(d, n, "blocksize", "%lld does not divide the height %lld and "
                              "width %lld", (long long)b, (long long)x->dims[2],
                              (long long)x->dims[3]);
        dims[1] = x->dims[1] * b * b;
        dims[2] = x->dims[2] / b;
        dims[3] = x->dims[3] / b;
    }
    return value_set(g, n->out[0], x->dtype, 4, dims, d, n);
}

int infer_DepthToSpace(Graph *g, Node *n, Diag *d) { return infer_block(g, n, d, 1); }
int infer_SpaceToDepth(Graph *g, Node *n, Diag *d) { return infer_block(g, n, d, 0); }

int infer_CumSum(Graph *g, Node *n, Diag *d)
{
    Value *x, *a;
    const int64_t *av;
    AxisParams p;
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
    memset(&p, 0, sizeof p);
    p.axis = -1; /* an input */
    p.exclusive = attr_int(n, "exclusive", 0, d) != 0;
    p.reverse = attr_int(n, "reverse", 0, d) != 0;
    infer_set_axis(g, n, p.axis, &p);
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_OneHot(Graph *g, Node *n, Diag *d)
{
    Value *idx, *vals;
    int64_t axis = attr_int(n, "axis", -1, d), dims[TVMCC_MAX_RANK];
    double depth;
    AxisParams p;
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
    memset(&p, 0, sizeof p);
    p.axis = ax;
    infer_set_axis(g, n, p.axis, &p);
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

/* The reduction attribute as a ScatterReduce in *out (Scatter, which has
 * none, reads it too, but its lowering always replaces). */
static int check_reduction(const Node *n, uint8_t *out, Diag *d)
{
    static const char *names[] = { "none", "add", "mul", "max", "min" };
    const char *red = attr_string(n, "reduction", "none", d);
    int k;
    for (k = 0; k < 5; k++)
        if (!strcmp(red, names[k])) {
            *out = (uint8_t)(n->op == OP_Scatter ? SCATTER_NONE : k);
            return 0;
        }
    return diag_error(d, n, "reduction", "unknown value '%s'", red);
}

static int infer_scatter_el(Graph *g, Node *n, Diag *d)
{
    Value *x, *idx, *u;
    AxisParams p;
    int axis, i;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    memset(&p, 0, sizeof p);
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
        check_reduction(n, &p.reduction, d))
        return 1;
    p.axis = axis;
    infer_set_axis(g, n, p.axis, &p);
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
    AxisParams p;
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
    memset(&p, 0, sizeof p);
    p.axis = -1;
    if (check_reduction(n, &p.reduction, d))
        return 1;
    infer_set_axis(g, n, p.axis, &p);
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

/* TensorScatter (opset 24): the cache with the update written along the
 * sequence axis (not 0) from write_indices[batch] on; update differs from
 * the cache only in that axis, where it is not longer. */
int infer_TensorScatter(Graph *g, Node *n, Diag *d)
{
    Value *x, *u, *w;
    AxisParams p;
    const char *mode = attr_string(n, "mode", "linear", d);
    int i;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    u = in_val(g, n, 1);
    memset(&p, 0, sizeof p);
    if (x->rank < 2)
        return diag_error(d, n, "past_cache", "rank %d is below 2 (batch and sequence)",
                          x->rank);
    if (infer_axis(n, attr_int(n, "axis", -2, d), x->rank, &p.axis, d, "axis"))
        return 1;
    if (p.axis == 0)
        return diag_error(d, n, "axis", "cannot be 0, the batch dimension");
    if (!strcmp(mode, "circular"))
        p.circular = 1;
    else if (strcmp(mode, "linear"))
        return diag_error(d, n, "mode", "unknown value '%s' (linear or circular)", mode);
    if (u->dtype != x->dtype || u->rank != x->rank)
        return diag_error(d, n, "update", "must be %s of rank %d like past_cache",
                          infer_type_name(x->dtype), x->rank);
    for (i = 0; i < x->rank; i++)
        if (i == p.axis ? u->dims[i] > x->dims[i] : u->dims[i] != x->dims[i])
            return diag_error(d, n, "update", "dimension %d is %lld, past_cache's %lld", i,
                              (long long)u->dims[i], (long long)x->dims[i]);
    if ((w = in_val(g, n, 2)) != NULL) {
        if (need_input(g, n, 2, d))
            return 1;
        if (w->dtype != DT_INT64 || w->rank != 1 || w->dims[0] != x->dims[0])
            return diag_error(d, n, "write_indices", "must be int64 of shape [%lld]",
                              (long long)x->dims[0]);
    }
    infer_set_axis(g, n, p.axis, &p);
    return infer_same_shape_out(g, n, 0, x, d);
}
