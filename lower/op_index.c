/*
 * Lowering of the data-dependent gathers and the block rearrangements:
 * GatherElements, GatherND, DepthToSpace and SpaceToDepth.
 *
 * A gather is one stage over the output whose body loads the data at a
 * position computed from loaded indices. Indices may be negative (counted
 * from the end) and are otherwise trusted: an index outside the data is a
 * model error the reference reports at run time, and since the emitted C
 * must not read out of bounds, it is clamped into range instead.
 */
#include "lower.h"

/* Loaded index value e (any integer type) made a valid position along an
 * axis of extent dim: negative values count from the end, then clamped. */
static Expr *fix_index(Lower *L, Expr *e, int64_t dim)
{
    Expr *v = ex_cast(L, DT_INT64, e);
    v = ex_select(L, ex_lt(L, v, ex_int(L, 0)), ex_add(L, v, ex_int(L, dim)), v);
    v = ex_binary(L, BIN_MAX, v, ex_int(L, 0));
    return ex_binary(L, BIN_MIN, v, ex_int(L, dim - 1 > 0 ? dim - 1 : 0));
}

int lower_GatherElements(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *iv = &g->values[n->in[1]];
    int64_t axis = attr_int(n, "axis", 0, L->d);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *ii[TVMCC_MAX_RANK], *xi[TVMCC_MAX_RANK];
    int i;
    if (axis < 0)
        axis += x->rank;
    for (i = 0; i < x->rank; i++)
        ii[i] = xi[i] = ex_var(L, &c->axes[i]);
    xi[axis] = fix_index(L, ex_load_nd(L, lower_buf_value(L, n->in[1]), iv->rank, iv->dims, ii),
                         x->dims[axis]);
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, xi);
    return 0;
}

/* out[b..., i..., j...] = data[b..., idx[b..., i..., 0..m-1], j...] */
int lower_GatherND(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *iv = &g->values[n->in[1]];
    int64_t b = attr_int(n, "batch_dims", 0, L->d), m = iv->dims[iv->rank - 1];
    int ib = lower_buf_value(L, n->in[1]);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *ii[TVMCC_MAX_RANK], *xi[TVMCC_MAX_RANK];
    int i, q = iv->rank - 1, r = 0;
    for (i = 0; i < q; i++)
        ii[i] = ex_var(L, &c->axes[i]);
    for (i = 0; i < b; i++)
        xi[r++] = ii[i];
    for (i = 0; i < m; i++) {
        ii[q] = ex_int(L, i);
        xi[r] = fix_index(L, ex_load_nd(L, ib, iv->rank, iv->dims, ii), x->dims[r]);
        r++;
    }
    for (i = q; r < x->rank; i++)
        xi[r++] = ex_var(L, &c->axes[i]);
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, xi);
    return 0;
}

/* DepthToSpace: out[n, c, y, x] = in[n, ic, y / b, x / b] with the block
 * offset (y % b, x % b) folded into ic: DCR puts it before the channel,
 * CRD after. */
int lower_DepthToSpace(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    int64_t b = attr_int(n, "blocksize", 1, L->d);
    int crd = attr_string(n, "mode", "DCR", L->d)[0] == 'C';
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *xi[4], *by, *bx, *blk, *ch = ex_var(L, &c->axes[1]);
    Expr *oy = ex_var(L, &c->axes[2]), *ox = ex_var(L, &c->axes[3]);
    by = ex_binary(L, BIN_MOD, oy, ex_int(L, b));
    bx = ex_binary(L, BIN_MOD, ox, ex_int(L, b));
    blk = ex_add(L, ex_mul(L, by, ex_int(L, b)), bx);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = crd ? ex_add(L, ex_mul(L, ch, ex_int(L, b * b)), blk)
                : ex_add(L, ex_mul(L, blk, ex_int(L, y->dims[1])), ch);
    xi[2] = ex_binary(L, BIN_DIV, oy, ex_int(L, b));
    xi[3] = ex_binary(L, BIN_DIV, ox, ex_int(L, b));
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), 4, x->dims, xi);
    return 0;
}

/* SpaceToDepth: out[n, (by * b + bx) * C + c, h, w] = in[n, c, h*b + by, w*b + bx] */
int lower_SpaceToDepth(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int64_t b = attr_int(n, "blocksize", 1, L->d), C = x->dims[1];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *xi[4], *oc = ex_var(L, &c->axes[1]), *blk;
    blk = ex_binary(L, BIN_DIV, oc, ex_int(L, C));
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_binary(L, BIN_MOD, oc, ex_int(L, C));
    xi[2] = ex_add(L, ex_mul(L, ex_var(L, &c->axes[2]), ex_int(L, b)),
                   ex_binary(L, BIN_DIV, blk, ex_int(L, b)));
    xi[3] = ex_add(L, ex_mul(L, ex_var(L, &c->axes[3]), ex_int(L, b)),
                   ex_binary(L, BIN_MOD, blk, ex_int(L, b)));
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), 4, x->dims, xi);
    return 0;
}
