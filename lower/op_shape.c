/*
 * Lowering of the data-movement operators. Each is a pure index map, so
 * every stage body is a single load whose offset is computed from the
 * output axes:
 *
 *   Reshape, Flatten, Squeeze, Unsqueeze  flat copy (same row-major offset)
 *   Transpose       in[axes permuted back]
 *   Concat, Split   one stage per input / output, the moving part through
 *                   out_index / an offset on the split axis
 *   Slice           in[start + i * step] per axis
 *   Gather          the data axis indexed by a loaded index (wrapped if
 *                   negative, clamped so a bad run-time index stays in bounds)
 *   Expand          numpy broadcast load
 *   Tile            in[i mod dim]
 *   Pad             in[i - pad_begin] mapped per mode; constant mode selects
 *                   the pad value outside, with the index clamped inside
 *
 * Shape, Size, Constant, ConstantOfShape and Range are in op_const.c.
 *
 * The parameters come parsed from frontend/infer_shape.c (node_perm,
 * node_axis, node_slice, node_pad). Slice and Pad bounds computed at run
 * time are read from their inputs in the kernel.
 */
#include "lower.h"

#include <string.h>

static const Value *val(Lower *L, int32_t vi)
{
    return &L->g->values[vi];
}

/* Output 0 as a flat copy of input 0 (same element order). */
static int flat_copy(Lower *L, Node *n)
{
    const Value *o = val(L, n->out[0]);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *idx[TVMCC_MAX_RANK];
    int i;
    for (i = 0; i < o->rank; i++)
        idx[i] = ex_var(L, &c->axes[i]);
    c->body = ex_load(L, lower_buf_value(L, n->in[0]), ex_offset(L, o->rank, o->dims, idx));
    return 0;
}

int lower_Reshape(Lower *L, Node *n) { return flat_copy(L, n); }
int lower_Flatten(Lower *L, Node *n) { return flat_copy(L, n); }
int lower_Squeeze(Lower *L, Node *n) { return flat_copy(L, n); }
int lower_Unsqueeze(Lower *L, Node *n) { return flat_copy(L, n); }

int lower_Transpose(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    const PermParams *p = node_perm(n);
    Expr *idx[TVMCC_MAX_RANK];
    int i;
    for (i = 0; i < x->rank; i++)
        idx[p->perm[i]] = ex_var(L, &c->axes[i]);
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    return 0;
}

/* One stage per input, over the input's shape, storing into its slab of
 * the output through out_index. */
int lower_Concat(Lower *L, Node *n)
{
    const Value *o = val(L, n->out[0]);
    int axis = node_axis(n)->axis, i, k, obuf;
    int64_t off = 0;
    obuf = lower_buf_value(L, n->out[0]);
    for (i = 0; i < n->n_in; i++) {
        const Value *x = val(L, n->in[i]);
        Expr *in_idx[TVMCC_MAX_RANK], *out_idx[TVMCC_MAX_RANK];
        Compute *c;
        if (value_numel(x) == 0)
            continue;
        c = lower_stage(L, "concat", obuf, x->rank, x->dims);
        for (k = 0; k < x->rank; k++) {
            in_idx[k] = ex_var(L, &c->axes[k]);
            out_idx[k] = k == axis ? ex_add(L, in_idx[k], ex_int(L, off)) : in_idx[k];
        }
        c->body = ex_load_nd(L, lower_buf_value(L, n->in[i]), x->rank, x->dims, in_idx);
        c->out_index = ex_offset(L, o->rank, o->dims, out_idx);
        off += x->dims[axis];
    }
    return 0;
}

int lower_Split(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]);
    int axis = node_axis(n)->axis, i, k, xbuf;
    int64_t off = 0;
    xbuf = lower_buf_value(L, n->in[0]);
    for (i = 0; i < n->n_out; i++) {
        const Value *o;
        Expr *idx[TVMCC_MAX_RANK];
        Compute *c;
        if (n->out[i] < 0)
            continue;
        o = val(L, n->out[i]);
        c = lower_elemwise_stage(L, n, n->out[i]);
        for (k = 0; k < o->rank; k++) {
            idx[k] = ex_var(L, &c->axes[k]);
            if (k == axis)
                idx[k] = ex_add(L, idx[k], ex_int(L, off));
        }
        c->body = ex_load_nd(L, xbuf, x->rank, x->dims, idx);
        off += o->dims[axis];
    }
    return 0;
}

/* An int64 index expression clamped to [lo, hi]. */
static Expr *clamp(Lower *L, Expr *e, int64_t lo, int64_t hi)
{
    return ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, e, ex_int(L, lo)), ex_int(L, hi));
}

/* Element k of an integer input (constant or not) as an int64 expression. */
static Expr *int_elem(Lower *L, int32_t vi, int64_t k)
{
    const Value *v = val(L, vi);
    if (v->data) {
        const int64_t *p;
        if (value_const_ints(L->g, vi, &p) > k)
            return ex_int(L, p[k]);
    }
    return ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, vi), ex_int(L, k)));
}

/* Slice: per axis a, the first index and the step, as expressions. The
 * bounds may be run-time inputs (the backend tests feed them): then the
 * clamping rules of frontend/infer_shape.c's slice_params() are evaluated
 * in the kernel, the extents coming from the declared output shape. The
 * final index is clamped to the axis so that run-time bounds that disagree
 * with the declared shape cannot read out of bounds. With constant bounds
 * (node_slice) the same expressions are built from the parsed entries. */
int lower_Slice(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]);
    const SliceParams *sl = node_slice(n);
    Expr *start[TVMCC_MAX_RANK], *step[TVMCC_MAX_RANK], *idx[TVMCC_MAX_RANK];
    int32_t vs = -1, va = -1, vp = -1;
    const int64_t *ax = NULL, *sp = NULL;
    int64_t ns, k;
    Compute *c;
    int a;
    for (a = 0; a < x->rank; a++) {
        start[a] = ex_int(L, 0);
        step[a] = ex_int(L, 1);
    }
    if (!sl->runtime) {
        ns = sl->n;
    } else {
        vs = n->in[1];
        ns = value_numel(val(L, vs));
        if (n->n_in > 3 && n->in[3] >= 0) {
            va = n->in[3];
            if (value_const_ints(L->g, va, &ax) < 0)
                ax = NULL;
        }
        if (n->n_in > 4 && n->in[4] >= 0) {
            vp = n->in[4];
            if (value_const_ints(L->g, vp, &sp) < 0)
                sp = NULL;
        }
    }
    if (vs >= 0 && (value_numel(val(L, n->in[2])) != ns ||
                    (va >= 0 && value_numel(val(L, va)) != ns) ||
                    (vp >= 0 && value_numel(val(L, vp)) != ns)))
        return diag_error(L->d, n, "starts", "starts, ends, axes and steps differ in length");
    /* later entries are applied first so that the first entry naming an
     * axis wins, as in inference (duplicates are rejected there anyway) */
    for (k = ns - 1; k >= 0; k--) {
        Expr *sk = !sl->runtime ? ex_int(L, sl->start[k]) : int_elem(L, vs, k);
        Expr *pk = !sl->runtime ? ex_int(L, sl->step[k])
                   : vp >= 0 ? (sp ? ex_int(L, sp[k]) : int_elem(L, vp, k)) : ex_int(L, 1);
        Expr *akn = NULL;
        if (sl->runtime && ax == NULL && va >= 0) {
            Expr *ak = int_elem(L, va, k);
            akn = ex_select(L, ex_lt(L, ak, ex_int(L, 0)), ex_add(L, ak, ex_int(L, x->rank)), ak);
        }
        for (a = 0; a < x->rank; a++) {
            int64_t dim = x->dims[a];
            Expr *match, *sn, *pos, *neg;
            if (akn)
                match = ex_binary(L, BIN_EQ, akn, ex_int(L, a));
            else if (!sl->runtime)
                match = ex_const_int(L, DT_BOOL, sl->axis[k] == a);
            else
                match = ex_const_int(L, DT_BOOL,
                                     (ax ? (int)(ax[k] < 0 ? ax[k] + x->rank : ax[k])
                                         : (int)k) == a);
            if (match->kind == EX_INT && !match->ival)
                continue;
            sn = ex_select(L, ex_lt(L, sk, ex_int(L, 0)), ex_add(L, sk, ex_int(L, dim)), sk);
            pos = clamp(L, sn, 0, dim);
            neg = clamp(L, sn, 0, dim - 1);
            if (pk->kind == EX_INT)
                sn = pk->ival > 0 ? pos : neg;
            else
                sn = ex_select(L, ex_binary(L, BIN_GT, pk, ex_int(L, 0)), pos, neg);
            start[a] = ex_select(L, match, sn, start[a]);
            step[a] = ex_select(L, match, pk, step[a]);
        }
    }
    c = lower_elemwise_stage(L, n, n->out[0]);
    for (a = 0; a < x->rank; a++) {
        Expr *i = ex_add(L, start[a], ex_mul(L, ex_var(L, &c->axes[a]), step[a]));
        if (start[a]->kind != EX_INT || step[a]->kind != EX_INT)
            i = clamp(L, i, 0, x->dims[a] - 1);
        idx[a] = i;
    }
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    return 0;
}

int lower_Gather(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]), *ix = val(L, n->in[1]);
    int axis = node_axis(n)->axis, i;
    Compute *c;
    Expr *iidx[TVMCC_MAX_RANK], *xidx[TVMCC_MAX_RANK], *k, *dim;
    if (x->dims[axis] == 0 && value_numel(val(L, n->out[0])) > 0)
        return diag_error(L->d, n, "indices", "gathering from an empty axis");
    c = lower_elemwise_stage(L, n, n->out[0]);
    for (i = 0; i < ix->rank; i++)
        iidx[i] = ex_var(L, &c->axes[axis + i]);
    k = ex_cast(L, DT_INT64, ex_load_nd(L, lower_buf_value(L, n->in[1]), ix->rank, ix->dims,
                                        iidx));
    dim = ex_int(L, x->dims[axis]);
    k = ex_select(L, ex_lt(L, k, ex_int(L, 0)), ex_add(L, k, dim), k);
    k = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, k, ex_int(L, 0)),
                  ex_int(L, x->dims[axis] - 1));
    for (i = 0; i < x->rank; i++) {
        if (i < axis)
            xidx[i] = ex_var(L, &c->axes[i]);
        else if (i == axis)
            xidx[i] = k;
        else
            xidx[i] = ex_var(L, &c->axes[i - 1 + ix->rank]);
    }
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, xidx);
    return 0;
}

int lower_Expand(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = ex_load_broadcast(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, c);
    return 0;
}

int lower_Tile(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *idx[TVMCC_MAX_RANK];
    int i;
    for (i = 0; i < x->rank; i++) {
        Expr *v = ex_var(L, &c->axes[i]);
        if (x->dims[i] <= 1)
            idx[i] = ex_int(L, 0);
        else if (c->axes[i].extent <= x->dims[i])
            idx[i] = v;
        else
            idx[i] = ex_binary(L, BIN_MOD, v, ex_int(L, x->dims[i]));
    }
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    return 0;
}

/* Pad: per axis, the output index minus the leading pad is mapped into
 * the input by the mode. The pads may be a run-time input (the backend
 * tests feed them); the output extents then come from the declared shape
 * and every mapped index is clamped so that a disagreeing run-time value
 * cannot read out of bounds. */
int lower_Pad(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]);
    const PadParams *p = node_pad(n);
    Expr *begin[TVMCC_MAX_RANK], *idx[TVMCC_MAX_RANK], *inside, *pv, *v;
    int mode = p->mode;
    Compute *c;
    int i;
    for (i = 0; i < x->rank; i++)
        begin[i] = ex_int(L, 0);
    if (p->runtime_axes) {
        /* entry k pads axis axes[k] (negative counts from the end) by pads[k] */
        int64_t k, na = value_numel(val(L, n->in[3]));
        if (value_numel(val(L, n->in[1])) != 2 * na)
            return diag_error(L->d, n, "pads", "has %lld entries for %lld axes",
                              (long long)value_numel(val(L, n->in[1])), (long long)na);
        for (k = 0; k < na; k++) {
            Expr *a = int_elem(L, n->in[3], k);
            a = ex_select(L, ex_lt(L, a, ex_int(L, 0)), ex_add(L, a, ex_int(L, x->rank)), a);
            for (i = 0; i < x->rank; i++)
                begin[i] = ex_select(L, ex_binary(L, BIN_EQ, a, ex_int(L, i)),
                                     int_elem(L, n->in[1], k), begin[i]);
        }
    }
    for (i = 0; i < p->n && !p->runtime_axes; i++)
        begin[p->axis[i]] = p->runtime_pads ? int_elem(L, n->in[1], i) : ex_int(L, p->begin[i]);
    c = lower_elemwise_stage(L, n, n->out[0]);
    inside = ex_const_int(L, DT_BOOL, 1);
    for (i = 0; i < x->rank; i++) {
        int64_t dim = x->dims[i];
        Expr *j = ex_sub(L, ex_var(L, &c->axes[i]), begin[i]);
        Expr *zero = ex_int(L, 0), *last = ex_int(L, dim - 1);
        int padded = begin[i]->kind != EX_INT || begin[i]->ival > 0 ||
                     c->axes[i].extent - begin[i]->ival > dim;
        if (!padded || dim == 0) {
            idx[i] = j;
            continue;
        }
        switch (mode) {
        case PAD_CONSTANT:
            inside = ex_and(L, inside, ex_and(L, ex_binary(L, BIN_GE, j, zero),
                                              ex_binary(L, BIN_LE, j, last)));
            break;
        case PAD_REFLECT: /* reflect once about 0 and dim-1 (pads < dim, checked) */
            j = ex_select(L, ex_lt(L, j, zero), ex_sub(L, zero, j), j);
            j = ex_select(L, ex_binary(L, BIN_GT, j, last), ex_sub(L, ex_int(L, 2 * (dim - 1)), j),
                          j);
            break;
        case PAD_EDGE:
            break;
        default: /* wrap: ((j mod dim) + dim) mod dim, j may be negative */
            j = ex_binary(L, BIN_MOD, ex_add(L, ex_binary(L, BIN_MOD, j, ex_int(L, dim)),
                                             ex_int(L, dim)),
                          ex_int(L, dim));
            break;
        }
        idx[i] = clamp(L, j, 0, dim - 1);
    }
    if (n->opset >= 11 && n->n_in > 2 && n->in[2] >= 0)
        pv = ex_load(L, lower_buf_value(L, n->in[2]), ex_int(L, 0));
    else if (dtype_is_float(x->dtype))
        pv = ex_float(L, x->dtype, p->value);
    else
        pv = ex_const_int(L, dtype_compute(x->dtype),
                          dtype_float_to_int(dtype_compute(x->dtype), p->value));
    if (value_numel(x) == 0) { /* nothing to read: all padding */
        c->body = pv;
        return 0;
    }
    v = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    if (mode == PAD_CONSTANT && !(inside->kind == EX_INT && inside->ival))
        v = ex_select(L, inside, v, pv);
    c->body = v;
    return 0;
}
