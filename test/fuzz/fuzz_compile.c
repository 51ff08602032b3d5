/*
 * libFuzzer harness for the whole compile: bytes -> onnx_load_buffer ->
 * input check (nothing bound) -> shape inference with constant folding ->
 * every pass of the table, as at -O2 (verifier after each) -> lower_group
 * for every fused group -> a memory plan -> emit_program into a private temporary directory,
 * which is emptied after every input. Diagnostics are quiet. A model error
 * anywhere must end in a Diag error; a die(), crash, sanitizer report, hang
 * or runaway allocation is a finding.
 *
 * The plan here is deliberately simple (every arena tensor and temporary
 * live for the whole run, passed to plan_memory) so that it needs nothing
 * private from cmd/compile.c; emission only reads the offsets.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../emit_c/emit.h"
#include "../../frontend/infer.h"
#include "../../frontend/onnx.h"
#include "../../ir/target.h"
#include "../../lower/lower.h"
#include "../../passes/passes.h"
#include "../../passes/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char out_dir[64];

static void empty_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    char path[256];
    if (!dp)
        return;
    while ((e = readdir(dp)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(dp);
}

static void remove_out_dir(void)
{
    empty_dir(out_dir);
    rmdir(out_dir);
}

/* Every arena value and temporary gets its own place for the whole run. */
static int simple_plan(Program *p, Diag *d)
{
    Graph *g = p->g;
    PlanItem *items;
    PlanResult res;
    int n = 0, ki, bi, cap = 1;
    int32_t i;
    for (ki = 0; ki < p->n_kernels; ki++)
        cap += p->kernels[ki]->n_bufs;
    items = arena_array(g->arena, (size_t)cap + (size_t)g->n_values, sizeof *items);
    p->value_offset = arena_array(g->arena, (size_t)g->n_values + 1, sizeof(int64_t));
    p->temp_offset = arena_array(g->arena, (size_t)p->n_kernels + 1, sizeof(int64_t *));
    if (!items || !p->value_offset || !p->temp_offset)
        return diag_error(d, NULL, NULL, "arena budget");
    for (i = 0; i < g->n_values; i++)
        p->value_offset[i] = -1;
    for (ki = 0; ki < p->n_kernels; ki++) {
        Kernel *k = p->kernels[ki];
        p->temp_offset[ki] = arena_array(g->arena, (size_t)k->n_bufs + 1, sizeof(int64_t));
        if (!p->temp_offset[ki])
            return diag_error(d, NULL, NULL, "arena budget");
        for (bi = 0; bi < k->n_bufs; bi++) {
            Buffer *b = &k->bufs[bi];
            int64_t numel = b->scope == BUF_ARENA ? value_numel(&g->values[b->value]) : b->numel;
            if ((b->scope != BUF_ARENA && b->scope != BUF_TEMP) ||
                (b->scope == BUF_ARENA && p->value_offset[b->value] != -1))
                continue;
            if (b->scope == BUF_ARENA)
                p->value_offset[b->value] = -2 - n; /* item index, resolved below */
            items[n].bytes = numel * (int64_t)dtype_size(b->dtype);
            items[n].first = 0;
            items[n].last = p->n_kernels;
            p->temp_offset[ki][bi] = n;
            n++;
        }
    }
    if (plan_memory(items, n, 64, &res))
        return diag_error(d, NULL, NULL, "memory plan overflows");
    for (i = 0; i < g->n_values; i++)
        if (p->value_offset[i] <= -2)
            p->value_offset[i] = items[-2 - p->value_offset[i]].offset;
    for (ki = 0; ki < p->n_kernels; ki++)
        for (bi = 0; bi < p->kernels[ki]->n_bufs; bi++)
            if (p->kernels[ki]->bufs[bi].scope == BUF_TEMP)
                p->temp_offset[ki][bi] = items[p->temp_offset[ki][bi]].offset;
    p->workspace_bytes = res.arena_bytes;
    p->lower_bound_bytes = res.lower_bound_bytes;
    return 0;
}

static void compile(const uint8_t *data, size_t size, Arena *a, Diag *d)
{
    Graph *g;
    Program p;
    const char *err = NULL;
    int i;
    int32_t ni, *members;
    memset(&p, 0, sizeof p);
    p.target = target_load(a, "c", &err);
    if (!p.target)
        die("target c: %s", err);
    g = onnx_load_buffer(a, data, size, "fuzz.onnx", d);
    if (!g || onnx_check_inputs_static(g, d))
        return;
    infer_fold_hook = fold_node;
    if (infer_graph(g, d))
        return;
    for (i = 0; i < pass_count; i++) {
        if (pass_table[i].run(g, d))
            return;
        if (graph_verify(g, d))
            die("graph_verify failed after pass %s", pass_table[i].name);
    }
    p.g = g;
    p.name = "model";
    p.model_base = "fuzz.onnx";
    p.version = "fuzz";
    p.kernels = arena_array(a, (size_t)g->n_nodes + 1, sizeof *p.kernels);
    members = arena_array(a, (size_t)g->n_nodes + 1, sizeof *members);
    if (!p.kernels || !members)
        return;
    /* as cmd/compile.c: one kernel per fused group, at its last member */
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        Kernel *k;
        int n_members = 0;
        int32_t mi;
        if (n->dead || (n->group >= 0 && n->group != ni))
            continue;
        if (n->group == ni) {
            for (mi = 0; mi <= ni; mi++)
                if (!g->nodes[mi].dead && g->nodes[mi].group == ni)
                    members[n_members++] = mi;
        } else {
            members[n_members++] = ni;
        }
        k = lower_group(g, members, n_members, arena_printf(a, "k%d", p.n_kernels), p.target, d);
        if (!k)
            return;
        p.kernels[p.n_kernels++] = k;
    }
    if (simple_plan(&p, d))
        return;
    emit_program(&p, out_dir, d);
    empty_dir(out_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena a;
    Diag d;
    if (!out_dir[0]) {
        snprintf(out_dir, sizeof out_dir, "/tmp/tvmcc-fuzz-XXXXXX");
        if (!mkdtemp(out_dir))
            die("mkdtemp failed");
        atexit(remove_out_dir);
    }
    onnx_set_parse_budget((size_t)256 << 20);
    arena_init(&a, (size_t)1 << 30);
    diag_init(&d, "fuzz.onnx");
    d.quiet = 1;
    compile(data, size, &a, &d);
    arena_free(&a);
    return 0;
}
