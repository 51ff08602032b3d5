/*
 * compile_model(): one model through the pipeline (pipeline/pipeline.c),
 * and the option handling the compile and tune commands share.
 */
#include "compile.h"

#include <stdio.h>
#include <string.h>

#include "../ir/progress.h"

const char *options_bind(Options *o, const char *opt, const char *val)
{
    const char **list = o->shapes, *what = "--input-shape";
    int *n = &o->n_shapes;
    if (!strncmp(opt, "--input-value", 13)) {
        list = o->values, n = &o->n_values, what = "--input-value";
    } else if (!strncmp(opt, "--sequence-length", 17)) {
        list = o->seq_lengths, n = &o->n_seq_lengths, what = "--sequence-length";
    } else if (!strncmp(opt, "--optional-absent", 17)) {
        list = o->absent, n = &o->n_absent, what = "--optional-absent";
    }
    if (*n >= MAX_SHAPE_BINDINGS) {
        static char msg[64];
        snprintf(msg, sizeof msg, "too many %s options (max %d)", what, MAX_SHAPE_BINDINGS);
        return msg;
    }
    list[(*n)++] = val;
    return NULL;
}

int compile_model(const Options *o)
{
    Arena arena;
    Diag d;
    Pipeline pl;
    int rc;
    /* The compiler's own memory for one model: far above what real models
     * need (resnet18 uses about 300 MB), so a hostile file hits an error
     * instead of exhausting the machine. */
    arena_init(&arena, (size_t)8 << 30);
    diag_init(&d, o->model);
    pipeline_init(&pl, o, &arena, &d);
    progress_start("tvmcc");
    rc = pipeline_run(&pl);
    progress_stop();
    arena_free(&arena);
    return rc;
}
