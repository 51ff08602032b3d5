/*
 * onnx_load: ModelProto -> Graph.
 *
 * The file is unpacked by protobuf-c (bounded, see onnx_tensor.c), copied
 * into the graph's arena and the message freed. The steps, in order:
 *
 *   1. opset_import gives the default-domain opset (g->opset) and the opset
 *      of every other domain (Node.opset).
 *   2. initializers become constant values; graph inputs that are not
 *      initializers become g->inputs with their declared type and shape.
 *   3. nodes: every output name creates a value (each name may be produced
 *      once); then inputs are resolved by name. An empty name is an omitted
 *      optional input or output (-1). In a subgraph an unresolved name is an
 *      outer-scope reference and gets a placeholder value.
 *   4. value_info and graph outputs record declared types (Value.declared).
 *   5. if the nodes are not in topological order they are sorted (stable:
 *      among ready nodes the earliest in the file goes first); a cycle is
 *      reported naming a node on it.
 *   6. all operators outside the op table are listed in one error.
 *
 * Loading stops at the first error (the unsupported-operator list is one
 * error), so a broken model gives one line however much of it is broken,
 * and a hostile one cannot flood the terminal.
 *
 * Subgraph attributes (If, Loop, Scan bodies) are parsed the same way into
 * their own Graph so that later stages can at least see them.
 */
#include "onnx.h"

#include <string.h>

#include "limits.h"
#include "onnx.pb-c.h"

typedef struct Loader {
    Arena *a;
    Diag *d;
    const char *path;
    const Onnx__ModelProto *m;
    int64_t default_opset;
    int depth;                 /* subgraph nesting */
    int64_t const_bytes;       /* initializers and tensor attributes so far */
} Loader;

static int is_default_domain(const char *domain)
{
    return !domain || !domain[0] || strcmp(domain, "ai.onnx") == 0;
}

/* The op table row of an operator: the default domain's operators, the
 * ai.onnx.preview.training ones (expanded after inference) and the
 * com.microsoft ones below. */
static int is_training_op(OpKind k)
{
    return k == OP_Gradient || k == OP_Adagrad || k == OP_Adam || k == OP_Momentum;
}

/* onnxruntime's com.microsoft contrib operators: the QOperator ones, and its
 * QuantizeLinear/DequantizeLinear (int16 below opset 21), which are the
 * ONNX ones. */
static int is_ms_op(OpKind k)
{
    switch (k) {
    case OP_QLinearAdd: case OP_QLinearMul: case OP_QLinearGlobalAveragePool:
    case OP_QLinearAveragePool: case OP_QLinearConcat: case OP_QLinearSigmoid:
    case OP_QLinearLeakyRelu: case OP_QLinearSoftmax: case OP_QGemm:
        return 1;
    default:
        return 0;
    }
}

/* The ai.onnx.ml operators tvmcc implements. */
static int is_ml_op(OpKind k)
{
    return k == OP_Binarizer || k == OP_ArrayFeatureExtractor || k == OP_TreeEnsemble ||
           k == OP_LabelEncoder;
}

/* tvmcc's own operators (passes/winograd.c): in no domain of a file. */
static int is_internal_op(OpKind k)
{
    return k == OP_WinogradInput || k == OP_WinogradOutput;
}

static OpKind node_op(const char *domain, const char *op_type)
{
    OpKind k = op_lookup(op_type);
    if (is_internal_op(k))
        return OP_UNKNOWN;
    if (!strcmp(domain, "ai.onnx.ml"))
        return is_ml_op(k) ? k : OP_UNKNOWN;
    if (!strcmp(domain, "ai.onnx.preview.training"))
        return is_training_op(k) ? k : OP_UNKNOWN;
    if (!strcmp(domain, "com.microsoft"))
        return is_ms_op(k) || k == OP_QuantizeLinear || k == OP_DequantizeLinear ? k
                                                                                  : OP_UNKNOWN;
    if (!is_default_domain(domain))
        return OP_UNKNOWN;
    return is_training_op(k) || is_ms_op(k) || is_ml_op(k) ? OP_UNKNOWN : k;
}

static int64_t domain_opset(const Loader *L, const char *domain)
{
    size_t i;
    if (is_default_domain(domain))
        return L->default_opset;
    for (i = 0; i < L->m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = L->m->opset_import[i];
        if (o->domain && strcmp(o->domain, domain) == 0)
            return o->version;
    }
    return 0;
}

static int oom(Loader *L)
{
    return diag_error(L->d, NULL, NULL, "model exceeds the compiler's memory budget");
}

/* Records a declared tensor type on v. `strict`: a missing or non-tensor type
 * is an error (graph inputs and outputs); otherwise it is ignored. */
static int set_declared(Loader *L, Value *v, const Onnx__TypeProto *tp, int strict,
                        const char *what)
{
    const Onnx__TypeProto__Tensor *tt;
    DType dt = DT_UNDEF;
    int rank = -1;
    size_t i;
    const char *f = arena_printf(L->a, "%s '%s'", what, v->name);
    uint8_t kind = 0;
    if (!f)
        return oom(L);
    /* a graph input or output may be a sequence of tensors, an optional
     * tensor or an optional sequence: the element type is recorded, the
     * kind in io_kind (bound by frontend/seq_io.c) */
    if (strict && tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE &&
        tp->optional_type && tp->optional_type->elem_type) {
        kind |= IO_OPTIONAL;
        tp = tp->optional_type->elem_type;
    }
    if (strict && tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE &&
        tp->sequence_type && tp->sequence_type->elem_type) {
        kind |= IO_SEQUENCE;
        tp = tp->sequence_type->elem_type;
    }
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        if (!strict)
            return 0;
        if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
            return diag_error(L->d, NULL, f, "has no type");
        return diag_error(L->d, NULL, f, kind ? "not a sequence or optional of tensors (maps "
                          "and nested sequences are not supported)"
                          : "not a tensor, a sequence of tensors or an optional (maps are not "
                          "supported)");
    }
    v->io_kind = kind;
    tt = tp->tensor_type;
    if (tt->has_elem_type && tt->elem_type != 0) {
        dt = (DType)tt->elem_type;
        if (!dtype_size(dt)) {
            if (!strict)
                return 0;
            if (dt == DT_STRING)
                return diag_error(L->d, NULL, f, "string tensors are not supported");
            return diag_error(L->d, NULL, f, "element type %d is not supported",
                              (int)tt->elem_type);
        }
    }
    if (tt->shape) {
        if (tt->shape->n_dim > TVMCC_MAX_RANK)
            return diag_error(L->d, NULL, f, "rank %zu exceeds the limit of %d",
                              tt->shape->n_dim, TVMCC_MAX_RANK);
        rank = (int)tt->shape->n_dim;
    }
    v->dtype = dt;
    v->rank = rank;
    for (i = 0; i < TVMCC_MAX_RANK; i++) {
        v->dims[i] = -1;
        v->dim_param[i] = NULL;
    }
    for (i = 0; rank > 0 && i < (size_t)rank; i++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[i];
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 0)
                return diag_error(L->d, NULL, f, "dimension %zu is negative (%lld)", i,
                                   (long long)dim->dim_value);
            v->dims[i] = dim->dim_value;
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   dim->dim_param && dim->dim_param[0]) {
            v->dim_param[i] = arena_strdup(L->a, dim->dim_param);
        }
    }
    {
        int64_t numel = 1;
        for (i = 0; rank > 0 && i < (size_t)rank; i++)
            if (v->dims[i] >= 0 && ck_mul(numel, v->dims[i], &numel))
                return diag_error(L->d, NULL, f, "element count overflows 64 bits");
        /* an input's buffer is planned from its declared shape */
        if (strict && v->input_index >= 0 && numel > ONNX_MAX_TENSOR_ELEMS)
            return diag_error(L->d, NULL, f, "%lld elements exceed the limit of %lld per tensor",
                              (long long)numel, (long long)ONNX_MAX_TENSOR_ELEMS);
    }
    v->declared = 1;
    if ((kind & IO_SEQUENCE) && v->input_index < 0) {
        /* a sequence output: its elements' shapes follow from the graph;
         * the declared element type is not a shape of the value */
        v->dtype = DT_UNDEF;
        v->rank = -1;
        v->declared = 0;
    }
    return 0;
}

static int load_graph(Loader *L, const Onnx__GraphProto *gp, Graph *g, int sub);

/* Adds a decoded constant to the model's total, which is bounded so that
 * many tensors cannot together exhaust memory either. */
static int count_constant(Loader *L, const Tensor *t, const Node *n, const char *field)
{
    int64_t bytes;
    if (ck_mul(t->numel, (int64_t)dtype_size(t->dtype), &bytes) ||
        ck_add(L->const_bytes, bytes, &L->const_bytes) || L->const_bytes > ONNX_MAX_CONSTANT_BYTES)
        return diag_error(L->d, n, field, "the model's constants exceed the limit of %lld bytes",
                          (long long)ONNX_MAX_CONSTANT_BYTES);
    return 0;
}

/* A string tensor attribute (LabelEncoder's keys_tensor...): t->data is
 * an array of t->numel NUL-terminated strings (const char *). Operators
 * that do not take one refuse it (a Constant: infer_const.c). */
static int string_tensor(Loader *L, const Node *n, const char *field,
                         const Onnx__TensorProto *tp, Tensor *t)
{
    const char **s;
    int64_t numel = 1, bytes = 0;
    size_t i;
    memset(t, 0, sizeof *t);
    if (tp->n_dims > TVMCC_MAX_RANK)
        return diag_error(L->d, n, field, "rank %zu exceeds the limit of %d", tp->n_dims,
                          TVMCC_MAX_RANK);
    for (i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || ck_mul(numel, tp->dims[i], &numel))
            return diag_error(L->d, n, field, "bad dimension %zu", i);
        t->dims[i] = tp->dims[i];
    }
    if (tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL ||
        (size_t)numel != tp->n_string_data)
        return diag_error(L->d, n, field, "string tensor of %lld elements holds %zu strings",
                          (long long)numel, tp->n_string_data);
    s = arena_array(L->a, tp->n_string_data + 1, sizeof *s);
    if (!s)
        return oom(L);
    for (i = 0; i < tp->n_string_data; i++) {
        const ProtobufCBinaryData *b = &tp->string_data[i];
        if (b->len && memchr(b->data, 0, b->len))
            return diag_error(L->d, n, field, "string %zu contains a NUL byte", i);
        s[i] = arena_strndup(L->a, b->data ? (const char *)b->data : "", b->len);
        if (!s[i])
            return oom(L);
        bytes += (int64_t)b->len + 1;
    }
    t->dtype = DT_STRING;
    t->rank = (int)tp->n_dims;
    t->numel = numel;
    t->data = s;
    if (ck_add(L->const_bytes, bytes, &L->const_bytes) || L->const_bytes > ONNX_MAX_CONSTANT_BYTES)
        return diag_error(L->d, n, field, "the model's constants exceed the limit of %lld bytes",
                          (long long)ONNX_MAX_CONSTANT_BYTES);
    return 0;
}

/* Number of elements of a list attribute, checked against the limit. */
static int attr_list_ok(Loader *L, const Node *n, const char *name, size_t count)
{
    if (count > ONNX_MAX_ATTR_ELEMS)
        return diag_error(L->d, n, name, "list of %zu elements exceeds the limit of %d", count,
                          ONNX_MAX_ATTR_ELEMS);
    return 0;
}

/* The attribute type, guessed from the filled field for old files that
 * leave `type` unset. */
static AttrType attr_type(const Onnx__AttributeProto *ap)
{
    if (ap->has_type && ap->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
        return (AttrType)ap->type;
    if (ap->n_floats) return ATTR_FLOATS;
    if (ap->n_ints) return ATTR_INTS;
    if (ap->n_strings) return ATTR_STRINGS;
    if (ap->n_tensors) return ATTR_TENSORS;
    if (ap->n_graphs) return ATTR_GRAPHS;
    if (ap->t) return ATTR_TENSOR;
    if (ap->g) return ATTR_GRAPH;
    if (ap->has_s) return ATTR_STRING;
    if (ap->has_i) return ATTR_INT;
    if (ap->has_f) return ATTR_FLOAT;
    return ATTR_UNDEF;
}

static int load_attr(Loader *L, Graph *g, int32_t ni, Attr *at, const Onnx__AttributeProto *ap)
{
    const Node *n = &g->nodes[ni];
    size_t i;
    at->name = arena_strdup(L->a, ap->name ? ap->name : "");
    at->type = attr_type(ap);
    if (!at->name)
        return oom(L);
    if (attr_list_ok(L, n, at->name, ap->n_floats) || attr_list_ok(L, n, at->name, ap->n_ints) ||
        attr_list_ok(L, n, at->name, ap->n_strings) || attr_list_ok(L, n, at->name, ap->n_tensors) ||
        attr_list_ok(L, n, at->name, ap->n_graphs))
        return 1;
    switch (at->type) {
    case ATTR_FLOAT: at->f = ap->f; break;
    case ATTR_INT: at->i = ap->i; break;
    case ATTR_STRING:
        /* strings are NUL-terminated inside tvmcc: an embedded NUL would
         * silently cut the value short */
        if (ap->s.len && memchr(ap->s.data, 0, ap->s.len))
            return diag_error(L->d, n, at->name, "string contains a NUL byte");
        at->s = arena_strndup(L->a, ap->s.data ? (const char *)ap->s.data : "", ap->s.len);
        if (!at->s)
            return oom(L);
        break;
    case ATTR_FLOATS:
        at->n = (int64_t)ap->n_floats;
        at->floats = arena_array(L->a, ap->n_floats + 1, sizeof(double));
        if (!at->floats)
            return oom(L);
        for (i = 0; i < ap->n_floats; i++)
            at->floats[i] = ap->floats[i];
        break;
    case ATTR_INTS:
        at->n = (int64_t)ap->n_ints;
        at->ints = arena_array(L->a, ap->n_ints + 1, sizeof(int64_t));
        if (!at->ints)
            return oom(L);
        if (ap->n_ints)
            memcpy(at->ints, ap->ints, ap->n_ints * sizeof(int64_t));
        break;
    case ATTR_STRINGS:
        at->n = (int64_t)ap->n_strings;
        at->strings = arena_array(L->a, ap->n_strings + 1, sizeof(char *));
        if (!at->strings)
            return oom(L);
        for (i = 0; i < ap->n_strings; i++) {
            if (ap->strings[i].len && memchr(ap->strings[i].data, 0, ap->strings[i].len))
                return diag_error(L->d, n, at->name, "string %zu contains a NUL byte", i);
            at->strings[i] = arena_strndup(L->a, ap->strings[i].data ? (const char *)ap->strings[i].data : "",
                                           ap->strings[i].len);
            if (!at->strings[i])
                return oom(L);
        }
        break;
    case ATTR_TENSOR:
        at->n = 1;
        at->t = arena_alloc(L->a, sizeof(Tensor));
        if (!at->t)
            return oom(L);
        if (ap->t && ap->t->has_data_type && ap->t->data_type == DT_STRING)
            return string_tensor(L, n, at->name, ap->t, at->t);
        if (onnx_tensor_decode(L->a, ap->t, g->dir, at->t, L->d, n, at->name))
            return 1;
        return count_constant(L, at->t, n, at->name);
    case ATTR_TENSORS:
        at->n = (int64_t)ap->n_tensors;
        at->t = arena_array(L->a, ap->n_tensors + 1, sizeof(Tensor));
        if (!at->t)
            return oom(L);
        for (i = 0; i < ap->n_tensors; i++)
            if (onnx_tensor_decode(L->a, ap->tensors[i], g->dir, &at->t[i], L->d, n, at->name) ||
                count_constant(L, &at->t[i], n, at->name))
                return 1;
        break;
    case ATTR_GRAPH: {
        Graph *sg;
        int rc;
        if (!ap->g)
            return diag_error(L->d, n, at->name, "graph attribute has no graph");
        if (L->depth >= ONNX_MAX_SUBGRAPH_DEPTH)
            return diag_error(L->d, n, at->name, "subgraphs nested more than %d deep",
                              ONNX_MAX_SUBGRAPH_DEPTH);
        sg = graph_new(L->a, g->path);
        sg->dir = g->dir; /* NULL for a model from memory: no external data */
        sg->opset = g->opset;
        L->depth++;
        rc = load_graph(L, ap->g, sg, 1);
        L->depth--;
        at->g = sg;
        return rc;
    }
    case ATTR_GRAPHS:
        /* Kept as a count only: no supported operator takes a list of graphs. */
        at->n = (int64_t)ap->n_graphs;
        break;
    default:
        break; /* sparse tensors, type protos: recorded by type, rejected by users */
    }
    return 0;
}

/* Describes what already owns a value name, for duplicate-definition errors. */
static const char *owner_text(Loader *L, const Graph *g, int32_t vi)
{
    const Value *v = &g->values[vi];
    if (v->producer >= 0)
        return arena_printf(L->a, "node '%s' (#%ld)", g->nodes[v->producer].name,
                            (long)g->nodes[v->producer].index);
    if (v->is_initializer)
        return "an initializer";
    if (v->input_index >= 0)
        return "a graph input";
    return "another definition";
}

/* Stable topological sort of g->nodes (Kahn, ready nodes by file position). */
static int sort_nodes(Loader *L, Graph *g)
{
    int32_t nn = g->n_nodes, i, k, j;
    int32_t *indeg, *first, *edges, *fill, *heap, *order, hn = 0, done = 0;
    int64_t ne = 0;
    Node *sorted;
    int in_order = 1;
    for (i = 0; i < nn && in_order; i++)
        for (j = 0; j < g->nodes[i].n_in; j++) {
            int32_t vi = g->nodes[i].in[j];
            if (vi >= 0 && g->values[vi].producer >= i)
                in_order = 0;
        }
    if (in_order)
        return 0;
    for (i = 0; i < nn; i++)
        for (j = 0; j < g->nodes[i].n_in; j++)
            if (g->nodes[i].in[j] >= 0 && g->values[g->nodes[i].in[j]].producer >= 0)
                ne++;
    indeg = arena_array(L->a, (size_t)nn + 1, sizeof(int32_t));
    first = arena_array(L->a, (size_t)nn + 2, sizeof(int32_t));
    fill = arena_array(L->a, (size_t)nn + 1, sizeof(int32_t));
    heap = arena_array(L->a, (size_t)nn + 1, sizeof(int32_t));
    order = arena_array(L->a, (size_t)nn + 1, sizeof(int32_t));
    edges = arena_array(L->a, (size_t)ne + 1, sizeof(int32_t));
    sorted = arena_array(L->a, (size_t)nn + 1, sizeof(Node));
    if (!indeg || !first || !fill || !heap || !order || !edges || !sorted)
        return oom(L);
    /* edges producer -> consumer, grouped by producer */
    for (i = 0; i < nn; i++)
        for (j = 0; j < g->nodes[i].n_in; j++) {
            int32_t vi = g->nodes[i].in[j];
            if (vi >= 0 && g->values[vi].producer >= 0) {
                first[g->values[vi].producer + 1]++;
                indeg[i]++;
            }
        }
    for (i = 0; i < nn; i++)
        first[i + 1] += first[i];
    for (i = 0; i < nn; i++)
        for (j = 0; j < g->nodes[i].n_in; j++) {
            int32_t vi = g->nodes[i].in[j];
            if (vi >= 0 && g->values[vi].producer >= 0) {
                int32_t p = g->values[vi].producer;
                edges[first[p] + fill[p]++] = i;
            }
        }
    /* min-heap of ready node positions */
#define HEAP_PUSH(x)                                                   \
    do {                                                               \
        int32_t c_ = hn++;                                             \
        heap[c_] = (x);                                                \
        while (c_ > 0 && heap[(c_ - 1) / 2] > heap[c_]) {              \
            int32_t t_ = heap[c_];                                     \
            heap[c_] = heap[(c_ - 1) / 2];                             \
            heap[(c_ - 1) / 2] = t_;                                   \
            c_ = (c_ - 1) / 2;                                         \
        }                                                              \
    } while (0)
    for (i = 0; i < nn; i++)
        if (indeg[i] == 0)
            HEAP_PUSH(i);
    while (hn > 0) {
        int32_t u = heap[0], c = 0;
        heap[0] = heap[--hn];
        for (;;) {
            int32_t l = 2 * c + 1, r = l + 1, m = c, t;
            if (l < hn && heap[l] < heap[m])
                m = l;
            if (r < hn && heap[r] < heap[m])
                m = r;
            if (m == c)
                break;
            t = heap[c];
            heap[c] = heap[m];
            heap[m] = t;
            c = m;
        }
        order[done++] = u;
        for (k = first[u]; k < first[u + 1]; k++)
            if (--indeg[edges[k]] == 0)
                HEAP_PUSH(edges[k]);
    }
#undef HEAP_PUSH
    if (done < nn) {
        /* Walk back through unfinished producers: after nn steps we are on a cycle. */
        int32_t x = -1;
        for (i = 0; i < nn && x < 0; i++)
            if (indeg[i] > 0)
                x = i;
        for (k = 0; k < nn; k++) {
            int32_t next = -1;
            for (j = 0; j < g->nodes[x].n_in && next < 0; j++) {
                int32_t vi = g->nodes[x].in[j];
                if (vi >= 0 && g->values[vi].producer >= 0 && indeg[g->values[vi].producer] > 0)
                    next = g->values[vi].producer;
            }
            if (next < 0)
                break;
            x = next;
        }
        return diag_error(L->d, &g->nodes[x], NULL, "the graph has a cycle through this node");
    }
    for (i = 0; i < nn; i++) {
        sorted[i] = g->nodes[order[i]];
        for (j = 0; j < sorted[i].n_out; j++)
            if (sorted[i].out[j] >= 0)
                g->values[sorted[i].out[j]].producer = i;
    }
    g->nodes = sorted;
    g->cap_nodes = nn + 1;
    return 0;
}

static int load_graph(Loader *L, const Onnx__GraphProto *gp, Graph *g, int sub)
{
    Diag *d = L->d;
    int before = d->errors;
    size_t i, j;
    int32_t ni;
    if (gp->n_node > ONNX_MAX_NODES)
        return diag_error(d, NULL, "node", "%zu nodes exceed the limit of %d", gp->n_node,
                          ONNX_MAX_NODES);
    if (gp->n_initializer > ONNX_MAX_VALUES || gp->n_input > ONNX_MAX_VALUES ||
        gp->n_output > ONNX_MAX_VALUES || gp->n_value_info > ONNX_MAX_VALUES)
        return diag_error(d, NULL, NULL, "the graph has more than %d initializers, inputs, "
                          "outputs or value_info entries", ONNX_MAX_VALUES);
    /* initializers */
    for (i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        const char *name = tp->name ? tp->name : "";
        Tensor t;
        int32_t vi;
        Value *v;
        const char *field = arena_printf(L->a, "initializer '%s'", name);
        if (!field)
            return oom(L);
        if (!name[0]) {
            return diag_error(d, NULL, "initializer", "initializer #%zu has no name", i);
        }
        if (graph_find_value(g, name) >= 0) {
            return diag_error(d, NULL, field, "defined twice");
        }
        if (onnx_tensor_decode(L->a, tp, g->dir, &t, d, NULL, field))
            return d->errors - before;
        if (count_constant(L, &t, NULL, field))
            return d->errors - before;
        vi = graph_add_value(g, name);
        v = &g->values[vi];
        v->dtype = t.dtype;
        v->rank = t.rank;
        memcpy(v->dims, t.dims, sizeof v->dims);
        for (j = (size_t)t.rank; j < TVMCC_MAX_RANK; j++)
            v->dims[j] = -1;
        v->data = t.data;
        v->is_initializer = 1;
    }
    if (gp->n_sparse_initializer)
        return diag_error(d, NULL, "sparse_initializer", "sparse initializers are not supported");
    /* graph inputs */
    g->inputs = arena_array(L->a, gp->n_input + 1, sizeof(int32_t));
    if (!g->inputs)
        return oom(L);
    for (i = 0; i < gp->n_input; i++) {
        const char *name = gp->input[i]->name ? gp->input[i]->name : "";
        int32_t vi = graph_find_value(g, name);
        Value *v;
        if (!name[0]) {
            return diag_error(d, NULL, "input", "graph input #%zu has no name", i);
        }
        if (vi >= 0) {
            if (!g->values[vi].is_initializer)
                return diag_error(d, NULL, NULL, "graph input '%s' is listed twice", name);
            continue; /* an initializer: a constant, not an input */
        }
        vi = graph_add_value(g, name);
        v = &g->values[vi];
        v->input_index = g->n_inputs;
        g->inputs[g->n_inputs++] = vi;
        if (set_declared(L, v, gp->input[i]->type, !sub, "graph input"))
            return d->errors - before;
    }
    /* nodes and their outputs */
    for (i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        const char *domain = np->domain ? np->domain : "";
        const char *op_type = np->op_type ? np->op_type : "";
        size_t nin = np->n_input, nout = np->n_output;
        Node *n;
        while (nin > 0 && (!np->input[nin - 1] || !np->input[nin - 1][0]))
            nin--;
        while (nout > 0 && (!np->output[nout - 1] || !np->output[nout - 1][0]))
            nout--;
        if (nin > ONNX_MAX_NODE_IO || nout > ONNX_MAX_NODE_IO) {
            diag_error(d, NULL, NULL, "node '%s' (#%zu) has more than %d inputs or outputs",
                       np->name ? np->name : "", i, ONNX_MAX_NODE_IO);
            return d->errors - before;
        }
        if (np->n_attribute > ONNX_MAX_ATTRS) {
            diag_error(d, NULL, NULL, "node '%s' (#%zu) has %zu attributes, more than the limit "
                       "of %d", np->name ? np->name : "", i, np->n_attribute, ONNX_MAX_ATTRS);
            return d->errors - before;
        }
        ni = graph_add_node(g, node_op(domain, op_type),
                            np->name ? np->name : "", (int)nin, (int)nout);
        n = &g->nodes[ni];
        n->op_type = arena_strdup(L->a, op_type);
        n->domain = is_default_domain(domain) ? "" : arena_strdup(L->a, domain);
        n->index = (int32_t)i;
        n->opset = (int)domain_opset(L, domain);
        n->n_attr = (int)np->n_attribute;
        n->attr = arena_array(L->a, np->n_attribute + 1, sizeof(Attr));
        if (!n->op_type || !n->domain || !n->attr)
            return oom(L);
        /* a bad attribute (or subgraph) stops the load: what follows would
         * only repeat the damage in other words */
        for (j = 0; j < np->n_attribute; j++)
            if (load_attr(L, g, ni, &g->nodes[ni].attr[j], np->attribute[j]))
                return d->errors - before;
        for (j = 0; j < nout; j++) {
            const char *oname = np->output[j];
            int32_t vi;
            char field[32];
            if (!oname || !oname[0])
                continue;
            vi = graph_find_value(g, oname);
            if (vi >= 0) {
                snprintf(field, sizeof field, "output[%zu]", j);
                return diag_error(d, &g->nodes[ni], field, "'%s' is already produced by %s",
                                  oname, owner_text(L, g, vi));
            }
            vi = graph_add_value(g, oname);
            g->values[vi].producer = ni;
            g->nodes[ni].out[j] = vi;
        }
    }
    /* node inputs, now that every producer is known */
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Onnx__NodeProto *np = gp->node[g->nodes[ni].index];
        for (j = 0; j < (size_t)g->nodes[ni].n_in; j++) {
            const char *iname = np->input[j];
            int32_t vi;
            char field[32];
            if (!iname || !iname[0])
                continue;
            vi = graph_find_value(g, iname);
            if (vi < 0 && sub)
                vi = graph_add_value(g, iname); /* outer-scope reference */
            if (vi < 0) {
                snprintf(field, sizeof field, "input[%zu]", j);
                return diag_error(d, &g->nodes[ni], field,
                                  "input '%s' is not produced by any node, initializer or graph "
                                  "input", iname);
            }
            g->nodes[ni].in[j] = vi;
        }
    }
    /* declarations */
    for (i = 0; i < gp->n_value_info; i++) {
        const char *name = gp->value_info[i]->name ? gp->value_info[i]->name : "";
        int32_t vi = graph_find_value(g, name);
        if (vi < 0 || g->values[vi].data || g->values[vi].input_index >= 0)
            continue;
        if (set_declared(L, &g->values[vi], gp->value_info[i]->type, 0, "value_info"))
            return d->errors - before;
    }
    g->outputs = arena_array(L->a, gp->n_output + 1, sizeof(int32_t));
    if (!g->outputs)
        return oom(L);
    for (i = 0; i < gp->n_output; i++) {
        const char *name = gp->output[i]->name ? gp->output[i]->name : "";
        int32_t vi = graph_find_value(g, name);
        if (vi < 0 && sub && name[0])
            vi = graph_add_value(g, name); /* a subgraph may return an outer value */
        if (vi < 0) {
            return diag_error(d, NULL, NULL, "graph output '%s' is not produced by any node, "
                              "initializer or graph input", name);
        }
        g->outputs[g->n_outputs++] = vi;
        if (!g->values[vi].data && g->values[vi].input_index < 0)
            if (set_declared(L, &g->values[vi], gp->output[i]->type, !sub, "graph output"))
                return d->errors - before;
    }
    if (d->errors > before)
        return d->errors - before;
    return sort_nodes(L, g);
}

/* One error listing the nodes whose operator tvmcc does not implement,
 * grouped by operator in order of first appearance. At most
 * MAX_LISTED_OPS operators are named (each with up to three nodes); the rest
 * are counted, which keeps this linear in the graph size: a model of many
 * distinct unknown operators would otherwise cost quadratic time and
 * memory. */
#define MAX_LISTED_OPS 12
static void report_unsupported(Loader *L, const Graph *g)
{
    int32_t i, k, listed = 0, other_nodes = 0;
    char *msg = NULL;
    uint8_t *done = arena_array(L->a, (size_t)g->n_nodes + 1, 1);
    if (!done) {
        oom(L);
        return;
    }
    for (i = 0; i < g->n_nodes; i++) {
        const Node *a = &g->nodes[i];
        int32_t count = 0;
        char *item;
        if (a->op != OP_UNKNOWN || done[i])
            continue;
        if (listed == MAX_LISTED_OPS) {
            other_nodes++;
            continue;
        }
        listed++;
        for (k = i; k < g->n_nodes; k++)
            if (g->nodes[k].op == OP_UNKNOWN && strcmp(g->nodes[k].op_type, a->op_type) == 0 &&
                strcmp(g->nodes[k].domain, a->domain) == 0)
                count++;
        item = arena_printf(L->a, "%s%s%s (node%s", a->domain, a->domain[0] ? "." : "",
                            a->op_type[0] ? a->op_type : "<empty op_type>", count > 1 ? "s" : "");
        count = 0;
        for (k = i; k < g->n_nodes && item; k++) {
            const Node *b = &g->nodes[k];
            if (b->op != OP_UNKNOWN || done[k] || strcmp(b->op_type, a->op_type) != 0 ||
                strcmp(b->domain, a->domain) != 0)
                continue;
            done[k] = 1;
            if (count < 3)
                item = arena_printf(L->a, "%s%s '%s' #%ld", item, count ? "," : "", b->name,
                                    (long)b->index);
            count++;
        }
        if (item && count > 3)
            item = arena_printf(L->a, "%s and %ld more", item, (long)(count - 3));
        msg = item ? arena_printf(L->a, "%s%s%s)", msg ? msg : "", msg ? ", " : "", item) : NULL;
        if (!msg) {
            oom(L);
            return;
        }
    }
    if (msg && other_nodes)
        msg = arena_printf(L->a, "%s, and %ld more node%s with other operators", msg,
                           (long)other_nodes, other_nodes > 1 ? "s" : "");
    if (msg)
        diag_error(L->d, NULL, NULL, "unsupported operators: %s", msg);
}

/* Builds the Graph from an unpacked ModelProto and frees the message. With
 * no_dir, external data is refused. */
static Graph *load_model(Arena *a, Onnx__ModelProto *m, const char *path, int no_dir, Diag *d)
{
    Loader L;
    Graph *g;
    size_t i;
    int before = d->errors;
    memset(&L, 0, sizeof L);
    L.a = a;
    L.d = d;
    L.path = path;
    L.m = m;
    L.default_opset = 1; /* files older than opset_import (IR version < 3) */
    for (i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        const char *dom = o->domain && o->domain[0] ? o->domain : "ai.onnx";
        if (o->version < 1 || (is_default_domain(o->domain) && o->version > ONNX_MAX_OPSET) ||
            o->version > INT32_MAX) {
            if (is_default_domain(o->domain))
                diag_error(d, NULL, "opset_import", "opset %lld of domain '%s' is not supported "
                           "(tvmcc knows opsets 1 to %d)", (long long)o->version, dom,
                           ONNX_MAX_OPSET);
            else
                diag_error(d, NULL, "opset_import", "opset %lld of domain '%s' is not valid",
                           (long long)o->version, dom);
            onnx_free_message(m);
            return NULL;
        }
        if (is_default_domain(o->domain))
            L.default_opset = o->version;
    }
    g = graph_new(a, path);
    if (no_dir)
        g->dir = NULL;
    g->opset = L.default_opset;
    if (!m->graph)
        diag_error(d, NULL, NULL, "the model has no graph");
    else if (load_graph(&L, m->graph, g, 0) == 0)
        report_unsupported(&L, g);
    onnx_free_message(m);
    return d->errors > before ? NULL : g;
}

Graph *onnx_load(Arena *a, const char *path, Diag *d)
{
    Onnx__ModelProto *m = onnx_unpack_file(path, 1, d);
    return m ? load_model(a, m, path, 0, d) : NULL;
}

Graph *onnx_load_buffer(Arena *a, const void *data, size_t n, const char *name, Diag *d)
{
    Onnx__ModelProto *m = onnx_unpack_buffer(data, n, 1, d);
    return m ? load_model(a, m, name ? name : "<buffer>", 1, d) : NULL;
}
