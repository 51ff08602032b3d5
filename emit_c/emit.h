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
#include "names.h"
#include "printer.h"

/* A readable table of kernels and memory (tvmcc --report), to f. */
void emit_report(const Program *p, FILE *f);
/* What NAME_report.html shows beside the Program: a profile's per-kernel
 * times or counts (tvmcc verify --profile; pipeline/report.c reads it) and
 * the code size measured by building NAME.c and tvmrt.c with the target's
 * compiler. */
typedef struct ReportInfo {
    const char *profile;       /* the profile file, or NULL */
    const char *unit;          /* its unit: "ns", "instructions" or "cycles" */
    long runs;                 /* runs the profile averaged */
    const double *value;       /* per kernel: mean per run; < 0: not measured */
    int code_measured;         /* the fields below hold measurements */
    int64_t code_bytes;        /* text + data of NAME.o */
    int64_t runtime_bytes;     /* text + data of tvmrt.o */
    int64_t static_arena_bytes; /* bss of NAME.o (the static arena) */
    const char *code_note;     /* how the code was measured, or why it was not */
} ReportInfo;

/* NAME_report.html (tvmcc --report-html): one self-contained page, the
 * arena plan as SVG, per-kernel figures and the totals, to f. */
void emit_report_html(const Program *p, const ReportInfo *ri, FILE *f);
/* Bytes a kernel reads / writes in its non-local buffers (each once). */
int64_t emit_kernel_bytes(const Kernel *k, int written);
/* Prints p's C into the null device and returns how many loop nests
 * marked FOR_TENSORIZE no printer of the target matched (printed as
 * scalar loops), miss[ki] per kernel (n_kernels entries). Emitting NAME.c
 * warns about each such kernel. */
int emit_tensorize_misses(const Program *p, int *miss);

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

/* ---- inside emit_c/ (docs/architecture.md, The emitted C: which file
 * calls which) ---- */
/* The writers of NAME.c (emit_c.c) and NAME_weights.c (emit_weights.c). */
int emit_c_file(Program *p, FILE *f, Diag *d);
int emit_weights(Program *p, FILE *f, Diag *d);
/* A kernel that is one runtime call (Kernel.ext): static int function
 * (emit_ext.c). */
void emit_ext_kernel(FILE *f, const Program *p, const Kernel *k);
/* Expressions as C (emit_expr.c). */
void emit_expr(Printer *pr, FILE *f, const Kernel *k, const Expr *e);
void emit_index(Printer *pr, FILE *f, const Kernel *k, const Expr *e, int prec);

#endif
