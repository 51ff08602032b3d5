/*
 * Graph IR. A Graph owns flat arrays of values and nodes; nodes refer to
 * values by 32-bit index and values to their producer by node index. All
 * memory comes from the graph's Arena. After shape inference every live value
 * has a dtype and a fully static shape.
 *
 * A value whose `data` is non-NULL is a compile-time constant (an initializer,
 * a Constant node's output, or the result of folding); its bytes are in the
 * dtype's storage format (see dtype.h), dense and row-major.
 */
#ifndef TVMCC_GRAPH_H
#define TVMCC_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "arena.h"
#include "dtype.h"

#define TVMCC_MAX_RANK 8

#include "params.h"

typedef enum OpKind {
    OP_UNKNOWN = 0,
#define OP(name, mi, ma, mo, mao, cat) OP_##name,
#include "ops.h"
#undef OP
    OP_COUNT
} OpKind;

typedef enum OpCategory { CAT_INJECTIVE, CAT_REDUCTION, CAT_COMPLEX, CAT_OPAQUE } OpCategory;

typedef struct OpInfo {
    const char *name;   /* ONNX op_type */
    int min_in, max_in; /* max_in -1: variadic */
    int min_out, max_out;
    OpCategory category;
    uint8_t lowered;    /* 0 for OP_NOT_LOWERED rows (control flow, training) */
} OpInfo;

extern const OpInfo op_info[OP_COUNT];
OpKind op_lookup(const char *onnx_name); /* OP_UNKNOWN if not in the table */
const char *op_category_name(OpCategory c);

/* A dense tensor held by the compiler (constants, tensor attributes). */
typedef struct Tensor {
    DType dtype;
    int rank;
    int64_t dims[TVMCC_MAX_RANK];
    int64_t numel;
    void *data;        /* numel * dtype_size(dtype) bytes, storage format */
} Tensor;

typedef struct Graph Graph;

typedef enum AttrType {
    ATTR_UNDEF = 0, ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_STRING = 3, ATTR_TENSOR = 4,
    ATTR_GRAPH = 5, ATTR_FLOATS = 6, ATTR_INTS = 7, ATTR_STRINGS = 8,
    ATTR_TENSORS = 9, ATTR_GRAPHS = 10, ATTR_SPARSE_TENSOR = 11,
    ATTR_SPARSE_TENSORS = 12, ATTR_TYPE_PROTO = 13, ATTR_TYPE_PROTOS = 14
} AttrType; /* values are ONNX's AttributeProto.AttributeType */

typedef struct Attr {
    const char *name;
    AttrType type;
    double f;            /* ATTR_FLOAT */
    int64_t i;           /* ATTR_INT */
    const char *s;       /* ATTR_STRING, NUL-terminated copy */
    int64_t n;           /* element count of FLOATS / INTS / STRINGS / TENSORS */
    double *floats;      /* ATTR_FLOATS */
    int64_t *ints;       /* ATTR_INTS */
    const char **strings;/* ATTR_STRINGS */
    Tensor *t;           /* ATTR_TENSOR: one; ATTR_TENSORS: array of n */
    Graph *g;            /* ATTR_GRAPH: parsed subgraph (inlined by frontend/control.c) */
} Attr;

typedef struct Value {
    const char *name;        /* ONNX name (unique within the graph) */
    DType dtype;             /* DT_UNDEF until known */
    int rank;                /* -1 while unknown */
    int64_t dims[TVMCC_MAX_RANK]; /* -1 for an unknown dimension */
    const char *dim_param[TVMCC_MAX_RANK]; /* symbolic name or NULL */
    int32_t producer;        /* index of the producing node, -1 if none */
    int32_t input_index;     /* position among graph inputs, -1 if not one */
    void *data;              /* constant bytes, or NULL if computed at run time */
    uint8_t is_initializer;  /* came from graph.initializer */
    uint8_t declared;        /* dtype/shape came from a declaration (value_info/output) */
    uint8_t is_sequence;     /* stacked [L, ...] sequence (frontend/infer_seq.c) */
    uint8_t io_kind;         /* IO_SEQUENCE | IO_OPTIONAL: a graph input or output
                              * declared so (dtype and shape are the element's);
                              * 0 for a tensor (frontend/seq_io.c) */
    uint8_t absent;          /* an optional without a value: --optional-absent,
                              * Optional() (frontend/seq_resolve.c) */
} Value;

enum { IO_SEQUENCE = 1, IO_OPTIONAL = 2 };

/* What a graph input or output buffer is part of, beside its tensor
 * (frontend/seq_io.c): element `index` of the sequence `seq`, and whether
 * the graph declares it optional. Parallel to Graph.inputs / .outputs. */
typedef struct IoTag {
    const char *seq;         /* NULL: a plain tensor */
    int32_t index;           /* element index in seq */
    uint8_t optional;        /* declared optional (given as present) */
} IoTag;

typedef struct Node {
    OpKind op;               /* OP_UNKNOWN for ops outside the table */
    const char *op_type;     /* ONNX op_type as written in the file */
    const char *domain;      /* "" for the default domain */
    const char *name;        /* ONNX node name, possibly "" */
    int32_t index;           /* position in the ONNX graph's node list */
    int opset;               /* opset version of the node's domain */
    int n_in, n_out;
    int32_t *in;             /* value indexes; -1 for an omitted optional input */
    int32_t *out;            /* value indexes; -1 for an omitted optional output */
    int n_attr;
    Attr *attr;
    uint8_t dead;            /* removed by a pass; skipped everywhere */
    uint8_t inferred;        /* infer_graph has set its outputs */
    int32_t group;           /* -1: own kernel; else the index of the node whose
                              * kernel it is fused into (the group's last node) */
    const char *note;        /* NULL, or where the node came from, added to its
                              * messages (a branch of a run-time If) */
    uint8_t param_kind;      /* ParamKind: what params points to */
    const void *params;      /* parsed attributes (ir/params.h), set by inference */
    const QuantParams *quant; /* NULL, or computed on integers (passes/quantize.c) */
} Node;

/* What one compilation tells the stages that work on its graph, carried
 * by the graph instead of globals: the pipeline (pipeline/pipeline.c) sets
 * it right after loading. Zero (as graph_new leaves it) means no folding
 * during inference, no target for the passes, the default string pool and
 * no tuned knobs, which is what the unit tests' hand-built graphs get. */
typedef struct Diag Diag;
struct Target;
struct KnobTable;

typedef struct GraphSettings {
    /* run by infer_graph on each node it has just typed (the constant
     * folder, passes/fold_constants.c: shape computations become
     * constants before their readers are inferred); NULL: none */
    int (*fold)(Graph *g, int32_t node, Diag *d);
    const struct Target *target;   /* the target the passes compile for
                                    * (layout reads its preferred layout) */
    int64_t string_bytes;          /* --string-bytes: character pool per
                                    * string a string operator makes; 0: 64 */
    const struct KnobTable *knobs; /* template knobs by workload key
                                    * (lower/knobs.h); NULL: the defaults */
} GraphSettings;

struct Graph {
    Arena *arena;            /* owns everything below */
    GraphSettings settings;  /* this compilation's settings (above) */
    const char *path;        /* model file as given on the command line */
    const char *dir;         /* directory of the model file (external data) */
    int64_t opset;           /* default-domain opset */
    Value *values;
    int32_t n_values, cap_values;
    Node *nodes;
    int32_t n_nodes, cap_nodes;
    int32_t *inputs;         /* graph inputs that are not initializers, in order */
    int32_t n_inputs;
    int32_t *outputs;        /* graph outputs in order */
    int32_t n_outputs;
    /* Sequence and optional graph inputs and outputs (frontend/seq_io.c):
     * NULL when every one is a tensor, else one tag per entry of inputs /
     * outputs; the names of optionals given as absent, which have no
     * buffer. */
    IoTag *in_tags, *out_tags;
    const char **absent_inputs, **absent_outputs;
    int32_t n_absent_inputs, n_absent_outputs;
};

/* Diagnostics: user and model errors. Each message is one line:
 *   FILE: node 'NAME' (OP, #INDEX): FIELD: message
 * node may be NULL (then the node part is left out), field may be NULL.
 * A node's note, when set, follows the message in parentheses. */
struct Diag {
    const char *file;
    int errors;
    int warnings;
    int quiet;               /* suppress printing (fuzzing, tests) */
    FILE *out;               /* stderr by default */
};

void diag_init(Diag *d, const char *file);
#ifdef __GNUC__
__attribute__((format(printf, 4, 5)))
#endif
int diag_error(Diag *d, const Node *n, const char *field, const char *fmt, ...);
#ifdef __GNUC__
__attribute__((format(printf, 4, 5)))
#endif
void diag_warn(Diag *d, const Node *n, const char *field, const char *fmt, ...);

/* dims as "[D0,D1,...]" ("[]" for a scalar), in a's memory: for messages. */
const char *dims_text(Arena *a, int rank, const int64_t *dims);

Graph *graph_new(Arena *a, const char *path);
/* New value named `name` (copied), dtype undefined, rank -1. Returns index. */
int32_t graph_add_value(Graph *g, const char *name);
int32_t graph_find_value(const Graph *g, const char *name); /* -1 if absent */
/* A new value named "BASE~TAGN" ("v" for an empty BASE) with the first N
 * after *serial that no value has yet; *serial is left at that N. */
int32_t graph_fresh_value(Graph *g, const char *base, const char *tag, int32_t *serial);
/* New node; in/out arrays allocated with the given counts, filled with -1. */
int32_t graph_add_node(Graph *g, OpKind op, const char *name, int n_in, int n_out);

/* Attributes: lookups return the default when absent. graph_attr returns
 * NULL when absent. A present attribute of the wrong type is reported
 * through d and the default returned. */
const Attr *node_attr(const Node *n, const char *name);
int64_t attr_int(const Node *n, const char *name, int64_t def, Diag *d);
double attr_float(const Node *n, const char *name, double def, Diag *d);
const char *attr_string(const Node *n, const char *name, const char *def, Diag *d);
/* INTS: *count set to -1 when absent. */
const int64_t *attr_ints(const Node *n, const char *name, int64_t *count, Diag *d);
const double *attr_floats(const Node *n, const char *name, int64_t *count, Diag *d);

/* Shapes */
int64_t value_numel(const Value *v);  /* -1 if unknown or overflowing */
int value_is_static(const Value *v);  /* dtype known and all dims >= 0 */
/* Set the type and shape of a value; returns 0, or reports and returns 1 on
 * overflow of the element count. */
int value_set(Graph *g, int32_t vi, DType dt, int rank, const int64_t *dims, Diag *d, const Node *n);
/* Constant input as int64 list (for shape-like inputs of any integer type).
 * Returns element count or -1 when the value is not a compile-time constant. */
int64_t value_const_ints(const Graph *g, int32_t vi, const int64_t **out);
/* Constant scalar as double, returns 0 on success, 1 if not constant. */
int value_const_double(const Graph *g, int32_t vi, double *out);
/* element i of a constant numeric value as a double; 1 if it is not one */
int value_const_elem(const Graph *g, int32_t vi, int64_t i, double *out);

/* Structural checks: indexes in range, producers consistent, graph acyclic
 * in node order, each value produced at most once. Returns the error count
 * (reported as internal errors through d). */
int graph_verify(const Graph *g, Diag *d);
/* Puts nodes back in an order where every producer precedes its readers,
 * keeping the existing order where it already does; updates producers. */
void graph_toposort(Graph *g);
/* Parsed parameters (ir/params.h). node_set_params copies the struct into
 * the graph's arena; the getters die when the node has none of that kind
 * (inference sets them for every node it accepts). */
void node_set_params(Graph *g, Node *n, ParamKind kind, const void *p, size_t size);
const ConvWindow *node_window(const Node *n);
const ReduceParams *node_reduce(const Node *n);
const ResizeParams *node_resize(const Node *n);
const EinsumParams *node_einsum(const Node *n);
const AxisParams *node_axis(const Node *n);
const ScalarParams *node_scalar(const Node *n);
const SliceParams *node_slice(const Node *n);
const PadParams *node_pad(const Node *n);
const PermParams *node_perm(const Node *n);
const RnnParams *node_rnn(const Node *n);
const VisionParams *node_vision(const Node *n);
const LossParams *node_loss(const Node *n);
const StringParams *node_string(const Node *n);
const XfmrParams *node_xfmr(const Node *n);
const MlParams *node_ml(const Node *n);
/* Sets the PermParams of a Transpose of `rank` axes: infer_Transpose and the
 * passes that add a Transpose (passes/layout.c). */
void node_set_perm(Graph *g, Node *n, int rank, const int64_t *perm);
/* Appends attribute a to node ni (the node's attribute array is copied). */
void node_add_attr(Graph *g, int32_t ni, Attr a);
/* Stable text dump (golden tests read it). */
void graph_dump(const Graph *g, FILE *f);

#endif
