/*
 * Shape and type inference for the compute-heavy operators: convolution,
 * Gemm and MatMul, the pooling family, BatchNormalization, the Reduce*
 * family, Softmax/LogSoftmax and Resize.
 *
 * Convolution and pooling share one sliding-window rule (infer_conv_window in
 * infer_util.c): kernel, strides, dilations and pads are read, auto_pad is
 * resolved into explicit begin/end pads, and each spatial output extent is
 * computed from them (ceil_mode included). The result is stored on the node
 * as its ConvWindow (ir/params.h), which lower/op_nn.c reads; the Reduce*
 * axes likewise become the node's ReduceParams.
 *
 * Shape-like inputs that are not compile-time constants (Reduce axes,
 * Resize scales/sizes) fall back to the declared output shape, and the
 * lowering then either reads the values at run time or derives them from the
 * two static shapes.
 */
#include "infer.h"

#include <math.h>
#include <string.h>

int infer_Conv(Graph *g, Node *n, Diag *d)
{
    Value *x, *w, *b;
    ConvWindow win;
    int64_t dims[TVMCC_MAX_RANK], group;
    int i;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    w = in_val(g, n, 1);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (w->dtype != x->dtype)
        return diag_error(d, n, "input[1]", "weight type %s differs from input type %s",
                          dtype_name(w->dtype), dtype_name(x->dtype));
    if (x->rank < 3)
        return diag_error(d, n, "input[0]", "rank %d is too small: expected N x C x spatial",
                          x->rank);
    if (w->rank != x->rank)
        return diag_error(d, n, "input[1]", "weight rank %d differs from input rank %d",
                          w->rank, x->rank);
    group = attr_int(n, "group", 1, d);
    if (group < 1 || x->dims[1] % group != 0 || w->dims[0] % group != 0)
        return diag_error(d, n, "group", "%lld does not divide the %lld input and %lld output "
                          "channels", (long long)group, (long long)x->dims[1],
                          (long long)w->dims[0]);
    if (w->dims[1] * group != x->dims[1])
        return diag_error(d, n, "input[1]", "weights expect %lld channels per group, the input "
                          "has %lld in %lld groups", (long long)w->dims[1],
                          (long long)x->dims[1], (long long)group);
    if (infer_conv_window(n, x, w->dims + 2, 0, &win, d))
        return 1;
    win.group = group;
    if (n->n_in > 2 && n->in[2] >= 0) {
        if (need_input(g, n, 2, d))
            return 1;
        b = in_val(g, n, 2);
        if (b->rank != 1 || b->dims[0] != w->dims[0])
            return diag_error(d, n, "input[2]", "bias must be 1-D of length %lld",
                              (long long)w->dims[0]);
        if (b->dtype != x->dtype)
            return diag_error(d, n, "input[2]", "bias type %s differs from input type %s",
                              dtype_name(b->dtype), dtype_name(x->dtype));
    }
    dims[0] = x->dims[0];
    dims[1] = w->dims[0];
    for (i = 0; i < win.nsp; i++)
        dims[2 + i] = win.out[i];
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

int infer_Gemm(Graph *g, Node *n, Diag *d)
{
    Value *a, *b;
    int64_t ta, tb, m, k, k2, nn, dims[2];
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 1);
    if (infer_need_numeric(n, a, "input[0]", d))
        return 1;
    /* integer Gemm multiplies by alpha and beta as integer constants */
    if (infer_attr_fits(n, "alpha", a->dtype, d) || infer_attr_fits(n, "beta", a->dtype, d))
        return 1;
    if (a->rank != 2 || b->rank != 2)
        return diag_error(d, n, a->rank != 2 ? "input[0]" : "input[1]",
                          "Gemm operands must be 2-D (ranks %d and %d)", a->rank, b->rank);
    if (b->dtype != a->dtype)
        return diag_error(d, n, "input[1]", "type %s differs from input[0]'s %s",
                          dtype_name(b->dtype), dtype_name(a->dtype));
    ta = attr_int(n, "transA", 0, d);
    tb = attr_int(n, "transB", 0, d);
    m = ta ? a->dims[1] : a->dims[0];
    k = ta ? a->dims[0] : a->dims[1];
    k2 = tb ? b->dims[1] : b->dims[0];
    nn = tb ? b->dims[0] : b->dims[1];
    if (k != k2)
        return diag_error(d, n, "input[1]", "inner dimensions differ: %lld and %lld",
                          (long long)k, (long long)k2);
    dims[0] = m;
    dims[1] = nn;
    if (n->n_in > 2 && n->in[2] >= 0) {
        Value *c;
        int r;
        int64_t od[TVMCC_MAX_RANK];
        if (need_input(g, n, 2, d))
            return 1;
        c = in_val(g, n, 2);
        if (c->dtype != a->dtype)
            return diag_error(d, n, "input[2]", "type %s differs from input[0]'s %s",
                              dtype_name(c->dtype), dtype_name(a->dtype));
        if (c->rank > 2 || infer_broadcast(n, 2, dims, c->rank, c->dims, &r, od, d, "input[2]"))
            return c->rank > 2 ? diag_error(d, n, "input[2]", "C must have rank <= 2") : 1;
        if (od[0] != m || od[1] != nn)
            return diag_error(d, n, "input[2]", "C does not broadcast to [%lld,%lld]",
                              (long long)m, (long long)nn);
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], a->dtype, 2, dims, d, n);
}

int infer_MatMul(Graph *g, Node *n, Diag *d)
{
    Value *a, *b;
    int64_t ad[TVMCC_MAX_RANK], bd[TVMCC_MAX_RANK], od[TVMCC_MAX_RANK];
    int ar, br, r, i, ka, kb;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    a = in_val(g, n, 0);
    b = in_val(g, n, 1);
    if (infer_need_numeric(n, a, "input[0]", d))
        return 1;
    if (b->dtype != a->dtype)
        return diag_error(d, n, "input[1]", "type %s differs from input[0]'s %s",
                          dtype_name(b->dtype), dtype_name(a->dtype));
    if (a->rank < 1 || b->rank < 1)
        return diag_error(d, n, a->rank < 1 ? "input[0]" : "input[1]",
                          "MatMul operands must have rank >= 1");
    ka = a->rank - 1;
    kb = b->rank >= 2 ? b->rank - 2 : 0;
    if (a->dims[ka] != b->dims[kb])
        return diag_error(d, n, "input[1]", "inner dimensions differ: %lld and %lld",
                          (long long)a->dims[ka], (long long)b->dims[kb]);
    ar = a->rank >= 2 ? a->rank - 2 : 0;
    br = b->rank >= 2 ? b->rank - 2 : 0;
    for (i = 0; i < ar; i++)
        ad[i] = a->dims[i];
    for (i = 0; i < br; i++)
        bd[i] = b->dims[i];
    if (infer_broadcast(n, ar, ad, br, bd, &r, od, d, "input[1]"))
        return 1;
    if (a->rank >= 2)
        od[r++] = a->dims[a->rank - 2];
    if (b->rank >= 2)
        od[r++] = b->dims[b->rank - 1];
    if (r > TVMCC_MAX_RANK)
        return diag_error(d, n, "output[0]", "rank above %d", TVMCC_MAX_RANK);
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], a->dtype, r, od, d, n);
}

/* MaxPool and AveragePool: same window rule, shape N C out... */
static int infer_pool(Graph *g, Node *n, Diag *d, int is_max)
{
    Value *x;
    ConvWindow win;
    int64_t dims[TVMCC_MAX_RANK];
    int i;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (is_max ? infer_need_numeric(n, x, "input[0]", d) : infer_need_float(n, x, "input[0]", d))
        return 1;
    if (infer_conv_window(n, x, NULL, 1, &win, d))
        return 1;
    if (is_max) {
        int64_t so = attr_int(n, "storage_order", 0, d);
        if (so != 0 && so != 1)
            return diag_error(d, n, "storage_order", "must be 0 or 1, not %lld", (long long)so);
        win.storage_order = (uint8_t)so;
    } else {
        win.count_include_pad = attr_int(n, "count_include_pad", 0, d) != 0;
    }
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (i = 0; i < win.nsp; i++)
        dims[2 + i] = win.out[i];
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    if (value_set(g, n->out[0], x->dtype, x->rank, dims, d, n))
        return 1;
    if (is_max && out_val(g, n, 1))
        return value_set(g, n->out[1], DT_INT64, x->rank, dims, d, n);
    return 0;
}

int infer_MaxPool(Graph *g, Node *n, Diag *d)
{
    return infer_pool(g, n, d, 1);
}

int infer_AveragePool(Graph *g, Node *n, Diag *d)
{
    return infer_pool(g, n, d, 0);
}

static int infer_global_pool(Graph *g, Node *n, Diag *d, int is_max)
{
    Value *x;
    int64_t dims[TVMCC_MAX_RANK];
    int i;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (is_max ? infer_need_numeric(n, x, "input[0]", d) : infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 3)
        return diag_error(d, n, "input[0]", "rank %d is too small: expected N x C x spatial",
                          x->rank);
    for (i = 0; i < x->rank; i++) {
        if (i >= 2 && x->dims[i] == 0)
            return diag_error(d, n, "input[0]", "spatial dimension %d is empty", i);
        dims[i] = i < 2 ? x->dims[i] : 1;
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

int infer_GlobalAveragePool(Graph *g, Node *n, Diag *d)
{
    return infer_global_pool(g, n, d, 0);
}

int infer_GlobalMaxPool(Graph *g, Node *n, Diag *d)
{
    return infer_global_pool(g, n, d, 1);
}

int infer_BatchNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int i;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 2)
        return diag_error(d, n, "input[0]", "rank %d is too small: expected N x C x ...",
                          x->rank);
    if (attr_int(n, "training_mode", 0, d) != 0)
        return diag_error(d, n, "training_mode", "training mode is not supported (inference "
                          "only)");
    if (attr_int(n, "spatial", 1, d) != 1)
        return diag_error(d, n, "spatial", "spatial=0 is not supported");
    for (i = 1; i < n->n_out; i++)
        if (n->out[i] >= 0)
            return diag_error(d, n, "output[1]", "training outputs (running or saved mean and "
                              "variance) are not supported");
    for (i = 1; i < 5; i++) {
        char field[16];
        Value *p;
        snprintf(field, sizeof field, "input[%d]", i);
        if (need_input(g, n, i, d))
            return 1;
        p = in_val(g, n, i);
        if (!dtype_is_float(p->dtype))
            return diag_error(d, n, field, "element type %s is not a float type",
                              dtype_name(p->dtype));
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            return diag_error(d, n, field, "must be 1-D of length %lld (the channels)",
                              (long long)x->dims[1]);
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}

/* ---- reductions ---- */

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
    if (infer_need_numeric(n, x, "input[0]", d))
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
                return infer_use_declared(g, n, 0, d, "axes input is computed at run time");
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
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}

int infer_Softmax(Graph *g, Node *n, Diag *d) { return infer_softmax(g, n, d); }
int infer_LogSoftmax(Graph *g, Node *n, Diag *d) { return infer_softmax(g, n, d); }

/* ---- Resize ---- */

static int check_resize_attrs(const Node *n, Diag *d)
{
    static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
    static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                       "asymmetric", "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize", NULL};
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                      "ceil", NULL};
    const char *m = attr_string(n, "mode", "nearest", d);
    const char *c = attr_string(n, "coordinate_transformation_mode", "half_pixel", d);
    const char *nm = attr_string(n, "nearest_mode", "round_prefer_floor", d);
    int i;
    for (i = 0; modes[i] && strcmp(modes[i], m); i++)
        ;
    if (!modes[i])
        return diag_error(d, n, "mode", "unknown value '%s'", m);
    for (i = 0; ctms[i] && strcmp(ctms[i], c); i++)
        ;
    if (!ctms[i])
        return diag_error(d, n, "coordinate_transformation_mode", "unknown value '%s'", c);
    for (i = 0; nms[i] && strcmp(nms[i], nm); i++)
        ;
    if (!nms[i])
        return diag_error(d, n, "nearest_mode", "unknown value '%s'", nm);
    if (node_attr(n, "axes") || node_attr(n, "keep_aspect_ratio_policy") || n->opset >= 18)
        return diag_error(d, n, "axes", "Resize from opset 18 (axes, aspect ratio policy) is "
                          "not supported");
    return 0;
}

/* Reads a constant float list (scales, roi) of any float type. Returns the
 * count, or -1 when the input is not a compile-time constant. */
static int64_t const_floats(const Graph *g, int32_t vi, double *dst, int64_t cap)
{
    const Value *v = &g->values[vi];
    int64_t cnt = value_numel(v), i;
    if (!v->data || cnt < 0 || cnt > cap)
        return -1;
    for (i = 0; i < cnt; i++) {
        if (v->dtype == DT_FLOAT32)
            dst[i] = ((const float *)v->data)[i];
        else if (v->dtype == DT_FLOAT64)
            dst[i] = ((const double *)v->data)[i];
        else
            return -1;
    }
    return cnt;
}

int infer_Resize(Graph *g, Node *n, Diag *d)
{
    Value *x;
    int64_t dims[TVMCC_MAX_RANK];
    int scales_in = n->opset >= 11 ? 2 : 1, i;
    int have_scales, have_sizes;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_numeric(n, x, "input[0]", d) || check_resize_attrs(n, d) ||
        infer_attr_fits(n, "extrapolation_value", x->dtype, d))
        return 1;
    have_scales = in_val(g, n, scales_in) && value_numel(in_val(g, n, scales_in)) > 0;
    have_sizes = n->opset >= 11 && in_val(g, n, 3) && value_numel(in_val(g, n, 3)) > 0;
    if (have_scales == have_sizes)
        return diag_error(d, n, "input[2]", "exactly one of scales and sizes must be given");
    if (have_sizes) {
        const int64_t *sz;
        int64_t cnt;
        if (need_input(g, n, 3, d))
            return 1;
        cnt = value_const_ints(g, n->in[3], &sz);
        if (cnt < 0)
            return infer_use_declared(g, n, 0, d, "sizes input is computed at run time");
        if (cnt != x->rank)
            return diag_error(d, n, "input[3]", "sizes has %lld entries for rank %d",
                              (long long)cnt, x->rank);
        for (i = 0; i < x->rank; i++) {
            if (sz[i] < 0)
                return diag_error(d, n, "input[3]", "size %lld is negative", (long long)sz[i]);
            dims[i] = sz[i];
        }
    } else {
        double sc[TVMCC_MAX_RANK];
        int64_t cnt;
        if (need_input(g, n, scales_in, d))
            return 1;
        if (!dtype_is_float(in_val(g, n, scales_in)->dtype))
            return diag_error(d, n, "scales", "must be a float tensor");
        cnt = value_numel(in_val(g, n, scales_in));
        if (cnt != x->rank)
            return diag_error(d, n, "scales", "has %lld entries for rank %d", (long long)cnt,
                              x->rank);
        if (const_floats(g, n->in[scales_in], sc, TVMCC_MAX_RANK) < 0)
            return infer_use_declared(g, n, 0, d, "scales input is computed at run time");
        for (i = 0; i < x->rank; i++) {
            double o = floor((double)x->dims[i] * sc[i]);
            if (!(sc[i] > 0) || !(o < 2147483648.0))
                return diag_error(d, n, "scales", "scale %g for dimension %d is out of range",
                                  sc[i], i);
            dims[i] = (int64_t)o;
        }
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}
