/*
 * Sequence and optional graph inputs (--sequence-length, --optional-absent),
 * fixed at compile time before anything else looks at the graph.
 *
 * The loader (onnx_load.c) records a graph input or output declared as a
 * sequence of tensors, an optional tensor or an optional sequence in
 * Value.io_kind, with the element's dtype and shape on the value. Here:
 *
 *   sequence input x, --sequence-length x=L
 *       x leaves the graph inputs; L tensor inputs "x[0]" .. "x[L-1]" take
 *       its place (the element's declared dtype and shape, which
 *       --input-shape 'x[K]=...' binds like any input) and a
 *       SequenceConstruct of them (SequenceEmpty for L = 0) at the top of
 *       the graph defines x, so frontend/seq_resolve.c knows its elements.
 *   optional input x, --optional-absent x
 *       x leaves the graph inputs and is marked absent: it has no buffer,
 *       OptionalHasElement of it folds to false, OptionalGetElement of it
 *       or any other use is an error (seq_resolve.c).
 *   optional input x without the option: present, a tensor or a sequence
 *       as above.
 *
 * Graph.in_tags records for each remaining input buffer which sequence it
 * is an element of and whether it is optional; the emitter writes that
 * into NAME.h and NAME.json. Outputs are bound by seq_resolve.c once the
 * elements of every sequence are known.
 */
#include "onnx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SEQ_MAX_LENGTH 4096

static void *io_alloc(Graph *g, size_t count, size_t size)
{
    void *p = arena_array(g->arena, count ? count : 1, size);
    if (!p)
        die("compile arena exhausted");
    return p;
}

/* The graph input called name (the original inputs), or -1. */
static int32_t find_input(const Graph *g, const int32_t *inputs, int32_t n, const char *name)
{
    int32_t k;
    for (k = 0; k < n; k++)
        if (!strcmp(g->values[inputs[k]].name, name))
            return k;
    return -1;
}

static int any_io_kind(const Graph *g)
{
    int32_t k;
    for (k = 0; k < g->n_inputs; k++)
        if (g->values[g->inputs[k]].io_kind)
            return 1;
    for (k = 0; k < g->n_outputs; k++)
        if (g->values[g->outputs[k]].io_kind)
            return 1;
    return 0;
}

int onnx_bind_io(Graph *g, const char *const *lengths, int n_lengths,
                 const char *const *absent, int n_absent, Diag *d)
{
    int32_t n_old = g->n_inputs, *old = g->inputs, *len, k, total = 0, i;
    uint8_t *is_absent;
    Node *old_nodes = g->nodes;
    int32_t n_old_nodes = g->n_nodes;
    int j;
    if (!any_io_kind(g) && !n_lengths && !n_absent)
        return 0;
    len = io_alloc(g, (size_t)n_old, sizeof *len);
    is_absent = io_alloc(g, (size_t)n_old, 1);
    for (k = 0; k < n_old; k++)
        len[k] = -1;
    for (j = 0; j < n_lengths; j++) {
        const char *spec = lengths[j], *eq = strrchr(spec, '=');
        const char *name;
        char *end;
        long long l;
        if (!eq || eq == spec)
            return diag_error(d, NULL, "--sequence-length", "'%s' is not of the form NAME=L",
                              spec);
        name = arena_strndup(g->arena, spec, (size_t)(eq - spec));
        if (!name)
            die("compile arena exhausted");
        errno = 0;
        l = strtoll(eq + 1, &end, 10);
        if (end == eq + 1 || *end || errno || l < 0 || l > SEQ_MAX_LENGTH)
            return diag_error(d, NULL, "--sequence-length", "'%s': the length must be an "
                              "integer from 0 to %d", spec, SEQ_MAX_LENGTH);
        k = find_input(g, old, n_old, name);
        if (k < 0)
            return diag_error(d, NULL, "--sequence-length", "the model has no graph input '%s'",
                              name);
        if (!(g->values[old[k]].io_kind & IO_SEQUENCE))
            return diag_error(d, NULL, "--sequence-length", "graph input '%s' is a tensor, not "
                              "a sequence", name);
        if (len[k] >= 0 && len[k] != l)
            return diag_error(d, NULL, "--sequence-length", "'%s' is given two lengths (%lld "
                              "and %lld)", name, (long long)len[k], l);
        len[k] = (int32_t)l;
    }
    for (j = 0; j < n_absent; j++) {
        k = find_input(g, old, n_old, absent[j]);
        if (k < 0)
            return diag_error(d, NULL, "--optional-absent", "the model has no graph input '%s'",
                              absent[j]);
        if (!(g->values[old[k]].io_kind & IO_OPTIONAL))
            return diag_error(d, NULL, "--optional-absent", "graph input '%s' is not optional; "
                              "only an optional input can be absent", absent[j]);
        if (len[k] >= 0)
            return diag_error(d, NULL, "--optional-absent", "'%s' is absent, so it has no "
                              "length (drop --sequence-length %s=%lld)", absent[j], absent[j],
                              (long long)len[k]);
        is_absent[k] = 1;
    }
    for (k = 0; k < n_old; k++) {
        const Value *v = &g->values[old[k]];
        if (is_absent[k])
            continue;
        if ((v->io_kind & IO_SEQUENCE) && len[k] < 0)
            return diag_error(d, NULL, NULL, "graph input '%s' is a sequence: give its length "
                              "with --sequence-length %s=L (the elements are then L input "
                              "buffers, shaped with --input-shape '%s[K]=D0,D1,...')%s",
                              v->name, v->name, v->name,
                              v->io_kind & IO_OPTIONAL ? ", or make it absent with "
                              "--optional-absent" : "");
        total += (v->io_kind & IO_SEQUENCE) ? len[k] : 1;
    }
    /* the new input list and its tags */
    g->inputs = io_alloc(g, (size_t)total + 1, sizeof *g->inputs);
    g->in_tags = io_alloc(g, (size_t)total + 1, sizeof *g->in_tags);
    g->absent_inputs = io_alloc(g, (size_t)n_old, sizeof *g->absent_inputs);
    g->n_inputs = 0;
    g->nodes = NULL;
    g->n_nodes = 0;
    g->cap_nodes = 0;
    for (k = 0; k < n_old; k++) {
        int32_t vi = old[k];
        Value *v = &g->values[vi];
        uint8_t opt = (v->io_kind & IO_OPTIONAL) != 0;
        v->input_index = -1;
        if (is_absent[k]) {
            v->absent = 1;
            v->dtype = DT_UNDEF;
            v->rank = -1;
            v->declared = 0;
            g->absent_inputs[g->n_absent_inputs++] = v->name;
            continue;
        }
        if (!(v->io_kind & IO_SEQUENCE)) {
            v->input_index = g->n_inputs;
            g->in_tags[g->n_inputs].optional = opt;
            g->inputs[g->n_inputs++] = vi;
            continue;
        }
        {
            int32_t ni = graph_add_node(g, len[k] ? OP_SequenceConstruct : OP_SequenceEmpty,
                                        v->name, len[k], 1);
            Node *n;
            for (i = 0; i < len[k]; i++) {
                const char *en = arena_printf(g->arena, "%s[%ld]", v->name, (long)i);
                int32_t ei;
                Value *e;
                if (!en)
                    die("compile arena exhausted");
                if (graph_find_value(g, en) >= 0)
                    return diag_error(d, NULL, NULL, "graph input '%s': the model already has "
                                      "a value named '%s', the name of its element %ld",
                                      v->name, en, (long)i);
                ei = graph_add_value(g, en);
                v = &g->values[vi]; /* the value array may have moved */
                e = &g->values[ei];
                e->dtype = v->dtype;
                e->rank = v->rank;
                memcpy(e->dims, v->dims, sizeof e->dims);
                memcpy(e->dim_param, v->dim_param, sizeof e->dim_param);
                e->declared = v->declared;
                e->input_index = g->n_inputs;
                g->in_tags[g->n_inputs].seq = v->name;
                g->in_tags[g->n_inputs].index = i;
                g->in_tags[g->n_inputs].optional = opt;
                g->inputs[g->n_inputs++] = ei;
                g->nodes[ni].in[i] = ei;
            }
            n = &g->nodes[ni];
            n->opset = (int)(g->opset > 11 ? g->opset : 11);
            n->index = -1;
            n->note = arena_printf(g->arena, "the elements of sequence graph input '%s', "
                                   "--sequence-length %s=%ld", v->name, v->name, (long)len[k]);
            n->out[0] = vi;
            if (!len[k]) {
                Attr *a = io_alloc(g, 1, sizeof *a);
                a->name = "dtype";
                a->type = ATTR_INT;
                a->i = v->dtype != DT_UNDEF ? (int64_t)v->dtype : (int64_t)DT_FLOAT32;
                n->n_attr = 1;
                n->attr = a;
            }
            v->producer = ni;
            v->dtype = DT_UNDEF;
            v->rank = -1;
            v->declared = 0;
        }
    }
    /* the model's nodes after the SequenceConstructs */
    for (i = 0; i < n_old_nodes; i++) {
        int32_t ni = graph_add_node(g, old_nodes[i].op, old_nodes[i].name, 0, 0);
        int o;
        g->nodes[ni] = old_nodes[i];
        for (o = 0; o < g->nodes[ni].n_out; o++)
            if (g->nodes[ni].out[o] >= 0)
                g->values[g->nodes[ni].out[o]].producer = ni;
    }
    return 0;
}
