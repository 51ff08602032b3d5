/*
 * Calibration statistics and range selection for `tvmcc quantize`
 * (quant/ranges.c).
 *
 * Calibration runs the float model over the samples twice. Pass 1
 * (range_add) records each tensor's count, min, max, sum and sum of
 * squares; pass 2 (after range_hist_begin fixes the span) fills a histogram
 * of NBINS equal bins over [min(min, 0), max(max, 0)]. A method then picks
 * the clipping range [rmin, rmax] of the tensor for a quantization grid of
 * qmax - qmin + 1 levels; range_qparams turns it into a scale and a zero
 * point. NaN and infinities are counted and left out.
 *
 * Methods (docs/quantization.md, "Calibration methods"):
 *   minmax      [min, max], widened to contain 0; needs no histogram.
 *   percentile  the tails cut so that P percent of the values lie inside:
 *               for data of one sign the whole (100 - P) percent from the
 *               far tail, for data of both signs half of it from each.
 *   mse         the range with the least expected squared error
 *               (range_expected_mse), searched over every pair of bin
 *               edges below and above 0 (exact sums over the bins, O(1)
 *               per pair with prefix sums; symmetric grids: -b, b).
 *   entropy     the threshold with the least KL divergence between the
 *               clipped histogram and its quantized form (the method of
 *               TensorRT's int8 calibration as published): for data of one
 *               sign [0, T] with all the grid's levels, else [-T, T] on
 *               the histogram of |x| with half of them.
 * All are deterministic: the same statistics give the same range bit for
 * bit. A tensor with no finite value gets [0, 0].
 */
#ifndef TVMCC_QUANT_RANGES_H
#define TVMCC_QUANT_RANGES_H

#include <stdint.h>

#include "../ir/arena.h"

typedef struct RangeStats {
    int64_t count;              /* finite values seen in pass 1 */
    int64_t nonfinite;          /* NaN and infinities seen (left out) */
    double min, max, sum, sumsq;
    int nbins;                  /* 0 until range_hist_begin */
    double lo, hi;              /* the histogram's span */
    uint64_t *bins;
    int64_t hist_count;
} RangeStats;

typedef enum RangeMethod { RANGE_MINMAX, RANGE_PERCENTILE, RANGE_MSE, RANGE_ENTROPY } RangeMethod;

/* The quantization grid: int8 -128..127 and uint8 0..255 asymmetric,
 * int16 -32768..32767 symmetric (zero point 0). */
typedef struct QGrid {
    int32_t qmin, qmax;
    int symmetric;
} QGrid;

void range_init(RangeStats *r);
void range_add(RangeStats *r, const float *x, int64_t n);
/* Fixes the histogram span from pass 1; 0, or -1 when out of memory. */
int range_hist_begin(RangeStats *r, Arena *a, int nbins);
void range_hist_add(RangeStats *r, const float *x, int64_t n);
/* The clipping range for the grid (always containing 0). A method that
 * needs the histogram falls back to minmax without one. 0, or -1 for an
 * unknown method. */
int range_choose(const RangeStats *r, RangeMethod m, double percentile, QGrid g, double *rmin,
                 double *rmax);
/* Scale and zero point of a range, as onnxruntime's quantizer computes
 * them: the range widened to contain 0 (symmetric grids: [-m, m], m the
 * larger magnitude), scale = (rmax - rmin) / (qmax - qmin) in float32,
 * zp = round(qmin - rmin / scale) (half to even) clamped to the grid; an
 * empty range gives scale 1, zero point 0. */
void range_qparams(double rmin, double rmax, QGrid g, float *scale, int32_t *zp);
/* Expected squared error per value of quantizing the histogrammed data to
 * the grid over [rmin, rmax]: rounding noise step^2 / 12 inside, the
 * distance to the nearer bound outside (bin centres stand for their
 * values). -1 without a histogram. */
double range_expected_mse(const RangeStats *r, QGrid g, double rmin, double rmax);
const char *range_method_name(RangeMethod m);
int range_method_parse(const char *s, RangeMethod *m); /* 0, or -1 if unknown */

#endif
