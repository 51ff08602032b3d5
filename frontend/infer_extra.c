/*
 * Shape and type inference for the operators added after the first op set:
 * the remaining unary maths (inverse and hyperbolic trigonometry, Round,
 * IsNaN/IsInf, Shrink, ThresholdedRelu, Celu), CastLike, Mod and BitShift,
 * the arg-reductions and Hardmax, Trilu and EyeLike, the element gathers
 * (GatherElements, GatherND) and the block rearrangements DepthToSpace and
 * SpaceToDepth. The maths lives in lower/op_extra.c and lower/op_index.c;
 * here only attributes are validated and output shapes derived, following
 * the ONNX operator definitions.
 */
#include "infer.h"

#include <string.h>

/* Unary op over floats: output has the input's type and shape. */
static int float_unary(Graph *g, Node *n, Diag *d)
{
    if (need_input(g, n, 0, d) || infer_need_float(n, in_val(g, n, 0), "input[0]", d))
        return 1;
    return infer_elementwise(g, n, d, DT_UNDEF, 1);
}

int infer_Tan(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Asin(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Acos(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Atan(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Sinh(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Cosh(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Asinh(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Acosh(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Atanh(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Round(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_ThresholdedRelu(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }
int infer_Celu(Graph *g, Node *n, Diag *d) { return float_unary(g, n, d); }

int infer_IsNaN(Graph *g, Node *n, Diag *d)
{
    if (need_input(g, n, 0, d) || infer_need_float(n, in_val(g, n, 0), "input[0]", d))
        return 1;
    return infer_elementwise(g, n, d, DT_BOOL, 1);
}

int infer_IsInf(Graph *g, Node *n, Diag *d)
{
    return infer_IsNaN(g, n, d);
}

/* Shrink is defined for every numeric type. */
int infer_Shrink(Graph *g, Node *n, Diag *d)
{
    Value *x;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->dtype == DT_BOOL)
        return diag_error(d, n, "input[0]", "element type bool is not supported");
    if (attr_float(n, "lambd", 0.5, d) < 0)
        return diag_error(d, n, "lambd", "must not be negative");
    /* on integers both become integer constants (lowering truncates), so
     * NaN is refused there too */
    if (infer_attr_fits(n, "lambd", x->dtype, d) || infer_attr_fits(n, "bias", x->dtype, d))
        return 1;
    return infer_elementwise(g, n, d, DT_UNDEF, 1);
}

int infer_CastLike(Graph *g, Node *n, Diag *d)
{
    Value *x, *like;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    like = in_val(g, n, 1);
    return value_set(g, n->out[0], like->dtype, x->rank, x->dims, d, n);
}

int infer_Mod(Graph *g, Node *n, Diag *d)
{
    Value *a;
    int64_t fm = attr_int(n, "fmod", 0, d);
    if (need_input(g, n, 0, d))
        return 1;
    a = in_val(g, n, 0);
    if (fm != 0 && fm != 1)
        return diag_error(d, n, "fmod", "must be 0 or 1, not %lld", (long long)fm);
    if (a->dtype == DT_BOOL)
        return diag_error(d, n, "input[0]", "element type bool is not supported");
    if (dtype_is_float(a->dtype) && !fm)
        return diag_error(d, n, "fmod", "must be 1 for floating-point inputs");
    return infer_elementwise(g, n, d, DT_UNDEF, 1);
}

int infer_BitShift(Graph *g, Node *n, Diag *d)
{
    Value *a;
    const char *dir = attr_string(n, "direction", "", d);
    if (need_input(g, n, 0, d))
        return 1;
    a = in_val(g, n, 0);
    if (!dtype_is_unsigned_int(a->dtype) || a->dtype == DT_BOOL)
        return diag_error(d, n, "input[0]", "element type %s is not supported (unsigned "
                          "integer expected)", dtype_name(a->dtype));
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return diag_error(d, n, "direction", "must be LEFT or RIGHT, not '%s'", dir);
    return infer_elementwise(g, n, d, DT_UNDEF, 1);
}

/* ArgMax/ArgMin: the axis is reduced (kept as 1 with keepdims), int64. */
static int infer_arg(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int axis, i, r = 0;
    int64_t dims[TVMCC_MAX_RANK];
    int keep = attr_int(n, "keepdims", 1, d) != 0;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->dtype == DT_BOOL)
        return diag_error(d, n, "input[0]", "element type bool is not supported");
    if (x->rank < 1)
        return diag_error(d, n, "input[0]", "a scalar has no axis to reduce");
    if (infer_axis(n, attr_int(n, "axis", 0, d), x->rank, &axis, d, "axis"))
        return 1;
    if (x->dims[axis] == 0)
        return diag_error(d, n, "input[0]", "the reduced axis is empty");
    for (i = 0; i < x->rank; i++) {
        if (i != axis)
            dims[r++] = x->dims[i];
        else if (keep)
            dims[r++] = 1;
    }
    return value_set(g, n->out[0], DT_INT64, r, dims, d, n);
}

int infer_ArgMax(Graph *g, Node *n, Diag *d) { return infer_arg(g, n, d); }
int infer_ArgMin(Graph *g, Node *n, Diag *d) { return infer_arg(g, n, d); }

int infer_Hardmax(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int axis;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 1)
        return diag_error(d, n, "input[0]", "rank must be at least 1");
    if (infer_axis(n, attr_int(n, "axis", n->opset >= 13 ? -1 : 1, d), x->rank, &axis, d,
                   "axis"))
        return 1;
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}

int infer_Trilu(Graph *g, Node *n, Diag *d)
{
    Value *x;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->rank < 2)
        return diag_error(d, n, "input[0]", "rank %d is below 2", x->rank);
    if (n->n_in > 1 && n->in[1] >= 0) {
        Value *k = in_val(g, n, 1);
        if (value_numel(k) != 1 || k->dtype != DT_INT64)
            return diag_error(d, n, "input[1]", "k must be one int64 value");
    }
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}

int infer_EyeLike(Graph *g, Node *n, Diag *d)
{
    Value *x;
    DType t;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->rank != 2)
        return diag_error(d, n, "input[0]", "rank %d is not 2", x->rank);
    t = (DType)attr_int(n, "dtype", (int64_t)x->dtype, d);
    if (!dtype_size(t))
        return diag_error(d, n, "dtype", "element type %d is not supported", (int)t);
    return value_set(g, n->out[0], t, 2, x->dims, d, n);
}

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
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->rank != 4)
        return diag_error(d, n, "input[0]", "rank %d is not 4", x->rank);
    if (b < 1 || b > 65536)
        return diag_error(d, n, "blocksize", "%lld is not a positive block size", (long long)b);
    if (to_space && strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        return diag_error(d, n, "mode", "must be DCR or CRD, not '%s'", mode);
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
