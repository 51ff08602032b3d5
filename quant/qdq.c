/*
 * The QDQ rewrite of `tvmcc quantize` (ptq.h): which nodes are quantized,
 * which tensors need a range, and the QuantizeLinear / DequantizeLinear
 * nodes and quantized constants that make the model a QDQ model, laid out
 * as onnxruntime's quantize_static(quant_format=QDQ) lays them out:
 *
 *   - weights (constant input B of Conv, Gemm, MatMul): int8 symmetric, zero
 *     point 0, range [-127, 127], one scale per output channel (Conv axis 0,
 *     Gemm axis 0 with transB=1 else 1, MatMul the last axis) or one scale;
 *     the int8 initializer feeds a DequantizeLinear;
 *   - biases (Conv input 2, Gemm C): int32 at scale x_scale * w_scale, zero
 *     point 0 (with bias correction, the corrected bias);
 *   - activations: a QuantizeLinear -> DequantizeLinear pair on each float
 *     graph input, each float input and output of a quantized node and each
 *     graph output; every reader of the tensor then reads the pair's output;
 *   - MaxPool, Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Slice, Split,
 *     Pad, Resize (nearest), Gather: the output takes the input's scale and
 *     zero point; Softmax's output scale 1/256 (zero point 0 for uint8, -128
 *     for int8);
 *   - a float constant operand of Add, Mul, Concat or Gather is stored
 *     quantized in the activation type, with its own min/max range.
 *
 * int16 activations are symmetric (zero point 0); their Q/DQ nodes are in
 * the com.microsoft domain below opset 21, as onnxruntime writes them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_edit.h"
#include "hessian.h"
#include "ptq.h"
#include "ranges.h"

enum { ROLE_NONE, ROLE_ACT, ROLE_WEIGHT, ROLE_BIAS, ROLE_CONST };

typedef struct Plan {
    Graph *g;
    const PtqConfig *cfg;
    Diag *d;
    uint8_t *quantized;         /* per node */
    int32_t n_nodes;
    /* activation parameters per value (after planning) */
    uint8_t *have;              /* per value */
    float *scale;
    int32_t *zp;
    DType *type;                /* per value: its activation type (--int16
                                 * nodes' tensors DT_INT16, else cfg->act) */
} Plan;

/* the grid of a type plan_init has checked */
static QGrid grid_of(DType t)
{
    QGrid g;
    range_grid(t, &g);
    return g;
}

const TensorRange *range_table_find(const RangeTable *r, const char *name)
{
    int i;
    if (!r)
        return NULL;
    for (i = 0; i < r->n; i++)
        if (!strcmp(r->t[i].name, name))
            return &r->t[i];
    return NULL;
}

static int is_float(const Graph *g, int32_t vi)
{
    return vi >= 0 && g->values[vi].dtype == DT_FLOAT32;
}

static int is_float_const(const Graph *g, int32_t vi)
{
    return is_float(g, vi) && g->values[vi].data != NULL;
}

static int passes_through(OpKind op)
{
    switch (op) {
    case OP_MaxPool: case OP_Reshape: case OP_Flatten: case OP_Transpose: case OP_Squeeze:
    case OP_Unsqueeze: case OP_Slice: case OP_Split: case OP_Pad: case OP_Resize: case OP_Gather:
        return 1;
    default:
        return 0;
    }
}

static int op_quantizable(OpKind op)
{
    if (passes_through(op))
        return 1;
    switch (op) {
    case OP_Conv: case OP_Gemm: case OP_MatMul: case OP_Add: case OP_Mul: case OP_AveragePool:
    case OP_GlobalAveragePool: case OP_Concat: case OP_Sigmoid: case OP_Tanh: case OP_HardSwish:
    case OP_HardSigmoid: case OP_LeakyRelu: case OP_Softmax: case OP_Relu: case OP_Clip:
        return 1;
    default:
        return 0;
    }
}

static int bias_ok(const Graph *g, const Node *n)
{
    if (n->n_in < 3 || n->in[2] < 0)
        return 0;
    if (!is_float_const(g, n->in[2]) || !is_float_const(g, n->in[1]))
        return 0;
    if (n->op == OP_Gemm) {
        const Attr *al = node_attr(n, "alpha"), *be = node_attr(n, "beta");
        if ((al && al->f != 1.0) || (be && be->f != 1.0) || g->values[n->in[2]].rank != 1)
            return 0;
    }
    return 1;
}

/* the role of input k of n */
static int role(const Graph *g, const Node *n, int k)
{
    int32_t vi = n->in[k];
    if (vi < 0)
        return ROLE_NONE;
    switch (n->op) {
    case OP_Conv:
    case OP_Gemm:
    case OP_MatMul:
        if (k == 0)
            return ROLE_ACT;
        if (k == 1)
            return is_float_const(g, vi) ? ROLE_WEIGHT : ROLE_ACT;
        if (k == 2 && n->op != OP_MatMul)
            return bias_ok(g, n) ? ROLE_BIAS : ROLE_NONE;
        return ROLE_NONE;
    case OP_Add:
    case OP_Mul:
    case OP_Concat:
        return is_float_const(g, vi) ? ROLE_CONST : ROLE_ACT;
    case OP_Gather:
        return k == 0 ? (is_float_const(g, vi) ? ROLE_CONST : ROLE_ACT) : ROLE_NONE;
    default:
        return k == 0 ? ROLE_ACT : ROLE_NONE;
    }
}

int qdq_node_named(const Graph *g, const Node *n, const char *name)
{
    return (n->name && n->name[0] && !strcmp(n->name, name)) ||
           (n->n_out > 0 && n->out[0] >= 0 && !strcmp(g->values[n->out[0]].name, name));
}

/* n is named in list */
static int listed(const Graph *g, const Node *n, const char *const *list, int count)
{
    int i;
    for (i = 0; i < count; i++)
        if (qdq_node_named(g, n, list[i]))
            return 1;
    return 0;
}

static int kept_float(const Plan *p, const Node *n)
{
    return listed(p->g, n, p->cfg->keep_float, p->cfg->n_keep_float);
}

static int quantizable(const Plan *p, const Node *n)
{
    const Graph *g = p->g;
    int k, float_out = 0;
    if (n->dead || !op_quantizable(n->op) || (n->domain && n->domain[0] &&
                                               strcmp(n->domain, "ai.onnx")))
        return 0;
    if (kept_float(p, n))
        return 0;
    if (n->op == OP_Resize) {
        const Attr *m = node_attr(n, "mode");
        if (m && m->s && strcmp(m->s, "nearest"))
            return 0;
    }
    for (k = 0; k < n->n_in; k++)
        if (role(g, n, k) == ROLE_ACT && !is_float(g, n->in[k]))
            return 0;
    if (n->n_in < 1 || role(g, n, 0) == ROLE_NONE)
        return 0;
    for (k = 0; k < n->n_out; k++)
        if (is_float(g, n->out[k]))
            float_out = 1;
    return float_out;
}

/* A Relu or Clip right after a quantized node whose output has no other
 * reader: the producer writes the activation's output instead, and the
 * QuantizeLinear after it takes the activation's range, which does the
 * clamping. onnxruntime's quantizer does this after Conv, Gemm, MatMul and
 * Add; it holds after any node with a range of its own (not after one that
 * passes its input's scale through, nor after Softmax's fixed scale), e.g.
 * a LeakyRelu followed by a clamp (TensorFlow's exports). */
static int clamp_fusable(OpKind op)
{
    return op_quantizable(op) && !passes_through(op) && op != OP_Softmax;
}

/* v may get an int16 QuantizeLinear: its reader is an --int16 node, or
 * one whose output shares v's parameters (a pass-through) is read by one */
static int int16_reader(const Plan *p, int32_t v, int depth)
{
    const Graph *g = p->g;
    int32_t ni;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead || n->n_in < 1)
            continue;
        if (n->in[0] == v && passes_through(n->op) && n->n_out > 0 && n->out[0] >= 0 &&
            depth < 64 && int16_reader(p, n->out[0], depth + 1))
            return 1;
        if (listed(g, n, p->cfg->int16_nodes, p->cfg->n_int16)) {
            int k;
            for (k = 0; k < n->n_in; k++)
                if (n->in[k] == v)
                    return 1;
        }
    }
    return 0;
}

/* The QuantizeLinear after the fused node clamps as r does: its grid is
 * asymmetric (8-bit: the range, widened to hold 0, ends at qmin or qmax),
 * and a Clip's bounds hold 0 (a range [1, 6] would be widened to [0, 6],
 * which does not clamp below 1). A symmetric int16 grid clamps nothing
 * below -rmax. */
static int clamp_by_range(const Plan *p, const Node *r, const Node *pn)
{
    const Graph *g = p->g;
    int k;
    if (p->cfg->act == DT_INT16 ||
        listed(g, r, p->cfg->int16_nodes, p->cfg->n_int16) ||
        listed(g, pn, p->cfg->int16_nodes, p->cfg->n_int16) ||
        (p->cfg->n_int16 > 0 && int16_reader(p, r->out[0], 0)))
        return 0;
    if (r->op != OP_Clip)
        return 1;
    for (k = 1; k < r->n_in && k < 3; k++) {
        const float *b;
        if (r->in[k] < 0)
            continue;
        if (!g->values[r->in[k]].data || !(b = qe_f32(g, r->in[k])) ||
            (k == 1 ? !(b[0] <= 0) : !(b[0] >= 0)))
            return 0;
    }
    return 1;
}
static void fuse_relu(Plan *p)
{
    Graph *g = p->g;
    int32_t ni;
    for (ni = 0; ni < g->n_nodes; ni++) {
        Node *r = &g->nodes[ni];
        int32_t x, pi;
        Node *pn;
        if (r->dead || (r->op != OP_Relu && r->op != OP_Clip) || r->n_in < 1 ||
            (x = r->in[0]) < 0 || (pi = g->values[x].producer) < 0)
            continue;
        pn = &g->nodes[pi];
        if (pn->dead || pn->n_out != 1 || kept_float(p, r) ||
            !clamp_fusable(pn->op) ||
            qe_is_output(g, x) || qe_readers(g, x, 0) != 1 || !quantizable(p, pn) ||
            !clamp_by_range(p, r, pn))
            continue;
        pn->out[0] = r->out[0];
        g->values[r->out[0]].producer = pi;
        g->values[x].producer = -1; /* no longer computed */
        r->dead = 1;
    }
}

static void plan_nodes(Plan *p)
{
    Graph *g = p->g;
    int32_t ni;
    if (p->cfg->fuse_relu)
        fuse_relu(p);
    p->n_nodes = g->n_nodes;
    p->quantized = arena_alloc(g->arena, (size_t)g->n_nodes + 1);
    for (ni = 0; ni < g->n_nodes; ni++)
        p->quantized[ni] = (uint8_t)quantizable(p, &g->nodes[ni]);
}

/* Calls fn for each float tensor that gets a QuantizeLinear, in order:
 * graph inputs, then each quantized node's activation inputs and outputs,
 * then graph outputs; each once. */
typedef void (*TensorFn)(Plan *p, int32_t vi, void *ctx);

static void for_each_qdq_tensor(Plan *p, TensorFn fn, void *ctx)
{
    Graph *g = p->g;
    uint8_t *seen = arena_alloc(g->arena, (size_t)g->n_values + 1);
    int32_t i, ni;
    int k;
    memset(seen, 0, (size_t)g->n_values + 1);
#define WANT(v)                                                                       \
    do {                                                                              \
        int32_t v_ = (v);                                                             \
        if (v_ >= 0 && !seen[v_] && is_float(g, v_) && !g->values[v_].data) {         \
            seen[v_] = 1;                                                             \
            fn(p, v_, ctx);                                                           \
        }                                                                             \
    } while (0)
    for (i = 0; i < g->n_inputs; i++)
        WANT(g->inputs[i]);
    for (ni = 0; ni < p->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (!p->quantized[ni])
            continue;
        for (k = 0; k < n->n_in; k++)
            if (role(g, n, k) == ROLE_ACT)
                WANT(n->in[k]);
        for (k = 0; k < n->n_out; k++)
            WANT(n->out[k]);
    }
    for (i = 0; i < g->n_outputs; i++)
        WANT(g->outputs[i]);
#undef WANT
}

/* ---------------------------------------------------------------- needs */

typedef struct NeedsCtx {
    QdqNeeds *out;
    int cap;
} NeedsCtx;

static void add_need(Plan *p, NeedsCtx *c, int32_t vi, int axis)
{
    QdqNeeds *o = c->out;
    int i;
    const char *name = p->g->values[vi].name;
    for (i = 0; i < o->n; i++)
        if (!strcmp(o->names[i], name)) {
            if (axis >= 0)
                o->chan_axis[i] = axis;
            return;
        }
    if (o->n == c->cap) {
        int nc = c->cap ? 2 * c->cap : 64;
        const char **nn = arena_array(p->g->arena, (size_t)nc, sizeof *nn);
        int *na = arena_array(p->g->arena, (size_t)nc, sizeof *na);
        if (o->n) {
            memcpy(nn, o->names, (size_t)o->n * sizeof *nn);
            memcpy(na, o->chan_axis, (size_t)o->n * sizeof *na);
        }
        o->names = nn;
        o->chan_axis = na;
        c->cap = nc;
    }
    o->names[o->n] = name;
    o->chan_axis[o->n++] = axis;
}

/* the channel axis of a sum's activation input that bias correction reads */
static int sum_channel_axis(const Graph *g, const Node *n)
{
    const Value *x = &g->values[n->in[0]];
    if (n->op == OP_Conv)
        return x->rank >= 3 ? 1 : -1;
    if (n->op == OP_Gemm)
        return attr_int(n, "transA", 0, NULL) ? 0 : 1;
    return -1;
}

int qdq_needs(Graph *g, const PtqConfig *cfg, QdqNeeds *out, Diag *d)
{
    Plan p;
    NeedsCtx c;
    int32_t ni, i;
    int k;
    memset(&p, 0, sizeof p);
    p.g = g;
    p.cfg = cfg;
    p.d = d;
    memset(out, 0, sizeof *out);
    c.out = out;
    c.cap = 0;
    /* Every float tensor the model computes, before the Relu fusion: which
     * of them get a QuantizeLinear depends on the nodes kept in float
     * (--keep-float, and --max-loss, which changes that list after
     * calibration), so all are measured. */
    for (i = 0; i < g->n_inputs; i++)
        if (is_float(g, g->inputs[i]))
            add_need(&p, &c, g->inputs[i], -1);
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        for (k = 0; k < n->n_out; k++)
            if (is_float(g, n->out[k]) && !g->values[n->out[k]].data)
                add_need(&p, &c, n->out[k], -1);
    }
    plan_nodes(&p);
    if (cfg->bias_correction)
        for (ni = 0; ni < p.n_nodes; ni++) {
            const Node *n = &g->nodes[ni];
            int axis;
            if (!p.quantized[ni] || (n->op != OP_Conv && n->op != OP_Gemm) ||
                role(g, n, 1) != ROLE_WEIGHT)
                continue;
            if ((axis = sum_channel_axis(g, n)) >= 0)
                add_need(&p, &c, n->in[0], axis);
        }
    return 0;
}

/* ---------------------------------------------------------------- apply */

static int tensor_params(Plan *p, int32_t vi, const RangeTable *r)
{
    Graph *g = p->g;
    int32_t pi;
    const TensorRange *tr;
    if (p->have[vi])
        return 0;
    pi = g->values[vi].producer;
    if (pi >= 0 && p->quantized[pi] && passes_through(g->nodes[pi].op)) {
        int32_t src = g->nodes[pi].in[0];
        if (g->values[src].data) {
            const float *c = qe_f32(g, src);
            int64_t k, n = value_numel(&g->values[src]);
            double lo = 0, hi = 0;
            for (k = 0; c && k < n; k++) {
                lo = c[k] < lo ? c[k] : lo;
                hi = c[k] > hi ? c[k] : hi;
            }
            range_qparams(lo, hi, grid_of(p->type[vi]), &p->scale[vi], &p->zp[vi]);
        } else {
            if (tensor_params(p, src, r))
                return 1;
            p->scale[vi] = p->scale[src];
            p->zp[vi] = p->zp[src];
            p->type[vi] = p->type[src];
        }
    } else if (pi >= 0 && p->quantized[pi] && g->nodes[pi].op == OP_Softmax &&
               p->type[vi] != DT_INT16) {
        p->scale[vi] = 1.0f / 256;
        p->zp[vi] = p->type[vi] == DT_UINT8 ? 0 : -128;
    } else {
        tr = range_table_find(r, g->values[vi].name);
        if (!tr) {
            diag_error(p->d, pi >= 0 ? &g->nodes[pi] : NULL, g->values[vi].name,
                       "no calibration range for this tensor");
            return 1;
        }
        if (p->type[vi] == DT_INT16 && p->cfg->act != DT_INT16) {
            if (!tr->have16) {
                diag_error(p->d, pi >= 0 ? &g->nodes[pi] : NULL, g->values[vi].name,
                           "no int16 calibration range for this tensor");
                return 1;
            }
            range_qparams(tr->rmin16, tr->rmax16, grid_of(DT_INT16), &p->scale[vi],
                          &p->zp[vi]);
        } else {
            range_qparams(tr->rmin, tr->rmax, grid_of(p->type[vi]), &p->scale[vi],
                          &p->zp[vi]);
        }
    }
    p->have[vi] = 1;
    return 0;
}

typedef struct ApplyCtx {
    const RangeTable *r;
    int failed;
    int32_t *list;
    int n;
} ApplyCtx;

static void params_fn(Plan *p, int32_t vi, void *ctx)
{
    ApplyCtx *c = ctx;
    if (!c->failed && tensor_params(p, vi, c->r))
        c->failed = 1;
    c->list[c->n++] = vi;
}

static int64_t clamp64(double v, int64_t lo, int64_t hi)
{
    if (!(v >= (double)lo))
        return lo;
    if (v > (double)hi)
        return hi;
    return (int64_t)v;
}

/* scale and zero point constants: scalars for n == 1, else 1-D of n (zp
 * NULL: zeros) */
static void qparam_consts(Plan *p, const char *base, int n, const float *scale, DType zdt,
                          const int32_t *zp, int32_t *s_vi, int32_t *z_vi)
{
    Graph *g = p->g;
    int64_t dim = n;
    int rank = n > 1;
    int i;
    void *zbuf = arena_array(g->arena, (size_t)(n ? n : 1), 4);
    for (i = 0; i < n; i++) {
        int32_t z = zp ? zp[i] : 0;
        if (zdt == DT_INT8)
            ((int8_t *)zbuf)[i] = (int8_t)z;
        else if (zdt == DT_UINT8)
            ((uint8_t *)zbuf)[i] = (uint8_t)z;
        else if (zdt == DT_INT16)
            ((int16_t *)zbuf)[i] = (int16_t)z;
        else
            ((int32_t *)zbuf)[i] = z;
    }
    *s_vi = qe_const_f32(g, arena_printf(g->arena, "%s_scale", base), rank, &dim, scale);
    *z_vi = qe_const(g, arena_printf(g->arena, "%s_zero_point", base), zdt, rank, &dim, zbuf);
}

static const char *qdq_domain(const Plan *p, DType t)
{
    return t == DT_INT16 && p->g->opset < 21 ? "com.microsoft" : "";
}

static int32_t add_qnode(Plan *p, OpKind op, const char *name, int32_t x, int32_t s, int32_t z,
                         int32_t out, int axis, const char *domain)
{
    Graph *g = p->g;
    int32_t ni = graph_add_node(g, op, name, 3, 1);
    Node *n = &g->nodes[ni];
    n->in[0] = x;
    n->in[1] = s;
    n->in[2] = z;
    n->out[0] = out;
    n->opset = (int)(g->opset > 13 ? g->opset : 13);
    n->inferred = 1;
    if (domain[0]) {
        n->domain = domain;
        n->opset = 1;
    }
    g->values[out].producer = ni;
    if (axis >= 0)
        qe_set_attr_int(g, ni, "axis", axis);
    return ni;
}

static int32_t new_value(Graph *g, const char *name, DType dt, const Value *shape_of)
{
    int32_t serial = 0, vi;
    vi = graph_find_value(g, name) < 0 ? graph_add_value(g, name)
                                        : graph_fresh_value(g, name, "", &serial);
    g->values[vi].dtype = dt;
    if (shape_of) {
        g->values[vi].rank = shape_of->rank;
        memcpy(g->values[vi].dims, shape_of->dims, sizeof shape_of->dims);
    }
    return vi;
}

/* A quantized constant BASE_quantized (type qdt, shape dims[rank]) with
 * its scale and zero point constants (n of them, see qparam_consts) and
 * the DequantizeLinear writing BASE_DequantizeLinear_Output; returns that
 * value. */
static int32_t dq_const(Plan *p, const char *base, DType qdt, int rank, const int64_t *dims,
                        const void *q, int n, const float *scale, DType zdt, const int32_t *zp,
                        int axis, const char *domain)
{
    Graph *g = p->g;
    int32_t q_vi, s_vi, z_vi, dq;
    Value shape;
    memset(&shape, 0, sizeof shape);
    shape.rank = rank;
    memcpy(shape.dims, dims, (size_t)rank * sizeof *dims); /* dims may move with g->values */
    q_vi = qe_const(g, arena_printf(g->arena, "%s_quantized", base), qdt, rank, shape.dims, q);
    qparam_consts(p, base, n, scale, zdt, zp, &s_vi, &z_vi);
    dq = new_value(g, arena_printf(g->arena, "%s_DequantizeLinear_Output", base), DT_FLOAT32,
                   &shape);
    add_qnode(p, OP_DequantizeLinear, arena_printf(g->arena, "%s_DequantizeLinear", base), q_vi,
              s_vi, z_vi, dq, axis, domain);
    return dq;
}

/* the weight's channel axis for a sum node (-1: per tensor) */
static int weight_axis(const Plan *p, const Node *n)
{
    const Graph *g = p->g;
    if (!p->cfg->per_channel)
        return -1;
    if (n->op == OP_Conv)
        return 0;
    if (n->op == OP_Gemm)
        return attr_int(n, "transB", 0, NULL) ? 0 : 1;
    if (n->op == OP_ConvTranspose) /* [C, M / group, ...]: M along 1 only for one group */
        return attr_int(n, "group", 1, NULL) == 1 ? 1 : -1;
    return g->values[n->in[1]].rank - 1;
}

typedef struct Weight {
    int32_t dq;                 /* the DequantizeLinear's output */
    int axis;                   /* -1: one scale */
    int64_t channels;
    float *scale;               /* per channel (1 when per tensor) */
    const float *w;             /* float weights */
    DType qdt;                  /* DT_INT8, or DT_INT16 (a node left in float) */
    int8_t *q;                  /* DT_INT8 */
    int16_t *q16;               /* DT_INT16 */
    int64_t bias_channels;      /* entries of the minimum quantize_weight takes */
} Weight;

/* n's bias becomes int32: a Conv's or Gemm's that role() makes a bias, or
 * a ConvTranspose's 1-D constant one */
static int int_bias(const Graph *g, const Node *n)
{
    if (n->op == OP_ConvTranspose)
        return n->n_in > 2 && n->in[2] >= 0 && is_float_const(g, n->in[2]) &&
               g->values[n->in[2]].rank == 1;
    return role(g, n, 2) == ROLE_BIAS;
}

/* The least weight scale of each output channel at which the bias, at
 * scale x_scale * w_scale, fits in int32 with room to spare (a factor 4,
 * for bias correction): a channel of near-zero weights (a dead filter, or
 * BatchNormalization folded with a tiny gamma) and a sizeable bias would
 * otherwise saturate its int32 bias (onnxruntime's quantizer raises the
 * weight scale the same way). NULL when no channel needs it. */
static double *bias_min_scale(Plan *p, const Node *n, Weight *w)
{
    const Graph *g = p->g;
    const Value *b;
    const float *bias;
    double *min_scale, sx = p->scale[n->in[0]], lim = 2147483647.0 / 4;
    int64_t i, nb;
    int any = 0;
    if (!int_bias(g, n) || !(bias = qe_f32(g, n->in[2])) || !(sx > 0))
        return NULL;
    b = &g->values[n->in[2]];
    nb = value_numel(b);
    min_scale = arena_array(g->arena, (size_t)nb + 1, sizeof *min_scale);
    for (i = 0; i < nb; i++) {
        min_scale[i] = fabs((double)bias[i]) / (sx * lim);
        any |= min_scale[i] > 0;
    }
    w->bias_channels = nb;
    return any ? min_scale : NULL;
}

/* symmetric weights of type qdt (int8, or int16 for a node left in float):
 * per channel along axis (or one scale), each scale at least min_scale[c]
 * (NULL: no minimum) */
static void quantize_weight(Plan *p, int32_t wv, int axis, const double *min_scale, DType qdt,
                            Weight *out)
{
    Graph *g = p->g;
    const Value *v = &g->values[wv];
    const float *w = v->data;
    int64_t n = value_numel(v), outer = 1, inner = 1, ch = 1, i, c, o, k;
    const HessianEntry *he;
    int j;
    int64_t qmax = qdt == DT_INT16 ? 32767 : 127;
    if (axis >= 0) {
        ch = v->dims[axis];
        for (j = 0; j < axis; j++)
            outer *= v->dims[j];
        for (j = axis + 1; j < v->rank; j++)
            inner *= v->dims[j];
    } else {
        inner = n;
    }
    out->scale = arena_array(g->arena, (size_t)ch, sizeof *out->scale);
    out->q = NULL;
    out->q16 = NULL;
    if (qdt == DT_INT16)
        out->q16 = arena_array(g->arena, (size_t)(n ? n : 1), sizeof *out->q16);
    else
        out->q = arena_alloc(g->arena, (size_t)(n ? n : 1));
    for (c = 0; c < ch; c++) {
        float m = 0;
        for (o = 0; o < outer; o++)
            for (k = 0; k < inner; k++) {
                float a = fabsf(w[(o * ch + c) * inner + k]);
                m = a > m ? a : m;
            }
        out->scale[c] = 2.0f * m / (float)(2 * qmax);
        if (out->scale[c] == 0)
            out->scale[c] = 1.0f;
    }
    for (c = 0; min_scale && c < ch; c++) {
        int one = axis >= 0 && out->bias_channels == ch;
        int64_t k0 = one ? c : 0, k1 = one ? c + 1 : out->bias_channels;
        for (k = k0; k < k1; k++)
            if ((double)out->scale[c] < min_scale[k])
                out->scale[c] = (float)min_scale[k];
    }
    for (i = 0; i < n; i++) {
        int64_t cc = axis >= 0 ? (i / inner) % ch : 0;
        int64_t qi = clamp64(nearbyint((double)(w[i] / out->scale[cc])), -qmax, qmax);
        if (out->q16)
            out->q16[i] = (int16_t)qi;
        else
            out->q[i] = (int8_t)qi;
    }
    if (out->q && (he = hessian_find(p->cfg->hessians, v->name)) && he->ok && axis <= 0 &&
        v->rank == 4 && he->k * v->dims[0] == n) {
        int64_t ocpg = v->dims[0] / he->groups;
        for (o = 0; o < v->dims[0]; o++)
            hessian_round_row(he, o / ocpg, w + o * he->k, out->scale[axis < 0 ? 0 : o],
                              out->q + o * he->k);
    }
    out->axis = axis;
    out->channels = ch;
    out->w = w;
    out->qdt = qdt;
    out->dq = dq_const(p, v->name, qdt, v->rank, v->dims,
                       out->q16 ? (const void *)out->q16 : (const void *)out->q,
                       axis >= 0 ? (int)ch : 1, out->scale, qdt, NULL, axis, qdq_domain(p, qdt));
}

/* The bias, corrected for the weights' rounding when asked (b - (Wq - W) E[x]
 * per output channel, E[x] the input's channel means), as int32 at x_scale *
 * w_scale. A sum without a bias gets one when the correction is not zero. */
static int quantize_bias(Plan *p, int32_t ni, const Weight *w, int have_bias,
                         const RangeTable *r)
{
    Graph *g = p->g;
    Node *n = &g->nodes[ni];
    int32_t x = n->in[0], bv = n->n_in > 2 ? n->in[2] : -1, dq;
    const Value *wv = &g->values[n->in[1]];
    int64_t oc, per, o, k, kk;
    double *bias;
    float *scale;
    int32_t *q;
    const TensorRange *tr = range_table_find(r, g->values[x].name);
    int corrected = 0;
    const char *base;
    if (n->op == OP_Conv) {
        oc = wv->dims[0];
        per = value_numel(wv) / (oc ? oc : 1);
    } else if (n->op == OP_ConvTranspose) {
        if (w->axis >= 0 || !have_bias)
            return 0; /* per channel along 1: onnxruntime leaves the float bias alone */
        oc = value_numel(&g->values[bv]);
        per = 0;
    } else if (n->op == OP_Gemm) {
        int tb = (int)attr_int(n, "transB", 0, NULL);
        oc = wv->dims[tb ? 0 : 1];
        per = wv->dims[tb ? 1 : 0];
    } else {
        return 0; /* MatMul has no bias input */
    }
    if (!have_bias && bv >= 0)
        return 0; /* a bias that cannot be quantized stays float */
    if (n->op == OP_Gemm && !have_bias) {
        const Attr *al = node_attr(n, "alpha");
        if (al && al->f != 1.0)
            return 0;
    }
    bias = arena_array(g->arena, (size_t)oc, sizeof *bias);
    for (o = 0; o < oc; o++)
        bias[o] = have_bias ? (double)((const float *)g->values[bv].data)[o] : 0.0;
    if (p->cfg->bias_correction && tr && tr->chan_mean && w->q && p->quantized[ni]) {
        int64_t group = n->op == OP_Conv ? attr_int(n, "group", 1, NULL) : 1;
        int64_t icpg = n->op == OP_Conv ? wv->dims[1] : per;
        int64_t khw = n->op == OP_Conv ? per / (icpg ? icpg : 1) : 1;
        int64_t ocpg = oc / (group ? group : 1);
        int tb = n->op == OP_Gemm && attr_int(n, "transB", 0, NULL);
        for (o = 0; o < oc; o++) {
            double delta = 0;
            for (k = 0; k < icpg; k++) {
                int64_t cin = n->op == OP_Conv ? (o / (ocpg ? ocpg : 1)) * icpg + k : k;
                double mean = cin < tr->channels ? tr->chan_mean[cin] : 0;
                for (kk = 0; kk < khw; kk++) {
                    int64_t idx = n->op == OP_Conv ? (o * icpg + k) * khw + kk
                                  : tb ? o * per + k : k * oc + o;
                    int64_t c = w->axis < 0 ? 0 : o;
                    double deq = (double)w->q[idx] * (double)w->scale[c];
                    delta += (deq - (double)w->w[idx]) * mean;
                }
            }
            if (delta != 0)
                corrected = 1;
            bias[o] -= delta;
        }
    }
    if (!have_bias && !corrected)
        return 0;
    scale = arena_array(g->arena, (size_t)oc, sizeof *scale);
    q = arena_array(g->arena, (size_t)oc, sizeof *q);
    for (o = 0; o < oc; o++) {
        float s = p->scale[x] * w->scale[w->axis < 0 ? 0 : o];
        scale[o] = s == 0 ? 1.0f : s;
        q[o] = (int32_t)clamp64(nearbyint(bias[o] / (double)scale[o]), INT32_MIN, INT32_MAX);
    }
    base = have_bias ? g->values[bv].name
                     : arena_printf(g->arena, "%s_bias", n->name && n->name[0] ? n->name
                                                        : g->values[n->out[0]].name);
    dq = dq_const(p, base, DT_INT32, 1, &oc, q, w->axis < 0 ? 1 : (int)oc, scale, DT_INT32, NULL,
                  w->axis < 0 ? -1 : 0, "");
    qe_set_input(g, ni, 2, dq);
    return 0;
}

/* A Conv, ConvTranspose or Gemm left in float (not quantizable, or kept
 * float) whose input gets a Q/DQ pair: onnxruntime, at every optimization
 * level (its WeightBiasQuantization), quantizes such a node's float
 * weights itself, per tensor to int8 on their min/max, and its 1-D bias
 * to int32, so the model would compute a coarser node in onnxruntime than
 * in tvmcc's build (PP-OCRv4 det's ConvTranspose, every activation int16:
 * 32.60 dB there against 33.97). Its weights are written here, int16
 * symmetric per output channel, which onnxruntime leaves alone, and its
 * bias as int32 where onnxruntime would quantize it (at x_scale * w_scale,
 * each w_scale raised so that the bias fits); both then compute the node
 * in float on the same values, near the float weights. */
static int float_node_weights(Plan *p, int32_t ni, const RangeTable *r)
{
    Graph *g = p->g;
    Node *n = &g->nodes[ni];
    Weight w;
    int bias;
    if (n->dead || p->quantized[ni] || n->n_in < 2 || n->in[0] < 0 || !p->have[n->in[0]] ||
        (n->op != OP_Conv && n->op != OP_ConvTranspose && n->op != OP_Gemm) ||
        (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx")) ||
        !is_float_const(g, n->in[1]))
        return 0;
    bias = int_bias(g, n); /* before the weights become a DequantizeLinear's output */
    memset(&w, 0, sizeof w);
    quantize_weight(p, n->in[1], weight_axis(p, n), bias_min_scale(p, n, &w), DT_INT16, &w);
    g->nodes[ni].in[1] = w.dq;
    return bias ? quantize_bias(p, ni, &w, 1, r) : 0;
}

/* a constant operand in the activation type, with its own range */
static int32_t quantize_const(Plan *p, int32_t cv)
{
    Graph *g = p->g;
    const Value *v = &g->values[cv];
    const float *c = v->data;
    int64_t n = value_numel(v), i;
    double lo = 0, hi = 0;
    float scale;
    int32_t zp;
    DType dt = p->cfg->act;
    QGrid grid;
    void *q = arena_array(g->arena, (size_t)(n ? n : 1), dtype_size(dt));
    for (i = 0; i < n; i++) {
        lo = c[i] < lo ? c[i] : lo;
        hi = c[i] > hi ? c[i] : hi;
    }
    grid = grid_of(dt);
    range_qparams(lo, hi, grid, &scale, &zp);
    for (i = 0; i < n; i++) {
        int64_t z = clamp64(nearbyint((double)(c[i] / scale)) + zp, grid.qmin, grid.qmax);
        if (dt == DT_INT8)
            ((int8_t *)q)[i] = (int8_t)z;
        else if (dt == DT_UINT8)
            ((uint8_t *)q)[i] = (uint8_t)z;
        else
            ((int16_t *)q)[i] = (int16_t)z;
    }
    return dq_const(p, v->name, dt, v->rank, v->dims, q, 1, &scale, dt, &zp, -1, qdq_domain(p, dt));
}

/* the Q/DQ pair on activation t; every reader of t then reads its output */
static void add_pair(Plan *p, int32_t t)
{
    Graph *g = p->g;
    const char *name = g->values[t].name;
    int32_t s_vi, z_vi, src = t, q_out, dq_out, qn, dqn;
    int out = qe_is_output(g, t);
    DType type = p->type[t];
    const char *dom = qdq_domain(p, type);
    qparam_consts(p, name, 1, &p->scale[t], type, &p->zp[t], &s_vi, &z_vi);
    if (out) {
        /* the producer writes NAME_QuantizeLinear_Input; the pair writes NAME */
        int32_t pi = g->values[t].producer, k;
        src = new_value(g, arena_printf(g->arena, "%s_QuantizeLinear_Input", name), DT_FLOAT32,
                        &g->values[t]);
        if (pi >= 0) {
            Node *pn = &g->nodes[pi];
            for (k = 0; k < pn->n_out; k++)
                if (pn->out[k] == t)
                    pn->out[k] = src;
            g->values[src].producer = pi;
        }
    }
    q_out = new_value(g, arena_printf(g->arena, "%s_QuantizeLinear_Output", name), type,
                      &g->values[t]);
    dq_out = out ? t : new_value(g, arena_printf(g->arena, "%s_DequantizeLinear_Output", name),
                                 DT_FLOAT32, &g->values[t]);
    qn = add_qnode(p, OP_QuantizeLinear, arena_printf(g->arena, "%s_QuantizeLinear", name), src,
                   s_vi, z_vi, q_out, -1, dom);
    dqn = add_qnode(p, OP_DequantizeLinear, arena_printf(g->arena, "%s_DequantizeLinear", name),
                    q_out, s_vi, z_vi, dq_out, -1, dom);
    if (!out) {
        int32_t ni;
        int k;
        for (ni = 0; ni < g->n_nodes; ni++) {
            Node *n = &g->nodes[ni];
            if (n->dead || ni == qn || ni == dqn)
                continue;
            for (k = 0; k < n->n_in; k++)
                if (n->in[k] == t)
                    n->in[k] = dq_out;
        }
    }
}

static int plan_init(Plan *p, Graph *g, const PtqConfig *cfg, Diag *d)
{
    QGrid grid;
    memset(p, 0, sizeof *p);
    p->g = g;
    p->cfg = cfg;
    p->d = d;
    if (range_grid(cfg->act, &grid)) {
        diag_error(d, NULL, "--activations", "activations must be int8, uint8 or int16");
        return 1;
    }
    plan_nodes(p);
    return 0;
}

/* The tensor whose Q/DQ parameters v shares: v itself, or the source of
 * the quantized pass-through nodes that produce it. */
static int32_t param_root(const Plan *p, int32_t v)
{
    const Graph *g = p->g;
    int32_t pi;
    while ((pi = g->values[v].producer) >= 0 && p->quantized[pi] &&
           passes_through(g->nodes[pi].op) && !g->values[g->nodes[pi].in[0]].data)
        v = g->nodes[pi].in[0];
    return v;
}

/* each value's activation type: the float inputs and outputs of the
 * quantized nodes PtqConfig.int16_nodes names in int16 (those a pass-through
 * shares its parameters with: their source), the rest in cfg->act */
static void plan_types(Plan *p)
{
    Graph *g = p->g;
    int32_t ni, i;
    int k;
    p->type = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *p->type);
    for (i = 0; i < g->n_values; i++)
        p->type[i] = p->cfg->act;
    for (ni = 0; ni < p->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (!p->quantized[ni] || !listed(g, n, p->cfg->int16_nodes, p->cfg->n_int16))
            continue;
        for (k = 0; k < n->n_in; k++)
            if (role(g, n, k) == ROLE_ACT)
                p->type[param_root(p, n->in[k])] = DT_INT16;
        for (k = 0; k < n->n_out; k++)
            if (is_float(g, n->out[k]))
                p->type[param_root(p, n->out[k])] = DT_INT16;
    }
}

int qdq_apply(Graph *g, const PtqConfig *cfg, const RangeTable *r, Diag *d)
{
    Plan p;
    ApplyCtx c;
    int32_t ni, n_nodes, i;
    int k;
    if (plan_init(&p, g, cfg, d))
        return 1;
    plan_types(&p);
    p.have = arena_alloc(g->arena, (size_t)g->n_values + 1);
    memset(p.have, 0, (size_t)g->n_values + 1);
    p.scale = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *p.scale);
    p.zp = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *p.zp);
    memset(&c, 0, sizeof c);
    c.r = r;
    c.list = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *c.list);
    for_each_qdq_tensor(&p, params_fn, &c);
    if (c.failed)
        return 1;
    /* constants first (the bias scales need the weights') */
    n_nodes = g->n_nodes;
    for (ni = 0; ni < n_nodes; ni++) {
        Weight w;
        Node *n = &g->nodes[ni];
        if (!p.quantized[ni])
            continue;
        if ((n->op == OP_Conv || n->op == OP_Gemm || n->op == OP_MatMul) &&
            role(g, n, 1) == ROLE_WEIGHT) {
            int bias_role = role(g, n, 2);
            memset(&w, 0, sizeof w);
            quantize_weight(&p, n->in[1], weight_axis(&p, n), bias_min_scale(&p, n, &w),
                            DT_INT8, &w);
            g->nodes[ni].in[1] = w.dq;
            if (bias_role == ROLE_BIAS || (bias_role == ROLE_NONE && cfg->bias_correction))
                if (quantize_bias(&p, ni, &w, bias_role == ROLE_BIAS, r))
                    return 1;
        }
        n = &g->nodes[ni];
        for (k = 0; k < n->n_in; k++)
            if (role(g, &g->nodes[ni], k) == ROLE_CONST) {
                int32_t dq = quantize_const(&p, g->nodes[ni].in[k]);
                g->nodes[ni].in[k] = dq;
            }
    }
    for (ni = 0; ni < n_nodes; ni++)
        if (float_node_weights(&p, ni, r))
            return 1;
    for (i = 0; i < c.n; i++)
        add_pair(&p, c.list[i]);
    graph_toposort(g);
    return 0;
}

int qdq_quantized_nodes(Graph *g, const PtqConfig *cfg, QdqNodeInfo **out, Diag *d)
{
    Plan p;
    int32_t ni;
    int n = 0, k;
    QdqNodeInfo *info;
    if (plan_init(&p, g, cfg, d))
        return -1;
    info = arena_array(g->arena, (size_t)p.n_nodes + 1, sizeof *info);
    for (ni = 0; ni < p.n_nodes; ni++) {
        const Node *nd = &g->nodes[ni];
        QdqNodeInfo *q;
        if (!p.quantized[ni] || nd->n_out < 1 || nd->out[0] < 0)
            continue;
        q = &info[n++];
        memset(q, 0, sizeof *q);
        q->node = nd->name ? nd->name : "";
        q->op = nd->op_type;
        q->output = g->values[nd->out[0]].name;
        for (k = 0; k < nd->n_in && q->n_inputs < 4; k++)
            if (role(g, nd, k) == ROLE_ACT && nd->in[k] >= 0)
                q->inputs[q->n_inputs++] = g->values[nd->in[k]].name;
    }
    *out = info;
    return n;
}
