/*
 * Lowering of TopK, ReverseSequence, Compress, MaxUnpool and Upsample
 * (nearest).
 *
 * None of them is a plain index map, but each is a few reductions:
 *
 * - TopK ranks every element along the axis by counting the elements that
 *   beat it (larger, or equal with a smaller index; reversed for
 *   largest=0), a sum reduction into an int64 scratch buffer. Output
 *   position r then picks the one element whose rank is r, a second sum
 *   reduction over a select. The result is always sorted, which the
 *   operator allows for sorted=0 too.
 * - Compress numbers the kept positions by a running count of true
 *   conditions (a reduction over the prefix), then output position j finds
 *   the position whose count is j + 1 with a min reduction. The condition
 *   may be a run-time tensor: the output shape then comes from the model's
 *   declaration and positions past the last true one are never asked for.
 * - MaxUnpool writes every output element as the sum of the inputs whose
 *   index points at it (zero when none does).
 * - ReverseSequence and Upsample are gathers with computed indices.
 */
#include "lower.h"

#include <string.h>

static Expr *zero_of(Lower *L, DType t)
{
    return dtype_is_float(t) ? ex_float(L, t, 0.0) : ex_const_int(L, dtype_compute(t), 0);
}

/* [outer, R, inner] view of a tensor around axis ax. */
static void view3(const Value *x, int ax, int64_t *v3)
{
    int i;
    v3[0] = v3[1] = v3[2] = 1;
    for (i = 0; i < x->rank; i++)
        v3[i < ax ? 0 : i == ax ? 1 : 2] *= x->dims[i];
}

int lower_TopK(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    int ax = node_axis(n)->axis;
    int largest = node_axis(n)->largest;
    int64_t v3[3], o3[3];
    int xb = lower_buf_value(L, n->in[0]);
    int rb = lower_buf_temp(L, "rank", DT_INT64, value_numel(x));
    Compute *c;
    Expr *xi[3], *xj[3], *a, *b, *beats, *hit;
    IterVar *j;
    int k;
    view3(x, ax, v3);
    view3(y, ax, o3);
    c = lower_stage(L, "rank", rb, 3, v3);
    j = lower_raxis(L, c, v3[1]);
    xi[0] = xj[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    xj[1] = ex_var(L, j);
    xi[2] = xj[2] = ex_var(L, &c->axes[2]);
    a = ex_load_nd(L, xb, 3, v3, xi);
    b = ex_load_nd(L, xb, 3, v3, xj);
    beats = ex_binary(L, largest ? BIN_GT : BIN_LT, b, a);
    beats = ex_binary(L, BIN_OR, beats,
                      ex_and(L, ex_binary(L, BIN_EQ, b, a), ex_lt(L, xj[1], xi[1])));
    c->rop = RED_SUM;
    c->body = ex_select(L, beats, ex_int(L, 1), ex_int(L, 0));
    for (k = 0; k < 2; k++) {
        c = lower_stage(L, k ? "indices" : "values", lower_buf_value(L, n->out[k]), 3, o3);
        j = lower_raxis(L, c, v3[1]);
        xj[0] = ex_var(L, &c->axes[0]);
        xj[1] = ex_var(L, j);
        xj[2] = ex_var(L, &c->axes[2]);
        hit = ex_binary(L, BIN_EQ, ex_load_nd(L, rb, 3, v3, xj), ex_var(L, &c->axes[1]));
        c->rop = RED_SUM;
        if (k)
            c->body = ex_select(L, hit, ex_var(L, j), ex_int(L, 0));
        else
            c->body = ex_select(L, hit, ex_load_nd(L, xb, 3, v3, xj), zero_of(L, x->dtype));
    }
    return 0;
}

int lower_ReverseSequence(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int ba = node_axis(n)->axis, ta = node_axis(n)->time_axis;
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *idx[TVMCC_MAX_RANK], *len, *t, *rev;
    int i;
    for (i = 0; i < x->rank; i++)
        idx[i] = ex_var(L, &c->axes[i]);
    len = ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, n->in[1]), idx[ba]));
    len = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, len, ex_int(L, 0)),
                    ex_int(L, x->dims[ta]));
    t = idx[ta];
    rev = ex_sub(L, ex_sub(L, len, ex_int(L, 1)), t);
    idx[ta] = ex_select(L, ex_lt(L, t, len), ex_binary(L, BIN_MAX, rev, ex_int(L, 0)), t);
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    return 0;
}

int lower_Compress(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *cv = &L->g->values[n->in[1]];
    const Value *y = &L->g->values[n->out[0]];
    int ax = node_axis(n)->axis; /* -1: the flattened input */
    int64_t v3[3], o3[3], len = cv->dims[0], flat;
    int cb = lower_buf_value(L, n->in[1]);
    int pb = lower_buf_temp(L, "count", DT_INT64, len);
    int sb = lower_buf_temp(L, "pick", DT_INT64, ax < 0 ? value_numel(y) : y->dims[ax]);
    Compute *c;
    IterVar *r;
    Expr *on, *xi[3];
    if (ax < 0) {
        flat = value_numel(x);
        v3[0] = v3[2] = o3[0] = o3[2] = 1;
        v3[1] = flat;
        o3[1] = value_numel(y);
    } else {
        view3(x, ax, v3);
        view3(y, ax, o3);
    }
    /* count[i] = number of true conditions in [0, i] */
    c = lower_stage(L, "count", pb, 1, &len);
    r = lower_raxis(L, c, len);
    on = ex_and(L, ex_binary(L, BIN_LE, ex_var(L, r), ex_var(L, &c->axes[0])),
                ex_binary(L, BIN_NE, ex_cast(L, DT_INT64, ex_load(L, cb, ex_var(L, r))),
                          ex_int(L, 0)));
    c->rop = RED_SUM;
    c->body = ex_select(L, on, ex_int(L, 1), ex_int(L, 0));
    /* pick[j] = the position whose count first reaches j + 1 */
    c = lower_stage(L, "pick", sb, 1, &o3[1]);
    r = lower_raxis(L, c, len);
    on = ex_binary(L, BIN_EQ, ex_load(L, pb, ex_var(L, r)),
                   ex_add(L, ex_var(L, &c->axes[0]), ex_int(L, 1)));
    c->rop = RED_MIN;
    c->init = ex_int(L, v3[1] - 1);
    c->body = ex_select(L, on, ex_var(L, r), ex_int(L, v3[1] - 1));
    c = lower_stage(L, "compress", lower_buf_value(L, n->out[0]), 3, o3);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_load(L, sb, ex_var(L, &c->axes[1]));
    xi[2] = ex_var(L, &c->axes[2]);
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), 3, v3, xi);
    return 0;
}

/* Every output element sums the inputs whose index points at it (zero
 * when none does). Indices are positions in the default unpooled shape
 * (from kernel, strides and pads), flat over the whole tensor as MaxPool
 * writes them; an explicit output_shape may be larger, and then an index
 * keeps its spatial coordinates. So each output position is mapped to its
 * flat offset within a default-shaped plane (-1 outside it) and compared
 * with the index modulo the plane size. */
int lower_MaxUnpool(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    const ConvWindow *win = node_window(n);
    const int64_t *def = win->out; /* the default unpooled extents */
    int64_t xs = 1, v3[3], dplane = 1;
    int i, nsp = win->nsp;
    Compute *c;
    IterVar *r;
    Expr *xi[3], *ix, *hit, *pos, *inside;
    for (i = 0; i < nsp; i++) {
        xs *= x->dims[2 + i];
        dplane *= def[i];
    }
    v3[0] = x->dims[0];
    v3[1] = x->dims[1];
    v3[2] = xs;
    c = lower_stage(L, "unpool", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    r = lower_raxis(L, c, xs);
    pos = ex_int(L, 0);
    inside = ex_const_int(L, DT_BOOL, 1);
    for (i = 0; i < nsp; i++) {
        Expr *o = ex_var(L, &c->axes[2 + i]);
        pos = ex_add(L, ex_mul(L, pos, ex_int(L, def[i])), o);
        if (y->dims[2 + i] > def[i])
            inside = ex_and(L, inside, ex_lt(L, o, ex_int(L, def[i])));
    }
    pos = ex_select(L, inside, pos, ex_int(L, -1));
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    xi[2] = ex_var(L, r);
    ix = ex_cast(L, DT_INT64, ex_load_nd(L, lower_buf_value(L, n->in[1]), 3, v3, xi));
    hit = ex_binary(L, BIN_EQ, ex_binary(L, BIN_MOD, ix, ex_int(L, dplane)), pos);
    c->rop = RED_SUM;
    c->body = ex_select(L, hit, ex_load_nd(L, lower_buf_value(L, n->in[0]), 3, v3, xi),
                        zero_of(L, x->dtype));
    return 0;
}

/* Nearest: output position o reads input floor(o * in / out), which is
 * floor(o / scale) for the scale the output extent came from. */
/* Upsample with mode linear: n-linear interpolation with asymmetric
 * coordinates (x_in = x_out * in / out), one reduce axis of two taps per
 * resized dimension; positions past the last input clamp to it. */
static int upsample_linear(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *idx[TVMCC_MAX_RANK], *w = NULL;
    DType ct = dtype_compute(y->dtype);
    int i;
    for (i = 0; i < x->rank; i++) {
        Expr *o = ex_var(L, &c->axes[i]), *xin, *fl, *frac, *t, *wi;
        IterVar *tap;
        if (x->dims[i] == y->dims[i]) {
            idx[i] = o;
            continue;
        }
        tap = lower_raxis(L, c, 2);
        t = ex_var(L, tap);
        xin = ex_mul(L, ex_cast(L, DT_FLOAT64, o),
                     ex_float(L, DT_FLOAT64, (double)x->dims[i] / (double)y->dims[i]));
        fl = ex_unary(L, UN_FLOOR, xin);
        frac = ex_sub(L, xin, fl);
        idx[i] = ex_binary(L, BIN_MIN, ex_add(L, ex_cast(L, DT_INT64, fl), t),
                           ex_int(L, x->dims[i] - 1));
        wi = ex_select(L, ex_binary(L, BIN_EQ, t, ex_int(L, 0)),
                       ex_sub(L, ex_float(L, DT_FLOAT64, 1.0), frac), frac);
        w = w ? ex_mul(L, w, wi) : wi;
    }
    c->rop = c->n_raxes ? RED_SUM : RED_NONE;
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    if (w)
        c->body = ex_mul(L, ex_cast(L, DT_FLOAT64, c->body), w);
    if (c->n_raxes)
        c->body = ex_cast(L, ct, c->body);
    return 0;
}

int lower_Upsample(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    Compute *c;
    Expr *idx[TVMCC_MAX_RANK];
    int i;
    if (node_resize(n)->mode != RESIZE_NEAREST)
        return upsample_linear(L, n);
    c = lower_elemwise_stage(L, n, n->out[0]);
    for (i = 0; i < x->rank; i++) {
        Expr *o = ex_var(L, &c->axes[i]);
        if (x->dims[i] == y->dims[i])
            idx[i] = o;
        else
            idx[i] = ex_binary(L, BIN_MIN, ex_binary(L, BIN_DIV, ex_mul(L, o, ex_int(L, x->dims[i])),
                                                     ex_int(L, y->dims[i])),
                               ex_int(L, x->dims[i] - 1));
    }
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, idx);
    return 0;
}

/* DFT: out[.., k, .., c] = sum_n x[.., n, ..] * exp(-+2 pi i k n / N). The
 * angle uses (k * n) mod N, exact in integers, so large k * n lose no
 * precision; an input shorter than N is zero-padded (the reduction only
 * runs over the positions that exist). Inverse scales by 1 / N. An axis
 * known only at run time (opset 20) is chosen among the candidate axes the
 * input and output shapes allow: the reduction runs over the longest, and
 * the index, N and the tap count are selected by the loaded axis. */
int lower_DFT(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    const AxisParams *ap = node_axis(n);
    int64_t N[TVMCC_MAX_RANK], len[TVMCC_MAX_RANK], dl = 0, cnt, maxlen = 0;
    int ax = ap->axis, inv = ap->inverse, rt = ap->runtime_axis, onesided;
    int last = x->rank - 1, xb = lower_buf_value(L, n->in[0]), i, j, nc = 0;
    int cand[TVMCC_MAX_RANK];
    const int64_t *lv;
    DType t = DT_FLOAT64; /* twiddles and sums in double: near-zero bins stay near zero */
    Compute *c = lower_stage(L, "dft", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    IterVar *r;
    Expr *xi[TVMCC_MAX_RANK], *th, *cs, *sn, *re, *im, *vr, *vi, *av = NULL, *kv = NULL;
    Expr *nv = NULL, *nf = NULL, *ok = NULL;
    onesided = attr_int(n, "onesided", 0, L->d) != 0;
    if (n->n_in > 1 && n->in[1] >= 0 && (cnt = value_const_ints(L->g, n->in[1], &lv)) == 1)
        dl = lv[0];
    for (i = 1; i < last; i++) {
        int fits = 1;
        if (rt) {
            int64_t m = dl ? dl : x->dims[i];
            for (j = 0; j < last; j++)
                if (j != i && y->dims[j] != x->dims[j])
                    fits = 0;
            if (y->dims[i] != (onesided ? m / 2 + 1 : m))
                fits = 0;
        } else if (i != ax) {
            fits = 0;
        }
        if (!fits)
            continue;
        N[nc] = dl ? dl : x->dims[i];
        len[nc] = x->dims[i] < N[nc] ? x->dims[i] : N[nc];
        if (len[nc] > maxlen)
            maxlen = len[nc];
        cand[nc++] = i;
    }
    if (!nc)
        return diag_error(L->d, n, "input[2]", "no axis fits the input and output shapes");
    r = lower_raxis(L, c, maxlen);
    if (rt) {
        Expr *a = ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, n->in[2]), ex_int(L, 0)));
        av = ex_select(L, ex_lt(L, a, ex_int(L, 0)), ex_add(L, a, ex_int(L, x->rank)), a);
    }
    /* per candidate (the last one is the default of the select chains) */
    for (j = nc - 1; j >= 0; j--) {
        int a = cand[j];
        Expr *k = ex_var(L, &c->axes[a]);
        Expr *in = ex_lt(L, ex_var(L, r), ex_int(L, len[j]));
        Expr *hit = j == nc - 1 ? NULL : ex_binary(L, BIN_EQ, av, ex_int(L, a));
        kv = hit ? ex_select(L, hit, k, kv) : k;
        nv = hit ? ex_select(L, hit, ex_int(L, N[j]), nv) : ex_int(L, N[j]);
        nf = hit ? ex_select(L, hit, ex_float(L, t, (double)N[j]), nf)
                 : ex_float(L, t, (double)N[j]);
        ok = hit ? ex_select(L, hit, in, ok) : in;
    }
    for (i = 0; i < last; i++) {
        xi[i] = ex_var(L, &c->axes[i]);
        for (j = 0; j < nc; j++) {
            Expr *tap;
            if (cand[j] != i)
                continue;
            tap = ex_binary(L, BIN_MIN, ex_var(L, r), ex_int(L, x->dims[i] - 1));
            xi[i] = nc == 1 ? tap : ex_select(L, ex_binary(L, BIN_EQ, av, ex_int(L, i)), tap,
                                               xi[i]);
        }
    }
    xi[last] = ex_int(L, 0);
    re = ex_cast(L, t, ex_load_nd(L, xb, x->rank, x->dims, xi));
    if (x->dims[last] == 2) {
        xi[last] = ex_int(L, 1);
        im = ex_cast(L, t, ex_load_nd(L, xb, x->rank, x->dims, xi));
    } else {
        im = ex_float(L, t, 0.0);
    }
    th = ex_binary(L, BIN_MOD, ex_mul(L, kv, ex_var(L, r)), nv);
    th = ex_binary(L, BIN_DIV, ex_mul(L, ex_cast(L, t, th), ex_float(L, t, 6.283185307179586476925)),
                   nf);
    cs = ex_unary(L, UN_COS, th);
    sn = ex_unary(L, UN_SIN, th);
    if (inv)
        sn = ex_unary(L, UN_NEG, sn);
    /* (re + i im)(cos - i sin) */
    vr = ex_add(L, ex_mul(L, re, cs), ex_mul(L, im, sn));
    vi = ex_sub(L, ex_mul(L, im, cs), ex_mul(L, re, sn));
    c->rop = RED_SUM;
    c->body = ex_select(L, ex_binary(L, BIN_EQ, ex_var(L, &c->axes[last]), ex_int(L, 0)), vr, vi);
    if (nc > 1 || len[0] < maxlen)
        c->body = ex_select(L, ok, c->body, ex_float(L, t, 0.0));
    if (inv)
        c->post = ex_binary(L, BIN_DIV, ex_acc(L, t), nf);
    L->k->macs += value_numel(y) * maxlen;
    return 0;
}
