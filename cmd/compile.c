/*
 * compile_model(): one model through the pipeline (pipeline/pipeline.c),
 * and the option handling the compile and tune commands share.
 */
#include "compile.h"

#include <string.h>

const char *options_bind(Options *o, const char *opt, const char *val)
{
    int values = !strncmp(opt, "--input-value", 13);
    int *n = values ? &o->n_values : &o->n_shapes;
    if (*n >= MAX_SHAPE_BINDINGS)
        return values ? "too many --input-value options (max 64)" : "too many --input-shape options (max 64)";
    (values ? o->values : o->shapes)[(*n)++] = val;
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
    rc = pipeline_run(&pl);
    arena_free(&arena);
    return rc;
}
