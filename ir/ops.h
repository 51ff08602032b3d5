/*
 * The operator table: the only list of operators in tvmcc. Each row is
 *
 *   OP(Name, min_inputs, max_inputs, min_outputs, max_outputs, category)
 *
 * Name is the ONNX op_type in the default domain. The category is the fusion
 * class of the TVM paper: INJECTIVE (one-to-one index map: elementwise,
 * broadcast, reshape, transpose, slice...), REDUCTION, COMPLEX (complex
 * out-fusable: conv, matmul, pooling) and OPAQUE (never fused).
 *
 * For every row the frontend provides  int infer_<Name>(Graph *, Node *, Diag *)
 * and lower/ provides  int lower_<Name>(Lower *, Node *); both declarations
 * are generated from this table (frontend/infer.h, lower/lower.h).
 * max_inputs of -1 means variadic.
 *
 * A row written OP_NOT_LOWERED(...) is an operator that never reaches
 * lowering: control flow (inlined by frontend/control.c before inference)
 * and the training operators (expanded into plain nodes by
 * frontend/training.c after it). It has an infer_<Name>() but no
 * lower_<Name>(); op_info[].lowered is 0, constant folding skips it, and
 * lower_group() stops with an internal error should one reach it. A file
 * that includes this table without defining OP_NOT_LOWERED reads those rows
 * as ordinary OP rows.
 *
 * A row written OP_UNARY(Name, UN_X) or OP_BINARY(Name, BIN_X) is an
 * elementwise operator whose lowering is one ex_unary (ex_binary) of its
 * input(s) loaded with broadcasting: lower/ has no lower_<Name>() for it,
 * the dispatch table calls lower_unary_row() / lower_binary_row()
 * (lower/op_elemwise.c), which take the UnaryOp / BinaryOp from this column.
 * Elsewhere they read as OP(Name, 1, 1, 1, 1, INJECTIVE) and
 * OP(Name, 2, 2, 1, 1, INJECTIVE) rows.
 */
#ifndef OP_NOT_LOWERED
#define OP_NOT_LOWERED(name, mi, ma, mo, mao, cat) OP(name, mi, ma, mo, mao, cat)
#define TVMCC_OPS_DEFAULT_NOT_LOWERED
#endif
#ifndef OP_UNARY
#define OP_UNARY(name, un) OP(name, 1, 1, 1, 1, INJECTIVE)
#define TVMCC_OPS_DEFAULT_UNARY
#endif
#ifndef OP_BINARY
#define OP_BINARY(name, bin) OP(name, 2, 2, 1, 1, INJECTIVE)
#define TVMCC_OPS_DEFAULT_BINARY
#endif
/* Elementwise unary */
OP(Abs, 1, 1, 1, 1, INJECTIVE)
OP_UNARY(Neg, UN_NEG)
OP(Relu, 1, 1, 1, 1, INJECTIVE)
OP(LeakyRelu, 1, 1, 1, 1, INJECTIVE)
OP_UNARY(Sigmoid, UN_SIGMOID)
OP_UNARY(Tanh, UN_TANH)
OP(HardSigmoid, 1, 1, 1, 1, INJECTIVE)
OP(HardSwish, 1, 1, 1, 1, INJECTIVE)
OP_UNARY(Exp, UN_EXP)
OP_UNARY(Log, UN_LOG)
OP_UNARY(Sqrt, UN_SQRT)
OP_UNARY(Reciprocal, UN_RECIP)
OP_UNARY(Floor, UN_FLOOR)
OP_UNARY(Ceil, UN_CEIL)
OP_UNARY(Sin, UN_SIN)
OP_UNARY(Cos, UN_COS)
OP(Erf, 1, 1, 1, 1, INJECTIVE)
OP(Elu, 1, 1, 1, 1, INJECTIVE)
OP(Selu, 1, 1, 1, 1, INJECTIVE)
OP(Softplus, 1, 1, 1, 1, INJECTIVE)
OP(Softsign, 1, 1, 1, 1, INJECTIVE)
OP(Sign, 1, 1, 1, 1, INJECTIVE)
OP_UNARY(Not, UN_NOT)
OP(Clip, 1, 3, 1, 1, INJECTIVE)
OP(Cast, 1, 1, 1, 1, INJECTIVE)
OP(Identity, 1, 1, 1, 1, INJECTIVE)
OP(Dropout, 1, 3, 1, 2, INJECTIVE)
/* Elementwise binary / variadic with numpy broadcasting */
OP_BINARY(Add, BIN_ADD)
OP_BINARY(Sub, BIN_SUB)
OP_BINARY(Mul, BIN_MUL)
OP(Div, 2, 2, 1, 1, INJECTIVE)
OP(Pow, 2, 2, 1, 1, INJECTIVE)
OP(PRelu, 2, 2, 1, 1, INJECTIVE)
OP_BINARY(Equal, BIN_EQ)
OP_BINARY(Less, BIN_LT)
OP_BINARY(Greater, BIN_GT)
OP_BINARY(LessOrEqual, BIN_LE)
OP_BINARY(GreaterOrEqual, BIN_GE)
OP_BINARY(And, BIN_AND)
OP_BINARY(Or, BIN_OR)
OP_BINARY(Xor, BIN_XOR)
OP(Where, 3, 3, 1, 1, INJECTIVE)
OP(Min, 1, -1, 1, 1, INJECTIVE)
OP(Max, 1, -1, 1, 1, INJECTIVE)
OP(Sum, 1, -1, 1, 1, INJECTIVE)
OP(Mean, 1, -1, 1, 1, INJECTIVE)
/* Data movement */
OP(Reshape, 1, 2, 1, 1, INJECTIVE)
OP(Flatten, 1, 1, 1, 1, INJECTIVE)
OP(Transpose, 1, 1, 1, 1, INJECTIVE)
OP(Squeeze, 1, 2, 1, 1, INJECTIVE)
OP(Unsqueeze, 1, 2, 1, 1, INJECTIVE)
OP(Concat, 1, -1, 1, 1, INJECTIVE)
OP(Split, 1, 2, 1, -1, INJECTIVE)
OP(Slice, 1, 5, 1, 1, INJECTIVE)
OP(Gather, 2, 2, 1, 1, INJECTIVE)
OP(Expand, 2, 2, 1, 1, INJECTIVE)
OP(Tile, 2, 2, 1, 1, INJECTIVE)
OP(Pad, 1, 4, 1, 1, INJECTIVE)
OP(Resize, 1, 4, 1, 1, INJECTIVE)
OP(Shape, 1, 1, 1, 1, OPAQUE)
OP(Size, 1, 1, 1, 1, OPAQUE)
OP(Constant, 0, 0, 1, 1, OPAQUE)
OP(ConstantOfShape, 1, 1, 1, 1, OPAQUE)
OP(Range, 3, 3, 1, 1, OPAQUE)
/* Complex out-fusable */
OP(Conv, 2, 3, 1, 1, COMPLEX)
OP(Gemm, 2, 3, 1, 1, COMPLEX)
OP(MatMul, 2, 2, 1, 1, COMPLEX)
OP(MaxPool, 1, 1, 1, 2, COMPLEX)
OP(AveragePool, 1, 1, 1, 1, COMPLEX)
OP(LpPool, 1, 1, 1, 1, COMPLEX)
OP(GlobalAveragePool, 1, 1, 1, 1, COMPLEX)
OP(GlobalMaxPool, 1, 1, 1, 1, COMPLEX)
OP(BatchNormalization, 5, 5, 1, 3, INJECTIVE)
/* Reductions */
OP(ReduceMean, 1, 2, 1, 1, REDUCTION)
OP(ReduceSum, 1, 2, 1, 1, REDUCTION)
OP(ReduceMax, 1, 2, 1, 1, REDUCTION)
OP(ReduceMin, 1, 2, 1, 1, REDUCTION)
OP(ReduceProd, 1, 2, 1, 1, REDUCTION)
OP(ReduceSumSquare, 1, 2, 1, 1, REDUCTION)
OP(ReduceL1, 1, 2, 1, 1, REDUCTION)
OP(ReduceL2, 1, 2, 1, 1, REDUCTION)
OP(ReduceLogSum, 1, 2, 1, 1, REDUCTION)
OP(ReduceLogSumExp, 1, 2, 1, 1, REDUCTION)
OP(Softmax, 1, 1, 1, 1, REDUCTION)
OP(LogSoftmax, 1, 1, 1, 1, REDUCTION)
/* Further operators of the backend node tests (frontend/infer_extra.c,
 * lower/op_extra.c, lower/op_index.c, lower/op_norm.c) */
OP_UNARY(Tan, UN_TAN)
OP_UNARY(Asin, UN_ASIN)
OP_UNARY(Acos, UN_ACOS)
OP_UNARY(Atan, UN_ATAN)
OP_UNARY(Sinh, UN_SINH)
OP_UNARY(Cosh, UN_COSH)
OP_UNARY(Asinh, UN_ASINH)
OP_UNARY(Acosh, UN_ACOSH)
OP_UNARY(Atanh, UN_ATANH)
OP_UNARY(Round, UN_ROUND)
OP_UNARY(IsNaN, UN_ISNAN)
OP(IsInf, 1, 1, 1, 1, INJECTIVE)
OP(Shrink, 1, 1, 1, 1, INJECTIVE)
OP(ThresholdedRelu, 1, 1, 1, 1, INJECTIVE)
OP(Celu, 1, 1, 1, 1, INJECTIVE)
OP(CastLike, 2, 2, 1, 1, INJECTIVE)
OP(Mod, 2, 2, 1, 1, INJECTIVE)
OP(BitShift, 2, 2, 1, 1, INJECTIVE)
OP_BINARY(BitwiseAnd, BIN_BITAND)
OP_BINARY(BitwiseOr, BIN_BITOR)
OP_BINARY(BitwiseXor, BIN_BITXOR)
OP_UNARY(BitwiseNot, UN_BITNOT)
OP(ArgMax, 1, 1, 1, 1, REDUCTION)
OP(ArgMin, 1, 1, 1, 1, REDUCTION)
OP(Hardmax, 1, 1, 1, 1, REDUCTION)
OP(Trilu, 1, 2, 1, 1, INJECTIVE)
OP(EyeLike, 1, 1, 1, 1, INJECTIVE)
OP(GatherElements, 2, 2, 1, 1, INJECTIVE)
OP(GatherND, 2, 2, 1, 1, INJECTIVE)
OP(DepthToSpace, 1, 1, 1, 1, INJECTIVE)
OP(SpaceToDepth, 1, 1, 1, 1, INJECTIVE)
OP(NegativeLogLikelihoodLoss, 2, 3, 1, 1, REDUCTION)
OP(SoftmaxCrossEntropyLoss, 2, 3, 1, 2, REDUCTION)
OP(LayerNormalization, 2, 3, 1, 3, REDUCTION)
OP(InstanceNormalization, 3, 3, 1, 1, REDUCTION)
OP(MeanVarianceNormalization, 1, 1, 1, 1, REDUCTION)
OP(LRN, 1, 1, 1, 1, REDUCTION)
OP(LpNormalization, 1, 1, 1, 1, REDUCTION)
OP(GroupNormalization, 3, 3, 1, 1, REDUCTION)
OP(CumSum, 2, 2, 1, 1, REDUCTION)
OP(OneHot, 3, 3, 1, 1, INJECTIVE)
OP(ScatterElements, 3, 3, 1, 1, OPAQUE)
OP(Scatter, 3, 3, 1, 1, OPAQUE)
OP(ScatterND, 3, 3, 1, 1, OPAQUE)
OP(TensorScatter, 2, 3, 1, 1, INJECTIVE)
OP(HannWindow, 1, 1, 1, 1, OPAQUE)
OP(HammingWindow, 1, 1, 1, 1, OPAQUE)
OP(BlackmanWindow, 1, 1, 1, 1, OPAQUE)
OP(ConvTranspose, 2, 3, 1, 1, COMPLEX)
OP(Einsum, 1, -1, 1, 1, COMPLEX)
OP(Det, 1, 1, 1, 1, OPAQUE)
/* Quantization (frontend/infer_quant.c, lower/op_quant.c) */
OP(QuantizeLinear, 2, 3, 1, 1, INJECTIVE)
OP(DequantizeLinear, 2, 3, 1, 1, INJECTIVE)
OP(DynamicQuantizeLinear, 1, 1, 3, 3, OPAQUE)
OP(MatMulInteger, 2, 4, 1, 1, COMPLEX)
OP(QLinearMatMul, 8, 8, 1, 1, OPAQUE)
OP(ConvInteger, 2, 4, 1, 1, COMPLEX)
OP(QLinearConv, 8, 9, 1, 1, OPAQUE)
/* onnxruntime's com.microsoft QOperator contrib operators (opset 1; the loader
 * maps them from that domain only). min_inputs stops before the first
 * optional input (a zero point may be omitted in the middle); the infer_
 * function checks the full count. Float-requantizing lowerings in
 * lower/op_quant.c; passes/quantize_qop.c makes integer operators of them. */
OP(QLinearAdd, 2, 8, 1, 1, OPAQUE)
OP(QLinearMul, 2, 8, 1, 1, OPAQUE)
OP(QLinearGlobalAveragePool, 5, 5, 1, 1, OPAQUE)
OP(QLinearAveragePool, 2, 5, 1, 1, OPAQUE)
OP(QLinearConcat, 5, -1, 1, 1, OPAQUE)
OP(QLinearSigmoid, 2, 5, 1, 1, OPAQUE)
OP(QLinearLeakyRelu, 2, 5, 1, 1, OPAQUE)
OP(QLinearSoftmax, 2, 5, 1, 1, OPAQUE)
OP(QGemm, 6, 9, 1, 1, OPAQUE)
/* Selection and rearrangement (frontend/infer_more.c, lower/op_more.c) */
OP(TopK, 1, 2, 2, 2, OPAQUE)
OP(ReverseSequence, 2, 2, 1, 1, INJECTIVE)
OP(Compress, 2, 2, 1, 1, OPAQUE)
OP(MaxUnpool, 2, 3, 1, 1, OPAQUE)
OP(Upsample, 1, 2, 1, 1, INJECTIVE)
/* Recurrent layers (frontend/infer_rnn.c, lower/op_rnn.c) */
OP(RNN, 3, 6, 0, 2, OPAQUE)
OP(GRU, 3, 6, 0, 2, OPAQUE)
OP(LSTM, 3, 8, 0, 3, OPAQUE)
OP(DFT, 1, 3, 1, 1, OPAQUE)
/* Control flow: inlined before inference (frontend/control.c); the rows let
 * the loader accept the nodes */
OP_NOT_LOWERED(If, 1, 1, 1, -1, OPAQUE)
OP_NOT_LOWERED(Loop, 2, -1, 1, -1, OPAQUE)
OP_NOT_LOWERED(Scan, 1, -1, 1, -1, OPAQUE)
/* Strings (frontend/infer_string.c, lower/op_string.c): a runtime call */
OP(StringNormalizer, 1, 1, 1, 1, OPAQUE)
OP(StringConcat, 2, 2, 1, 1, OPAQUE)
OP(StringSplit, 1, 1, 2, 2, OPAQUE)
OP(RegexFullMatch, 1, 1, 1, 1, OPAQUE)
OP(LabelEncoder, 1, 1, 1, 1, OPAQUE) /* domain ai.onnx.ml */
/* n-gram counts of integer rows: tensor expressions (lower/op_string.c) */
OP(TfIdfVectorizer, 1, 1, 1, 1, OPAQUE)
/* Data-dependent output counts, checked at run time (frontend/infer_datadep.c,
 * lower/op_datadep.c): a runtime call */
OP(NonZero, 1, 1, 1, 1, OPAQUE)
OP(Unique, 1, 1, 1, 4, OPAQUE)
/* Training (domain ai.onnx.preview.training): expanded into ordinary nodes
 * after inference (frontend/training.c) */
OP_NOT_LOWERED(Gradient, 1, -1, 1, -1, OPAQUE)
OP_NOT_LOWERED(Adagrad, 5, -1, 2, -1, OPAQUE)
OP_NOT_LOWERED(Adam, 6, -1, 3, -1, OPAQUE)
OP_NOT_LOWERED(Momentum, 5, -1, 2, -1, OPAQUE)
/* Vision (frontend/infer_vision.c, lower/op_vision.c) */
OP(GridSample, 2, 2, 1, 1, OPAQUE)
OP(RoiAlign, 3, 3, 1, 1, OPAQUE)
OP(NonMaxSuppression, 2, 5, 1, 1, OPAQUE)
OP(AffineGrid, 2, 2, 1, 1, OPAQUE)
OP(CenterCropPad, 2, 2, 1, 1, INJECTIVE)
OP(Col2Im, 3, 3, 1, 1, OPAQUE)
OP(DeformConv, 3, 5, 1, 1, OPAQUE)
/* Signal processing (frontend/infer_signal.c, lower/op_signal.c) */
OP(STFT, 2, 4, 1, 1, OPAQUE)
OP(MelWeightMatrix, 5, 5, 1, 1, OPAQUE)
/* Transformer operators (frontend/infer_xfmr.c, lower/op_xfmr.c) */
OP(Gelu, 1, 1, 1, 1, INJECTIVE)
OP(Swish, 1, 1, 1, 1, INJECTIVE)
OP(Mish, 1, 1, 1, 1, INJECTIVE)
OP(RMSNormalization, 2, 2, 1, 1, REDUCTION)
OP(RotaryEmbedding, 3, 4, 1, 1, OPAQUE)
OP(Attention, 3, 7, 1, 4, OPAQUE)
/* Sequences of a length known at compile time whose elements share one shape,
 * held as one stacked tensor [L, element dims...] (frontend/infer_seq.c,
 * lower/op_seq.c) */
OP(SequenceEmpty, 0, 0, 1, 1, OPAQUE)
OP(SequenceConstruct, 1, -1, 1, 1, OPAQUE)
OP(SequenceInsert, 2, 3, 1, 1, OPAQUE)
OP(SequenceErase, 1, 2, 1, 1, OPAQUE)
OP(SequenceAt, 2, 2, 1, 1, OPAQUE)
OP(SequenceLength, 1, 1, 1, 1, OPAQUE)
OP(ConcatFromSequence, 1, 1, 1, 1, OPAQUE)
OP(SplitToSequence, 1, 2, 1, 1, OPAQUE)
/* SequenceMap is unrolled over its sequence length like a Loop
 * (frontend/control.c); the optional operators fold at compile time
 * (frontend/seq_resolve.c): none reaches inference */
OP_NOT_LOWERED(SequenceMap, 1, -1, 1, -1, OPAQUE)
OP_NOT_LOWERED(Optional, 0, 1, 1, 1, OPAQUE)
OP_NOT_LOWERED(OptionalHasElement, 0, 1, 1, 1, OPAQUE)
OP_NOT_LOWERED(OptionalGetElement, 1, 1, 1, 1, OPAQUE)
/* ai.onnx.ml (frontend/infer_ml.c, lower/op_ml.c): looked up in that domain only */
OP(Binarizer, 1, 1, 1, 1, INJECTIVE)
OP(ArrayFeatureExtractor, 2, 2, 1, 1, INJECTIVE)
OP(TreeEnsemble, 1, 1, 1, 1, OPAQUE)
/* tvmcc's own operators: made by passes after inference, never read from a
 * file (frontend/onnx_load.c finds them in no domain). The winograd pass
 * (passes/winograd.c) turns a 3x3 conv into WinogradInput (16 transformed
 * tiles, frontend/infer_winograd.c, lower/op_winograd.c), 16 MatMuls and
 * WinogradOutput (the inverse transform, the bias; injective so that the
 * conv's activation and residual add fuse into it). */
OP(WinogradInput, 1, 1, 16, 16, OPAQUE)
OP(WinogradOutput, 16, 17, 1, 1, INJECTIVE)

#ifdef TVMCC_OPS_DEFAULT_NOT_LOWERED
#undef OP_NOT_LOWERED
#undef TVMCC_OPS_DEFAULT_NOT_LOWERED
#endif
#ifdef TVMCC_OPS_DEFAULT_UNARY
#undef OP_UNARY
#undef TVMCC_OPS_DEFAULT_UNARY
#endif
#ifdef TVMCC_OPS_DEFAULT_BINARY
#undef OP_BINARY
#undef TVMCC_OPS_DEFAULT_BINARY
#endif
