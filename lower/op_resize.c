/*
 * Lowering of Resize (opset 10 to 19): nearest (all four nearest_mode
 * roundings), n-linear and cubic interpolation under every
 * coordinate_transformation_mode, with exclude_outside and the
 * extrapolation_value of tf_crop_and_resize, over all dimensions or the
 * ones `axes` lists (the others are copied).
 *
 * Each output dimension maps its index o to a source coordinate x(o),
 * computed in double as the ONNX definition states it. Nearest mode rounds x
 * and loads one element. Linear and cubic are one reduction stage with a
 * reduce axis of extent 2 (linear) or 4 (cubic) per interpolated dimension:
 * tap r of that axis reads source index floor(x) + r (cubic: - 1), clamped
 * into the input (which is the ONNX edge padding), weighted by the 1-D
 * kernel at the fractional part of x; the weights multiply across
 * dimensions. Dimensions that provably map o to itself (same extent, scale
 * 1) are indexed directly, so a 4-D NCHW resize has only the H and W taps.
 *
 * antialias (opset 18) widens the linear or cubic filter of a dimension
 * downscaled by s < 1 to 1/s times its support: the reduce axis then has
 * the n taps ceil(x) - n/2 + k of the reference, each weighted by the
 * kernel at s * (tap - x), and the weights are divided by their sum, which
 * a first stage per such dimension computes into a temp buffer.
 *
 * The attributes come parsed by inference (the node's ResizeParams).
 * Scales and roi that are not compile-time constants are loaded at run time
 * from their buffers; sizes only fix the output shape, so the scale is then
 * output extent / input extent.
 */
#include "lower.h"

#include <math.h>
#include <string.h>

/* What the expression builders need to know about the node. */
typedef struct Rz {
    Lower *L;
    const Value *x, *y;
    const ResizeParams *rp;
    int ctm;                       /* CT_* */
    int sc_buf;                    /* scales read at run time, or -1 */
    int sz_buf;                    /* sizes read at run time (aspect ratio policy), or -1 */
    double sc[TVMCC_MAX_RANK];     /* constant scales when sc_buf < 0 */
    int roi_buf;                   /* roi read at run time, or -1 */
    double roi[2 * TVMCC_MAX_RANK];/* constant roi when roi_buf < 0 */
} Rz;

static Expr *dbl(Lower *L, double v)
{
    return ex_float(L, DT_FLOAT64, v);
}

/* Scale of dimension i (constant, or loaded from the scales input). */
static Expr *scale_of(Rz *z, int i)
{
    if (z->sz_buf >= 0) {
        /* the smallest (not_larger) or largest (not_smaller) size / extent */
        Lower *L = z->L;
        Expr *m = NULL;
        int k;
        for (k = 0; k < z->x->rank; k++) {
            Expr *r;
            if (z->rp->axis_of[k] < 0)
                continue;
            r = ex_binary(L, BIN_DIV,
                          ex_cast(L, DT_FLOAT64,
                                  ex_load(L, z->sz_buf, ex_int(L, z->rp->axis_of[k]))),
                          dbl(L, (double)z->x->dims[k]));
            m = !m ? r : ex_binary(L, z->rp->policy == RP_NOT_LARGER ? BIN_MIN : BIN_MAX, m, r);
        }
        return m;
    }
    if (z->sc_buf < 0)
        return dbl(z->L, z->sc[i]);
    return ex_cast(z->L, DT_FLOAT64,
                   ex_load(z->L, z->sc_buf, ex_int(z->L, z->rp->axis_of[i])));
}

/* Start (end = 0) or end (end = 1) of the roi of dimension i. */
static Expr *roi_of(Rz *z, int i, int end)
{
    int j = z->rp->axis_of[i] + (end ? z->rp->n_axes : 0);
    if (z->roi_buf < 0)
        return dbl(z->L, z->roi[j]);
    return ex_cast(z->L, DT_FLOAT64, ex_load(z->L, z->roi_buf, ex_int(z->L, j)));
}

/* The resized length the ONNX formulas divide by: input extent times the
 * scale (not rounded down), which is the output extent when sizes were
 * given. */
static Expr *resized_len(Rz *z, int i)
{
    Lower *L = z->L;
    double in = (double)z->x->dims[i];
    if (z->sc_buf < 0 && z->sz_buf < 0)
        return dbl(L, in * z->sc[i]);
    return ex_binary(L, BIN_MUL, dbl(L, in), scale_of(z, i));
}

/* e when the resized length exceeds 1, else `one` (decided at compile time
 * when the scale is a constant). */
static Expr *if_long(Rz *z, int i, Expr *e, Expr *one)
{
    Lower *L = z->L;
    if (z->sc_buf < 0 && z->sz_buf < 0)
        return (double)z->x->dims[i] * z->sc[i] > 1.0 ? e : one;
    return ex_select(L, ex_binary(L, BIN_GT, resized_len(z, i), dbl(L, 1.0)), e, one);
}

/* Source coordinate of output index o (an IterVar) along dimension i. */
static Expr *coord(Rz *z, int i, const IterVar *o)
{
    Lower *L = z->L;
    int64_t in = z->x->dims[i];
    Expr *ov = ex_cast(L, DT_FLOAT64, ex_var(L, o));
    Expr *half = ex_binary(L, BIN_ADD, ov, dbl(L, 0.5));
    Expr *lm1 = ex_binary(L, BIN_SUB, resized_len(z, i), dbl(L, 1.0));
    Expr *span = dbl(L, (double)(in - 1));
    switch (z->ctm) {
    case CT_HALF:
        return ex_binary(L, BIN_SUB, ex_binary(L, BIN_DIV, half, scale_of(z, i)), dbl(L, 0.5));
    case CT_PYTORCH:
        return if_long(z, i, ex_binary(L, BIN_SUB, ex_binary(L, BIN_DIV, half, scale_of(z, i)),
                                       dbl(L, 0.5)),
                       dbl(L, 0.0));
    case CT_ALIGN:
        return if_long(z, i, ex_binary(L, BIN_DIV, ex_binary(L, BIN_MUL, ov, span), lm1),
                       dbl(L, 0.0));
    case CT_ASYM:
        return ex_binary(L, BIN_DIV, ov, scale_of(z, i));
    case CT_TF_NN:
        return ex_binary(L, BIN_DIV, half, scale_of(z, i));
    case CT_HALF_SYM: {
        /* offset = in/2 * (1 - out / (in * scale)), centring the rounded output */
        Expr *adj = ex_binary(L, BIN_DIV, dbl(L, (double)z->y->dims[i]), resized_len(z, i));
        Expr *off = ex_binary(L, BIN_MUL, dbl(L, 0.5 * (double)in),
                              ex_binary(L, BIN_SUB, dbl(L, 1.0), adj));
        return ex_binary(L, BIN_ADD, off,
                         ex_binary(L, BIN_SUB, ex_binary(L, BIN_DIV, half, scale_of(z, i)),
                                   dbl(L, 0.5)));
    }
    default: { /* tf_crop_and_resize */
        Expr *st = roi_of(z, i, 0), *en = roi_of(z, i, 1);
        Expr *mid = ex_binary(L, BIN_MUL, ex_binary(L, BIN_MUL, dbl(L, 0.5),
                                                    ex_binary(L, BIN_ADD, st, en)), span);
        Expr *lin = ex_binary(L, BIN_ADD, ex_binary(L, BIN_MUL, st, span),
                              ex_binary(L, BIN_DIV,
                                        ex_binary(L, BIN_MUL, ov,
                                                  ex_binary(L, BIN_MUL,
                                                            ex_binary(L, BIN_SUB, en, st), span)),
                                        lm1));
        return if_long(z, i, lin, mid);
    }
    }
}

/* Dimension i maps every output index to itself. */
static int is_identity(const Rz *z, int i)
{
    if (z->rp->axis_of[i] < 0)
        return 1;
    if (z->x->dims[i] != z->y->dims[i] || z->ctm == CT_CROP || z->ctm == CT_TF_NN)
        return 0;
    if (z->ctm == CT_ALIGN)
        return 1;
    return z->sc_buf < 0 && z->sz_buf < 0 && z->sc[i] == 1.0;
}

static Expr *clamp_idx(Lower *L, Expr *e, int64_t hi)
{
    e = ex_binary(L, BIN_MAX, e, ex_int(L, 0));
    return ex_binary(L, BIN_MIN, e, ex_int(L, hi - 1));
}

static Expr *to_index(Lower *L, Expr *dval)
{
    return ex_cast(L, DT_INT64, dval);
}

/* Cubic convolution weight of tap r (0..3, constant) at fraction t. */
static Expr *cubic_tap(Lower *L, Expr *t, int r, double a)
{
    Expr *u;
    switch (r) {
    case 0: /* distance t + 1 */
    case 3: /* distance 2 - t */
        u = r == 0 ? ex_binary(L, BIN_ADD, t, dbl(L, 1.0)) : ex_binary(L, BIN_SUB, dbl(L, 2.0), t);
        /* ((a*u - 5a)*u + 8a)*u - 4a */
        return ex_binary(L, BIN_SUB,
                         ex_binary(L, BIN_MUL,
                                   ex_binary(L, BIN_ADD,
                                             ex_binary(L, BIN_MUL,
                                                       ex_binary(L, BIN_SUB,
                                                                 ex_binary(L, BIN_MUL, dbl(L, a), u),
                                                                 dbl(L, 5 * a)),
                                                       u),
                                             dbl(L, 8 * a)),
                                   u),
                         dbl(L, 4 * a));
    default: /* distance t (r = 1) or 1 - t (r = 2) */
        u = r == 1 ? t : ex_binary(L, BIN_SUB, dbl(L, 1.0), t);
        /* ((a+2)*u - (a+3))*u*u + 1 */
        return ex_binary(L, BIN_ADD,
                         ex_binary(L, BIN_MUL,
                                   ex_binary(L, BIN_MUL,
                                             ex_binary(L, BIN_SUB,
                                                       ex_binary(L, BIN_MUL, dbl(L, a + 2), u),
                                                       dbl(L, a + 3)),
                                             u),
                                   u),
                         dbl(L, 1.0));
    }
}

/* Antialiased kernel weight at distance u (in taps of the widened filter). */
static Expr *aa_kernel(Lower *L, Expr *u, int cubic, double a)
{
    Expr *au = ex_unary(L, UN_ABS, u);
    if (!cubic)
        return ex_binary(L, BIN_MAX, ex_binary(L, BIN_SUB, dbl(L, 1.0), au), dbl(L, 0.0));
    {
        Expr *au2 = ex_binary(L, BIN_MUL, au, au), *au3 = ex_binary(L, BIN_MUL, au2, au);
        /* |u| <= 1: (a+2)|u|^3 - (a+3)|u|^2 + 1; |u| < 2: a|u|^3 - 5a|u|^2 + 8a|u| - 4a */
        Expr *near = ex_binary(L, BIN_ADD,
                               ex_binary(L, BIN_SUB, ex_binary(L, BIN_MUL, dbl(L, a + 2), au3),
                                         ex_binary(L, BIN_MUL, dbl(L, a + 3), au2)),
                               dbl(L, 1.0));
        Expr *far = ex_binary(L, BIN_SUB,
                              ex_binary(L, BIN_ADD,
                                        ex_binary(L, BIN_SUB,
                                                  ex_binary(L, BIN_MUL, dbl(L, a), au3),
                                                  ex_binary(L, BIN_MUL, dbl(L, 5 * a), au2)),
                                        ex_binary(L, BIN_MUL, dbl(L, 8 * a), au)),
                              dbl(L, 4 * a));
        return ex_select(L, ex_binary(L, BIN_LE, au, dbl(L, 1.0)), near,
                         ex_select(L, ex_lt(L, au, dbl(L, 2.0)), far, dbl(L, 0.0)));
    }
}

/* Taps of the antialiased filter of a dimension scaled by s (2 or 4 from
 * s = 1 up). */
static int64_t aa_taps(double s, int cubic)
{
    if (!(s < 1.0))
        s = 1.0;
    return 2 - 2 * ((int64_t)floor((cubic ? -2.0 : -1.0) / s) + 1);
}

/* Weight of antialiased tap r (a reduce variable, 0..nt-1) at source
 * coordinate cx of dimension i, before normalisation; *idx gets the
 * clamped source index. */
static Expr *aa_weight(Rz *z, int i, Expr *cx, Expr *r, int64_t nt, Expr **idx)
{
    Lower *L = z->L;
    int64_t in = z->x->dims[i];
    Expr *p = ex_add(L, ex_sub(L, to_index(L, ex_unary(L, UN_CEIL, cx)), ex_int(L, nt / 2)), r);
    Expr *se = ex_binary(L, BIN_MIN, scale_of(z, i), dbl(L, 1.0));
    Expr *u = ex_binary(L, BIN_MUL, se, ex_binary(L, BIN_SUB, ex_cast(L, DT_FLOAT64, p), cx));
    Expr *w = aa_kernel(L, u, z->rp->mode == RESIZE_CUBIC, z->rp->cubic_coeff_a);
    if (z->rp->exclude_outside)
        w = ex_select(L, ex_and(L, ex_binary(L, BIN_GE, p, ex_int(L, 0)),
                                ex_lt(L, p, ex_int(L, in))),
                      w, dbl(L, 0.0));
    *idx = clamp_idx(L, p, in);
    return w;
}

int lower_Resize(Lower *L, Node *n)
{
    Graph *g = L->g;
    ResizeParams rpc = *node_resize(n);
    const ResizeParams *rp = &rpc;
    Rz z;
    int sc_in = n->opset >= 11 ? 2 : 1, nm = rp->round, cubic = rp->mode == RESIZE_CUBIC;
    int excl = rp->exclude_outside, i, rank, xb;
    double a = rp->cubic_coeff_a;
    double extrap = rp->extrapolation_value;
    Expr *xi[TVMCC_MAX_RANK], *w = NULL, *outside = NULL, *v;
    int aa_buf[TVMCC_MAX_RANK];
    int64_t aa_nt[TVMCC_MAX_RANK];
    Compute *c;
    DType ct;

    memset(&z, 0, sizeof z);
    z.L = L;
    z.x = &g->values[n->in[0]];
    z.y = &g->values[n->out[0]];
    z.rp = rp;
    rank = z.x->rank;
    ct = dtype_compute(z.y->dtype);
    z.ctm = rp->coord;
    if (rpc.n_axes == 0) { /* Upsample's parameters: every dimension */
        rpc.n_axes = (int8_t)rank;
        for (i = 0; i < rank; i++)
            rpc.axis_of[i] = (int8_t)i;
    }

    /* scales: constant, run time, or from sizes */
    z.sc_buf = z.sz_buf = z.roi_buf = -1;
    if (n->n_in > sc_in && n->in[sc_in] >= 0 && value_numel(&g->values[n->in[sc_in]]) > 0) {
        const Value *sv = &g->values[n->in[sc_in]];
        if (value_numel(sv) != rp->n_axes)
            return diag_error(L->d, n, "scales", "has %lld entries for %d dimensions",
                              (long long)value_numel(sv), rp->n_axes);
        if (sv->data && (sv->dtype == DT_FLOAT32 || sv->dtype == DT_FLOAT64)) {
            for (i = 0; i < rank; i++) {
                int j = rp->axis_of[i];
                z.sc[i] = j < 0 ? 1.0
                          : sv->dtype == DT_FLOAT32 ? ((const float *)sv->data)[j]
                                                    : ((const double *)sv->data)[j];
            }
        } else {
            z.sc_buf = lower_buf_value(L, n->in[sc_in]);
        }
    } else if (rp->policy != RP_STRETCH && rp->policy_scale > 0) {
        for (i = 0; i < rank; i++)
            z.sc[i] = rp->axis_of[i] >= 0 ? rp->policy_scale : 1.0;
    } else if (rp->policy != RP_STRETCH) {
        if (n->n_in < 4 || n->in[3] < 0 || g->values[n->in[3]].dtype != DT_INT64)
            return diag_error(L->d, n, "sizes", "keep_aspect_ratio_policy needs sizes");
        z.sz_buf = lower_buf_value(L, n->in[3]);
    } else {
        for (i = 0; i < rank; i++)
            z.sc[i] = z.x->dims[i] ? (double)z.y->dims[i] / (double)z.x->dims[i] : 1.0;
    }
    if (z.ctm == CT_CROP) {
        const Value *rv = n->n_in > 1 && n->in[1] >= 0 ? &g->values[n->in[1]] : NULL;
        if (!rv || value_numel(rv) != 2 * rp->n_axes)
            return diag_error(L->d, n, "roi", "tf_crop_and_resize needs a roi of %d entries",
                              2 * rp->n_axes);
        if (rv->data && (rv->dtype == DT_FLOAT32 || rv->dtype == DT_FLOAT64)) {
            for (i = 0; i < 2 * rp->n_axes; i++)
                z.roi[i] = rv->dtype == DT_FLOAT32 ? ((const float *)rv->data)[i]
                                                   : ((const double *)rv->data)[i];
        } else {
            z.roi_buf = lower_buf_value(L, n->in[1]);
        }
    }

    /* antialias: the sum of the taps' weights per output index of each
     * resized dimension. A scale known only at run time is at least
     * output / input extent, which bounds the taps; the taps past the
     * filter's support weigh 0. */
    for (i = 0; i < rank; i++) {
        Compute *sc;
        IterVar *r;
        Expr *idx;
        aa_buf[i] = -1;
        aa_nt[i] = 0;
        if (!rp->antialias || rp->mode == RESIZE_NEAREST || is_identity(&z, i))
            continue;
        aa_nt[i] = aa_taps(z.sc_buf < 0 && z.sz_buf < 0 ? z.sc[i]
                           : z.x->dims[i] ? (double)z.y->dims[i] / (double)z.x->dims[i] : 1.0,
                           cubic);
        aa_buf[i] = lower_buf_temp(L, "aasum", DT_FLOAT64, z.y->dims[i]);
        sc = lower_stage(L, "aasum", aa_buf[i], 1, &z.y->dims[i]);
        r = lower_raxis(L, sc, aa_nt[i]);
        sc->rop = RED_SUM;
        sc->body = aa_weight(&z, i, coord(&z, i, &sc->axes[0]), ex_var(L, r), aa_nt[i], &idx);
    }

    xb = lower_buf_value(L, n->in[0]);
    c = lower_stage(L, "resize", lower_buf_value(L, n->out[0]), z.y->rank, z.y->dims);
    for (i = 0; i < rank; i++) {
        int64_t in = z.x->dims[i];
        const IterVar *o = &c->axes[i];
        Expr *x0, *t;
        if (is_identity(&z, i)) {
            xi[i] = ex_var(L, o);
            continue;
        }
        if (z.ctm == CT_CROP) {
            Expr *cx = coord(&z, i, o);
            Expr *bad = ex_binary(L, BIN_OR, ex_binary(L, BIN_LT, cx, dbl(L, 0.0)),
                                  ex_binary(L, BIN_GT, cx, dbl(L, (double)(in - 1))));
            outside = outside ? ex_binary(L, BIN_OR, outside, bad) : bad;
        }
        if (rp->mode == RESIZE_NEAREST) {
            Expr *cx = coord(&z, i, o), *r;
            switch (nm) {
            case NM_ROUND_FLOOR:
                r = ex_unary(L, UN_CEIL, ex_binary(L, BIN_SUB, cx, dbl(L, 0.5)));
                break;
            case NM_ROUND_CEIL:
                r = ex_unary(L, UN_FLOOR, ex_binary(L, BIN_ADD, cx, dbl(L, 0.5)));
                break;
            case NM_FLOOR:
                r = ex_unary(L, UN_FLOOR, cx);
                break;
            default:
                r = ex_unary(L, UN_CEIL, cx);
                break;
            }
            xi[i] = clamp_idx(L, to_index(L, r), in);
            continue;
        }
        if (aa_buf[i] >= 0) {
            int64_t nt = aa_nt[i];
            IterVar *r = lower_raxis(L, c, nt);
            Expr *wt = aa_weight(&z, i, coord(&z, i, o), ex_var(L, r), nt, &xi[i]);
            wt = ex_binary(L, BIN_DIV, wt, ex_load(L, aa_buf[i], ex_var(L, o)));
            w = w ? ex_binary(L, BIN_MUL, w, wt) : wt;
            continue;
        }
        x0 = ex_unary(L, UN_FLOOR, coord(&z, i, o));
        t = ex_binary(L, BIN_SUB, coord(&z, i, o), x0);
        {
            IterVar *r = lower_raxis(L, c, cubic ? 4 : 2);
            Expr *rv = ex_var(L, r), *wt, *base = to_index(L, x0);
            if (cubic)
                base = ex_sub(L, base, ex_int(L, 1));
            xi[i] = clamp_idx(L, ex_add(L, base, rv), in);
            if (!cubic) {
                wt = ex_select(L, ex_binary(L, BIN_EQ, rv, ex_int(L, 0)),
                               ex_binary(L, BIN_SUB, dbl(L, 1.0), t), t);
            } else {
                int k;
                Expr *taps[4], *sum = NULL;
                for (k = 0; k < 4; k++) {
                    taps[k] = cubic_tap(L, t, k, a);
                    if (excl) {
                        /* taps outside the input get weight 0, the rest are renormalised */
                        Expr *p = ex_add(L, base, ex_int(L, k));
                        Expr *ok = ex_and(L, ex_binary(L, BIN_GE, p, ex_int(L, 0)),
                                          ex_lt(L, p, ex_int(L, in)));
                        taps[k] = ex_select(L, ok, taps[k], dbl(L, 0.0));
                        sum = sum ? ex_binary(L, BIN_ADD, sum, taps[k]) : taps[k];
                    }
                }
                wt = ex_select(L, ex_binary(L, BIN_EQ, rv, ex_int(L, 0)), taps[0],
                               ex_select(L, ex_binary(L, BIN_EQ, rv, ex_int(L, 1)), taps[1],
                                         ex_select(L, ex_binary(L, BIN_EQ, rv, ex_int(L, 2)),
                                                   taps[2], taps[3])));
                if (excl)
                    wt = ex_binary(L, BIN_DIV, wt, sum);
            }
            w = w ? ex_binary(L, BIN_MUL, w, wt) : wt;
        }
    }
    v = ex_load_nd(L, xb, rank, z.x->dims, xi);
    if (!w) {
        Expr *ev = dtype_is_float(ct) ? ex_float(L, ct, extrap)
                                      : ex_const_int(L, ct, dtype_float_to_int(ct, extrap));
        c->body = outside ? ex_select(L, outside, ev, v) : v;
        return 0;
    }
    c->rop = RED_SUM;
    c->body = ex_binary(L, BIN_MUL, w, ex_cast(L, DT_FLOAT64, v));
    if (outside)
        c->post = ex_select(L, outside, dbl(L, extrap), ex_acc(L, DT_FLOAT64));
    return 0;
}
