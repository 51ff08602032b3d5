/*
 * Parsed operator parameters: what an operator's attributes (and constant
 * shape-like inputs) mean once they have been checked, one struct per op
 * family. infer_<Op>() (frontend/) reads and validates the attributes and
 * fills the struct; it is stored on the Node (Node.params), and lower/ and
 * passes/ read the struct, never the attributes again. So each rule (auto_pad
 * arithmetic, negative axes, defaults per opset) is written once, in the
 * frontend, and the lowering cannot disagree with the shapes inference gave.
 *
 * A node created after inference (the layout pass's transposes) is of an op
 * without parsed parameters, or copies them from the node it replaces.
 * Asking for parameters a node does not have is an internal error
 * (node_window() and node_reduce() die), since inference sets them for every
 * node it accepts.
 */
#ifndef TVMCC_PARAMS_H
#define TVMCC_PARAMS_H

#include <stdint.h>

#define TVMCC_MAX_SPATIAL 6  /* spatial dimensions of a window (rank 8 - N - C) */

/* Which struct Node.params points to. */
typedef enum ParamKind { PARAMS_NONE = 0, PARAMS_WINDOW, PARAMS_REDUCE } ParamKind;

/* The sliding window of a convolution or pooling node (Conv, ConvInteger,
 * QLinearConv, ConvTranspose, MaxPool, AveragePool, MaxUnpool), spatial
 * dimensions in ONNX order (D1..Dn of N x C x D1..Dn), whatever layout the
 * layout pass later gives the activations. */
typedef struct ConvWindow {
    int nsp;                          /* number of spatial dimensions */
    int64_t kernel[TVMCC_MAX_SPATIAL];    /* kernel extent (from the weights for convs) */
    int64_t strides[TVMCC_MAX_SPATIAL];
    int64_t dilations[TVMCC_MAX_SPATIAL];
    int64_t pad_begin[TVMCC_MAX_SPATIAL]; /* after auto_pad (ConvTranspose: derived from
                                           * output_shape when given) */
    int64_t pad_end[TVMCC_MAX_SPATIAL];
    int64_t out[TVMCC_MAX_SPATIAL];       /* output extent (MaxUnpool: the default
                                           * unpooled extent, which indices refer to) */
    int64_t output_padding[TVMCC_MAX_SPATIAL]; /* ConvTranspose; 0 otherwise */
    int64_t group;                    /* 1 for pooling */
    uint8_t ceil_mode;                /* pooling: output extent rounded up */
    uint8_t count_include_pad;        /* AveragePool: pads count in the divisor */
    uint8_t storage_order;            /* MaxPool: Indices with column-major spatial dims */
} ConvWindow;

/* A Reduce* node. The reduced dimensions are known at compile time unless
 * the axes come from an input that is not a constant; then `runtime_axes` is
 * set and the lowering recovers them from the input and output shapes. */
typedef struct ReduceParams {
    uint8_t keepdims;                 /* reduced dimensions kept with extent 1 */
    uint8_t identity;                 /* empty axes with noop_with_empty_axes: a copy */
    uint8_t runtime_axes;             /* axes input computed at run time */
    unsigned mask;                    /* bit i: input dimension i is reduced */
} ReduceParams;

#endif
