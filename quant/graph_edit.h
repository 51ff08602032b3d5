/*
 * Small graph edits `tvmcc quantize` makes on the IR (quant/graph_edit.c):
 * constants, inputs and attributes added to or taken from a node. Values
 * and nodes are appended; indexes stay valid, pointers into g->values and
 * g->nodes may move (take them again after a call).
 */
#ifndef TVMCC_QUANT_GRAPH_EDIT_H
#define TVMCC_QUANT_GRAPH_EDIT_H

#include "../ir/graph.h"

/* A new constant value named NAME (made unique with graph_fresh_value when
 * taken) of type dt and shape dims[rank], holding a copy of data. */
int32_t qe_const(Graph *g, const char *name, DType dt, int rank, const int64_t *dims,
                 const void *data);
/* Scalar and 1-D helpers over qe_const. */
int32_t qe_const_f32(Graph *g, const char *name, int rank, const int64_t *dims, const float *v);
int32_t qe_const_i64(Graph *g, const char *name, int64_t n, const int64_t *v);
/* Sets input k of node ni to vi, growing the input list (new slots -1). */
void qe_set_input(Graph *g, int32_t ni, int k, int32_t vi);
/* Removes attribute NAME from node ni (no-op when absent). */
void qe_drop_attr(Graph *g, int32_t ni, const char *name);
/* Adds or replaces an attribute of node ni. */
void qe_set_attr_int(Graph *g, int32_t ni, const char *name, int64_t v);
void qe_set_attr_string(Graph *g, int32_t ni, const char *name, const char *s);
/* Number of live nodes reading vi (a node reading it twice counts once);
 * 1 more when vi is a graph output when count_outputs. */
int qe_readers(const Graph *g, int32_t vi, int count_outputs);
int qe_is_output(const Graph *g, int32_t vi);
/* Replaces every live node's read of `from` by `to`, except in node skip. */
void qe_replace_reads(Graph *g, int32_t from, int32_t to, int32_t skip);
/* The constant float32 data of vi, or NULL when vi is not a float32 constant. */
const float *qe_f32(const Graph *g, int32_t vi);

#endif
