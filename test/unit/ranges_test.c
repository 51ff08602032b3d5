/*
 * Unit tests of quant/ranges.c: calibration statistics and the range
 * methods of tvmcc quantize. Prints one line per failed check and, last,
 * "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../quant/ranges.h"

static int passed, failed;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (cond) {                                        \
            passed++;                                      \
        } else {                                           \
            failed++;                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);    \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
        }                                                  \
    } while (0)

static const QGrid INT8 = {-128, 127, 0}, UINT8 = {0, 255, 0}, INT16 = {-32768, 32767, 1};

static uint64_t state = 88172645463325252ull;

static double uniform(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static double laplace(double b)
{
    double u = uniform() - 0.5;
    return (u < 0 ? 1 : -1) * b * log(1 - 2 * fabs(u) + 1e-300);
}

/* both passes over x */
static void stats(RangeStats *r, Arena *a, const float *x, int64_t n)
{
    range_init(r);
    range_add(r, x, n);
    range_hist_begin(r, a, 2048);
    range_hist_add(r, x, n);
}

/* the mean squared error of quantizing x to the grid over [lo, hi] */
static double actual_mse(const float *x, int64_t n, QGrid g, double lo, double hi)
{
    float scale;
    int32_t zp;
    double e = 0;
    int64_t i;
    range_qparams(lo, hi, g, &scale, &zp);
    for (i = 0; i < n; i++) {
        double q = nearbyint((double)x[i] / scale) + zp;
        q = q < g.qmin ? g.qmin : q > g.qmax ? g.qmax : q;
        e += ((q - zp) * scale - x[i]) * ((q - zp) * scale - x[i]);
    }
    return e / (double)n;
}

static void test_minmax(Arena *a)
{
    float x[5] = {-0.5f, 2.0f, 1.0f, NAN, INFINITY}, y[3] = {1.0f, 2.0f, 3.0f};
    RangeStats r;
    double lo, hi;
    stats(&r, a, x, 5);
    CHECK(r.count == 3 && r.nonfinite == 2, "count %lld nonfinite %lld", (long long)r.count,
          (long long)r.nonfinite);
    range_choose(&r, RANGE_MINMAX, 99.99, INT8, &lo, &hi);
    CHECK(lo == -0.5 && hi == 2.0, "minmax [%g, %g]", lo, hi);
    /* a range not containing 0 is widened to it */
    stats(&r, a, y, 3);
    range_choose(&r, RANGE_MINMAX, 99.99, INT8, &lo, &hi);
    CHECK(lo == 0 && hi == 3.0, "positive data: [%g, %g]", lo, hi);
    /* no finite value: [0, 0]; every method */
    range_init(&r);
    range_add(&r, x + 3, 2);
    range_hist_begin(&r, a, 2048);
    range_hist_add(&r, x + 3, 2);
    for (int m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++) {
        range_choose(&r, (RangeMethod)m, 99.99, INT8, &lo, &hi);
        CHECK(lo == 0 && hi == 0, "%s on nothing: [%g, %g]", range_method_name((RangeMethod)m),
              lo, hi);
    }
}

static void test_qparams(void)
{
    float s;
    int32_t z;
    range_qparams(-1.0, 2.0, INT8, &s, &z);
    CHECK(s == 3.0f / 255 && z == -43, "int8 [-1, 2]: %g %d", (double)s, z); /* -128 + 85 */
    range_qparams(0.0, 6.0, INT8, &s, &z);
    CHECK(s == 6.0f / 255 && z == -128, "int8 [0, 6]: %g %d", (double)s, z);
    range_qparams(0.0, 6.0, UINT8, &s, &z);
    CHECK(s == 6.0f / 255 && z == 0, "uint8 [0, 6]: %g %d", (double)s, z);
    range_qparams(-2.0, 1.0, UINT8, &s, &z);
    CHECK(s == 3.0f / 255 && z == 170, "uint8 [-2, 1]: %g %d", (double)s, z);
    range_qparams(-0.5, 2.0, INT16, &s, &z);
    CHECK(s == 4.0f / 65535 && z == 0, "int16 [-0.5, 2]: %g %d", (double)s, z);
    range_qparams(0.0, 0.0, INT8, &s, &z);
    CHECK(s == 1.0f && z == 0, "empty range: %g %d", (double)s, z);
    range_qparams(1.0, 3.0, INT8, &s, &z);
    CHECK(s == 3.0f / 255 && z == -128, "[1, 3] widened to [0, 3]: %g %d", (double)s, z);
}

/* 100000 uniform values in [-1, 1] and 4 outliers at 100: 99.99 percent
 * leaves 5 values to each tail */
static void test_percentile(Arena *a)
{
    int64_t n = 100004, i;
    float *x = malloc((size_t)n * sizeof *x);
    RangeStats r;
    double lo, hi, lo2, hi2;
    for (i = 0; i < 100000; i++)
        x[i] = (float)(2 * uniform() - 1);
    for (; i < n; i++)
        x[i] = 100.0f;
    stats(&r, a, x, n);
    range_choose(&r, RANGE_PERCENTILE, 99.99, INT8, &lo, &hi);
    CHECK(hi < 1.2 && hi > 0.9 && lo < -0.9 && lo > -1.1, "percentile 99.99: [%g, %g]", lo, hi);
    range_choose(&r, RANGE_PERCENTILE, 99.9995, INT8, &lo2, &hi2);
    CHECK(hi2 >= 99, "percentile 99.9995 keeps the 4 outliers: [%g, %g]", lo2, hi2);
    /* non-negative data: the whole tail from the top */
    for (i = 0; i < 100000; i++)
        x[i] = (float)uniform();
    stats(&r, a, x, n);
    range_choose(&r, RANGE_PERCENTILE, 99.9, INT8, &lo, &hi);
    CHECK(lo == 0 && hi > 0.95 && hi < 1.1, "non-negative percentile 99.9: [%g, %g]", lo, hi);
    free(x);
}

static void test_mse(Arena *a)
{
    int64_t n = 200000, i;
    float *x = malloc((size_t)n * sizeof *x);
    RangeStats r;
    double lo, hi, mlo, mhi, e, em, e_half, e_double, ea;
    for (i = 0; i < n; i++)
        x[i] = (float)laplace(1.0);
    stats(&r, a, x, n);
    range_choose(&r, RANGE_MSE, 99.99, INT8, &lo, &hi);
    range_choose(&r, RANGE_MINMAX, 99.99, INT8, &mlo, &mhi);
    e = range_expected_mse(&r, INT8, lo, hi);
    em = range_expected_mse(&r, INT8, mlo, mhi);
    e_half = range_expected_mse(&r, INT8, lo / 2, hi / 2);
    e_double = range_expected_mse(&r, INT8, lo * 2, hi * 2);
    CHECK(e <= em && e <= e_half && e <= e_double,
          "mse range [%g, %g]: %g; minmax %g, half %g, double %g", lo, hi, e, em, e_half, e_double);
    /* for 8 bits the optimal clip of a Laplacian of scale b is near 9.9 b
     * (Banner et al., ACIQ): below the sample's maximum */
    CHECK(hi > 8 && hi < 11.5 && hi < mhi, "mse clips the Laplacian's tail: %g of %g", hi, mhi);
    /* the expected error agrees with quantizing the values */
    ea = actual_mse(x, n, INT8, lo, hi);
    CHECK(fabs(ea - e) < 0.05 * ea, "expected %g, actual %g", e, ea);
    ea = actual_mse(x, n, INT8, mlo, mhi);
    CHECK(fabs(ea - em) < 0.05 * ea, "minmax: expected %g, actual %g", em, ea);
    /* the search beats the minmax range on the actual values too */
    CHECK(actual_mse(x, n, INT8, lo, hi) < actual_mse(x, n, INT8, mlo, mhi), "actual");
    /* symmetric int16 grid */
    range_choose(&r, RANGE_MSE, 99.99, INT16, &lo, &hi);
    CHECK(lo == -hi && hi > 0, "int16 mse symmetric: [%g, %g]", lo, hi);
    free(x);
}

static void test_entropy(Arena *a)
{
    int64_t n = 200000, i;
    float *x = malloc((size_t)n * sizeof *x);
    RangeStats r;
    double lo, hi, mlo, mhi;
    for (i = 0; i < n; i++)
        x[i] = (float)fabs(laplace(1.0));
    stats(&r, a, x, n);
    range_choose(&r, RANGE_ENTROPY, 99.99, UINT8, &lo, &hi);
    range_choose(&r, RANGE_MINMAX, 99.99, UINT8, &mlo, &mhi);
    CHECK(lo == 0 && hi > 2 && hi < 0.95 * mhi, "entropy on |Laplace|: [%g, %g] of %g", lo, hi,
          mhi);
    for (i = 0; i < n; i++)
        x[i] = (float)laplace(1.0);
    stats(&r, a, x, n);
    {
        const QGrid sym8 = {-127, 127, 1};
        range_choose(&r, RANGE_ENTROPY, 99.99, sym8, &lo, &hi);
        range_choose(&r, RANGE_MINMAX, 99.99, sym8, &mlo, &mhi);
        CHECK(lo == -hi && hi > 2 && hi < 0.95 * (mhi > -mlo ? mhi : -mlo),
              "entropy symmetric on Laplace: [%g, %g]", lo, hi);
    }
    /* a grid with more levels than bins (int16): nothing to learn, minmax */
    range_choose(&r, RANGE_ENTROPY, 99.99, INT16, &lo, &hi);
    range_choose(&r, RANGE_MINMAX, 99.99, INT16, &mlo, &mhi);
    CHECK(lo == mlo && hi == mhi, "entropy on int16: [%g, %g], minmax [%g, %g]", lo, hi, mlo, mhi);
    range_choose(&r, RANGE_ENTROPY, 99.99, INT8, &lo, &hi);
    CHECK(lo < -2 && hi > 2 && hi < 0.8 * mhi, "entropy asymmetric grid on Laplace: [%g, %g]", lo,
          hi);
    free(x);
}

/* the same statistics give the same range; a constant tensor works */
static void test_determinism(Arena *a)
{
    int64_t n = 50000, i;
    float *x = malloc((size_t)n * sizeof *x);
    RangeStats r1, r2;
    double l1, h1, l2, h2;
    for (i = 0; i < n; i++)
        x[i] = (float)(laplace(0.3) + 0.5);
    stats(&r1, a, x, n);
    stats(&r2, a, x, n);
    for (int m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++) {
        range_choose(&r1, (RangeMethod)m, 99.9, INT8, &l1, &h1);
        range_choose(&r2, (RangeMethod)m, 99.9, INT8, &l2, &h2);
        CHECK(!memcmp(&l1, &l2, sizeof l1) && !memcmp(&h1, &h2, sizeof h1), "%s differs",
              range_method_name((RangeMethod)m));
        CHECK(l1 <= 0 && h1 >= 0, "%s range [%g, %g] contains 0", range_method_name((RangeMethod)m),
              l1, h1);
    }
    for (i = 0; i < n; i++)
        x[i] = 2.5f;
    stats(&r1, a, x, n);
    for (int m = RANGE_MINMAX; m <= RANGE_ENTROPY; m++) {
        range_choose(&r1, (RangeMethod)m, 99.9, INT8, &l1, &h1);
        CHECK(l1 == 0 && h1 > 2.4 && h1 <= 2.5 + 1e-9, "%s on a constant: [%g, %g]",
              range_method_name((RangeMethod)m), l1, h1);
    }
    free(x);
    {
        RangeMethod m;
        CHECK(range_method_parse("entropy", &m) == 0 && m == RANGE_ENTROPY, "parse");
        CHECK(range_method_parse("kl", &m) != 0, "parse of an unknown name");
    }
}

int main(void)
{
    Arena a;
    arena_init(&a, 0);
    test_minmax(&a);
    test_qparams();
    test_percentile(&a);
    test_mse(&a);
    test_entropy(&a);
    test_determinism(&a);
    arena_free(&a);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
