/*
 * Type and shape inference of the quantization operators: QuantizeLinear,
 * DequantizeLinear (also onnxruntime's com.microsoft ones), DynamicQuantizeLinear,
 * MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv, and onnxruntime's
 * com.microsoft QOperator ops: QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
 * QLinearAveragePool, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu,
 * QLinearSoftmax and QGemm.
 *
 * Scales and zero points are either scalars (one-element tensors) or, for
 * the per-axis forms, 1-D tensors as long as the quantized axis. The matmul
 * forms take numpy matmul shapes; the conv forms the sliding window of
 * infer_conv_window() (infer_util.c), stored on the node for lower/op_quant.c.
 */
#include "infer.h"

#include <math.h>
#include <string.h>

static int is_8bit(DType t)
{
    return t == DT_INT8 || t == DT_UINT8;
}

/* Optional input i must be a scalar, or, when axis_len > 0, 1-D of that
 * length. */
static int check_param(Graph *g, Node *n, int i, int64_t axis_len, Diag *d)
{
    char field[32];
    Value *v;
    if (i >= n->n_in || n->in[i] < 0)
        return 0;
    if (need_input(g, n, i, d))
        return 1;
    v = in_val(g, n, i);
    snprintf(field, sizeof field, "input[%d]", i);
    if (value_numel(v) == 1)
        return 0;
    if (axis_len > 0 && v->rank == 1 && v->dims[0] == axis_len)
        return 0;
    return diag_error(d, n, field, "must be a scalar%s",
                      axis_len > 0 ? " or 1-D along the quantized axis" : "");
}

/* Blocked quantization (block_size > 0, opset 21+): the scale has x's
 * rank and shape except along `axis`, where it has ceil(D / block_size)
 * entries; the zero point has the scale's shape. Stores AxisParams (axis,
 * blocksize). */
static int blocked_params(Graph *g, Node *n, const Value *x, int64_t bs, Diag *d)
{
    AxisParams p;
    const Value *s = in_val(g, n, 1);
    int ax, i;
    if (infer_axis(n, attr_int(n, "axis", 1, d), x->rank, &ax, d, "axis"))
        return 1;
    if (s->rank != x->rank)
        return diag_error(d, n, "input[1]", "blocked scale must have the input's rank %d, has %d",
                          x->rank, s->rank);
    for (i = 0; i < x->rank; i++) {
        int64_t want = i == ax ? (x->dims[i] + bs - 1) / bs : x->dims[i];
        if (s->dims[i] != want)
            return diag_error(d, n, "input[1]", "blocked scale dimension %d is %lld, expected %lld "
                              "(block_size %lld)", i, (long long)s->dims[i], (long long)want,
                              (long long)bs);
    }
    if (n->n_in > 2 && n->in[2] >= 0) {
        const Value *z;
        if (need_input(g, n, 2, d))
            return 1;
        z = in_val(g, n, 2);
        if (z->rank != s->rank || memcmp(z->dims, s->dims, (size_t)s->rank * sizeof *s->dims) != 0)
            return diag_error(d, n, "input[2]", "zero point must have the scale's shape");
    }
    memset(&p, 0, sizeof p);
    p.axis = ax;
    p.blocksize = bs;
    infer_set_axis(g, n, ax, &p);
    return 0;
}

/* The parameters' granularity: per tensor, per axis or blocked; stores
 * AxisParams (axis -1 for per-tensor parameters, blocksize for blocked
 * ones) and checks the scale and zero point shapes. */
static int quant_params(Graph *g, Node *n, const Value *x, Diag *d)
{
    int ax;
    int64_t len, bs = n->opset >= 21 ? attr_int(n, "block_size", 0, d) : 0;
    if (bs < 0)
        return diag_error(d, n, "block_size", "must not be negative (%lld)", (long long)bs);
    if (bs > 0 && x->rank > 0 && in_val(g, n, 1)->rank > 0)
        return blocked_params(g, n, x, bs, d);
    /* the axis matters only for per-axis parameters */
    if (x->rank == 0 || value_numel(in_val(g, n, 1)) == 1) {
        infer_set_axis(g, n, -1, NULL);
        len = 1;
    } else {
        if (infer_axis(n, attr_int(n, "axis", 1, d), x->rank, &ax, d, "axis"))
            return 1;
        infer_set_axis(g, n, ax, NULL);
        len = x->dims[ax];
    }
    return check_param(g, n, 1, len, d) || check_param(g, n, 2, len, d);
}

/* The types QuantizeLinear produces and DequantizeLinear reads (int32:
 * DequantizeLinear only). */
static int quant_type(DType t)
{
    switch (t) {
    case DT_INT8: case DT_UINT8: case DT_INT16: case DT_UINT16: case DT_INT4: case DT_UINT4:
    case DT_INT2: case DT_UINT2: case DT_FLOAT8E4M3FN: case DT_FLOAT8E4M3FNUZ: case DT_FLOAT8E5M2:
    case DT_FLOAT8E5M2FNUZ: case DT_FLOAT4E2M1:
        return 1;
    default:
        return 0;
    }
}

int infer_QuantizeLinear(Graph *g, Node *n, Diag *d)
{
    Value *x;
    DType out = DT_UINT8;
    int64_t prec = attr_int(n, "precision", 0, d);
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    if (!dtype_is_float(x->dtype) && x->dtype != DT_INT32)
        return diag_error(d, n, "input[0]", "element type %s is not supported",
                          dtype_name(x->dtype));
    if (!dtype_is_float(in_val(g, n, 1)->dtype))
        return diag_error(d, n, "input[1]", "scale must be a float tensor");
    if (prec != 0 && prec != DT_FLOAT32 && prec != DT_FLOAT64 && prec != DT_FLOAT16 &&
        prec != DT_BFLOAT16)
        return diag_error(d, n, "precision", "element type %lld is not supported (a float type "
                          "expected)", (long long)prec);
    if (quant_params(g, n, x, d))
        return 1;
    if (n->n_in > 2 && n->in[2] >= 0)
        out = in_val(g, n, 2)->dtype;
    else if (node_attr(n, "output_dtype"))
        out = (DType)attr_int(n, "output_dtype", DT_UINT8, d);
    if (!quant_type(out) && out != DT_INT32)
        return diag_error(d, n, "input[2]", "quantized type %s is not supported",
                          dtype_name(out) ? dtype_name(out) : "?");
    return value_set(g, n->out[0], out, x->rank, x->dims, d, n);
}

int infer_DequantizeLinear(Graph *g, Node *n, Diag *d)
{
    Value *x;
    DType out;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    if (!quant_type(x->dtype) && (dtype_is_float(x->dtype) || x->dtype == DT_BOOL || !dtype_size(x->dtype)))
        return diag_error(d, n, "input[0]", "element type %s is not a quantized type",
                          dtype_name(x->dtype) ? dtype_name(x->dtype) : "?");
    if (!dtype_is_float(in_val(g, n, 1)->dtype))
        return diag_error(d, n, "input[1]", "scale must be a float tensor");
    if (quant_params(g, n, x, d))
        return 1;
    out = in_val(g, n, 1)->dtype;
    if (node_attr(n, "output_dtype") && attr_int(n, "output_dtype", 0, d) != 0) {
        out = (DType)attr_int(n, "output_dtype", 0, d);
        if (out != DT_FLOAT32 && out != DT_FLOAT16 && out != DT_BFLOAT16 && out != DT_FLOAT64)
            return diag_error(d, n, "output_dtype", "element type %d is not supported (a float "
                              "type expected)", (int)out);
    }
    return value_set(g, n->out[0], out, x->rank, x->dims, d, n);
}

int infer_DynamicQuantizeLinear(Graph *g, Node *n, Diag *d)
{
    Value *x;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->dtype != DT_FLOAT32)
        return diag_error(d, n, "input[0]", "element type %s is not supported (float32)",
                          dtype_name(x->dtype));
    if (n->n_out < 3 || n->out[1] < 0 || n->out[2] < 0)
        return diag_error(d, n, "output", "all three outputs are required");
    if (value_set(g, n->out[0], DT_UINT8, x->rank, x->dims, d, n) ||
        value_set(g, n->out[1], DT_FLOAT32, 0, NULL, d, n) ||
        value_set(g, n->out[2], DT_UINT8, 0, NULL, d, n))
        return 1;
    return 0;
}

/* numpy matmul shape of a and b into out; returns 1 after an error. */
static int matmul_shape(const Node *n, const Value *a, const Value *b, int ia, int ib,
                        int *rank, int64_t *out, Diag *d)
{
    int64_t ad[TVMCC_MAX_RANK], bd[TVMCC_MAX_RANK];
    int ar, br, r, i;
    char fa[16], fb[16];
    snprintf(fa, sizeof fa, "input[%d]", ia);
    snprintf(fb, sizeof fb, "input[%d]", ib);
    if (a->rank < 1 || b->rank < 1)
        return diag_error(d, n, a->rank < 1 ? fa : fb, "operands must have rank >= 1");
    if (a->dims[a->rank - 1] != b->dims[b->rank >= 2 ? b->rank - 2 : 0])
        return diag_error(d, n, fb, "inner dimensions differ");
    ar = a->rank >= 2 ? a->rank - 2 : 0;
    br = b->rank >= 2 ? b->rank - 2 : 0;
    for (i = 0; i < ar; i++)
        ad[i] = a->dims[i];
    for (i = 0; i < br; i++)
        bd[i] = b->dims[i];
    if (infer_broadcast(n, ar, ad, br, bd, &r, out, d, fb))
        return 1;
    if (a->rank >= 2)
        out[r++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        out[r++] = b->dims[b->rank - 1];
    if (r > TVMCC_MAX_RANK)
        return diag_error(d, n, "output[0]", "rank above %d", TVMCC_MAX_RANK);
    *rank = r;
    return 0;
}

static int need_8bit(Graph *g, Node *n, int i, Diag *d)
{
    char field[32];
    if (need_input(g, n, i, d))
        return 1;
    snprintf(field, sizeof field, "input[%d]", i);
    if (!is_8bit(in_val(g, n, i)->dtype))
        return diag_error(d, n, field, "element type %s is not supported (int8 or uint8)",
                          dtype_name(in_val(g, n, i)->dtype));
    return 0;
}

int infer_MatMulInteger(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    int r;
    Value *a, *b;
    if (need_8bit(g, n, 0, d) || need_8bit(g, n, 1, d))
        return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 1);
    if (check_param(g, n, 2, a->rank >= 2 ? a->dims[a->rank - 2] : 1, d) ||
        check_param(g, n, 3, b->rank >= 2 ? b->dims[b->rank - 1] : 1, d))
        return 1;
    if (matmul_shape(n, a, b, 0, 1, &r, dims, d))
        return 1;
    return value_set(g, n->out[0], DT_INT32, r, dims, d, n);
}

int infer_QLinearMatMul(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    int r, i;
    Value *a, *b;
    if (need_8bit(g, n, 0, d) || need_8bit(g, n, 3, d) || need_8bit(g, n, 7, d))
        return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 3);
    /* b's scale and zero point: per tensor, or per column (its last axis) */
    for (i = 1; i < 8; i++)
        if (i != 3 && check_param(g, n, i, (i == 4 || i == 5) && b->rank >= 2 ?
                                  b->dims[b->rank - 1] : 0, d))
            return 1;
    if (matmul_shape(n, a, b, 0, 3, &r, dims, d))
        return 1;
    return value_set(g, n->out[0], in_val(g, n, 7)->dtype, r, dims, d, n);
}

/* Output shape of a convolution of x by weights w (the window of
 * infer_conv_window and group), stored on n as its ConvWindow. */
static int conv_shape(Graph *g, Node *n, const Value *x, const Value *w, int64_t *out, Diag *d)
{
    int64_t group = attr_int(n, "group", 1, d);
    ConvWindow win;
    int i;
    if (x->rank < 3 || w->rank != x->rank)
        return diag_error(d, n, "input[1]", "expected N x C x spatial input and weights of the "
                          "same rank");
    if (group < 1 || x->dims[1] != w->dims[1] * group || w->dims[0] % group)
        return diag_error(d, n, "group", "channel counts do not match the group count");
    if (infer_conv_window(n, x, w->dims + 2, 0, &win, d))
        return 1;
    win.group = group;
    out[0] = x->dims[0];
    out[1] = w->dims[0];
    for (i = 0; i < win.nsp; i++)
        out[2 + i] = win.out[i];
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    return 0;
}

int infer_ConvInteger(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    Value *x, *w;
    if (need_8bit(g, n, 0, d) || need_8bit(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    w = in_val(g, n, 1);
    if (check_param(g, n, 2, 0, d) || check_param(g, n, 3, w->dims[0], d))
        return 1;
    if (conv_shape(g, n, x, w, dims, d))
        return 1;
    return value_set(g, n->out[0], DT_INT32, x->rank, dims, d, n);
}

int infer_QLinearConv(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    Value *x, *w;
    int i;
    if (need_8bit(g, n, 0, d) || need_8bit(g, n, 3, d) || need_8bit(g, n, 7, d))
        return 1;
    x = in_val(g, n, 0);
    w = in_val(g, n, 3);
    for (i = 1; i < 8; i++)
        if (i != 3 && check_param(g, n, i, (i == 4 || i == 5) ? w->dims[0] : 0, d))
            return 1;
    if (n->n_in > 8 && n->in[8] >= 0) {
        Value *b;
        if (need_input(g, n, 8, d))
            return 1;
        b = in_val(g, n, 8);
        if (b->dtype != DT_INT32 || b->rank != 1 || b->dims[0] != w->dims[0])
            return diag_error(d, n, "input[8]", "bias must be int32 of length %lld",
                              (long long)w->dims[0]);
    }
    if (conv_shape(g, n, x, w, dims, d))
        return 1;
    return value_set(g, n->out[0], in_val(g, n, 7)->dtype, x->rank, dims, d, n);
}

/* ---- onnxruntime's com.microsoft QOperator ops ----
 *
 * Their scales are float32 scalars and their zero points scalars of the
 * quantized tensor's type (QGemm's b_scale and b_zero_point may also be
 * per column). The op table's minimum input count stops before the first
 * optional input: qop_count() checks the operator's own. */

static int qop_count(const Node *n, int lo, int hi, Diag *d)
{
    if (n->n_in >= lo && (hi < 0 || n->n_in <= hi))
        return 0;
    if (lo == hi)
        return diag_error(d, n, "input count", "%s takes %d inputs, got %d", n->op_type, lo,
                          n->n_in);
    return diag_error(d, n, "input count", "%s takes %d to %d inputs, got %d", n->op_type, lo, hi,
                      n->n_in);
}

/* Required scale input i: float32, a scalar or (len > 0) 1-D of len. */
static int qop_scale(Graph *g, Node *n, int i, int64_t len, Diag *d)
{
    char field[32];
    Value *v;
    if (need_input(g, n, i, d))
        return 1;
    v = in_val(g, n, i);
    snprintf(field, sizeof field, "input[%d]", i);
    if (v->dtype != DT_FLOAT32)
        return diag_error(d, n, field, "scale must be float32, got %s", infer_type_name(v->dtype));
    if (value_numel(v) == 1 && v->rank <= 1)
        return 0;
    if (len > 0 && v->rank == 1 && v->dims[0] == len)
        return 0;
    if (len > 0)
        return diag_error(d, n, field, "scale must be a scalar or 1-D of %lld (per column)",
                          (long long)len);
    return diag_error(d, n, field, "scale must be a scalar");
}

/* Optional zero point input i (or required when `req`): type t, a scalar or
 * (len > 0) 1-D of len. */
static int qop_zp(Graph *g, Node *n, int i, DType t, int64_t len, int req, Diag *d)
{
    char field[32];
    Value *v;
    if (i >= n->n_in || n->in[i] < 0) {
        if (!req)
            return 0;
    }
    if (need_input(g, n, i, d))
        return 1;
    v = in_val(g, n, i);
    snprintf(field, sizeof field, "input[%d]", i);
    if (v->dtype != t)
        return diag_error(d, n, field, "zero point type %s differs from the quantized tensor's %s",
                          infer_type_name(v->dtype), infer_type_name(t));
    if (value_numel(v) == 1 && v->rank <= 1)
        return 0;
    if (len > 0 && v->rank == 1 && v->dims[0] == len)
        return 0;
    if (len > 0)
        return diag_error(d, n, field, "zero point must be a scalar or 1-D of %lld (per column)",
                          (long long)len);
    return diag_error(d, n, field, "zero point must be a scalar");
}

/* Quantized input ix (int8 or uint8) with scale ix + 1 and optional zero
 * point ix + 2; its type in *t. */
static int qop_input(Graph *g, Node *n, int ix, DType *t, Diag *d)
{
    if (need_8bit(g, n, ix, d))
        return 1;
    *t = in_val(g, n, ix)->dtype;
    return qop_scale(g, n, ix + 1, 0, d) || qop_zp(g, n, ix + 2, *t, 0, 0, d);
}

static int qop_binary(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    DType ta, tb;
    Value *a, *b;
    int r;
    if (qop_count(n, 7, 8, d) || qop_input(g, n, 0, &ta, d) || qop_input(g, n, 3, &tb, d))
        return 1;
    if (tb != ta)
        return diag_error(d, n, "input[3]", "type %s differs from input[0]'s %s",
                          infer_type_name(tb), infer_type_name(ta));
    if (qop_scale(g, n, 6, 0, d) || qop_zp(g, n, 7, ta, 0, 0, d))
        return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 3);
    if (infer_broadcast(n, a->rank, a->dims, b->rank, b->dims, &r, dims, d, "input[3]"))
        return 1;
    if (infer_need_output(g, n, 0, d))
        return 1;
    return value_set(g, n->out[0], ta, r, dims, d, n);
}

int infer_QLinearAdd(Graph *g, Node *n, Diag *d) { return qop_binary(g, n, d); }
int infer_QLinearMul(Graph *g, Node *n, Diag *d) { return qop_binary(g, n, d); }

/* X, x_scale, [x_zero_point], y_scale, [y_zero_point]: output y of x's
 * type; its shape is set by the caller. */
static int qop_unary(Graph *g, Node *n, int lo, int hi, DType *t, Diag *d)
{
    if (qop_count(n, lo, hi, d) || qop_input(g, n, 0, t, d) || qop_scale(g, n, 3, 0, d) ||
        qop_zp(g, n, 4, *t, 0, 0, d))
        return 1;
    return infer_need_output(g, n, 0, d);
}

int infer_QLinearSigmoid(Graph *g, Node *n, Diag *d)
{
    DType t;
    Value *x;
    if (qop_unary(g, n, 4, 5, &t, d))
        return 1;
    x = in_val(g, n, 0);
    return value_set(g, n->out[0], t, x->rank, x->dims, d, n);
}

int infer_QLinearLeakyRelu(Graph *g, Node *n, Diag *d)
{
    ScalarParams p;
    DType t;
    Value *x;
    int errs = d->errors;
    if (qop_unary(g, n, 4, 5, &t, d))
        return 1;
    memset(&p, 0, sizeof p);
    p.alpha = attr_float(n, "alpha", 0.01, d);
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
    x = in_val(g, n, 0);
    return value_set(g, n->out[0], t, x->rank, x->dims, d, n);
}

/* The channel axis in AxisParams: 1, or the last one with channels_last. */
int infer_QLinearGlobalAveragePool(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK], cl;
    DType t;
    Value *x;
    int i, cax;
    if (qop_unary(g, n, 5, 5, &t, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->rank < 3)
        return diag_error(d, n, "input[0]", "rank %d is too small: expected N x C x spatial",
                          x->rank);
    cl = attr_int(n, "channels_last", 0, d);
    if (cl != 0 && cl != 1)
        return diag_error(d, n, "channels_last", "must be 0 or 1, not %lld", (long long)cl);
    cax = cl ? x->rank - 1 : 1;
    for (i = 0; i < x->rank; i++) {
        int spatial = i != 0 && i != cax;
        if (spatial && x->dims[i] == 0)
            return diag_error(d, n, "input[0]", "spatial dimension %d is empty", i);
        dims[i] = spatial ? 1 : x->dims[i];
    }
    infer_set_axis(g, n, cax, NULL);
    return value_set(g, n->out[0], t, x->rank, dims, d, n);
}

int infer_QLinearAveragePool(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    ConvWindow win;
    DType t;
    Value *x;
    int i;
    if (qop_unary(g, n, 4, 5, &t, d))
        return 1;
    x = in_val(g, n, 0);
    if (attr_int(n, "channels_last", 0, d) != 0)
        return diag_error(d, n, "channels_last", "only 0 (N x C x spatial input) is supported");
    if (infer_conv_window(n, x, NULL, 1, &win, d))
        return 1;
    win.count_include_pad = attr_int(n, "count_include_pad", 0, d) != 0;
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (i = 0; i < win.nsp; i++)
        dims[2 + i] = win.out[i];
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    return value_set(g, n->out[0], t, x->rank, dims, d, n);
}

/* Y_scale, Y_zero_point, then (X, x_scale, x_zero_point) per input; the
 * inputs and the output share Y_zero_point's type. */
int infer_QLinearConcat(Graph *g, Node *n, Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    Value *x0 = NULL;
    DType t;
    int axis = 0, i, k;
    if (n->n_in < 5 || (n->n_in - 2) % 3)
        return diag_error(d, n, "input count", "QLinearConcat takes Y_scale, Y_zero_point and "
                          "one (X, scale, zero point) triple per input, got %d inputs", n->n_in);
    if (qop_scale(g, n, 0, 0, d) || need_8bit(g, n, 1, d))
        return 1;
    t = in_val(g, n, 1)->dtype;
    if (qop_zp(g, n, 1, t, 0, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    if (!node_attr(n, "axis"))
        return diag_error(d, n, "axis", "required attribute is missing");
    for (i = 2; i < n->n_in; i += 3) {
        char field[32];
        Value *v;
        DType tx;
        if (qop_input(g, n, i, &tx, d))
            return 1;
        v = in_val(g, n, i);
        snprintf(field, sizeof field, "input[%d]", i);
        if (tx != t)
            return diag_error(d, n, field, "type %s differs from Y_zero_point's %s",
                              infer_type_name(tx), infer_type_name(t));
        if (!x0) {
            x0 = v;
            if (x0->rank == 0)
                return diag_error(d, n, field, "cannot concatenate scalars");
            if (infer_axis(n, attr_int(n, "axis", 0, d), x0->rank, &axis, d, "axis"))
                return 1;
            memcpy(dims, x0->dims, sizeof dims);
            continue;
        }
        if (v->rank != x0->rank)
            return diag_error(d, n, field, "rank %d differs from input[2]'s %d", v->rank,
                              x0->rank);
        for (k = 0; k < v->rank; k++)
            if (k != axis && v->dims[k] != x0->dims[k])
                return diag_error(d, n, field, "dimension %d is %lld, input[2] has %lld", k,
                                  (long long)v->dims[k], (long long)x0->dims[k]);
        if (ck_add(dims[axis], v->dims[axis], &dims[axis]))
            return diag_error(d, n, "axis", "size overflows");
    }
    infer_set_axis(g, n, axis, NULL);
    return value_set(g, n->out[0], t, x0->rank, dims, d, n);
}

/* The attribute opset is the Softmax semantics: before 13 every dimension
 * from axis (default 1) is normalised, from 13 only axis (default -1). */
int infer_QLinearSoftmax(Graph *g, Node *n, Diag *d)
{
    AxisParams p;
    int64_t opset;
    DType t;
    Value *x;
    int ax;
    if (qop_unary(g, n, 4, 5, &t, d))
        return 1;
    x = in_val(g, n, 0);
    if (!node_attr(n, "opset"))
        return diag_error(d, n, "opset", "required attribute is missing");
    opset = attr_int(n, "opset", 13, d);
    if (opset < 1 || opset > 1000)
        return diag_error(d, n, "opset", "%lld is not an opset", (long long)opset);
    if (x->rank < 1)
        return diag_error(d, n, "input[0]", "a scalar has no axis to normalise over");
    if (infer_axis(n, attr_int(n, "axis", opset >= 13 ? -1 : 1, d), x->rank, &ax, d, "axis"))
        return 1;
    memset(&p, 0, sizeof p);
    p.axis = ax;
    p.coerce_2d = opset < 13;
    infer_set_axis(g, n, ax, &p);
    return value_set(g, n->out[0], t, x->rank, x->dims, d, n);
}

/* A, a_scale, a_zero_point, B, b_scale, b_zero_point (per tensor or per
 * column of the output), C (int32, broadcast to M x N), y_scale and
 * y_zero_point: with them the output is quantized (y_zero_point's type),
 * without them float32. ScalarParams: alpha, trans_a, trans_b (beta 1). */
int infer_QGemm(Graph *g, Node *n, Diag *d)
{
    ScalarParams p;
    int64_t m, k, k2, nn, dims[2], cd[TVMCC_MAX_RANK];
    DType ta, tb, ty = DT_FLOAT32;
    Value *a, *b;
    int errs = d->errors, r;
    if (qop_count(n, 6, 9, d) || need_8bit(g, n, 0, d) || need_8bit(g, n, 3, d))
        return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 3);
    ta = a->dtype;
    tb = b->dtype;
    if (a->rank != 2 || b->rank != 2)
        return diag_error(d, n, a->rank != 2 ? "input[0]" : "input[3]",
                          "QGemm operands must be 2-D (ranks %d and %d)", a->rank, b->rank);
    memset(&p, 0, sizeof p);
    p.trans_a = attr_int(n, "transA", 0, d) != 0;
    p.trans_b = attr_int(n, "transB", 0, d) != 0;
    p.alpha = attr_float(n, "alpha", 1.0, d);
    p.beta = 1.0;
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
    if (!isfinite(p.alpha))
        return diag_error(d, n, "alpha", "must be finite");
    m = p.trans_a ? a->dims[1] : a->dims[0];
    k = p.trans_a ? a->dims[0] : a->dims[1];
    k2 = p.trans_b ? b->dims[1] : b->dims[0];
    nn = p.trans_b ? b->dims[0] : b->dims[1];
    if (k != k2)
        return diag_error(d, n, "input[3]", "inner dimensions differ: %lld and %lld",
                          (long long)k, (long long)k2);
    if (qop_scale(g, n, 1, 0, d) || qop_zp(g, n, 2, ta, 0, 1, d) ||
        qop_scale(g, n, 4, nn, d) || qop_zp(g, n, 5, tb, nn, 0, d))
        return 1;
    dims[0] = m;
    dims[1] = nn;
    if (n->n_in > 6 && n->in[6] >= 0) {
        Value *c;
        if (need_input(g, n, 6, d))
            return 1;
        c = in_val(g, n, 6);
        if (c->dtype != DT_INT32)
            return diag_error(d, n, "input[6]", "C must be int32, got %s",
                              infer_type_name(c->dtype));
        if (infer_broadcast(n, c->rank, c->dims, 2, dims, &r, cd, d, "input[6]"))
            return 1;
        if (r != 2 || cd[0] != m || cd[1] != nn)
            return diag_error(d, n, "input[6]", "C does not broadcast to %lld x %lld",
                              (long long)m, (long long)nn);
    }
    if (n->n_in > 7 && n->in[7] >= 0) {
        if (qop_scale(g, n, 7, 0, d))
            return 1;
        if (n->n_in < 9 || n->in[8] < 0)
            return diag_error(d, n, "input[8]", "y_zero_point is required with y_scale (it "
                              "gives the output type)");
        if (need_8bit(g, n, 8, d))
            return 1;
        ty = in_val(g, n, 8)->dtype;
        if (qop_zp(g, n, 8, ty, 0, 1, d))
            return 1;
    } else if (n->n_in > 8 && n->in[8] >= 0) {
        return diag_error(d, n, "input[7]", "y_zero_point without y_scale");
    }
    if (infer_need_output(g, n, 0, d))
        return 1;
    return value_set(g, n->out[0], ty, 2, dims, d, n);
}
