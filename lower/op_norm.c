/*
 * Lowering of the normalisations: LayerNormalization, InstanceNormalization,
 * MeanVarianceNormalization, LRN, LpNormalization and GroupNormalization.
 *
 * The first three share one shape: statistics over a set of reduced
 * dimensions (a bit mask over the input's dimensions), each a reduction
 * stage into a buffer shaped like the kept dimensions, then one stage over
 * the input's shape that normalises. The variance is the mean of squared
 * deviations from the mean already computed (two passes: more accurate than
 * E[x^2] - E[x]^2 and the same as the ONNX reference within float
 * rounding). LayerNormalization may return the mean and the inverse
 * standard deviation; those outputs then serve as the statistics buffers.
 *
 * LRN is one stage: the sum of squares over the channel window is the
 * reduction, and its post step divides the centre element by
 * (bias + alpha / size * sum) ^ beta.
 */
#include "lower.h"

/* Kept (not reduced) dimensions of x under mask. */
static int kept_dims(const Value *x, unsigned mask, int64_t *kd)
{
    int i, r = 0;
    for (i = 0; i < x->rank; i++)
        if (!((mask >> i) & 1))
            kd[r++] = x->dims[i];
    return r;
}

/* A reduction stage over the kept dimensions writing buffer ob; fills xi
 * with the input index (kept axes, then reduce axes where masked) and ki
 * with the stage's own index. Returns the element count reduced. */
static int64_t stat_stage(Lower *L, const char *name, int ob, const Value *x, unsigned mask,
                          Compute **pc, Expr **xi, Expr **ki)
{
    int64_t kd[TVMCC_MAX_RANK] = {0}, cnt = 1;
    int kr = kept_dims(x, mask, kd), i, j = 0;
    Compute *c = lower_stage(L, name, ob, kr, kd);
    for (i = 0; i < kr; i++)
        ki[i] = ex_var(L, &c->axes[i]);
    for (i = 0; i < x->rank; i++) {
        if ((mask >> i) & 1) {
            xi[i] = ex_var(L, lower_raxis(L, c, x->dims[i]));
            cnt *= x->dims[i];
        } else {
            xi[i] = ki[j++];
        }
    }
    c->rop = RED_SUM;
    *pc = c;
    return cnt;
}

/* Mean into mb and a function of the variance into vb (see inv). With inv
 * set vb holds 1 / sqrt(var + eps), else sqrt(var). */
static void stats(Lower *L, int xb, const Value *x, unsigned mask, int mb, int vb, double eps,
                  int inv)
{
    DType ct = dtype_compute(x->dtype);
    int64_t kd[TVMCC_MAX_RANK], cnt;
    int kr = kept_dims(x, mask, kd);
    Expr *xi[TVMCC_MAX_RANK], *ki[TVMCC_MAX_RANK], *dev, *var;
    Compute *c;
    cnt = stat_stage(L, "mean", mb, x, mask, &c, xi, ki);
    c->body = ex_load_nd(L, xb, x->rank, x->dims, xi);
    c->post = ex_binary(L, BIN_DIV, ex_acc(L, ct), ex_float(L, ct, (double)cnt));
    stat_stage(L, "variance", vb, x, mask, &c, xi, ki);
    dev = ex_binary(L, BIN_SUB, ex_load_nd(L, xb, x->rank, x->dims, xi),
                    ex_cast(L, ct, ex_load_nd(L, mb, kr, kd, ki)));
    c->body = ex_mul(L, dev, dev);
    var = ex_binary(L, BIN_DIV, ex_acc(L, ct), ex_float(L, ct, (double)cnt));
    if (inv)
        c->post = ex_unary(L, UN_RECIP, ex_unary(L, UN_SQRT, ex_add(L, var, ex_float(L, ct, eps))));
    else
        c->post = ex_unary(L, UN_SQRT, var);
}

/* Normalising stage over x's shape; *m and *v are the statistics loaded at
 * the stage's position and *xv the input element. */
static Compute *norm_stage(Lower *L, Node *n, int xb, const Value *x, unsigned mask, int mb,
                           int vb, Expr **xv, Expr **m, Expr **v)
{
    DType ct = dtype_compute(x->dtype);
    int64_t kd[TVMCC_MAX_RANK];
    int kr = kept_dims(x, mask, kd), i, j = 0;
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *ki[TVMCC_MAX_RANK];
    for (i = 0; i < x->rank; i++)
        if (!((mask >> i) & 1))
            ki[j++] = ex_var(L, &c->axes[i]);
    *xv = ex_load_broadcast(L, xb, x->rank, x->dims, c);
    *m = ex_cast(L, ct, ex_load_nd(L, mb, kr, kd, ki));
    *v = ex_cast(L, ct, ex_load_nd(L, vb, kr, kd, ki));
    return c;
}

static int64_t kept_numel(const Value *x, unsigned mask)
{
    int64_t kd[TVMCC_MAX_RANK], cnt = 1;
    int kr = kept_dims(x, mask, kd), i;
    for (i = 0; i < kr; i++)
        cnt *= kd[i];
    return cnt;
}

int lower_LayerNormalization(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int axis = node_scalar(n)->axis;
    double eps = node_scalar(n)->epsilon;
    int xb = lower_buf_value(L, n->in[0]), mb, vb, i;
    unsigned mask = 0;
    DType ct = dtype_compute(x->dtype);
    Compute *c;
    Expr *xv, *m, *v, *y;
    for (i = axis; i < x->rank; i++)
        mask |= 1u << i;
    mb = n->n_out > 1 && n->out[1] >= 0 ? lower_buf_value(L, n->out[1])
                                        : lower_buf_temp(L, "mean", ct, kept_numel(x, mask));
    vb = n->n_out > 2 && n->out[2] >= 0 ? lower_buf_value(L, n->out[2])
                                        : lower_buf_temp(L, "invstd", ct, kept_numel(x, mask));
    stats(L, xb, x, mask, mb, vb, eps, 1);
    c = norm_stage(L, n, xb, x, mask, mb, vb, &xv, &m, &v);
    y = ex_mul(L, ex_binary(L, BIN_SUB, xv, m), v);
    for (i = 1; i < 3 && i < n->n_in; i++) {
        const Value *p;
        Expr *pv;
        if (n->in[i] < 0)
            continue;
        p = &L->g->values[n->in[i]];
        pv = ex_cast(L, ct, ex_load_broadcast(L, lower_buf_value(L, n->in[i]), p->rank, p->dims,
                                              c));
        y = i == 1 ? ex_mul(L, y, pv) : ex_add(L, y, pv);
    }
    c->body = y;
    return 0;
}

int lower_InstanceNormalization(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    double eps = node_scalar(n)->epsilon;
    int xb = lower_buf_value(L, n->in[0]), mb, vb, i;
    unsigned mask = 0;
    DType ct = dtype_compute(x->dtype);
    Compute *c;
    Expr *xv, *m, *v, *s, *b;
    for (i = 2; i < x->rank; i++)
        mask |= 1u << i;
    mb = lower_buf_temp(L, "mean", ct, kept_numel(x, mask));
    vb = lower_buf_temp(L, "invstd", ct, kept_numel(x, mask));
    stats(L, xb, x, mask, mb, vb, eps, 1);
    c = norm_stage(L, n, xb, x, mask, mb, vb, &xv, &m, &v);
    s = ex_load(L, lower_buf_value(L, n->in[1]), ex_var(L, &c->axes[1]));
    b = ex_load(L, lower_buf_value(L, n->in[2]), ex_var(L, &c->axes[1]));
    c->body = ex_add(L, ex_mul(L, ex_mul(L, ex_binary(L, BIN_SUB, xv, m), v), s), b);
    return 0;
}

/* (x - mean) / (std + 1e-9), the ONNX function's epsilon. */
int lower_MeanVarianceNormalization(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int xb = lower_buf_value(L, n->in[0]), mb, vb;
    unsigned mask = node_scalar(n)->mask;
    DType ct = dtype_compute(x->dtype);
    Compute *c;
    Expr *xv, *m, *v;
    mb = lower_buf_temp(L, "mean", ct, kept_numel(x, mask));
    vb = lower_buf_temp(L, "std", ct, kept_numel(x, mask));
    stats(L, xb, x, mask, mb, vb, 0.0, 0);
    c = norm_stage(L, n, xb, x, mask, mb, vb, &xv, &m, &v);
    c->body = ex_binary(L, BIN_DIV, ex_binary(L, BIN_SUB, xv, m),
                        ex_add(L, v, ex_float(L, ct, 1e-9)));
    return 0;
}

/* Channel window [c - (size-1)/2, c + ceil((size-1)/2)] clipped to [0, C). */
int lower_LRN(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    const ScalarParams *p = node_scalar(n);
    int64_t size = p->size, lo = (size - 1) / 2, C = x->dims[1];
    double alpha = p->alpha, beta = p->beta, bias = p->bias;
    int xb = lower_buf_value(L, n->in[0]), i;
    DType ct = dtype_compute(x->dtype);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    IterVar *r = lower_raxis(L, c, size);
    Expr *xi[TVMCC_MAX_RANK], *ch, *ok, *xv, *den;
    for (i = 0; i < x->rank; i++)
        xi[i] = ex_var(L, &c->axes[i]);
    ch = ex_add(L, ex_sub(L, ex_var(L, &c->axes[1]), ex_int(L, lo)), ex_var(L, r));
    ok = ex_and(L, ex_binary(L, BIN_GE, ch, ex_int(L, 0)), ex_lt(L, ch, ex_int(L, C)));
    xi[1] = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, ch, ex_int(L, 0)), ex_int(L, C - 1));
    xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
    c->rop = RED_SUM;
    c->body = ex_select(L, ok, ex_mul(L, xv, xv), ex_float(L, ct, 0.0));
    den = ex_add(L, ex_float(L, ct, bias),
                 ex_mul(L, ex_float(L, ct, alpha / (double)size), ex_acc(L, ct)));
    c->post = ex_binary(L, BIN_DIV, ex_load_broadcast(L, xb, x->rank, x->dims, c),
                        ex_binary(L, BIN_POW, den, ex_float(L, ct, beta)));
    return 0;
}

/* x / ||x||_p along the axis (p 1 or 2), without a guard: a zero norm
 * gives NaN or infinity, as in the ONNX reference. */
int lower_LpNormalization(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    const ScalarParams *sp = node_scalar(n);
    int xb = lower_buf_value(L, n->in[0]), nb;
    unsigned mask = 1u << sp->axis;
    DType ct = dtype_compute(x->dtype);
    Compute *c;
    Expr *xi[TVMCC_MAX_RANK], *ki[TVMCC_MAX_RANK], *xv, *m, *v;
    nb = lower_buf_temp(L, "norm", ct, kept_numel(x, mask));
    stat_stage(L, "norm", nb, x, mask, &c, xi, ki);
    xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
    if (sp->p == 1) {
        c->body = ex_unary(L, UN_ABS, xv);
    } else {
        c->body = ex_mul(L, xv, xv);
        c->post = ex_unary(L, UN_SQRT, ex_acc(L, ct));
    }
    c = norm_stage(L, n, xb, x, mask, nb, nb, &xv, &m, &v);
    c->body = ex_binary(L, BIN_DIV, xv, m);
    return 0;
}

/* Statistics over the view [N, G, C / G * spatial] of x (the groups are
 * contiguous in row-major order), then the normalising stage over x's
 * shape reads them at (n, c / (C / G)); scale and bias by group (opset 18)
 * or channel (21). */
int lower_GroupNormalization(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    const ScalarParams *sp = node_scalar(n);
    int64_t G = sp->num_groups, C = x->dims[1], per = C / G, rest = 1;
    int xb = lower_buf_value(L, n->in[0]), mb, vb, i;
    DType ct = dtype_compute(x->dtype);
    Value view = *x;
    Compute *c;
    Expr *grp, *si, *m, *v, *s, *b, *xv;
    for (i = 2; i < x->rank; i++)
        rest *= x->dims[i];
    view.rank = 3;
    view.dims[1] = G;
    view.dims[2] = per * rest;
    mb = lower_buf_temp(L, "mean", ct, x->dims[0] * G);
    vb = lower_buf_temp(L, "invstd", ct, x->dims[0] * G);
    stats(L, xb, &view, 4u, mb, vb, sp->epsilon, 1);
    c = lower_elemwise_stage(L, n, n->out[0]);
    grp = ex_binary(L, BIN_DIV, ex_var(L, &c->axes[1]), ex_int(L, per));
    si = ex_add(L, ex_mul(L, ex_var(L, &c->axes[0]), ex_int(L, G)), grp);
    m = ex_cast(L, ct, ex_load(L, mb, si));
    v = ex_cast(L, ct, ex_load(L, vb, si));
    si = n->opset >= 21 ? ex_var(L, &c->axes[1]) : grp;
    s = ex_cast(L, ct, ex_load(L, lower_buf_value(L, n->in[1]), si));
    b = ex_cast(L, ct, ex_load(L, lower_buf_value(L, n->in[2]), si));
    xv = ex_load_broadcast(L, xb, x->rank, x->dims, c);
    c->body = ex_add(L, ex_mul(L, ex_mul(L, ex_binary(L, BIN_SUB, xv, m), v), s), b);
    return 0;
}
