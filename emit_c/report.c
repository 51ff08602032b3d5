/*
 * tvmcc --report: a table of the kernels (which ONNX nodes each fuses, its
 * multiply-accumulates and the bytes it moves) and of memory (workspace,
 * the lower bound no placement can beat, weights), for people tuning a
 * model for a device. Sizes in KiB. Also what NAME.json records per kernel.
 */
#include <stdio.h>

#include "emit.h"

int64_t emit_kernel_bytes(const Kernel *k, int written)
{
    int64_t sum = 0;
    int i;
    for (i = 0; i < k->n_bufs; i++) {
        const Buffer *b = &k->bufs[i];
        if (b->scope == BUF_LOCAL || b->scope == BUF_UNUSED || (b->written != 0) != (written != 0))
            continue;
        sum += b->numel * (int64_t)dtype_size(b->dtype);
    }
    return sum;
}

static double kib(int64_t b)
{
    return (double)b / 1024.0;
}

void emit_report(const Program *p, FILE *f)
{
    const Graph *g = p->g;
    int64_t macs = 0;
    int j, i, fused = 0;
    fprintf(f, "%-28s %-40s %12s %10s %10s\n", "kernel", "nodes", "MACs", "read KiB", "write KiB");
    for (j = 0; j < p->n_kernels; j++) {
        const Kernel *k = p->kernels[j];
        char nodes[41];
        int used = 0;
        if (!k)
            continue;
        nodes[0] = 0;
        for (i = 0; i < k->n_nodes && used < 36; i++)
            used += snprintf(nodes + used, sizeof nodes - (size_t)used, "%s%s", i ? "+" : "",
                             g->nodes[k->nodes[i]].op_type);
        if (k->n_nodes > 1)
            fused++;
        macs += k->macs;
        fprintf(f, "%-28s %-40s %12lld %10.1f %10.1f\n", k->name, nodes, (long long)k->macs,
                kib(emit_kernel_bytes(k, 0)), kib(emit_kernel_bytes(k, 1)));
    }
    fprintf(f, "\n%d kernels (%d fused), %lld MACs\n", p->n_kernels, fused, (long long)macs);
    {
        int *miss = arena_alloc(g->arena, (size_t)(p->n_kernels + 1) * sizeof *miss);
        if (!miss)
            die("compile arena exhausted");
        if (p->target && emit_tensorize_misses(p, miss)) {
            fprintf(f, "tensorize misses (nests printed as scalar loops: no printer of %s matched):",
                    p->target->name);
            for (j = 0; j < p->n_kernels; j++)
                if (miss[j])
                    fprintf(f, " %s (%d)", p->kernels[j]->name, miss[j]);
            fprintf(f, "\n");
        }
    }
    for (j = 0; j < p->n_pass_stats; j++)
        fprintf(f, "pass %-16s %5d -> %5d nodes\n", p->pass_stats[j].name,
                p->pass_stats[j].nodes_before, p->pass_stats[j].nodes_after);
    fprintf(f, "workspace   %10.1f KiB (peak)\n", kib(p->workspace_bytes));
    fprintf(f, "lower bound %10.1f KiB (largest sum of live tensors)%s\n",
            kib(p->lower_bound_bytes),
            p->workspace_bytes == p->lower_bound_bytes ? ", reached" : "");
    fprintf(f, "weights     %10.1f KiB\n", kib(emit_weights_bytes(p)));
}
