/*
 * Post-training quantization (`tvmcc quantize`, cmd/quantize.c): a float
 * ONNX model and calibration samples in, a QDQ model out.
 *
 *   ptq_prepare      quant/prepare.c   opset 13 forms, Div by a constant -> Mul
 *   ptq_equalize     quant/equalize.c  cross-layer equalization
 *   qdq_needs        quant/qdq.c       which tensors need a range (and which a
 *                                      per-channel mean, for bias correction)
 *   calib_*          quant/calib.c     the float model compiled for the host with
 *                                      those tensors as outputs, run over the
 *                                      samples: statistics (quant/ranges.c)
 *   qdq_apply        quant/qdq.c       QuantizeLinear/DequantizeLinear inserted,
 *                                      weights and biases quantized
 *
 * The QDQ layout is the one onnxruntime's quantize_static writes
 * (docs/quantization.md, "tvmcc quantize").
 */
#ifndef TVMCC_QUANT_PTQ_H
#define TVMCC_QUANT_PTQ_H

#include "../ir/graph.h"

/* opset-13 forms of older nodes, division by constants as multiplication.
 * 0, or 1 after reporting. */
int ptq_prepare(Graph *g, Diag *d);

typedef struct PtqConfig {
    DType act;                  /* DT_INT8, DT_UINT8 or DT_INT16 activations */
    int per_channel;            /* weights: one scale per output channel */
    int fuse_relu;              /* a Relu/Clip after Conv/Gemm/MatMul/Add is removed
                                 * and the QuantizeLinear takes its range */
    int bias_correction;        /* correct biases for the weights' rounding */
    const char *const *keep_float; /* node names (or names of their first output)
                                 * left in float */
    int n_keep_float;
    const char *const *int16_nodes; /* quantized nodes (names as keep_float)
                                 * whose activation inputs and outputs are
                                 * int16 (symmetric) when act is 8-bit */
    int n_int16;
    const struct HessianSet *hessians; /* Conv weights rounded by GPTQ
                                 * (hessian.h); NULL: to nearest */
} PtqConfig;

/* The range chosen for one activation tensor, and what bias correction
 * needs of it: the mean of each channel over the calibration set (channel
 * axis chan_axis; NULL when not asked for). */
typedef struct TensorRange {
    const char *name;
    double rmin, rmax;
    int have16;                 /* rmin16, rmax16: the range for the int16 */
    double rmin16, rmax16;      /* grid (a tensor of an int16 node) */
    int chan_axis;
    int64_t channels;
    double *chan_mean;
} TensorRange;

typedef struct RangeTable {
    TensorRange *t;
    int n;
} RangeTable;

const TensorRange *range_table_find(const RangeTable *r, const char *name);

/* What calibration must measure on a prepared float graph: the float
 * tensors that get a QuantizeLinear, by name, and for each the channel axis
 * whose means bias correction uses (-1: none). */
typedef struct QdqNeeds {
    const char **names;
    int *chan_axis;
    int n;
} QdqNeeds;

/* Both edit g (a prepared float graph, loaded for this purpose): Relu/Clip
 * fusion, then qdq_apply's insertion. The nodes chosen are the same for the
 * same graph and config. 0, or 1 after reporting. */
int qdq_needs(Graph *g, const PtqConfig *cfg, QdqNeeds *out, Diag *d);
int qdq_apply(Graph *g, const PtqConfig *cfg, const RangeTable *r, Diag *d);

/* The nodes qdq_apply quantized (after it ran): live node indexes whose op
 * computes between a DequantizeLinear and a QuantizeLinear, with the name
 * of their output tensor. For the report and the --max-loss search. */
typedef struct QdqNodeInfo {
    const char *node;           /* node name ("" possible) */
    const char *op;
    const char *output;         /* the float tensor the node produces */
    const char *inputs[4];      /* its activation inputs (float tensor names) */
    int n_inputs;
} QdqNodeInfo;
int qdq_quantized_nodes(Graph *g, const PtqConfig *cfg, QdqNodeInfo **out, Diag *d);

/* How --keep-float and --int16 name a node: by its name, or by the name
 * of its first output. */
int qdq_node_named(const Graph *g, const Node *n, const char *name);

#endif
