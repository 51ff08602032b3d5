/*
 * Preparing a float graph for `tvmcc quantize` (ptq.h: ptq_prepare).
 *
 * The written QDQ model imports the default domain at opset 13 or later
 * (per-channel DequantizeLinear needs 13). A model written for an older
 * opset has its nodes rewritten to their opset-13 form where the operator's
 * signature changed: attributes that became inputs (Clip 11, Slice 10,
 * Pad 11, Squeeze/Unsqueeze/Split/ReduceSum 13, TopK 10, Reshape 5),
 * attributes that were removed (consumed_inputs before 6, BatchNormalization
 * spatial before 9), Scatter renamed ScatterElements. An operator whose
 * meaning changed in a way not rewritten here is refused, naming the node.
 *
 * Division by a constant becomes multiplication by its reciprocal, which the
 * integer path computes (Div is not an integer operator); Max or Min with a
 * scalar constant becomes Clip.
 */
#include <math.h>
#include <string.h>

#include "graph_edit.h"
#include "ptq.h"

static int refuse(Diag *d, const Node *n, const char *field, const char *why)
{
    diag_error(d, n, field, "cannot bring opset %d to 13 for quantization: %s", n->opset, why);
    return 1;
}

/* attribute NAME (INTS) of node ni becomes input k (int64 constant) */
static void ints_to_input(Graph *g, int32_t ni, const char *name, int k)
{
    const Attr *a = node_attr(&g->nodes[ni], name);
    if (a && a->type == ATTR_INTS) {
        int32_t vi = qe_const_i64(g, arena_printf(g->arena, "%s_%s", g->nodes[ni].name, name),
                                  a->n, a->ints);
        qe_set_input(g, ni, k, vi);
    }
    qe_drop_attr(g, ni, name);
}

/* a float attribute becomes a scalar input of the node's input-0 type */
static void float_to_input(Graph *g, int32_t ni, const char *name, double def, int k)
{
    const Node *n = &g->nodes[ni];
    const Attr *a = node_attr(n, name);
    DType dt = g->values[n->in[0]].dtype;
    double v = a && a->type == ATTR_FLOAT ? a->f : def;
    unsigned char buf[8];
    int32_t vi;
    if (dt == DT_FLOAT64) {
        memcpy(buf, &v, 8);
    } else {
        float f = (float)v;
        dt = DT_FLOAT32;
        memcpy(buf, &f, 4);
    }
    vi = qe_const(g, arena_printf(g->arena, "%s_%s", n->name, name), dt, 0, NULL, buf);
    qe_set_input(g, ni, k, vi);
    qe_drop_attr(g, ni, name);
}

static int raise_node(Graph *g, int32_t ni, Diag *d)
{
    Node *n = &g->nodes[ni];
    int v = n->opset;
    const Value *x = n->n_in > 0 && n->in[0] >= 0 ? &g->values[n->in[0]] : NULL;
    qe_drop_attr(g, ni, "consumed_inputs");
    n = &g->nodes[ni];
    switch (n->op) {
    case OP_Clip:
        if (v < 11) {
            float_to_input(g, ni, "min", -INFINITY, 1);
            float_to_input(g, ni, "max", INFINITY, 2);
        }
        return 0;
    case OP_Slice:
        if (v < 10) {
            ints_to_input(g, ni, "starts", 1);
            ints_to_input(g, ni, "ends", 2);
            ints_to_input(g, ni, "axes", 3);
        }
        return 0;
    case OP_Pad:
        if (v < 11) {
            const Attr *a = node_attr(n, "pads");
            if (!a)
                a = node_attr(n, "paddings");
            if (!a || a->type != ATTR_INTS)
                return refuse(d, n, "pads", "no pads attribute");
            qe_set_input(g, ni, 1, qe_const_i64(g, arena_printf(g->arena, "%s_pads", n->name),
                                                a->n, a->ints));
            qe_drop_attr(g, ni, "pads");
            qe_drop_attr(g, ni, "paddings");
            float_to_input(g, ni, "value", 0.0, 2);
        }
        return 0;
    case OP_Squeeze:
    case OP_Unsqueeze:
    case OP_ReduceSum:
        if (v < 13)
            ints_to_input(g, ni, "axes", 1);
        return 0;
    case OP_Split:
        if (v < 13)
            ints_to_input(g, ni, "split", 1);
        return 0;
    case OP_TopK:
        if (v < 10) {
            int64_t k = attr_int(n, "k", -1, d);
            qe_set_input(g, ni, 1, qe_const_i64(g, arena_printf(g->arena, "%s_k", n->name), 1, &k));
            qe_drop_attr(g, ni, "k");
        }
        return 0;
    case OP_Reshape:
        if (v < 5)
            ints_to_input(g, ni, "shape", 1);
        return 0;
    case OP_BatchNormalization:
        if (v < 9) {
            if (attr_int(n, "spatial", 1, d) != 1)
                return refuse(d, n, "spatial", "spatial=0 has no opset-13 form");
            qe_drop_attr(g, ni, "spatial");
            qe_drop_attr(g, ni, "is_test");
        }
        return 0;
    case OP_Softmax:
    case OP_LogSoftmax:
    case OP_Hardmax:
        if (v < 13 && x) {
            int64_t axis = attr_int(n, "axis", 1, d);
            if (axis < 0)
                axis += x->rank;
            if (axis != x->rank - 1)
                return refuse(d, n, "axis", "before 13 the axis flattens the dimensions after it; "
                              "only the last axis has the same meaning");
        }
        return 0;
    case OP_Dropout:
        if (v < 12)
            return refuse(d, n, NULL, "Dropout's ratio became an input in 12");
        return 0;
    case OP_Scatter:
        /* deprecated in 11 for ScatterElements, which means the same */
        n->op = OP_ScatterElements;
        n->op_type = "ScatterElements";
        return 0;
    case OP_Upsample:
        return refuse(d, n, NULL, "Upsample was removed in 10");
    case OP_Resize:
        if (v < 11)
            return refuse(d, n, NULL, "Resize 10 has no roi input and other coordinates");
        return 0;
    case OP_Add: case OP_Sub: case OP_Mul: case OP_Div: case OP_Gemm: case OP_PRelu:
    case OP_Equal: case OP_Greater: case OP_Less: case OP_And: case OP_Or: case OP_Xor:
        if (v < 7 && node_attr(n, "broadcast"))
            return refuse(d, n, "broadcast", "the legacy broadcast attribute");
        qe_drop_attr(g, ni, "broadcast");
        return 0;
    case OP_Cast:
        if (node_attr(n, "to") && node_attr(n, "to")->type != ATTR_INT)
            return refuse(d, n, "to", "the type is a string before 6");
        return 0;
    default:
        return 0;
    }
}

static int raise_opset(Graph *g, Diag *d)
{
    int32_t ni, n0 = g->n_nodes;
    if (g->opset >= 13)
        return 0;
    for (ni = 0; ni < n0; ni++) {
        Node *n = &g->nodes[ni];
        if (n->dead || (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx")))
            continue;
        if (raise_node(g, ni, d))
            return 1;
        g->nodes[ni].opset = 13;
    }
    g->opset = 13;
    return 0;
}

/* x / c with c a float constant -> x * (1 / c) */
static void div_to_mul(Graph *g)
{
    int32_t ni, n0 = g->n_nodes;
    for (ni = 0; ni < n0; ni++) {
        Node *n = &g->nodes[ni];
        const Value *c;
        const float *cv;
        float *r;
        int64_t k, numel;
        if (n->dead || n->op != OP_Div || n->n_in != 2 || n->in[1] < 0)
            continue;
        c = &g->values[n->in[1]];
        cv = qe_f32(g, n->in[1]);
        if (!cv || (numel = value_numel(c)) < 1)
            continue;
        for (k = 0; k < numel; k++)
            if (cv[k] == 0 || !isfinite(cv[k]))
                break;
        if (k < numel)
            continue;
        r = arena_array(g->arena, (size_t)numel, sizeof *r);
        for (k = 0; k < numel; k++)
            r[k] = 1.0f / cv[k];
        n->in[1] = qe_const_f32(g, arena_printf(g->arena, "%s_reciprocal", c->name), c->rank,
                                c->dims, r);
        n = &g->nodes[ni];
        n->op = OP_Mul;
        n->op_type = "Mul";
    }
}

/* Max(x, c) / Min(x, c) with c a float scalar constant -> Clip(x, c, inf) /
 * Clip(x, -inf, c): Clip has an integer form (a table, or the range of
 * the QuantizeLinear it is folded into), Max and Min have not. TensorFlow
 * exporters write a clamp this way. */
static void minmax_to_clip(Graph *g)
{
    int32_t ni, n0 = g->n_nodes;
    for (ni = 0; ni < n0; ni++) {
        Node *n = &g->nodes[ni];
        const float *cv;
        float lo = -INFINITY, hi = INFINITY;
        int32_t x, c, lo_v, hi_v;
        int k;
        if (n->dead || (n->op != OP_Max && n->op != OP_Min) || n->n_in != 2 || n->n_out != 1)
            continue;
        for (k = 0; k < 2; k++)
            if (qe_f32(g, n->in[k]) && value_numel(&g->values[n->in[k]]) == 1)
                break;
        if (k == 2)
            continue;
        c = n->in[k];
        x = n->in[1 - k];
        cv = qe_f32(g, c);
        /* the constant must not widen the output (broadcast) */
        if (g->values[x].dtype != DT_FLOAT32 || g->values[x].data ||
            g->values[x].rank != g->values[n->out[0]].rank || isnan(cv[0]))
            continue;
        if (n->op == OP_Max)
            lo = cv[0];
        else
            hi = cv[0];
        lo_v = qe_const_f32(g, arena_printf(g->arena, "%s_clip_min", g->values[c].name), 0, NULL,
                            &lo);
        hi_v = qe_const_f32(g, arena_printf(g->arena, "%s_clip_max", g->values[c].name), 0, NULL,
                            &hi);
        qe_set_input(g, ni, 0, x);
        qe_set_input(g, ni, 1, lo_v);
        qe_set_input(g, ni, 2, hi_v);
        n = &g->nodes[ni];
        n->op = OP_Clip;
        n->op_type = "Clip";
    }
}

/* the producer of vi when it is a live node of kind op whose output vi has
 * no other reader and is not a graph output; else NULL */
static Node *sole_producer(Graph *g, int32_t vi, OpKind op)
{
    int32_t p;
    if (vi < 0 || g->values[vi].data || (p = g->values[vi].producer) < 0)
        return NULL;
    if (g->nodes[p].dead || g->nodes[p].op != op || qe_is_output(g, vi) ||
        qe_readers(g, vi, 0) != 1)
        return NULL;
    return &g->nodes[p];
}

/* whether vi is a float scalar constant within 1e-6 of v */
static int is_scalar(const Graph *g, int32_t vi, double v)
{
    const float *c = qe_f32(g, vi);
    return c && value_numel(&g->values[vi]) == 1 && fabs((double)c[0] - v) <= 1e-6 * fabs(v);
}

/* of Mul node m's inputs, the one that is not `other` (-1 if neither) */
static int32_t mul_other(const Node *m, int32_t other)
{
    if (m->n_in != 2)
        return -1;
    return m->in[0] == other ? m->in[1] : m->in[1] == other ? m->in[0] : -1;
}

/* r == Clip(Add(x, 3), 0, 6) for some x: returns x, else -1 */
static int32_t relu6_of_x_plus_3(Graph *g, int32_t r)
{
    Node *c = sole_producer(g, r, OP_Clip), *a;
    int32_t x;
    if (!c || c->n_in != 3 || !is_scalar(g, c->in[1], 0.0) || !is_scalar(g, c->in[2], 6.0) ||
        !(a = sole_producer(g, c->in[0], OP_Add)) || a->n_in != 2)
        return -1;
    x = is_scalar(g, a->in[1], 3.0) ? a->in[0] : is_scalar(g, a->in[0], 3.0) ? a->in[1] : -1;
    if (x < 0 || g->values[x].rank != g->values[r].rank)
        return -1;
    return x;
}

/* x * Clip(x + 3, 0, 6) / 6, as exporters of MobileNetV3-style models
 * write hard-swish (the division already a Mul by 1/6 here), in either
 * order of the two multiplications -> HardSwish(x) (opset 14): one
 * operator quantized once (a table) instead of four each with their own
 * rounding. */
static int fuse_hardswish(Graph *g)
{
    int32_t ni, n0 = g->n_nodes;
    int fused = 0, k;
    for (ni = 0; ni < n0; ni++) {
        Node *m2 = &g->nodes[ni], *m1;
        int32_t x = -1, dead[3] = {-1, -1, -1};
        if (m2->dead || m2->op != OP_Mul || m2->n_in != 2 || m2->n_out != 1)
            continue;
        for (k = 0; k < 2 && x < 0; k++) {
            int32_t a = m2->in[k], b = m2->in[1 - k], r, xr;
            /* (x * R) * (1/6) */
            if (is_scalar(g, b, 1.0 / 6) && (m1 = sole_producer(g, a, OP_Mul)) != NULL) {
                int j;
                for (j = 0; j < 2 && x < 0; j++) {
                    r = m1->in[j];
                    xr = relu6_of_x_plus_3(g, r);
                    if (xr >= 0 && mul_other(m1, r) == xr) {
                        x = xr;
                        dead[0] = (int32_t)(m1 - g->nodes);
                        dead[1] = g->values[r].producer;
                    }
                }
            }
            /* x * (R * (1/6)) */
            if (x < 0 && (m1 = sole_producer(g, b, OP_Mul)) != NULL) {
                int j;
                for (j = 0; j < 2 && x < 0; j++) {
                    r = m1->in[j];
                    if (!is_scalar(g, mul_other(m1, r), 1.0 / 6))
                        continue;
                    xr = relu6_of_x_plus_3(g, r);
                    if (xr >= 0 && xr == a) {
                        x = xr;
                        dead[0] = (int32_t)(m1 - g->nodes);
                        dead[1] = g->values[r].producer;
                    }
                }
            }
        }
        if (x < 0)
            continue;
        /* the Add feeding the Clip dies with it */
        dead[2] = g->values[g->nodes[dead[1]].in[0]].producer;
        for (k = 0; k < 3; k++)
            g->nodes[dead[k]].dead = 1;
        m2 = &g->nodes[ni];
        m2->op = OP_HardSwish;
        m2->op_type = "HardSwish";
        m2->in[0] = x;
        m2->n_in = 1;
        m2->n_attr = 0;
        m2->opset = 14;
        fused++;
    }
    if (fused && g->opset < 14) {
        /* HardSwish needs 14; 13 -> 14 changed no operator's meaning for
         * the forms written here (Reshape's allowzero and the training
         * mode of BatchNormalization default to 13's behaviour) */
        for (ni = 0; ni < g->n_nodes; ni++)
            if (!g->nodes[ni].dead && (!g->nodes[ni].domain || !g->nodes[ni].domain[0]))
                g->nodes[ni].opset = 14;
        g->opset = 14;
    }
    return fused;
}

/* A Mul or Add by a per-output-channel constant right after a Conv with
 * constant weights (BatchNormalization as PaddlePaddle's exporter writes
 * it) folds into the weights and bias: the Conv's output otherwise has the
 * unnormalized range of every channel, quantized with one scale. */
static int fold_affine_into_conv(Graph *g)
{
    int32_t ni;
    int folded = 0, changed = 1;
    while (changed) {
        changed = 0;
        for (ni = 0; ni < g->n_nodes; ni++) {
            Node *n = &g->nodes[ni], *r;
            const Value *w, *ov, *cv;
            const float *wd, *bd = NULL, *c;
            int32_t out, ri, k, cvi;
            int64_t oc, per, o, j, cn;
            float *nw, *nb;
            if (n->dead || n->op != OP_Conv || n->n_out != 1 || (out = n->out[0]) < 0 ||
                !(wd = qe_f32(g, n->in[1])))
                continue;
            if (n->n_in > 2 && n->in[2] >= 0 && !(bd = qe_f32(g, n->in[2])))
                continue;
            if (qe_is_output(g, out) || qe_readers(g, out, 0) != 1)
                continue;
            for (ri = 0; ri < g->n_nodes; ri++) {
                r = &g->nodes[ri];
                if (!r->dead && r->n_in == 2 && (r->in[0] == out || r->in[1] == out))
                    break;
            }
            if (ri == g->n_nodes)
                continue;
            r = &g->nodes[ri];
            if ((r->op != OP_Mul && r->op != OP_Add) || r->n_out != 1 || r->out[0] < 0 ||
                r->in[0] == r->in[1])
                continue;
            cvi = r->in[0] == out ? r->in[1] : r->in[0];
            if (!(c = qe_f32(g, cvi)))
                continue;
            w = &g->values[n->in[1]];
            ov = &g->values[out];
            cv = &g->values[cvi];
            oc = w->dims[0];
            cn = value_numel(cv);
            /* the constant: one value, or one per channel along axis 1 of
             * the output ([C,1,...] or [1,C,1,...]), not widening it */
            if (g->values[r->out[0]].rank != ov->rank || ov->rank < 3)
                continue;
            for (k = 0; k < ov->rank; k++)
                if (g->values[r->out[0]].dims[k] != ov->dims[k])
                    break;
            if (k < ov->rank)
                continue;
            if (cn != 1) {
                int axis = cv->rank - (ov->rank - 1) ; /* where output axis 1 falls */
                if (cn != oc || axis < 0 || cv->dims[axis] != oc)
                    continue;
            }
            for (o = 0; o < oc; o++)
                if (!isfinite(c[cn == 1 ? 0 : o]))
                    break;
            if (o < oc)
                continue;
            per = value_numel(w) / (oc ? oc : 1);
            nb = arena_array(g->arena, (size_t)oc, sizeof *nb);
            for (o = 0; o < oc; o++) {
                float co = c[cn == 1 ? 0 : o], b = bd ? bd[o] : 0.0f;
                nb[o] = r->op == OP_Mul ? b * co : b + co;
            }
            if (r->op == OP_Mul) {
                nw = arena_array(g->arena, (size_t)(oc * per), sizeof *nw);
                for (o = 0; o < oc; o++)
                    for (j = 0; j < per; j++)
                        nw[o * per + j] = wd[o * per + j] * c[cn == 1 ? 0 : o];
                k = qe_const_f32(g, arena_printf(g->arena, "%s_scaled", w->name), w->rank,
                                 w->dims, nw);
                g->nodes[ni].in[1] = k;
            }
            {
                int64_t dim = oc;
                k = qe_const_f32(g, arena_printf(g->arena, "%s_affine_bias",
                                                 g->values[g->nodes[ni].in[1]].name), 1, &dim, nb);
                qe_set_input(g, ni, 2, k);
            }
            n = &g->nodes[ni];
            r = &g->nodes[ri];
            n->out[0] = r->out[0];
            g->values[r->out[0]].producer = ni;
            g->values[out].producer = -1; /* no longer computed */
            r->dead = 1;
            folded++;
            changed = 1;
        }
    }
    return folded;
}

int ptq_prepare(Graph *g, Diag *d)
{
    if (raise_opset(g, d))
        return 1;
    div_to_mul(g);
    fold_affine_into_conv(g);
    minmax_to_clip(g);
    fuse_hardswish(g);
    return 0;
}
