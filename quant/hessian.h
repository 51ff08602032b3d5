/*
 * Hessian-aware rounding of convolution weights (tvmcc quantize,
 * --weight-rounding gptq): the second moment of each Conv's input patches,
 * measured during calibration, and the GPTQ rounding that uses it (Frantar
 * et al., "GPTQ: Accurate Post-Training Quantization for Generative
 * Pre-trained Transformers", ICLR 2023, from the paper's description).
 */
#ifndef TVMCC_QUANT_HESSIAN_H
#define TVMCC_QUANT_HESSIAN_H

#include <stdint.h>
#include <stdio.h>

#include "../ir/graph.h"

/* One Conv whose weights are rounded against its input's statistics. */
typedef struct HessianEntry {
    const char *weight;         /* the weight initializer's name (the key) */
    const char *input;          /* the float tensor the Conv reads */
    int need;                   /* its index in the calibration's tensors */
    int64_t groups, icpg, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    int64_t k;                  /* icpg * kh * kw: one weight row */
    double *h;                  /* groups x k x k: sum of x x^T (upper half);
                                 * after hessian_finish the upper Cholesky
                                 * factor U of the damped inverse */
    int64_t count;              /* patches summed */
    int ok;                     /* U is valid */
} HessianEntry;

typedef struct HessianSet {
    HessianEntry *e;
    int n;
} HessianSet;

/* The Convs of g (a prepared float graph) with constant float weights whose
 * input is one of names[0..n_names) (the tensors calibration sees). A Conv
 * whose weight row is longer than HESSIAN_MAX_K is left out. */
#define HESSIAN_MAX_K 2304
int hessian_plan(Arena *a, const Graph *g, const char *const *names, int n_names,
                 HessianSet *out);

/* Adds one sample's input tensor x (N, C, H, W float) to e. */
void hessian_add(HessianEntry *e, const float *x, const int64_t *dims);

/* Turns each entry's sums into the factors the rounding uses. Entries that
 * saw nothing or whose matrix stays singular are disabled (logged to log
 * when not NULL). */
void hessian_finish(HessianSet *s, FILE *log);

const HessianEntry *hessian_find(const HessianSet *s, const char *weight);

/* GPTQ rounding of one weight row w[0..e->k) of group grp at scale s onto
 * [-127, 127]: each weight in turn rounded to nearest, its error spread over
 * the weights after it as the inverse Hessian says. */
void hessian_round_row(const HessianEntry *e, int64_t grp, const float *w, float s, int8_t *q);

#endif
