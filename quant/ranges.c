/*
 * Calibration statistics and range selection: see ranges.h for the
 * histogram layout and the exact definition of each method.
 *
 * All the histogram methods read the bins as a piecewise uniform density.
 * Its cumulative count F (a prefix sum of the bins, linear inside a bin)
 * gives the percentiles and, as F(t) - F(-t), the histogram of |x| the
 * entropy method needs; the expected quantization error integrates the
 * error of each value over each bin in closed form.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"

void range_init(RangeStats *r)
{
    memset(r, 0, sizeof *r);
    r->bins = NULL;
}

void range_add(RangeStats *r, const float *x, int64_t n)
{
    double mn = r->count ? r->min : HUGE_VAL, mx = r->count ? r->max : -HUGE_VAL;
    double sum = r->sum, sumsq = r->sumsq;
    int64_t i, cnt = r->count, bad = r->nonfinite;
    for (i = 0; i < n; i++) {
        double v = x[i];
        if (!isfinite(v)) {
            bad++;
            continue;
        }
        if (v < mn)
            mn = v;
        if (v > mx)
            mx = v;
        sum += v;
        sumsq += v * v;
        cnt++;
    }
    r->count = cnt;
    r->nonfinite = bad;
    r->sum = sum;
    r->sumsq = sumsq;
    if (cnt) {
        r->min = mn;
        r->max = mx;
    }
}

/* [min(min, 0), max(max, 0)] of the data, [0, 0] when there is none */
static void data_span(const RangeStats *r, double *lo, double *hi)
{
    *lo = r->count && r->min < 0 ? r->min : 0;
    *hi = r->count && r->max > 0 ? r->max : 0;
}

int range_hist_begin(RangeStats *r, Arena *a, int nbins)
{
    double lo0, hi0;
    if (nbins <= 0)
        nbins = RANGE_DEFAULT_BINS;
    r->bins = arena_array(a, (size_t)nbins, sizeof *r->bins);
    if (!r->bins)
        return -1;
    r->nbins = nbins;
    r->hist_count = 0;
    data_span(r, &lo0, &hi0);
    if (!(hi0 > lo0)) {
        r->lo = 0; /* empty or all zeros: any span will do */
        r->hi = 1;
    } else if (lo0 < 0 && hi0 > 0 && nbins >= 2) {
        /* 0 on an edge: k bins for [lo0, 0], nbins - k for [0, hi0], the
         * k of the two next to the proportional split giving the least width */
        double f = (double)nbins * -lo0 / (hi0 - lo0), w = HUGE_VAL;
        int cand[2], i, k = 1;
        cand[0] = (int)floor(f);
        cand[1] = (int)ceil(f);
        for (i = 0; i < 2; i++) {
            int c = cand[i] < 1 ? 1 : cand[i] > nbins - 1 ? nbins - 1 : cand[i];
            double wl = -lo0 / c, wh = hi0 / (nbins - c), wc = wl > wh ? wl : wh;
            if (wc < w) {
                w = wc;
                k = c;
            }
        }
        r->lo = -k * w;
        r->hi = (nbins - k) * w;
    } else {
        r->lo = lo0;
        r->hi = hi0;
    }
    return 0;
}

void range_hist_add(RangeStats *r, const float *x, int64_t n)
{
    double inv, lo = r->lo;
    int64_t i, nb = r->nbins, added = 0;
    if (!nb)
        return;
    inv = (double)nb / (r->hi - r->lo);
    for (i = 0; i < n; i++) {
        double v = x[i], f;
        int64_t k;
        if (!isfinite(v))
            continue;
        f = (v - lo) * inv;
        k = f < 0 ? 0 : f >= (double)nb ? nb - 1 : (int64_t)f;
        r->bins[k]++;
        added++;
    }
    r->hist_count += added;
}

void range_qparams(double rmin, double rmax, QGrid g, float *scale, int32_t *zp)
{
    float lo = (float)rmin, hi = (float)rmax, d, s, t;
    double z;
    if (!(lo < 0))
        lo = 0;
    if (!(hi > 0))
        hi = 0;
    if (g.symmetric) {
        float m = -lo > hi ? -lo : hi;
        lo = -m;
        hi = m;
    }
    d = hi - lo;
    if (d == 0) {
        *scale = 1.0f;
        *zp = 0;
        return;
    }
    s = d / (float)(g.qmax - g.qmin);
    if (!isfinite(s))
        s = (float)(((double)hi - (double)lo) / (double)(g.qmax - g.qmin));
    if (!isfinite(s))
        s = FLT_MAX;
    if (s == 0) {
        *scale = 1.0f;
        *zp = 0;
        return;
    }
    *scale = s;
    if (g.symmetric) {
        *zp = 0;
        return;
    }
    t = (float)g.qmin - lo / s;
    z = nearbyint((double)t); /* round half to even, as numpy's round */
    *zp = (int32_t)(z < g.qmin ? g.qmin : z > g.qmax ? g.qmax : z);
}

/* ------------------------------------------------------- the density */

/* The histogram as a piecewise uniform density: cum[i] = values in bins
 * below i (nbins + 1 entries). */
typedef struct Density {
    const RangeStats *r;
    double w;     /* bin width */
    double total; /* cum[nbins] */
    double *cum;
} Density;

static int density_init(Density *d, const RangeStats *r)
{
    int i;
    d->r = r;
    d->w = (r->hi - r->lo) / r->nbins;
    d->cum = malloc(((size_t)r->nbins + 1) * sizeof *d->cum);
    if (!d->cum)
        return -1;
    d->cum[0] = 0;
    for (i = 0; i < r->nbins; i++)
        d->cum[i + 1] = d->cum[i] + (double)r->bins[i];
    d->total = d->cum[r->nbins];
    return 0;
}

/* values below x */
static double cdf(const Density *d, double x)
{
    const RangeStats *r = d->r;
    double f = (x - r->lo) / d->w;
    int i;
    if (!(f > 0))
        return 0;
    if (f >= r->nbins)
        return d->total;
    i = (int)f;
    return d->cum[i] + (f - i) * (double)r->bins[i];
}

/* the least x with cdf(x) >= q (0 <= q <= total) */
static double quantile(const Density *d, double q)
{
    const RangeStats *r = d->r;
    int lo = 0, hi = r->nbins, mid;
    double c;
    if (q <= 0)
        return r->lo;
    if (q >= d->total)
        q = d->total;
    /* the first bin i with cum[i + 1] >= q */
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (d->cum[mid + 1] >= q)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (lo >= r->nbins)
        return r->hi;
    c = (double)r->bins[lo];
    return r->lo + (lo + (c > 0 ? (q - d->cum[lo]) / c : 1.0)) * d->w;
}

/* values with |x| below t */
static double mag_cdf(const Density *d, double t)
{
    return cdf(d, t) - cdf(d, -t);
}

/* the least t in [0, a] with mag_cdf(t) >= q, by bisection to the last bit */
static double mag_quantile(const Density *d, double q, double a)
{
    double lo = 0, hi = a;
    int it;
    if (mag_cdf(d, a) < q)
        return a;
    for (it = 0; it < 200; it++) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi)
            break;
        if (mag_cdf(d, mid) >= q)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* ------------------------------------------------------------ percentile */

static void percentile(const Density *d, double p, QGrid g, double *rmin, double *rmax)
{
    const RangeStats *r = d->r;
    double lo0, hi0, n = d->total, keep = p / 100;
    data_span(r, &lo0, &hi0);
    if (g.symmetric) {
        double a = -lo0 > hi0 ? -lo0 : hi0, t = mag_quantile(d, keep * n, a);
        *rmin = -t < lo0 ? lo0 : -t;
        *rmax = t > hi0 ? hi0 : t;
        return;
    }
    if (r->min < 0 && r->max > 0) {
        *rmin = quantile(d, (1 - keep) / 2 * n);
        *rmax = quantile(d, (1 + keep) / 2 * n);
    } else if (r->min >= 0) {
        *rmin = 0;
        *rmax = quantile(d, keep * n);
    } else {
        *rmin = quantile(d, (1 - keep) * n);
        *rmax = 0;
    }
    /* widen to 0, never past the data */
    *rmin = *rmin > 0 ? 0 : *rmin < lo0 ? lo0 : *rmin;
    *rmax = *rmax < 0 ? 0 : *rmax > hi0 ? hi0 : *rmax;
}

/* ------------------------------------------------------------------- mse */

/* The grid a range really gets: levels (k - zp) s for k in [qmin, qmax]. */
typedef struct Levels {
    double s, gmin, gmax, inside; /* inside: integral of the error over [gmin, gmax] */
} Levels;

static void levels_of(Levels *l, QGrid g, double rmin, double rmax)
{
    float s;
    int32_t zp;
    range_qparams(rmin, rmax, g, &s, &zp);
    l->s = s;
    l->gmin = (double)(g.qmin - zp) * l->s;
    l->gmax = (double)(g.qmax - zp) * l->s;
    l->inside = l->s * l->s * l->s * (double)(g.qmax - g.qmin) / 12;
}

/* Integral from gmin to x of the squared error of quantize-dequantize:
 * below the grid (x - gmin)^2, above it (x - gmax)^2, inside the
 * rounding sawtooth, whose integral from gmin over u = (x - gmin) / s
 * steps is s^3 (k / 12 + r^3 / 3) with k = the nearest level, r = u - k. */
static double err_integral(const Levels *l, double x)
{
    double u, k, f;
    if (x <= l->gmin) {
        f = l->gmin - x;
        return -f * f * f / 3;
    }
    if (x >= l->gmax) {
        f = x - l->gmax;
        return l->inside + f * f * f / 3;
    }
    u = (x - l->gmin) / l->s;
    k = floor(u + 0.5);
    f = u - k;
    return l->s * l->s * l->s * (k / 12 + f * f * f / 3);
}

/* total squared error of the histogrammed values on the grid of [rmin, rmax] */
static double sq_error(const RangeStats *r, QGrid g, double rmin, double rmax)
{
    Levels l;
    double w = (r->hi - r->lo) / r->nbins, e = 0, fb = 0;
    int i, last = -2;
    levels_of(&l, g, rmin, rmax);
    for (i = 0; i < r->nbins; i++) {
        double c = (double)r->bins[i], fa;
        if (!r->bins[i])
            continue;
        fa = last == i - 1 ? fb : err_integral(&l, r->lo + i * w);
        fb = err_integral(&l, r->lo + (i + 1) * w);
        last = i;
        e += c * (fb - fa) / w;
    }
    return e;
}

double range_expected_mse(const RangeStats *r, QGrid g, double rmin, double rmax)
{
    if (!r->nbins || r->hist_count <= 0)
        return -1;
    return sq_error(r, g, rmin, rmax) / (double)r->hist_count;
}

#define MSE_COARSE 177   /* t = 2^(-k/16), k < MSE_COARSE: down to 1/2048 */
#define MSE_MAX_EVALS 600

typedef struct MseSearch {
    const RangeStats *r;
    QGrid g;
    double lo0, hi0, a0; /* data span; a0 the larger magnitude */
    int evals;
} MseSearch;

static void mse_range(const MseSearch *m, const double *p, double *rmin, double *rmax)
{
    if (m->g.symmetric) {
        *rmin = -p[0] * m->a0;
        *rmax = p[0] * m->a0;
    } else {
        *rmin = p[0] * m->lo0;
        *rmax = p[1] * m->hi0;
    }
}

static double mse_eval(MseSearch *m, const double *p)
{
    double a, b;
    mse_range(m, p, &a, &b);
    m->evals++;
    return sq_error(m->r, m->g, a, b);
}

static void mse(const RangeStats *r, QGrid g, double *rmin, double *rmax)
{
    MseSearch m;
    double p[2], best, step;
    int k, c, dir, active[2], improved;
    m.r = r;
    m.g = g;
    m.evals = 0;
    data_span(r, &m.lo0, &m.hi0);
    m.a0 = -m.lo0 > m.hi0 ? -m.lo0 : m.hi0;
    active[0] = g.symmetric || m.lo0 < 0;
    active[1] = !g.symmetric && m.hi0 > 0;
    /* coarse: both ends scaled alike */
    p[0] = p[1] = 1;
    best = mse_eval(&m, p);
    for (k = 1; k < MSE_COARSE; k++) {
        double q[2], e;
        q[0] = q[1] = exp2(-k / 16.0);
        e = mse_eval(&m, q);
        if (e < best) {
            best = e;
            p[0] = q[0];
            p[1] = q[1];
        }
    }
    /* fine: each end on its own, relative steps halving */
    step = exp2(1 / 16.0) - 1;
    while (step >= 1e-4 && m.evals < MSE_MAX_EVALS) {
        improved = 0;
        for (c = 0; c < 2; c++) {
            if (!active[c])
                continue;
            for (dir = 1; dir >= -1 && m.evals < MSE_MAX_EVALS; dir -= 2) {
                double q[2], e;
                q[0] = p[0];
                q[1] = p[1];
                q[c] = p[c] * (1 + dir * step);
                if (q[c] > 1)
                    q[c] = 1;
                if (q[c] == p[c])
                    continue;
                e = mse_eval(&m, q);
                if (e < best) {
                    best = e;
                    p[c] = q[c];
                    improved = 1;
                }
            }
        }
        if (!improved)
            step /= 2;
    }
    mse_range(&m, p, rmin, rmax);
    /* a symmetric grid's [-t A, t A] within the data: the same scale */
    *rmin = *rmin < m.lo0 ? m.lo0 : *rmin;
    *rmax = *rmax > m.hi0 ? m.hi0 : *rmax;
}

/* --------------------------------------------------------------- entropy */

#define KL_EPS 1e-4
#define KL_MAX_CLIPPED 0.01

static double xlogx(double x)
{
    return x > 0 ? x * log(x) : 0;
}

/* The magnitude histogram's n bins over [0, a]: |x| (both signs), x
 * (non-negative data) or -x (non-positive), from the density. */
static void magnitudes(const Density *d, int both, double a, double *mh)
{
    const RangeStats *r = d->r;
    int n = r->nbins, j;
    double prev = 0;
    for (j = 0; j < n; j++) {
        double t = a * (j + 1) / n, f;
        if (j == n - 1)
            f = d->total;
        else if (both)
            f = mag_cdf(d, t);
        else if (r->min >= 0)
            f = cdf(d, t);
        else
            f = d->total - cdf(d, -t);
        mh[j] = f > prev ? f - prev : 0;
        if (f > prev)
            prev = f;
    }
}

/* The candidate i (levels <= i <= n) with the least KL(P || Q) over the n
 * magnitude bins mh; -1 no memory. */
static int kl_best(const double *mh, int n, int64_t levels)
{
    double *cc, *cl, n_all, best = HUGE_VAL;
    int *cnz, i, j, best_i = n;
    cc = malloc(((size_t)n + 1) * 2 * sizeof *cc);
    cnz = malloc(((size_t)n + 1) * sizeof *cnz);
    if (!cc || !cnz) {
        free(cc);
        free(cnz);
        return -1;
    }
    cl = cc + n + 1; /* prefix sums of mh log mh */
    cc[0] = cl[0] = 0;
    cnz[0] = 0;
    for (j = 0; j < n; j++) {
        cc[j + 1] = cc[j] + mh[j];
        cl[j + 1] = cl[j] + xlogx(mh[j]);
        cnz[j + 1] = cnz[j] + (mh[j] > 0);
    }
    n_all = cc[n];
    for (i = (int)levels; i <= n; i++) {
        double outl = n_all - cc[i], sliced = cc[i], plogp, plogq = 0, kl, shrink;
        int64_t L = levels;
        int z;
        if (!(sliced > 0))
            continue;
        if (outl < 0)
            outl = 0;
        /* a threshold that clips more than 1% of the values is no
         * candidate: on data far from 0 (all of it in the upper part of
         * [0, max]) P and Q both collapse into the last bin there and
         * their divergence is near 0 */
        if (outl > KL_MAX_CLIPPED * n_all)
            continue;
        /* P: bins below i, the outliers added to bin i - 1 */
        plogp = (cl[i - 1] + xlogx(mh[i - 1] + outl)) / n_all - log(n_all);
        /* the last group has no sliced mass, only the outliers: q = eps there */
        z = outl > 0 && cc[i] == cc[(int)((L - 1) * i / L)];
        shrink = 1 - z * KL_EPS;
        /* Q is constant over a group's bins where P > 0 */
        for (j = 0; j < L; j++) {
            int s = (int)(j * (int64_t)i / L), e = (int)((j + 1) * (int64_t)i / L), nz;
            double qtot = cc[e] - cc[s], pmass = qtot;
            nz = cnz[e] - cnz[s];
            if (j == L - 1 && outl > 0) {
                pmass += outl;
                nz += mh[i - 1] == 0;
            }
            if (!(pmass > 0))
                continue;
            if (qtot > 0)
                plogq += pmass * log(qtot / (nz * sliced) * shrink);
            else
                plogq += pmass * log(KL_EPS);
        }
        kl = plogp - plogq / n_all;
        if (kl < best) {
            best = kl;
            best_i = i;
        }
    }
    free(cc);
    free(cnz);
    return best_i;
}

/* Asymmetric grids and data of both signs: the candidates are [lo s, hi s]
 * on the signed histogram for s from 1 down in 256 steps, with all the
 * grid's levels: P the kept bins with the values outside added to the end
 * bins, Q the kept bins (without those) merged into `levels` groups, each
 * group's count spread over its non-empty bins; the least KL(P || Q). The
 * |x| form would give each side half the levels, which on skewed data (a
 * LeakyRelu's output: a short negative side) clips the long side hard. */
static int entropy_scaled(const RangeStats *r, QGrid g, double *rmin, double *rmax)
{
    int n = r->nbins, levels = g.qmax - g.qmin + 1, si, k;
    double w = (r->hi - r->lo) / n, z = -r->lo / w, best = HUGE_VAL, total = 0;
    double *p = malloc(3 * (size_t)n * sizeof *p), *q, *raw;
    if (!p)
        return -1;
    q = p + n;
    raw = q + n;
    for (k = 0; k < n; k++)
        total += (double)r->bins[k];
    for (si = 256; si >= 1; si--) {
        double s = si / 256.0, below = 0, above = 0, tp = 0, tq = 0, kl = 0;
        int ia = (int)floor(z * (1 - s) + 0.5), ib = (int)floor(z + s * (n - z) + 0.5), cnt, j;
        if (ia < 0)
            ia = 0;
        if (ib > n)
            ib = n;
        cnt = ib - ia;
        if (cnt < levels)
            break;
        for (k = 0; k < ia; k++)
            below += (double)r->bins[k];
        for (k = ib; k < n; k++)
            above += (double)r->bins[k];
        if (below + above > KL_MAX_CLIPPED * total)
            break; /* smaller s clips more still */
        for (k = 0; k < cnt; k++)
            p[k] = raw[k] = (double)r->bins[ia + k];
        p[0] += below;
        p[cnt - 1] += above;
        for (j = 0; j < levels; j++) {
            int a = (int)((int64_t)j * cnt / levels), e = (int)((int64_t)(j + 1) * cnt / levels);
            int nz = 0;
            double sum = 0;
            for (k = a; k < e; k++) {
                sum += raw[k];
                nz += raw[k] > 0;
            }
            for (k = a; k < e; k++)
                q[k] = raw[k] > 0 ? sum / nz : 0;
        }
        for (k = 0; k < cnt; k++) {
            tp += p[k];
            tq += q[k];
        }
        if (!(tp > 0) || !(tq > 0))
            continue;
        for (k = 0; k < cnt; k++) {
            double pk = p[k] / tp, qk = q[k] / tq;
            if (pk <= 0)
                continue;
            kl += pk * log(pk / (qk > KL_EPS ? qk : KL_EPS));
        }
        if (kl < best) {
            best = kl;
            *rmin = r->lo + ia * w;
            *rmax = r->lo + ib * w;
        }
    }
    free(p);
    if (*rmin > 0)
        *rmin = 0;
    if (*rmax < 0)
        *rmax = 0;
    return 0;
}

static int entropy(const Density *d, QGrid g, double *rmin, double *rmax)
{
    const RangeStats *r = d->r;
    int n = r->nbins, both = r->min < 0 && r->max > 0, best_i = n;
    int64_t levels = (int64_t)g.qmax - g.qmin + 1;
    double lo0, hi0, a, t;
    data_span(r, &lo0, &hi0);
    if (both && !g.symmetric && levels < n)
        return entropy_scaled(r, g, rmin, rmax);
    if (both || g.symmetric)
        levels /= 2;
    a = both ? (-lo0 > hi0 ? -lo0 : hi0) : r->min >= 0 ? hi0 : -lo0;
    /* a grid as fine as the histogram or finer: nothing to clip */
    if (levels < n) {
        double *mh = malloc((size_t)n * sizeof *mh);
        if (!mh)
            return -1;
        magnitudes(d, both, a, mh);
        best_i = kl_best(mh, n, levels);
        free(mh);
        if (best_i < 0)
            return -1;
    }
    t = a * best_i / n;
    if (both) {
        *rmin = -t < lo0 ? lo0 : -t;
        *rmax = t > hi0 ? hi0 : t;
    } else if (r->min >= 0) {
        *rmin = 0;
        *rmax = t;
    } else {
        *rmin = -t;
        *rmax = 0;
    }
    return 0;
}

/* ------------------------------------------------------------ the choice */

int range_grid(DType t, QGrid *g)
{
    g->symmetric = t == DT_INT16;
    switch (t) {
    case DT_INT8: g->qmin = -128; g->qmax = 127; return 0;
    case DT_UINT8: g->qmin = 0; g->qmax = 255; return 0;
    case DT_INT16: g->qmin = -32768; g->qmax = 32767; return 0;
    default: return -1;
    }
}

int range_choose(const RangeStats *r, RangeMethod m, double pct, QGrid g, double *rmin,
                 double *rmax)
{
    Density d;
    int rc = 0;
    if (m != RANGE_MINMAX && m != RANGE_PERCENTILE && m != RANGE_MSE && m != RANGE_ENTROPY)
        return -1;
    if (m == RANGE_PERCENTILE && !(pct > 0 && pct <= 100))
        return -1;
    data_span(r, rmin, rmax);
    if (m == RANGE_MINMAX || r->count == 0)
        return 0;
    if (!r->nbins)
        return -1;
    if (r->min == r->max || r->hist_count <= 0)
        return 0;
    if (m == RANGE_MSE) {
        mse(r, g, rmin, rmax);
        return 0;
    }
    if (density_init(&d, r))
        return -1;
    if (m == RANGE_PERCENTILE)
        percentile(&d, pct, g, rmin, rmax);
    else
        rc = entropy(&d, g, rmin, rmax);
    free(d.cum);
    return rc;
}

static const char *const method_names[] = {"minmax", "percentile", "mse", "entropy"};

const char *range_method_name(RangeMethod m)
{
    return m >= RANGE_MINMAX && m <= RANGE_ENTROPY ? method_names[m] : "?";
}

int range_method_parse(const char *s, RangeMethod *m)
{
    int i;
    for (i = 0; i < 4; i++)
        if (!strcmp(s, method_names[i])) {
            *m = (RangeMethod)i;
            return 0;
        }
    return -1;
}
