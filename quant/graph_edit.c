/*
 * Graph edits for `tvmcc quantize` (graph_edit.h).
 */
#include <string.h>

#include "graph_edit.h"

int32_t qe_const(Graph *g, const char *name, DType dt, int rank, const int64_t *dims,
                 const void *data)
{
    int32_t serial = 0, vi;
    int64_t n = 1;
    int k;
    size_t bytes;
    void *copy;
    vi = graph_find_value(g, name) < 0 ? graph_add_value(g, name)
                                        : graph_fresh_value(g, name, "", &serial);
    for (k = 0; k < rank; k++)
        n *= dims[k];
    bytes = (size_t)dtype_nbytes(dt, n);
    copy = arena_alloc(g->arena, bytes ? bytes : 1);
    if (bytes)
        memcpy(copy, data, bytes);
    g->values[vi].dtype = dt;
    g->values[vi].rank = rank;
    for (k = 0; k < rank; k++)
        g->values[vi].dims[k] = dims[k];
    g->values[vi].data = copy;
    g->values[vi].is_initializer = 1;
    return vi;
}

int32_t qe_const_f32(Graph *g, const char *name, int rank, const int64_t *dims, const float *v)
{
    return qe_const(g, name, DT_FLOAT32, rank, dims, v);
}

int32_t qe_const_i64(Graph *g, const char *name, int64_t n, const int64_t *v)
{
    return qe_const(g, name, DT_INT64, 1, &n, v);
}

void qe_set_input(Graph *g, int32_t ni, int k, int32_t vi)
{
    Node *n = &g->nodes[ni];
    if (k >= n->n_in) {
        int32_t *in = arena_array(g->arena, (size_t)k + 1, sizeof *in);
        int i;
        for (i = 0; i <= k; i++)
            in[i] = i < n->n_in ? n->in[i] : -1;
        n->in = in;
        n->n_in = k + 1;
    }
    n->in[k] = vi;
}

void qe_drop_attr(Graph *g, int32_t ni, const char *name)
{
    Node *n = &g->nodes[ni];
    int i, j = 0;
    (void)g;
    for (i = 0; i < n->n_attr; i++)
        if (strcmp(n->attr[i].name, name) != 0)
            n->attr[j++] = n->attr[i];
    n->n_attr = j;
}

static Attr *new_attr(Graph *g, int32_t ni, const char *name)
{
    Node *n = &g->nodes[ni];
    Attr *a;
    int i;
    for (i = 0; i < n->n_attr; i++)
        if (!strcmp(n->attr[i].name, name)) {
            memset(&n->attr[i], 0, sizeof n->attr[i]);
            n->attr[i].name = arena_strdup(g->arena, name);
            return &n->attr[i];
        }
    a = arena_array(g->arena, (size_t)n->n_attr + 1, sizeof *a);
    if (n->n_attr)
        memcpy(a, n->attr, (size_t)n->n_attr * sizeof *a);
    n->attr = a;
    a = &n->attr[n->n_attr++];
    memset(a, 0, sizeof *a);
    a->name = arena_strdup(g->arena, name);
    return a;
}

void qe_set_attr_int(Graph *g, int32_t ni, const char *name, int64_t v)
{
    Attr *a = new_attr(g, ni, name);
    a->type = ATTR_INT;
    a->i = v;
}

void qe_set_attr_string(Graph *g, int32_t ni, const char *name, const char *s)
{
    Attr *a = new_attr(g, ni, name);
    a->type = ATTR_STRING;
    a->s = arena_strdup(g->arena, s);
}

int qe_is_output(const Graph *g, int32_t vi)
{
    int32_t i;
    for (i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == vi)
            return 1;
    return 0;
}

int qe_readers(const Graph *g, int32_t vi, int count_outputs)
{
    int32_t ni;
    int k, c = 0;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        for (k = 0; k < n->n_in; k++)
            if (n->in[k] == vi) {
                c++;
                break;
            }
    }
    return c + (count_outputs && qe_is_output(g, vi));
}

void qe_replace_reads(Graph *g, int32_t from, int32_t to, int32_t skip)
{
    int32_t ni;
    int k;
    for (ni = 0; ni < g->n_nodes; ni++) {
        Node *n = &g->nodes[ni];
        if (n->dead || ni == skip)
            continue;
        for (k = 0; k < n->n_in; k++)
            if (n->in[k] == from)
                n->in[k] = to;
    }
}

const float *qe_f32(const Graph *g, int32_t vi)
{
    if (vi < 0 || !g->values[vi].data || g->values[vi].dtype != DT_FLOAT32)
        return NULL;
    return g->values[vi].data;
}
