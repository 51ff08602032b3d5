/*
 * Binding graph-input shapes from the command line (--input-shape) and the
 * check that every graph input ends up with a static shape. tvmcc plans
 * memory at compile time, so symbolic dimensions ("batch") must be fixed
 * before inference; the error for a dynamic input suggests a ready-made
 * option with the declared dims and 1 for each symbolic one.
 */
#include "onnx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"

/* "a, b, c" listing the graph inputs, for "no such input" errors. */
static const char *input_names(Graph *g)
{
    const char *s = "";
    int32_t i;
    for (i = 0; i < g->n_inputs && s; i++)
        s = arena_printf(g->arena, "%s%s'%s'", s, i ? ", " : "", g->values[g->inputs[i]].name);
    return s ? s : "?";
}

int onnx_bind_input_shape(Graph *g, const char *spec, Diag *d)
{
    const char *eq = spec ? strrchr(spec, '=') : NULL;
    const char *p;
    char *name;
    int64_t dims[TVMCC_MAX_RANK], numel = 1;
    int rank = 0, i;
    int32_t vi;
    Value *v;
    if (!eq || eq == spec)
        return diag_error(d, NULL, "--input-shape", "'%s' is not of the form NAME=D0,D1,...",
                          spec ? spec : "");
    name = arena_strndup(g->arena, spec, (size_t)(eq - spec));
    if (!name)
        return diag_error(d, NULL, "--input-shape", "out of memory");
    p = eq + 1;
    while (*p) {
        char *end;
        long long x;
        errno = 0;
        x = strtoll(p, &end, 10);
        if (end == p || errno || x < 0 || (*end && *end != ','))
            return diag_error(d, NULL, "--input-shape",
                              "'%s': dimensions must be non-negative integers separated by commas",
                              spec);
        if (rank == TVMCC_MAX_RANK)
            return diag_error(d, NULL, "--input-shape", "'%s': more than %d dimensions", spec,
                              TVMCC_MAX_RANK);
        if (ck_mul(numel, (int64_t)x, &numel) || numel > ONNX_MAX_TENSOR_ELEMS)
            return diag_error(d, NULL, "--input-shape",
                              "'%s': more than %lld elements (the limit per tensor)", spec,
                              (long long)ONNX_MAX_TENSOR_ELEMS);
        dims[rank++] = (int64_t)x;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return diag_error(d, NULL, "--input-shape", "'%s': trailing comma", spec);
    }
    vi = graph_find_value(g, name);
    if (vi < 0 || g->values[vi].input_index < 0) {
        if (vi >= 0 && g->values[vi].is_initializer)
            return diag_error(d, NULL, "--input-shape",
                              "'%s' is an initializer (a constant), not a graph input", name);
        return diag_error(d, NULL, "--input-shape", "the model has no graph input '%s' (inputs: %s)",
                          name, input_names(g));
    }
    v = &g->values[vi];
    if (v->rank >= 0 && v->rank != rank)
        return diag_error(d, NULL, "--input-shape",
                          "input '%s' has rank %d in the model, but %d dimensions were given", name,
                          v->rank, rank);
    for (i = 0; v->rank >= 0 && i < rank; i++)
        if (v->dims[i] >= 0 && v->dims[i] != dims[i])
            return diag_error(d, NULL, "--input-shape",
                              "dimension %d of input '%s' is %lld in the model, not %lld", i, name,
                              (long long)v->dims[i], (long long)dims[i]);
    v->rank = rank;
    for (i = 0; i < TVMCC_MAX_RANK; i++) {
        v->dims[i] = i < rank ? dims[i] : -1;
        v->dim_param[i] = NULL;
    }
    return 0;
}

int onnx_check_inputs_static(Graph *g, Diag *d)
{
    int32_t k;
    int bad = 0;
    for (k = 0; k < g->n_inputs; k++) {
        Value *v = &g->values[g->inputs[k]];
        const char *which = "", *suggest = "";
        int i, ndyn = 0;
        if (v->dtype == DT_UNDEF) {
            diag_error(d, NULL, NULL, "input '%s' has no element type in the model", v->name);
            bad++;
            continue;
        }
        if (v->rank < 0) {
            diag_error(d, NULL, NULL, "input '%s' has unknown rank; bind it with --input-shape "
                       "%s=D0,D1,...", v->name, v->name);
            bad++;
            continue;
        }
        for (i = 0; i < v->rank; i++) {
            suggest = arena_printf(g->arena, "%s%s%lld", suggest ? suggest : "", i ? "," : "",
                                   v->dims[i] >= 0 ? (long long)v->dims[i] : 1LL);
            if (v->dims[i] >= 0)
                continue;
            if (v->dim_param[i])
                which = arena_printf(g->arena, "%s%s%d ('%s')", which ? which : "",
                                     ndyn ? ", " : "", i, v->dim_param[i]);
            else
                which = arena_printf(g->arena, "%s%s%d", which ? which : "", ndyn ? ", " : "", i);
            ndyn++;
        }
        if (ndyn) {
            diag_error(d, NULL, NULL, "input '%s' has dynamic dimension%s %s; bind it with "
                       "--input-shape %s=%s", v->name, ndyn > 1 ? "s" : "", which ? which : "?",
                       v->name, suggest ? suggest : "?");
            bad++;
        }
    }
    return bad;
}
