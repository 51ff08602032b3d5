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
                         PARAMS_EINSUM, PARAMS_AXIS, PARAMS_SCALAR, PARAMS_SLICE, PARAMS_PAD,
                         PARAMS_PERM, PARAMS_RNN, PARAMS_VISION, PARAMS_LOSS,
                         PARAMS_STRING, PARAMS_XFMR, PARAMS_ML } ParamKind;

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
    int32_t lp;                       /* LpPool: the norm's p */
    int64_t offset_group;             /* DeformConv */
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

/* Resize (opset 10 to 19). The enums follow the order of the ONNX value
 * lists. Before opset 11 the coordinates are asymmetric and nearest rounds
 * down, like the Upsample Resize-10 replaced. From opset 18 the scales,
 * sizes and roi inputs may cover only the dimensions listed in `axes`:
 * axis_of[i] is the entry of dimension i in them, -1 for a dimension left
 * as it is. */
typedef enum ResizeMode { RESIZE_NEAREST, RESIZE_LINEAR, RESIZE_CUBIC } ResizeMode;
typedef enum ResizeCoord {
    CT_HALF, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_NN, CT_CROP, CT_HALF_SYM
} ResizeCoord;
/* keep_aspect_ratio_policy (opset 18) */
typedef enum ResizePolicy { RP_STRETCH, RP_NOT_LARGER, RP_NOT_SMALLER } ResizePolicy;
typedef enum ResizeRound { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL } ResizeRound;

typedef struct ResizeParams {
    uint8_t mode;                     /* ResizeMode */
    uint8_t coord;                    /* ResizeCoord (coordinate_transformation_mode) */
    uint8_t round;                    /* ResizeRound (nearest_mode) */
    uint8_t exclude_outside;          /* cubic taps outside the input get weight 0 */
    uint8_t antialias;                /* linear/cubic filter widened by 1/scale downscaling */
    uint8_t policy;                   /* ResizePolicy (sizes only) */
    int8_t n_axes;                    /* entries of scales/sizes (rank without axes) */
    int8_t axis_of[TVMCC_MAX_RANK];   /* entry of scales/sizes/roi per dimension, or -1 */
    double policy_scale;              /* the one scale of not_larger/not_smaller */
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

/* The operators whose parameters are one axis and a few switches: the
 * data-movement, index, sequence and softmax families, the arg-reductions,
 * TopK, CumSum, DFT, the quantizers. Each field is named after the ONNX
 * attribute it holds; an op leaves the fields it has not at 0. */
typedef enum ScatterReduce { SCATTER_NONE, SCATTER_ADD, SCATTER_MUL, SCATTER_MAX,
                             SCATTER_MIN } ScatterReduce;
typedef struct AxisParams {
    int axis;                 /* in [0, rank): rank of the input (Concat: of input 0;
                               * OneHot: of the output; DFT: rank - 1;
                               * ConcatFromSequence with new_axis: rank + 1);
                               * -1 when the op has none (Compress without axis,
                               * CumSum: an input, a quantizer with a scalar
                               * scale, ScatterND) */
    int time_axis;            /* ReverseSequence (axis: batch_axis) */
    int64_t batch_dims;       /* GatherND */
    int64_t blocksize;        /* DepthToSpace, SpaceToDepth; QuantizeLinear and
                               * DequantizeLinear: block_size of blocked
                               * parameters (axis: the blocked axis), else 0 */
    uint8_t crd;              /* DepthToSpace mode CRD (else DCR) */
    uint8_t select_last_index; /* ArgMax, ArgMin */
    uint8_t largest;          /* TopK */
    uint8_t exclusive, reverse; /* CumSum */
    uint8_t new_axis;         /* ConcatFromSequence */
    uint8_t inverse;          /* DFT */
    uint8_t runtime_axis;     /* DFT (opset 20): the axis input is known at run time */
    uint8_t reduction;        /* ScatterElements, ScatterND: ScatterReduce */
    uint8_t circular;         /* TensorScatter mode circular (else linear) */
    uint8_t coerce_2d;        /* QLinearSoftmax with attribute opset < 13: every
                               * dimension from axis on is normalised */
    uint8_t sorted;           /* Unique */
} AxisParams;

/* The operators whose parameters are a few numbers and switches: the
 * activations (LeakyRelu, HardSigmoid, Elu, Selu, Celu, ThresholdedRelu,
 * Shrink, Clip before opset 11), Mod, BitShift, IsInf, Trilu, EyeLike,
 * the window generators, ConstantOfShape, Gemm and the normalizations (BatchNormalization,
 * InstanceNormalization, LayerNormalization, MeanVarianceNormalization,
 * LRN). Fields are named after the ONNX attribute and hold its default
 * when it is absent; an op leaves the fields it has not at 0. */
typedef struct ScalarParams {
    double alpha, beta, gamma;  /* activations, Gemm, LRN */
    double lambd, bias;         /* Shrink; LRN bias */
    double min, max;            /* Clip before opset 11, when has_min / has_max */
    double epsilon;             /* the normalizations */
    double momentum;            /* BatchNormalization (training mode) */
    int64_t size;               /* LRN */
    int64_t k;                  /* EyeLike */
    int64_t p;                  /* LpNormalization: 1 or 2 */
    int64_t num_groups;         /* GroupNormalization */
    int axis;                   /* LayerNormalization, normalized */
    unsigned mask;              /* MeanVarianceNormalization: bit i, dimension i */
    uint8_t has_min, has_max;   /* Clip before opset 11 */
    uint8_t fmod;               /* Mod */
    uint8_t left;               /* BitShift direction LEFT (else RIGHT) */
    uint8_t detect_negative, detect_positive; /* IsInf */
    uint8_t upper;              /* Trilu */
    uint8_t periodic;           /* HannWindow, HammingWindow, BlackmanWindow */
    uint8_t training;           /* BatchNormalization training_mode (opset 14+);
                                 * Dropout: training mode possible (set or
                                 * decided at run time) */
    int64_t seed;               /* Dropout */
    uint8_t trans_a, trans_b;   /* Gemm */
    uint8_t fill_dtype;         /* ConstantOfShape: DType of value (DT_UNDEF: absent) */
    double fill;                /* ConstantOfShape value of a float type */
    int64_t fill_int;           /* ConstantOfShape value of an integer or bool type */
} ScalarParams;

/* Slice: the entries of starts/axes/steps (ends only shape the output,
 * whose extents inference computed), axes normalized, steps non-zero,
 * axes distinct. When one of the inputs is computed at run time (from
 * opset 10 they are inputs) `runtime` is set and the lowering builds the
 * bounds from the inputs in the kernel, extents from the declared shape. */
typedef struct SliceParams {
    uint8_t runtime;
    int n;                              /* entries */
    int64_t start[TVMCC_MAX_RANK];      /* as given (negative: from the end) */
    int axis[TVMCC_MAX_RANK];
    int64_t step[TVMCC_MAX_RANK];
} SliceParams;

/* Pad: mode, and per entry of pads the axis it pads (the axes input, or
 * 0..rank-1) and, when the pads are compile-time constants, the leading
 * pad; `runtime_pads`: the pads input is computed at run time (entry i's
 * leading pad is its element i), `runtime_axes`: so are the axes (the
 * lowering selects each axis' pad in the kernel). The trailing pads only shape the output. */
typedef enum PadMode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } PadMode;
typedef struct PadParams {
    uint8_t mode;                       /* PadMode */
    uint8_t runtime_pads, runtime_axes;
    int n;                              /* entries */
    int axis[TVMCC_MAX_RANK];
    int64_t begin[TVMCC_MAX_RANK];      /* leading pad of entry i */
    double value;                       /* constant before opset 11 (then an input) */
} PadParams;

/* Transpose: output axis i is input axis perm[i] (the default reverses).
 * Passes that add a Transpose set it with node_set_perm(). */
typedef struct PermParams {
    int rank;
    int perm[TVMCC_MAX_RANK];
} PermParams;

/* RNN, GRU, LSTM: direction, layout and the activations per direction
 * (RNN 1, GRU 2, LSTM 3), checked against the supported list. */
typedef enum RnnAct { ACT_SIGMOID, ACT_TANH, ACT_RELU, ACT_LEAKY_RELU, ACT_HARD_SIGMOID,
                      ACT_AFFINE, ACT_SCALED_TANH, ACT_THRESHOLDED_RELU, ACT_ELU,
                      ACT_SOFTSIGN, ACT_SOFTPLUS } RnnAct;
typedef struct RnnParams {
    uint8_t dirs;                       /* 2 when bidirectional */
    uint8_t reverse;                    /* direction "reverse" */
    uint8_t layout;                     /* 1: batch first */
    uint8_t linear_before_reset;        /* GRU */
    double clip;                        /* 0: none */
    uint8_t act[2][3];                  /* RnnAct per direction and slot */
    double alpha[2][3], beta[2][3];     /* activation_alpha/beta or the defaults */
} RnnParams;

/* GridSample, RoiAlign, NonMaxSuppression. */
typedef enum SampleMode { SAMPLE_LINEAR, SAMPLE_NEAREST, SAMPLE_CUBIC } SampleMode;
typedef enum SamplePad { SAMPLE_ZEROS, SAMPLE_BORDER, SAMPLE_REFLECTION } SamplePad;
typedef struct VisionParams {
    uint8_t mode;                       /* GridSample: SampleMode */
    uint8_t padding_mode;               /* GridSample: SamplePad */
    uint8_t align_corners;              /* GridSample */
    uint8_t max_mode;                   /* RoiAlign mode max (else avg) */
    uint8_t half_pixel;                 /* RoiAlign coordinate_transformation_mode */
    double spatial_scale;               /* RoiAlign */
    int64_t sampling_ratio;             /* RoiAlign; 0: adaptive */
    uint8_t center_point_box;           /* NonMaxSuppression */
} VisionParams;

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss. */
typedef enum LossReduce { LOSS_NONE, LOSS_SUM, LOSS_MEAN } LossReduce;
typedef struct LossParams {
    uint8_t reduction;                  /* LossReduce */
    uint8_t has_ignore_index;
    int64_t ignore_index;
} LossParams;

/* String operators (frontend/infer_string.c). */
typedef enum CaseAction { CASE_NONE, CASE_LOWER, CASE_UPPER } CaseAction;
typedef struct StringParams {
    /* StringNormalizer */
    uint8_t case_change_action;         /* CaseAction */
    uint8_t is_case_sensitive;
    int n_stopwords;
    const char **stopwords;             /* the attribute's strings (arena) */
    /* StringSplit */
    const char *delimiter;              /* "" (or absent): runs of whitespace */
    int64_t maxsplit;                   /* -1: no limit */
    /* RegexFullMatch: the pattern compiled by regex_compile()
     * (frontend/regex.h), the table tvmrt_regex_full_match() runs */
    int n_prog;
    const int32_t *prog;
    /* TfIdfVectorizer: `table` is a constant int64 value [cols, 1 + max_n],
     * row j the length of the n-gram counted in output column j (0: none)
     * and its items; `weights` a constant float value [cols] (-1: mode TF) */
    int32_t table, weights;
    int max_n, max_skip;
    uint8_t mode;                       /* TfIdfMode */
    /* LabelEncoder: n_keys keys sorted (strcmp order, or numeric with NaN
     * last) and their values, the default after them: strings in
     * skeys / svalues, numbers in the constant values `keys` / `values`
     * (-1 when strings) */
    int n_keys;
    const char **skeys, **svalues;
    int32_t keys, values;
} StringParams;
typedef enum TfIdfMode { TFIDF_TF, TFIDF_IDF, TFIDF_TFIDF } TfIdfMode;

/* An operator computed on quantized integers (Node.quant), set by
 * passes/quantize.c on the Conv, Gemm, MatMul, Add, Mul, AveragePool,
 * GlobalAveragePool, Identity (a rescale) or lookup-table unary node that
 * replaces a DequantizeLinear -> op -> [Relu|Clip] -> QuantizeLinear
 * pattern, or a QOperator node (QLinearConv, QLinearMatMul, the
 * com.microsoft QLinear* ops). The node's inputs are then the quantized
 * tensors and its output the quantized output; lower/op_quant.c computes it
 * with integers only.
 *
 * Requantization of an int32 sum `acc` (docs/quantization.md):
 *
 *     y = clamp(zy + floor((acc * mult[c] + 2^(shift-1)) / 2^shift), lo, hi)
 *
 * with the real multiplier s_x * s_w[c] / s_y = mult[c] / 2^shift, mult[c]
 * < 2^31 and one shift for all channels (the largest that keeps every
 * mult[c] below 2^31). The floor division is computed without a signed
 * shift: the 64-bit product plus 2^62 + 2^(shift-1) is shifted as an
 * unsigned number and 2^(62-shift) subtracted. Rounding is half up (ties
 * toward +infinity). */
/* ai.onnx.ml operators (frontend/infer_ml.c, lower/op_ml.c). Binarizer:
 * threshold. TreeEnsemble (ai.onnx.ml 5): the nodes_* and leaf_* attributes
 * as arrays of n_nodes and n_leaves entries (splits and weights as double),
 * the trees' roots, and per node the run of membership_values its MEMBER
 * test uses (member_start, member_count). The trees were checked to be
 * trees (every child index in range, no cycle). */
typedef enum TreeMode { TREE_LEQ, TREE_LT, TREE_GTE, TREE_GT, TREE_EQ, TREE_NEQ,
                        TREE_MEMBER } TreeMode;
typedef enum TreeAggregate { TREE_AVERAGE, TREE_SUM, TREE_MIN, TREE_MAX } TreeAggregate;
typedef struct MlParams {
    double threshold;               /* Binarizer */
    int64_t n_nodes, n_leaves, n_trees, n_targets;
    uint8_t aggregate;              /* TreeAggregate */
    const uint8_t *mode;            /* [n_nodes] TreeMode */
    const int64_t *feature;         /* [n_nodes] column of X */
    const double *split;            /* [n_nodes] */
    const int64_t *true_id, *false_id; /* [n_nodes] node or leaf index */
    const uint8_t *true_leaf, *false_leaf, *missing_true; /* [n_nodes] */
    const int64_t *member_start, *member_count; /* [n_nodes] into members */
    const double *members;
    const double *leaf_weight;      /* [n_leaves] */
    const int64_t *leaf_target;     /* [n_leaves] */
    const int64_t *roots;           /* [n_trees] */
} MlParams;

typedef enum QuantKind {
    QK_SUM = 1,   /* Conv, Gemm, MatMul: acc = init[c] + sum x * (w - zw) */
    QK_ADD,       /* Add: acc = mult[0] * (a - za) + mult2 * (b - zb) */
    QK_MUL,       /* Mul: acc = (a - za) * (b - zb) */
    QK_POOL,      /* AveragePool, GlobalAveragePool: acc = sum (x - zx) */
    QK_RESCALE,   /* Identity: acc = x - zx */
    QK_TABLE      /* unary: y = table[x - type min] */
} QuantKind;

typedef struct QuantParams {
    uint8_t kind;              /* QuantKind */
    uint8_t xtype;             /* DType of the quantized input(s) */
    int32_t zx, zx2;           /* zero points of input 0 and input 1 */
    int32_t zw;                /* zero point of the weights (QK_SUM, per tensor) */
    int32_t zy;                /* zero point of the output */
    double sy;                 /* scale of the output */
    int32_t lo, hi;            /* output clamp: the type's range, narrowed by a
                                * fused Relu or Clip */
    int nch;                   /* multipliers: 1, or one per output channel */
    const int32_t *mult;       /* [nch] */
    int32_t mult_v;            /* value holding mult when nch > 1, else -1 */
    int32_t mult2;             /* QK_ADD: multiplier of input 1 */
    int shift;                 /* 1..62 */
    int32_t init;              /* QK_SUM: value of the int32 [nch or 1] start
                                * of every sum (bias - zx * sum of weights) */
    int32_t table;             /* QK_TABLE: value of the [256] table */
    int32_t weights_b;         /* QK_SUM with two activations (MatMul): 1 */
} QuantParams;

/* The transformer operators (frontend/infer_xfmr.c, lower/op_xfmr.c).
 * Attention: Q, K, V as [B, heads, seq, head size] views (3-D inputs
 * [B, seq, heads * head size] are split by q_num_heads / kv_num_heads), the
 * scale resolved (default 1 / sqrt(head size)), softcap 0 when absent,
 * qk_mode the qk_matmul_output_mode. RotaryEmbedding: num_heads and
 * rot_dim resolved from the input's shape, interleaved. Gelu: tanh. Swish:
 * alpha. */
typedef struct XfmrParams {
    int64_t batch, q_heads, kv_heads, q_seq, kv_seq, past_seq, head, v_head;
    uint8_t three_d;            /* Attention: Q, K, V and Y are 3-D */
    uint8_t causal;             /* Attention: is_causal */
    int qk_mode;                /* Attention: qk_matmul_output_mode 0..3 */
    double scale, softcap;      /* Attention */
    int64_t rot_dim;            /* RotaryEmbedding: rotated leading part of a head */
    uint8_t interleaved;        /* RotaryEmbedding */
    uint8_t tanh;               /* Gelu: approximate = "tanh" */
    double alpha;               /* Swish */
} XfmrParams;

#endif
