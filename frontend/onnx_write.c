/*
 * The ONNX writer: the live part of a Graph back into a ModelProto, packed
 * with the protobuf-c code generated from the system's onnx.proto. Used by
 * `tvmcc quantize` (cmd/quantize.c) for the QDQ model it writes and for
 * the instrumented models it compiles for calibration.
 *
 * What is written: the live nodes in an order where every producer comes
 * first, with their attributes as loaded (Node.attr); every constant value
 * a live node reads (or a graph output that is constant) as an initializer
 * in raw_data, little-endian as ONNX stores it; the graph inputs and
 * outputs with their element type and static shape. Node.params are not
 * consulted: a pass that changes what a node computes must change its
 * attributes or inputs too (the passes `tvmcc quantize` runs do).
 */
#include <stdlib.h>
#include <string.h>

#include "onnx.h"
#include "onnx.pb-c.h"

typedef struct Writer {
    Arena *a;
    const Graph *g;
    Diag *d;
} Writer;

static char *wstr(const char *s)
{
    return (char *)(s ? s : "");
}

static int tensor_proto(Writer *w, Onnx__TensorProto *t, const char *name, DType dt, int rank,
                        const int64_t *dims, const void *data, const Node *n)
{
    int64_t numel = 1;
    int k;
    onnx__tensor_proto__init(t);
    t->name = wstr(name);
    t->n_dims = (size_t)rank;
    t->dims = arena_array(w->a, (size_t)(rank ? rank : 1), sizeof *t->dims);
    for (k = 0; k < rank; k++) {
        t->dims[k] = dims[k];
        numel *= dims[k];
    }
    t->has_data_type = 1;
    t->data_type = (int32_t)dt;
    if (dt == DT_STRING) {
        const char *const *s = data;
        int64_t i;
        t->n_string_data = (size_t)numel;
        t->string_data = arena_array(w->a, (size_t)(numel ? numel : 1), sizeof *t->string_data);
        for (i = 0; i < numel; i++) {
            t->string_data[i].data = (uint8_t *)wstr(s[i]);
            t->string_data[i].len = s[i] ? strlen(s[i]) : 0;
        }
        return 0;
    }
    if (!dtype_size(dt)) {
        diag_error(w->d, n, name, "a tensor of this element type (%d) cannot be written", (int)dt);
        return 1;
    }
    t->has_raw_data = 1;
    t->raw_data.len = (size_t)dtype_nbytes(dt, numel);
    t->raw_data.data = (uint8_t *)data;
    return 0;
}

static Onnx__ValueInfoProto *value_info(Writer *w, int32_t vi)
{
    const Value *v = &w->g->values[vi];
    Onnx__ValueInfoProto *p = arena_alloc(w->a, sizeof *p);
    Onnx__TypeProto *tp = arena_alloc(w->a, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = arena_alloc(w->a, sizeof *tt);
    Onnx__TensorShapeProto *sp = arena_alloc(w->a, sizeof *sp);
    int k;
    onnx__value_info_proto__init(p);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sp);
    p->name = wstr(v->name);
    p->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)v->dtype;
    if (v->rank >= 0) {
        tt->shape = sp;
        sp->n_dim = (size_t)v->rank;
        sp->dim = arena_array(w->a, (size_t)(v->rank ? v->rank : 1), sizeof *sp->dim);
        for (k = 0; k < v->rank; k++) {
            Onnx__TensorShapeProto__Dimension *dm = arena_alloc(w->a, sizeof *dm);
            onnx__tensor_shape_proto__dimension__init(dm);
            if (v->dims[k] >= 0) {
                dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                dm->dim_value = v->dims[k];
            } else if (v->dim_param[k]) {
                dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                dm->dim_param = wstr(v->dim_param[k]);
            }
            sp->dim[k] = dm;
        }
    }
    return p;
}

static int attribute(Writer *w, const Node *n, const Attr *at, Onnx__AttributeProto *p)
{
    int64_t i;
    onnx__attribute_proto__init(p);
    p->name = wstr(at->name);
    p->has_type = 1;
    p->type = (Onnx__AttributeProto__AttributeType)at->type;
    switch (at->type) {
    case ATTR_FLOAT:
        p->has_f = 1;
        p->f = (float)at->f;
        return 0;
    case ATTR_INT:
        p->has_i = 1;
        p->i = at->i;
        return 0;
    case ATTR_STRING:
        p->has_s = 1;
        p->s.data = (uint8_t *)wstr(at->s);
        p->s.len = at->s ? strlen(at->s) : 0;
        return 0;
    case ATTR_FLOATS:
        p->n_floats = (size_t)at->n;
        p->floats = arena_array(w->a, (size_t)(at->n ? at->n : 1), sizeof *p->floats);
        for (i = 0; i < at->n; i++)
            p->floats[i] = (float)at->floats[i];
        return 0;
    case ATTR_INTS:
        p->n_ints = (size_t)at->n;
        p->ints = at->ints;
        return 0;
    case ATTR_STRINGS:
        p->n_strings = (size_t)at->n;
        p->strings = arena_array(w->a, (size_t)(at->n ? at->n : 1), sizeof *p->strings);
        for (i = 0; i < at->n; i++) {
            p->strings[i].data = (uint8_t *)wstr(at->strings[i]);
            p->strings[i].len = at->strings[i] ? strlen(at->strings[i]) : 0;
        }
        return 0;
    case ATTR_TENSOR:
        p->t = arena_alloc(w->a, sizeof *p->t);
        return tensor_proto(w, p->t, "", at->t->dtype, at->t->rank, at->t->dims, at->t->data, n);
    case ATTR_TENSORS:
        p->n_tensors = (size_t)at->n;
        p->tensors = arena_array(w->a, (size_t)(at->n ? at->n : 1), sizeof *p->tensors);
        for (i = 0; i < at->n; i++) {
            p->tensors[i] = arena_alloc(w->a, sizeof **p->tensors);
            if (tensor_proto(w, p->tensors[i], "", at->t[i].dtype, at->t[i].rank, at->t[i].dims,
                             at->t[i].data, n))
                return 1;
        }
        return 0;
    default:
        diag_error(w->d, n, at->name, "an attribute of this type (%d) cannot be written",
                   (int)at->type);
        return 1;
    }
}

/* The live nodes in an order where producers come first (depth first from
 * each node over its inputs' producers). */
static int32_t *node_order(Writer *w, int32_t *count)
{
    const Graph *g = w->g;
    int32_t *order = arena_array(w->a, (size_t)(g->n_nodes + 1), sizeof *order);
    int32_t *stack = arena_array(w->a, (size_t)(g->n_nodes + 1), sizeof *stack);
    int32_t *pos = arena_array(w->a, (size_t)(g->n_nodes + 1), sizeof *pos);
    uint8_t *state = arena_alloc(w->a, (size_t)g->n_nodes + 1);
    int32_t n_order = 0, ni;
    memset(state, 0, (size_t)g->n_nodes + 1);
    for (ni = 0; ni < g->n_nodes; ni++) {
        int32_t sp = 0;
        if (g->nodes[ni].dead || state[ni])
            continue;
        stack[sp] = ni;
        pos[sp++] = 0;
        state[ni] = 1;
        while (sp > 0) {
            int32_t cur = stack[sp - 1];
            const Node *n = &g->nodes[cur];
            if (pos[sp - 1] < n->n_in) {
                int32_t vi = n->in[pos[sp - 1]++], p;
                if (vi < 0 || g->values[vi].data || (p = g->values[vi].producer) < 0 ||
                    g->nodes[p].dead)
                    continue;
                if (state[p] == 1) {
                    diag_error(w->d, n, NULL, "the graph has a cycle");
                    return NULL;
                }
                if (state[p] == 0) {
                    state[p] = 1;
                    stack[sp] = p;
                    pos[sp++] = 0;
                }
            } else {
                state[cur] = 2;
                order[n_order++] = cur;
                sp--;
            }
        }
    }
    *count = n_order;
    return order;
}

static int domain_is_default(const char *d)
{
    return !d || !d[0] || !strcmp(d, "ai.onnx");
}

uint8_t *onnx_write_model(const Graph *g, const OnnxWriteOptions *opt, size_t *size, Diag *d)
{
    Arena a;
    Writer w;
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
    int32_t *order, n_order = 0, i, vi;
    uint8_t *used, *out = NULL;
    const char *domains[16];
    int64_t versions[16];
    int n_domains = 1, k, before = d->errors;
    size_t n_init = 0;
    arena_init(&a, 0);
    w.a = &a;
    w.g = g;
    w.d = d;
    domains[0] = "";
    versions[0] = opt && opt->opset > g->opset ? opt->opset : g->opset;
    order = node_order(&w, &n_order);
    if (!order)
        goto done;
    used = arena_alloc(&a, (size_t)g->n_values + 1);
    memset(used, 0, (size_t)g->n_values + 1);
    gp.name = wstr(opt && opt->graph_name ? opt->graph_name : "tvmcc");
    gp.n_node = (size_t)n_order;
    gp.node = arena_array(&a, (size_t)n_order + 1, sizeof *gp.node);
    for (i = 0; i < n_order; i++) {
        const Node *n = &g->nodes[order[i]];
        Onnx__NodeProto *np = arena_alloc(&a, sizeof *np);
        onnx__node_proto__init(np);
        np->name = wstr(n->name);
        np->op_type = wstr(n->op_type);
        np->domain = domain_is_default(n->domain) ? "" : wstr(n->domain);
        if (!domain_is_default(n->domain)) {
            for (k = 1; k < n_domains && strcmp(domains[k], n->domain); k++)
                ;
            if (k == n_domains) {
                if (n_domains == 16) {
                    diag_error(d, n, "domain", "too many operator domains");
                    goto done;
                }
                domains[n_domains] = n->domain;
                versions[n_domains++] = n->opset > 0 ? n->opset : 1;
            } else if (n->opset > versions[k]) {
                versions[k] = n->opset;
            }
        }
        np->n_input = (size_t)n->n_in;
        np->input = arena_array(&a, (size_t)n->n_in + 1, sizeof *np->input);
        for (k = 0; k < n->n_in; k++) {
            vi = n->in[k];
            np->input[k] = vi >= 0 ? wstr(g->values[vi].name) : "";
            if (vi >= 0)
                used[vi] = 1;
        }
        np->n_output = (size_t)n->n_out;
        np->output = arena_array(&a, (size_t)n->n_out + 1, sizeof *np->output);
        for (k = 0; k < n->n_out; k++)
            np->output[k] = n->out[k] >= 0 ? wstr(g->values[n->out[k]].name) : "";
        np->n_attribute = (size_t)n->n_attr;
        np->attribute = arena_array(&a, (size_t)n->n_attr + 1, sizeof *np->attribute);
        for (k = 0; k < n->n_attr; k++) {
            np->attribute[k] = arena_alloc(&a, sizeof **np->attribute);
            if (attribute(&w, n, &n->attr[k], np->attribute[k]))
                goto done;
        }
        gp.node[i] = np;
    }
    for (i = 0; i < g->n_outputs; i++)
        used[g->outputs[i]] = 1;
    /* initializers: the constants read */
    gp.initializer = arena_array(&a, (size_t)g->n_values + 1, sizeof *gp.initializer);
    for (vi = 0; vi < g->n_values; vi++) {
        const Value *v = &g->values[vi];
        Onnx__TensorProto *t;
        if (!used[vi] || !v->data)
            continue;
        t = arena_alloc(&a, sizeof *t);
        if (tensor_proto(&w, t, v->name, v->dtype, v->rank, v->dims, v->data, NULL))
            goto done;
        gp.initializer[n_init++] = t;
    }
    gp.n_initializer = n_init;
    gp.n_input = (size_t)g->n_inputs;
    gp.input = arena_array(&a, (size_t)g->n_inputs + 1, sizeof *gp.input);
    for (i = 0; i < g->n_inputs; i++)
        gp.input[i] = value_info(&w, g->inputs[i]);
    gp.n_output = (size_t)g->n_outputs;
    gp.output = arena_array(&a, (size_t)g->n_outputs + 1, sizeof *gp.output);
    for (i = 0; i < g->n_outputs; i++)
        gp.output[i] = value_info(&w, g->outputs[i]);
    m.has_ir_version = 1;
    m.ir_version = versions[0] <= 13 ? 7 : versions[0] <= 18 ? 8 : versions[0] <= 20 ? 9
                   : versions[0] <= 22 ? 10 : 11;
    m.producer_name = wstr(opt && opt->producer ? opt->producer : "tvmcc");
    m.producer_version = wstr(opt && opt->producer_version ? opt->producer_version : "");
    m.graph = &gp;
    m.n_opset_import = (size_t)n_domains;
    m.opset_import = arena_array(&a, (size_t)n_domains, sizeof *m.opset_import);
    for (k = 0; k < n_domains; k++) {
        Onnx__OperatorSetIdProto *o = arena_alloc(&a, sizeof *o);
        onnx__operator_set_id_proto__init(o);
        o->domain = wstr(domains[k]);
        o->has_version = 1;
        o->version = versions[k];
        m.opset_import[k] = o;
    }
    *size = onnx__model_proto__get_packed_size(&m);
    out = malloc(*size ? *size : 1);
    if (!out) {
        diag_error(d, NULL, NULL, "out of memory writing the model (%zu bytes)", *size);
        goto done;
    }
    onnx__model_proto__pack(&m, out);
done:
    arena_free(&a);
    if (d->errors > before) {
        free(out);
        return NULL;
    }
    return out;
}
