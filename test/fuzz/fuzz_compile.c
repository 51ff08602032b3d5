/*
 * libFuzzer harness for the whole compile, exactly as `tvmcc` runs it: the
 * input's bytes are the model, compiled by pipeline_run (pipeline/) at -O2
 * for one of the embedded targets, chosen by a hash of the input's first
 * 64 bytes (mod the number of targets, in target_names() order: aarch64
 * arm c cortex-m0 ...), so the seeds spread over every target family's
 * templates and printers while a mutation past the model's header keeps
 * its target; binding, control-flow inlining, sequence resolution, inference
 * with folding, the passes (a graph the verifier rejects after a pass is a
 * die()), lowering, the plan and the output directory, installed in a
 * private temporary directory and removed after every input.
 * Diagnostics are quiet. A model error anywhere must end in a Diag error;
 * a die(), crash, sanitizer report, hang or runaway allocation is a
 * finding.
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../frontend/onnx.h"
#include "../../pipeline/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a private directory; each input's output directory is work/out */
static char work[64], out_dir[80];

static void remove_work(void)
{
    pipeline_remove_tree(out_dir);
    rmdir(work);
}

/* FNV-1a of the first 64 bytes. */
static unsigned header_hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < size && i < 64; i++)
        h = (h ^ data[i]) * 16777619u;
    return (unsigned)h;
}

/* The name of embedded target number `pick` (mod their count). */
static const char *pick_target(Arena *a, unsigned pick)
{
    const char *names = target_names(a), *s;
    unsigned n = 1;
    for (s = names; *s; s++)
        n += *s == ' ';
    pick %= n;
    for (s = names; pick > 0; s++)
        pick -= *s == ' ';
    return arena_strndup(a, s, strcspn(s, " "));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena a;
    Diag d;
    Options o;
    Pipeline pl;
    if (!work[0]) {
        snprintf(work, sizeof work, "/tmp/tvmcc-fuzz-XXXXXX");
        if (!mkdtemp(work))
            die("mkdtemp failed");
        snprintf(out_dir, sizeof out_dir, "%s/out", work);
        atexit(remove_work);
    }
    onnx_set_parse_budget((size_t)256 << 20);
    arena_init(&a, (size_t)1 << 30);
    diag_init(&d, "fuzz.onnx");
    d.quiet = 1;
    options_init(&o);
    o.model = "fuzz.onnx";
    o.model_data = data;
    o.model_size = size;
    o.target = pick_target(&a, header_hash(data, size));
    o.out_dir = out_dir;
    o.verify_dies = 1;
    pipeline_init(&pl, &o, &a, &d);
    pipeline_run(&pl);
    pipeline_remove_tree(out_dir); /* the next input starts afresh */
    arena_free(&a);
    return 0;
}
