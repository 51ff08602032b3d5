/*
 * The ONNX frontend: reads a ModelProto (with the protobuf-c code generated
 * from the system's onnx.proto) into a Graph, decodes tensors (initializers,
 * tensor attributes, test-data .pb files, external data), and binds the
 * shapes of graph inputs from the command line.
 *
 * Protobuf-c's own allocations are bounded by a byte budget (default 4 GiB,
 * see onnx_set_parse_budget) and freed once everything needed has been
 * copied into the graph's arena. Errors are reported through Diag.
 */
#ifndef TVMCC_ONNX_H
#define TVMCC_ONNX_H

#include <stddef.h>

#include "../ir/graph.h"

/* Loads the model at path. Returns NULL after reporting through d when the
 * file is not a usable ONNX model, including when it uses operators tvmcc
 * does not support (all of them are listed in one error). Nodes come out in
 * topological order; Node.index keeps their position in the file. */
Graph *onnx_load(Arena *a, const char *path, Diag *d);
/* The same from n bytes in memory (fuzzing, embedding). name is used as the
 * graph's path in messages; external data is refused (there is no directory
 * to resolve it against). */
Graph *onnx_load_buffer(Arena *a, const void *data, size_t n, const char *name, Diag *d);

/* Writing a graph back as ONNX (frontend/onnx_write.c). opset: the
 * default domain's opset to declare (at least the graph's own); the other
 * domains get the highest opset their nodes carry. */
typedef struct OnnxWriteOptions {
    int64_t opset;              /* 0: the graph's */
    const char *graph_name;     /* NULL: "tvmcc" */
    const char *producer, *producer_version;
} OnnxWriteOptions;
/* The live nodes of g, the constants they read, its inputs and outputs, as
 * a serialized ModelProto in malloc'ed memory (*size bytes; the caller
 * frees it). NULL after reporting through d (an attribute or element type
 * that cannot be written, a cycle). opt may be NULL. */
uint8_t *onnx_write_model(const Graph *g, const OnnxWriteOptions *opt, size_t *size, Diag *d);

/* Decodes an Onnx__TensorProto * into out (data in the arena, storage
 * format). dir is the directory external data is resolved against (NULL
 * forbids external data). n and field name the place for error messages.
 * Returns 0, or nonzero after reporting. */
int onnx_tensor_decode(Arena *a, const void *tensor_proto, const char *dir, Tensor *out,
                       Diag *d, const Node *n, const char *field);

/* Reads a file holding one serialized TensorProto (the format of the ONNX
 * test suite's input_*.pb / output_*.pb). *name (if name is not NULL) gets
 * the tensor's name, "" when it has none. Returns 0 or nonzero after
 * reporting. */
int onnx_read_tensor_file(Arena *a, const char *path, Tensor *out, const char **name, Diag *d);
/* If path holds a string tensor: its strings, each followed by NUL, in
 * malloc'd *buf (*len bytes, *count strings); returns 1. 0 if it holds
 * another type, -1 if it cannot be read (reported). */
int onnx_read_string_tensor(const char *path, char **buf, size_t *len, size_t *count);

/* ---- test data of sequence and optional inputs and outputs
 * (frontend/seq_data.c) ---- */
/* Bytes [p, p + n) of a serialized message. */
typedef struct OnnxSpan {
    const unsigned char *p;
    size_t n;
} OnnxSpan;
enum { ONNX_DATA_SEQUENCE = 1, ONNX_DATA_OPTIONAL = 2 };
/* The declared kind of graph input (in = 1; initializers not counted) or
 * output k of a ModelProto (onnx_unpack_file(path, 1, d)): 0 a tensor, or
 * ONNX_DATA_SEQUENCE | ONNX_DATA_OPTIONAL bits; *name its name. -1 when
 * there is no such input or output. */
int onnx_io_kind(const void *model, int in, long k, const char **name);
/* The element TensorProtos (at most cap, into el) of a test-data file's
 * bytes for a value of this kind: a SequenceProto's tensors, an
 * OptionalProto's tensor or sequence (*absent when it has no value), or
 * the file itself for a tensor. 0, or -1 when data is malformed. */
int onnx_data_elements(OnnxSpan data, int kind, OnnxSpan *el, int cap, int *count, int *absent);

/* Sequence and optional graph inputs (frontend/seq_io.c), right after
 * loading: lengths[] are --sequence-length NAME=L specs, absent[] the names
 * given to --optional-absent. A sequence input becomes L tensor inputs
 * NAME[0..L-1] (Graph.in_tags) and a SequenceConstruct defining NAME; an
 * absent optional leaves the inputs and is marked Value.absent. Reports a
 * sequence input without a length, an option naming no such input or an
 * input of another kind. Returns 0 or nonzero after reporting. */
int onnx_bind_io(Graph *g, const char *const *lengths, int n_lengths,
                 const char *const *absent, int n_absent, Diag *d);
/* After inference: a sequence graph output that seq_resolve.c could not
 * list (a stacked sequence, frontend/infer_seq.c: equal element shapes,
 * run-time positions) becomes one output per element (SequenceAt at each
 * constant position, inferred here). Reports a sequence output whose length
 * is still unknown. Returns 0 or nonzero after reporting. */
int onnx_bind_stacked_outputs(Graph *g, Diag *d);
/* Whether the optional value vi has a value, as far as its producers tell
 * before inference: 1 yes, 0 no (an absent input, Optional(), an omitted
 * input), -1 unknown (a run-time If selects it) (frontend/seq_resolve.c). */
int seq_optional_presence(const Graph *g, int32_t vi);
/* Length of the sequence value vi when its producers fix it before
 * inference (SequenceEmpty, SequenceConstruct, SequenceInsert/Erase and
 * Identity-like nodes over those), -1 for a sequence of unknown length, -2
 * when vi is not produced by a sequence operator (frontend/seq_resolve.c). */
int64_t seq_static_length(const Graph *g, int32_t vi);

/* "NAME=D0,D1,..." sets the shape of graph input NAME. The rank must match a
 * declared rank, and a declared fixed dimension must agree. */
int onnx_bind_input_shape(Graph *g, const char *spec, Diag *d);
/* --input-value NAME=V0,V1,... (specs[0..n_specs)), after the shapes are
 * bound: each named graph input becomes a constant with these values,
 * parsed by its element type (integers, floats, true/false or 0/1 for
 * bool), and is removed from the graph inputs. Reports (naming the input)
 * and returns 1 for an unknown input, one given twice, a wrong count, a
 * value that does not parse or is out of range, a string input. */
int onnx_bind_input_values(Graph *g, const char *const *specs, int n_specs, Diag *d);
/* Reports every graph input that still has an unknown or symbolic dimension
 * (with a suggested --input-shape); returns the number of such inputs. */
int onnx_check_inputs_static(Graph *g, Diag *d);

/* Upper bound on the bytes protobuf-c may allocate while parsing one file
 * (default 4 GiB). Also bounds the size of the file read into memory. */
void onnx_set_parse_budget(size_t bytes);

/* ---- shared by the frontend's onnx_*.c files, not for other modules ---- */
/* Reads path and unpacks it as a ModelProto (model = 1) or TensorProto
 * (model = 0). Returns the message, to be released with onnx_free_message,
 * or NULL after reporting. */
void *onnx_unpack_file(const char *path, int model, Diag *d);
/* The same for n bytes in memory. */
void *onnx_unpack_buffer(const void *data, size_t n, int model, Diag *d);
void onnx_free_message(void *msg);

/* Replaces every If, Loop and Scan node by the nodes of its subgraphs
 * (unrolled, with fresh value names), in place, so that inference and the
 * later stages see a flat graph (frontend/control.c). Returns 0 or nonzero
 * after reporting a control-flow node that cannot be inlined. */
int onnx_inline_control_flow(Graph *g, Diag *d);
/* Rewrites the readers of sequences built with compile-time positions
 * (SequenceAt, SequenceLength, ConcatFromSequence) into Identity / Concat of
 * the element values, folds the optional operators (Optional,
 * OptionalHasElement, OptionalGetElement) and binds the sequence and
 * optional graph outputs to element buffers (Graph.out_tags), before
 * inference; run after the control-flow inlining (frontend/seq_resolve.c).
 * Returns 0 or nonzero after reporting. */
int onnx_resolve_sequences(Graph *g, Diag *d);

#endif
