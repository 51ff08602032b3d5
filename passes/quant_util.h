/*
 * What passes/quantize.c (the QDQ patterns) and passes/quantize_qop.c (the
 * com.microsoft QOperator ops) share: the quantized-tensor and context
 * types, the type ranges, constant parameters, the fixed-point multipliers
 * (ir/params.h QuantParams) and the int32 start of a sum of products.
 * Moved out of quantize.c unchanged (quant_util.c).
 */
#ifndef TVMCC_QUANT_UTIL_H
#define TVMCC_QUANT_UTIL_H

#include "passes.h"

/* A quantized tensor read through a DequantizeLinear: the integer value, its
 * scale(s) and zero point(s). */
typedef struct QT {
    int32_t node;       /* the DQ node */
    int32_t q;          /* its integer input */
    int32_t scale, zp;  /* its parameter inputs (zp -1: absent) */
    int axis;           /* -1: per tensor */
    int64_t n;          /* number of scales */
} QT;

typedef struct Ctx {
    Graph *g;
    Diag *d;
    int *uses;          /* live readers of each value (+1 for a graph output) */
    int32_t n_uses;     /* values counted (the ones before the pass) */
    int rewrites;
} Ctx;

/* The weights' channel layout: C channels along axis `ax` of w, K reduced
 * elements per channel. */
typedef struct WLayout {
    int64_t C, K, cstride, kouter, kinner; /* offset(c, k) = c*cstride + (k/kinner)*kouter + k%kinner */
} WLayout;

int is_q8(DType t);
int is_qtype(DType t);
void qrange(DType t, int32_t *lo, int32_t *hi);
int same_scale(double a, double b);
double pelem(const Graph *g, int32_t v, int64_t i);
int fixed_point(const double *m, int n, int32_t *mult, int *shift);
QuantParams *new_params(Graph *g, QuantKind kind, DType xt, int32_t zx, double sy,
                        int32_t zy, DType ty);
int32_t new_const(Graph *g, const char *name, DType t, int64_t n, void *data);
int64_t woff(const WLayout *l, int64_t c, int64_t k);
int sum_params(Ctx *c, int32_t ni, QuantParams *q, double sx, const QT *w, const WLayout *l,
               const QT *bq, int32_t bias_f, double alpha, double beta, double sy);
int weights_ok(const Graph *g, const QT *w, int chan_axis, int64_t C);
int32_t *new_inputs(Graph *g, Node *n, int count);
int bias_ok(const Graph *g, int32_t b, int64_t C);

/* passes/quantize_qop.c: the com.microsoft QOperator node ni made the
 * integer operator (Node.quant) when its parameters allow, else left for
 * its float lowering (lower/op_quant.c). */
void rewrite_qop(Ctx *c, int32_t ni);

#endif
