/*
 * Type and shape inference. infer_graph() visits nodes in order and calls the
 * op's infer_<Name>() from the op table, which sets dtype and shape of every
 * output (value_set) or reports why it cannot. When an output shape depends on
 * run-time values (e.g. Reshape with a computed shape that is not a constant)
 * the infer function may fall back to the declared shape of the output (from
 * value_info or graph outputs): infer_use_declared().
 * READ docs/adding-an-operator.md FIRST for the conventions of infer_<Name>().
 */
#ifndef TVMCC_INFER_H
#define TVMCC_INFER_H

#include "../ir/graph.h"

#define OP(name, mi, ma, mo, mao, cat) int infer_##name(Graph *g, Node *n, Diag *d);
#include "../ir/ops.h"
#undef OP

/* Runs inference over the whole graph; returns the number of errors. After
 * each node's inference, g->settings.fold (when set: the constant folder)
 * runs on it and its errors count too. Nodes
 * already inferred by an earlier call are skipped. Gradient nodes are then
 * expanded (below) and the new nodes inferred. */
int infer_graph(Graph *g, Diag *d);
/* Infers (and folds) only the nodes that value vi depends on, ahead of the
 * rest: control-flow inlining (control.c) calls it on an If's condition
 * while the node list is still being built. Returns 0 when done (vi then
 * has its type and shape, and its data if it folded), -1 without trying
 * when a node it depends on cannot be inferred yet (a sequence operator, a
 * dynamic graph input...), 1 after reporting an error. */
int infer_value_early(Graph *g, int32_t vi, Diag *d);
/* Replaces every Gradient node by the nodes computing its adjoints
 * (frontend/training.c). Returns -1 if there was none, 0 after expanding,
 * 1 after reporting an error. */
int infer_expand_gradients(Graph *g, Diag *d);

/* Cast / CastLike between strings and numbers: 0 if from -> to is
 * supported, else 1 after reporting (frontend/infer_string.c). */
int infer_string_cast(const Node *n, DType from, DType to, Diag *d);

/* ---- helpers shared by the infer_* functions (infer_util.c) ---- */
/* Input i's value (NULL if omitted or out of range). */
Value *in_val(Graph *g, const Node *n, int i);
Value *out_val(Graph *g, const Node *n, int i);
/* Reports and returns 1 if input i is missing or its type/shape is unknown. */
int need_input(Graph *g, const Node *n, int i, Diag *d);
/* Numpy broadcast of a and b into out (rank/dims); reports incompatibility. */
int infer_broadcast(const Node *n, int ra, const int64_t *da, int rb, const int64_t *db,
                    int *rout, int64_t *dout, Diag *d, const char *field);
/* Name of a dtype for messages ("unsupported" for types tvmcc lacks). */
const char *infer_type_name(DType t);
/* Reports and returns 1 if output i of n is omitted. */
int infer_need_output(Graph *g, const Node *n, int i, Diag *d);
/* Output i gets x's dtype and shape; reports a missing output. */
int infer_same_shape_out(Graph *g, Node *n, int i, const Value *x, Diag *d);
/* Reports and returns 1 if v is bool or of a type tvmcc does not support. */
int infer_need_numeric(const Node *n, const Value *v, const char *field, Diag *d);
/* Reports and returns 1 if v is not of a floating type. */
int infer_need_float(const Node *n, const Value *v, const char *field, Diag *d);
/* Float attribute `name` of n, when present and t is an integer type,
 * becomes a constant of type t: it must be finite and in t's range
 * (truncated toward zero). 1 (reported, naming the attribute) if not. */
int infer_attr_fits(const Node *n, const char *name, DType t, Diag *d);
/* Normalise axis in [-rank, rank) to [0, rank); reports out of range. */
int infer_axis(const Node *n, int64_t axis, int rank, int *out, Diag *d, const char *field);
/* Stores on n the AxisParams p, or (p NULL) AxisParams holding only `axis`
 * (ir/params.h). */
void infer_set_axis(Graph *g, Node *n, int axis, const AxisParams *p);
/* Stores the ScalarParams p on n and returns 0, or returns 1 when errors
 * were reported since the count `errs` (an attribute of the wrong type). */
int infer_set_scalar(Graph *g, Node *n, const ScalarParams *p, int errs, Diag *d);
/* Output i takes the declared shape recorded for it, if complete (returns 0),
 * else reports `why` and returns 1. */
int infer_use_declared(Graph *g, Node *n, int i, Diag *d, const char *why);
/* The same, and when output i has no complete declared shape, the
 * declared shape of a later value that has output i's shape by
 * construction (output i passed through elementwise operators whose other
 * operands are scalars or of the same shape), with dtype dt (DT_UNDEF: no
 * such search). */
int infer_use_declared_as(Graph *g, Node *n, int i, DType dt, Diag *d, const char *why);
/* Elementwise op: output 0 = broadcast of all present inputs, dtype of input
 * 0 (or `dt` if not DT_UNDEF). Checks that inputs share input 0's dtype when
 * same_type is set. */
int infer_elementwise(Graph *g, Node *n, Diag *d, DType dt, int same_type);

/* Reads an INTS attribute of exactly `want` entries into dst, or fills dst
 * with `def` when the attribute is absent. Values must be >= lo. */
int infer_read_ints(const Node *n, const char *name, int want, int64_t def, int64_t lo,
                    int64_t *dst, Diag *d);
/* The begin part of `total` padding split as auto_pad says: SAME_UPPER
 * (upper set) puts the extra unit at the end, SAME_LOWER at the beginning;
 * floor division, so a negative total (ConvTranspose with an output_shape
 * beyond the full extent) moves the extra unit the same way. */
int64_t infer_split_pads(int64_t total, int upper);
/* The sliding window of conv or pooling node n over input x (rank >= 3,
 * N C D1..Dn): kernel (from `kernel` when the weights give it, else the
 * required kernel_shape attribute), strides, dilations, pads resolved from
 * auto_pad, ceil_mode when ceil_ok, and each output extent. group is 1. */
int infer_conv_window(const Node *n, const Value *x, const int64_t *kernel, int ceil_ok,
                      ConvWindow *w, Diag *d);

/* Sequences (infer_seq.c): before a node's inference, refuse a sequence
 * input to an operator that takes tensors; after it, pass the sequence flag
 * through Identity and refuse a sequence graph output. Return 0 or 1. */
int infer_seq_check_inputs(Graph *g, Node *n, Diag *d);
int infer_seq_check_outputs(Graph *g, Node *n, Diag *d);

/* Cast/CastLike to float8e8m0: round_mode up, down or nearest (infer_elemwise.c). */
int infer_e8m0_mode(const Node *n, DType to, Diag *d);

#endif
