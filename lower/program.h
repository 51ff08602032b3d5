/*
 * A Program: a graph after the passes, lowered to one kernel per fused
 * group in execution order (program_lower) and with every arena tensor
 * placed (program_plan). It is what the emitter prints (emit_c/) and what
 * the pipeline (pipeline/pipeline.c) builds; tvmcc tune builds one-kernel
 * Programs of its own.
 */
#ifndef TVMCC_PROGRAM_H
#define TVMCC_PROGRAM_H

#include <stdio.h>

#include "../ir/graph.h"
#include "../ir/target.h"
#include "te.h"

/* What one graph pass did, for NAME.json and --report. */
typedef struct PassStat {
    const char *name;
    int nodes_before, nodes_after; /* live nodes */
} PassStat;

#define MAX_PASS_STATS 16

typedef struct Program {
    Graph *g;
    const Target *target;
    const char *name;          /* NAME: C identifier prefix and file stem */
    const char *model_base;    /* model file's base name, for comments */
    const char *version;       /* tvmcc version string */
    int n_kernels;
    Kernel **kernels;          /* execution order; NULL entries are skipped */
    int64_t *value_offset;     /* per value: arena offset, -1 if not in the arena */
    int64_t **temp_offset;     /* per kernel, per buffer: arena offset of BUF_TEMP */
    int64_t workspace_bytes;
    int64_t lower_bound_bytes;
    int64_t weights_bytes;     /* filled by emit_program */
    int n_pass_stats;
    PassStat pass_stats[MAX_PASS_STATS];
} Program;

/* Lowers every fused group of p->g (after the passes) into p->kernels, in
 * execution order, named kN_op; each kernel's loops go to dump_loops
 * unless NULL. Returns 1 after reporting an error (kernels so far kept). */
int program_lower(Program *p, Arena *arena, FILE *dump_loops, Diag *d);
/* Places every arena tensor and temporary of p's kernels in one arena:
 * liveness over the kernel order, in-place reuse where lower/fuse.c allows
 * it, best-fit placement (passes/plan_memory.c); sets the offsets,
 * workspace_bytes and lower_bound_bytes. */
int program_plan(Program *p, Diag *d);

#endif
