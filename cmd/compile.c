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
#include "../lower/fuse.h"
#include "../lower/knobs.h"
#include "../lower/lower.h"
#include "../passes/passes.h"
#include "../passes/plan.h"

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

static int plan(Program *p, Diag *d)
{
    Graph *g = p->g;
    int32_t *def, *last, *alias;
    PlanItem *items;
    int n_items = 0, cap, ki, bi, i;
    PlanResult res;
    def = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *def);
    last = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *last);
    p->value_offset = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *p->value_offset);
    p->temp_offset = arena_array(g->arena, (size_t)p->n_kernels + 1, sizeof *p->temp_offset);
    if (!def || !last || !p->value_offset || !p->temp_offset)
        die("compile arena exhausted");
    for (i = 0; i < g->n_values; i++) {
        def[i] = -1;
        last[i] = -1;
        p->value_offset[i] = -1;
    }
    cap = 16;
    for (ki = 0; ki < p->n_kernels; ki++)
        if (p->kernels[ki])
            cap += p->kernels[ki]->n_bufs;
    items = arena_array(g->arena, (size_t)cap, sizeof *items);
    if (!items)
        die("compile arena exhausted");
    for (ki = 0; ki < p->n_kernels; ki++) {
        Kernel *k = p->kernels[ki];
        if (!k)
            continue;
        for (bi = 0; bi < k->n_bufs; bi++) {
            Buffer *b = &k->bufs[bi];
            if (b->scope != BUF_ARENA)
                continue;
            if (b->written && def[b->value] < 0)
                def[b->value] = ki;
            last[b->value] = ki;
        }
    }
    /* In-place reuse: an injective kernel whose input dies in it writes its
     * output over the input (lower/fuse.c decides which kernels may). */
    alias = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *alias);
    if (!alias)
        die("compile arena exhausted");
    for (i = 0; i < g->n_values; i++)
        alias[i] = -1;
    for (ki = 0; ki < p->n_kernels; ki++) {
        Kernel *k = p->kernels[ki];
        int bin, bout;
        int32_t vi, vo, root;
        if (!k || !fuse_inplace_pair(k, &bin, &bout))
            continue;
        vi = k->bufs[bin].value;
        vo = k->bufs[bout].value;
        root = alias[vi] >= 0 ? alias[vi] : vi;
        if (last[root] != ki || def[vo] != ki || alias[vo] >= 0)
            continue;
        alias[vo] = root;
        last[root] = last[vo] > ki ? last[vo] : ki;
        k->bufs[bin].inplace = 1;
        k->bufs[bout].inplace = 1;
    }
    for (i = 0; i < g->n_values; i++) {
        if (def[i] < 0 || alias[i] >= 0)
            continue;
        items[n_items].bytes = value_numel(&g->values[i]) * (int64_t)dtype_size(g->values[i].dtype);
        items[n_items].first = def[i];
        items[n_items].last = last[i];
        n_items++;
    }
    for (ki = 0; ki < p->n_kernels; ki++) {
        Kernel *k = p->kernels[ki];
        if (!k)
            continue;
        for (bi = 0; bi < k->n_bufs; bi++) {
            Buffer *b = &k->bufs[bi];
            if (b->scope != BUF_TEMP)
                continue;
            items[n_items].bytes = b->numel * (int64_t)dtype_size(b->dtype);
            items[n_items].first = ki;
            items[n_items].last = b->persist ? p->n_kernels : ki;
            n_items++;
        }
    }
    if (plan_memory(items, n_items, p->target->alignment > 8 ? p->target->alignment : 8, &res))
        return diag_error(d, NULL, NULL, "memory plan overflows");
    n_items = 0;
    for (i = 0; i < g->n_values; i++)
        if (def[i] >= 0 && alias[i] < 0)
            p->value_offset[i] = items[n_items++].offset;
    for (i = 0; i < g->n_values; i++)
        if (alias[i] >= 0)
            p->value_offset[i] = p->value_offset[alias[i]];
    for (ki = 0; ki < p->n_kernels; ki++) {
        Kernel *k = p->kernels[ki];
        if (!k)
            continue;
        p->temp_offset[ki] = arena_array(g->arena, (size_t)k->n_bufs + 1, sizeof(int64_t));
        for (bi = 0; bi < k->n_bufs; bi++)
            if (k->bufs[bi].scope == BUF_TEMP)
                p->temp_offset[ki][bi] = items[n_items++].offset;
    }
    p->workspace_bytes = res.arena_bytes;
    p->lower_bound_bytes = res.lower_bound_bytes;
    return 0;
}

static const char *kernel_name(Arena *a, int idx, const char *op)
{
    char *s = arena_printf(a, "k%d_%s", idx, op), *c;
    for (c = s; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return s;
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
    Graph *g = pp->g;
    const Target *t = pp->target;
    Program p = *pp;
    int rc = 1;
    int32_t ni, *members;
    p.n_kernels = 0;
    p.kernels = arena_array(arena, (size_t)g->n_nodes + 1, sizeof *p.kernels);
    members = arena_array(arena, (size_t)g->n_nodes + 1, sizeof *members);
    if (!p.kernels || !members)
        die("compile arena exhausted");
    for (ni = 0; ni < g->n_nodes; ni++) {
        Node *n = &g->nodes[ni];
        Kernel *k;
        int n_members = 0;
        int32_t mi;
        if (n->dead || (n->group >= 0 && n->group != ni))
            continue; /* a member of a group whose kernel runs later */
        if (n->group == ni) {
            for (mi = 0; mi <= ni; mi++)
                if (!g->nodes[mi].dead && g->nodes[mi].group == ni)
                    members[n_members++] = mi;
        } else {
            members[n_members++] = ni;
        }
        k = lower_group(g, members, n_members,
                        kernel_name(arena, p.n_kernels, g->nodes[members[0]].op_type), t, dg);
        if (!k)
            goto done;
        p.kernels[p.n_kernels++] = k;
        if (o->dump_loops) {
            loops_dump(k, stdout);
            printf("\n");
        }
    }
    rc = 0;
done:
    *pp = p;
    return rc;
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
    if (plan(&p, &d))
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
