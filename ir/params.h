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
/* included by graph.h, after TVMCC_MAX_RANK */

#include <stdint.h>

#define TVMCC_MAX_SPATIAL 6  /* spatial dimensions of a window (rank 8 - N - C) */

/* Which struct Node.params points to. */
typedef enum ParamKind { PARAMS_NONE = 0, PARAMS_WINDOW, PARAMS_REDUCE, PARAMS_RESIZE,
                         PARAMS_EINSUM } ParamKind;

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

/* Resize (opset 10 to 17). The enums follow the order of the ONNX value
 * lists. Before opset 11 the coordinates are asymmetric and nearest rounds
 * down, like the Upsample Resize-10 replaced. */
typedef enum ResizeMode { RESIZE_NEAREST, RESIZE_LINEAR, RESIZE_CUBIC } ResizeMode;
typedef enum ResizeCoord { CT_HALF, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_CROP } ResizeCoord;
typedef enum ResizeRound { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL } ResizeRound;

typedef struct ResizeParams {
    uint8_t mode;                     /* ResizeMode */
    uint8_t coord;                    /* ResizeCoord (coordinate_transformation_mode) */
    uint8_t round;                    /* ResizeRound (nearest_mode) */
    uint8_t exclude_outside;          /* cubic taps outside the input get weight 0 */
    double cubic_coeff_a;
    double extrapolation_value;       /* tf_crop_and_resize outside the input */
} ResizeParams;

/* Einsum: the equation parsed into labels, 0..51 for the letters a-z A-Z
 * and 52 + j for the ellipsis dimension j counted from the right (they
 * broadcast right-aligned). The output labels are the explicit right-hand
 * side, or without "->" the ellipsis then the labels used once, in order. */
#define EINSUM_MAX_OPERANDS 16
typedef struct EinsumParams {
    int n_ops;                                        /* operands (inputs) */
    uint8_t nlab[EINSUM_MAX_OPERANDS];                /* = the operand's rank */
    uint8_t lab[EINSUM_MAX_OPERANDS][TVMCC_MAX_RANK]; /* label of each dimension */
    int nout;                                         /* output rank */
    uint8_t out[TVMCC_MAX_RANK];                      /* label of each output dimension */
} EinsumParams;

#endif
