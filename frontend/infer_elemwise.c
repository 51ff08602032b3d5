/*
 * Type and shape inference for the elementwise operators: the unary maths
 * (Abs ... Sign, Not), Clip, Cast, Identity and Dropout, the broadcasting
 * binary operators (arithmetic, comparisons, logic, PRelu), Where and the
 * variadic Min/Max/Sum/Mean. None of them depends on tensor values, so each
 * output shape is the input shape or the numpy broadcast of the inputs.
 * Element types are checked against what the ONNX schema allows where a
 * mismatch would otherwise produce meaningless C (e.g. Exp of an int32);
 * the checks are deliberately a little looser than the schema elsewhere.
 */
#include "infer.h"

#include <string.h>

static int is_numeric(DType t)
{
    return dtype_is_float(t) || dtype_is_signed_int(t) ||
           (dtype_is_unsigned_int(t) && t != DT_BOOL);
}

/* Output 0 gets input 0's shape and the type `dt` (input 0's if DT_UNDEF). */
static int same_shape(Graph *g, Node *n, Diag *d, DType dt)
{
    Value *x = in_val(g, n, 0);
    if (need_input(g, n, 0, d))
        return 1;
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], dt != DT_UNDEF ? dt : x->dtype, x->rank, x->dims, d, n);
}

/* Unary op defined on floats only. */
static int unary_float(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    if (need_input(g, n, 0, d))
        return 1;
    if (!dtype_is_float(x->dtype))
        return diag_error(d, n, "input[0]", "%s needs a floating-point tensor, got %s",
                          n->op_type, infer_type_name(x->dtype));
    return same_shape(g, n, d, DT_UNDEF);
}

/* Unary op defined on every numeric type (not bool). */
static int unary_numeric(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    if (need_input(g, n, 0, d))
        return 1;
    if (!is_numeric(x->dtype))
        return diag_error(d, n, "input[0]", "%s needs a numeric tensor, got %s", n->op_type,
                          infer_type_name(x->dtype));
    return same_shape(g, n, d, DT_UNDEF);
}

int infer_Abs(Graph *g, Node *n, Diag *d) { return unary_numeric(g, n, d); }
int infer_Neg(Graph *g, Node *n, Diag *d) { return unary_numeric(g, n, d); }
int infer_Relu(Graph *g, Node *n, Diag *d) { return unary_numeric(g, n, d); }
int infer_Sigmoid(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Tanh(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_HardSwish(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Exp(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Log(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Sqrt(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Reciprocal(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Floor(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Ceil(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Sin(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Cos(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Erf(Graph *g, Node *n, Diag *d) { return unary_numeric(g, n, d); }
int infer_Softplus(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Softsign(Graph *g, Node *n, Diag *d) { return unary_float(g, n, d); }
int infer_Sign(Graph *g, Node *n, Diag *d) { return unary_numeric(g, n, d); }
int infer_Identity(Graph *g, Node *n, Diag *d) { return same_shape(g, n, d, DT_UNDEF); }

int infer_Not(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    if (need_input(g, n, 0, d))
        return 1;
    if (x->dtype != DT_BOOL)
        return diag_error(d, n, "input[0]", "Not needs a bool tensor, got %s", infer_type_name(x->dtype));
    return same_shape(g, n, d, DT_UNDEF);
}

/* A float activation whose attributes are alpha, beta and gamma, with
 * ONNX's defaults (an op without beta or gamma gets its default 0 there):
 * stored as ScalarParams. */
static int activation(Graph *g, Node *n, Diag *d, double alpha, double beta, double gamma)
{
    ScalarParams p;
    int errs = d->errors;
    memset(&p, 0, sizeof p);
    p.alpha = attr_float(n, "alpha", alpha, d);
    p.beta = attr_float(n, "beta", beta, d);
    p.gamma = attr_float(n, "gamma", gamma, d);
    return infer_set_scalar(g, n, &p, errs, d) || unary_float(g, n, d);
}

int infer_LeakyRelu(Graph *g, Node *n, Diag *d) { return activation(g, n, d, 0.01, 0, 0); }
int infer_HardSigmoid(Graph *g, Node *n, Diag *d) { return activation(g, n, d, 0.2, 0.5, 0); }
int infer_Elu(Graph *g, Node *n, Diag *d) { return activation(g, n, d, 1.0, 0, 0); }
int infer_Selu(Graph *g, Node *n, Diag *d)
{
    return activation(g, n, d, 1.67326319217681884765625, 0, 1.05070102214813232421875);
}

/* Clip: bounds are attributes before opset 11 (ScalarParams min, max) and
 * optional scalar inputs of the same type from opset 11. */
int infer_Clip(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    ScalarParams p;
    int i, errs = d->errors;
    if (need_input(g, n, 0, d))
        return 1;
    if (!is_numeric(x->dtype))
        return diag_error(d, n, "input[0]", "Clip needs a numeric tensor, got %s",
                          infer_type_name(x->dtype));
    if (n->opset < 11 && (infer_attr_fits(n, "min", x->dtype, d) ||
                          infer_attr_fits(n, "max", x->dtype, d)))
        return 1;
    memset(&p, 0, sizeof p);
    if (n->opset < 11) {
        p.has_min = node_attr(n, "min") != NULL;
        p.has_max = node_attr(n, "max") != NULL;
        p.min = attr_float(n, "min", 0, d);
        p.max = attr_float(n, "max", 0, d);
    }
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
    for (i = 1; i < n->n_in; i++) {
        Value *b = in_val(g, n, i);
        const char *field = i == 1 ? "min" : "max";
        if (!b)
            continue;
        if (b->dtype != x->dtype)
            return diag_error(d, n, field, "type %s differs from the input's %s",
                              infer_type_name(b->dtype), infer_type_name(x->dtype));
        if (value_numel(b) != 1)
            return diag_error(d, n, field, "must be a scalar, has %lld elements",
                              (long long)value_numel(b));
    }
    return same_shape(g, n, d, DT_UNDEF);
}

/* Cast/CastLike's round_mode (opset 25, for float8e8m0): "up", "down" or
 * "nearest". */
int infer_e8m0_mode(const Node *n, DType to, Diag *d)
{
    const Attr *rm = node_attr(n, "round_mode");
    if (to != DT_FLOAT8E8M0 || !rm)
        return 0;
    if (rm->type != ATTR_STRING)
        return diag_error(d, n, "round_mode", "must be a string");
    if (strcmp(rm->s, "up") != 0 && strcmp(rm->s, "down") != 0 && strcmp(rm->s, "nearest") != 0)
        return diag_error(d, n, "round_mode", "'%s' is not one of \"up\", \"down\", \"nearest\"",
                          rm->s);
    return 0;
}

int infer_Cast(Graph *g, Node *n, Diag *d)
{
    int errs = d->errors;
    int64_t to = attr_int(n, "to", -1, d);
    if (d->errors > errs)
        return 1; /* present with the wrong type: reported once */
    if (need_input(g, n, 0, d))
        return 1;
    if (!node_attr(n, "to"))
        return diag_error(d, n, "to", "required attribute is missing");
    if (to <= 0 || to > 0xffff || !dtype_size((DType)to))
        return diag_error(d, n, "to", "element type %lld is not supported", (long long)to);
    if ((to == DT_STRING || in_val(g, n, 0)->dtype == DT_STRING) &&
        infer_string_cast(n, in_val(g, n, 0)->dtype, (DType)to, d))
        return 1;
    if (infer_e8m0_mode(n, (DType)to, d))
        return 1;
    return same_shape(g, n, d, (DType)to);
}

/* Dropout: output = input and the mask all true, unless training mode is
 * on (the training_mode input, from opset 12) or decided at run time: then
 * ScalarParams.training is set and lower_Dropout draws the mask (see
 * there). A training_mode that is constant false, or a ratio that is
 * constant 0, is inference. */
int infer_Dropout(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    ScalarParams sp;
    int rc, errs = d->errors;
    if (need_input(g, n, 0, d))
        return 1;
    memset(&sp, 0, sizeof sp);
    sp.seed = attr_int(n, "seed", 0, d);
    if (d->errors > errs)
        return 1;
    if (n->n_in > 2 && n->in[2] >= 0) {
        double train = 1, ratio = 0.5;
        Value *t = in_val(g, n, 2);
        if (t->dtype != DT_BOOL || value_numel(t) != 1)
            return diag_error(d, n, "training_mode", "must be a bool scalar");
        if (n->in[1] >= 0) {
            Value *r = in_val(g, n, 1);
            if (!dtype_is_float(r->dtype) || value_numel(r) != 1)
                return diag_error(d, n, "ratio", "must be a float scalar");
        }
        value_const_double(g, n->in[2], &train);
        if (n->in[1] >= 0 && value_const_double(g, n->in[1], &ratio))
            ratio = 0.5; /* computed at run time: not known to be 0 */
        if (train != 0 && ratio != 0)
            sp.training = 1;
    }
    if (n->opset < 7 && attr_int(n, "is_test", 1, d) == 0)
        diag_warn(d, n, "is_test", "training-mode dropout is compiled as inference (identity)");
    node_set_params(g, n, PARAMS_SCALAR, &sp, sizeof sp);
    rc = same_shape(g, n, d, DT_UNDEF);
    if (!rc && out_val(g, n, 1))
        rc = value_set(g, n->out[1], DT_BOOL, x->rank, x->dims, d, n);
    return rc;
}

/* Binary arithmetic: both inputs of one numeric type. */
static int binary_arith(Graph *g, Node *n, Diag *d)
{
    Value *a;
    if (infer_elementwise(g, n, d, DT_UNDEF, 1))
        return 1;
    a = in_val(g, n, 0);
    if (!is_numeric(a->dtype))
        return diag_error(d, n, "input[0]", "%s needs numeric tensors, got %s", n->op_type,
                          infer_type_name(a->dtype));
    return 0;
}

int infer_Add(Graph *g, Node *n, Diag *d) { return binary_arith(g, n, d); }
int infer_Sub(Graph *g, Node *n, Diag *d) { return binary_arith(g, n, d); }
int infer_Mul(Graph *g, Node *n, Diag *d) { return binary_arith(g, n, d); }
int infer_Div(Graph *g, Node *n, Diag *d) { return binary_arith(g, n, d); }

/* Pow: base and exponent may have different numeric types (T, T1). */
int infer_Pow(Graph *g, Node *n, Diag *d)
{
    Value *a, *b;
    if (infer_elementwise(g, n, d, DT_UNDEF, 0))
        return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 1);
    if (!is_numeric(a->dtype))
        return diag_error(d, n, "X", "Pow needs a numeric base, got %s", infer_type_name(a->dtype));
    if (!is_numeric(b->dtype))
        return diag_error(d, n, "Y", "Pow needs a numeric exponent, got %s", infer_type_name(b->dtype));
    return 0;
}

/* PRelu: the slope broadcasts to X (unidirectionally). */
int infer_PRelu(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0), *s = in_val(g, n, 1);
    int64_t dims[TVMCC_MAX_RANK];
    int rank, i;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    if (s->dtype != x->dtype)
        return diag_error(d, n, "slope", "type %s differs from X's %s", infer_type_name(s->dtype),
                          infer_type_name(x->dtype));
    /* before opset 7 a 1-D slope of length C applies along the channel axis */
    if (n->opset < 7 && s->rank == 1 && x->rank >= 2 && s->dims[0] == x->dims[1])
        return same_shape(g, n, d, DT_UNDEF);
    if (infer_broadcast(n, x->rank, x->dims, s->rank, s->dims, &rank, dims, d, "slope"))
        return 1;
    for (i = 0; i < rank; i++)
        if (rank != x->rank || dims[i] != x->dims[i])
            return diag_error(d, n, "slope", "does not broadcast to the shape of X");
    return same_shape(g, n, d, DT_UNDEF);
}

static int compare(Graph *g, Node *n, Diag *d)
{
    return infer_elementwise(g, n, d, DT_BOOL, 1);
}

int infer_Equal(Graph *g, Node *n, Diag *d) { return compare(g, n, d); }
int infer_Less(Graph *g, Node *n, Diag *d) { return compare(g, n, d); }
int infer_Greater(Graph *g, Node *n, Diag *d) { return compare(g, n, d); }
int infer_LessOrEqual(Graph *g, Node *n, Diag *d) { return compare(g, n, d); }
int infer_GreaterOrEqual(Graph *g, Node *n, Diag *d) { return compare(g, n, d); }

static int logic(Graph *g, Node *n, Diag *d)
{
    if (infer_elementwise(g, n, d, DT_BOOL, 1))
        return 1;
    if (in_val(g, n, 0)->dtype != DT_BOOL)
        return diag_error(d, n, "input[0]", "%s needs bool tensors, got %s", n->op_type,
                          infer_type_name(in_val(g, n, 0)->dtype));
    return 0;
}

int infer_And(Graph *g, Node *n, Diag *d) { return logic(g, n, d); }
int infer_Or(Graph *g, Node *n, Diag *d) { return logic(g, n, d); }
int infer_Xor(Graph *g, Node *n, Diag *d) { return logic(g, n, d); }

int infer_Where(Graph *g, Node *n, Diag *d)
{
    Value *c, *x, *y;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    c = in_val(g, n, 0);
    x = in_val(g, n, 1);
    y = in_val(g, n, 2);
    if (c->dtype != DT_BOOL)
        return diag_error(d, n, "condition", "must be bool, got %s", infer_type_name(c->dtype));
    if (x->dtype != y->dtype)
        return diag_error(d, n, "Y", "type %s differs from X's %s", infer_type_name(y->dtype),
                          infer_type_name(x->dtype));
    return infer_elementwise(g, n, d, x->dtype, 0);
}

static int variadic(Graph *g, Node *n, Diag *d, int float_only)
{
    Value *a;
    if (infer_elementwise(g, n, d, DT_UNDEF, 1))
        return 1;
    a = in_val(g, n, 0);
    if (float_only ? !dtype_is_float(a->dtype) : !is_numeric(a->dtype))
        return diag_error(d, n, "input[0]", "%s needs %s tensors, got %s", n->op_type,
                          float_only ? "floating-point" : "numeric", infer_type_name(a->dtype));
    return 0;
}

int infer_Min(Graph *g, Node *n, Diag *d) { return variadic(g, n, d, 0); }
int infer_Max(Graph *g, Node *n, Diag *d) { return variadic(g, n, d, 0); }
int infer_Sum(Graph *g, Node *n, Diag *d) { return variadic(g, n, d, 0); }
int infer_Mean(Graph *g, Node *n, Diag *d) { return variadic(g, n, d, 1); }
