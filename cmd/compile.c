/*
 * compile_model(): runs the pipeline for one model and writes the output
 * directory atomically: everything goes into a fresh temporary directory
 * next to the destination, which is renamed into place only when every file
 * has been written (when the destination already exists, the files are
 * renamed into it one by one). A failed compile removes the temporary
 * directory, so it never leaves partial output behind.
 */
#define _DEFAULT_SOURCE
#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "../emit_c/emit.h"
#include "../frontend/infer.h"
#include "../frontend/onnx.h"
#include "../ir/target.h"
#include "../lower/knobs.h"
#include "../lower/lower.h"
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

/* An internal error (die) while the temporary directory exists removes it
 * before aborting, so even a compiler bug leaves no partial output. */
static const char *die_cleanup_dir;

static void cleanup_on_die(void)
{
    if (die_cleanup_dir)
        compile_remove_tree(die_cleanup_dir);
}

void compile_remove_tree(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    char path[4096];
    if (dp) {
        while ((e = readdir(dp)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(dp);
    }
    rmdir(dir);
}

/* Moves the finished temporary directory to its destination. */
static int install_dir(const char *tmp, const char *dest, Diag *d)
{
    struct stat st;
    DIR *dp;
    struct dirent *e;
    char from[4096], to[4096];
    if (stat(dest, &st) != 0) {
        if (rename(tmp, dest) == 0)
            return 0;
        return diag_error(d, NULL, NULL, "cannot create output directory %s: %s", dest, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return diag_error(d, NULL, NULL, "output path %s exists and is not a directory", dest);
    dp = opendir(tmp);
    if (!dp)
        return diag_error(d, NULL, NULL, "cannot read %s: %s", tmp, strerror(errno));
    while ((e = readdir(dp)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(from, sizeof from, "%s/%s", tmp, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dest, e->d_name);
        if (rename(from, to) != 0) {
            closedir(dp);
            return diag_error(d, NULL, NULL, "cannot write %s: %s", to, strerror(errno));
        }
    }
    closedir(dp);
    rmdir(tmp);
    return 0;
}

static char *make_tmp_dir(Arena *a, const char *dest, Diag *d)
{
    char *parent = arena_strdup(a, dest), *slash, *tmpl;
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = 0;
    slash = strrchr(parent, '/');
    if (slash == parent)
        parent = arena_strdup(a, "/");
    else if (slash)
        *slash = 0;
    else
        parent = arena_strdup(a, ".");
    /* like mkdir -p for the parents of the output directory */
    {
        char *c;
        for (c = parent + 1; *c; c++) {
            if (*c != '/')
                continue;
            *c = 0;
            mkdir(parent, 0777);
            *c = '/';
        }
        mkdir(parent, 0777);
    }
    tmpl = arena_printf(a, "%s/.tvmcc-tmp-XXXXXX", parent);
    if (!mkdtemp(tmpl)) {
        diag_error(d, NULL, NULL, "cannot create output directory %s: %s", dest, strerror(errno));
        return NULL;
    }
    {
        /* mkdtemp makes it private (0700); give it the mode mkdir would */
        mode_t mask = umask(0);
        umask(mask);
        chmod(tmpl, 0777 & ~mask);
    }
    return tmpl;
}

static void vlog(const Options *o, double t0, const char *what)
{
    if (o->verbose)
        fprintf(stderr, "tvmcc: %-16s %8.1f ms\n", what, now_ms() - t0);
}

static int live_nodes(const Graph *g)
{
    int32_t ni;
    int k = 0;
    for (ni = 0; ni < g->n_nodes; ni++)
        k += !g->nodes[ni].dead && !(g->nodes[ni].group >= 0 && g->nodes[ni].group != ni);
    return k;
}

static int run_passes(const Options *o, Graph *g, Program *prog, Diag *d)
{
    int i;
    int dumped = 0;
    for (i = 0; i < pass_count; i++) {
        if (o->opt_level < pass_table[i].min_opt ||
            (o->no_fuse && !strcmp(pass_table[i].name, "fuse")))
            continue;
        if (prog->n_pass_stats < MAX_PASS_STATS) {
            prog->pass_stats[prog->n_pass_stats].name = pass_table[i].name;
            prog->pass_stats[prog->n_pass_stats].nodes_before = live_nodes(g);
        }
        if (pass_table[i].run(g, d))
            return 1;
        if (prog->n_pass_stats < MAX_PASS_STATS)
            prog->pass_stats[prog->n_pass_stats++].nodes_after = live_nodes(g);
#ifndef NDEBUG
        if (graph_verify(g, d))
            return 1;
#endif
        if (o->dump_ir && !strcmp(o->dump_ir, pass_table[i].name)) {
            graph_dump(g, stdout);
            dumped = 1;
        }
    }
    if (o->dump_ir && !dumped && !*o->dump_ir)
        graph_dump(g, stdout); /* --dump-ir without a pass: after the last */
    return 0;
}

/* Infers shapes node by node, folding constant nodes as soon as their
 * shapes are known. */
static int infer_and_fold(Graph *g, Diag *d)
{
    infer_fold_hook = fold_node;
    return infer_graph(g, d) ? 1 : 0;
}

int compile_front(const Options *o, Arena *arena, Diag *d, Program *pp)
{
    Graph *g;
    const Target *t;
    const char *err = NULL;
    int i;
    double t0 = now_ms();
    memset(pp, 0, sizeof *pp);
    t = target_load(arena, o->target, &err);
    if (!t) {
        fprintf(stderr, "tvmcc: %s\n", err);
        return 1;
    }
    if (!valid_c_name(o->name)) {
        fprintf(stderr, "tvmcc: --name '%s' is not a C identifier\n", o->name);
        return 1;
    }
    g = onnx_load(arena, o->model, d);
    if (!g)
        return 1;
    vlog(o, t0, "load");
    for (i = 0; i < o->n_shapes; i++)
        if (onnx_bind_input_shape(g, o->shapes[i], d))
            return 1;
    if (onnx_bind_input_values(g, o->values, o->n_values, d))
        return 1;
    /* inlining infers and folds the nodes an If's condition depends on
     * (frontend/control.c), so the folder is hooked in from here on */
    infer_fold_hook = fold_node;
    if (onnx_inline_control_flow(g, d))
        return 1;
    if (onnx_resolve_sequences(g, d))
        return 1;
    if (onnx_check_inputs_static(g, d))
        return 1;
    if (infer_and_fold(g, d))
        return 1;
    vlog(o, t0, "infer");
    if (o->dump_ir && !strcmp(o->dump_ir, "frontend"))
        graph_dump(g, stdout);
    passes_target = t;
    lower_string_bytes = o->string_bytes > 0 ? o->string_bytes : 64;
    if (run_passes(o, g, pp, d))
        return 1;
    vlog(o, t0, "passes");
    pp->g = g;
    pp->target = t;
    pp->name = o->name;
    pp->model_base = base_name(o->model);
    pp->version = TVMCC_VERSION;
    return 0;
}

int compile_lower(const Options *o, Arena *arena, Diag *dg, Program *pp)
{
    return program_lower(pp, arena, o->dump_loops ? stdout : NULL, dg);
}

int compile_model(const Options *o)
{
    Arena arena;
    Diag d;
    Program p;
    int rc = 1;
    double t0 = now_ms();
    char *tmp = NULL;

    /* The compiler's own memory for one model: far above what real models
     * need (resnet18 uses about 300 MB), so a hostile file hits an error
     * instead of exhausting the machine. */
    arena_init(&arena, (size_t)8 << 30);
    diag_init(&d, o->model);
    die_hook = cleanup_on_die;
    lower_knob_table = NULL;
    if (compile_front(o, &arena, &d, &p))
        goto done;
    if (o->tuning_log && tunelog_load(&arena, o->tuning_log, p.target, &lower_knob_table))
        goto done;
    if (compile_lower(o, &arena, &d, &p))
        goto done;
    vlog(o, t0, "lower");
    if (program_plan(&p, &d))
        goto done;
    vlog(o, t0, "plan");
    if (o->report)
        emit_report(&p, stdout);
    if (!o->out_dir) {
        rc = 0;
        goto done;
    }
    tmp = make_tmp_dir(&arena, o->out_dir, &d);
    if (!tmp)
        goto done;
    die_cleanup_dir = tmp;
    if (emit_program(&p, tmp, &d) || install_dir(tmp, o->out_dir, &d)) {
        compile_remove_tree(tmp);
        die_cleanup_dir = NULL;
        goto done;
    }
    die_cleanup_dir = NULL;
    vlog(o, t0, "emit");
    if (o->verbose)
        fprintf(stderr, "tvmcc: %d kernels, workspace %lld bytes (lower bound %lld), weights %lld bytes\n",
                p.n_kernels, (long long)p.workspace_bytes, (long long)p.lower_bound_bytes,
                (long long)p.weights_bytes);
    rc = 0;
done:
    lower_knob_table = NULL;
    arena_free(&arena);
    return rc;
}
