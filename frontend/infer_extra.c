/*
 * Shape and type inference for the operators added after the first op set:
 * the remaining unary maths (inverse and hyperbolic trigonometry, Round,
 * IsNaN/IsInf, Shrink, ThresholdedRelu, Celu), CastLike, Mod and BitShift,
 * the arg-reductions and Hardmax, Trilu and EyeLike, and the window
 * generators (Hann, Hamming, Blackman). The maths lives in lower/op_extra.c;
 * here only attributes are validated and output shapes derived, following
 * the ONNX operator definitions. A window's length is a shape-like input:
 * when it is not a compile-time constant the declared output shape is used.
 * The attributes are stored parsed on the node (ScalarParams, AxisParams).
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

/* Float unary op whose only attribute is alpha (default 1). */
static int alpha_unary(Graph *g, Node *n, Diag *d)
{
    ScalarParams p;
    int errs = d->errors;
    memset(&p, 0, sizeof p);
    p.alpha = attr_float(n, "alpha", 1.0, d);
    return infer_set_scalar(g, n, &p, errs, d) || float_unary(g, n, d);
}

int infer_ThresholdedRelu(Graph *g, Node *n, Diag *d) { return alpha_unary(g, n, d); }
int infer_Celu(Graph *g, Node *n, Diag *d) { return alpha_unary(g, n, d); }

int infer_IsNaN(Graph *g, Node *n, Diag *d)
{
    if (need_input(g, n, 0, d) || infer_need_float(n, in_val(g, n, 0), "input[0]", d))
        return 1;
    return infer_elementwise(g, n, d, DT_BOOL, 1);
}

int infer_IsInf(Graph *g, Node *n, Diag *d)
{
    ScalarParams p;
    int errs = d->errors;
    memset(&p, 0, sizeof p);
    p.detect_negative = attr_int(n, "detect_negative", 1, d) != 0;
    p.detect_positive = attr_int(n, "detect_positive", 1, d) != 0;
    return infer_set_scalar(g, n, &p, errs, d) || infer_IsNaN(g, n, d);
}

/* Shrink is defined for every numeric type. On integers the lowering
 * computes in double, as the reference does; lambd and bias must still be
 * finite and within the input type's range there (NaN or 1e30 for an
 * int32 are refused as model errors). */
int infer_Shrink(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ScalarParams p;
    int errs = d->errors;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->dtype == DT_BOOL)
        return diag_error(d, n, "input[0]", "element type bool is not supported");
    memset(&p, 0, sizeof p);
    p.lambd = attr_float(n, "lambd", 0.5, d);
    p.bias = attr_float(n, "bias", 0.0, d);
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
    if (p.lambd < 0)
        return diag_error(d, n, "lambd", "must not be negative");
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
    if ((x->dtype == DT_STRING || like->dtype == DT_STRING) &&
        infer_string_cast(n, x->dtype, like->dtype, d))
        return 1;
    return value_set(g, n->out[0], like->dtype, x->rank, x->dims, d, n);
}

int infer_Mod(Graph *g, Node *n, Diag *d)
{
    Value *a;
    ScalarParams p;
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
    memset(&p, 0, sizeof p);
    p.fmod = (uint8_t)fm;
    infer_set_scalar(g, n, &p, d->errors, d);
    return infer_elementwise(g, n, d, DT_UNDEF, 1);
}

int infer_BitShift(Graph *g, Node *n, Diag *d)
{
    Value *a;
    ScalarParams p;
    const char *dir = attr_string(n, "direction", "", d);
    if (need_input(g, n, 0, d))
        return 1;
    a = in_val(g, n, 0);
    if (!dtype_is_unsigned_int(a->dtype) || a->dtype == DT_BOOL)
        return diag_error(d, n, "input[0]", "element type %s is not supported (unsigned "
                          "integer expected)", dtype_name(a->dtype));
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return diag_error(d, n, "direction", "must be LEFT or RIGHT, not '%s'", dir);
    memset(&p, 0, sizeof p);
    p.left = !strcmp(dir, "LEFT");
    infer_set_scalar(g, n, &p, d->errors, d);
    return infer_elementwise(g, n, d, DT_UNDEF, 1);
}

/* BitwiseAnd/Or/Xor/Not (opset 18): integer tensors of one type, broadcast. */
static int bitwise(Graph *g, Node *n, Diag *d)
{
    Value *a;
    if (need_input(g, n, 0, d))
        return 1;
    a = in_val(g, n, 0);
    if ((!dtype_is_signed_int(a->dtype) && !dtype_is_unsigned_int(a->dtype)) ||
        a->dtype == DT_BOOL)
        return diag_error(d, n, "input[0]", "element type %s is not supported (integer "
                          "expected)", infer_type_name(a->dtype));
    return infer_elementwise(g, n, d, DT_UNDEF, 1);
}

int infer_BitwiseAnd(Graph *g, Node *n, Diag *d) { return bitwise(g, n, d); }
int infer_BitwiseOr(Graph *g, Node *n, Diag *d) { return bitwise(g, n, d); }
int infer_BitwiseXor(Graph *g, Node *n, Diag *d) { return bitwise(g, n, d); }
int infer_BitwiseNot(Graph *g, Node *n, Diag *d) { return bitwise(g, n, d); }

/* ArgMax/ArgMin: the axis is reduced (kept as 1 with keepdims), int64. */
static int infer_arg(Graph *g, Node *n, Diag *d)
{
    Value *x;
    AxisParams p;
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
    memset(&p, 0, sizeof p);
    p.axis = axis;
    p.select_last_index = attr_int(n, "select_last_index", 0, d) != 0;
    infer_set_axis(g, n, axis, &p);
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
    infer_set_axis(g, n, axis, NULL);
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}

int infer_Trilu(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ScalarParams p;
    int errs = d->errors;
    memset(&p, 0, sizeof p);
    p.upper = attr_int(n, "upper", 1, d) != 0;
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
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
    ScalarParams p;
    int errs = d->errors;
    memset(&p, 0, sizeof p);
    p.k = attr_int(n, "k", 0, d);
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
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

static int infer_window(Graph *g, Node *n, Diag *d)
{
    Value *s;
    double len;
    int64_t dims[1];
    DType t = (DType)attr_int(n, "output_datatype", 1, d);
    ScalarParams p;
    int errs = d->errors;
    memset(&p, 0, sizeof p);
    p.periodic = attr_int(n, "periodic", 1, d) != 0;
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
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
