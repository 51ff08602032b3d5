/*
 * Constant folding. A node whose inputs are all compile-time constants is
 * lowered with the same lower_<Op>() the emitted code uses and run by the
 * loop-IR interpreter (lower/eval.c); its outputs become constants. So every
 * operator has one implementation of its maths. Folding stops creating data
 * once FOLD_BUDGET_BYTES have been produced in one compilation, so a tiny
 * model cannot make the compiler allocate without bound (the node is then
 * simply computed at run time).
 */
#include "passes.h"

#include <stdlib.h>

#include "../frontend/limits.h"
#include "../lower/eval.h"
#include "../lower/lower.h"

static int64_t folded_bytes;

static int foldable(const Graph *g, const Node *n)
{
    int i;
    if (n->dead || n->op == OP_UNKNOWN || !op_info[n->op].lowered)
        return 0;
    for (i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && !g->values[n->in[i]].data)
            return 0;
    for (i = 0; i < n->n_out; i++)
        if (n->out[i] >= 0 && (g->values[n->out[i]].data ||
                               g->values[n->out[i]].dtype == DT_STRING))
            return 0; /* already constant (Constant, Shape...), or strings
                         (a runtime call, which the interpreter cannot run) */
    return 1;
}

int fold_node(Graph *g, int32_t ni, Diag *d)
{
    Node *n = &g->nodes[ni];
    Kernel *k;
    void **bufs;
    int i, errs = d->errors, bad;
    int64_t bytes = 0;
    if (!foldable(g, n))
        return 0;
    for (i = 0; i < n->n_out; i++) {
        const Value *v;
        if (n->out[i] < 0)
            continue;
        v = &g->values[n->out[i]];
        if (!value_is_static(v))
            return 0;
        bytes += value_numel(v) * (int64_t)dtype_size(v->dtype);
    }
    if (folded_bytes + bytes > FOLD_BUDGET_BYTES)
        return 0;
    {
        /* an op that makes data (Expand, Tile, Range...) folds only while
         * small: a large result is cheaper to compute at run time than to
         * store in flash (frontend/limits.h) */
        int64_t in_bytes = 0;
        for (i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                in_bytes += value_numel(&g->values[n->in[i]]) *
                            (int64_t)dtype_size(g->values[n->in[i]].dtype);
        if (bytes > FOLD_EXPAND_LIMIT_BYTES && bytes > in_bytes)
            return 0;
    }
    k = lower_node(g, ni, "fold", NULL, d);
    if (!k)
        return d->errors - errs;
    if (k->ext)
        return 0; /* a runtime call: computed at run time */
    bufs = arena_array(g->arena, (size_t)k->n_bufs, sizeof *bufs);
    if (!bufs)
        die("compile arena exhausted");
    for (i = 0; i < k->n_bufs; i++) {
        Buffer *b = &k->bufs[i];
        size_t sz = (size_t)b->numel * dtype_size(b->dtype);
        if (b->scope == BUF_LOCAL || b->scope == BUF_UNUSED)
            continue;
        if (b->value >= 0 && g->values[b->value].data && !b->written) {
            bufs[i] = g->values[b->value].data;
        } else {
            bufs[i] = arena_alloc(g->arena, sz ? sz : 1);
            if (!bufs[i])
                return diag_error(d, n, NULL, "constant folding exceeds the compile memory budget");
        }
    }
    bad = lower_eval(k, bufs);
    if (bad)
        return diag_error(d, n, NULL, "a data-dependent index is out of range (found while folding constants)");
    for (i = 0; i < k->n_bufs; i++) {
        Buffer *b = &k->bufs[i];
        if (b->written && b->value >= 0)
            g->values[b->value].data = bufs[i];
    }
    for (i = 0; i < n->n_out; i++) {
        Value *v = n->out[i] >= 0 ? &g->values[n->out[i]] : NULL;
        if (v && !v->data) {
            /* zero-size outputs have no store; give them (empty) data */
            if (value_numel(v) == 0)
                v->data = arena_alloc(g->arena, 1);
        }
    }
    folded_bytes += bytes;
    return 0;
}

int pass_fold_constants(Graph *g, Diag *d)
{
    int32_t ni;
    int errs = 0;
    for (ni = 0; ni < g->n_nodes && !errs; ni++)
        errs += fold_node(g, ni, d);
    return errs;
}

/* A node is dead when none of its outputs is needed at run time: each is
 * constant, omitted, or read by no live node and no graph output. */
int pass_dce(Graph *g, Diag *d)
{
    int32_t ni;
    int i, j;
    char *needed = calloc((size_t)g->n_values + 1, 1);
    (void)d;
    if (!needed)
        die("out of memory");
    for (j = 0; j < g->n_outputs; j++)
        needed[g->outputs[j]] = 1;
    for (ni = g->n_nodes - 1; ni >= 0; ni--) {
        Node *n = &g->nodes[ni];
        int live = 0;
        if (n->dead)
            continue;
        for (i = 0; i < n->n_out; i++)
            if (n->out[i] >= 0 && needed[n->out[i]] && !g->values[n->out[i]].data)
                live = 1;
        if (!live) {
            n->dead = 1;
            continue;
        }
        for (i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                needed[n->in[i]] = 1;
    }
    free(needed);
    return 0;
}
