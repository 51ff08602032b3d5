/*
 * Tensor expressions and loop IR.
 *
 * An operator is lowered by describing WHAT it computes as one or more
 * Compute definitions (the paper's `compute` with `reduce_axis`): an output
 * buffer, output axes with extents, optional reduce axes, and an index
 * expression over input buffers. HOW it is computed is a schedule: the naive
 * schedule (schedule.c) turns each Compute into a loop nest of Stmt nodes;
 * schedule primitives then transform that nest without changing results.
 * emit_c/ prints the loop IR as C; lower/eval.c interprets it (constant
 * folding uses the same maths as the emitted code).
 *
 * Expressions are typed: `dtype` is the type the value is computed in
 * (float16/bfloat16 loads yield DT_FLOAT32; index arithmetic is DT_INT64).
 * Buffers are flat: a load/store takes one element offset; ex_load_nd()
 * builds the row-major offset from per-dimension indices.
 */
#ifndef TVMCC_TE_H
#define TVMCC_TE_H

#include "../ir/graph.h"

typedef enum ExprKind {
    EX_INT,     /* ival, dtype an integer type (DT_INT64 for index math) or BOOL */
    EX_FLOAT,   /* fval, dtype a float type */
    EX_VAR,     /* loop variable `var` (always DT_INT64) */
    EX_ACC,     /* the reduction accumulator, only inside Compute.post */
    EX_LOAD,    /* buf[a] */
    EX_UNARY,   /* op(a) */
    EX_BINARY,  /* op(a, b) */
    EX_SELECT,  /* a ? b : c (a is BOOL) */
    EX_CAST     /* (dtype) a */
} ExprKind;

typedef enum UnaryOp {
    UN_NEG, UN_ABS, UN_EXP, UN_LOG, UN_SQRT, UN_TANH, UN_SIGMOID, UN_ERF,
    UN_FLOOR, UN_CEIL, UN_ROUND /* half to even */, UN_SIN, UN_COS, UN_TAN,
    UN_ASIN, UN_ACOS, UN_ATAN, UN_SINH, UN_COSH, UN_ASINH, UN_ACOSH, UN_ATANH,
    UN_NOT /* logical, BOOL */, UN_BITNOT, UN_ISNAN, UN_ISINF, UN_SIGN,
    UN_RECIP, UN_LOG1P, UN_EXPM1,
    /* float -> the float8e8m0 value Cast gives (a power of two, or NaN) for
     * round_mode down / nearest / up, saturating and not (the store's own
     * conversion is up with saturation): dtype_e8m0_round() */
    UN_E8M0_DOWN, UN_E8M0_NEAREST, UN_E8M0_NEAREST_NOSAT, UN_E8M0_UP_NOSAT
} UnaryOp;

typedef enum BinaryOp {
    BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV /* float div; ints truncate toward 0 */,
    BIN_MOD /* ints: C %, floats: fmod */, BIN_FLOORDIV /* ints only */,
    BIN_POW, BIN_MIN, BIN_MAX,
    BIN_EQ, BIN_NE, BIN_LT, BIN_LE, BIN_GT, BIN_GE, /* result BOOL */
    BIN_AND, BIN_OR, BIN_XOR,                     /* logical, BOOL */
    BIN_BITAND, BIN_BITOR, BIN_BITXOR, BIN_SHL, BIN_SHR
} BinaryOp;

typedef struct Expr Expr;
struct Expr {
    ExprKind kind;
    DType dtype;   /* type of the result */
    int op;        /* UnaryOp / BinaryOp */
    int64_t ival;  /* EX_INT */
    double fval;   /* EX_FLOAT */
    int var;       /* EX_VAR: variable id */
    int buf;       /* EX_LOAD: buffer id */
    Expr *a, *b, *c;
    /* EX_LOAD built by ex_load_nd: the per-dimension indices and the shape
     * they index (a is their row-major offset). Fusion matches on these;
     * nidx is 0 for loads built from a flat offset. */
    int nidx;
    Expr **idx;
    const int64_t *dims;
};

typedef enum BufScope {
    BUF_INPUT,     /* graph input: caller's buffer */
    BUF_OUTPUT,    /* graph output: caller's buffer */
    BUF_CONST,     /* compile-time constant: NAME_weights.c */
    BUF_ARENA,     /* intermediate tensor in the workspace arena */
    BUF_TEMP,      /* kernel-private scratch (placed in the arena too) */
    BUF_LOCAL,     /* local array or scalar inside the kernel (cache_write) */
    BUF_UNUSED     /* no longer referenced (its producer was fused away) */
} BufScope;

typedef struct Buffer {
    const char *name;   /* C identifier used in the kernel */
    DType dtype;        /* storage type */
    int64_t numel;
    BufScope scope;
    int32_t value;      /* graph value index for INPUT/OUTPUT/CONST/ARENA; -1 else */
    int written;        /* the kernel stores to it */
    int inplace;        /* shares memory with another buffer of the kernel
                           (in-place reuse): its pointer is not restrict */
    int persist;        /* BUF_TEMP that lives until the end of the run (it
                           holds characters an output string points to) */
    int no_init;        /* BUF_LOCAL array whose every element the kernel
                           writes before reading it: declared without the
                           zero initializer (which costs a memset per tile) */
} Buffer;

typedef enum ReduceOp { RED_NONE, RED_SUM, RED_PROD, RED_MAX, RED_MIN } ReduceOp;

typedef struct IterVar {
    int var;            /* variable id */
    int64_t extent;     /* iterates 0 .. extent-1 */
    const char *name;   /* for printing: "i0", "rk"... */
} IterVar;

/* out[out_index] = post(reduce_{raxes} body) */
typedef struct Compute {
    const char *name;   /* stage name for --dump-loops */
    int out_buf;
    int n_axes;
    IterVar axes[TVMCC_MAX_RANK];
    int n_raxes;
    IterVar raxes[TVMCC_MAX_RANK];
    ReduceOp rop;       /* RED_NONE: body is the value, raxes must be empty */
    Expr *body;
    Expr *init;         /* accumulator start; NULL = identity of rop; may use axes */
    Expr *post;         /* NULL = EX_ACC itself; may use axes and EX_ACC */
    Expr *out_index;    /* NULL = row-major offset of the axes */
    const ConvWindow *window; /* a convolution stage (Conv in every layout,
                               * ConvInteger, QLinearConv): the node's parsed
                               * window (ir/params.h: strides, dilations, pads
                               * in ONNX spatial order), so a template need not
                               * recover them from the index expressions;
                               * NULL for every other stage */
} Compute;

typedef enum StmtKind {
    ST_SEQ,     /* body[0..n_body) in order */
    ST_FOR,     /* for var in [0, extent): body[0] */
    ST_STORE,   /* buf[index] = value */
    ST_IF,      /* if (cond) body[0] else body[1] (body[1] may be NULL) */
    ST_DECL     /* declares local buffer `buf` (scope BUF_LOCAL), then body[0] */
} StmtKind;

/* FOR_TENSORIZE: the nest below is printed as a target intrinsic when it
 * matches one (emit_c/emit_tile.c; on the `c` target plain C tiles,
 * emit_c/emit_ctile.c), else as plain loops with a warning naming the
 * kernel (emit_c.c). */
typedef enum ForKind { FOR_SERIAL, FOR_UNROLL, FOR_VECTORIZE, FOR_PARALLEL, FOR_TENSORIZE } ForKind;

/* Which intrinsic a FOR_TENSORIZE nest was built for, when its template
 * names one (the printers of the other nests match them by structure):
 * TZ_M4Q_2X3, lower/tpl_qconv_m4.c's 2 x 3 SMLAD tile, and TZ_M4Q_WIDEN4,
 * its im2col of four contiguous 8-bit values per step (one word load and
 * two SXTB16), TZ_M4Q_DW3, its depthwise 3 x 3 rows (tz_arg: stride, row
 * length of the widened plane), and TZ_M4Q_PLANE, the widening of a
 * channel into that plane (tz_arg: the plane's first image column, the
 * image's stride between columns, the zero point), and TZ_MVE_2X3, the
 * Helium form of the tile (tz_arg: the padded reduction), printed by
 * emit_c/emit_arm.c. */
typedef enum TensorizeKind { TZ_NONE, TZ_M4Q_2X3, TZ_M4Q_WIDEN4, TZ_M4Q_DW3, TZ_M4Q_PLANE, TZ_MVE_2X3 } TensorizeKind;

typedef struct Stmt Stmt;
struct Stmt {
    StmtKind kind;
    int var;            /* ST_FOR */
    int64_t extent;     /* ST_FOR */
    ForKind for_kind;   /* ST_FOR annotation set by schedules */
    TensorizeKind tz;   /* ST_FOR with FOR_TENSORIZE: the intrinsic, or TZ_NONE */
    int64_t tz_arg[3];  /* the intrinsic's constants (TensorizeKind) */
    int buf;            /* ST_STORE, ST_DECL */
    Expr *index;        /* ST_STORE */
    Expr *value;        /* ST_STORE */
    Expr *cond;         /* ST_IF */
    int n_body;
    Stmt **body;
    /* FOR_TENSORIZE tile: elements past the vector operand's first one to
     * prefetch at every reduce step (0: none); emit_tile.c prints one
     * guarded __builtin_prefetch per 64 bytes of the tile's vectors */
    int64_t prefetch;
    /* the same, further ahead and into L2 only (0: none) */
    int64_t prefetch_l2;
    /* FOR_PARALLEL: consecutive iterations a thread takes at a time (0 or
     * 1: one; tpl_parallel_chunks) */
    int64_t chunk;
};

/* A kernel implemented by one runtime function (string operators, which
 * loop IR cannot express): the emitter prints `return FN(args);` and the
 * run function returns the status when it is not 0. */
typedef enum ExtArgKind { EXT_BUF, EXT_INT, EXT_STRINGS, EXT_INTS } ExtArgKind;
typedef struct ExtArg {
    ExtArgKind kind;
    int buf;                     /* EXT_BUF: buffer id */
    int64_t ival;                /* EXT_INT */
    int n_strings;               /* EXT_STRINGS: a constant array of strings */
    const char *const *strings;
    int n_ints;                  /* EXT_INTS: a constant int32_t array */
    const int32_t *ints;
} ExtArg;
#define EXT_MAX_ARGS 12
typedef struct ExternCall {
    const char *fn;              /* a tvmrt_ function */
    int n_args;
    ExtArg args[EXT_MAX_ARGS];
} ExternCall;

/* One kernel: the unit emitted as one C function. Built by lowering one node
 * (or, after fusion, a group of nodes). */
typedef struct Kernel {
    const char *name;        /* C function name suffix, unique in the model */
    const char *origin;      /* ONNX nodes it implements, for the C comment */
    int n_bufs, cap_bufs;
    Buffer *bufs;
    int n_vars, cap_vars;
    const char **var_names;  /* printing names of loop variables */
    int n_stages, cap_stages;
    Compute *stages;
    Stmt *body;              /* loop IR after scheduling */
    int64_t macs;            /* multiply-accumulates (for reports) */
    int op;                  /* OpKind of the node that was lowered (the master
                                node of a fused group); OP_UNKNOWN if none */
    int n_nodes;             /* graph nodes implemented by this kernel */
    const int32_t *nodes;    /* their indexes, in execution order */
    const ExternCall *ext;   /* set: a runtime call, no stages or loops */
    const struct KnobInfo *knobs; /* set by a tunable template: workload key,
                                     knob space and knobs used (lower/knobs.h) */
} Kernel;

/* Lowering context handed to lower_<Op>(). */
typedef struct Lower {
    Graph *g;
    Diag *d;
    Arena *arena;
    Kernel *k;               /* kernel being built */
} Lower;

/* ---- Expression builders (all allocate from L->arena) ---- */
Expr *ex_int(Lower *L, int64_t v);                 /* DT_INT64 */
Expr *ex_const_int(Lower *L, DType t, int64_t v);  /* integer/bool of type t */
Expr *ex_float(Lower *L, DType t, double v);       /* float of type t */
Expr *ex_var(Lower *L, const IterVar *iv);
Expr *ex_acc(Lower *L, DType t);
Expr *ex_load(Lower *L, int buf, Expr *offset);
/* row-major offset from `rank` indices into a tensor of shape dims */
Expr *ex_offset(Lower *L, int rank, const int64_t *dims, Expr *const *idx);
Expr *ex_load_nd(Lower *L, int buf, int rank, const int64_t *dims, Expr *const *idx);
Expr *ex_unary(Lower *L, UnaryOp op, Expr *a);
/* Arithmetic result type is a's type (b is cast if it differs); comparisons
 * and logical ops yield BOOL. Constant operands are folded for index math. */
Expr *ex_binary(Lower *L, BinaryOp op, Expr *a, Expr *b);
Expr *ex_select(Lower *L, Expr *cond, Expr *a, Expr *b);
Expr *ex_cast(Lower *L, DType t, Expr *a);
/* shorthands for index arithmetic */
Expr *ex_add(Lower *L, Expr *a, Expr *b);
Expr *ex_sub(Lower *L, Expr *a, Expr *b);
Expr *ex_mul(Lower *L, Expr *a, Expr *b);
Expr *ex_lt(Lower *L, Expr *a, Expr *b);
Expr *ex_and(Lower *L, Expr *a, Expr *b);
/* loop variable by id (a variable made by lower_itervar) */
Expr *ex_var_id(Lower *L, int var);
/* copy of node e with operands a, b, c (rewrites that keep e's kind, type
 * and fields; no folding) */
Expr *ex_with(Lower *L, const Expr *e, Expr *a, Expr *b, Expr *c);

/* ---- Statement builders (all allocate from L->arena) ---- */
/* statement of `kind` with n_body empty body slots */
Stmt *st_new(Lower *L, StmtKind kind, int n_body);
Stmt *st_seq(Lower *L, int n_body);
/* for iv in 0..iv->extent: body (serial) */
Stmt *st_for(Lower *L, const IterVar *iv, Stmt *body);
/* the same for a variable id and an extent */
Stmt *st_loop(Lower *L, int var, int64_t extent, Stmt *body);
/* buf[index] = value, converted to the buffer's compute type (a bool
 * buffer stores value != 0); marks buf written */
Stmt *st_store(Lower *L, int buf, Expr *index, Expr *value);
/* if (cond) then: then itself when cond is constant true, an empty
 * sequence when false */
Stmt *st_if(Lower *L, Expr *cond, Stmt *then);
/* if (cond) then else els, folded the same way */
Stmt *st_if_else(Lower *L, Expr *cond, Stmt *then, Stmt *els);
/* declares local buffer buf around body */
Stmt *st_decl(Lower *L, int buf, Stmt *body);

/* ---- Kernel building ---- */
/* Zeroed memory from L->arena; dies when the arena is exhausted. */
void *lower_alloc(Lower *L, size_t n);
/* Buffer for graph value vi (scope from the value: input/output/const/arena). */
int lower_buf_value(Lower *L, int32_t vi);
/* Kernel-private scratch buffer in the arena. */
int lower_buf_temp(Lower *L, const char *name, DType t, int64_t numel);
IterVar lower_itervar(Lower *L, const char *name, int64_t extent);
/* New stage; axes are created from dims (names i0, i1, ...). The caller
 * fills body (and rop/raxes/init/post as needed). */
Compute *lower_stage(Lower *L, const char *name, int out_buf, int rank, const int64_t *dims);
/* Add a reduce axis to a stage (names r0, r1, ...). */
IterVar *lower_raxis(Lower *L, Compute *c, int64_t extent);

/* Shared helpers for ops */
/* Index expressions into an input of shape (rank_in, dims_in) broadcast
 * numpy-style to output axes c->axes (right-aligned). */
Expr *ex_load_broadcast(Lower *L, int buf, int rank_in, const int64_t *dims_in,
                        const Compute *c);
/* Elementwise stage over value `out`: creates the stage and returns it. */
Compute *lower_elemwise_stage(Lower *L, Node *n, int32_t out);
/* v (float) clamped to +-the largest finite value of float8 type `to`,
 * NaN kept: the saturation of Cast and QuantizeLinear (op_elemwise.c). */
Expr *lower_f8_saturate(Lower *L, Expr *v, DType to);

/* ---- Schedules and printing ---- */
/* Naive schedule: one loop nest per stage, in order. */
Stmt *schedule_naive(Lower *L);
/* The flat index a stage stores its output at: c->out_index, or the
 * row-major offset of its axes. */
Expr *lower_out_index(Lower *L, const Compute *c);
void loops_dump(const Kernel *k, FILE *f);
void expr_dump(const Kernel *k, const Expr *e, FILE *f);
const char *te_unary_name(int op);  /* "exp"... for printers */
const char *te_binary_name(int op); /* "+", "min"... */

#endif
