/*
 * Unit test of the calibration statistics and range methods (quant/ranges.c)
 * on deterministic samples: minmax exact, percentile excluding outliers,
 * mse no worse than minmax nor than half or twice its own range, the
 * expected error against quantize-dequantize of the values themselves,
 * entropy clipping a Laplacian's tail, qparams against values computed by
 * test/qdq/quantize.py act_params, the edge cases (empty, constant, all
 * zero, NaN/Inf, no histogram), determinism and the time each method
 * takes at 2048 bins. Last line: "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../quant/ranges.h"

static int passed, failed;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (cond) {                                                         \
            passed++;                                                       \
        } else {                                                            \
            failed++;                                                       \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                     \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
        }                                                                   \
    } while (0)

static const QGrid INT8 = {-128, 127, 0}, UINT8 = {0, 255, 0}, INT16 = {-32768, 32767, 1};
static const QGrid UINT4 = {0, 15, 0};

static unsigned long long rng_state;

static void seed(unsigned long long s)
{
    rng_state = s * 0x9e3779b97f4a7c15ull + 1;
}

/* uniform in (0, 1) */
static double uni(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(uni())) * cos(6.283185307179586 * uni());
}

static double laplace(double b)
{
    double u = uni() - 0.5;
    return u < 0 ? b * log(1 + 2 * u) : -b * log(1 - 2 * u);
}

/* Both passes over x, into r (histogram of nbins from a). */
static void collect(RangeStats *r, Arena *a, const float *x, int64_t n, int nbins)
{
    range_init(r);
    range_add(r, x, n / 2); /* in two calls, as over two samples */
    range_add(r, x + n / 2, n - n / 2);
    if (range_hist_begin(r, a, nbins))
        die("no memory");
    range_hist_add(r, x, n / 3);
    range_hist_add(r, x + n / 3, n - n / 3);
}

/* mean squared error of quantize-dequantize of x on the grid of [rmin, rmax] */
static double actual_mse(const float *x, int64_t n, QGrid g, double rmin, double rmax)
{
    float s;
    int32_t zp;
    double e = 0;
    int64_t i;
    range_qparams(rmin, rmax, g, &s, &zp);
    for (i = 0; i < n; i++) {
        float q = nearbyintf(x[i] / s) + (float)zp, d;
        q = q < (float)g.qmin ? (float)g.qmin : q > (float)g.qmax ? (float)g.qmax : q;
        d = (q - (float)zp) * s;
        e += ((double)x[i] - d) * ((double)x[i] - d);
    }
    return e / (double)n;
}

static void test_stats(Arena *a)
{
    float x[] = {1.5f, -2.0f, NAN, 4.0f, INFINITY, 0.0f, -INFINITY};
    RangeStats r;
    double lo, hi, w, k;
    int i;
    uint64_t tot = 0;
    range_init(&r);
    range_add(&r, x, 7);
    CHECK(r.count == 4 && r.nonfinite == 3, "count %lld nonfinite %lld", (long long)r.count,
          (long long)r.nonfinite);
    CHECK(r.min == -2.0 && r.max == 4.0, "min %g max %g", r.min, r.max);
    CHECK(r.sum == 3.5 && r.sumsq == 2.25 + 4 + 16, "sum %g sumsq %g", r.sum, r.sumsq);
    CHECK(range_hist_begin(&r, a, 10) == 0 && r.nbins == 10, "hist_begin");
    range_hist_add(&r, x, 7);
    for (i = 0; i < r.nbins; i++)
        tot += r.bins[i];
    CHECK(r.hist_count == 4 && tot == 4, "hist_count %lld bins %llu", (long long)r.hist_count,
          (unsigned long long)tot);
    /* span covers the data, 0 on an edge, widened by at most two bins */
    lo = r.lo;
    hi = r.hi;
    w = (hi - lo) / r.nbins;
    k = -lo / w;
    CHECK(lo <= -2.0 && hi >= 4.0 && (hi - lo) - 6.0 <= 2 * w + 1e-12, "span [%g, %g]", lo, hi);
    CHECK(fabs(k - floor(k + 0.5)) < 1e-9, "0 is not on an edge: %g bins", k);
    /* the bin of each value */
    CHECK(r.bins[(int)((1.5 - lo) / w)] == 1 && r.bins[(int)((-2.0 - lo) / w)] == 1 &&
              r.bins[r.nbins - 1] >= 1, "bins");
    /* defaults */
    range_init(&r);
    range_add(&r, x, 1);
    CHECK(range_hist_begin(&r, a, 0) == 0 && r.nbins == RANGE_DEFAULT_BINS, "default bins %d",
          r.nbins);
    CHECK(r.lo == 0 && r.hi == 1.5, "non-negative span [%g, %g]", r.lo, r.hi);
}

static void test_minmax(Arena *a)
{
    static float x[1000];
    RangeStats r;
    double lo, hi;
    int i;
    seed(1);
    for (i = 0; i < 1000; i++)
        x[i] = (float)(uni() * 3 - 1);
    x[17] = -1.25f;
    x[500] = 2.75f;
    collect(&r, a, x, 1000, 64);
    CHECK(range_choose(&r, RANGE_MINMAX, 0, INT8, &lo, &hi) == 0 && lo == -1.25 && hi == 2.75,
          "minmax [%g, %g]", lo, hi);
    for (i = 0; i < 1000; i++)
        x[i] = (float)(uni() + 0.5);
    x[3] = 1.75f;
    range_init(&r);
    range_add(&r, x, 1000);
    CHECK(range_choose(&r, RANGE_MINMAX, 0, UINT8, &lo, &hi) == 0 && lo == 0 && hi == 1.75,
          "minmax positive [%g, %g]", lo, hi);
    for (i = 0; i < 1000; i++)
        x[i] = -x[i];
    range_init(&r);
    range_add(&r, x, 1000);
    CHECK(range_choose(&r, RANGE_MINMAX, 0, INT16, &lo, &hi) == 0 && lo == -1.75 && hi == 0,
          "minmax negative [%g, %g]", lo, hi);
}

#define NBIG 100010

static void test_percentile(Arena *a)
{
    float *x = malloc(NBIG * sizeof *x);
    RangeStats r;
    double lo, hi;
    int i;
    seed(2);
    /* 100000 uniform on [-1, 1], 10 outliers of magnitude 100 */
    for (i = 0; i < 100000; i++)
        x[i] = (float)(2 * uni() - 1);
    for (i = 0; i < 10; i++)
        x[100000 + i] = i % 2 ? 100.0f : -100.0f;
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_PERCENTILE, 99.99, INT8, &lo, &hi) == 0, "percentile rc");
    CHECK(lo > -1.2 && lo < -0.9 && hi < 1.2 && hi > 0.9, "percentile both signs [%g, %g]", lo,
          hi);
    CHECK(range_choose(&r, RANGE_PERCENTILE, 99.99, INT16, &lo, &hi) == 0 && lo == -hi &&
              hi < 1.2 && hi > 0.9, "percentile symmetric [%g, %g]", lo, hi);
    CHECK(range_choose(&r, RANGE_PERCENTILE, 100, INT8, &lo, &hi) == 0 && lo == -100 &&
              hi == 100, "percentile 100 [%g, %g]", lo, hi);
    /* P = 90 on uniform [-1, 1]: 5 % cut from each tail: [-0.9, 0.9] */
    CHECK(range_choose(&r, RANGE_PERCENTILE, 90, INT8, &lo, &hi) == 0 && fabs(lo + 0.9) < 0.01 &&
              fabs(hi - 0.9) < 0.01, "percentile 90 [%g, %g]", lo, hi);
    /* non-negative: uniform [0, 1] and 10 at 100; P = 80 cuts the upper 20 % */
    for (i = 0; i < 100000; i++)
        x[i] = (float)uni();
    for (i = 0; i < 10; i++)
        x[100000 + i] = 100.0f;
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_PERCENTILE, 99.99, UINT8, &lo, &hi) == 0 && lo == 0 &&
              hi < 1.2 && hi > 0.9, "percentile non-negative [%g, %g]", lo, hi);
    CHECK(range_choose(&r, RANGE_PERCENTILE, 80, UINT8, &lo, &hi) == 0 && lo == 0 &&
              fabs(hi - 0.8) < 0.01, "percentile 80 non-negative [%g, %g]", lo, hi);
    /* non-positive */
    for (i = 0; i < NBIG; i++)
        x[i] = -x[i];
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_PERCENTILE, 80, INT8, &lo, &hi) == 0 && hi == 0 &&
              fabs(lo + 0.8) < 0.01, "percentile 80 non-positive [%g, %g]", lo, hi);
    free(x);
}

static void mse_case(Arena *a, const char *what, const float *x, int64_t n, QGrid g)
{
    RangeStats r;
    double lo, hi, mlo, mhi, e, em, eh, ed;
    int k;
    collect(&r, a, x, n, 2048);
    CHECK(range_choose(&r, RANGE_MSE, 0, g, &lo, &hi) == 0 && lo <= 0 && hi >= 0, "%s mse rc",
          what);
    range_choose(&r, RANGE_MINMAX, 0, g, &mlo, &mhi);
    CHECK(lo >= mlo && hi <= mhi, "%s mse [%g, %g] outside minmax", what, lo, hi);
    e = range_expected_mse(&r, g, lo, hi);
    em = range_expected_mse(&r, g, mlo, mhi);
    eh = range_expected_mse(&r, g, lo / 2, hi / 2);
    ed = range_expected_mse(&r, g, lo * 2, hi * 2);
    CHECK(e > 0 && e <= em && e <= eh && e <= ed, "%s mse %g minmax %g half %g double %g", what,
          e, em, eh, ed);
    /* a local minimum at 1 % steps of each end */
    for (k = 0; k < 4; k++) {
        double f = k % 2 ? 0.99 : 1.01, l2 = k < 2 ? lo * f : lo, h2 = k < 2 ? hi : hi * f;
        if (g.symmetric) {
            l2 = lo * f;
            h2 = hi * f;
        }
        ed = range_expected_mse(&r, g, l2, h2);
        CHECK(e <= ed, "%s mse [%g, %g] %.9g, [%g, %g] %.9g", what, lo, hi, e, l2, h2, ed);
    }
}

static void test_mse(Arena *a)
{
    float *x = malloc(NBIG * sizeof *x);
    RangeStats r;
    double lo, hi;
    int i;
    seed(3);
    for (i = 0; i < NBIG; i++)
        x[i] = (float)gauss();
    mse_case(a, "gauss int8", x, NBIG, INT8);
    mse_case(a, "gauss int16", x, NBIG, INT16);
    for (i = 0; i < 10; i++)
        x[100000 + i] = 100.0f;
    mse_case(a, "gauss+outliers int8", x, NBIG, INT8);
    /* |Laplace(1)| on 16 levels: noise (T/15)^2/12 against clipping 2 e^-T,
     * least where T e^T = 2700, T = 6.0; the sample's max is about 11.5 */
    for (i = 0; i < NBIG; i++)
        x[i] = (float)fabs(laplace(1.0));
    mse_case(a, "|laplace| uint4", x, NBIG, UINT4);
    collect(&r, a, x, NBIG, 2048);
    range_choose(&r, RANGE_MSE, 0, UINT4, &lo, &hi);
    CHECK(lo == 0 && hi > 5.5 && hi < 6.5 && r.max > 10, "mse |laplace| uint4 [%g, %g], max %g",
          lo, hi, r.max);
    for (i = 0; i < NBIG; i++)
        x[i] = x[i] > 0 ? x[i] : 0; /* relu */
    mse_case(a, "relu uint8", x, NBIG, UINT8);
    for (i = 0; i < NBIG; i++)
        x[i] = (float)(uni() * 4 - 1);
    mse_case(a, "uniform int8", x, NBIG, INT8);
    collect(&r, a, x, NBIG, 2048);
    range_choose(&r, RANGE_MSE, 0, INT8, &lo, &hi);
    CHECK(lo < -0.95 && hi > 2.9, "mse on uniform data keeps nearly all: [%g, %g]", lo, hi);
    free(x);
}

static void expected_case(Arena *a, const char *what, const float *x, int64_t n, QGrid g,
                          double lo, double hi)
{
    RangeStats r;
    double e, act;
    collect(&r, a, x, n, 2048);
    e = range_expected_mse(&r, g, lo, hi);
    act = actual_mse(x, n, g, lo, hi);
    CHECK(fabs(e - act) <= 0.03 * act, "%s [%g, %g]: expected %g actual %g", what, lo, hi, e,
          act);
}

static void test_expected_mse(Arena *a)
{
    float *x = malloc(NBIG * sizeof *x);
    RangeStats r;
    double lo, hi;
    int i;
    seed(4);
    for (i = 0; i < NBIG; i++)
        x[i] = (float)gauss();
    collect(&r, a, x, NBIG, 2048);
    range_choose(&r, RANGE_MINMAX, 0, INT8, &lo, &hi);
    expected_case(a, "gauss int8 minmax", x, NBIG, INT8, lo, hi);
    range_choose(&r, RANGE_MSE, 0, INT8, &lo, &hi);
    expected_case(a, "gauss int8 mse", x, NBIG, INT8, lo, hi);
    expected_case(a, "gauss int8 clipping", x, NBIG, INT8, -1.0, 1.5);
    expected_case(a, "gauss int8 heavy clipping", x, NBIG, INT8, -0.2, 0.3);
    expected_case(a, "gauss int8 shifted", x, NBIG, INT8, -3.0, 0.5);
    expected_case(a, "gauss uint8", x, NBIG, UINT8, -2.5, 3.0);
    range_choose(&r, RANGE_MINMAX, 0, INT16, &lo, &hi);
    expected_case(a, "gauss int16 minmax", x, NBIG, INT16, lo, hi);
    expected_case(a, "gauss int16 clipping", x, NBIG, INT16, -1.0, 1.0);
    for (i = 0; i < NBIG; i++)
        x[i] = (float)(0.5 * laplace(1.0) + 1.0);
    expected_case(a, "laplace+1 int8", x, NBIG, INT8, -1.0, 4.0);
    CHECK(range_expected_mse(&r, INT8, 0, 1) > 0, "expected_mse positive");
    range_init(&r);
    CHECK(range_expected_mse(&r, INT8, 0, 1) == -1, "expected_mse without a histogram");
    free(x);
}

/* KL(P || Q) of candidate i over the n bins h on L levels, straight from
 * the definition in ranges.h (no prefix sums) */
static double kl_direct(const double *h, int n, int i, int L)
{
    double *p = malloc((size_t)n * 2 * sizeof *p), *q = p + n, ps = 0, qs = 0, kl = 0;
    int j, k, z = 0, nq = 0;
    for (k = 0; k < i; k++)
        p[k] = h[k];
    for (k = i; k < n; k++)
        p[i - 1] += h[k];
    for (j = 0; j < L; j++) {
        int s = (int)((int64_t)j * i / L), e = (int)((int64_t)(j + 1) * i / L), nz = 0;
        double t = 0;
        for (k = s; k < e; k++) {
            t += h[k];
            nz += p[k] > 0;
        }
        for (k = s; k < e; k++)
            q[k] = p[k] > 0 ? t / nz : 0;
    }
    for (k = 0; k < i; k++) {
        ps += p[k];
        qs += q[k];
    }
    for (k = 0; k < i; k++) {
        z += p[k] > 0 && q[k] == 0;
        nq += q[k] > 0;
    }
    for (k = 0; k < i; k++) {
        double pk = p[k] / ps, qk = q[k] > 0 ? q[k] / qs * (1 - z * 1e-4) : 1e-4;
        if (pk > 0)
            kl += pk * log(pk / qk);
    }
    free(p);
    return nq ? kl : HUGE_VAL;
}

/* Non-negative data: the magnitude histogram is the histogram itself. The
 * threshold chosen must be a minimum of kl_direct over all candidates. */
static void entropy_reference(RangeStats *r, QGrid g, const char *what)
{
    int n = r->nbins, L = g.qmax - g.qmin + 1, i, got;
    double *h = malloc((size_t)n * sizeof *h), best = HUGE_VAL, kl_got, lo, hi;
    for (i = 0; i < n; i++)
        h[i] = (double)r->bins[i];
    range_choose(r, RANGE_ENTROPY, 0, g, &lo, &hi);
    got = (int)floor(hi / r->max * n + 0.5);
    for (i = L; i <= n; i++) {
        double kl = kl_direct(h, n, i, L);
        if (kl < best)
            best = kl;
    }
    kl_got = got >= L && got <= n ? kl_direct(h, n, got, L) : HUGE_VAL;
    CHECK(fabs(hi - (double)got * r->max / n) < 1e-9 * r->max && kl_got <= best * (1 + 1e-9) + 1e-15,
          "%s: threshold %g (bin %d) has KL %.9g, the least is %.9g", what, hi, got, kl_got, best);
    free(h);
}

static void test_entropy(Arena *a)
{
    float *x = malloc(NBIG * sizeof *x);
    RangeStats r;
    double lo, hi, m;
    int i;
    seed(5);
    for (i = 0; i < NBIG; i++)
        x[i] = (float)laplace(1.0);
    collect(&r, a, x, NBIG, 2048);
    m = -r.min > r.max ? -r.min : r.max;
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, INT8, &lo, &hi) == 0, "entropy rc");
    /* asymmetric grid: both ends from one scale of the signed histogram */
    CHECK(hi <= r.max && lo >= r.min && hi > 5.0 && -lo > 5.0,
          "entropy laplace int8 [%g, %g], absmax %g", lo, hi, m);
    {
        const QGrid sym8 = {-127, 127, 1};
        CHECK(range_choose(&r, RANGE_ENTROPY, 0, sym8, &lo, &hi) == 0 && lo == -hi &&
                  hi < 0.85 * m && hi > 5.0,
              "entropy laplace, symmetric 8-bit grid [%g, %g], absmax %g", lo, hi, m);
    }
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, INT16, &lo, &hi) == 0 && lo <= 0 && hi >= 0,
          "entropy int16 [%g, %g]", lo, hi);
    /* far outliers in a Laplacian: clipped away */
    for (i = 0; i < 10; i++)
        x[100000 + i] = i % 2 ? 50.0f : -50.0f;
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, INT8, &lo, &hi) == 0 && hi < 15 && lo > -15,
          "entropy laplace+outliers [%g, %g]", lo, hi);
    /* skewed (a LeakyRelu's output, slope 0.1): the asymmetric grid keeps
     * most of the long positive side (the |x| form with half the levels
     * on each side clipped it at a fraction) */
    for (i = 0; i < NBIG; i++) {
        double v = laplace(1.0);
        x[i] = (float)(v < 0 ? 0.1 * v : v);
    }
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, INT8, &lo, &hi) == 0 && hi > 0.5 * r.max &&
              lo < 0 && lo >= r.min,
          "entropy on skewed data [%g, %g], data [%g, %g]", lo, hi, r.min, r.max);
    /* non-negative: [0, T] with all 256 levels, against the direct definition */
    for (i = 0; i < NBIG; i++)
        x[i] = x[i] > 0 ? x[i] : -x[i];
    collect(&r, a, x, NBIG, 2048);
    entropy_reference(&r, UINT8, "|laplace|+outliers uint8");
    for (i = 0; i < 100000; i++)
        x[i] = (float)fabs(laplace(1.0));
    collect(&r, a, x, 100000, 2048);
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, UINT8, &lo, &hi) == 0 && lo == 0 &&
              hi < 0.85 * r.max && hi > 5.0, "entropy |laplace| uint8 [%g, %g], max %g", lo, hi,
          r.max);
    entropy_reference(&r, UINT8, "|laplace| uint8");
    entropy_reference(&r, UINT4, "|laplace| uint4");
    for (i = 0; i < 100000; i++)
        x[i] = (float)fabs(gauss());
    collect(&r, a, x, 100000, 2048);
    entropy_reference(&r, UINT8, "|gauss| uint8");
    /* uniform data: nothing worth clipping */
    for (i = 0; i < NBIG; i++)
        x[i] = (float)uni();
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, UINT8, &lo, &hi) == 0 && lo == 0 && hi > 0.9,
          "entropy uniform [%g, %g]", lo, hi);
    /* outliers 100x: clipped down to the least candidate, 256 of 2048 bins */
    for (i = 0; i < 10; i++)
        x[100000 + i] = 100.0f;
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, UINT8, &lo, &hi) == 0 && lo == 0 && hi == 12.5,
          "entropy outliers [%g, %g]", lo, hi);
    /* data far from 0 (uniform in [3.5, 12.3], like log-mel features):
     * no candidate may clip more than 1% of the values (P and Q would
     * both collapse into one bin at the low end) */
    for (i = 0; i < NBIG; i++)
        x[i] = (float)(3.5 + 8.8 * uni());
    collect(&r, a, x, NBIG, 2048);
    CHECK(range_choose(&r, RANGE_ENTROPY, 0, UINT8, &lo, &hi) == 0 && lo == 0 &&
              hi >= 3.5 + 8.8 * 0.99 - 0.01,
          "entropy on data far from 0 [%g, %g]", lo, hi);
    free(x);
}

static void qp_case(double rmin, double rmax, QGrid g, float scale, int32_t zp)
{
    float s;
    int32_t z;
    range_qparams(rmin, rmax, g, &s, &z);
    CHECK(s == scale && z == zp, "qparams [%g, %g] on %d..%d: %a %d, want %a %d", rmin, rmax,
          g.qmin, g.qmax, s, z, scale, zp);
}

static void test_qparams(void)
{
    /* values from test/qdq/quantize.py act_params */
    qp_case(-1, 1, INT8, 0x1.010102p-7f, -1);
    qp_case(0.5, 2, INT8, 0x1.010102p-7f, -128);
    qp_case(-3, -1, INT8, 0x1.818182p-7f, 127);
    qp_case(-1, 3, UINT8, 0x1.010102p-6f, 64);
    qp_case(-2, 1, INT16, 0x1.0001p-14f, 0);
    qp_case(0, 0, INT8, 1.0f, 0);
    qp_case(0.5, 0.5, UINT8, 0x1.010102p-9f, 0);
    qp_case(-0.3, 0.7, INT8, 0x1.010102p-8f, -52);
    qp_case(-1e-3, 5.0, UINT8, 0x1.4151b4p-6f, 0);
    qp_case(0, 0, INT16, 1.0f, 0);
    qp_case(1e-45, 1e-45, INT8, 1.0f, 0); /* the scale underflows */
}

static void test_edges(Arena *a)
{
    float c[100], nan[3] = {NAN, INFINITY, -INFINITY};
    RangeStats r;
    double lo, hi;
    int i, m;
    RangeMethod pm;
    /* empty */
    range_init(&r);
    CHECK(range_hist_begin(&r, a, 16) == 0 && r.lo == 0 && r.hi == 1, "empty span");
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++) {
        lo = hi = 7;
        CHECK(range_choose(&r, (RangeMethod)m, 99, INT8, &lo, &hi) == 0 && lo == 0 && hi == 0,
              "empty %s [%g, %g]", range_method_name((RangeMethod)m), lo, hi);
    }
    /* only NaN/Inf */
    range_init(&r);
    range_add(&r, nan, 3);
    range_hist_begin(&r, a, 16);
    range_hist_add(&r, nan, 3);
    CHECK(r.count == 0 && r.nonfinite == 3 && r.hist_count == 0, "non-finite only");
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(range_choose(&r, (RangeMethod)m, 99, INT8, &lo, &hi) == 0 && lo == 0 && hi == 0,
              "non-finite %s [%g, %g]", range_method_name((RangeMethod)m), lo, hi);
    /* constant, all zero */
    for (i = 0; i < 100; i++)
        c[i] = 3.5f;
    collect(&r, a, c, 100, 2048);
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(range_choose(&r, (RangeMethod)m, 99, UINT8, &lo, &hi) == 0 && lo == 0 && hi == 3.5,
              "constant %s [%g, %g]", range_method_name((RangeMethod)m), lo, hi);
    for (i = 0; i < 100; i++)
        c[i] = -0.25f;
    collect(&r, a, c, 100, 2048);
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(range_choose(&r, (RangeMethod)m, 99, INT8, &lo, &hi) == 0 && lo == -0.25 && hi == 0,
              "negative constant %s [%g, %g]", range_method_name((RangeMethod)m), lo, hi);
    memset(c, 0, sizeof c);
    collect(&r, a, c, 100, 2048);
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(range_choose(&r, (RangeMethod)m, 99, INT8, &lo, &hi) == 0 && lo == 0 && hi == 0,
              "zeros %s [%g, %g]", range_method_name((RangeMethod)m), lo, hi);
    /* two values, pass 2 never run: the histogram methods fall back to minmax */
    c[0] = -1;
    c[1] = 2;
    range_init(&r);
    range_add(&r, c, 2);
    CHECK(range_choose(&r, RANGE_MSE, 0, INT8, &lo, &hi) == -1, "mse without a histogram");
    CHECK(range_choose(&r, RANGE_PERCENTILE, 99, INT8, &lo, &hi) == -1,
          "percentile without a histogram");
    range_hist_begin(&r, a, 8);
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(range_choose(&r, (RangeMethod)m, 99, INT8, &lo, &hi) == 0 && lo == -1 && hi == 2,
              "empty histogram %s [%g, %g]", range_method_name((RangeMethod)m), lo, hi);
    /* a tiny histogram: every method still answers inside the data */
    range_hist_add(&r, c, 2);
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(range_choose(&r, (RangeMethod)m, 50, INT8, &lo, &hi) == 0 && lo <= 0 && lo >= -1 &&
                  hi >= 0 && hi <= 2, "two values %s [%g, %g]",
              range_method_name((RangeMethod)m), lo, hi);
    /* bad arguments */
    CHECK(range_choose(&r, RANGE_PERCENTILE, 0, INT8, &lo, &hi) == -1, "percentile 0");
    CHECK(range_choose(&r, RANGE_PERCENTILE, 100.5, INT8, &lo, &hi) == -1, "percentile 100.5");
    CHECK(range_choose(&r, RANGE_PERCENTILE, NAN, INT8, &lo, &hi) == -1, "percentile NaN");
    CHECK(range_choose(&r, (RangeMethod)9, 99, INT8, &lo, &hi) == -1, "unknown method");
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(range_method_parse(range_method_name((RangeMethod)m), &pm) == 0 && (int)pm == m,
              "method name %d", m);
    CHECK(range_method_parse("kl", &pm) == -1 && !strcmp(range_method_name(RANGE_MSE), "mse"),
          "method names");
}

static void test_determinism(Arena *a)
{
    float *x = malloc(NBIG * sizeof *x);
    RangeStats r1, r2;
    double lo1, hi1, lo2, hi2;
    int m;
    seed(6);
    for (m = 0; m < NBIG; m++)
        x[m] = (float)(gauss() * 0.7 + laplace(0.2) + 0.3);
    collect(&r1, a, x, NBIG, 2048);
    collect(&r2, a, x, NBIG, 2048);
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++) {
        range_choose(&r1, (RangeMethod)m, 99.9, INT8, &lo1, &hi1);
        range_choose(&r2, (RangeMethod)m, 99.9, INT8, &lo2, &hi2);
        CHECK(!memcmp(&lo1, &lo2, sizeof lo1) && !memcmp(&hi1, &hi2, sizeof hi1),
              "determinism %s", range_method_name((RangeMethod)m));
        range_choose(&r1, (RangeMethod)m, 99.9, INT8, &lo2, &hi2);
        CHECK(!memcmp(&lo1, &lo2, sizeof lo1) && !memcmp(&hi1, &hi2, sizeof hi1),
              "determinism %s, same stats", range_method_name((RangeMethod)m));
    }
    free(x);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* each method on 2048 bins of a smooth signed tensor and of a relu one */
static void test_timing(Arena *a)
{
    float *x = malloc(NBIG * sizeof *x);
    RangeStats r[2];
    QGrid g[2];
    double lo, hi, worst[4] = {0, 0, 0, 0};
    int m, k, rep;
    seed(7);
    for (k = 0; k < NBIG; k++)
        x[k] = (float)(gauss() + 0.2 * laplace(1.0));
    collect(&r[0], a, x, NBIG, 2048);
    for (k = 0; k < NBIG; k++)
        x[k] = x[k] > 0 ? x[k] : 0;
    collect(&r[1], a, x, NBIG, 2048);
    g[0] = INT8;
    g[1] = UINT8;
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        for (k = 0; k < 2; k++)
            for (rep = 0; rep < 3; rep++) {
                double t0 = now_ms(), dt;
                range_choose(&r[k], (RangeMethod)m, 99.99, g[k], &lo, &hi);
                dt = now_ms() - t0;
                if (dt > worst[m])
                    worst[m] = dt;
            }
    printf("time per tensor at 2048 bins (worst of 6): minmax %.3f ms, percentile %.3f ms, "
           "mse %.3f ms, entropy %.3f ms\n", worst[0], worst[1], worst[2], worst[3]);
    for (m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++)
        CHECK(worst[m] < 100, "%s takes %.1f ms", range_method_name((RangeMethod)m), worst[m]);
    free(x);
}

int main(void)
{
    Arena a;
    arena_init(&a, 0);
    test_stats(&a);
    test_minmax(&a);
    test_percentile(&a);
    test_mse(&a);
    test_expected_mse(&a);
    test_entropy(&a);
    test_qparams();
    test_edges(&a);
    test_determinism(&a);
    test_timing(&a);
    arena_free(&a);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
