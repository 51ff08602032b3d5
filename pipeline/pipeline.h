/*
 * The compile pipeline, one owner for every caller: the command line
 * (cmd/compile.c), tvmcc tune (cmd/tune.c) and the fuzz harness
 * (test/fuzz/fuzz_compile.c) run the same steps through a Pipeline, the
 * context of one compilation:
 *
 *   pipeline_front  target, load, --input-shape / --input-value binding,
 *                   control-flow inlining, sequence resolution, inference
 *                   with constant folding, the passes
 *   pipeline_lower  --tuning-log, then one kernel per fused group
 *   pipeline_plan   the arena plan
 *   pipeline_run    all three, --report, and the output directory
 *
 * What a stage below needs to know about this compilation (the target for
 * the passes, the constant folder for inference, --string-bytes and the
 * knob table for lowering) it reads from the graph's settings
 * (GraphSettings, ir/graph.h), which the pipeline fills; there are no
 * global settings.
 */
#ifndef TVMCC_PIPELINE_H
#define TVMCC_PIPELINE_H

#include <stddef.h>

#include "../ir/arena.h"
#include "../ir/graph.h"
#include "../ir/target.h"
#include "../lower/knobs.h"
#include "../lower/program.h"
#include "../emit_c/emit.h"

#define TVMCC_VERSION "0.1.0"
#define MAX_SHAPE_BINDINGS 64

/* What to compile and how: the command line's options. */
typedef struct Options {
    const char *model;        /* path of the .onnx file (with model_data: its name) */
    const void *model_data;   /* NULL, or the model's bytes (model_size of them) */
    size_t model_size;
    const char *target;       /* target name, "c" by default */
    const char *out_dir;      /* NULL: no files (only dumps) */
    const char *name;         /* NAME, "model" by default */
    const char *shapes[MAX_SHAPE_BINDINGS]; /* --input-shape specs */
    int n_shapes;
    const char *values[MAX_SHAPE_BINDINGS]; /* --input-value specs */
    int n_values;
    const char *seq_lengths[MAX_SHAPE_BINDINGS]; /* --sequence-length specs */
    int n_seq_lengths;
    const char *absent[MAX_SHAPE_BINDINGS]; /* --optional-absent names */
    int n_absent;
    const char *dump_ir;      /* NULL, or a pass name ("" = after the last pass) */
    int dump_loops;
    int verbose;
    int opt_level;            /* -O0 turns the optimizing passes off; default 2 */
    int no_fuse;              /* --no-fuse */
    int no_winograd;          /* --no-winograd */
    int report;               /* --report: kernel and memory table on stdout */
    int report_html;          /* --report-html: OUT/NAME_report.html */
    const char *profile;      /* --profile FILE: per-kernel times for it, or NULL */
    long long string_bytes;   /* --string-bytes; 0: the default */
    const char *tuning_log;   /* --tuning-log FILE.json, or NULL */
    const char *last_pass;    /* NULL: every pass of the -O level; else the
                               * passes up to this one (tvmcc quantize: "dce") */
    int verify_dies;          /* a graph the verifier rejects after a pass is
                               * an internal error (die), not a message: the
                               * fuzz harness, whose messages are quiet */
} Options;

/* Fills o with the defaults: target c, NAME model, output dir out, -O2. */
void options_init(Options *o);

/* One compilation. */
typedef struct Pipeline {
    const Options *o;         /* what to compile, and how */
    Arena *arena;             /* its memory (the caller frees it) */
    Diag *d;                  /* user and model errors */
    const Target *target;     /* o->target, loaded by pipeline_front */
    const KnobTable *knobs;   /* o->tuning_log's knobs (pipeline_lower), or NULL */
    Program prog;             /* the graph, its kernels and their plan */
    double t0;                /* start, for -v */
} Pipeline;

void pipeline_init(Pipeline *pl, const Options *o, Arena *arena, Diag *d);
/* Each returns 0, or 1 after reporting an error. */
int pipeline_front(Pipeline *pl);
int pipeline_lower(Pipeline *pl);
int pipeline_plan(Pipeline *pl);
/* The whole compile: the three steps above, --report, and with o->out_dir
 * the output directory, written atomically (pipeline_install), with
 * NAME_report.html when o->report_html. */
int pipeline_run(Pipeline *pl);

/* ---- output (pipeline/output.c) ---- */
/* Emits p and installs its files as directory dest: they are generated
 * into temporary files first, then written into a fresh directory next to
 * dest, which is renamed into place (when dest exists, the files are
 * renamed into it one by one). A failure or an internal error (die) at
 * any point leaves no partial output behind. */
int pipeline_install(Program *p, const char *dest, Arena *a, Diag *d);
/* pipeline_install, and with ri (not NULL) NAME_report.html beside the
 * files, after measuring the code size from them (report_code_size). */
int pipeline_install_report(Program *p, const char *dest, ReportInfo *ri, Arena *a, Diag *d);
/* Emits p into the existing directory dir (tvmcc tune's work directory). */
int pipeline_write(Program *p, const char *dir, Diag *d);
/* Removes the files of a flat directory (an output or work directory that
 * tvmcc made) and the directory itself; errors are ignored. */
void pipeline_remove_tree(const char *dir);
/* The first line of a tool's log or output (its error message), without
 * the newline, or "(no output)". */
char *pipeline_first_line(Arena *a, const char *path);

/* ---- tuning logs (pipeline/tunelog.c) ---- */
/* Reads a tuning log into *out: NULL when the log is for another target
 * (a warning is printed). A malformed log is an error naming the file and
 * field: returns 1. */
int tunelog_load(Arena *a, const char *file, const Target *t, const KnobTable **out);
/* The whole of file, NUL-terminated, its length in *len (free() it), or
 * NULL with errno set. */
char *pipeline_read_file(const char *file, long *len);

/* ---- --report-html (pipeline/report.c) ---- */
/* Reads a profile (tvmcc verify --profile) into ri: per-kernel values
 * matched by kernel name. A malformed profile, or one naming a kernel p
 * does not have, is a one-line error naming the file (and the kernel):
 * returns 1. */
int report_load_profile(const Program *p, const char *file, Arena *a, ReportInfo *ri);
/* Builds dir/NAME.c and dir/tvmrt.c with the target's compiler and flags
 * and sets ri's code sizes, or code_note to why they are not measured. */
void report_code_size(const Program *p, const char *dir, Arena *a, ReportInfo *ri);

#endif
