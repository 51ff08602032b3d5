/*
 * Cross-layer equalization (Nagel et al., "Data-Free Quantization Through
 * Weight Equalization and Bias Correction", ICCV 2019) on the IR graph,
 * run by `tvmcc quantize` on the float model before calibration, so that
 * per-tensor int8 weights lose less of their small channels.
 */
#ifndef TVMCC_QUANT_EQUALIZE_H
#define TVMCC_QUANT_EQUALIZE_H

#include <stdio.h>

#include "../ir/graph.h"

/* Equalizes the per-channel weight ranges of consecutive layers: a Conv,
 * Gemm or MatMul with constant float32 weights, optionally Relu,
 * LeakyRelu or PRelu, then a second such layer reading its output. Repeats
 * over all pairs until every channel scale is within 1e-4 of 1 or
 * max_rounds rounds have run. Changed weights and biases get new arrays
 * from g->arena (the loader's bytes are never written); a weight or bias
 * that another node also reads is first copied into a value of its own.
 * Returns the number of layer pairs rescaled; writes one line per pair
 * found (rescaled or skipped, and why) to `log` when non-NULL. */
int ptq_equalize(Graph *g, int max_rounds, FILE *log);

#endif
