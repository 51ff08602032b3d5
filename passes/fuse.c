/*
 * Operator fusion: groups nodes by the rules of the TVM paper over the op
 * table's categories, so that each group becomes one kernel.
 *
 *   1. Injective ops fuse into the output of a complex-out-fusable op or a
 *      reduction (conv + bias + relu + residual add).
 *   2. Chains of injective ops fuse into one.
 *   3. A reduction fuses with the injective ops at its input.
 *   Opaque ops never fuse; nor does the Transpose back to NCHW after a
 *   conv with blocked channels (its kernel keeps one stage for the x86
 *   template), nor the Reshape that is the whole transform for a plane of
 *   one position.
 *
 * An edge producer -> consumer is fused only when the value between them
 * has that one consumer (or all its consumers are already in the consumer's
 * group, as in x * sigmoid(x)), is not a graph output, and (for rule 1 and 2) the
 * consumer's output has as many elements as the value, so that the fused
 * stage keeps the producer's iteration space. A group has at most one
 * non-injective member (its master). Members keep their place in the graph;
 * each records in Node.group the index of the group's last node, where the
 * group's kernel runs (every input of every member is computed by then, and
 * only the last node's output leaves the group). lower/fuse.c turns the
 * group into one kernel without intermediate buffers.
 */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

static int32_t find(int32_t *parent, int32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static int live_outputs(const Graph *g, const Node *n, const int32_t *uses)
{
    int i, k = 0;
    (void)g;
    for (i = 0; i < n->n_out; i++)
        if (n->out[i] >= 0 && uses[n->out[i]] > 0)
            k++;
    return k;
}

/* A conv the layout pass gave blocked channels (NCHW<b>c): its kernel
 * keeps its one stage (the x86 template takes only those), so the
 * transform back to NCHW after it is a kernel of its own. */
static int blocked_conv(const Node *n)
{
    const Attr *a = n->op == OP_Conv ? node_attr(n, "tvmcc.layout") : NULL;
    return a && a->type == ATTR_STRING && a->s && !strncmp(a->s, "NCHW", 4) && a->s[4];
}

/* Whether group gp holds a WinogradOutput (passes/winograd.c): the same
 * holds for it as for a blocked conv, whose output it writes; fused, the
 * transform back would turn its lane-wise stores into a transposed one
 * (resnet18-like 56x56 plane: 0.23 ms -> 1.9 ms). */
static int group_has_winograd(const Graph *g, int32_t *parent, int32_t gp)
{
    int32_t ni;
    for (ni = 0; ni < g->n_nodes; ni++)
        if (!g->nodes[ni].dead && g->nodes[ni].op == OP_WinogradOutput && find(parent, ni) == gp)
            return 1;
    return 0;
}

/* The fusion category of n: its op table row's, except that a node on
 * string tensors (Equal, Cast) is a runtime call, a BatchNormalization in
 * training mode (its own batch statistics: reduction stages before the
 * elementwise one) and a Dropout that may train (hash stages before it)
 * have several stages: these never fuse. */
static OpCategory category(const Graph *g, const Node *n)
{
    int i;
    if ((n->op == OP_BatchNormalization || n->op == OP_Dropout) && node_scalar(n)->training)
        return CAT_OPAQUE;
    for (i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && g->values[n->in[i]].dtype == DT_STRING)
            return CAT_OPAQUE;
    for (i = 0; i < n->n_out; i++)
        if (n->out[i] >= 0 && g->values[n->out[i]].dtype == DT_STRING)
            return CAT_OPAQUE;
    return op_info[n->op].category;
}

int pass_fuse(Graph *g, Diag *d)
{
    int32_t *uses, *parent, *master, *last, ni;
    int i, j;
    (void)d;
    uses = calloc((size_t)g->n_values + 1, sizeof *uses);
    parent = malloc(((size_t)g->n_nodes + 1) * sizeof *parent);
    master = malloc(((size_t)g->n_nodes + 1) * sizeof *master);
    last = malloc(((size_t)g->n_nodes + 1) * sizeof *last);
    if (!uses || !parent || !master || !last)
        die("out of memory");
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        parent[ni] = ni;
        master[ni] = (n->op > OP_UNKNOWN && category(g, n) != CAT_INJECTIVE) ? ni : -1;
        if (n->dead)
            continue;
        for (i = 0; i < n->n_in; i++)
            if (n->in[i] >= 0)
                uses[n->in[i]]++;
    }
    for (j = 0; j < g->n_outputs; j++)
        uses[g->outputs[j]] += 1000000; /* never internal */

    for (ni = 0; ni < g->n_nodes; ni++) {
        Node *m = &g->nodes[ni];
        OpCategory cm;
        if (m->dead || m->op <= OP_UNKNOWN)
            continue;
        cm = category(g, m);
        if (cm == CAT_OPAQUE || cm == CAT_COMPLEX)
            continue;
        for (i = 0; i < m->n_in; i++) {
            int32_t t = m->in[i], pi, gp, gm;
            const Node *p;
            OpCategory cp;
            if (t < 0 || g->values[t].data || uses[t] != 1)
                continue;
            pi = g->values[t].producer;
            if (pi < 0 || g->nodes[pi].dead)
                continue;
            p = &g->nodes[pi];
            if (p->op <= OP_UNKNOWN || live_outputs(g, p, uses) != 1)
                continue;
            cp = category(g, p);
            if (cp == CAT_OPAQUE)
                continue;
            gp = find(parent, pi);
            gm = find(parent, ni);
            if (gp == gm)
                continue;
            if (cm == CAT_INJECTIVE && (m->op == OP_Transpose || m->op == OP_Reshape) &&
                ((master[gp] >= 0 && blocked_conv(&g->nodes[master[gp]])) || group_has_winograd(g, parent, gp)))
                continue; /* the transform back from a blocked conv stays apart (a
                             Reshape alone for a plane of one position) */
            if (cm == CAT_INJECTIVE) {
                /* rules 1 and 2: keep the producer's iteration space */
                if (m->n_out < 1 || m->out[0] < 0 ||
                    value_numel(&g->values[m->out[0]]) != value_numel(&g->values[t]))
                    continue;
                if (master[gp] >= 0 && master[gm] >= 0)
                    continue;
            } else { /* CAT_REDUCTION: rule 3, only injective producers */
                if (master[gp] >= 0 || (master[gm] >= 0 && master[gm] != ni))
                    continue;
            }
            parent[gp] = gm;
            if (master[gm] < 0)
                master[gm] = master[gp];
        }
    }
    /* a value that several members of one group read (x * sigmoid(x)) is
     * internal to that group too: its producer fuses in as it would for a
     * single consumer */
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *m = &g->nodes[ni];
        if (m->dead || m->op <= OP_UNKNOWN || category(g, m) != CAT_INJECTIVE)
            continue;
        for (i = 0; i < m->n_in; i++) {
            int32_t t = m->in[i], pi, gp, gm, ci;
            const Node *p;
            int all_in = 1;
            if (t < 0 || g->values[t].data || uses[t] < 2 || uses[t] >= 1000000)
                continue;
            pi = g->values[t].producer;
            if (pi < 0 || g->nodes[pi].dead)
                continue;
            p = &g->nodes[pi];
            if (p->op <= OP_UNKNOWN || live_outputs(g, p, uses) != 1 ||
                category(g, p) == CAT_OPAQUE)
                continue;
            gp = find(parent, pi);
            gm = find(parent, ni);
            if (gp == gm || (master[gp] >= 0 && master[gm] >= 0))
                continue;
            if (m->n_out < 1 || m->out[0] < 0 ||
                value_numel(&g->values[m->out[0]]) != value_numel(&g->values[t]))
                continue;
            for (ci = 0; ci < g->n_nodes && all_in; ci++) {
                const Node *c = &g->nodes[ci];
                if (c->dead)
                    continue;
                for (j = 0; j < c->n_in; j++)
                    if (c->in[j] == t && find(parent, ci) != gm)
                        all_in = 0;
            }
            if (!all_in)
                continue;
            parent[gp] = gm;
            if (master[gm] < 0)
                master[gm] = master[gp];
        }
    }
    /* the group's kernel runs at its last member */
    for (ni = 0; ni < g->n_nodes; ni++)
        last[ni] = -1;
    for (ni = 0; ni < g->n_nodes; ni++)
        if (!g->nodes[ni].dead)
            last[find(parent, ni)] = ni;
    for (ni = 0; ni < g->n_nodes; ni++) {
        Node *n = &g->nodes[ni];
        int32_t l;
        if (n->dead)
            continue;
        l = last[find(parent, ni)];
        n->group = l;
    }
    /* singletons are not fused */
    for (ni = 0; ni < g->n_nodes; ni++) {
        int32_t k, members = 0;
        Node *n = &g->nodes[ni];
        if (n->dead || n->group != ni)
            continue;
        for (k = 0; k < g->n_nodes; k++)
            if (!g->nodes[k].dead && g->nodes[k].group == ni)
                members++;
        if (members == 1)
            n->group = -1;
    }
    free(uses);
    free(parent);
    free(master);
    free(last);
    return 0;
}
