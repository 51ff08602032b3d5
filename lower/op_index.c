/*
 * Lowering of the data-dependent gathers and the block rearrangements:
 * GatherElements, GatherND, DepthToSpace and SpaceToDepth, and the ops that
 * write by index: CumSum, OneHot, ScatterElements (and Scatter), ScatterND,
 * and TensorScatter (a gather: each output element picks update or cache).
 *
 * A gather is one stage over the output whose body loads the data at a
 * position computed from loaded indices. Indices may be negative (counted
 * from the end) and are otherwise trusted: an index outside the data is a
 * model error the reference reports at run time, and since the emitted C
 * must not read out of bounds, it is clamped into range instead.
 */
#include "lower.h"

#include <math.h>
#include <string.h>

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
    int axis = node_axis(n)->axis;
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *ii[TVMCC_MAX_RANK], *xi[TVMCC_MAX_RANK];
    int i;
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
    int64_t b = node_axis(n)->batch_dims, m = iv->dims[iv->rank - 1];
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
    int64_t b = node_axis(n)->blocksize;
    int crd = node_axis(n)->crd;
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
    int64_t b = node_axis(n)->blocksize, C = x->dims[1];
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

static Expr *const_of(Lower *L, DType dt, double v)
{
    if (dtype_is_float(dt))
        return ex_float(L, dt, v);
    return ex_const_int(L, dtype_compute(dt), dtype_float_to_int(dtype_compute(dt), v));
}

/* A loaded index made non-negative (counted from the end when negative),
 * not clamped: used for matching, where a clamp could fake a match. */
static Expr *wrap_index(Lower *L, Expr *e, int64_t dim)
{
    Expr *v = ex_cast(L, DT_INT64, e);
    return ex_select(L, ex_lt(L, v, ex_int(L, 0)), ex_add(L, v, ex_int(L, dim)), v);
}

static Expr *clamp(Lower *L, Expr *e, int64_t hi)
{
    e = ex_binary(L, BIN_MAX, e, ex_int(L, 0));
    return ex_binary(L, BIN_MIN, e, ex_int(L, hi > 0 ? hi : 0));
}

/* Running sum along one axis: y[p] = sum of x over positions r on the
 * axis with r <= p (r < p exclusive; >= and > in reverse). The axis comes
 * as an input; when it is not a compile-time constant every axis is a
 * candidate and the body selects on the value loaded at run time. */
int lower_CumSum(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int excl = node_axis(n)->exclusive;
    int rev = node_axis(n)->reverse;
    int xb = lower_buf_value(L, n->in[0]), a, first = 0, last = x->rank - 1;
    const int64_t *av;
    int64_t maxr = 1;
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *axis = NULL, *body = NULL, *rv;
    IterVar *r;
    if (value_const_ints(L->g, n->in[1], &av) == 1) {
        first = last = (int)(av[0] < 0 ? av[0] + x->rank : av[0]);
    } else {
        axis = wrap_index(L, ex_load(L, lower_buf_value(L, n->in[1]), ex_int(L, 0)), x->rank);
    }
    for (a = first; a <= last; a++)
        if (x->dims[a] > maxr)
            maxr = x->dims[a];
    r = lower_raxis(L, c, maxr);
    rv = ex_var(L, r);
    for (a = last; a >= first; a--) {
        Expr *xi[TVMCC_MAX_RANK], *p = ex_var(L, &c->axes[a]), *cond, *term;
        BinaryOp rel = rev ? (excl ? BIN_GT : BIN_GE) : (excl ? BIN_LT : BIN_LE);
        int i;
        for (i = 0; i < x->rank; i++)
            xi[i] = ex_var(L, &c->axes[i]);
        cond = ex_binary(L, rel, rv, p);
        if (x->dims[a] < maxr) {
            cond = ex_and(L, ex_lt(L, rv, ex_int(L, x->dims[a])), cond);
            xi[a] = clamp(L, rv, x->dims[a] - 1);
        } else {
            xi[a] = rv;
        }
        term = ex_select(L, cond, ex_load_nd(L, xb, x->rank, x->dims, xi),
                         const_of(L, x->dtype, 0));
        /* a run-time axis is tested even when only one is possible, so
         * that an invalid value gives zeros rather than a wrong sum */
        if (axis)
            term = ex_select(L, ex_binary(L, BIN_EQ, axis, ex_int(L, a)), term,
                             body ? body : const_of(L, x->dtype, 0));
        body = term;
    }
    c->rop = RED_SUM;
    c->body = body;
    return 0;
}

/* y[..., d, ...] = indices[...] (negative: + depth) == d ? on : off; the
 * depth is the output's extent on the axis (its declared shape when depth
 * is computed at run time). */
int lower_OneHot(Lower *L, Node *n)
{
    const Value *iv = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    int ax = node_axis(n)->axis, vb = lower_buf_value(L, n->in[2]), i, j = 0;
    int64_t depth;
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *ii[TVMCC_MAX_RANK], *t;
    depth = y->dims[ax];
    for (i = 0; i < y->rank; i++)
        if (i != ax)
            ii[j++] = ex_var(L, &c->axes[i]);
    t = wrap_index(L, ex_load_nd(L, lower_buf_value(L, n->in[0]), iv->rank, iv->dims, ii), depth);
    c->body = ex_select(L, ex_binary(L, BIN_EQ, t, ex_var(L, &c->axes[ax])),
                        ex_load(L, vb, ex_int(L, 1)), ex_load(L, vb, ex_int(L, 0)));
    return 0;
}

/* Largest or smallest value of t (neutral elements of min and max). */
static Expr *extreme_of(Lower *L, DType t, int high)
{
    int64_t bits = (int64_t)dtype_size(t) * 8;
    if (dtype_is_float(t))
        return ex_float(L, t, high ? HUGE_VAL : -HUGE_VAL);
    if (dtype_is_unsigned_int(t))
        return ex_const_int(L, dtype_compute(t), high ? (bits == 64 ? -1 : ((int64_t)1 << bits) - 1)
                                                       : 0);
    if (bits == 64)
        return ex_const_int(L, t, high ? INT64_MAX : INT64_MIN);
    return ex_const_int(L, t, high ? ((int64_t)1 << (bits - 1)) - 1 : -((int64_t)1 << (bits - 1)));
}

/* Scatter as a pure computation over the output. `hit` tells whether the
 * update at reduce position r lands on the output position, `upd_at(w)`
 * loads the update for a position w (an index expression). With
 * reduction none the last landing update wins: its position is found first
 * (a max over r into a scratch buffer), then the output picks it or keeps
 * the data. Otherwise one reduction starts from the data element. */
typedef struct Scat {
    const Value *x;
    int xb, ub;
    int64_t nr;                 /* reduce extent */
    ScatterReduce red;
} Scat;

typedef Expr *(*HitFn)(Lower *L, const void *ctx, const Compute *c, Expr *r);
typedef Expr *(*UpdFn)(Lower *L, const void *ctx, const Compute *c, Expr *r);

static int scatter(Lower *L, Node *n, const Scat *s, const void *ctx, HitFn hit, UpdFn upd)
{
    const Value *x = s->x;
    DType ct = dtype_compute(x->dtype);
    Compute *c;
    Expr *r, *xi[TVMCC_MAX_RANK];
    int i;
    if (s->red == SCATTER_NONE) {
        int wb = lower_buf_temp(L, "which", DT_INT64, value_numel(x));
        Expr *w;
        c = lower_stage(L, "last_update", wb, x->rank, x->dims);
        r = ex_var(L, lower_raxis(L, c, s->nr));
        c->rop = RED_MAX;
        c->body = ex_select(L, hit(L, ctx, c, r), r, ex_int(L, -1));
        c = lower_elemwise_stage(L, n, n->out[0]);
        for (i = 0; i < x->rank; i++)
            xi[i] = ex_var(L, &c->axes[i]);
        w = ex_load_nd(L, wb, x->rank, x->dims, xi);
        c->body = ex_select(L, ex_binary(L, BIN_GE, w, ex_int(L, 0)),
                            upd(L, ctx, c, clamp(L, w, s->nr - 1)),
                            ex_load_nd(L, s->xb, x->rank, x->dims, xi));
        return 0;
    }
    c = lower_elemwise_stage(L, n, n->out[0]);
    for (i = 0; i < x->rank; i++)
        xi[i] = ex_var(L, &c->axes[i]);
    r = ex_var(L, lower_raxis(L, c, s->nr));
    c->init = ex_load_nd(L, s->xb, x->rank, x->dims, xi);
    if (s->red == SCATTER_ADD) {
        c->rop = RED_SUM;
        c->body = ex_select(L, hit(L, ctx, c, r), upd(L, ctx, c, r), const_of(L, ct, 0));
    } else if (s->red == SCATTER_MUL) {
        c->rop = RED_PROD;
        c->body = ex_select(L, hit(L, ctx, c, r), upd(L, ctx, c, r), const_of(L, ct, 1));
    } else {
        int mx = s->red == SCATTER_MAX;
        c->rop = mx ? RED_MAX : RED_MIN;
        c->body = ex_select(L, hit(L, ctx, c, r), upd(L, ctx, c, r), extreme_of(L, x->dtype, !mx));
    }
    return 0;
}

/* ScatterElements: update u lands on u's position with the axis
 * coordinate replaced by indices[u]; r runs along the indices' axis. */
typedef struct ScatEl {
    const Value *x, *iv;
    int ib, ub;
    int axis;
} ScatEl;

/* Index of the indices/updates element at output position c->axes with r
 * on the axis; *ok is set to whether that element exists. */
static void el_index(Lower *L, const ScatEl *s, const Compute *c, Expr *r, Expr **ui, Expr **ok)
{
    int i;
    *ok = ex_const_int(L, DT_BOOL, 1);
    for (i = 0; i < s->x->rank; i++) {
        Expr *p = ex_var(L, &c->axes[i]);
        if (i == s->axis) {
            ui[i] = r;
        } else if (s->iv->dims[i] < s->x->dims[i]) {
            *ok = ex_and(L, *ok, ex_lt(L, p, ex_int(L, s->iv->dims[i])));
            ui[i] = clamp(L, p, s->iv->dims[i] - 1);
        } else {
            ui[i] = p;
        }
    }
}

static Expr *el_hit(Lower *L, const void *ctx, const Compute *c, Expr *r)
{
    const ScatEl *s = ctx;
    Expr *ui[TVMCC_MAX_RANK], *ok, *t;
    el_index(L, s, c, r, ui, &ok);
    t = wrap_index(L, ex_load_nd(L, s->ib, s->iv->rank, s->iv->dims, ui), s->x->dims[s->axis]);
    return ex_and(L, ok, ex_binary(L, BIN_EQ, t, ex_var(L, &c->axes[s->axis])));
}

static Expr *el_upd(Lower *L, const void *ctx, const Compute *c, Expr *r)
{
    const ScatEl *s = ctx;
    Expr *ui[TVMCC_MAX_RANK], *ok;
    el_index(L, s, c, r, ui, &ok);
    return ex_load_nd(L, s->ub, s->iv->rank, s->iv->dims, ui);
}

/* ScatterElements and Scatter (whose parameters say reduction none). */
static int scatter_elements(Lower *L, Node *n)
{
    const AxisParams *p = node_axis(n);
    ScatEl e;
    Scat s;
    e.x = s.x = &L->g->values[n->in[0]];
    e.iv = &L->g->values[n->in[1]];
    e.axis = p->axis;
    e.ib = lower_buf_value(L, n->in[1]);
    e.ub = s.ub = lower_buf_value(L, n->in[2]);
    s.xb = lower_buf_value(L, n->in[0]);
    s.nr = e.iv->dims[e.axis];
    s.red = (ScatterReduce)p->reduction;
    return scatter(L, n, &s, &e, el_hit, el_upd);
}

int lower_ScatterElements(Lower *L, Node *n)
{
    return scatter_elements(L, n);
}

int lower_Scatter(Lower *L, Node *n)
{
    return scatter_elements(L, n);
}

/* ScatterND: update row r (of the indices' leading dimensions, flattened)
 * lands on data[indices[r, 0..k-1], ...]; r runs over those rows. */
typedef struct ScatNd {
    const Value *x;
    int ib, ub;
    int64_t k, slice;   /* index depth; elements per update row */
} ScatNd;

static Expr *nd_hit(Lower *L, const void *ctx, const Compute *c, Expr *r)
{
    const ScatNd *s = ctx;
    Expr *hit = ex_const_int(L, DT_BOOL, 1);
    int64_t j;
    for (j = 0; j < s->k; j++) {
        Expr *t = ex_load(L, s->ib, ex_add(L, ex_mul(L, r, ex_int(L, s->k)), ex_int(L, j)));
        t = wrap_index(L, t, s->x->dims[j]);
        hit = ex_and(L, hit, ex_binary(L, BIN_EQ, t, ex_var(L, &c->axes[j])));
    }
    return hit;
}

static Expr *nd_upd(Lower *L, const void *ctx, const Compute *c, Expr *r)
{
    const ScatNd *s = ctx;
    Expr *xi[TVMCC_MAX_RANK];
    int i, rest = s->x->rank - (int)s->k;
    for (i = 0; i < rest; i++)
        xi[i] = ex_var(L, &c->axes[s->k + i]);
    return ex_load(L, s->ub, ex_add(L, ex_mul(L, r, ex_int(L, s->slice)),
                                    ex_offset(L, rest, s->x->dims + s->k, xi)));
}

int lower_ScatterND(Lower *L, Node *n)
{
    const Value *iv = &L->g->values[n->in[1]];
    ScatNd e;
    Scat s;
    int i;
    e.x = s.x = &L->g->values[n->in[0]];
    e.k = iv->dims[iv->rank - 1];
    e.slice = 1;
    for (i = (int)e.k; i < e.x->rank; i++)
        e.slice *= e.x->dims[i];
    e.ib = lower_buf_value(L, n->in[1]);
    e.ub = s.ub = lower_buf_value(L, n->in[2]);
    s.xb = lower_buf_value(L, n->in[0]);
    s.nr = value_numel(iv) / e.k;
    s.red = (ScatterReduce)node_axis(n)->reduction;
    return scatter(L, n, &s, &e, nd_hit, nd_upd);
}

/* TensorScatter as a gather over the output: element s along the axis
 * comes from update[s - w] when 0 <= s - w < sequence_length (circular:
 * (s - w) mod max_sequence_length < sequence_length), w the batch's write
 * index, else from the past cache. */
int lower_TensorScatter(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *u = &g->values[n->in[1]];
    const AxisParams *p = node_axis(n);
    int64_t M = x->dims[p->axis], S = u->dims[p->axis];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *ui[TVMCC_MAX_RANK], *w, *j, *in;
    int i;
    for (i = 0; i < x->rank; i++)
        ui[i] = ex_var(L, &c->axes[i]);
    w = n->n_in > 2 && n->in[2] >= 0
            ? ex_load(L, lower_buf_value(L, n->in[2]), ex_var(L, &c->axes[0]))
            : ex_int(L, 0);
    j = ex_sub(L, ex_var(L, &c->axes[p->axis]), w);
    if (p->circular && M > 0)
        j = ex_binary(L, BIN_MOD, ex_add(L, ex_binary(L, BIN_MOD, j, ex_int(L, M)), ex_int(L, M)),
                      ex_int(L, M));
    in = ex_and(L, ex_binary(L, BIN_GE, j, ex_int(L, 0)), ex_lt(L, j, ex_int(L, S)));
    ui[p->axis] = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, j, ex_int(L, 0)),
                            ex_int(L, S > 0 ? S - 1 : 0));
    c->body = S > 0 ? ex_select(L, in, ex_load_nd(L, lower_buf_value(L, n->in[1]), u->rank,
                                                  u->dims, ui),
                                ex_load_broadcast(L, lower_buf_value(L, n->in[0]), x->rank,
                                                  x->dims, c))
                    : ex_load_broadcast(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, c);
    return 0;
}
