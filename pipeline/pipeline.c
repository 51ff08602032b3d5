/*
 * The steps of one compilation, in order (docs/architecture.md, Pipeline).
 * Each step reports through the Pipeline's Diag and returns 1 on an error;
 * the caller owns the arena and frees it, so a step never cleans up after
 * itself. Timings go to stderr with -v.
 */
#define _DEFAULT_SOURCE
#include "pipeline.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../emit_c/emit.h"
#include "../frontend/infer.h"
#include "../frontend/onnx.h"
#include "../ir/progress.h"
#include "../passes/passes.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int valid_c_name(const char *s)
{
    const char *c;
    if (!*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return 0;
    return 1;
}

static void vlog(const Pipeline *pl, const char *what)
{
    if (!pl->o->verbose)
        return;
    progress_clear();
    fprintf(stderr, "tvmcc: %-16s %8.1f ms\n", what, now_ms() - pl->t0);
}

static int live_nodes(const Graph *g)
{
    int32_t ni;
    int k = 0;
    for (ni = 0; ni < g->n_nodes; ni++)
        k += !g->nodes[ni].dead && !(g->nodes[ni].group >= 0 && g->nodes[ni].group != ni);
    return k;
}

void options_init(Options *o)
{
    memset(o, 0, sizeof *o);
    o->target = "c";
    o->name = "model";
    o->out_dir = "out";
    o->opt_level = 2;
}

void pipeline_init(Pipeline *pl, const Options *o, Arena *arena, Diag *d)
{
    memset(pl, 0, sizeof *pl);
    pl->o = o;
    pl->arena = arena;
    pl->d = d;
    pl->t0 = now_ms();
}

/* The pass table in order, as the -O level, --no-fuse and --no-winograd select; the
 * verifier after each (in debug builds), --dump-ir, and the node counts
 * for NAME.json and --report. */
static int run_passes(Pipeline *pl, Graph *g)
{
    const Options *o = pl->o;
    Program *prog = &pl->prog;
    Diag *d = pl->d;
    int i;
    int dumped = 0;
    for (i = 0; i < pass_count; i++) {
        if (o->opt_level < pass_table[i].min_opt ||
            (o->no_fuse && !strcmp(pass_table[i].name, "fuse")) ||
            (o->no_winograd && !strcmp(pass_table[i].name, "winograd")))
            continue;
        if (prog->n_pass_stats < MAX_PASS_STATS) {
            prog->pass_stats[prog->n_pass_stats].name = pass_table[i].name;
            prog->pass_stats[prog->n_pass_stats].nodes_before = live_nodes(g);
        }
        progress_note("graph passes", i, pass_count);
        if (pass_table[i].run(g, d))
            return 1;
        if (prog->n_pass_stats < MAX_PASS_STATS)
            prog->pass_stats[prog->n_pass_stats++].nodes_after = live_nodes(g);
#ifndef NDEBUG
        if (graph_verify(g, d)) {
            if (o->verify_dies)
                die("graph_verify failed after pass %s", pass_table[i].name);
            return 1;
        }
#endif
        if (o->dump_ir && !strcmp(o->dump_ir, pass_table[i].name)) {
            graph_dump(g, stdout);
            dumped = 1;
        }
        if (o->last_pass && !strcmp(o->last_pass, pass_table[i].name))
            break;
    }
    if (o->dump_ir && !dumped && !*o->dump_ir)
        graph_dump(g, stdout); /* --dump-ir without a pass: after the last */
    return 0;
}

int pipeline_front(Pipeline *pl)
{
    const Options *o = pl->o;
    Diag *d = pl->d;
    Graph *g;
    const char *err = NULL;
    int i;
    pl->target = target_load(pl->arena, o->target, &err);
    if (!pl->target) {
        fprintf(stderr, "tvmcc: %s\n", err);
        return 1;
    }
    if (o->verbose && pl->target->native)
        fprintf(stderr, "tvmcc: target native: %s (the compiling machine's best)\n", pl->target->name);
    if (!valid_c_name(o->name)) {
        fprintf(stderr, "tvmcc: --name '%s' is not a C identifier\n", o->name);
        return 1;
    }
    progress_note("loading", 0, 0);
    g = o->model_data ? onnx_load_buffer(pl->arena, o->model_data, o->model_size, o->model, d)
                      : onnx_load(pl->arena, o->model, d);
    if (!g)
        return 1;
    g->settings.target = pl->target;
    g->settings.string_bytes = o->string_bytes > 0 ? o->string_bytes : 64;
    vlog(pl, "load");
    if (onnx_bind_io(g, o->seq_lengths, o->n_seq_lengths, o->absent, o->n_absent, d))
        return 1;
    for (i = 0; i < o->n_shapes; i++)
        if (onnx_bind_input_shape(g, o->shapes[i], d))
            return 1;
    if (onnx_bind_input_values(g, o->values, o->n_values, d))
        return 1;
    /* inlining infers and folds the nodes an If's condition depends on
     * (frontend/control.c), so the folder is hooked in from here on */
    g->settings.fold = fold_node;
    if (onnx_inline_control_flow(g, d))
        return 1;
    if (onnx_resolve_sequences(g, d))
        return 1;
    if (onnx_check_inputs_static(g, d))
        return 1;
    progress_note("inferring shapes", 0, 0);
    if (infer_graph(g, d))
        return 1;
    if (onnx_bind_stacked_outputs(g, d))
        return 1;
    vlog(pl, "infer");
    if (o->dump_ir && !strcmp(o->dump_ir, "frontend"))
        graph_dump(g, stdout);
    if (run_passes(pl, g))
        return 1;
    vlog(pl, "passes");
    pl->prog.g = g;
    pl->prog.target = pl->target;
    pl->prog.name = o->name;
    pl->prog.model_base = base_name(o->model);
    pl->prog.version = TVMCC_VERSION;
    return 0;
}

int pipeline_lower(Pipeline *pl)
{
    if (pl->o->tuning_log && tunelog_load(pl->arena, pl->o->tuning_log, pl->target, &pl->knobs))
        return 1;
    pl->prog.g->settings.knobs = pl->knobs;
    if (program_lower(&pl->prog, pl->arena, pl->o->dump_loops ? stdout : NULL, pl->d))
        return 1;
    vlog(pl, "lower");
    return 0;
}

int pipeline_plan(Pipeline *pl)
{
    if (program_plan(&pl->prog, pl->d))
        return 1;
    vlog(pl, "plan");
    return 0;
}

int pipeline_run(Pipeline *pl)
{
    const Options *o = pl->o;
    Program *p = &pl->prog;
    ReportInfo ri;
    memset(&ri, 0, sizeof ri);
    if (pipeline_front(pl) || pipeline_lower(pl) || pipeline_plan(pl))
        return 1;
    /* a bad profile stops the compile before anything is written */
    if (o->report_html && o->profile && report_load_profile(p, o->profile, pl->arena, &ri))
        return 1;
    if (o->report) {
        progress_clear();
        emit_report(p, stdout);
    }
    if (!o->out_dir)
        return 0;
    progress_note("writing", 0, 0);
    if (pipeline_install_report(p, o->out_dir, o->report_html ? &ri : NULL, pl->arena, pl->d))
        return 1;
    vlog(pl, "emit");
    progress_clear();
    if (o->verbose)
        fprintf(stderr, "tvmcc: %d kernels, workspace %lld bytes (lower bound %lld), weights %lld bytes\n",
                p->n_kernels, (long long)p->workspace_bytes, (long long)p->lower_bound_bytes,
                (long long)p->weights_bytes);
    return 0;
}
