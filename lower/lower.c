/*
 * lower_group(): the nodes of one fused group (or a single node) -> one
 * Kernel. Each node's lower_<Name>() (dispatched through a table generated
 * from ir/ops.h) adds its Compute stages to the same kernel, so a value
 * passed between members is one buffer; lower/fuse.c then inlines those
 * internal buffers away. The result is checked (every buffer small enough
 * for 32-bit index arithmetic in the emitted C) and scheduled.
 */
#include "lower.h"
#include "sched.h"

#include <string.h>

#include "fuse.h"

typedef int (*LowerFn)(Lower *, Node *);

static const LowerFn lower_fns[OP_COUNT] = {
    NULL,
#define OP(name, mi, ma, mo, mao, cat) lower_##name,
#define OP_NOT_LOWERED(name, mi, ma, mo, mao, cat) NULL,
#define OP_UNARY(name, un) lower_unary_row,
#define OP_BINARY(name, bin) lower_binary_row,
#include "../ir/ops.h"
#undef OP_BINARY
#undef OP_UNARY
#undef OP_NOT_LOWERED
#undef OP
};

/* Kernels with more stages than this are not given a schedule template. */
#define TEMPLATE_MAX_STAGES 64

/* The emitted loops index with int32_t: refuse anything larger. */
#define MAX_BUFFER_ELEMS ((int64_t)1 << 31)

/* Every variable and buffer an expression names exists in the kernel. */
static int expr_ok(const Kernel *k, const Expr *e)
{
    int i;
    if (!e)
        return 1;
    if (e->kind == EX_VAR && (e->var < 0 || e->var >= k->n_vars))
        return 0;
    if (e->kind == EX_LOAD && (e->buf < 0 || e->buf >= k->n_bufs || !e->a))
        return 0;
    for (i = 0; i < e->nidx; i++)
        if (!e->idx || !e->idx[i] || !expr_ok(k, e->idx[i]))
            return 0;
    return expr_ok(k, e->a) && expr_ok(k, e->b) && expr_ok(k, e->c);
}

Kernel *lower_group(Graph *g, const int32_t *nodes, int n_nodes, const char *name,
                    const Target *target, Diag *d)
{
    Lower L;
    Kernel *k;
    int i, j, first_stage, errs = d->errors;
    const Node *last = &g->nodes[nodes[n_nodes - 1]];
    k = arena_alloc(g->arena, sizeof *k);
    if (!k)
        die("compile arena exhausted");
    k->name = name;
    k->n_nodes = n_nodes;
    {
        int32_t *copy = arena_array(g->arena, (size_t)n_nodes, sizeof *copy);
        if (!copy)
            die("compile arena exhausted");
        memcpy(copy, nodes, (size_t)n_nodes * sizeof *copy);
        k->nodes = copy;
    }
    k->origin = "";
    L.g = g;
    L.d = d;
    L.arena = g->arena;
    L.k = k;
    for (j = 0; j < n_nodes; j++) {
        Node *n = &g->nodes[nodes[j]];
        if (n->op > OP_UNKNOWN && n->op < OP_COUNT && !op_info[n->op].lowered)
            die("%s node '%s' (#%d) reached lowering: it is resolved before (ir/ops.h, "
                "OP_NOT_LOWERED)", n->op_type, n->name ? n->name : "", (int)n->index);
        if (n->op <= OP_UNKNOWN || n->op >= OP_COUNT || !lower_fns[n->op]) {
            diag_error(d, n, NULL, "operator '%s' cannot be lowered", n->op_type);
            return NULL;
        }
        k->origin = arena_printf(g->arena, "%s%s%s '%s' (#%d)", k->origin, j ? " + " : "",
                                 n->op_type, n->name ? n->name : "", (int)n->index);
        first_stage = k->n_stages;
        if ((n->quant && n->quant->kind != QK_SUM && n->quant->kind != QK_POOL
                 ? lower_quant_elemwise(&L, n)
                 : lower_fns[n->op](&L, n)) ||
            d->errors > errs)
            return NULL;
        /* the master op of a group is its (first) reducing member */
        for (i = first_stage; i < k->n_stages && k->op == OP_UNKNOWN; i++)
            if (k->stages[i].rop != RED_NONE)
                k->op = n->op;
    }
    if (k->op == OP_UNKNOWN)
        k->op = last->op;
    for (i = 0; i < k->n_bufs; i++) {
        if (k->bufs[i].numel >= MAX_BUFFER_ELEMS || k->bufs[i].numel < 0) {
            diag_error(d, last, NULL, "tensor of %lld elements exceeds the 2^31 element limit",
                       (long long)k->bufs[i].numel);
            return NULL;
        }
    }
    for (i = 0; i < k->n_stages; i++) {
        const Compute *c = &k->stages[i];
        if (!c->body)
            die("lowering of %s left stage %d without a body", last->op_type, i);
        /* An op given shapes its definition does not handle (a declared
         * shape of an unexpected rank, say) must not reach the emitter. */
        if (!expr_ok(k, c->body) || !expr_ok(k, c->init) || !expr_ok(k, c->post) ||
            !expr_ok(k, c->out_index) || c->out_buf < 0 || c->out_buf >= k->n_bufs) {
            diag_error(d, last, NULL, "these tensor shapes are not supported by the "
                       "operator's lowering");
            return NULL;
        }
        k->bufs[k->stages[i].out_buf].written = 1;
    }
    if (k->ext) {
        if (n_nodes != 1 || k->n_stages)
            die("a runtime-call kernel (%s) cannot be fused", last->op_type);
        return k; /* no loops to schedule */
    }
    if (n_nodes > 1)
        fuse_inline(&L, nodes, n_nodes);
    schedule_naive(&L);
    /* The templates' primitives search and simplify the whole kernel for
     * each stage, so their cost grows with the square of the stage count
     * and more: kernels of many small stages (recurrent layers unrolled
     * over their time steps) keep the naive schedule. */
    if (k->n_stages <= TEMPLATE_MAX_STAGES)
        template_apply(&L, target);
    return k;
}

Kernel *lower_node(Graph *g, int32_t ni, const char *name, const Target *target, Diag *d)
{
    return lower_group(g, &ni, 1, name, target, d);
}
