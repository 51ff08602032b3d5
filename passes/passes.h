/*
 * Graph passes. Each is `int pass_<name>(Graph *, Diag *)` returning the
 * number of errors, registered in one ordered table (passes.c). The driver
 * runs them in order, the verifier after each in debug builds, and
 * --dump-ir=NAME prints the graph after the named pass.
 */
#ifndef TVMCC_PASSES_H
#define TVMCC_PASSES_H

#include "../ir/graph.h"

typedef struct Pass {
    const char *name;
    int (*run)(Graph *g, Diag *d);
    const char *what;   /* one line for --help and docs */
    int min_opt;        /* runs only at -O<min_opt> and above */
} Pass;

extern const Pass pass_table[];
extern const int pass_count;

int pass_fold_constants(Graph *g, Diag *d);
int pass_dce(Graph *g, Diag *d);
int pass_fuse(Graph *g, Diag *d);
int pass_simplify(Graph *g, Diag *d);
int pass_layout(Graph *g, Diag *d);
int pass_winograd(Graph *g, Diag *d);
int pass_quantize(Graph *g, Diag *d);

/* Folds node ni if all its inputs are constants and its outputs are small
 * enough (budget below); returns 0 (folded or not foldable) or the number
 * of errors. Called by shape inference as nodes get their shapes, so that
 * shape computations (Shape -> Gather -> Concat -> Reshape) are constants
 * by the time a consumer needs them. */
int fold_node(Graph *g, int32_t ni, Diag *d);

/* Total bytes constant folding may create in one compilation. */
#define FOLD_BUDGET_BYTES ((int64_t)256 << 20)

#endif
