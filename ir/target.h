/*
 * Target descriptions. Each target is one JSON file in targets/ (embedded in
 * the binary at build time, see scripts/embedtool.c), or a JSON file given
 * by path (`-t dir/NAME.json`). A file may be an alias
 * ({"alias": "cortex-m4"}). Fields used so far: isa (which picks the
 * family: TargetFamily, ir/family.c), vector_bits, fpu, alignment,
 * preferred_layout, cflags (for NAME.mk), cc (suggested compiler),
 * vector_registers, l1_bytes, l2_bytes, schedule (knobs: TargetKnobs),
 * intrinsics (declarations: see TileIntrin and docs/adding-a-target.md).
 */
#ifndef TVMCC_TARGET_H
#define TVMCC_TARGET_H

#include <stdio.h>

#include "arena.h"

/* The compute definition of a tile intrinsic, parsed from its "compute"
 * text (e.g. "acc[p,v] = acc[p,v] + a[p] * b[p,v]") into a tree. */
typedef enum TilePatKind { TPAT_LOAD, TPAT_ADD, TPAT_MUL } TilePatKind;
typedef struct TilePat {
    TilePatKind kind;
    const char *name;          /* TPAT_LOAD: the operand's name */
    int role;                  /* TPAT_LOAD: TILE_ACC, TILE_BCAST, TILE_VEC */
    unsigned axes;             /* TPAT_LOAD: bit i set: may vary with axis i
                                  (0 rows, 1 vector); clear: must not */
    const struct TilePat *a, *b; /* TPAT_ADD / TPAT_MUL operands, in order */
} TilePat;

/* Operand roles: the accumulator (the left-hand side), the operand that
 * does not vary with the vector axis (broadcast) and the one that does
 * (loaded as whole vectors, unit stride along the vector axis). */
enum { TILE_ACC, TILE_BCAST, TILE_VEC, TILE_ROLES };

/* The C templates a tile printer needs; see docs/adding-a-target.md. */
enum { TT_LOAD, TT_STORE, TT_BROADCAST, TT_FMA, TT_COUNT };

typedef struct TileAxis {
    const char *name;
    int64_t min, max, multiple; /* allowed extents: min..max, multiples of */
} TileAxis;

/* A declared tile intrinsic ("kind": "tile"): a nest of reduce loops
 * around `for p: for v: OUT[p,v] = OUT[p,v] + X * Y` replaced by a
 * register tile printed from the templates (emit_c/emit_tile.c). */
typedef struct TileIntrin {
    const char *name;          /* its key in "intrinsics" */
    const char *compute;       /* the compute text as declared */
    const TilePat *value;      /* right-hand side of the compute */
    const char *role_name[TILE_ROLES]; /* operand names, by role */
    TileAxis axes[2];          /* rows, vector (the order of OUT's indices) */
    int reduce_loops;          /* most reduce loops around the tile (1..3) */
    const char *ctype;         /* C scalar type ("float" for float32) */
    int lanes;                 /* elements per vector */
    const char *vector_type;   /* C type of one vector */
    const char *header;        /* C printed once at the top of NAME.c, or "" */
    const char *guard;         /* preprocessor condition around the tile
                                  (the portable nest under #else), or NULL */
    const char *loop_prefix;   /* lines printed before each reduce loop, or "" */
    const char *tpl[TT_COUNT]; /* C templates with $placeholders */
} TileIntrin;

/* The operations of a lane-wise vector intrinsic ("kind": "lanes"). */
enum { LT_LOAD, LT_STORE, LT_BROADCAST, LT_ADD, LT_SUB, LT_MUL, LT_DIV, LT_MIN, LT_MAX, LT_FMA, LT_FMA_SCALAR,
       LT_COUNT };

/* A declared lane-wise vector intrinsic: a float32 loop of `lanes`
 * iterations whose body is lane-wise arithmetic is printed once on whole
 * vectors, each operation from its template (emit_c/emit_arm.c). The
 * operation set is the declared templates: without "div" a loop that
 * divides stays scalar; without "fma"/"fma_scalar" x + a*b is an add of a
 * multiply. */
typedef struct LaneIntrin {
    const char *name;          /* its key in "intrinsics" (printed in comments) */
    int lanes;
    const char *vector_type;
    const char *header;        /* C printed once at the top of NAME.c, or "" */
    const char *guard;         /* preprocessor condition (portable loop under #else) */
    const char *tpl[LT_COUNT]; /* NULL: the operation is not declared */
} LaneIntrin;

/* Schedule knobs: the "schedule" object of the target file, checked when
 * the target is loaded (docs/adding-a-target.md lists the keys, which
 * templates read them and their defaults). Which half applies is the
 * family's choice (TargetFamily.knob_keys). */
typedef struct TargetKnobs {
    /* the generic templates (lower/templates.c) */
    int lanes;      /* vector tile in floats (also the Arm templates' tile
                       width along the vector axis) */
    int rows;       /* row tile */
    int unroll_vec; /* a tile's vector loop is unrolled up to this extent
                       (0: it stays a vectorized loop) */
    int pad;        /* local tile rows padded to this many floats (whole
                       vectors for an intrinsic printer), 0: none */
    int part_vec;   /* the vector axis is partitioned into border and
                       interior pieces before it is split (else its
                       padding tests stay, as lane masks) */
    int conv_l1_pct; /* the packed conv tiles' reduction blocking: a
                        weight block takes at most this share of L1, in
                        percent (0: the default, 75) */
    int dw_nchwc;   /* depthwise convs take the blocked layout NCHW<b>c
                       (their lanes channels: passes/layout.c); 0: a graph
                       with depthwise convs stays NCHW */
    int no_tile_prefetch; /* 1: the packed conv and matmul tiles do not
                             prefetch their weights TILE_PREFETCH_STEPS
                             steps ahead into L1 (lower/tpl_packed.c) */
    int winograd;   /* 1: blocked 3x3 convs as Winograd F(2x2, 3x3)
                       (passes/winograd.c) */
    /* the Arm templates (lower/templates_arm.c) */
    int acc;        /* float accumulators per register tile */
    int vec;        /* > 1: float32 vector tiles of exactly vec lanes */
    int unroll_red; /* innermost reduce loops up to this extent unrolled */
    int dsp;        /* integer sums of products paired for SMLAD */
    int int_acc, int_lanes; /* the integer tiles with dsp */
    int dot;        /* AArch64: 8-bit sums as NEON dot products (SDOT / SMLAL),
                       their convs NHWC (lower/templates_a64q.c) */
} TargetKnobs;

struct Target;
struct Lower;
struct Kernel;
struct Printer;
struct Stmt;

/* A family of targets: everything that differs between ISAs in code,
 * chosen once from the file's "isa" when the target is loaded. The
 * table of families is in ir/family.c, the only place that looks at an
 * isa string; the hooks are defined by the layer that runs them. */
typedef struct TargetFamily {
    const char *name;             /* "portable", "x86", "arm", "generic" */
    const char *const *isas;      /* the "isa" values it takes, NULL-ended */
    int portable;                 /* the portable C target: tiles printed as
                                     plain C loops the compiler vectorizes
                                     (emit_c/emit_ctile.c), 8-float tiles */
    int tunable;                  /* the generic templates' row tile comes
                                     from tuning logs (lower/knobs.h) */
    /* which "schedule" keys target t reads (NULL-ended) */
    const char *const *(*knob_keys)(const struct Target *t);
    /* why some intrinsic target t declares would never be printed (a
     * message, and the field to blame in *field), or NULL */
    const char *(*unprinted)(Arena *a, const struct Target *t, const char **field);
    /* lower/: schedules the kernel L->k (template_apply calls it) */
    void (*schedule)(struct Lower *L, const struct Target *t);
    /* float32 lanes of the vector loops its printer takes whole (the
     * templates cut loops into such vectors), 0: none */
    int (*loop_lanes)(const struct Target *t);
    /* emit_c/: prints the headers its printers need, once per NAME.c */
    void (*print_begin)(struct Printer *pr, FILE *f, const struct Target *t);
    /* prints statement s (a loop, or a local declaration) with the
     * family's intrinsics and returns 1, or prints nothing and returns 0;
     * emit is the caller's statement printer (for bodies and fallbacks) */
    int (*print_stmt)(struct Printer *pr, FILE *f, const struct Kernel *k, const struct Stmt *s,
                      int depth, void (*emit)(struct Printer *, FILE *, const struct Kernel *,
                                              const struct Stmt *, int));
} TargetFamily;

/* The hooks of the families, defined in lower/ and emit_c/. */
void template_generic(struct Lower *L, const struct Target *t);  /* lower/templates.c */
void template_arm(struct Lower *L, const struct Target *t);      /* lower/templates_arm.c */
int emit_intrin_lanes(const struct Target *t);                   /* emit_c/emit_intrin.c */
void emit_intrin_begin(struct Printer *pr, FILE *f, const struct Target *t);
int emit_intrin_stmt(struct Printer *pr, FILE *f, const struct Kernel *k, const struct Stmt *s,
                     int depth, void (*emit)(struct Printer *, FILE *, const struct Kernel *,
                                             const struct Stmt *, int));
void emit_arm_begin(struct Printer *pr, FILE *f, const struct Target *t); /* emit_c/emit_arm.c */
int emit_arm_stmt(struct Printer *pr, FILE *f, const struct Kernel *k, const struct Stmt *s,
                  int depth, void (*emit)(struct Printer *, FILE *, const struct Kernel *,
                                          const struct Stmt *, int));

typedef struct Target {
    const char *name;             /* canonical name, e.g. "cortex-m4" */
    const char *file;             /* the description's file, for messages */
    const char *isa;              /* "c", "x86-64", "armv7e-m", "aarch64"... */
    const TargetFamily *family;   /* chosen from isa (never NULL once loaded) */
    TargetKnobs knobs;            /* the "schedule" object, defaults filled */
    const char *cflags;           /* flags NAME.mk passes to the compiler */
    const char *cc;               /* suggested compiler command */
    const char *preferred_layout; /* "NCHW", "NHWC", "NCHW16c" (blocked channels, passes/layout.c) */
    int vector_bits;              /* SIMD width, 0 if none */
    int has_fpu;                  /* single-precision FPU */
    int alignment;                /* arena alignment in bytes */
    int vector_registers;         /* SIMD registers (0: unknown) */
    int64_t l1_bytes;             /* per-core L1 data cache (0: unknown) */
    int64_t l2_bytes;             /* per-core L2 cache (0: unknown) */
    int fma_tile;                 /* declares a tile intrinsic (n_tiles > 0):
                                     lower/tpl_packed.c builds register
                                     tiles for it to tensorize */
    int n_tiles;
    const TileIntrin *tiles;      /* declared tile intrinsics, file order */
    const LaneIntrin *lane_ops;   /* declared lane-wise vector intrinsic, or NULL */
    int native;                   /* loaded as `-t native` (name: the one it resolved to) */
} Target;

/* Load target `name` (an embedded target, "native" for
 * target_native_name(), or a path to a JSON file when it
 * contains '/' or ends in ".json"); on failure returns NULL and writes a
 * message into *err (arena string): an unknown target names the known
 * ones; a bad intrinsic declaration names the file and the field. */
const Target *target_load(Arena *a, const char *name, const char **err);
/* The embedded target `-t native` loads: the best one the compiling
 * machine runs (ir/hostcpu.c: cpuid on x86-64, /proc/cpuinfo on AArch64,
 * else "c"; TVMCC_TEST_CPU_FLAGS replaces the detected features). */
const char *target_native_name(void);
/* Whether `name` is an embedded target or a readable file path (a load may
 * still fail on its contents). */
int target_known(const char *name);
/* Parses the text of a target file; `file` names it in messages. Aliases
 * are followed among the embedded targets. */
const Target *target_parse(Arena *a, const char *file, const char *name, const char *json, size_t len,
                           const char **err);
/* Space-separated list of known target names, sorted. */
const char *target_names(Arena *a);
/* The family of isa, or NULL when no family takes it (ir/family.c). */
const TargetFamily *target_family(const char *isa);
/* The families and their isa values, for messages. */
const char *target_isas(Arena *a);
/* Fills t->knobs with the defaults, which depend on t->vector_bits only
 * (what a target file that omits "schedule" gets). */
void target_default_knobs(Target *t);

#endif
