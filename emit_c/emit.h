/*
 * C emitter. A Program is everything the emitter needs: the graph (for
 * values, constants and the interface), the kernels in execution order and
 * the memory plan. emit_program() writes the output files (listed in
 * docs/user-guide.md, Output directory) into an existing directory.
 */
#ifndef TVMCC_EMIT_H
#define TVMCC_EMIT_H

#include "../ir/graph.h"
#include "../ir/target.h"
#include "../lower/te.h"

/* What one graph pass did, for NAME.json and --report. */
typedef struct PassStat {
    const char *name;
    int nodes_before, nodes_after; /* live nodes */
} PassStat;

#define MAX_PASS_STATS 16

typedef struct Program {
    Graph *g;
    const Target *target;
    const char *name;          /* NAME: C identifier prefix and file stem */
    const char *model_base;    /* model file's base name, for comments */
    const char *version;       /* tvmcc version string */
    int n_kernels;
    Kernel **kernels;          /* execution order; NULL entries are skipped */
    int64_t *value_offset;     /* per value: arena offset, -1 if not in the arena */
    int64_t **temp_offset;     /* per kernel, per buffer: arena offset of BUF_TEMP */
    int64_t workspace_bytes;
    int64_t lower_bound_bytes;
    int64_t weights_bytes;     /* filled by emit_program */
    int n_pass_stats;
    PassStat pass_stats[MAX_PASS_STATS];
} Program;

/* A readable table of kernels and memory (tvmcc --report), to f. */
void emit_report(const Program *p, FILE *f);
/* Bytes a kernel reads / writes in its non-local buffers (each once). */
int64_t emit_kernel_bytes(const Kernel *k, int written);
/* Prints p's C into the null device and returns how many loop nests
 * marked FOR_TENSORIZE no printer of the target matched (printed as
 * scalar loops), miss[ki] per kernel (n_kernels entries). Emitting NAME.c
 * warns about each such kernel. */
int emit_tensorize_misses(const Program *p, int *miss);

int emit_program(Program *p, const char *dir, Diag *d);

/* Lowers every fused group of p->g (after the passes) into p->kernels, in
 * execution order, named kN_op; each kernel's loops go to dump_loops
 * unless NULL. Returns 1 after reporting an error (kernels so far kept). */
int program_lower(Program *p, Arena *arena, FILE *dump_loops, Diag *d);
/* Places every arena tensor and temporary of p's kernels in one arena:
 * liveness over the kernel order, in-place reuse where lower/fuse.c allows
 * it, best-fit placement (passes/plan_memory.c); sets the offsets,
 * workspace_bytes and lower_bound_bytes. */
int program_plan(Program *p, Diag *d);

/* helpers shared by the emit_*.c files */
/* Model-supplied text made safe for a C comment: bytes outside printable
 * ASCII become '?', and a star-slash cannot close the comment. */
const char *emit_safe(Arena *a, const char *s);
/* NAME upper-cased, for macros. */
const char *emit_upper(Arena *a, const char *s);
const char *emit_ctype(DType t);          /* storage C type */
const char *emit_compute_ctype(DType t);  /* C type of computed values */
void emit_expr(FILE *f, const Kernel *k, const Expr *e);
/* Function printed for float32 exp and sigmoid instead of expf (the
 * portable target's inline exp, emit_ctile.c); NULL restores expf. */
void emit_expr_set_expf(const char *name);
void emit_index(FILE *f, const Kernel *k, const Expr *e, int prec);
int emit_weights(Program *p, FILE *f, Diag *d); /* NAME_weights.c */
/* A kernel that is one runtime call (Kernel.ext): static int function. */
void emit_ext_kernel(FILE *f, const Program *p, const Kernel *k);
int64_t emit_weights_bytes(const Program *p);   /* bytes of constants emitted */
/* Sets used[v] for every value emitted as a constant: read by a kernel, or a
 * constant graph output. used has g->n_values entries, zeroed. */
void emit_mark_used_consts(const Program *p, char *used);
const char *emit_const_name(const Program *p, int32_t vi); /* "NAME_w3" */
/* The declaration of constant vi without initializer, the same text in
 * NAME.c (after "extern") and NAME_weights.c: "const union NAME_w3_u {...} NAME_w3". */
const char *emit_const_decl(const Program *p, int32_t vi);
/* How a kernel argument refers to the typed elements: "NAME_w3.v". */
const char *emit_const_ref(const Program *p, int32_t vi);

#endif
