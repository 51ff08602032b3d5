/*
 * simplify: local rewrites that remove work before fusion.
 *
 * - Identity and (inference) Dropout: consumers read the input directly.
 * - Reshape/Flatten/Squeeze/Unsqueeze to the shape the input already has:
 *   removed the same way; a chain of them collapses into one (each reads
 *   the first one's input: the data is the same bytes in the same order).
 * - Transpose followed by a Transpose that undoes it: both removed.
 * - BatchNormalization after a Conv whose output it alone reads, with
 *   constant parameters: folded into the Conv's weights and bias, so the
 *   network runs one kernel where it ran two. Done for float32 and float64
 *   in the pass itself: w'[m] = w[m] * s[m], b'[m] = (b[m] - mean[m]) * s[m]
 *   + beta[m] with s = gamma / sqrt(var + eps) computed in double.
 *
 * A node is removed by pointing its readers at another value and marking it
 * dead; a value that is a graph output is never replaced, so interface names
 * and order stay as in the model.
 */
#include "passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_graph_output(const Graph *g, int32_t vi)
{
    int j;
    for (j = 0; j < g->n_outputs; j++)
        if (g->outputs[j] == vi)
            return 1;
    return 0;
}

/* Every live reader of `from` reads `to` instead. */
static void replace_uses(Graph *g, int32_t from, int32_t to)
{
    int32_t ni;
    int i;
    for (ni = 0; ni < g->n_nodes; ni++) {
        Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        for (i = 0; i < n->n_in; i++)
            if (n->in[i] == from)
                n->in[i] = to;
    }
}

static int count_uses(const Graph *g, int32_t vi)
{
    int32_t ni;
    int i, k = 0;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        for (i = 0; i < n->n_in; i++)
            k += n->in[i] == vi;
    }
    return k + is_graph_output(g, vi);
}

static int same_shape(const Value *a, const Value *b)
{
    return a->rank == b->rank && a->dtype == b->dtype &&
           !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof a->dims[0]);
}

static int is_reshape_like(OpKind op)
{
    return op == OP_Reshape || op == OP_Flatten || op == OP_Squeeze || op == OP_Unsqueeze;
}

/* Drops node n whose output 0 carries the same data as value `to`. */
static int bypass(Graph *g, Node *n, int32_t to)
{
    int32_t out = n->out[0];
    if (out < 0 || is_graph_output(g, out))
        return 0;
    replace_uses(g, out, to);
    n->dead = 1;
    return 1;
}

static int fold_bn_into_conv(Graph *g, Node *bn, Diag *d)
{
    int32_t x = bn->in[0], ci;
    Node *conv;
    const Value *w, *xv;
    double eps = node_scalar(bn)->epsilon;
    int64_t m, per, oc, k;
    int i, f64;
    void *nw, *nb;
    int32_t wv, bv;
    if (x < 0 || g->values[x].data || (ci = g->values[x].producer) < 0)
        return 0;
    conv = &g->nodes[ci];
    if (conv->dead || conv->op != OP_Conv || count_uses(g, x) != 1 || conv->n_out != 1 ||
        node_scalar(bn)->training)
        return 0;
    for (i = 1; i < 5; i++)
        if (bn->in[i] < 0 || !g->values[bn->in[i]].data)
            return 0;
    if (bn->n_out > 1)
        for (i = 1; i < bn->n_out; i++)
            if (bn->out[i] >= 0)
                return 0;
    w = &g->values[conv->in[1]];
    xv = &g->values[x];
    if (!w->data || (conv->n_in > 2 && conv->in[2] >= 0 && !g->values[conv->in[2]].data))
        return 0;
    if (w->dtype != DT_FLOAT32 && w->dtype != DT_FLOAT64)
        return 0;
    for (i = 1; i < 5; i++)
        if (g->values[bn->in[i]].dtype != w->dtype)
            return 0;
    f64 = w->dtype == DT_FLOAT64;
    oc = w->dims[0];
    if (xv->rank < 2 || xv->dims[1] != oc || value_numel(&g->values[bn->in[1]]) != oc)
        return 0;
    per = value_numel(w) / oc;
    nw = arena_array(g->arena, (size_t)value_numel(w), dtype_size(w->dtype));
    nb = arena_array(g->arena, (size_t)oc, dtype_size(w->dtype));
    if (!nw || !nb)
        return 0;
    for (m = 0; m < oc; m++) {
        double gamma, beta, mean, var, bias = 0, s;
#define AT(vi, idx) (f64 ? ((const double *)g->values[vi].data)[idx] : (double)((const float *)g->values[vi].data)[idx])
        gamma = AT(bn->in[1], m);
        beta = AT(bn->in[2], m);
        mean = AT(bn->in[3], m);
        var = AT(bn->in[4], m);
        if (conv->n_in > 2 && conv->in[2] >= 0)
            bias = AT(conv->in[2], m);
        s = gamma / sqrt(var + eps);
        for (k = 0; k < per; k++) {
            double v = AT(conv->in[1], m * per + k) * s;
            if (f64)
                ((double *)nw)[m * per + k] = v;
            else
                ((float *)nw)[m * per + k] = (float)v;
        }
        if (f64)
            ((double *)nb)[m] = (bias - mean) * s + beta;
        else
            ((float *)nb)[m] = (float)((bias - mean) * s + beta);
#undef AT
    }
    wv = graph_add_value(g, arena_printf(g->arena, "%s/bn_folded_w", bn->name));
    bv = graph_add_value(g, arena_printf(g->arena, "%s/bn_folded_b", bn->name));
    w = &g->values[conv->in[1]]; /* graph_add_value may move the array */
    g->values[wv].dtype = w->dtype;
    g->values[wv].rank = w->rank;
    memcpy(g->values[wv].dims, w->dims, sizeof w->dims);
    g->values[wv].data = nw;
    g->values[bv].dtype = w->dtype;
    g->values[bv].rank = 1;
    g->values[bv].dims[0] = oc;
    g->values[bv].data = nb;
    /* the conv now reads the folded constants and writes the BN's output */
    if (conv->n_in < 3) {
        int32_t *in = arena_array(g->arena, 3, sizeof *in);
        in[0] = conv->in[0];
        in[1] = conv->in[1];
        conv->in = in;
        conv->n_in = 3;
    }
    conv->in[1] = wv;
    conv->in[2] = bv;
    conv->out[0] = bn->out[0];
    g->values[bn->out[0]].producer = ci;
    bn->dead = 1;
    return 1;
}

int pass_simplify(Graph *g, Diag *d)
{
    int32_t ni;
    int changed = 1, rounds = 0;
    while (changed && rounds++ < 8) {
        changed = 0;
        for (ni = 0; ni < g->n_nodes; ni++) {
            Node *n = &g->nodes[ni];
            int32_t in0;
            /* (an integer node computes: an Identity with quant rescales) */
            if (n->dead || n->quant || n->n_in < 1 || (in0 = n->in[0]) < 0 || n->n_out < 1 ||
                n->out[0] < 0)
                continue;
            switch (n->op) {
            case OP_Identity:
                changed |= bypass(g, n, in0);
                break;
            case OP_Dropout: {
                int i, mask_used = 0;
                for (i = 1; i < n->n_out; i++)
                    if (n->out[i] >= 0 && count_uses(g, n->out[i]))
                        mask_used = 1;
                if (!mask_used && !node_scalar(n)->training)
                    changed |= bypass(g, n, in0);
                break;
            }
            case OP_Reshape:
            case OP_Flatten:
            case OP_Squeeze:
            case OP_Unsqueeze: {
                int32_t p = g->values[in0].producer;
                if (same_shape(&g->values[in0], &g->values[n->out[0]])) {
                    changed |= bypass(g, n, in0);
                } else if (p >= 0 && !g->nodes[p].dead && is_reshape_like(g->nodes[p].op) &&
                           n->op == OP_Reshape) {
                    /* Reshape of a reshape: read the first one's input */
                    n->in[0] = g->nodes[p].in[0];
                    changed = 1;
                }
                break;
            }
            case OP_Transpose: {
                int32_t p = g->values[in0].producer;
                const Node *pn = p >= 0 ? &g->nodes[p] : NULL;
                const PermParams *p1, *p2;
                int undo = 1, k;
                if (!pn || pn->dead || pn->op != OP_Transpose)
                    break;
                p1 = node_perm(pn);
                p2 = node_perm(n);
                if (p1->rank != p2->rank)
                    break;
                for (k = 0; k < p1->rank; k++)
                    if (p1->perm[p2->perm[k]] != k)
                        undo = 0;
                if (undo && same_shape(&g->values[pn->in[0]], &g->values[n->out[0]]))
                    changed |= bypass(g, n, pn->in[0]);
                break;
            }
            case OP_BatchNormalization:
                changed |= fold_bn_into_conv(g, n, d);
                break;
            default:
                break;
            }
        }
    }
    return 0;
}
