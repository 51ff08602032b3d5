/*
 * Calibration statistics and the choice of a tensor's clipping range
 * (tvmcc quantize, issue 18).
 *
 * The float model runs over the calibration samples twice. Pass 1 feeds
 * every value of a tensor to range_add (count, min, max, sum, sum of
 * squares; NaN and Inf are counted apart and otherwise ignored). Pass 2
 * feeds the same values to range_hist_add, which counts them in nbins
 * equal bins laid out by range_hist_begin from pass 1's min and max. A
 * method then picks the clipping range [rmin, rmax] (range_choose), and
 * range_qparams turns it into the float32 scale and the zero point.
 *
 * The histogram. Its span is [lo, hi] with lo = min(min, 0) and
 * hi = max(max, 0); when the data has both signs (and nbins >= 2) the
 * bin width is the least for which a whole number of bins covers each
 * side (k bins [lo0, 0], nbins - k bins [0, hi0], k the better of the two
 * integers next to nbins lo0 / (lo0 - hi0)), which widens the span by
 * about two bins at most and puts 0 exactly on a bin edge
 * (the bins left of 0 and those right of it are whole, which lets a
 * method fold the negative half onto the positive one without a bin
 * straddling 0). A value outside the span (float rounding only) counts
 * in the end bin. Every method reads the histogram as a piecewise
 * uniform density: a bin's count spread evenly over its width. Methods
 * that work on |x| (the symmetric grid, entropy on signed data) derive
 * the density of |x| from it exactly as F(t) - F(-t), F the cumulative
 * count, so one histogram serves both signed and magnitude methods.
 *
 * The methods (each result always contains 0 and lies in [lo, hi] of the
 * data, i.e. [min(min, 0), max(max, 0)]: a symmetric range [-T, T] is
 * intersected with it, which leaves the scale range_qparams derives
 * unchanged on a symmetric grid and clips nothing more on an asymmetric
 * one (it gives the unused side's levels back); a constant tensor, min == max,
 * gets the minmax range under every method so that its value is exact;
 * an empty tensor, count 0, gets [0, 0]; a histogram method on a
 * histogram that saw no value falls back to minmax):
 *
 *  RANGE_MINMAX      [min(min, 0), max(max, 0)]. Needs no histogram.
 *                    On a symmetric grid range_qparams makes it
 *                    [-absmax, absmax].
 *  RANGE_PERCENTILE  P percent of the values inside (0 < P <= 100,
 *                    default 99.99), quantiles read off the piecewise
 *                    uniform density. Data with both signs on an
 *                    asymmetric grid: each tail gets half of the
 *                    excluded (100 - P) percent: rmin is the
 *                    (100 - P) / 2 percentile, rmax the (100 + P) / 2
 *                    percentile (each then widened to contain 0).
 *                    Non-negative data: rmin = 0, rmax the P percentile
 *                    (the whole excluded share from the upper tail);
 *                    non-positive data mirrored. A symmetric grid:
 *                    T = the P percentile of |x|, range [-T, T].
 *  RANGE_MSE         The range minimising range_expected_mse, the
 *                    expected squared error of quantize-dequantize with
 *                    the float32 scale and integer zero point the range
 *                    really gets. Candidates are [a lo, b hi] (a, b in
 *                    (0, 1]); a symmetric grid uses [-t A, t A] with
 *                    A = max(-lo, hi). Search: first a = b = t over the
 *                    geometric grid t = 2^(-k/16), k = 0..176 (down to
 *                    about one bin); then coordinate descent from the
 *                    best, multiplying a or b by (1 +- s), s starting at
 *                    2^(1/16) - 1 and halved whenever no move improves,
 *                    down to 1e-4 (at most 600 evaluations in all). A
 *                    move is taken only on a strict improvement, so the
 *                    result is never worse than minmax (t = 1 is a
 *                    candidate). Each evaluation is O(nbins).
 *  RANGE_ENTROPY     The KL-divergence method (TensorRT's calibration as
 *                    published: Migacz, "8-bit Inference with TensorRT",
 *                    2017). A magnitude histogram of M = nbins bins over
 *                    [0, A] is formed: |x| for data of both signs (A the
 *                    larger magnitude), x for non-negative data, -x for
 *                    non-positive. The number of levels L is half the
 *                    grid's (qmax - qmin + 1) for signed data or a
 *                    symmetric grid, all of them otherwise. For each
 *                    candidate i = L .. M (only M when L >= M): the
 *                    reference P is bins 0..i-1 with the mass of bins
 *                    i..M-1 added to bin i-1; Q is bins 0..i-1 merged
 *                    into L groups (group j = bins [j i / L, (j+1) i / L),
 *                    integer division), each group's total spread evenly
 *                    over the group's bins where P is non-zero, zero
 *                    elsewhere; both normalised. Where P > 0 but Q = 0
 *                    (the folded outliers in a group with nothing
 *                    else) Q gets 1e-4 and the other bins of Q are scaled
 *                    by (1 - 1e-4 z), z the number of such bins, so Q
 *                    stays a distribution. The i with the least
 *                    KL(P || Q) = sum p log(p / q) wins (the first on a
 *                    tie), T = A i / M. Result: signed data [-T, T]
 *                    (within the data, as above); non-negative data
 *                    [0, T]; non-positive data [-T, 0]. O(M L) work with
 *                    prefix sums. As in TensorRT the least threshold is
 *                    L / M of A (1/16 for signed int8 at 2048 bins): data
 *                    whose bulk lies in fewer bins (a few huge outliers)
 *                    cannot be clipped tighter than that.
 *
 * Everything is deterministic: the same statistics give the same range
 * bit for bit. No globals; range_choose's scratch memory is malloc'd and
 * freed (its only failure, reported as -1).
 */
#ifndef TVMCC_QUANT_RANGES_H
#define TVMCC_QUANT_RANGES_H

#include <stdint.h>

#include "../ir/arena.h"
#include "../ir/dtype.h"

#define RANGE_DEFAULT_BINS 2048
#define RANGE_DEFAULT_PERCENTILE 99.99

typedef struct RangeStats {
    int64_t count;          /* finite values seen in pass 1 */
    int64_t nonfinite;      /* NaN/Inf seen (ignored for the range) */
    double min, max, sum, sumsq; /* of the finite values; min, max 0 while count is 0 */
    int nbins;              /* 0 until range_hist_begin */
    double lo, hi;          /* histogram span, fixed by range_hist_begin */
    uint64_t *bins;         /* nbins counts (from the Arena) */
    int64_t hist_count;     /* finite values counted in the histogram (pass 2) */
} RangeStats;

void range_init(RangeStats *r);
/* pass 1 */
void range_add(RangeStats *r, const float *x, int64_t n);
/* Lays out nbins (>= 1; 0 or less means RANGE_DEFAULT_BINS) bins over the
 * span described above: 0 ok, -1 no memory. An empty or all-zero tensor
 * gets the span [0, 1]. */
int range_hist_begin(RangeStats *r, Arena *a, int nbins);
/* pass 2 */
void range_hist_add(RangeStats *r, const float *x, int64_t n);

typedef enum RangeMethod { RANGE_MINMAX, RANGE_PERCENTILE, RANGE_MSE, RANGE_ENTROPY } RangeMethod;

/* int8 -128..127 asymmetric, uint8 0..255 asymmetric, int16 -32768..32767
 * symmetric (zero point 0) */
typedef struct QGrid {
    int32_t qmin, qmax;
    int symmetric;
} QGrid;

/* The grid of an activation type (DT_INT8, DT_UINT8, DT_INT16): 0, or -1
 * for any other type. */
int range_grid(DType t, QGrid *g);

/* The clipping range for the grid (see the methods above); always contains 0;
 * minmax needs no histogram. 0 ok; -1 an unknown method, a percentile
 * outside (0, 100], a histogram method before range_hist_begin, or no
 * memory for scratch. */
int range_choose(const RangeStats *r, RangeMethod m, double percentile, QGrid g,
                 double *rmin, double *rmax);
/* Scale and zero point of a range, as test/qdq/quantize.py act_params does:
 * the range widened to contain 0 in float32; symmetric: [-absmax, absmax],
 * zp 0; scale = float32((rmax - rmin) / (qmax - qmin)); zp = round half to
 * even of (qmin - rmin / scale) in float32, clamped to [qmin, qmax];
 * rmin == rmax: scale 1, zp 0. Where act_params would give a scale of 0
 * (underflow) it gives scale 1, zp 0; where inf (overflow), FLT_MAX. */
void range_qparams(double rmin, double rmax, QGrid g, float *scale, int32_t *zp);
/* Expected squared error per value of quantizing the histogrammed data to
 * the grid with range [rmin, rmax] (through range_qparams): rounding noise
 * inside the grid, clipping error outside, integrated exactly over each
 * bin's uniform density. -1 when there is no histogram or it is empty. */
double range_expected_mse(const RangeStats *r, QGrid g, double rmin, double rmax);

const char *range_method_name(RangeMethod m);
/* "minmax", "percentile", "mse", "entropy": 0 ok, -1 unknown */
int range_method_parse(const char *s, RangeMethod *m);

#endif
