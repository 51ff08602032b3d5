/*
 * Type and shape inference of the quantization operators: QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul,
 * ConvInteger and QLinearConv.
 *
 * Scales and zero points are either scalars (one-element tensors) or, for
 * the per-axis forms, 1-D tensors as long as the quantized axis. The matmul
 * forms take numpy matmul shapes; the conv forms the sliding window of
 * infer_conv_window() (infer_util.c), stored on the node for lower/op_quant.c.
 */
#include "infer.h"

#include <string.h>

static int is_8bit(DType t)
{
    return t == DT_INT8 || t == DT_UINT8;
}

/* Optional input i must be a scalar, or, when axis_len > 0, 1-D of that
 * length. */
static int check_param(Graph *g, Node *n, int i, int64_t axis_len, Diag *d)
{
    char field[16];
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

/* Length of the axis a per-axis parameter applies to, or -1 after an
 * error; stores the axis (-1 for per-tensor parameters) as AxisParams. */
static int64_t axis_len(Graph *g, Node *n, const Value *x, Diag *d)
{
    int ax;
    /* the axis matters only for per-axis parameters */
    if (x->rank == 0 || value_numel(in_val(g, n, 1)) == 1) {
        infer_set_axis(g, n, -1, NULL);
        return 1;
    }
    if (infer_axis(n, attr_int(n, "axis", 1, d), x->rank, &ax, d, "axis"))
        return -1;
    infer_set_axis(g, n, ax, NULL);
    return x->dims[ax];
}

int infer_QuantizeLinear(Graph *g, Node *n, Diag *d)
{
    Value *x;
    DType out = DT_UINT8;
    int64_t len;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    if (!dtype_is_float(x->dtype) && x->dtype != DT_INT32)
        return diag_error(d, n, "input[0]", "element type %s is not supported",
                          dtype_name(x->dtype));
    if (!dtype_is_float(in_val(g, n, 1)->dtype))
        return diag_error(d, n, "input[1]", "scale must be a float tensor");
    if ((len = axis_len(g, n, x, d)) < 0)
        return 1;
    if (check_param(g, n, 1, len, d) || check_param(g, n, 2, len, d))
        return 1;
    if (n->n_in > 2 && n->in[2] >= 0)
        out = in_val(g, n, 2)->dtype;
    else if (node_attr(n, "output_dtype"))
        out = (DType)attr_int(n, "output_dtype", DT_UINT8, d);
    if (!is_8bit(out) && out != DT_INT16 && out != DT_UINT16 && out != DT_INT32)
        return diag_error(d, n, "input[2]", "quantized type %s is not supported",
                          dtype_name(out) ? dtype_name(out) : "?");
    return value_set(g, n->out[0], out, x->rank, x->dims, d, n);
}

int infer_DequantizeLinear(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int64_t len;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    if (dtype_is_float(x->dtype) || x->dtype == DT_BOOL || !dtype_size(x->dtype))
        return diag_error(d, n, "input[0]", "element type %s is not a quantized type",
                          dtype_name(x->dtype) ? dtype_name(x->dtype) : "?");
    if (!dtype_is_float(in_val(g, n, 1)->dtype))
        return diag_error(d, n, "input[1]", "scale must be a float tensor");
    if ((len = axis_len(g, n, x, d)) < 0)
        return 1;
    if (check_param(g, n, 1, len, d) || check_param(g, n, 2, len, d))
        return 1;
    return value_set(g, n->out[0], in_val(g, n, 1)->dtype, x->rank, x->dims, d, n);
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
    char field[16];
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
    for (i = 1; i < 8; i++)
        if (i != 3 && check_param(g, n, i, 0, d))
            return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 3);
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
