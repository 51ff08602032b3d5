/*
 * Operators whose output element count depends on the data: NonZero
 * (opset 9/13) and Unique (opset 11). A static-memory compiler cannot
 * size such an output from the input alone, so the count is the model's
 * declared one (the backend tests declare it), or, for a constant input,
 * the one the data give; the run function checks it and returns
 * TVMRT_ERR_SHAPE when the data give another (like StringNormalizer).
 * Both are runtime calls (lower/op_datadep.c), since a kernel of loop IR
 * cannot return that status.
 */
#include "infer.h"

#include <string.h>

/* The number types NonZero and Unique read (tvmrt_num in the runtime). */
static int datadep_type(DType t)
{
    switch (t) {
    case DT_FLOAT32: case DT_FLOAT64: case DT_INT8: case DT_UINT8: case DT_INT16:
    case DT_UINT16: case DT_INT32: case DT_UINT32: case DT_INT64: case DT_BOOL:
        return 1;
    default:
        return 0;
    }
}

/* The declared extent of dimension dim of output i (rank `rank`), or -1. */
static int64_t declared_dim(Graph *g, const Node *n, int i, int rank, int dim)
{
    const Value *v = out_val(g, n, i);
    if (!v || !v->declared || v->rank != rank || v->dims[dim] < 0)
        return -1;
    return v->dims[dim];
}

int infer_NonZero(Graph *g, Node *n, Diag *d)
{
    const Value *x = in_val(g, n, 0);
    int64_t dims[2], k = -1;
    if (!datadep_type(x->dtype))
        return diag_error(d, n, "X", "element type %s is not supported",
                          infer_type_name(x->dtype));
    if (x->rank < 1)
        return diag_error(d, n, "X", "must have rank 1 or more");
    if (infer_need_output(g, n, 0, d))
        return 1;
    if (x->data) {
        int64_t i, nel = value_numel(x);
        size_t es = dtype_size(x->dtype);
        k = 0;
        for (i = 0; i < nel; i++) {
            const uint8_t *e = (const uint8_t *)x->data + (size_t)i * es;
            double v = 0;
            size_t b;
            int nz = 0;
            if (dtype_is_float(x->dtype) && value_const_elem(g, n->in[0], i, &v) == 0)
                nz = v != 0;
            else
                for (b = 0; b < es; b++)
                    nz |= e[b] != 0;
            k += nz;
        }
    } else {
        k = declared_dim(g, n, 0, 2, 1);
    }
    if (k < 0)
        return diag_error(d, n, "output[0]", "the number of non-zero elements depends on the "
                          "data: declare the output's shape [%d, count] in the model", x->rank);
    dims[0] = x->rank;
    dims[1] = k;
    return value_set(g, n->out[0], DT_INT64, 2, dims, d, n);
}

int infer_Unique(Graph *g, Node *n, Diag *d)
{
    int errs = d->errors;
    const Value *x = in_val(g, n, 0);
    const Attr *a = node_attr(n, "axis");
    int64_t sorted = attr_int(n, "sorted", 1, d);
    int64_t dims[TVMCC_MAX_RANK], k = -1, len;
    int ax = -1, i, rank = x->rank;
    if (d->errors > errs)
        return 1;
    if (!datadep_type(x->dtype))
        return diag_error(d, n, "X", "element type %s is not supported",
                          infer_type_name(x->dtype));
    if (sorted != 0 && sorted != 1)
        return diag_error(d, n, "sorted", "must be 0 or 1");
    if (a && infer_axis(n, attr_int(n, "axis", 0, d), rank, &ax, d, "axis"))
        return 1;
    len = ax < 0 ? value_numel(x) : x->dims[ax];
    /* K from whichever output declares it */
    if (ax < 0)
        k = declared_dim(g, n, 0, 1, 0);
    else
        k = declared_dim(g, n, 0, rank, ax);
    if (k < 0)
        k = declared_dim(g, n, 1, 1, 0);
    if (k < 0)
        k = declared_dim(g, n, 3, 1, 0);
    if (k < 0 && len == 0)
        k = 0;
    if (k < 0)
        return diag_error(d, n, "output[0]", "the number of unique %s depends on the data: "
                          "declare the shape of Y (or of indices or counts) in the model",
                          ax < 0 ? "elements" : "slices");
    if (k > len || (k == 0 && len > 0))
        return diag_error(d, n, "output[0]", "the declared count %lld of unique %s is not in 1 "
                          "to %lld", (long long)k, ax < 0 ? "elements" : "slices",
                          (long long)len);
    {
        AxisParams p;
        memset(&p, 0, sizeof p);
        p.axis = ax;
        p.sorted = (uint8_t)sorted;
        infer_set_axis(g, n, ax, &p);
    }
    if (infer_need_output(g, n, 0, d))
        return 1;
    if (ax < 0) {
        dims[0] = k;
        if (value_set(g, n->out[0], x->dtype, 1, dims, d, n))
            return 1;
    } else {
        for (i = 0; i < rank; i++)
            dims[i] = i == ax ? k : x->dims[i];
        if (value_set(g, n->out[0], x->dtype, rank, dims, d, n))
            return 1;
    }
    dims[0] = k;
    if (n->n_out > 1 && n->out[1] >= 0 && value_set(g, n->out[1], DT_INT64, 1, dims, d, n))
        return 1;
    if (n->n_out > 3 && n->out[3] >= 0 && value_set(g, n->out[3], DT_INT64, 1, dims, d, n))
        return 1;
    dims[0] = len;
    if (n->n_out > 2 && n->out[2] >= 0 && value_set(g, n->out[2], DT_INT64, 1, dims, d, n))
        return 1;
    return 0;
}
