/*
 * libFuzzer harness for the whole compile: bytes -> onnx_load_buffer ->
 * input check (nothing bound) -> shape inference with constant folding ->
 * every pass of the table, as at -O2 (verifier after each) -> one kernel
 * per fused group and the arena plan (program_lower, program_plan: the
 * driver's own, emit_c/program.c) -> emit_program into a private temporary
 * directory, which is emptied after every input. Diagnostics are quiet. A
 * model error anywhere must end in a Diag error; a die(), crash, sanitizer
 * report, hang or runaway allocation is a finding.
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
#include "../../passes/passes.h"

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

static void compile(const uint8_t *data, size_t size, Arena *a, Diag *d)
{
    Graph *g;
    Program p;
    const char *err = NULL;
    int i;
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
    if (program_lower(&p, a, NULL, d) || program_plan(&p, d))
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
