/*
 * From a graph after the passes to what emit_program() prints: one kernel
 * per fused group (program_lower) and the arena plan (program_plan), run
 * by the pipeline (pipeline/pipeline.c).
 */
#include "program.h"

#include <stdio.h>

#include "fuse.h"
#include "lower.h"
#include "../ir/progress.h"
#include "../passes/plan.h"

static const char *kernel_name(Arena *a, int idx, const char *op)
{
    char *s = arena_printf(a, "k%d_%s", idx, op), *c;
    for (c = s; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return s;
}

int program_lower(Program *p, Arena *arena, FILE *dump_loops, Diag *d)
{
    Graph *g = p->g;
    int32_t ni, *members;
    p->n_kernels = 0;
    p->kernels = arena_array(arena, (size_t)g->n_nodes + 1, sizeof *p->kernels);
    members = arena_array(arena, (size_t)g->n_nodes + 1, sizeof *members);
    if (!p->kernels || !members)
        die("compile arena exhausted");
    for (ni = 0; ni < g->n_nodes; ni++) {
        Node *n = &g->nodes[ni];
        Kernel *k;
        int n_members = 0;
        int32_t mi;
        progress_note("lowering", ni, g->n_nodes);
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
                        kernel_name(arena, p->n_kernels, g->nodes[members[0]].op_type), p->target, d);
        if (!k)
            return 1;
        p->kernels[p->n_kernels++] = k;
        if (dump_loops) {
            loops_dump(k, dump_loops);
            fprintf(dump_loops, "\n");
        }
    }
    return 0;
}

/* Bytes of an arena item. An empty tensor (a zero-length axis) still gets
 * one byte, so that no two of a kernel's `restrict` arguments share an
 * address. */
static int64_t item_bytes(int64_t numel, DType t)
{
    int64_t n = numel * (int64_t)dtype_size(t);
    return n > 0 ? n : 1;
}

/* Liveness over the kernel order, in-place reuse, then plan_memory. */
int program_plan(Program *p, Diag *d)
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
        items[n_items].bytes = item_bytes(value_numel(&g->values[i]), g->values[i].dtype);
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
            items[n_items].bytes = item_bytes(b->numel, b->dtype);
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
