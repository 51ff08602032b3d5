/*
 * The compile pipeline as the driver runs it: load -> bind shapes ->
 * infer (folding constants as it goes) -> passes -> lower -> plan -> emit.
 */
#ifndef TVMCC_COMPILE_H
#define TVMCC_COMPILE_H

#define TVMCC_VERSION "0.1.0"
#define MAX_SHAPE_BINDINGS 64

typedef struct Options {
    const char *model;        /* path of the .onnx file */
    const char *target;       /* target name, "c" by default */
    const char *out_dir;      /* NULL: no files (only dumps) */
    const char *name;         /* NAME, "model" by default */
    const char *shapes[MAX_SHAPE_BINDINGS]; /* --input-shape specs */
    int n_shapes;
    const char *values[MAX_SHAPE_BINDINGS]; /* --input-value specs */
    int n_values;
    const char *dump_ir;      /* NULL, or a pass name ("" = after the last pass) */
    int dump_loops;
    int verbose;
    int opt_level;            /* -O0 turns the optimizing passes off; default 2 */
    int no_fuse;              /* --no-fuse */
    int report;               /* --report: kernel and memory table on stdout */
    long long string_bytes;   /* --string-bytes; 0: the default */
    const char *tuning_log;   /* --tuning-log FILE.json, or NULL */
} Options;

/* Returns the process exit status: 0 ok, 1 model or user error. */
int compile_model(const Options *o);

/* The stages compile_model() runs, for tvmcc tune (cmd/tune.c); each
 * returns 0 or 1 after reporting. compile_front: load, bind shapes, infer,
 * passes, and the Program's graph, target and names. compile_lower: one
 * kernel per fused group into p->kernels (lower_knob_table applies). */
#include "../ir/arena.h"
struct Program;
struct Diag;
struct Target;
struct KnobTable;
int compile_front(const Options *o, Arena *arena, struct Diag *d, struct Program *p);
int compile_lower(const Options *o, Arena *arena, struct Diag *d, struct Program *p);

/* Removes the files of a flat directory (an output or work directory that
 * tvmcc made) and the directory itself; errors are ignored. */
void compile_remove_tree(const char *dir);

/* tvmcc tune (cmd/tune.c): argv after "tune"; returns the exit status. */
int tune_main(int argc, char **argv);

/* Reads a tuning log (cmd/tunelog.c) into *out: NULL when the log is for
 * another target (a warning is printed). A malformed log is an error
 * naming the file and field: returns 1. */
int tunelog_load(Arena *a, const char *file, const struct Target *t, const struct KnobTable **out);

#endif
