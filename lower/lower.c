/*
 * lower_node(): one graph node -> one Kernel. Dispatches to the op's
 * lower_<Name>() through a table generated from ir/ops.h, checks that the
 * stages it produced are well formed (every buffer small enough for 32-bit
 * index arithmetic in the emitted C), and applies the naive schedule.
 */
#include "lower.h"

#include <string.h>

typedef int (*LowerFn)(Lower *, Node *);

static const LowerFn lower_fns[OP_COUNT] = {
    NULL,
#define OP(name, mi, ma, mo, mao, cat) lower_##name,
#include "../ir/ops.h"
#undef OP
};

/* The emitted loops index with int32_t: refuse anything larger. */
#define MAX_BUFFER_ELEMS ((int64_t)1 << 31)

Kernel *lower_node(Graph *g, int32_t ni, const char *name, Diag *d)
{
    Node *n = &g->nodes[ni];
    Lower L;
    Kernel *k;
    int i, errs = d->errors;
    if (n->op <= OP_UNKNOWN || n->op >= OP_COUNT || !lower_fns[n->op]) {
        diag_error(d, n, NULL, "operator '%s' cannot be lowered", n->op_type);
        return NULL;
    }
    k = arena_alloc(g->arena, sizeof *k);
    if (!k)
        die("compile arena exhausted");
    k->name = name;
    k->origin = arena_printf(g->arena, "%s '%s' (#%d)", n->op_type, n->name ? n->name : "",
                             (int)n->index);
    L.g = g;
    L.d = d;
    L.arena = g->arena;
    L.k = k;
    if (lower_fns[n->op](&L, n) || d->errors > errs)
        return NULL;
    for (i = 0; i < k->n_bufs; i++) {
        if (k->bufs[i].numel >= MAX_BUFFER_ELEMS || k->bufs[i].numel < 0) {
            diag_error(d, n, NULL, "tensor of %lld elements exceeds the 2^31 element limit",
                       (long long)k->bufs[i].numel);
            return NULL;
        }
    }
    for (i = 0; i < k->n_stages; i++) {
        if (!k->stages[i].body)
            die("lowering of %s left stage %d without a body", n->op_type, i);
        k->bufs[k->stages[i].out_buf].written = 1;
    }
    schedule_naive(&L);
    return k;
}
