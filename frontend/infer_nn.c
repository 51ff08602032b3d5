/*
 * Shape and type inference for the compute-heavy operators: convolution,
 * Gemm and MatMul, the pooling family and BatchNormalization (the Reduce*
 * family and Softmax are in infer_reduce.c, Resize in infer_resize.c).
 *
 * Convolution and pooling share one sliding-window rule (infer_conv_window in
 * infer_util.c): kernel, strides, dilations and pads are read, auto_pad is
 * resolved into explicit begin/end pads, and each spatial output extent is
 * computed from them (ceil_mode included). The result is stored on the node
 * as its ConvWindow (ir/params.h), which lower/op_nn.c reads.
 */
#include "infer.h"

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
    ScalarParams p;
    int64_t ta, tb, m, k, k2, nn, dims[2];
    int errs = d->errors;
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
    memset(&p, 0, sizeof p);
    p.trans_a = ta != 0;
    p.trans_b = tb != 0;
    p.alpha = attr_float(n, "alpha", 1.0, d);
    p.beta = attr_float(n, "beta", 1.0, d);
    if (infer_set_scalar(g, n, &p, errs, d))
        return 1;
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

/* LpPool: the window rule of AveragePool (dilations and ceil_mode from
 * opset 18), p >= 1. */
int infer_LpPool(Graph *g, Node *n, Diag *d)
{
    Value *x;
    ConvWindow win;
    int64_t dims[TVMCC_MAX_RANK], p;
    int i;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d) ||
        infer_conv_window(n, x, NULL, n->opset >= 18, &win, d))
        return 1;
    p = attr_int(n, "p", 2, d);
    if (p < 1 || p > 1000)
        return diag_error(d, n, "p", "must be from 1 to 1000, not %lld", (long long)p);
    win.lp = (int32_t)p;
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (i = 0; i < win.nsp; i++)
        dims[2 + i] = win.out[i];
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
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
    ScalarParams sp;
    int i, errs = d->errors;
    memset(&sp, 0, sizeof sp);
    sp.epsilon = attr_float(n, "epsilon", 1e-5, d);
    if (infer_set_scalar(g, n, &sp, errs, d))
        return 1;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (x->rank < 2)
        return diag_error(d, n, "input[0]", "rank %d is too small: expected N x C x ...",
                          x->rank);
    if (n->opset >= 14)
        sp.training = attr_int(n, "training_mode", 0, d) != 0;
    if (attr_int(n, "spatial", 1, d) != 1)
        return diag_error(d, n, "spatial", "spatial=0 is not supported");
    for (i = 1; i < n->n_out; i++)
        if (n->out[i] >= 0 && !(sp.training && i < 3))
            return diag_error(d, n, "output[1]", "%s", n->opset >= 14
                              ? "running mean and variance are outputs of training mode only"
                              : "training outputs (running or saved mean and variance) before "
                                "opset 14 are not supported");
    sp.momentum = attr_float(n, "momentum", 0.9, d);
    if (infer_set_scalar(g, n, &sp, errs, d))
        return 1;
    for (i = 1; i < 5; i++) {
        char field[24];
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
    for (i = 1; i < 3 && i < n->n_out; i++)
        if (n->out[i] >= 0 &&
            value_set(g, n->out[i], in_val(g, n, i + 2)->dtype, 1, &x->dims[1], d, n))
            return 1;
    return value_set(g, n->out[0], x->dtype, x->rank, x->dims, d, n);
}
