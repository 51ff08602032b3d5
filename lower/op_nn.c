/*
 * Lowering of the compute-heavy operators: Conv, Gemm, MatMul, MaxPool
 * (with its optional Indices output), AveragePool, LpPool, GlobalAveragePool,
 * GlobalMaxPool and inference-mode BatchNormalization.
 *
 * Every op here is one reduction stage (two for MaxPool with Indices) in the
 * tensor-expression language of te.h. Padding is never materialised: an
 * input position outside the tensor is replaced by a neutral value with a
 * select on the bounds condition, and because both arms of a select may be
 * evaluated, the load itself always uses an index clamped into range. Bounds
 * tests are only built on the sides where a window can actually leave the
 * input, so unpadded convolutions lower to plain loads.
 *
 * Shapes were checked by frontend/infer_nn.c, which also parsed each node's
 * window (auto_pad resolved into pads) into the node's ConvWindow
 * (ir/params.h, node_window()); the lowering reads only that.
 */
#include "layout.h"
#include "lower.h"

#include <math.h>
#include <string.h>

static Expr *zero_of(Lower *L, DType t)
{
    return dtype_is_float(t) ? ex_float(L, t, 0.0) : ex_const_int(L, t, 0);
}

/* The smallest value of type t: the neutral element of a max. */
static Expr *lowest_of(Lower *L, DType t)
{
    switch (t) {
    case DT_FLOAT64: case DT_FLOAT32: case DT_FLOAT16: case DT_BFLOAT16:
        return ex_float(L, t, -HUGE_VAL);
    case DT_INT8: return ex_const_int(L, t, INT8_MIN);
    case DT_INT16: return ex_const_int(L, t, INT16_MIN);
    case DT_INT32: return ex_const_int(L, t, INT32_MIN);
    case DT_INT64: return ex_const_int(L, t, INT64_MIN);
    default: return ex_const_int(L, t, 0);
    }
}

static Expr *clamp(Lower *L, Expr *e, int64_t lo, int64_t hi)
{
    e = ex_binary(L, BIN_MAX, e, ex_int(L, lo));
    return ex_binary(L, BIN_MIN, e, ex_int(L, hi));
}

/* Builds, for output axes c->axes[2..] and reduce axes rk[], the clamped
 * input positions of a sliding window into idx[2..] and returns the
 * in-bounds condition (the constant 1 when no window leaves the input). */
static Expr *window_index(Lower *L, const Compute *c, const IterVar *rk, const ConvWindow *w,
                          const Value *x, Expr **idx)
{
    Expr *cond = ex_const_int(L, DT_BOOL, 1);
    int i;
    for (i = 0; i < w->nsp; i++) {
        int64_t in = x->dims[2 + i], out = c->axes[2 + i].extent;
        int64_t s = w->strides[i], dil = w->dilations[i], pb = w->pad_begin[i];
        int64_t last = (out - 1) * s - pb + (w->kernel[i] - 1) * dil;
        Expr *pos = ex_add(L, ex_sub(L, ex_mul(L, ex_var(L, &c->axes[2 + i]), ex_int(L, s)),
                                     ex_int(L, pb)),
                           ex_mul(L, ex_var(L, &rk[i]), ex_int(L, dil)));
        int low = pb > 0, high = last >= in;
        if (low)
            cond = ex_and(L, cond, ex_binary(L, BIN_GE, pos, ex_int(L, 0)));
        if (high)
            cond = ex_and(L, cond, ex_lt(L, pos, ex_int(L, in)));
        idx[2 + i] = (low || high) ? clamp(L, pos, 0, in - 1) : pos;
    }
    return cond;
}

int lower_Conv(Lower *L, Node *n)
{
    Graph *g = L->g;
    if (lower_layout_of(n) == LAYOUT_NHWC)
        return lower_conv_nhwc(L, n); /* channels-last, chosen by passes/layout.c */
    if (lower_layout_of(n) == LAYOUT_NCHWC)
        return lower_conv_nchwc(L, n); /* blocked channels, chosen by passes/layout.c */
    const Value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    const ConvWindow *win = node_window(n);
    int64_t group = win->group, mg = w->dims[0] / group, kvol = 1;
    int xb = lower_buf_value(L, n->in[0]), wb = lower_buf_value(L, n->in[1]);
    Compute *c = lower_stage(L, "conv", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    IterVar rk[TVMCC_MAX_RANK];
    IterVar *rc = lower_raxis(L, c, w->dims[1]);
    Expr *xi[TVMCC_MAX_RANK], *wi[TVMCC_MAX_RANK], *cond, *xv;
    int i;
    for (i = 0; i < win->nsp; i++) {
        rk[i] = *lower_raxis(L, c, win->kernel[i]);
        kvol *= win->kernel[i];
    }
    /* input channel = group of the output channel * channels per group + rc */
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, rc);
    if (group > 1)
        xi[1] = ex_add(L, ex_mul(L, ex_binary(L, BIN_DIV, ex_var(L, &c->axes[1]), ex_int(L, mg)),
                                 ex_int(L, w->dims[1])),
                       xi[1]);
    cond = window_index(L, c, rk, win, x, xi);
    xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
    if (cond->kind != EX_INT)
        xv = ex_select(L, cond, xv, zero_of(L, x->dtype));
    wi[0] = ex_var(L, &c->axes[1]);
    wi[1] = ex_var(L, rc);
    for (i = 0; i < win->nsp; i++)
        wi[2 + i] = ex_var(L, &rk[i]);
    c->window = win;
    c->rop = RED_SUM;
    c->body = ex_mul(L, xv, ex_load_nd(L, wb, w->rank, w->dims, wi));
    if (n->n_in > 2 && n->in[2] >= 0) {
        int bb = lower_buf_value(L, n->in[2]);
        c->init = ex_load(L, bb, ex_var(L, &c->axes[1]));
    }
    if (n->quant)
        lower_quant_sum(L, n, c, &c->axes[1]);
    L->k->macs += value_numel(y) * w->dims[1] * kvol;
    return 0;
}

/* A numeric constant of type t (floats exactly, integers truncated). */
static Expr *const_of(Lower *L, DType t, double v)
{
    return dtype_is_float(t) ? ex_float(L, t, v) : ex_const_int(L, t, dtype_float_to_int(t, v));
}

int lower_Gemm(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    const ScalarParams *p = node_scalar(n);
    int ta = p->trans_a, tb = p->trans_b;
    double alpha = p->alpha, beta = p->beta;
    int ab = lower_buf_value(L, n->in[0]), bbuf = lower_buf_value(L, n->in[1]);
    Compute *c = lower_stage(L, "gemm", lower_buf_value(L, n->out[0]), 2, y->dims);
    int64_t k = ta ? a->dims[0] : a->dims[1];
    IterVar *rk = lower_raxis(L, c, k);
    Expr *ai[2], *bi[2], *post = NULL;
    DType ct = dtype_compute(y->dtype);
    ai[ta ? 1 : 0] = ex_var(L, &c->axes[0]);
    ai[ta ? 0 : 1] = ex_var(L, rk);
    bi[tb ? 1 : 0] = ex_var(L, rk);
    bi[tb ? 0 : 1] = ex_var(L, &c->axes[1]);
    c->rop = RED_SUM;
    c->body = ex_mul(L, ex_load_nd(L, ab, 2, a->dims, ai), ex_load_nd(L, bbuf, 2, b->dims, bi));
    L->k->macs += value_numel(y) * k;
    if (n->quant) { /* alpha, beta and C are in the integer form's constants */
        lower_quant_sum(L, n, c, &c->axes[1]);
        return 0;
    }
    if (alpha != 1.0)
        post = ex_mul(L, const_of(L, ct, alpha), ex_acc(L, ct));
    if (n->n_in > 2 && n->in[2] >= 0 && beta != 0.0) {
        const Value *cv = &g->values[n->in[2]];
        Expr *cl = ex_load_broadcast(L, lower_buf_value(L, n->in[2]), cv->rank, cv->dims, c);
        if (beta != 1.0)
            cl = ex_mul(L, const_of(L, ct, beta), cl);
        post = ex_add(L, post ? post : ex_acc(L, ct), cl);
    }
    c->post = post;
    return 0;
}

int lower_MatMul(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    int ab = lower_buf_value(L, n->in[0]), bbuf = lower_buf_value(L, n->in[1]);
    Compute *c = lower_stage(L, "matmul", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    int64_t k = a->dims[a->rank - 1];
    IterVar *rk = lower_raxis(L, c, k);
    /* output axes: batch..., then m if a is a matrix, then n if b is one */
    int nb = y->rank - (a->rank >= 2) - (b->rank >= 2), i, r;
    Expr *ai[TVMCC_MAX_RANK], *bi[TVMCC_MAX_RANK];
    r = 0;
    for (i = 0; i < a->rank - 2; i++) {
        int ax = nb - (a->rank - 2) + i;
        ai[r++] = a->dims[i] == 1 ? ex_int(L, 0) : ex_var(L, &c->axes[ax]);
    }
    if (a->rank >= 2)
        ai[r++] = ex_var(L, &c->axes[nb]);
    ai[r++] = ex_var(L, rk);
    r = 0;
    for (i = 0; i < b->rank - 2; i++) {
        int ax = nb - (b->rank - 2) + i;
        bi[r++] = b->dims[i] == 1 ? ex_int(L, 0) : ex_var(L, &c->axes[ax]);
    }
    bi[r++] = ex_var(L, rk);
    if (b->rank >= 2)
        bi[r++] = ex_var(L, &c->axes[y->rank - 1]);
    c->rop = RED_SUM;
    c->body = ex_mul(L, ex_load_nd(L, ab, a->rank, a->dims, ai),
                     ex_load_nd(L, bbuf, b->rank, b->dims, bi));
    if (n->quant)
        lower_quant_sum(L, n, c, &c->axes[y->rank - 1]);
    L->k->macs += value_numel(y) * k;
    return 0;
}

/* Flat offset of input position (n, c, pos...) in row-major order, or with
 * the spatial dimensions in column-major order when col is set (MaxPool's
 * storage_order 1). */
static Expr *pool_flat_index(Lower *L, const Value *x, Expr *const *idx, int col)
{
    Expr *off = ex_add(L, ex_mul(L, idx[0], ex_int(L, x->dims[1])), idx[1]);
    int i, nsp = x->rank - 2;
    for (i = 0; i < nsp; i++) {
        int d = col ? nsp - 1 - i : i;
        off = ex_add(L, ex_mul(L, off, ex_int(L, x->dims[2 + d])), idx[2 + d]);
    }
    return off;
}

int lower_MaxPool(Lower *L, Node *n)
{
    Graph *g = L->g;
    if (lower_layout_of(n) == LAYOUT_NCHWC)
        return lower_maxpool_nchwc(L, n); /* blocked channels, chosen by passes/layout.c */
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int xb = lower_buf_value(L, n->in[0]), yb = lower_buf_value(L, n->out[0]);
    Compute *c = lower_stage(L, "maxpool", yb, y->rank, y->dims);
    IterVar rk[TVMCC_MAX_RANK];
    Expr *xi[TVMCC_MAX_RANK], *cond, *xv;
    const ConvWindow *win = node_window(n);
    int i;
    for (i = 0; i < win->nsp; i++)
        rk[i] = *lower_raxis(L, c, win->kernel[i]);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    cond = window_index(L, c, rk, win, x, xi);
    xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
    c->rop = RED_MAX;
    c->body = cond->kind != EX_INT ? ex_select(L, cond, xv, lowest_of(L, x->dtype)) : xv;
    c->window = win; /* the x86 max-pool template reads it (lower/tpl_pool.c) */
    if (n->n_out > 1 && n->out[1] >= 0) {
        /* Indices: the first window position (in scan order) holding the max */
        int col = win->storage_order;
        Compute *ci = lower_stage(L, "argmax", lower_buf_value(L, n->out[1]), y->rank, y->dims);
        Expr *yv, *hit;
        for (i = 0; i < win->nsp; i++)
            rk[i] = *lower_raxis(L, ci, win->kernel[i]);
        xi[0] = ex_var(L, &ci->axes[0]);
        xi[1] = ex_var(L, &ci->axes[1]);
        cond = window_index(L, ci, rk, win, x, xi);
        xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
        {
            Expr *yi[TVMCC_MAX_RANK];
            for (i = 0; i < y->rank; i++)
                yi[i] = ex_var(L, &ci->axes[i]);
            yv = ex_load_nd(L, yb, y->rank, y->dims, yi);
        }
        hit = ex_and(L, cond, ex_binary(L, BIN_EQ, xv, yv));
        ci->rop = RED_MIN;
        ci->body = ex_select(L, hit, pool_flat_index(L, x, xi, col), ex_int(L, INT64_MAX));
    }
    return 0;
}

/* Number of window taps j in [0, k) with lo <= start + j*dil < hi, as an
 * index expression; start = o*s - pb. Numerators are kept non-negative so
 * truncating division is a ceiling division. */
static Expr *tap_count(Lower *L, Expr *start, int64_t k, int64_t dil, int64_t lo, int64_t hi)
{
    Expr *first = ex_binary(L, BIN_MAX, ex_sub(L, ex_int(L, lo), start), ex_int(L, 0));
    Expr *end = ex_binary(L, BIN_MAX, ex_sub(L, ex_int(L, hi), start), ex_int(L, 0));
    first = ex_binary(L, BIN_DIV, ex_add(L, first, ex_int(L, dil - 1)), ex_int(L, dil));
    end = ex_binary(L, BIN_DIV, ex_add(L, end, ex_int(L, dil - 1)), ex_int(L, dil));
    end = ex_binary(L, BIN_MIN, end, ex_int(L, k));
    return ex_binary(L, BIN_MAX, ex_sub(L, end, first), ex_int(L, 1));
}

/* The AveragePool stage of n's window over buffer xb (n's input shape,
 * element type xt) into buffer yb (n's output shape); with `divide` its
 * epilogue divides the sum by the tap count in type ct. */
Compute *lower_avgpool_stage(Lower *L, const Node *n, int xb, DType xt, int yb, DType ct,
                             int divide)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    const ConvWindow *win = node_window(n);
    Compute *c = lower_stage(L, "avgpool", yb, y->rank, y->dims);
    int incl = win->count_include_pad, uniform = 1;
    IterVar rk[TVMCC_MAX_RANK];
    Expr *xi[TVMCC_MAX_RANK], *cond, *xv, *cnt;
    int64_t kvol = 1;
    int i;
    for (i = 0; i < win->nsp; i++) {
        rk[i] = *lower_raxis(L, c, win->kernel[i]);
        kvol *= win->kernel[i];
    }
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    cond = window_index(L, c, rk, win, x, xi);
    xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
    c->rop = RED_SUM;
    c->body = cond->kind != EX_INT ? ex_select(L, cond, xv, zero_of(L, xt)) : xv;
    if (!divide)
        return c;
    /* the divisor counts the taps inside the input (or inside the padded
     * input with count_include_pad); constant when every window fits */
    cnt = ex_int(L, 1);
    for (i = 0; i < win->nsp; i++) {
        int64_t in = x->dims[2 + i], out = y->dims[2 + i];
        int64_t lo = incl ? -win->pad_begin[i] : 0, hi = incl ? in + win->pad_end[i] : in;
        int64_t first = -win->pad_begin[i];
        int64_t last = (out - 1) * win->strides[i] - win->pad_begin[i] +
                       (win->kernel[i] - 1) * win->dilations[i];
        Expr *start = ex_sub(L, ex_mul(L, ex_var(L, &c->axes[2 + i]),
                                       ex_int(L, win->strides[i])),
                             ex_int(L, win->pad_begin[i]));
        if (first >= lo && last < hi)
            cnt = ex_mul(L, cnt, ex_int(L, win->kernel[i]));
        else {
            uniform = 0;
            cnt = ex_mul(L, cnt, tap_count(L, start, win->kernel[i], win->dilations[i], lo, hi));
        }
    }
    if (uniform)
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, ct), ex_float(L, ct, (double)kvol));
    else
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, ct), ex_cast(L, ct, cnt));
    return c;
}

int lower_AveragePool(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    Compute *c = lower_avgpool_stage(L, n, lower_buf_value(L, n->in[0]), x->dtype,
                                     lower_buf_value(L, n->out[0]), dtype_compute(y->dtype),
                                     !n->quant);
    if (n->quant) /* a constant count (passes/quantize.c) */
        lower_quant_sum(L, n, c, NULL);
    return 0;
}

/* LpPool: the sum of |x|^p over the taps inside the input (pads add
 * nothing), then its p-th root. */
int lower_LpPool(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    const ConvWindow *win = node_window(n);
    Compute *c = lower_stage(L, "lppool", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    DType ct = dtype_compute(y->dtype);
    IterVar rk[TVMCC_MAX_RANK];
    Expr *xi[TVMCC_MAX_RANK], *cond, *xv, *t;
    int i, p = win->lp;
    for (i = 0; i < win->nsp; i++)
        rk[i] = *lower_raxis(L, c, win->kernel[i]);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    cond = window_index(L, c, rk, win, x, xi);
    xv = ex_cast(L, ct, ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, xi));
    if (p == 1)
        t = ex_unary(L, UN_ABS, xv);
    else if (p == 2)
        t = ex_binary(L, BIN_MUL, xv, xv);
    else
        t = ex_binary(L, BIN_POW, ex_unary(L, UN_ABS, xv), ex_float(L, ct, (double)p));
    c->rop = RED_SUM;
    c->body = cond->kind != EX_INT ? ex_select(L, cond, t, ex_float(L, ct, 0.0)) : t;
    if (p == 1)
        c->post = ex_acc(L, ct);
    else if (p == 2)
        c->post = ex_unary(L, UN_SQRT, ex_acc(L, ct));
    else
        c->post = ex_binary(L, BIN_POW, ex_acc(L, ct), ex_float(L, ct, 1.0 / (double)p));
    return 0;
}

/* In the blocked layout (passes/layout.c): x [N,C/b,H,W,b] into
 * y [N,C/b,1,1,b], axes (n, cb, l), the plane reduced. */
static int global_pool_nchwc(Lower *L, Node *n, int is_max)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]];
    int xb = lower_buf_value(L, n->in[0]);
    int64_t dims[3];
    Compute *c;
    Expr *xi[5];
    DType ct = dtype_compute(x->dtype);
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    dims[2] = x->dims[4];
    c = lower_stage(L, is_max ? "globalmax_nchwc" : "globalavg_nchwc", lower_buf_value(L, n->out[0]), 3, dims);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    xi[2] = ex_var(L, lower_raxis(L, c, x->dims[2]));
    xi[3] = ex_var(L, lower_raxis(L, c, x->dims[3]));
    xi[4] = ex_var(L, &c->axes[2]);
    c->body = ex_load_nd(L, xb, 5, x->dims, xi);
    c->rop = is_max ? RED_MAX : RED_SUM;
    if (!is_max)
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, ct), ex_float(L, ct, (double)(x->dims[2] * x->dims[3])));
    return 0;
}

static int global_pool(Lower *L, Node *n, int is_max)
{
    if (lower_layout_of(n) == LAYOUT_NCHWC)
        return global_pool_nchwc(L, n, is_max);
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int xb = lower_buf_value(L, n->in[0]);
    Compute *c = lower_stage(L, is_max ? "globalmax" : "globalavg",
                             lower_buf_value(L, n->out[0]), 2, y->dims);
    Expr *xi[TVMCC_MAX_RANK];
    DType ct = dtype_compute(y->dtype);
    int64_t vol = 1;
    int i;
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    for (i = 2; i < x->rank; i++) {
        xi[i] = ex_var(L, lower_raxis(L, c, x->dims[i]));
        vol *= x->dims[i];
    }
    c->body = ex_load_nd(L, xb, x->rank, x->dims, xi);
    c->rop = is_max ? RED_MAX : RED_SUM;
    if (n->quant)
        lower_quant_sum(L, n, c, NULL);
    else if (!is_max)
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, ct), ex_float(L, ct, (double)vol));
    return 0;
}

int lower_GlobalAveragePool(Lower *L, Node *n)
{
    return global_pool(L, n, 0);
}

int lower_GlobalMaxPool(Lower *L, Node *n)
{
    return global_pool(L, n, 1);
}

/* y = (x - mean) / sqrt(var + eps) * scale + B, channel axis 1; the
 * parameters may have another float type than x. */
/* Training mode: the mean and (population) variance of each channel over
 * the batch and spatial positions, into buffers mb and vb ([C], compute
 * type), each a reduction stage; the variance is the mean of squared
 * deviations from the mean already computed. */
static void batch_stats(Lower *L, const Value *x, int xb, int mb, int vb)
{
    DType ct = dtype_compute(x->dtype);
    int64_t C = x->dims[1], cnt = 1;
    Expr *xi[TVMCC_MAX_RANK], *dev;
    Compute *c;
    int i, pass;
    for (i = 0; i < x->rank; i++)
        if (i != 1)
            cnt *= x->dims[i];
    for (pass = 0; pass < 2; pass++) {
        c = lower_stage(L, pass ? "variance" : "mean", pass ? vb : mb, 1, &C);
        for (i = 0; i < x->rank; i++)
            xi[i] = i == 1 ? ex_var(L, &c->axes[0]) : ex_var(L, lower_raxis(L, c, x->dims[i]));
        c->rop = RED_SUM;
        dev = ex_cast(L, ct, ex_load_nd(L, xb, x->rank, x->dims, xi));
        if (pass)
            dev = ex_binary(L, BIN_SUB, dev, ex_load(L, mb, ex_var(L, &c->axes[0])));
        c->body = pass ? ex_mul(L, dev, dev) : dev;
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, ct), ex_float(L, ct, (double)cnt));
    }
}

/* Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel; in training
 * mode (opset 14+) mean and var are the batch's, and the optional outputs
 * 1 and 2 are the running statistics input * momentum + batch * (1 -
 * momentum). */
int lower_BatchNormalization(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]];
    const ScalarParams *sp = node_scalar(n);
    DType ct = dtype_compute(x->dtype);
    double eps = sp->epsilon;
    int64_t C = x->dims[1];
    int stat[2] = { -1, -1 };
    Expr *p[5], *v;
    Compute *c;
    int i;
    if (sp->training) {
        int xb = lower_buf_value(L, n->in[0]);
        stat[0] = lower_buf_temp(L, "mean", ct, C);
        stat[1] = lower_buf_temp(L, "variance", ct, C);
        batch_stats(L, x, xb, stat[0], stat[1]);
        for (i = 1; i < 3 && i < n->n_out; i++) {
            const Value *in = &g->values[n->in[i + 2]];
            DType it = dtype_compute(in->dtype);
            Expr *run, *cur;
            if (n->out[i] < 0)
                continue;
            c = lower_stage(L, i == 1 ? "running_mean" : "running_var",
                            lower_buf_value(L, n->out[i]), 1, &C);
            run = ex_cast(L, it, ex_load(L, lower_buf_value(L, n->in[i + 2]),
                                         ex_var(L, &c->axes[0])));
            cur = ex_cast(L, it, ex_load(L, stat[i - 1], ex_var(L, &c->axes[0])));
            c->body = ex_add(L, ex_mul(L, run, ex_float(L, it, sp->momentum)),
                             ex_mul(L, cur, ex_float(L, it, 1.0 - sp->momentum)));
        }
    }
    c = lower_elemwise_stage(L, n, n->out[0]);
    for (i = 1; i < 5; i++)
        p[i] = ex_cast(L, ct, ex_load(L, i >= 3 && sp->training ? stat[i - 3]
                                                                : lower_buf_value(L, n->in[i]),
                                      ex_var(L, &c->axes[1])));
    p[0] = ex_load_broadcast(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, c);
    v = ex_binary(L, BIN_SUB, p[0], p[3]);
    v = ex_binary(L, BIN_DIV, v, ex_unary(L, UN_SQRT, ex_binary(L, BIN_ADD, p[4],
                                                                ex_float(L, ct, eps))));
    c->body = ex_binary(L, BIN_ADD, ex_binary(L, BIN_MUL, v, p[1]), p[2]);
    return 0;
}
