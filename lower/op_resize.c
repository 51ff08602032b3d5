/*
 * Lowering of Resize (opset 10 to 17): nearest (all four nearest_mode
 * roundings), n-linear and cubic interpolation under every
 * coordinate_transformation_mode, with exclude_outside and the
 * extrapolation_value of tf_crop_and_resize.
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
 * The attributes come parsed by inference (the node's ResizeParams).
 * Scales and roi that are not compile-time constants are loaded at run time
 * from their buffers; sizes only fix the output shape, so the scale is then
 * output extent / input extent.
 */
#include "lower.h"

#include <string.h>

/* What the expression builders need to know about the node. */
typedef struct Rz {
    Lower *L;
    const Value *x, *y;
    int ctm;                       /* CT_* */
    int sc_buf;                    /* scales read at run time, or -1 */
    double sc[TVMCC_MAX_RANK];     /* constant scales when sc_buf < 0 */
    int roi_buf;                   /* roi read at run time, or -1 */
    double roi[2 * TVMCC_MAX_RANK];/* constant roi when roi_buf < 0 */
} Rz;

static Expr *dbl(Lower *L, double v)
{
    return ex_float(L, DT_FLOAT64, v);
}

static Expr *scale_of(Rz *z, int i)
{
    if (z->sc_buf < 0)
        return dbl(z->L, z->sc[i]);
    return ex_cast(z->L, DT_FLOAT64, ex_load(z->L, z->sc_buf, ex_int(z->L, i)));
}

static Expr *roi_of(Rz *z, int j)
{
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
    if (z->sc_buf < 0)
        return dbl(L, in * z->sc[i]);
    return ex_binary(L, BIN_MUL, dbl(L, in), scale_of(z, i));
}

/* e when the resized length exceeds 1, else `one` (decided at compile time
 * when the scale is a constant). */
static Expr *if_long(Rz *z, int i, Expr *e, Expr *one)
{
    Lower *L = z->L;
    if (z->sc_buf < 0)
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
    default: { /* tf_crop_and_resize */
        int r = z->x->rank;
        Expr *st = roi_of(z, i), *en = roi_of(z, r + i);
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
    if (z->x->dims[i] != z->y->dims[i] || z->ctm == CT_CROP || z->ctm == CT_TF_NN)
        return 0;
    if (z->ctm == CT_ALIGN)
        return 1;
    return z->sc_buf < 0 && z->sc[i] == 1.0;
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

int lower_Resize(Lower *L, Node *n)
{
    Graph *g = L->g;
    const ResizeParams *rp = node_resize(n);
    Rz z;
    int sc_in = n->opset >= 11 ? 2 : 1, nm = rp->round, cubic = rp->mode == RESIZE_CUBIC;
    int excl = rp->exclude_outside, i, rank, xb;
    double a = rp->cubic_coeff_a;
    double extrap = rp->extrapolation_value;
    Expr *xi[TVMCC_MAX_RANK], *w = NULL, *outside = NULL, *v;
    Compute *c;
    DType ct;

    memset(&z, 0, sizeof z);
    z.L = L;
    z.x = &g->values[n->in[0]];
    z.y = &g->values[n->out[0]];
    rank = z.x->rank;
    ct = dtype_compute(z.y->dtype);
    z.ctm = rp->coord;

    /* scales: constant, run time, or from sizes */
    z.sc_buf = z.roi_buf = -1;
    if (n->n_in > sc_in && n->in[sc_in] >= 0 && value_numel(&g->values[n->in[sc_in]]) > 0) {
        const Value *sv = &g->values[n->in[sc_in]];
        if (value_numel(sv) != rank)
            return diag_error(L->d, n, "scales", "has %lld entries for rank %d",
                              (long long)value_numel(sv), rank);
        if (sv->data && (sv->dtype == DT_FLOAT32 || sv->dtype == DT_FLOAT64)) {
            for (i = 0; i < rank; i++)
                z.sc[i] = sv->dtype == DT_FLOAT32 ? ((const float *)sv->data)[i]
                                                  : ((const double *)sv->data)[i];
        } else {
            z.sc_buf = lower_buf_value(L, n->in[sc_in]);
        }
    } else {
        for (i = 0; i < rank; i++)
            z.sc[i] = z.x->dims[i] ? (double)z.y->dims[i] / (double)z.x->dims[i] : 1.0;
    }
    if (z.ctm == CT_CROP) {
        const Value *rv = n->n_in > 1 && n->in[1] >= 0 ? &g->values[n->in[1]] : NULL;
        if (!rv || value_numel(rv) != 2 * rank)
            return diag_error(L->d, n, "roi", "tf_crop_and_resize needs a roi of %d entries",
                              2 * rank);
        if (rv->data && (rv->dtype == DT_FLOAT32 || rv->dtype == DT_FLOAT64)) {
            for (i = 0; i < 2 * rank; i++)
                z.roi[i] = rv->dtype == DT_FLOAT32 ? ((const float *)rv->data)[i]
                                                   : ((const double *)rv->data)[i];
        } else {
            z.roi_buf = lower_buf_value(L, n->in[1]);
        }
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
