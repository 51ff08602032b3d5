/*
 * Calibration statistics and range selection (ranges.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"

void range_init(RangeStats *r)
{
    memset(r, 0, sizeof *r);
}

void range_add(RangeStats *r, const float *x, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        double v = x[i];
        if (!isfinite(v)) {
            r->nonfinite++;
            continue;
        }
        if (r->count == 0 || v < r->min)
            r->min = v;
        if (r->count == 0 || v > r->max)
            r->max = v;
        r->sum += v;
        r->sumsq += v * v;
        r->count++;
    }
}

int range_hist_begin(RangeStats *r, Arena *a, int nbins)
{
    if (nbins < 1)
        nbins = 1;
    r->bins = arena_array(a, (size_t)nbins, sizeof *r->bins);
    if (!r->bins)
        return -1;
    memset(r->bins, 0, (size_t)nbins * sizeof *r->bins);
    r->nbins = nbins;
    r->lo = r->count && r->min < 0 ? r->min : 0;
    r->hi = r->count && r->max > 0 ? r->max : 0;
    if (!(r->hi > r->lo))
        r->hi = r->lo + 1; /* nothing but zeros: any span will do */
    r->hist_count = 0;
    return 0;
}

void range_hist_add(RangeStats *r, const float *x, int64_t n)
{
    double scale;
    int64_t i;
    if (!r->nbins)
        return;
    scale = (double)r->nbins / (r->hi - r->lo);
    for (i = 0; i < n; i++) {
        double v = x[i], f;
        int64_t k;
        if (!isfinite(v))
            continue;
        f = (v - r->lo) * scale;
        k = f <= 0 ? 0 : f >= (double)r->nbins ? r->nbins - 1 : (int64_t)f;
        r->bins[k]++;
        r->hist_count++;
    }
}

void range_qparams(double rmin, double rmax, QGrid g, float *scale, int32_t *zp)
{
    float lo = (float)rmin, hi = (float)rmax;
    double z;
    if (lo > 0)
        lo = 0;
    if (hi < 0)
        hi = 0;
    if (g.symmetric) {
        float m = -lo > hi ? -lo : hi;
        lo = -m;
        hi = m;
    }
    if (hi == lo || !isfinite(hi - lo)) {
        *scale = 1.0f;
        *zp = 0;
        return;
    }
    *scale = (hi - lo) / (float)(g.qmax - g.qmin);
    if (g.symmetric) {
        *zp = 0;
        return;
    }
    z = nearbyint((double)((float)g.qmin - lo / *scale));
    *zp = (int32_t)(z < g.qmin ? g.qmin : z > g.qmax ? g.qmax : z);
}

static void minmax(const RangeStats *r, double *rmin, double *rmax)
{
    *rmin = r->count && r->min < 0 ? r->min : 0;
    *rmax = r->count && r->max > 0 ? r->max : 0;
}

/* ------------------------------------------------------------ percentile */

static void percentile(const RangeStats *r, double p, double *rmin, double *rmax)
{
    double w = (r->hi - r->lo) / r->nbins, total = (double)r->hist_count, tail, acc;
    int signed_data = r->min < 0 && r->max > 0;
    int k;
    minmax(r, rmin, rmax);
    if (total <= 0)
        return;
    tail = total * (100.0 - p) / 100.0 / (signed_data ? 2 : 1);
    /* upper: the first edge with at most `tail` values above it */
    if (r->max > 0) {
        acc = 0;
        for (k = r->nbins - 1; k >= 0; k--) {
            if (acc + (double)r->bins[k] > tail)
                break;
            acc += (double)r->bins[k];
        }
        *rmax = r->lo + (k + 1) * w;
        if (*rmax > r->max)
            *rmax = r->max;
        if (*rmax < 0)
            *rmax = 0;
    }
    if (r->min < 0) {
        acc = 0;
        for (k = 0; k < r->nbins; k++) {
            if (acc + (double)r->bins[k] > tail)
                break;
            acc += (double)r->bins[k];
        }
        *rmin = r->lo + k * w;
        if (*rmin < r->min)
            *rmin = r->min;
        if (*rmin > 0)
            *rmin = 0;
    }
}

/* ------------------------------------------------------------------- mse */

typedef struct Prefix {
    int n;
    double lo, w;
    double *c, *s1, *s2;        /* n + 1 prefix sums of count, count*v, count*v^2 */
} Prefix;

static int prefix_init(Prefix *p, const RangeStats *r)
{
    int k;
    p->n = r->nbins;
    p->lo = r->lo;
    p->w = (r->hi - r->lo) / r->nbins;
    p->c = malloc(3 * ((size_t)r->nbins + 1) * sizeof(double));
    if (!p->c)
        return -1;
    p->s1 = p->c + r->nbins + 1;
    p->s2 = p->s1 + r->nbins + 1;
    p->c[0] = p->s1[0] = p->s2[0] = 0;
    for (k = 0; k < r->nbins; k++) {
        double c = (double)r->bins[k], v = r->lo + (k + 0.5) * p->w;
        p->c[k + 1] = p->c[k] + c;
        p->s1[k + 1] = p->s1[k] + c * v;
        p->s2[k + 1] = p->s2[k] + c * v * v;
    }
    return 0;
}

/* total squared error of [a, b] (a <= 0 <= b) on the grid's levels */
static double sq_error(const Prefix *p, double levels, double a, double b)
{
    double fi = ceil((a - p->lo) / p->w - 0.5), fj = floor((b - p->lo) / p->w - 0.5) + 1;
    int i = fi < 0 ? 0 : fi > p->n ? p->n : (int)fi;   /* bins [0, i): centre below a */
    int j = fj < 0 ? 0 : fj > p->n ? p->n : (int)fj;   /* bins [j, n): centre above b */
    double step = (b - a) / levels, e;
    if (j < i)
        j = i;
    e = p->s2[i] - 2 * a * p->s1[i] + a * a * p->c[i];
    e += (p->s2[p->n] - p->s2[j]) - 2 * b * (p->s1[p->n] - p->s1[j]) +
         b * b * (p->c[p->n] - p->c[j]);
    e += (p->c[j] - p->c[i]) * step * step / 12.0;
    return e;
}

double range_expected_mse(const RangeStats *r, QGrid g, double rmin, double rmax)
{
    Prefix p;
    double e;
    if (!r->nbins || r->hist_count <= 0)
        return -1;
    if (prefix_init(&p, r))
        return -1;
    if (rmin > 0)
        rmin = 0;
    if (rmax < 0)
        rmax = 0;
    e = sq_error(&p, (double)(g.qmax - g.qmin), rmin, rmax) / (double)r->hist_count;
    free(p.c);
    return e;
}

static int mse(const RangeStats *r, QGrid g, double *rmin, double *rmax)
{
    Prefix p;
    double levels = (double)(g.qmax - g.qmin), best = INFINITY;
    double z = -r->lo / ((r->hi - r->lo) / r->nbins); /* where 0 falls, in bins */
    int ia, ib, a0 = (int)floor(z), b0 = (int)ceil(z);
    minmax(r, rmin, rmax);
    if (prefix_init(&p, r))
        return -1;
    if (a0 < 0)
        a0 = 0;
    if (b0 > r->nbins)
        b0 = r->nbins;
    if (g.symmetric) {
        /* [-t, t]: t over the edges up to the larger magnitude */
        double m = -r->lo > r->hi ? -r->lo : r->hi;
        int k;
        for (k = 1; k <= r->nbins; k++) {
            double t = m * k / r->nbins, e = sq_error(&p, levels, -t, t);
            if (e < best) {
                best = e;
                *rmin = -t;
                *rmax = t;
            }
        }
    } else {
        /* every edge at or below 0 against every edge at or above it */
        for (ia = a0; ia >= 0; ia--) {
            double a = ia == a0 && r->lo == 0 ? 0 : p.lo + ia * p.w;
            if (a > 0)
                a = 0;
            for (ib = b0; ib <= r->nbins; ib++) {
                double b = p.lo + ib * p.w, e;
                if (b < 0)
                    b = 0;
                if (b <= a)
                    continue;
                e = sq_error(&p, levels, a, b);
                if (e < best) {
                    best = e;
                    *rmin = a;
                    *rmax = b;
                }
            }
        }
    }
    free(p.c);
    return 0;
}

/* --------------------------------------------------------------- entropy */

/* KL(P || Q): P the n kept counts with the values outside folded into the
 * end bins (p), Q the kept counts without them (raw) quantized to `levels`
 * levels (each level's total spread evenly over its non-zero bins); both
 * normalized, Q smoothed where P has mass and Q none */
static double kl_of(const double *p, const double *raw, int n, int levels, double *q)
{
    double tp = 0, tq = 0, kl = 0, eps = 1e-6;
    int g, k;
    for (g = 0; g < levels; g++) {
        int s = (int)((int64_t)g * n / levels), e = (int)((int64_t)(g + 1) * n / levels), nz = 0;
        double sum = 0;
        for (k = s; k < e; k++) {
            sum += raw[k];
            nz += raw[k] > 0;
        }
        for (k = s; k < e; k++)
            q[k] = raw[k] > 0 ? sum / nz : 0;
    }
    for (k = 0; k < n; k++) {
        tp += p[k];
        tq += q[k];
    }
    if (tp <= 0 || tq <= 0)
        return INFINITY;
    for (k = 0; k < n; k++) {
        double pk = p[k] / tp, qk = q[k] / tq;
        if (pk <= 0)
            continue;
        if (qk < eps)
            qk = eps;
        kl += pk * log(pk / qk);
    }
    return kl;
}

static int entropy(const RangeStats *r, QGrid g, double *rmin, double *rmax)
{
    int n = r->nbins, k, levels = g.qmax - g.qmin + 1;
    double *p = malloc(3 * (size_t)n * sizeof *p), *q, *raw, best = INFINITY;
    double w = (r->hi - r->lo) / n;
    minmax(r, rmin, rmax);
    if (!p)
        return -1;
    q = p + n;
    raw = q + n;
    if (g.symmetric) {
        /* |x| folded into n bins over [0, m]; [-t, t] on half the levels */
        double m = -r->lo > r->hi ? -r->lo : r->hi;
        double *f = calloc((size_t)n, sizeof *f);
        int i, stride;
        if (!f) {
            free(p);
            return -1;
        }
        for (k = 0; k < n; k++) {
            double v = fabs(r->lo + (k + 0.5) * w);
            int j = (int)(v / m * n);
            f[j >= n ? n - 1 : j] += (double)r->bins[k];
        }
        levels /= 2;
        stride = (n - levels) / 256 > 1 ? (n - levels) / 256 : 1;
        for (i = levels; i <= n; i += stride) {
            double outliers = 0, kl;
            for (k = 0; k < i; k++)
                p[k] = raw[k] = f[k];
            for (k = i; k < n; k++)
                outliers += f[k];
            p[i - 1] += outliers;
            kl = kl_of(p, raw, i, levels, q);
            if (kl < best) {
                best = kl;
                *rmax = m * i / n;
                *rmin = -*rmax;
            }
            if (i < n && i + stride > n)
                i = n - stride; /* the full range is a candidate too */
        }
        free(f);
    } else {
        /* [lo s, hi s] for s from 1 down to where levels bins remain: the
         * kept bins are P, the values outside added to the end bins */
        double z = -r->lo / w;
        int step, si;
        step = 256;
        for (si = step; si >= 1; si--) {
            double s = (double)si / step, kl, below = 0, above = 0;
            int ia = (int)floor(z * (1 - s) + 0.5), ib = (int)floor(z + s * (n - z) + 0.5), cnt;
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
            for (k = 0; k < cnt; k++)
                p[k] = raw[k] = (double)r->bins[ia + k];
            p[0] += below;
            p[cnt - 1] += above;
            kl = kl_of(p, raw, cnt, levels, q);
            if (kl < best) {
                best = kl;
                *rmin = r->lo + ia * w;
                *rmax = r->lo + ib * w;
                if (*rmin > 0)
                    *rmin = 0;
                if (*rmax < 0)
                    *rmax = 0;
            }
        }
    }
    free(p);
    return 0;
}

int range_choose(const RangeStats *r, RangeMethod m, double pct, QGrid g, double *rmin,
                 double *rmax)
{
    minmax(r, rmin, rmax);
    if (m == RANGE_MINMAX || !r->nbins || r->hist_count <= 0 || r->count == 0)
        return m >= RANGE_MINMAX && m <= RANGE_ENTROPY ? 0 : -1;
    switch (m) {
    case RANGE_PERCENTILE:
        percentile(r, pct, rmin, rmax);
        return 0;
    case RANGE_MSE:
        return mse(r, g, rmin, rmax);
    case RANGE_ENTROPY:
        return entropy(r, g, rmin, rmax);
    default:
        return -1;
    }
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
