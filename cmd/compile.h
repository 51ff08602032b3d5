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
    const char *dump_ir;      /* NULL, or a pass name ("" = after the last pass) */
    int dump_loops;
    int verbose;
    int opt_level;            /* -O0 turns the optimizing passes off; default 2 */
    int no_fuse;              /* --no-fuse */
    int report;               /* --report: kernel and memory table on stdout */
    long long string_bytes;   /* --string-bytes; 0: the default */
} Options;

/* Returns the process exit status: 0 ok, 1 model or user error. */
int compile_model(const Options *o);

#endif
