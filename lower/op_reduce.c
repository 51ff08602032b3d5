/*
 * Lowering of the reductions: the ten Reduce* operators, Softmax and
 * LogSoftmax.
 *
 * A Reduce* op is one reduction stage whose reduce axes are the reduced
 * input dimensions; the per-op parts are the element transform (x, x*x,
 * |x|...), the reduce operator and the final transform (mean, sqrt, log).
 * ReduceLogSumExp and the softmax family subtract the maximum first so that
 * exp() cannot overflow: a max stage into a scratch buffer, a sum stage, and
 * for softmax the normalising stage.
 *
 * The reduced dimensions and keepdims come parsed from inference (the
 * node's ReduceParams, ir/params.h).
 * Axes given as an input that is not a compile-time constant (the backend
 * tests feed them as graph inputs) are recovered from the static input and
 * output shapes, which the frontend took from the model's declarations; that
 * is exact whenever the shapes determine the axes, and reported otherwise.
 */
#include "lower.h"

#include <string.h>

/* Reducing a dimension of extent 1 leaves values unchanged for these ops,
 * so such a dimension may be reduced or not without changing the result. */
static int singleton_invariant(OpKind op)
{
    return op == OP_ReduceSum || op == OP_ReduceMean || op == OP_ReduceMax ||
           op == OP_ReduceMin || op == OP_ReduceProd;
}

/* The reduced dimensions of one node as bit masks over the input's
 * dimensions. Normally one; when the axes come at run time and the shapes
 * allow several distinct choices with the same reduced extents, each is a
 * candidate and the kernel selects between them on the axes it is given. */
typedef struct Axes {
    int n;                         /* number of candidates (>= 1) */
    unsigned mask[16];
    int buf;                       /* the axes input, when n > 1 */
    int64_t count;                 /* its number of entries */
} Axes;

/* Extents of the dimensions reduced by mask, in order; returns the count. */
static int reduced_extents(const Value *x, unsigned mask, int64_t *ext)
{
    int i, k = 0;
    for (i = 0; i < x->rank; i++)
        if ((mask >> i) & 1)
            ext[k++] = x->dims[i];
    return k;
}

/* Finds the masks consistent with the static shapes x -> y. */
static int axes_from_shapes(Lower *L, Node *n, const Value *x, const Value *y, int keep,
                            Axes *ax)
{
    unsigned mask, ones = 0, full = (1u << x->rank) - 1;
    int i, k;
    for (i = 0; i < x->rank; i++)
        if (x->dims[i] == 1)
            ones |= 1u << i;
    ax->n = 0;
    for (mask = 0; mask <= full; mask++) {
        int j = 0, ok = 1;
        for (i = 0; i < x->rank && ok; i++) {
            int r = (mask >> i) & 1;
            if (keep)
                ok = r ? y->dims[i] == 1 : y->dims[i] == x->dims[i];
            else if (!r)
                ok = j < y->rank && y->dims[j++] == x->dims[i];
        }
        if (!ok || (keep ? y->rank != x->rank : j != y->rank))
            continue;
        for (k = 0; k < ax->n; k++) {
            unsigned u = singleton_invariant(n->op) ? ~ones : ~0u;
            if ((ax->mask[k] & u) == (mask & u))
                break;
        }
        if (k < ax->n)
            continue; /* same result as a candidate already found */
        if (ax->n == 16)
            return diag_error(L->d, n, "input[1]", "axes are computed at run time and the "
                              "shapes allow too many choices");
        ax->mask[ax->n++] = mask;
    }
    if (!ax->n)
        return diag_error(L->d, n, "input[1]", "axes are computed at run time and no axes "
                          "map the input shape onto the output shape");
    if (ax->n > 1) {
        int64_t e0[TVMCC_MAX_RANK], e1[TVMCC_MAX_RANK];
        int c0 = reduced_extents(x, ax->mask[0], e0);
        for (k = 1; k < ax->n; k++)
            if (reduced_extents(x, ax->mask[k], e1) != c0 ||
                memcmp(e0, e1, (size_t)c0 * sizeof *e0))
                return diag_error(L->d, n, "input[1]", "axes are computed at run time and the "
                                  "input and output shapes do not determine them");
        ax->buf = lower_buf_value(L, n->in[1]);
        ax->count = value_numel(&L->g->values[n->in[1]]);
    }
    return 0;
}

/* Fills ax with the reduced dimensions parsed by inference (the node's
 * ReduceParams), or, for axes computed at run time, with the candidates the
 * static shapes allow. */
static int reduced_dims(Lower *L, Node *n, const ReduceParams *p, const Value *x, const Value *y,
                        Axes *ax)
{
    ax->n = 1;
    ax->mask[0] = p->mask;
    if (p->runtime_axes)
        return axes_from_shapes(L, n, x, y, p->keepdims, ax);
    return 0;
}

/* Run-time test that the axes input names exactly the dimensions in mask. */
static Expr *axes_match(Lower *L, const Axes *ax, const Value *x, unsigned mask)
{
    Expr *all = ex_const_int(L, DT_BOOL, 1), *a[64];
    int64_t k, cnt = ax->count < 64 ? ax->count : 64;
    int i;
    for (k = 0; k < cnt; k++) {
        Expr *v = ex_cast(L, DT_INT64, ex_load(L, ax->buf, ex_int(L, k)));
        a[k] = ex_select(L, ex_lt(L, v, ex_int(L, 0)), ex_add(L, v, ex_int(L, x->rank)), v);
    }
    for (i = 0; i < x->rank; i++) {
        Expr *any = ex_const_int(L, DT_BOOL, 0);
        for (k = 0; k < cnt; k++) {
            Expr *eq = ex_binary(L, BIN_EQ, a[k], ex_int(L, i));
            any = any->kind == EX_INT ? eq : ex_binary(L, BIN_OR, any, eq);
        }
        /* i is named iff it is in mask */
        all = ex_and(L, all, ((mask >> i) & 1) ? any : ex_unary(L, UN_NOT, any));
    }
    return all;
}

/* Creates the reduce axes of c for ax->mask[0] and returns the input
 * element the body reads (a select over the candidates when there are
 * several; every candidate's index is in bounds). */
static Expr *load_reduced(Lower *L, Compute *c, int xb, const Value *x, int keep,
                          const Axes *ax)
{
    Expr *v = NULL;
    int cand, i, j, k, r0 = c->n_raxes;
    for (i = 0; i < x->rank; i++)
        if ((ax->mask[0] >> i) & 1)
            lower_raxis(L, c, x->dims[i]);
    for (cand = ax->n - 1; cand >= 0; cand--) {
        Expr *xi[TVMCC_MAX_RANK], *ld;
        unsigned m = ax->mask[cand];
        for (i = j = 0, k = r0; i < x->rank; i++) {
            int r = (m >> i) & 1;
            xi[i] = r ? ex_var(L, &c->raxes[k++]) : ex_var(L, &c->axes[j]);
            if (!r || keep)
                j++;
        }
        ld = ex_load_nd(L, xb, x->rank, x->dims, xi);
        v = v ? ex_select(L, axes_match(L, ax, x, m), ld, v) : ld;
    }
    return v;
}

static int lower_reduce(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int xb = lower_buf_value(L, n->in[0]), yb = lower_buf_value(L, n->out[0]);
    const ReduceParams *p = node_reduce(n);
    int keep = p->keepdims, i;
    DType ct = dtype_compute(x->dtype), ft = dtype_is_float(ct) ? ct : DT_FLOAT64;
    Expr *v, *m = NULL;
    Compute *c;
    Axes ax;
    int64_t cnt = 1, ext[TVMCC_MAX_RANK];
    if (reduced_dims(L, n, p, x, y, &ax))
        return 1;
    if (p->identity) {
        c = lower_elemwise_stage(L, n, n->out[0]);
        c->body = ex_load_broadcast(L, xb, x->rank, x->dims, c);
        return 0;
    }
    if (n->op == OP_ReduceLogSumExp) {
        /* running maximum per output element, subtracted before exp() */
        int mb = lower_buf_temp(L, "max", ct, value_numel(y));
        Expr *yi[TVMCC_MAX_RANK];
        c = lower_stage(L, "max", mb, y->rank, y->dims);
        c->rop = RED_MAX;
        c->body = load_reduced(L, c, xb, x, keep, &ax);
        c = lower_stage(L, n->op_type, yb, y->rank, y->dims);
        for (i = 0; i < y->rank; i++)
            yi[i] = ex_var(L, &c->axes[i]);
        m = ex_load_nd(L, mb, y->rank, y->dims, yi);
    } else {
        c = lower_stage(L, n->op_type, yb, y->rank, y->dims);
    }
    v = load_reduced(L, c, xb, x, keep, &ax);
    for (i = reduced_extents(x, ax.mask[0], ext) - 1; i >= 0; i--)
        cnt *= ext[i];
    c->rop = RED_SUM;
    switch (n->op) {
    case OP_ReduceMax:
        c->rop = RED_MAX;
        c->body = v;
        break;
    case OP_ReduceMin:
        c->rop = RED_MIN;
        c->body = v;
        break;
    case OP_ReduceProd:
        c->rop = RED_PROD;
        c->body = v;
        break;
    case OP_ReduceSumSquare:
        c->body = ex_mul(L, v, v);
        break;
    case OP_ReduceL1:
        c->body = ex_unary(L, UN_ABS, v);
        break;
    case OP_ReduceL2:
        c->body = ex_mul(L, v, v);
        c->post = ex_cast(L, ct, ex_unary(L, UN_SQRT, ex_cast(L, ft, ex_acc(L, ct))));
        break;
    case OP_ReduceLogSum:
        c->body = v;
        c->post = ex_cast(L, ct, ex_unary(L, UN_LOG, ex_cast(L, ft, ex_acc(L, ct))));
        break;
    case OP_ReduceLogSumExp:
        c->body = ex_unary(L, UN_EXP, ex_cast(L, ft, ex_binary(L, BIN_SUB, v, m)));
        c->post = ex_cast(L, ct, ex_add(L, ex_unary(L, UN_LOG, ex_acc(L, ft)),
                                        ex_cast(L, ft, m)));
        break;
    case OP_ReduceMean:
        c->body = v;
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, ct),
                            dtype_is_float(ct) ? ex_float(L, ct, (double)cnt)
                                               : ex_const_int(L, ct, cnt));
        break;
    default: /* ReduceSum */
        c->body = v;
        break;
    }
    return 0;
}

int lower_ReduceMean(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceSum(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceMax(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceMin(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceProd(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceSumSquare(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceL1(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceL2(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceLogSum(Lower *L, Node *n) { return lower_reduce(L, n); }
int lower_ReduceLogSumExp(Lower *L, Node *n) { return lower_reduce(L, n); }

void lower_softmax_stages(Lower *L, int xb, int yb, const int64_t *v3, DType ct, int is_log)
{
    int64_t d2[2];
    int mb, sb, i;
    Compute *c;
    Expr *xi[3], *oi[2], *m, *s, *t;
    d2[0] = v3[0];
    d2[1] = v3[2];
    mb = lower_buf_temp(L, "max", ct, v3[0] * v3[2]);
    sb = lower_buf_temp(L, "sum", ct, v3[0] * v3[2]);

    c = lower_stage(L, "rowmax", mb, 2, d2);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, lower_raxis(L, c, v3[1]));
    xi[2] = ex_var(L, &c->axes[1]);
    c->rop = RED_MAX;
    c->body = ex_load_nd(L, xb, 3, v3, xi);

    c = lower_stage(L, "rowsum", sb, 2, d2);
    xi[0] = oi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, lower_raxis(L, c, v3[1]));
    xi[2] = oi[1] = ex_var(L, &c->axes[1]);
    c->rop = RED_SUM;
    c->body = ex_unary(L, UN_EXP, ex_binary(L, BIN_SUB, ex_load_nd(L, xb, 3, v3, xi),
                                            ex_load_nd(L, mb, 2, d2, oi)));

    c = lower_stage(L, is_log ? "logsoftmax" : "softmax", yb, 3, v3);
    for (i = 0; i < 3; i++)
        xi[i] = ex_var(L, &c->axes[i]);
    oi[0] = xi[0];
    oi[1] = xi[2];
    m = ex_load_nd(L, mb, 2, d2, oi);
    s = ex_load_nd(L, sb, 2, d2, oi);
    t = ex_binary(L, BIN_SUB, ex_load_nd(L, xb, 3, v3, xi), m);
    c->body = is_log ? ex_binary(L, BIN_SUB, t, ex_unary(L, UN_LOG, s))
                     : ex_binary(L, BIN_DIV, ex_unary(L, UN_EXP, t), s);
}

/* Softmax and LogSoftmax over a [outer, R, inner] view of the input: before
 * opset 13 the input is coerced to 2-D at `axis` (inner = 1), from 13 only
 * dimension `axis` is normalised. */
static int lower_softmax(Lower *L, Node *n, int is_log)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]];
    int xb = lower_buf_value(L, n->in[0]), yb = lower_buf_value(L, n->out[0]);
    int64_t v3[3] = {1, 1, 1};
    int axis = node_axis(n)->axis, i;
    for (i = 0; i < x->rank; i++) {
        int slot = i < axis ? 0 : (i == axis || n->opset < 13) ? 1 : 2;
        v3[slot] *= x->dims[i];
    }
    lower_softmax_stages(L, xb, yb, v3, dtype_compute(x->dtype), is_log);
    return 0;
}

int lower_Softmax(Lower *L, Node *n) { return lower_softmax(L, n, 0); }
int lower_LogSoftmax(Lower *L, Node *n) { return lower_softmax(L, n, 1); }
