/*
 * C emitter. A Program (lower/program.h) is everything the emitter needs:
 * the graph (for values, constants and the interface), the kernels in
 * execution order and the memory plan. emit_program() prints the output
 * files (listed in docs/user-guide.md, Output directory).
 */
#ifndef TVMCC_EMIT_H
#define TVMCC_EMIT_H

#include "../ir/graph.h"
#include "../ir/target.h"
#include "../lower/program.h"
#include "../lower/te.h"

/* A readable table of kernels and memory (tvmcc --report), to f. */
void emit_report(const Program *p, FILE *f);
/* Bytes a kernel reads / writes in its non-local buffers (each once). */
int64_t emit_kernel_bytes(const Kernel *k, int written);

/* The files of one output, each printed into an unnamed temporary file
 * (tmpfile(): deleted by the system when closed, or when tvmcc exits or
 * aborts); the pipeline copies them into the output directory
 * (pipeline/output.c). */
#define EMIT_MAX_FILES 16
typedef struct EmitFile {
    const char *name;          /* file name in the output directory */
    FILE *f;                   /* its contents */
} EmitFile;
typedef struct EmitFiles {
    int n;
    EmitFile file[EMIT_MAX_FILES];
} EmitFiles;

/* Prints the files of the output contract (docs/user-guide.md, Output
 * directory) into *out, which it empties first; sets p->weights_bytes.
 * Returns 0, or 1 after reporting an error. Either way the files made so
 * far are in *out, for emit_files_close. */
int emit_program(Program *p, EmitFiles *out, Diag *d);
void emit_files_close(EmitFiles *out);

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
