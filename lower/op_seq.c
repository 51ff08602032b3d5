/*
 * Lowering of the sequence operators. A sequence is one stacked tensor
 * [L, E...] (frontend/infer_seq.c), so every operator is an index map:
 *
 *   SequenceEmpty       a zero-size tensor (nothing to store)
 *   SequenceConstruct   one stage per element, writing row i
 *   SequenceInsert      out[i] = i < p ? seq[i] : i == p ? t : seq[i - 1]
 *   SequenceErase       out[i] = i < p ? seq[i] : seq[i + 1]
 *   SequenceAt          out = seq[p]
 *   SequenceLength      folded by inference (L is static)
 *   ConcatFromSequence  over the stacked tensor, each element written to
 *                       its slab (new_axis 0) or its index along the new
 *                       axis (new_axis 1) through out_index
 *   SplitToSequence     row l, along the axis, reads in[l * chunk + k]
 *                       (or in[l] when the axis is dropped)
 *
 * Positions may be run-time inputs: p is loaded in the kernel, made
 * non-negative by adding L, and clamped into range so that a bad run-time
 * position selects a border row instead of reading out of bounds.
 */
#include "lower.h"

static const Value *val(Lower *L, int32_t vi)
{
    return &L->g->values[vi];
}

static Expr *clamp(Lower *L, Expr *e, int64_t lo, int64_t hi)
{
    return ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, e, ex_int(L, lo)), ex_int(L, hi));
}

/* Position input i as an int64 expression in [0, hi]; `def` when absent.
 * Negative positions count from len. */
static Expr *position(Lower *L, Node *n, int i, int64_t len, int64_t hi, int64_t def)
{
    const int64_t *c;
    Expr *p;
    if (i >= n->n_in || n->in[i] < 0)
        return ex_int(L, def);
    if (value_const_ints(L->g, n->in[i], &c) == 1) {
        int64_t q = c[0] < 0 ? c[0] + len : c[0];
        return ex_int(L, q < 0 ? 0 : q > hi ? hi : q);
    }
    p = ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, n->in[i]), ex_int(L, 0)));
    p = ex_select(L, ex_lt(L, p, ex_int(L, 0)), ex_add(L, p, ex_int(L, len)), p);
    return clamp(L, p, 0, hi);
}

/* A load of row `row` of the stacked sequence s, the element indices being
 * the stage axes from `first` on. */
static Expr *load_row(Lower *L, int32_t s, Expr *row, const Compute *c, int first)
{
    const Value *v = val(L, s);
    Expr *idx[TVMCC_MAX_RANK];
    int k;
    idx[0] = row;
    for (k = 1; k < v->rank; k++)
        idx[k] = ex_var(L, &c->axes[first + k - 1]);
    return ex_load_nd(L, lower_buf_value(L, s), v->rank, v->dims, idx);
}

int lower_SequenceEmpty(Lower *L, Node *n)
{
    const Value *o = val(L, n->out[0]);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = dtype_is_float(o->dtype) ? ex_float(L, o->dtype, 0.0)
                                       : ex_const_int(L, o->dtype, 0);
    return 0;
}

int lower_SequenceConstruct(Lower *L, Node *n)
{
    const Value *o = val(L, n->out[0]);
    int obuf = lower_buf_value(L, n->out[0]), i, k;
    for (i = 0; i < n->n_in; i++) {
        const Value *x = val(L, n->in[i]);
        Expr *idx[TVMCC_MAX_RANK], *oidx[TVMCC_MAX_RANK];
        Compute *c;
        if (value_numel(x) == 0)
            continue;
        c = lower_stage(L, "seq_construct", obuf, x->rank, x->dims);
        oidx[0] = ex_int(L, i);
        for (k = 0; k < x->rank; k++)
            oidx[k + 1] = idx[k] = ex_var(L, &c->axes[k]);
        c->body = ex_load_nd(L, lower_buf_value(L, n->in[i]), x->rank, x->dims, idx);
        c->out_index = ex_offset(L, o->rank, o->dims, oidx);
    }
    return 0;
}

int lower_SequenceInsert(Lower *L, Node *n)
{
    const Value *s = val(L, n->in[0]), *t = val(L, n->in[1]);
    int64_t len = s->dims[0];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *idx[TVMCC_MAX_RANK], *i0, *p, *row, *tv;
    int k;
    for (k = 0; k < t->rank; k++)
        idx[k] = ex_var(L, &c->axes[k + 1]);
    tv = ex_load_nd(L, lower_buf_value(L, n->in[1]), t->rank, t->dims, idx);
    if (len == 0) {
        c->body = tv;
        return 0;
    }
    i0 = ex_var(L, &c->axes[0]);
    p = position(L, n, 2, len, len, len);
    row = ex_select(L, ex_lt(L, i0, p), i0, ex_sub(L, i0, ex_int(L, 1)));
    c->body = ex_select(L, ex_binary(L, BIN_EQ, i0, p), tv,
                        load_row(L, n->in[0], clamp(L, row, 0, len - 1), c, 1));
    return 0;
}

int lower_SequenceErase(Lower *L, Node *n)
{
    const Value *s = val(L, n->in[0]);
    int64_t len = s->dims[0];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *i0 = ex_var(L, &c->axes[0]), *p, *row;
    p = position(L, n, 1, len, len - 1, len - 1);
    row = ex_select(L, ex_lt(L, i0, p), i0, ex_add(L, i0, ex_int(L, 1)));
    c->body = load_row(L, n->in[0], clamp(L, row, 0, len - 1), c, 1);
    return 0;
}

int lower_SequenceAt(Lower *L, Node *n)
{
    const Value *s = val(L, n->in[0]);
    int64_t len = s->dims[0];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    c->body = load_row(L, n->in[0], position(L, n, 1, len, len - 1, 0), c, 0);
    return 0;
}

int lower_SequenceLength(Lower *L, Node *n)
{
    if (!val(L, n->out[0])->data)
        die("SequenceLength '%s' reached lowering without a folded value", n->name);
    return 0;
}

int lower_ConcatFromSequence(Lower *L, Node *n)
{
    const Value *s = val(L, n->in[0]), *o = val(L, n->out[0]);
    int new_axis = node_axis(n)->new_axis, r = s->rank - 1, k, axis = node_axis(n)->axis;
    Compute *c;
    Expr *idx[TVMCC_MAX_RANK], *oidx[TVMCC_MAX_RANK];
    c = lower_stage(L, "concat_from_seq", lower_buf_value(L, n->out[0]), s->rank, s->dims);
    for (k = 0; k < s->rank; k++)
        idx[k] = ex_var(L, &c->axes[k]);
    if (new_axis) {
        for (k = 0; k < axis; k++)
            oidx[k] = idx[k + 1];
        oidx[axis] = idx[0];
        for (k = axis; k < r; k++)
            oidx[k + 1] = idx[k + 1];
    } else {
        for (k = 0; k < r; k++)
            oidx[k] = idx[k + 1];
        oidx[axis] = ex_add(L, ex_mul(L, idx[0], ex_int(L, s->dims[axis + 1])), idx[axis + 1]);
    }
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), s->rank, s->dims, idx);
    c->out_index = ex_offset(L, o->rank, o->dims, oidx);
    return 0;
}

int lower_SplitToSequence(Lower *L, Node *n)
{
    const Value *x = val(L, n->in[0]), *o = val(L, n->out[0]);
    int axis = node_axis(n)->axis, k;
    int kept = o->rank == x->rank + 1; /* the element keeps the split axis */
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *idx[TVMCC_MAX_RANK], *l = ex_var(L, &c->axes[0]);
    for (k = 0; k < x->rank; k++) {
        if (kept)
            idx[k] = ex_var(L, &c->axes[k + 1]);
        else if (k != axis)
            idx[k] = ex_var(L, &c->axes[k < axis ? k + 1 : k]);
    }
    idx[axis] = kept ? ex_add(L, ex_mul(L, l, ex_int(L, o->dims[axis + 1])), idx[axis]) : l;
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    return 0;
}
