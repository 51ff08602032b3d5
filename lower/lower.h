/*
 * Lowering entry points. lower_node() builds a Kernel for one node by
 * calling the op's lower_<Name>() from the op table, then applies the
 * schedule. Each lower_<Name>() describes the op as Compute stages only
 * (te.h); it never emits loops itself.
 *
 * READ docs/adding-an-operator.md FIRST: it gives the conventions for
 * infer_<Name>() and lower_<Name>() (constant inputs, declared-shape
 * fallback, in-bounds loads under select, multi-stage ops) with examples.
 */
#ifndef TVMCC_LOWER_H
#define TVMCC_LOWER_H

#include "te.h"
#include "../ir/target.h"

#define OP(name, mi, ma, mo, mao, cat) int lower_##name(Lower *L, Node *n);
#define OP_NOT_LOWERED(name, mi, ma, mo, mao, cat)
#define OP_UNARY(name, un)
#define OP_BINARY(name, bin)
#include "../ir/ops.h"
#undef OP_BINARY
#undef OP_UNARY
#undef OP_NOT_LOWERED
#undef OP
/* The rows written OP_UNARY / OP_BINARY in ir/ops.h: one ex_unary
 * (ex_binary) of the broadcast input(s), the op taken from the row. */
int lower_unary_row(Lower *L, Node *n);
int lower_binary_row(Lower *L, Node *n);
/* Equal on strings and Cast / CastLike to or from strings: runtime calls
 * (lower/op_string.c) */
int lower_string_equal(Lower *L, Node *n);
int lower_string_cast(Lower *L, Node *n);
/* Integer operators (Node.quant, lower/op_quant.c): the sum stage c that
 * lower_<Op>() built becomes its integer form (chan: the output channel
 * axis, NULL for one multiplier); the elementwise forms are lowered whole. */
void lower_quant_sum(Lower *L, const Node *n, Compute *c, const IterVar *chan);
int lower_quant_elemwise(Lower *L, Node *n);

/* Lower node `ni` of g into a new kernel named `name`, scheduled for target
 * (NULL: the naive schedule). Returns NULL after reporting through d. */
Kernel *lower_node(Graph *g, int32_t ni, const char *name, const Target *target, Diag *d);
/* Lower a fused group (nodes in execution order, the last one producing the
 * group's output) into one kernel with no intermediate buffers where the
 * stages allow it (lower/fuse.c). */
Kernel *lower_group(Graph *g, const int32_t *nodes, int n_nodes, const char *name,
                    const Target *target, Diag *d);

/* The AveragePool stage of n's window (lower/op_nn.c) over buffer xb of
 * n's input shape and element type xt into buffer yb of n's output shape;
 * with `divide`, the epilogue divides by the tap count in type ct. */
Compute *lower_avgpool_stage(Lower *L, const Node *n, int xb, DType xt, int yb, DType ct,
                             int divide);

/* The three stages of a softmax (lower/op_reduce.c) of input buffer xb into
 * output buffer yb, both viewed as [outer, R, inner] (v3), normalised over
 * R in compute type ct: a row maximum and a sum of exponentials into
 * scratch buffers, then the normalising stage (log-softmax when is_log).
 * Also used by the schedule tests to build a softmax kernel. */
void lower_softmax_stages(Lower *L, int xb, int yb, const int64_t *v3, DType ct, int is_log);

#endif
