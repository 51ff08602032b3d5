/*
 * The graph core: the op table built from ops.h, value and node creation,
 * the name index, attribute lookups, shape helpers, the structural verifier
 * and the stable text dump.
 *
 * Arrays grow by doubling inside the arena (the old copy is abandoned), so a
 * Value * or Node * is only valid until the next graph_add_value() or
 * graph_add_node(); keep indexes across those calls.
 *
 * Value names are indexed by an open-addressing hash table kept beside the
 * Graph (graph_new allocates both in one block, so every Graph must come from
 * graph_new). The index is brought up to date lazily: values appended without
 * graph_add_value are picked up on the next lookup, and a hit is always
 * confirmed by comparing the stored name, so a renamed value is never
 * returned under its old name.
 */
#include "graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const OpInfo op_info[OP_COUNT] = {
    {"Unknown", 0, -1, 0, -1, CAT_OPAQUE, 0},
#define OP(name, mi, ma, mo, mao, cat) {#name, mi, ma, mo, mao, CAT_##cat, 1},
#define OP_NOT_LOWERED(name, mi, ma, mo, mao, cat) {#name, mi, ma, mo, mao, CAT_##cat, 0},
#include "ops.h"
#undef OP_NOT_LOWERED
#undef OP
};

OpKind op_lookup(const char *onnx_name)
{
    int i;
    if (!onnx_name)
        return OP_UNKNOWN;
    for (i = 1; i < OP_COUNT; i++)
        if (strcmp(op_info[i].name, onnx_name) == 0)
            return (OpKind)i;
    return OP_UNKNOWN;
}

const char *op_category_name(OpCategory c)
{
    switch (c) {
    case CAT_INJECTIVE: return "injective";
    case CAT_REDUCTION: return "reduction";
    case CAT_COMPLEX: return "complex";
    case CAT_OPAQUE: return "opaque";
    }
    return "?";
}

/* ---- graph and name index ---- */

typedef struct GraphBox {
    Graph g;            /* must stay first: a Graph * is a GraphBox * */
    int32_t *slots;     /* value index + 1, 0 = empty */
    uint32_t cap;       /* power of two, or 0 before the first build */
    int32_t indexed;    /* values [0, indexed) are in the table */
} GraphBox;

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 16777619u;
    }
    return h;
}

/* Inserts value vi unless a value of the same name is already indexed. */
static void index_insert(GraphBox *b, int32_t vi)
{
    const char *name = b->g.values[vi].name;
    uint32_t m = b->cap - 1, h;
    if (!name || !name[0])
        return;
    h = name_hash(name) & m;
    while (b->slots[h]) {
        const char *other = b->g.values[b->slots[h] - 1].name;
        if (other && strcmp(other, name) == 0)
            return;
        h = (h + 1) & m;
    }
    b->slots[h] = vi + 1;
}

/* Makes the index cover every value, rebuilding when it has to grow or when
 * values were removed behind its back. */
static void index_sync(GraphBox *b)
{
    Graph *g = &b->g;
    int32_t i;
    if (b->indexed > g->n_values || (uint64_t)g->n_values * 2 >= b->cap) {
        uint32_t cap = 64;
        while ((uint64_t)cap <= (uint64_t)g->n_values * 2)
            cap *= 2;
        b->slots = arena_array(g->arena, cap, sizeof(int32_t));
        if (!b->slots)
            die("arena budget exceeded while indexing %ld values", (long)g->n_values);
        b->cap = cap;
        b->indexed = 0;
    }
    for (i = b->indexed; i < g->n_values; i++)
        index_insert(b, i);
    b->indexed = g->n_values;
}

Graph *graph_new(Arena *a, const char *path)
{
    GraphBox *b = arena_alloc(a, sizeof(GraphBox));
    const char *slash;
    if (!b)
        die("arena budget exceeded creating a graph");
    b->g.arena = a;
    b->g.path = path ? arena_strdup(a, path) : "";
    slash = path ? strrchr(path, '/') : NULL;
    b->g.dir = slash ? arena_strndup(a, path, (size_t)(slash - path)) : ".";
    if (slash == path)
        b->g.dir = "/";
    b->g.opset = 0;
    return &b->g;
}

/* Grows an arena array of `*cap` elements of `size` bytes to hold `need`. */
static void *grow(Arena *a, void *old, int32_t n, int32_t *cap, int32_t need, size_t size)
{
    int32_t c = *cap ? *cap : 16;
    void *p;
    if (need <= *cap)
        return old;
    while (c < need) {
        if (c > INT32_MAX / 2)
            die("graph too large");
        c *= 2;
    }
    p = arena_array(a, (size_t)c, size);
    if (!p)
        die("arena budget exceeded growing a graph array to %ld entries", (long)c);
    if (n)
        memcpy(p, old, (size_t)n * size);
    *cap = c;
    return p;
}

int32_t graph_add_value(Graph *g, const char *name)
{
    GraphBox *b = (GraphBox *)g;
    Value *v;
    int i;
    g->values = grow(g->arena, g->values, g->n_values, &g->cap_values, g->n_values + 1,
                     sizeof(Value));
    v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = arena_strdup(g->arena, name ? name : "");
    if (!v->name)
        die("arena budget exceeded");
    v->dtype = DT_UNDEF;
    v->rank = -1;
    for (i = 0; i < TVMCC_MAX_RANK; i++)
        v->dims[i] = -1;
    v->producer = -1;
    v->input_index = -1;
    g->n_values++;
    index_sync(b);
    return g->n_values - 1;
}

int32_t graph_find_value(const Graph *g, const char *name)
{
    GraphBox *b = (GraphBox *)(void *)(uintptr_t)g; /* the index is a cache */
    uint32_t m, h;
    if (!name || !name[0] || g->n_values == 0)
        return -1;
    index_sync(b);
    m = b->cap - 1;
    h = name_hash(name) & m;
    while (b->slots[h]) {
        int32_t vi = b->slots[h] - 1;
        if (g->values[vi].name && strcmp(g->values[vi].name, name) == 0)
            return vi;
        h = (h + 1) & m;
    }
    return -1;
}

int32_t graph_fresh_value(Graph *g, const char *base, const char *tag, int32_t *serial)
{
    const char *name;
    do {
        name = arena_printf(g->arena, "%s~%s%ld", base && base[0] ? base : "v", tag,
                            (long)++*serial);
        if (!name)
            die("compile arena exhausted");
    } while (graph_find_value(g, name) >= 0);
    return graph_add_value(g, name);
}

int32_t graph_add_node(Graph *g, OpKind op, const char *name, int n_in, int n_out)
{
    Node *n;
    int i;
    if (n_in < 0 || n_out < 0)
        die("negative arity");
    g->nodes = grow(g->arena, g->nodes, g->n_nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(Node));
    n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->group = -1;
    n->op_type = op_info[op].name;
    n->domain = "";
    n->name = arena_strdup(g->arena, name ? name : "");
    n->index = g->n_nodes;
    n->opset = (int)g->opset;
    n->n_in = n_in;
    n->n_out = n_out;
    n->in = arena_array(g->arena, (size_t)n_in + 1, sizeof(int32_t));
    n->out = arena_array(g->arena, (size_t)n_out + 1, sizeof(int32_t));
    if (!n->name || !n->in || !n->out)
        die("arena budget exceeded adding a node");
    for (i = 0; i < n_in; i++)
        n->in[i] = -1;
    for (i = 0; i < n_out; i++)
        n->out[i] = -1;
    return g->n_nodes++;
}

/* ---- attributes ---- */

const Attr *node_attr(const Node *n, const char *name)
{
    int i;
    for (i = 0; i < n->n_attr; i++)
        if (strcmp(n->attr[i].name, name) == 0)
            return &n->attr[i];
    return NULL;
}

static const char *attr_type_name(AttrType t)
{
    static const char *const names[] = {
        "undefined", "float", "int", "string", "tensor", "graph", "floats", "ints",
        "strings", "tensors", "graphs", "sparse tensor", "sparse tensors", "type proto",
        "type protos"};
    if ((unsigned)t < sizeof names / sizeof names[0])
        return names[t];
    return "unknown";
}

/* Returns the attribute if present with type `want`; reports a wrong type. */
static const Attr *typed_attr(const Node *n, const char *name, AttrType want, Diag *d)
{
    const Attr *a = node_attr(n, name);
    if (!a || a->type == want)
        return a;
    if (d)
        diag_error(d, n, name, "attribute must be of type %s, not %s", attr_type_name(want),
                   attr_type_name(a->type));
    return NULL;
}

int64_t attr_int(const Node *n, const char *name, int64_t def, Diag *d)
{
    const Attr *a = typed_attr(n, name, ATTR_INT, d);
    return a ? a->i : def;
}

double attr_float(const Node *n, const char *name, double def, Diag *d)
{
    const Attr *a = node_attr(n, name);
    if (a && a->type == ATTR_INT) /* some exporters write 0 for 0.0 */
        return (double)a->i;
    a = typed_attr(n, name, ATTR_FLOAT, d);
    return a ? a->f : def;
}

const char *attr_string(const Node *n, const char *name, const char *def, Diag *d)
{
    const Attr *a = typed_attr(n, name, ATTR_STRING, d);
    return a ? a->s : def;
}

const int64_t *attr_ints(const Node *n, const char *name, int64_t *count, Diag *d)
{
    const Attr *a = typed_attr(n, name, ATTR_INTS, d);
    *count = a ? a->n : -1;
    return a ? a->ints : NULL;
}

const double *attr_floats(const Node *n, const char *name, int64_t *count, Diag *d)
{
    const Attr *a = typed_attr(n, name, ATTR_FLOATS, d);
    *count = a ? a->n : -1;
    return a ? a->floats : NULL;
}

/* ---- shapes and constants ---- */

int64_t value_numel(const Value *v)
{
    int64_t n = 1;
    int i;
    if (v->rank < 0 || v->rank > TVMCC_MAX_RANK)
        return -1;
    for (i = 0; i < v->rank; i++)
        if (v->dims[i] < 0 || ck_mul(n, v->dims[i], &n))
            return -1;
    return n;
}

int value_is_static(const Value *v)
{
    return v->dtype != DT_UNDEF && dtype_size(v->dtype) != 0 && value_numel(v) >= 0;
}

int value_set(Graph *g, int32_t vi, DType dt, int rank, const int64_t *dims, Diag *d,
              const Node *n)
{
    Value *v;
    int64_t numel = 1, bytes;
    int i;
    if (vi < 0 || vi >= g->n_values)
        die("value_set: bad value index %ld", (long)vi);
    v = &g->values[vi];
    if (rank < 0 || rank > TVMCC_MAX_RANK)
        return diag_error(d, n, v->name, "rank %d is outside the supported range 0..%d",
                          rank, TVMCC_MAX_RANK);
    for (i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return diag_error(d, n, v->name, "dimension %d is negative (%lld)", i,
                              (long long)dims[i]);
        if (ck_mul(numel, dims[i], &numel))
            return diag_error(d, n, v->name, "element count overflows 64 bits");
    }
    if (dtype_size(dt) && ck_mul(numel, (int64_t)dtype_size(dt), &bytes))
        return diag_error(d, n, v->name, "byte size overflows 64 bits");
    /* every tensor is indexed with 32-bit arithmetic in the emitted C */
    if (numel > ((int64_t)1 << 31))
        return diag_error(d, n, v->name, "%lld elements exceed the 2^31 element limit",
                          (long long)numel);
    v->dtype = dt;
    v->rank = rank;
    for (i = 0; i < TVMCC_MAX_RANK; i++) {
        v->dims[i] = i < rank ? dims[i] : -1;
        v->dim_param[i] = NULL;
    }
    return 0;
}

/* Element i of a constant buffer as int64 (integers and bool only). */
static int64_t load_int(DType dt, const void *p, int64_t i)
{
    switch (dt) {
    case DT_INT8: return ((const int8_t *)p)[i];
    case DT_UINT8: case DT_BOOL: return ((const uint8_t *)p)[i];
    case DT_INT16: return ((const int16_t *)p)[i];
    case DT_UINT16: return ((const uint16_t *)p)[i];
    case DT_INT32: return ((const int32_t *)p)[i];
    case DT_UINT32: return ((const uint32_t *)p)[i];
    case DT_INT64: return ((const int64_t *)p)[i];
    case DT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    case DT_INT4: case DT_UINT4: case DT_INT2: case DT_UINT2: return dtype_packed_get(dt, p, i);
    default: die("load_int on %s", dtype_name(dt) ? dtype_name(dt) : "?");
    }
}

int64_t value_const_ints(const Graph *g, int32_t vi, const int64_t **out)
{
    const Value *v;
    int64_t n, i, *r;
    if (vi < 0 || vi >= g->n_values)
        return -1;
    v = &g->values[vi];
    n = value_numel(v);
    if (!v->data || n < 0 || !(dtype_is_signed_int(v->dtype) || dtype_is_unsigned_int(v->dtype)))
        return -1;
    if (v->dtype == DT_INT64) {
        *out = v->data;
        return n;
    }
    r = arena_array(g->arena, (size_t)n + 1, sizeof(int64_t));
    if (!r)
        return -1;
    for (i = 0; i < n; i++)
        r[i] = load_int(v->dtype, v->data, i);
    *out = r;
    return n;
}

int value_const_elem(const Graph *g, int32_t vi, int64_t i, double *out)
{
    const Value *v;
    if (vi < 0 || vi >= g->n_values)
        return 1;
    v = &g->values[vi];
    if (!v->data || i < 0 || i >= value_numel(v))
        return 1;
    switch (v->dtype) {
    case DT_FLOAT32: *out = ((const float *)v->data)[i]; return 0;
    case DT_FLOAT64: *out = ((const double *)v->data)[i]; return 0;
    case DT_FLOAT16: *out = dtype_f16_to_f32(((const uint16_t *)v->data)[i]); return 0;
    case DT_BFLOAT16: *out = dtype_bf16_to_f32(((const uint16_t *)v->data)[i]); return 0;
    case DT_UINT64: *out = (double)((const uint64_t *)v->data)[i]; return 0;
    case DT_FLOAT4E2M1: *out = dtype_f8_to_f32(v->dtype, (unsigned)dtype_packed_get(v->dtype, v->data, i)); return 0;
    default:
        if (dtype_is_float(v->dtype)) { /* the 8-bit floats */
            *out = dtype_f8_to_f32(v->dtype, ((const uint8_t *)v->data)[i]);
            return 0;
        }
        if (dtype_is_signed_int(v->dtype) || dtype_is_unsigned_int(v->dtype)) {
            *out = (double)load_int(v->dtype, v->data, i);
            return 0;
        }
        return 1;
    }
}

int value_const_double(const Graph *g, int32_t vi, double *out)
{
    const Value *v;
    if (vi < 0 || vi >= g->n_values)
        return 1;
    v = &g->values[vi];
    if (!v->data || value_numel(v) != 1)
        return 1;
    switch (v->dtype) {
    case DT_FLOAT32: *out = *(const float *)v->data; return 0;
    case DT_FLOAT64: *out = *(const double *)v->data; return 0;
    case DT_FLOAT16: *out = dtype_f16_to_f32(*(const uint16_t *)v->data); return 0;
    case DT_BFLOAT16: *out = dtype_bf16_to_f32(*(const uint16_t *)v->data); return 0;
    case DT_FLOAT4E2M1: *out = dtype_f8_to_f32(v->dtype, (unsigned)dtype_packed_get(v->dtype, v->data, 0)); return 0;
    default:
        if (dtype_is_float(v->dtype)) { /* the 8-bit floats */
            *out = dtype_f8_to_f32(v->dtype, *(const uint8_t *)v->data);
            return 0;
        }
        if (dtype_is_signed_int(v->dtype)) {
            *out = (double)load_int(v->dtype, v->data, 0);
            return 0;
        }
        if (dtype_is_unsigned_int(v->dtype)) {
            *out = v->dtype == DT_UINT64 ? (double)*(const uint64_t *)v->data
                                         : (double)load_int(v->dtype, v->data, 0);
            return 0;
        }
        return 1;
    }
}

/* ---- verifier ---- */

int graph_verify(const Graph *g, Diag *d)
{
    int before = d->errors;
    int32_t i, ni;
    int j;
    /* position of each value's producer as seen from the node list */
    int32_t *seen = arena_array(g->arena, (size_t)g->n_values + 1, sizeof(int32_t));
    if (!seen)
        die("arena budget exceeded in graph_verify");
    for (i = 0; i < g->n_values; i++) {
        const Value *v = &g->values[i];
        seen[i] = -1;
        if (v->producer < -1 || v->producer >= g->n_nodes)
            diag_error(d, NULL, v->name, "internal: producer index %ld out of range",
                       (long)v->producer);
        if (v->rank > TVMCC_MAX_RANK)
            diag_error(d, NULL, v->name, "internal: rank %d out of range", v->rank);
    }
    for (i = 0; i < g->n_inputs; i++) {
        int32_t vi = g->inputs[i];
        if (vi < 0 || vi >= g->n_values)
            diag_error(d, NULL, NULL, "internal: graph input %ld has bad index %ld", (long)i,
                       (long)vi);
        else if (g->values[vi].input_index != i)
            diag_error(d, NULL, g->values[vi].name,
                       "internal: graph input %ld but input_index %ld", (long)i,
                       (long)g->values[vi].input_index);
    }
    for (i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] < 0 || g->outputs[i] >= g->n_values)
            diag_error(d, NULL, NULL, "internal: graph output %ld has bad index %ld", (long)i,
                       (long)g->outputs[i]);
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if ((unsigned)n->op >= OP_COUNT) {
            diag_error(d, n, NULL, "internal: op %d out of range", (int)n->op);
            continue;
        }
        if (n->dead)
            continue;
        for (j = 0; j < n->n_in; j++) {
            int32_t vi = n->in[j];
            if (vi == -1)
                continue;
            if (vi < -1 || vi >= g->n_values) {
                diag_error(d, n, "input", "internal: value index %ld out of range", (long)vi);
                continue;
            }
            /* a folded constant may keep a dead producer */
            if (g->values[vi].producer >= 0 && seen[vi] < 0 && !g->values[vi].data)
                diag_error(d, n, "input",
                           "internal: '%s' is used before the node producing it",
                           g->values[vi].name);
        }
        for (j = 0; j < n->n_out; j++) {
            int32_t vi = n->out[j];
            if (vi == -1)
                continue;
            if (vi < -1 || vi >= g->n_values) {
                diag_error(d, n, "output", "internal: value index %ld out of range", (long)vi);
                continue;
            }
            if (seen[vi] >= 0)
                diag_error(d, n, "output", "internal: '%s' is also produced by node #%ld",
                           g->values[vi].name, (long)seen[vi]);
            else if (g->values[vi].producer != ni)
                diag_error(d, n, "output", "internal: '%s' records producer %ld, not %ld",
                           g->values[vi].name, (long)g->values[vi].producer, (long)ni);
            seen[vi] = ni;
        }
    }
    return d->errors - before;
}

/* ---- dump ---- */

static void dump_shape(const Graph *g, const Value *v, FILE *f)
{
    int i;
    (void)g;
    fputs(v->dtype == DT_UNDEF ? "?" : dtype_name(v->dtype) ? dtype_name(v->dtype) : "bad", f);
    if (v->rank < 0) {
        fputs("[*]", f);
        return;
    }
    fputc('[', f);
    for (i = 0; i < v->rank && i < TVMCC_MAX_RANK; i++) {
        if (i)
            fputc(',', f);
        if (v->dims[i] >= 0)
            fprintf(f, "%lld", (long long)v->dims[i]);
        else if (v->dim_param[i])
            fputs(v->dim_param[i], f);
        else
            fputc('?', f);
    }
    fputc(']', f);
}

/* Prints element i of a storage buffer so that the text is exact. */
static void dump_elem(DType dt, const void *p, int64_t i, FILE *f)
{
    switch (dt) {
    case DT_FLOAT32: fprintf(f, "%.9g", (double)((const float *)p)[i]); break;
    case DT_FLOAT64: fprintf(f, "%.17g", ((const double *)p)[i]); break;
    case DT_FLOAT16: fprintf(f, "%.9g", (double)dtype_f16_to_f32(((const uint16_t *)p)[i])); break;
    case DT_BFLOAT16: fprintf(f, "%.9g", (double)dtype_bf16_to_f32(((const uint16_t *)p)[i])); break;
    case DT_UINT64: fprintf(f, "%llu", (unsigned long long)((const uint64_t *)p)[i]); break;
    case DT_FLOAT4E2M1: fprintf(f, "%.9g", (double)dtype_f8_to_f32(dt, (unsigned)dtype_packed_get(dt, p, i))); break;
    default:
        if (dtype_is_float(dt)) {
            fprintf(f, "%.9g", (double)dtype_f8_to_f32(dt, ((const uint8_t *)p)[i]));
            break;
        }
        if (dtype_is_signed_int(dt) || dtype_is_unsigned_int(dt))
            fprintf(f, "%lld", (long long)load_int(dt, p, i));
        else
            fputc('?', f);
    }
}

static void dump_data(DType dt, const void *data, int64_t numel, FILE *f)
{
    int64_t i;
    if (numel < 0 || numel > 8 || !dtype_size(dt))
        return;
    fputs(" = {", f);
    for (i = 0; i < numel; i++) {
        if (i)
            fputs(", ", f);
        dump_elem(dt, data, i, f);
    }
    fputc('}', f);
}

static void dump_attr(const Attr *a, FILE *f)
{
    int64_t i;
    fprintf(f, "%s=", a->name);
    switch (a->type) {
    case ATTR_FLOAT: fprintf(f, "%.9g", a->f); break;
    case ATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
    case ATTR_STRING: fprintf(f, "\"%s\"", a->s ? a->s : ""); break;
    case ATTR_FLOATS:
    case ATTR_INTS:
    case ATTR_STRINGS:
        fputc('[', f);
        for (i = 0; i < a->n; i++) {
            if (i)
                fputc(',', f);
            if (a->type == ATTR_FLOATS)
                fprintf(f, "%.9g", a->floats[i]);
            else if (a->type == ATTR_INTS)
                fprintf(f, "%lld", (long long)a->ints[i]);
            else
                fprintf(f, "\"%s\"", a->strings[i] ? a->strings[i] : "");
        }
        fputc(']', f);
        break;
    case ATTR_TENSOR:
    case ATTR_TENSORS:
        for (i = 0; i < (a->type == ATTR_TENSOR ? 1 : a->n); i++) {
            const Tensor *t = &a->t[i];
            int k;
            if (i)
                fputc(' ', f);
            fprintf(f, "tensor %s[", dtype_name(t->dtype) ? dtype_name(t->dtype) : "?");
            for (k = 0; k < t->rank; k++)
                fprintf(f, k ? ",%lld" : "%lld", (long long)t->dims[k]);
            fputc(']', f);
            dump_data(t->dtype, t->data, t->numel, f);
        }
        break;
    case ATTR_GRAPH:
        fprintf(f, "graph(%ld nodes)", a->g ? (long)a->g->n_nodes : 0L);
        break;
    default:
        fprintf(f, "<%s>", attr_type_name(a->type));
    }
}

void graph_dump(const Graph *g, FILE *f)
{
    int32_t i;
    int j;
    fprintf(f, "graph opset=%lld values=%ld nodes=%ld inputs=%ld outputs=%ld\n",
            (long long)g->opset, (long)g->n_values, (long)g->n_nodes, (long)g->n_inputs,
            (long)g->n_outputs);
    for (i = 0; i < g->n_values; i++) {
        const Value *v = &g->values[i];
        fprintf(f, "%%%ld %s : ", (long)i, v->name);
        dump_shape(g, v, f);
        if (v->input_index >= 0)
            fprintf(f, " input#%ld", (long)v->input_index);
        if (v->is_initializer)
            fputs(" initializer", f);
        else if (v->data)
            fputs(" const", f);
        if (v->data)
            dump_data(v->dtype, v->data, value_numel(v), f);
        for (j = 0; j < g->n_outputs; j++)
            if (g->outputs[j] == i)
                fprintf(f, " output#%d", j);
        fputc('\n', f);
    }
    for (i = 0; i < g->n_nodes; i++) {
        const Node *n = &g->nodes[i];
        if (n->dead)
            continue;
        fprintf(f, "n%ld ", (long)i);
        if (n->domain && n->domain[0])
            fprintf(f, "%s.", n->domain);
        fprintf(f, "%s '%s' (", n->op_type ? n->op_type : op_info[n->op].name, n->name);
        for (j = 0; j < n->n_in; j++)
            fprintf(f, n->in[j] < 0 ? "%s_" : "%s%%%ld", j ? ", " : "", (long)n->in[j]);
        fputs(") -> (", f);
        for (j = 0; j < n->n_out; j++)
            fprintf(f, n->out[j] < 0 ? "%s_" : "%s%%%ld", j ? ", " : "", (long)n->out[j]);
        fputc(')', f);
        if (n->group >= 0)
            fprintf(f, " fused->n%ld", (long)n->group);
        if (n->quant)
            fprintf(f, " quant{zy=%ld [%ld,%ld] shift=%d}", (long)n->quant->zy,
                    (long)n->quant->lo, (long)n->quant->hi, n->quant->shift);
        if (n->n_attr) {
            fputs(" {", f);
            for (j = 0; j < n->n_attr; j++) {
                if (j)
                    fputs(", ", f);
                dump_attr(&n->attr[j], f);
            }
            fputc('}', f);
        }
        fputc('\n', f);
    }
}

/* Puts nodes back in an order where every producer precedes its readers,
 * keeping the existing order where it already does (iterative DFS). */
void graph_toposort(Graph *g)
{
    int32_t n = g->n_nodes, *order, *stack, *state, top, k = 0, ni, i;
    Node *nodes;
    order = malloc(((size_t)n + 1) * sizeof *order);
    stack = malloc(((size_t)n + 1) * 2 * sizeof *stack);
    state = calloc((size_t)n + 1, sizeof *state);
    if (!order || !stack || !state)
        die("out of memory");
    for (ni = 0; ni < n; ni++) {
        if (state[ni])
            continue;
        top = 0;
        stack[top++] = ni;
        while (top) {
            int32_t cur = stack[top - 1], pushed = 0;
            const Node *c = &g->nodes[cur];
            if (state[cur] == 2) {
                top--;
                continue;
            }
            state[cur] = 1;
            for (i = 0; i < c->n_in; i++) {
                int32_t p = c->in[i] >= 0 ? g->values[c->in[i]].producer : -1;
                if (p >= 0 && !state[p]) {
                    stack[top++] = p;
                    pushed = 1;
                    break;
                }
            }
            if (!pushed) {
                state[cur] = 2;
                order[k++] = cur;
                top--;
            }
        }
    }
    nodes = arena_array(g->arena, (size_t)n + 1, sizeof *nodes);
    if (!nodes)
        die("compile arena exhausted");
    for (i = 0; i < n; i++)
        nodes[i] = g->nodes[order[i]];
    g->nodes = nodes;
    g->cap_nodes = n + 1;
    for (i = 0; i < n; i++) {
        int j;
        for (j = 0; j < nodes[i].n_out; j++)
            if (nodes[i].out[j] >= 0 && !nodes[i].dead)
                g->values[nodes[i].out[j]].producer = i;
    }
    free(order);
    free(stack);
    free(state);
}

void node_set_params(Graph *g, Node *n, ParamKind kind, const void *p, size_t size)
{
    void *copy = arena_alloc(g->arena, size);
    if (!copy)
        die("compile arena exhausted");
    memcpy(copy, p, size);
    n->param_kind = (uint8_t)kind;
    n->params = copy;
}

/* The parameters of n if they are of `kind`; an internal error otherwise. */
static const void *params_of(const Node *n, ParamKind kind, const char *what)
{
    if (n->param_kind != kind || !n->params)
        die("node '%s' (%s, #%d) has no parsed %s parameters: inference did not run on it",
            n->name ? n->name : "", n->op_type, (int)n->index, what);
    return n->params;
}

/* One getter per ParamKind (ir/graph.h). */
const ConvWindow *node_window(const Node *n) { return params_of(n, PARAMS_WINDOW, "window"); }
const ReduceParams *node_reduce(const Node *n) { return params_of(n, PARAMS_REDUCE, "reduce"); }
const ResizeParams *node_resize(const Node *n) { return params_of(n, PARAMS_RESIZE, "resize"); }
const EinsumParams *node_einsum(const Node *n) { return params_of(n, PARAMS_EINSUM, "einsum"); }
const AxisParams *node_axis(const Node *n) { return params_of(n, PARAMS_AXIS, "axis"); }
const ScalarParams *node_scalar(const Node *n) { return params_of(n, PARAMS_SCALAR, "scalar"); }
const SliceParams *node_slice(const Node *n) { return params_of(n, PARAMS_SLICE, "slice"); }
const PadParams *node_pad(const Node *n) { return params_of(n, PARAMS_PAD, "pad"); }
const PermParams *node_perm(const Node *n) { return params_of(n, PARAMS_PERM, "transpose"); }
const RnnParams *node_rnn(const Node *n) { return params_of(n, PARAMS_RNN, "recurrent"); }
const VisionParams *node_vision(const Node *n) { return params_of(n, PARAMS_VISION, "vision"); }
const LossParams *node_loss(const Node *n) { return params_of(n, PARAMS_LOSS, "loss"); }
const StringParams *node_string(const Node *n) { return params_of(n, PARAMS_STRING, "string"); }
const XfmrParams *node_xfmr(const Node *n) { return params_of(n, PARAMS_XFMR, "transformer"); }
const MlParams *node_ml(const Node *n) { return params_of(n, PARAMS_ML, "ml"); }

void node_set_perm(Graph *g, Node *n, int rank, const int64_t *perm)
{
    PermParams p;
    int i;
    memset(&p, 0, sizeof p);
    p.rank = rank;
    for (i = 0; i < rank; i++)
        p.perm[i] = (int)perm[i];
    node_set_params(g, n, PARAMS_PERM, &p, sizeof p);
}

void node_add_attr(Graph *g, int32_t ni, Attr a)
{
    Node *n = &g->nodes[ni];
    Attr *na = arena_array(g->arena, (size_t)n->n_attr + 1, sizeof *na);
    if (!na)
        die("compile arena exhausted");
    if (n->n_attr)
        memcpy(na, n->attr, (size_t)n->n_attr * sizeof *na);
    na[n->n_attr] = a;
    n->attr = na;
    n->n_attr++;
}

const char *dims_text(Arena *a, int rank, const int64_t *dims)
{
    char *s = arena_strdup(a, "[");
    int k;
    for (k = 0; k < rank; k++)
        s = arena_printf(a, "%s%s%lld", s, k ? "," : "", (long long)dims[k]);
    return arena_printf(a, "%s]", s);
}
