/*
 * Lowering of the vision operators GridSample, RoiAlign and
 * NonMaxSuppression.
 *
 * - GridSample (2-D, or volumetric from opset 20) is one stage over the
 *   output: each element denormalises its grid point, applies the padding
 *   mode to the coordinates (border clamps, reflection folds them back into
 *   the image) and interpolates from 1, 2^d or 4^d loads (nearest, linear,
 *   cubic with a = -0.75) for d spatial dimensions.
 * - RoiAlign is a reduction per output bin over the sampling grid
 *   (sampling_ratio^2 points, each bilinearly interpolated): a sum divided
 *   by the count, or a max.
 * - AffineGrid is one stage: theta times the homogeneous base grid point
 *   (the normalised pixel centres, or corners with align_corners).
 * - CenterCropPad is one gather stage: a cropped dimension reads from the
 *   centred offset, a padded one reads shifted and gives 0 outside.
 * - Col2Im is a reduction per output pixel over the block's kernel
 *   positions: kernel position k hits the pixel when the column it would
 *   come from lies on the stride grid and inside the columns. A
 *   block_shape known only at run time is loaded by the kernel.
 * - DeformConv is Conv's reduction (input channels of the group, kernel
 *   rows, kernel columns) where each tap samples X bilinearly (corners
 *   outside give 0) at its window position moved by the offset input,
 *   times the mask when given; the bias is the epilogue.
 * - NonMaxSuppression is a chain of stages: every candidate's rank by
 *   score (ties: the lower index first), the candidates in rank order, then
 *   one stage per rank k that decides whether candidate k is kept (its
 *   score passes the threshold, no kept candidate before it overlaps it by
 *   more than iou_threshold, and fewer than max_output_boxes_per_class are
 *   kept before it) - greedy suppression is sequential, a stage per rank
 *   expresses that order. Finally each kept candidate's row number is a
 *   count of the kept ones before it, and output row q gathers the
 *   (batch, class, box) whose row number is q. The row count is the
 *   model's declared one.
 */
#include "lower.h"

#include <string.h>

/* ---- small float helpers (ct: the compute type) ---- */
static Expr *fc(Lower *L, DType ct, double v)
{
    return ex_float(L, ct, v);
}

static Expr *fadd(Lower *L, Expr *a, Expr *b)
{
    return ex_binary(L, BIN_ADD, a, b);
}

static Expr *fsub(Lower *L, Expr *a, Expr *b)
{
    return ex_binary(L, BIN_SUB, a, b);
}

static Expr *fmul(Lower *L, Expr *a, Expr *b)
{
    return ex_binary(L, BIN_MUL, a, b);
}

static Expr *fdiv(Lower *L, Expr *a, Expr *b)
{
    return ex_binary(L, BIN_DIV, a, b);
}

static Expr *fmin_(Lower *L, Expr *a, Expr *b)
{
    return ex_binary(L, BIN_MIN, a, b);
}

static Expr *fmax_(Lower *L, Expr *a, Expr *b)
{
    return ex_binary(L, BIN_MAX, a, b);
}

static Expr *clampf(Lower *L, Expr *v, double lo, double hi)
{
    return fmin_(L, fmax_(L, v, fc(L, v->dtype, lo)), fc(L, v->dtype, hi));
}

static Expr *clampi(Lower *L, Expr *v, int64_t hi)
{
    return ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, v, ex_int(L, 0)), ex_int(L, hi));
}

/* Float holding an integer value -> int64 index, clamped first so the
 * conversion is always defined. */
static Expr *to_index(Lower *L, Expr *v, int64_t size)
{
    return ex_cast(L, DT_INT64, clampf(L, v, -2.0, (double)size + 1.0));
}

/* ---- GridSample ---- */

typedef struct Sampler {
    Lower *L;
    DType ct;          /* compute type */
    int xb;            /* X buffer */
    int nsp;           /* spatial dimensions: 2, or 3 (volumetric) */
    const int64_t *xd; /* X dims [N, C, (D,) H, W] */
    Expr *n, *c;       /* batch and channel index of the output element */
    int pad;           /* 0 zeros, 1 border, 2 reflection */
    int ac;            /* align_corners */
} Sampler;

/* Folds v into [lo, hi] by reflection at the ends (repeatedly). */
static Expr *reflect(Lower *L, Expr *v, double lo, double hi)
{
    DType t = v->dtype;
    double rng = hi - lo;
    Expr *dl, *dh, *kl, *kh, *rl, *rh, *below, *above;
    if (rng <= 0)
        return fc(L, t, lo);
    dl = fsub(L, fc(L, t, lo), v);
    kl = ex_unary(L, UN_FLOOR, fdiv(L, dl, fc(L, t, rng)));
    rl = fsub(L, dl, fmul(L, kl, fc(L, t, rng)));
    below = ex_select(L, ex_binary(L, BIN_GT, fsub(L, kl, fmul(L, fc(L, t, 2.0),
                                   ex_unary(L, UN_FLOOR, fmul(L, kl, fc(L, t, 0.5))))),
                                   fc(L, t, 0.5)),
                      fsub(L, fc(L, t, hi), rl), fadd(L, fc(L, t, lo), rl));
    dh = fsub(L, v, fc(L, t, hi));
    kh = ex_unary(L, UN_FLOOR, fdiv(L, dh, fc(L, t, rng)));
    rh = fsub(L, dh, fmul(L, kh, fc(L, t, rng)));
    above = ex_select(L, ex_binary(L, BIN_GT, fsub(L, kh, fmul(L, fc(L, t, 2.0),
                                   ex_unary(L, UN_FLOOR, fmul(L, kh, fc(L, t, 0.5))))),
                                   fc(L, t, 0.5)),
                      fadd(L, fc(L, t, lo), rh), fsub(L, fc(L, t, hi), rh));
    return ex_select(L, ex_binary(L, BIN_LT, v, fc(L, t, lo)), below,
                     ex_select(L, ex_binary(L, BIN_GT, v, fc(L, t, hi)), above, v));
}

static double lo_of(const Sampler *s, int64_t size)
{
    (void)size;
    return s->ac ? 0.0 : -0.5;
}

static double hi_of(const Sampler *s, int64_t size)
{
    return s->ac ? (double)size - 1.0 : (double)size - 0.5;
}

/* The padding mode applied to a continuous coordinate. */
static Expr *fix_coord(const Sampler *s, Expr *v, int64_t size)
{
    Lower *L = s->L;
    double lo = lo_of(s, size), hi = hi_of(s, size);
    if (s->pad == 1) {
        Expr *out = ex_binary(L, BIN_OR, ex_binary(L, BIN_LT, v, fc(L, s->ct, lo)),
                              ex_binary(L, BIN_GT, v, fc(L, s->ct, hi)));
        return ex_select(L, out, clampf(L, v, 0.0, (double)size - 1.0), v);
    }
    if (s->pad == 2)
        return reflect(L, v, lo, hi);
    return v;
}

/* X[n, c, p...] for integral float coordinates p (one per spatial
 * dimension), per the padding mode. */
static Expr *pixel(const Sampler *s, Expr *const *p)
{
    Lower *L = s->L;
    Expr *idx[TVMCC_MAX_RANK], *v, *in = NULL;
    int k;
    idx[0] = s->n;
    idx[1] = s->c;
    for (k = 0; k < s->nsp; k++) {
        int64_t size = s->xd[2 + k];
        Expr *q = p[k], *iq, *ok;
        if (s->pad == 2)
            q = reflect(L, q, lo_of(s, size), hi_of(s, size));
        iq = to_index(L, q, size);
        idx[2 + k] = clampi(L, iq, size - 1);
        ok = ex_and(L, ex_binary(L, BIN_GE, iq, ex_int(L, 0)), ex_lt(L, iq, ex_int(L, size)));
        in = in ? ex_and(L, in, ok) : ok;
    }
    v = ex_load_nd(L, s->xb, 2 + s->nsp, s->xd, idx);
    if (s->pad == 0)
        v = ex_select(L, in, v, fc(L, v->dtype, 0.0));
    return ex_cast(L, s->ct, v);
}

/* Cubic convolution weight for distance d (a = -0.75); `far` selects the
 * 1 <= d < 2 piece. */
static Expr *cubic(Lower *L, DType t, Expr *d, int far)
{
    const double a = -0.75;
    if (far)
        return fsub(L, fmul(L, fadd(L, fmul(L, fsub(L, fmul(L, fc(L, t, a), d),
                                                   fc(L, t, 5 * a)), d),
                                    fc(L, t, 8 * a)), d),
                    fc(L, t, 4 * a));
    return fadd(L, fmul(L, fmul(L, fsub(L, fmul(L, fc(L, t, a + 2), d), fc(L, t, a + 3)), d), d),
                fc(L, t, 1.0));
}

/* Interpolation over spatial dimensions k.. (the earlier ones fixed in
 * p): a weighted sum of the 2 (linear) or 4 (cubic) neighbours along k,
 * nested from the first spatial dimension to the last. */
static Expr *interp(const Sampler *s, int k, Expr **p, Expr *const *base,
                    Expr *const (*w)[4], int taps)
{
    Lower *L = s->L;
    Expr *sum = NULL;
    int j;
    if (k == s->nsp)
        return pixel(s, p);
    for (j = 0; j < taps; j++) {
        Expr *t;
        p[k] = fadd(L, base[k], fc(L, s->ct, taps == 4 ? (double)(j - 1) : (double)j));
        t = fmul(L, w[k][j], interp(s, k + 1, p, base, w, taps));
        sum = sum ? fadd(L, sum, t) : t;
    }
    return sum;
}

int lower_GridSample(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *gr = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    const VisionParams *p = node_vision(n);
    int gb = lower_buf_value(L, n->in[1]), k, nsp = x->rank - 2;
    Sampler s;
    Compute *c;
    Expr *gi[TVMCC_MAX_RANK], *f[TVMCC_MAX_RANK], *base[TVMCC_MAX_RANK], *pt[TVMCC_MAX_RANK];
    Expr *w[TVMCC_MAX_RANK][4];
    memset(&s, 0, sizeof s);
    s.L = L;
    s.ct = dtype_compute(x->dtype);
    s.xb = lower_buf_value(L, n->in[0]);
    s.xd = x->dims;
    s.nsp = nsp;
    s.pad = p->padding_mode == SAMPLE_BORDER ? 1 : p->padding_mode == SAMPLE_REFLECTION ? 2 : 0;
    s.ac = p->align_corners;
    c = lower_stage(L, "gridsample", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    s.n = ex_var(L, &c->axes[0]);
    s.c = ex_var(L, &c->axes[1]);
    gi[0] = s.n;
    for (k = 0; k < nsp; k++)
        gi[1 + k] = ex_var(L, &c->axes[2 + k]);
    /* grid[..., j] holds the coordinate of spatial dimension nsp - 1 - j
     * (x, y, z), normalised to [-1, 1]: denormalise to pixel coordinates */
    for (k = 0; k < nsp; k++) {
        double size = (double)x->dims[2 + k];
        Expr *gv;
        gi[1 + nsp] = ex_int(L, nsp - 1 - k);
        gv = ex_cast(L, s.ct, ex_load_nd(L, gb, gr->rank, gr->dims, gi));
        if (s.ac)
            f[k] = fmul(L, fadd(L, gv, fc(L, s.ct, 1.0)), fc(L, s.ct, 0.5 * (size - 1)));
        else
            f[k] = fmul(L, fsub(L, fmul(L, fadd(L, gv, fc(L, s.ct, 1.0)), fc(L, s.ct, size)),
                                fc(L, s.ct, 1.0)), fc(L, s.ct, 0.5));
    }
    if (p->mode == SAMPLE_NEAREST) {
        for (k = 0; k < nsp; k++)
            pt[k] = ex_unary(L, UN_ROUND, fix_coord(&s, ex_unary(L, UN_ROUND, f[k]),
                                                    x->dims[2 + k]));
        c->body = pixel(&s, pt);
        return 0;
    }
    for (k = 0; k < nsp; k++) {
        Expr *t;
        f[k] = fix_coord(&s, f[k], x->dims[2 + k]);
        base[k] = ex_unary(L, UN_FLOOR, f[k]);
        t = fsub(L, f[k], base[k]);
        if (p->mode == SAMPLE_LINEAR) {
            w[k][0] = fsub(L, fc(L, s.ct, 1.0), t);
            w[k][1] = t;
        } else {
            w[k][0] = cubic(L, s.ct, fadd(L, t, fc(L, s.ct, 1.0)), 1);
            w[k][1] = cubic(L, s.ct, t, 0);
            w[k][2] = cubic(L, s.ct, fsub(L, fc(L, s.ct, 1.0), t), 0);
            w[k][3] = cubic(L, s.ct, fsub(L, fc(L, s.ct, 2.0), t), 1);
        }
    }
    c->body = interp(&s, 0, pt, base, (Expr *const (*)[4])w,
                     p->mode == SAMPLE_LINEAR ? 2 : 4);
    return 0;
}

/* ---- RoiAlign ---- */

int lower_RoiAlign(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *rois = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    DType ct = dtype_compute(x->dtype);
    const VisionParams *vp = node_vision(n);
    int half = vp->half_pixel, maxmode = vp->max_mode;
    double scale = vp->spatial_scale, off = half ? 0.5 : 0.0;
    int64_t oh = y->dims[2], ow = y->dims[3], sr = vp->sampling_ratio;
    int64_t gh = sr, gw = sr, H = x->dims[2], W = x->dims[3], N = x->dims[0];
    int xb = lower_buf_value(L, n->in[0]), rb = lower_buf_value(L, n->in[1]);
    int bb = lower_buf_value(L, n->in[2]);
    Compute *c;
    IterVar *iy, *ix;
    Expr *r, *ri[2], *co[4], *b, *rw, *rh, *bw, *bh, *sy, *sx, *outside, *yl, *xl, *yh, *xh;
    Expr *ly, *lx, *hy, *hx, *p[4], *w[4], *idx[4];
    int k;
    if (sr <= 0) {
        /* constant rois (checked by inference): the largest grid any roi needs */
        const void *data = rois->data;
        int64_t i;
        gh = gw = 1;
        for (i = 0; i < rois->dims[0]; i++) {
            double v[4], rwd, rhd;
            int j;
            for (j = 0; j < 4; j++)
                v[j] = x->dtype == DT_FLOAT64 ? ((const double *)data)[i * 4 + j]
                                              : (double)((const float *)data)[i * 4 + j];
            rwd = (v[2] - v[0]) * scale;
            rhd = (v[3] - v[1]) * scale;
            if (!half) {
                rwd = rwd < 1 ? 1 : rwd;
                rhd = rhd < 1 ? 1 : rhd;
            }
            while (gh < 1024 && (double)gh * (double)oh < rhd)
                gh++;
            while (gw < 1024 && (double)gw * (double)ow < rwd)
                gw++;
        }
        if (x->dtype != DT_FLOAT32 && x->dtype != DT_FLOAT64)
            return diag_error(L->d, n, "sampling_ratio", "sampling_ratio 0 needs float rois");
        if (gh * gw > 1)
            return diag_error(L->d, n, "sampling_ratio", "sampling_ratio 0 with rois that need "
                              "an adaptive grid is not supported; give a positive "
                              "sampling_ratio");
    }
    c = lower_stage(L, "roialign", lower_buf_value(L, n->out[0]), 4, y->dims);
    iy = lower_raxis(L, c, gh);
    ix = lower_raxis(L, c, gw);
    r = ex_var(L, &c->axes[0]);
    ri[0] = r;
    for (k = 0; k < 4; k++) {
        ri[1] = ex_int(L, k);
        co[k] = fsub(L, fmul(L, ex_cast(L, ct, ex_load_nd(L, rb, 2, rois->dims, ri)),
                             fc(L, ct, scale)), fc(L, ct, off));
    }
    b = clampi(L, ex_cast(L, DT_INT64, ex_load(L, bb, r)), N - 1);
    rw = fsub(L, co[2], co[0]);
    rh = fsub(L, co[3], co[1]);
    if (!half) {
        rw = fmax_(L, rw, fc(L, ct, 1.0));
        rh = fmax_(L, rh, fc(L, ct, 1.0));
    }
    bw = fdiv(L, rw, fc(L, ct, (double)ow));
    bh = fdiv(L, rh, fc(L, ct, (double)oh));
    sy = fadd(L, fadd(L, co[1], fmul(L, ex_cast(L, ct, ex_var(L, &c->axes[2])), bh)),
              fdiv(L, fmul(L, fadd(L, ex_cast(L, ct, ex_var(L, iy)), fc(L, ct, 0.5)), bh),
                   fc(L, ct, (double)gh)));
    sx = fadd(L, fadd(L, co[0], fmul(L, ex_cast(L, ct, ex_var(L, &c->axes[3])), bw)),
              fdiv(L, fmul(L, fadd(L, ex_cast(L, ct, ex_var(L, ix)), fc(L, ct, 0.5)), bw),
                   fc(L, ct, (double)gw)));
    outside = ex_binary(L, BIN_OR,
                        ex_binary(L, BIN_OR, ex_binary(L, BIN_LT, sy, fc(L, ct, -1.0)),
                                  ex_binary(L, BIN_GT, sy, fc(L, ct, (double)H))),
                        ex_binary(L, BIN_OR, ex_binary(L, BIN_LT, sx, fc(L, ct, -1.0)),
                                  ex_binary(L, BIN_GT, sx, fc(L, ct, (double)W))));
    sy = clampf(L, sy, 0.0, (double)H);
    sx = clampf(L, sx, 0.0, (double)W);
    yl = ex_unary(L, UN_FLOOR, sy);
    xl = ex_unary(L, UN_FLOOR, sx);
    ly = ex_select(L, ex_binary(L, BIN_GE, yl, fc(L, ct, (double)(H - 1))), fc(L, ct, 0.0),
                   fsub(L, sy, yl));
    lx = ex_select(L, ex_binary(L, BIN_GE, xl, fc(L, ct, (double)(W - 1))), fc(L, ct, 0.0),
                   fsub(L, sx, xl));
    yl = fmin_(L, yl, fc(L, ct, (double)(H - 1)));
    xl = fmin_(L, xl, fc(L, ct, (double)(W - 1)));
    yh = fmin_(L, fadd(L, yl, fc(L, ct, 1.0)), fc(L, ct, (double)(H - 1)));
    xh = fmin_(L, fadd(L, xl, fc(L, ct, 1.0)), fc(L, ct, (double)(W - 1)));
    hy = fsub(L, fc(L, ct, 1.0), ly);
    hx = fsub(L, fc(L, ct, 1.0), lx);
    idx[0] = b;
    idx[1] = ex_var(L, &c->axes[1]);
    for (k = 0; k < 4; k++) {
        idx[2] = ex_cast(L, DT_INT64, k < 2 ? yl : yh);
        idx[3] = ex_cast(L, DT_INT64, k % 2 ? xh : xl);
        p[k] = ex_cast(L, ct, ex_load_nd(L, xb, 4, x->dims, idx));
    }
    w[0] = fmul(L, hy, hx);
    w[1] = fmul(L, hy, lx);
    w[2] = fmul(L, ly, hx);
    w[3] = fmul(L, ly, lx);
    if (maxmode) {
        Expr *m = fmul(L, w[0], p[0]);
        for (k = 1; k < 4; k++)
            m = fmax_(L, m, fmul(L, w[k], p[k]));
        c->rop = RED_MAX;
        c->body = ex_select(L, outside, fc(L, ct, 0.0), m);
    } else {
        Expr *sum = fmul(L, w[0], p[0]);
        for (k = 1; k < 4; k++)
            sum = fadd(L, sum, fmul(L, w[k], p[k]));
        c->rop = RED_SUM;
        c->body = ex_select(L, outside, fc(L, ct, 0.0), sum);
        c->post = fdiv(L, ex_acc(L, ct), fc(L, ct, (double)(gh * gw)));
    }
    return 0;
}

/* ---- NonMaxSuppression ---- */

typedef struct Nms {
    Lower *L;
    DType ct;
    int bb, sb;                 /* boxes, scores */
    const int64_t *bd, *sd;     /* their dims */
    int center;                 /* center_point_box */
} Nms;

/* Corners (ymin, xmin, ymax, xmax) of box i of batch b. */
static void corners(const Nms *m, Expr *b, Expr *i, Expr **out)
{
    Lower *L = m->L;
    Expr *idx[3], *v[4];
    int k;
    idx[0] = b;
    idx[1] = i;
    for (k = 0; k < 4; k++) {
        idx[2] = ex_int(L, k);
        v[k] = ex_cast(L, m->ct, ex_load_nd(L, m->bb, 3, m->bd, idx));
    }
    if (m->center) {
        Expr *hw = fmul(L, v[2], fc(L, m->ct, 0.5)), *hh = fmul(L, v[3], fc(L, m->ct, 0.5));
        out[0] = fsub(L, v[1], hh);
        out[1] = fsub(L, v[0], hw);
        out[2] = fadd(L, v[1], hh);
        out[3] = fadd(L, v[0], hw);
    } else {
        out[0] = fmin_(L, v[0], v[2]);
        out[1] = fmin_(L, v[1], v[3]);
        out[2] = fmax_(L, v[0], v[2]);
        out[3] = fmax_(L, v[1], v[3]);
    }
}

/* IoU of boxes i and j of batch b > thr (false when an area is empty). */
static Expr *overlaps(const Nms *m, Expr *b, Expr *i, Expr *j, Expr *thr)
{
    Lower *L = m->L;
    Expr *p[4], *q[4], *ai, *aj, *ih, *iw, *inter, *uni, *zero = fc(L, m->ct, 0.0);
    corners(m, b, i, p);
    corners(m, b, j, q);
    ai = fmul(L, fsub(L, p[2], p[0]), fsub(L, p[3], p[1]));
    aj = fmul(L, fsub(L, q[2], q[0]), fsub(L, q[3], q[1]));
    ih = fmax_(L, fsub(L, fmin_(L, p[2], q[2]), fmax_(L, p[0], q[0])), zero);
    iw = fmax_(L, fsub(L, fmin_(L, p[3], q[3]), fmax_(L, p[1], q[1])), zero);
    inter = fmul(L, ih, iw);
    uni = fsub(L, fadd(L, ai, aj), inter);
    return ex_and(L, ex_and(L, ex_binary(L, BIN_GT, ai, zero), ex_binary(L, BIN_GT, aj, zero)),
                  ex_and(L, ex_binary(L, BIN_GT, uni, zero),
                         ex_binary(L, BIN_GT, fdiv(L, inter, fmax_(L, uni, fc(L, m->ct, 1e-30))),
                                   thr)));
}

static Expr *score_at(const Nms *m, Expr *b, Expr *c, Expr *i)
{
    Expr *idx[3];
    idx[0] = b;
    idx[1] = c;
    idx[2] = i;
    return ex_cast(m->L, m->ct, ex_load_nd(m->L, m->sb, 3, m->sd, idx));
}

int lower_NonMaxSuppression(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *bx = &g->values[n->in[0]], *sc = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    int64_t B = bx->dims[0], S = bx->dims[1], C = sc->dims[1], T = B * C * S, k;
    int64_t d3[3];
    int rankb, ordb, keepb, posb;
    Nms m;
    Compute *c;
    IterVar *j;
    Expr *b, *cl, *i, *jj, *maxout, *iou_thr, *score_thr = NULL, *idx[3];
    memset(&m, 0, sizeof m);
    m.L = L;
    m.ct = dtype_compute(bx->dtype);
    m.bb = lower_buf_value(L, n->in[0]);
    m.sb = lower_buf_value(L, n->in[1]);
    m.bd = bx->dims;
    m.sd = sc->dims;
    m.center = node_vision(n)->center_point_box;
    d3[0] = B;
    d3[1] = C;
    d3[2] = S;
    maxout = n->n_in > 2 && n->in[2] >= 0
                 ? ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, n->in[2]), ex_int(L, 0)))
                 : ex_int(L, 0);
    iou_thr = n->n_in > 3 && n->in[3] >= 0
                  ? ex_cast(L, m.ct, ex_load(L, lower_buf_value(L, n->in[3]), ex_int(L, 0)))
                  : fc(L, m.ct, 0.0);
    if (n->n_in > 4 && n->in[4] >= 0)
        score_thr = ex_cast(L, m.ct, ex_load(L, lower_buf_value(L, n->in[4]), ex_int(L, 0)));
    if (T <= 0)
        return diag_error(L->d, n, "boxes", "no boxes");
    rankb = lower_buf_temp(L, "rank", DT_INT64, T);
    ordb = lower_buf_temp(L, "order", DT_INT64, T);
    keepb = lower_buf_temp(L, "keep", DT_INT64, T);
    posb = lower_buf_temp(L, "row", DT_INT64, T);

    /* rank of candidate i: candidates with a higher score, or an equal
     * score and a lower index */
    c = lower_stage(L, "rank", rankb, 3, d3);
    j = lower_raxis(L, c, S);
    b = ex_var(L, &c->axes[0]);
    cl = ex_var(L, &c->axes[1]);
    i = ex_var(L, &c->axes[2]);
    jj = ex_var(L, j);
    {
        Expr *si = score_at(&m, b, cl, i), *sj = score_at(&m, b, cl, jj);
        Expr *beats = ex_binary(L, BIN_OR, ex_binary(L, BIN_GT, sj, si),
                                ex_and(L, ex_binary(L, BIN_EQ, sj, si), ex_lt(L, jj, i)));
        c->rop = RED_SUM;
        c->body = ex_select(L, beats, ex_int(L, 1), ex_int(L, 0));
    }

    /* order[r]: the candidate whose rank is r */
    c = lower_stage(L, "order", ordb, 3, d3);
    j = lower_raxis(L, c, S);
    idx[0] = ex_var(L, &c->axes[0]);
    idx[1] = ex_var(L, &c->axes[1]);
    idx[2] = ex_var(L, j);
    c->rop = RED_SUM;
    c->body = ex_select(L, ex_binary(L, BIN_EQ, ex_load_nd(L, rankb, 3, d3, idx),
                                     ex_var(L, &c->axes[2])),
                        ex_var(L, j), ex_int(L, 0));

    /* keep[k], rank by rank: the sum over kept j < k counts 1 each, S + 1
     * when j overlaps k too much, so acc <= S means "not suppressed" and
     * acc is then the number kept before k */
    for (k = 0; k < S; k++) {
        Expr *ok, *ordk, *ordj, *keptj, *ov;
        c = lower_stage(L, "keep", keepb, 2, d3);
        j = lower_raxis(L, c, S);
        b = ex_var(L, &c->axes[0]);
        cl = ex_var(L, &c->axes[1]);
        idx[0] = b;
        idx[1] = cl;
        idx[2] = ex_int(L, k);
        ordk = clampi(L, ex_load_nd(L, ordb, 3, d3, idx), S - 1);
        c->out_index = ex_offset(L, 3, d3, idx);
        idx[2] = clampi(L, ex_var(L, j), k > 0 ? k - 1 : 0);
        ordj = clampi(L, ex_load_nd(L, ordb, 3, d3, idx), S - 1);
        keptj = ex_and(L, ex_lt(L, ex_var(L, j), ex_int(L, k)),
                       ex_binary(L, BIN_NE, ex_load_nd(L, keepb, 3, d3, idx), ex_int(L, 0)));
        ov = overlaps(&m, b, ordk, ordj, iou_thr);
        c->rop = RED_SUM;
        c->body = ex_select(L, keptj, ex_select(L, ov, ex_int(L, S + 1), ex_int(L, 1)),
                            ex_int(L, 0));
        ok = ex_and(L, ex_lt(L, ex_acc(L, DT_INT64), maxout),
                    ex_binary(L, BIN_LE, ex_acc(L, DT_INT64), ex_int(L, S)));
        if (score_thr)
            ok = ex_and(L, ok, ex_binary(L, BIN_GT, score_at(&m, b, cl, ordk), score_thr));
        c->post = ex_select(L, ok, ex_int(L, 1), ex_int(L, 0));
    }

    /* row[f]: kept candidates before flat position f (b, c, k order) */
    c = lower_stage(L, "row", posb, 1, &T);
    j = lower_raxis(L, c, T);
    c->rop = RED_SUM;
    c->body = ex_select(L, ex_lt(L, ex_var(L, j), ex_var(L, &c->axes[0])),
                        ex_load(L, keepb, ex_var(L, j)), ex_int(L, 0));

    /* output row q, column col: the kept candidate whose row is q */
    c = lower_stage(L, "select", lower_buf_value(L, n->out[0]), 2, y->dims);
    j = lower_raxis(L, c, T);
    {
        Expr *f = ex_var(L, j), *col = ex_var(L, &c->axes[1]), *val, *hit;
        Expr *fb = ex_binary(L, BIN_DIV, f, ex_int(L, C * S));
        Expr *fc_ = ex_binary(L, BIN_MOD, ex_binary(L, BIN_DIV, f, ex_int(L, S)), ex_int(L, C));
        val = ex_select(L, ex_binary(L, BIN_EQ, col, ex_int(L, 0)), fb,
                        ex_select(L, ex_binary(L, BIN_EQ, col, ex_int(L, 1)), fc_,
                                  ex_load(L, ordb, f)));
        hit = ex_and(L, ex_binary(L, BIN_NE, ex_load(L, keepb, f), ex_int(L, 0)),
                     ex_binary(L, BIN_EQ, ex_load(L, posb, f), ex_var(L, &c->axes[0])));
        c->rop = RED_SUM;
        c->body = ex_select(L, hit, val, ex_int(L, 0));
    }
    return 0;
}

/* ---- AffineGrid ---- */

int lower_AffineGrid(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *th = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int nsp = y->rank - 2, tb = lower_buf_value(L, n->in[0]), j;
    int ac = attr_int(n, "align_corners", 0, L->d) != 0;
    Compute *c = lower_stage(L, "affinegrid", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    Expr *ti[3], *sum;
    ti[0] = ex_var(L, &c->axes[0]);
    ti[1] = ex_var(L, &c->axes[nsp + 1]);
    ti[2] = ex_int(L, nsp);
    sum = ex_cast(L, DT_FLOAT64, ex_load_nd(L, tb, 3, th->dims, ti));
    /* coordinate j (x, y, z) is spatial output axis nsp - j */
    for (j = 0; j < nsp; j++) {
        const IterVar *o = &c->axes[nsp - j];
        int64_t S = y->dims[nsp - j];
        Expr *iv = ex_cast(L, DT_FLOAT64, ex_var(L, o)), *b;
        if (ac && S == 1)
            b = ex_float(L, DT_FLOAT64, -1.0);
        else if (ac)
            b = fadd(L, fc(L, DT_FLOAT64, -1.0), fmul(L, iv, fc(L, DT_FLOAT64,
                                                                2.0 / (double)(S - 1))));
        else
            b = fadd(L, fc(L, DT_FLOAT64, -1.0 + 1.0 / (double)S),
                     fmul(L, iv, fc(L, DT_FLOAT64, 2.0 / (double)S)));
        ti[2] = ex_int(L, j);
        sum = fadd(L, sum, fmul(L, ex_cast(L, DT_FLOAT64, ex_load_nd(L, tb, 3, th->dims, ti)), b));
    }
    c->body = ex_cast(L, dtype_compute(y->dtype), sum);
    return 0;
}

/* ---- CenterCropPad ---- */

int lower_CenterCropPad(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    Compute *c = lower_stage(L, "centercroppad", lower_buf_value(L, n->out[0]), y->rank,
                             y->dims);
    Expr *xi[TVMCC_MAX_RANK], *in = NULL, *v;
    int i;
    for (i = 0; i < y->rank; i++) {
        int64_t xd = x->dims[i], yd = y->dims[i];
        Expr *o = ex_var(L, &c->axes[i]);
        if (yd <= xd) {
            xi[i] = (xd - yd) / 2 ? ex_add(L, o, ex_int(L, (xd - yd) / 2)) : o;
        } else {
            Expr *q = ex_sub(L, o, ex_int(L, (yd - xd) / 2));
            Expr *ok = ex_and(L, ex_binary(L, BIN_GE, q, ex_int(L, 0)), ex_lt(L, q, ex_int(L, xd)));
            in = in ? ex_and(L, in, ok) : ok;
            xi[i] = clampi(L, q, xd - 1);
        }
    }
    v = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, xi);
    if (in) {
        DType t = x->dtype;
        v = ex_select(L, in, v, dtype_is_float(t) ? ex_float(L, t, 0.0) : ex_const_int(L, t, 0));
    }
    c->body = v;
    return 0;
}

/* ---- Col2Im ---- */

int lower_Col2Im(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    const ConvWindow *w = node_window(n);
    int nsp = w->nsp, k, bb = -1;
    int64_t K = x->dims[1] / y->dims[1];
    Compute *c = lower_stage(L, "col2im", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    IterVar *r = lower_raxis(L, c, K);
    Expr *b[TVMCC_MAX_SPATIAL], *inner = ex_int(L, 1), *ok = NULL, *col = ex_int(L, 0);
    Expr *ncols = ex_int(L, 1), *xi[3], *v;
    const int64_t *bv = NULL;
    DType ct = dtype_compute(y->dtype);
    if (value_const_ints(g, n->in[2], &bv) != nsp)
        bb = lower_buf_value(L, n->in[2]);
    for (k = 0; k < nsp; k++)
        b[k] = bb < 0 ? ex_int(L, bv[k])
                      : ex_cast(L, DT_INT64, ex_load(L, bb, ex_int(L, k)));
    /* kernel position k_d of reduce index r (row-major over block_shape),
     * the column l_d it comes from, its validity; columns row-major */
    for (k = nsp - 1; k >= 0; k--) {
        int64_t st = w->strides[k], dil = w->dilations[k];
        int64_t span = y->dims[2 + k] + w->pad_begin[k] + w->pad_end[k];
        Expr *kd = ex_binary(L, BIN_MOD, ex_binary(L, BIN_DIV, ex_var(L, r), inner), b[k]);
        Expr *q = ex_sub(L, ex_add(L, ex_var(L, &c->axes[2 + k]), ex_int(L, w->pad_begin[k])),
                         ex_mul(L, kd, ex_int(L, dil)));
        /* columns along d: (span - dil * (b - 1) - 1) / stride + 1 */
        Expr *nl = ex_add(L, ex_binary(L, BIN_DIV,
                                       ex_sub(L, ex_int(L, span - 1),
                                              ex_mul(L, ex_int(L, dil),
                                                     ex_sub(L, b[k], ex_int(L, 1)))),
                                       ex_int(L, st)),
                          ex_int(L, 1));
        Expr *ld = ex_binary(L, BIN_DIV, q, ex_int(L, st));
        Expr *good = ex_and(L, ex_binary(L, BIN_GE, q, ex_int(L, 0)), ex_lt(L, ld, nl));
        if (st > 1)
            good = ex_and(L, good, ex_binary(L, BIN_EQ, ex_binary(L, BIN_MOD, q, ex_int(L, st)),
                                             ex_int(L, 0)));
        ok = ok ? ex_and(L, ok, good) : good;
        col = ex_add(L, col, ex_mul(L, ld, ncols));
        ncols = ex_mul(L, ncols, nl);
        inner = ex_mul(L, inner, b[k]);
    }
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_add(L, ex_mul(L, ex_var(L, &c->axes[1]), ex_int(L, K)), ex_var(L, r));
    xi[2] = clampi(L, col, x->dims[2] - 1);
    v = ex_cast(L, ct, ex_load_nd(L, lower_buf_value(L, n->in[0]), 3, x->dims, xi));
    c->rop = RED_SUM;
    c->body = ex_select(L, ok, v, dtype_is_float(ct) ? fc(L, ct, 0.0) : ex_const_int(L, ct, 0));
    return 0;
}

/* ---- DeformConv ---- */

int lower_DeformConv(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *wv = &g->values[n->in[1]];
    const Value *ov = &g->values[n->in[2]], *y = &g->values[n->out[0]];
    const ConvWindow *w = node_window(n);
    int has_b = n->n_in > 3 && n->in[3] >= 0, has_m = n->n_in > 4 && n->in[4] >= 0, k;
    int64_t icpg = wv->dims[1], ocpg = y->dims[1] / w->group;
    int64_t icpo = x->dims[1] / w->offset_group, kk = w->kernel[0] * w->kernel[1];
    DType ct = dtype_compute(y->dtype);
    Compute *c = lower_stage(L, "deformconv", lower_buf_value(L, n->out[0]), 4, y->dims);
    IterVar *ri = lower_raxis(L, c, icpg), *rk[2];
    Expr *nn = ex_var(L, &c->axes[0]), *oc = ex_var(L, &c->axes[1]), *ic, *og, *kidx;
    Expr *pos[2], *base[2], *frac[2], *idx[4], *sum = NULL, *v;
    Sampler s;
    rk[0] = lower_raxis(L, c, w->kernel[0]);
    rk[1] = lower_raxis(L, c, w->kernel[1]);
    memset(&s, 0, sizeof s);
    s.L = L;
    s.ct = ct;
    s.xb = lower_buf_value(L, n->in[0]);
    s.xd = x->dims;
    s.nsp = 2;
    s.ac = 1;
    s.n = nn;
    /* the input channel: group of oc, then the reduce index */
    ic = ex_add(L, ex_mul(L, ex_binary(L, BIN_DIV, oc, ex_int(L, ocpg)), ex_int(L, icpg)),
                ex_var(L, ri));
    s.c = ic;
    og = ex_binary(L, BIN_DIV, ic, ex_int(L, icpo));
    kidx = ex_add(L, ex_mul(L, ex_var(L, rk[0]), ex_int(L, w->kernel[1])), ex_var(L, rk[1]));
    for (k = 0; k < 2; k++) {
        Expr *off;
        idx[0] = nn;
        idx[1] = ex_add(L, ex_mul(L, og, ex_int(L, 2 * kk)),
                        ex_add(L, ex_mul(L, kidx, ex_int(L, 2)), ex_int(L, k)));
        idx[2] = ex_var(L, &c->axes[2]);
        idx[3] = ex_var(L, &c->axes[3]);
        off = ex_cast(L, ct, ex_load_nd(L, lower_buf_value(L, n->in[2]), 4, ov->dims, idx));
        pos[k] = ex_add(L, ex_sub(L, ex_mul(L, ex_var(L, &c->axes[2 + k]),
                                            ex_int(L, w->strides[k])),
                                  ex_int(L, w->pad_begin[k])),
                        ex_mul(L, ex_var(L, rk[k]), ex_int(L, w->dilations[k])));
        pos[k] = fadd(L, ex_cast(L, ct, pos[k]), off);
        base[k] = ex_unary(L, UN_FLOOR, pos[k]);
        frac[k] = fsub(L, pos[k], base[k]);
    }
    {
        Expr *wt[2][2], *pt[2];
        int a, b;
        for (k = 0; k < 2; k++) {
            wt[k][0] = fsub(L, fc(L, ct, 1.0), frac[k]);
            wt[k][1] = frac[k];
        }
        for (a = 0; a < 2; a++) {
            Expr *row = NULL;
            pt[0] = fadd(L, base[0], fc(L, ct, (double)a));
            for (b = 0; b < 2; b++) {
                Expr *t;
                pt[1] = fadd(L, base[1], fc(L, ct, (double)b));
                t = fmul(L, wt[1][b], pixel(&s, pt));
                row = row ? fadd(L, row, t) : t;
            }
            row = fmul(L, wt[0][a], row);
            sum = sum ? fadd(L, sum, row) : row;
        }
    }
    idx[0] = oc;
    idx[1] = ex_var(L, ri);
    idx[2] = ex_var(L, rk[0]);
    idx[3] = ex_var(L, rk[1]);
    v = fmul(L, sum, ex_cast(L, ct, ex_load_nd(L, lower_buf_value(L, n->in[1]), 4, wv->dims,
                                               idx)));
    if (has_m) {
        const Value *mv = &g->values[n->in[4]];
        idx[0] = nn;
        idx[1] = ex_add(L, ex_mul(L, og, ex_int(L, kk)), kidx);
        idx[2] = ex_var(L, &c->axes[2]);
        idx[3] = ex_var(L, &c->axes[3]);
        v = fmul(L, v, ex_cast(L, ct, ex_load_nd(L, lower_buf_value(L, n->in[4]), 4, mv->dims,
                                                 idx)));
    }
    c->rop = RED_SUM;
    c->body = v;
    if (has_b)
        c->post = fadd(L, ex_acc(L, ct),
                       ex_cast(L, ct, ex_load(L, lower_buf_value(L, n->in[3]), oc)));
    L->k->macs += value_numel(y) * icpg * kk;
    return 0;
}
