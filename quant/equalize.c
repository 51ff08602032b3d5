/*
 * Cross-layer equalization (Nagel et al., ICCV 2019, section 4.1).
 *
 * Two layers in a row, y = f(W2 f(W1 x + b1) + b2), compute the same
 * function after W1's output channel i and b1[i] are divided by s_i > 0
 * and W2's input channel i is multiplied by s_i, whenever the activation f
 * between them is positively homogeneous: f(s x) = s f(x) for s > 0. Relu,
 * LeakyRelu and PRelu are (elementwise, whatever the slope), as is no
 * activation at all; Clip, Relu6, HardSwish, Sigmoid and the rest are not,
 * so a pair behind one of them is skipped. Between two convs the pools
 * (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool) pass a per-channel
 * scale through as well: each works within one channel and is linear or a
 * maximum.
 *
 * With r1_i = max |W1 row i| and r2_i = max |W2 column i| the paper's
 * choice s_i = sqrt(r1_i / r2_i) leaves both at sqrt(r1_i r2_i): the
 * channel's range is the same on both sides, which is what maximises the
 * precision left to each channel under one per-tensor int8 scale. A layer
 * in the middle of a chain is layer 2 of one pair and layer 1 of the next,
 * so one pass over the pairs disturbs the balance of the pair before; the
 * passes repeat until every s_i is within 1e-4 of 1 (or max_rounds).
 *
 * Layers: Conv (any group count: input channel c of a conv with `group`
 * groups is weight slice [o, c % icpg] for the output channels o of c's
 * group; depthwise is group == channels), Gemm (transB 0 or 1; the second
 * layer of a pair must have transA 0, its input's channels being the
 * columns of A) and MatMul with a constant 2-D B (channels are the last
 * axis), where a MatMul's bias is an Add of a constant right after it.
 * A Conv pairs with a Conv (channels on axis 1), a Gemm or MatMul with a
 * Gemm or MatMul (channels on the last axis).
 *
 * Every value on the way from layer 1 to layer 2 must have exactly one
 * reader and not be a graph output (another reader would see the scaled
 * channels). Weights and biases must be float32 constants; one that
 * another node also reads gets a copy of its own first, and a Gemm C or
 * Add bias that broadcasts over the channels is widened to one entry per
 * channel, so that scaling it changes this layer only. Changed tensors get
 * new arrays from the graph's arena: the loader's bytes may be shared (a
 * mapped file, another value) and are never written.
 */
#include "equalize.h"

#include <math.h>
#include <string.h>

#define CLE_TOL 1e-4    /* convergence: every |s - 1| below this */
#define CLE_NOISE 1e-7  /* a scale this close to 1 is rounding: not applied */

typedef enum LayerKind { LK_CONV, LK_MATRIX } LayerKind;

/* Weight elements of one channel: na runs of nb contiguous elements, the
 * runs `stride` apart, the first at base. */
typedef struct Span {
    int64_t base, na, stride, nb;
} Span;

typedef struct Layer {
    LayerKind kind;
    int32_t node;        /* the Conv, Gemm or MatMul */
    int32_t w;           /* its constant weight */
    int32_t b;           /* bias: Conv B, Gemm C, a MatMul's Add constant; -1: none */
    int32_t bias_node;   /* the node reading b (the layer itself or the Add) */
    int bias_in;         /* b's input position in bias_node */
    int bias_ok;         /* 0: a bias the pass cannot scale (not a constant) */
    int32_t out;         /* what the layer (with its Add) writes */
    int64_t n_out, n_in; /* output and input channels */
    int64_t icpg, ocpg, ksz; /* Conv: weights [n_out, icpg, kernel of ksz] */
    int64_t rows, cols;  /* Gemm, MatMul: weights [rows, cols] */
    int out_rows;        /* output channel j is row j (Gemm transB 1) */
    int trans_a;         /* Gemm transA */
} Layer;

typedef struct Pair {
    Layer l1, l2;
    const char *via;     /* the activations between, "" for none */
    const char *note;    /* copies and widenings made for it, "" for none */
    int rounds;          /* rounds in which some |s - 1| >= CLE_TOL */
    double ratio1, ratio2; /* channel range ratios before: W1 rows, W2 columns */
} Pair;

static int is_f32_const(const Graph *g, int32_t vi)
{
    const Value *v;
    if (vi < 0 || vi >= g->n_values)
        return 0;
    v = &g->values[vi];
    return v->data && v->dtype == DT_FLOAT32 && value_is_static(v) && value_numel(v) > 0;
}

/* Input slots of live nodes reading vi, plus one per graph output it is;
 * *reader is the last node found reading it. */
static int readers(const Graph *g, int32_t vi, int32_t *reader)
{
    int32_t ni;
    int i, n = 0;
    *reader = -1;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *nd = &g->nodes[ni];
        if (nd->dead)
            continue;
        for (i = 0; i < nd->n_in; i++)
            if (nd->in[i] == vi) {
                n++;
                *reader = ni;
            }
    }
    for (i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == vi)
            n++;
    return n;
}

static const char *label(const Graph *g, int32_t ni)
{
    const Node *n = &g->nodes[ni];
    if (n->name && n->name[0])
        return n->name;
    return n->n_out > 0 && n->out[0] >= 0 ? g->values[n->out[0]].name : "?";
}

/* Whether node ni is a layer this pass can scale; fills *L (without the
 * Add after a MatMul, which find_pair attaches). */
static int parse_layer(const Graph *g, int32_t ni, Layer *L)
{
    const Node *n = &g->nodes[ni];
    const Value *w;
    int i;
    memset(L, 0, sizeof *L);
    L->node = ni;
    L->b = -1;
    L->bias_node = ni;
    L->bias_ok = 1;
    if (n->dead || n->quant || n->n_in < 2 || n->n_out < 1 || n->out[0] < 0 || n->in[0] < 0 ||
        g->values[n->in[0]].data || node_attr(n, "tvmcc.layout"))
        return 0;
    if (n->op != OP_Conv && n->op != OP_Gemm && n->op != OP_MatMul)
        return 0;
    if (!is_f32_const(g, n->in[1]))
        return 0;
    w = &g->values[n->in[1]];
    L->w = n->in[1];
    L->out = n->out[0];
    if (n->op == OP_Conv) {
        int64_t group;
        if (w->rank < 3 || n->param_kind != PARAMS_WINDOW)
            return 0;
        group = node_window(n)->group;
        L->kind = LK_CONV;
        L->n_out = w->dims[0];
        L->icpg = w->dims[1];
        if (group < 1 || L->n_out % group)
            return 0;
        L->ocpg = L->n_out / group;
        L->n_in = L->icpg * group;
        L->ksz = 1;
        for (i = 2; i < w->rank; i++)
            L->ksz *= w->dims[i];
        if (n->n_in > 2 && n->in[2] >= 0) {
            L->b = n->in[2];
            L->bias_in = 2;
            L->bias_ok = is_f32_const(g, L->b) && value_numel(&g->values[L->b]) == L->n_out;
        }
        return 1;
    }
    if (w->rank != 2)
        return 0;
    L->kind = LK_MATRIX;
    L->rows = w->dims[0];
    L->cols = w->dims[1];
    if (n->op == OP_Gemm) {
        const ScalarParams *p;
        if (n->param_kind != PARAMS_SCALAR)
            return 0;
        p = node_scalar(n);
        L->out_rows = p->trans_b;
        L->trans_a = p->trans_a;
        if (n->n_in > 2 && n->in[2] >= 0) {
            L->b = n->in[2];
            L->bias_in = 2;
            L->bias_ok = is_f32_const(g, L->b);
        }
    }
    L->n_out = L->out_rows ? L->rows : L->cols;
    L->n_in = L->out_rows ? L->cols : L->rows;
    return 1;
}

/* Output channel ch of L's weights. */
static Span span_out(const Layer *L, int64_t ch)
{
    Span s;
    if (L->kind == LK_CONV) {
        s.base = ch * L->icpg * L->ksz;
        s.na = 1;
        s.stride = 0;
        s.nb = L->icpg * L->ksz;
    } else if (L->out_rows) {
        s.base = ch * L->cols;
        s.na = 1;
        s.stride = 0;
        s.nb = L->cols;
    } else {
        s.base = ch;
        s.na = L->rows;
        s.stride = L->cols;
        s.nb = 1;
    }
    return s;
}

/* Input channel ch of L's weights. */
static Span span_in(const Layer *L, int64_t ch)
{
    Span s;
    if (L->kind == LK_CONV) {
        int64_t grp = ch / L->icpg;
        s.base = (grp * L->ocpg * L->icpg + ch % L->icpg) * L->ksz;
        s.na = L->ocpg;
        s.stride = L->icpg * L->ksz;
        s.nb = L->ksz;
    } else if (L->out_rows) {
        s.base = ch;
        s.na = L->rows;
        s.stride = L->cols;
        s.nb = 1;
    } else {
        s.base = ch * L->cols;
        s.na = 1;
        s.stride = 0;
        s.nb = L->cols;
    }
    return s;
}

/* Output channel ch of L's bias, whose last axis is the channels. */
static Span span_bias(const Graph *g, const Layer *L, int64_t ch)
{
    Span s;
    s.base = ch;
    s.na = value_numel(&g->values[L->b]) / L->n_out;
    s.stride = L->n_out;
    s.nb = 1;
    return s;
}

static double span_max(const float *w, Span s)
{
    double m = 0;
    int64_t a, b;
    for (a = 0; a < s.na; a++)
        for (b = 0; b < s.nb; b++) {
            double x = fabs((double)w[s.base + a * s.stride + b]);
            if (x > m || x != x)
                m = x;
        }
    return m;
}

static void span_scale(float *w, Span s, double f)
{
    int64_t a, b;
    for (a = 0; a < s.na; a++)
        for (b = 0; b < s.nb; b++) {
            float *p = &w[s.base + a * s.stride + b];
            *p = (float)((double)*p * f);
        }
}

/* max_i r_i / min_i r_i over the channels with a nonzero range: layer 1's
 * output channels (side 0) or layer 2's input channels (side 1). */
static double range_ratio(const Graph *g, const Layer *L, int side)
{
    const float *w = g->values[L->w].data;
    int64_t n = side ? L->n_in : L->n_out, i;
    double lo = 0, hi = 0;
    for (i = 0; i < n; i++) {
        double r = span_max(w, side ? span_in(L, i) : span_out(L, i));
        if (r > 0 && (lo == 0 || r < lo))
            lo = r;
        if (r > hi)
            hi = r;
    }
    return lo > 0 ? hi / lo : 1;
}

/* Makes input slot `slot` of node ni read a copy of its value of its own,
 * with the last axis widened to `last` entries when it has one (a
 * broadcast bias); returns the new value. */
static int32_t private_copy(Graph *g, int32_t ni, int slot, int64_t last)
{
    int32_t old = g->nodes[ni].in[slot], nv, serial = 0;
    const Value *o;
    Value *v;
    int64_t n, i, olast;
    float *data;
    const float *src;
    nv = graph_fresh_value(g, g->values[old].name, "cle", &serial);
    o = &g->values[old]; /* graph_fresh_value may move the array */
    v = &g->values[nv];
    v->dtype = o->dtype;
    v->rank = o->rank;
    memcpy(v->dims, o->dims, sizeof v->dims);
    if (last > 0) {
        if (v->rank == 0)
            v->rank = 1;
        v->dims[v->rank - 1] = last;
    }
    n = value_numel(v);
    olast = o->rank > 0 ? o->dims[o->rank - 1] : 1;
    data = arena_array(g->arena, (size_t)n, sizeof *data);
    if (!data)
        die("compile arena exhausted");
    src = o->data;
    for (i = 0; i < n; i++) /* a widened axis repeats its one entry */
        data[i] = olast == 1 && last > 0 ? src[i / v->dims[v->rank - 1]] : src[i];
    v->data = data;
    v->producer = -1;
    v->input_index = -1;
    g->nodes[ni].in[slot] = nv;
    return nv;
}

/* Appends "what" to the pair's note. */
static void add_note(Graph *g, Pair *p, const char *what, const char *name)
{
    p->note = arena_printf(g->arena, "%s%s%s '%s'", p->note, p->note[0] ? ", " : "; ", what, name);
}

/* Gives layer 1's weight and bias and layer 2's weight values of their
 * own, the bias one entry per channel along its last axis. */
static void make_private(Graph *g, Pair *p)
{
    int32_t r;
    Layer *L[2];
    int k;
    L[0] = &p->l1;
    L[1] = &p->l2;
    for (k = 0; k < 2; k++)
        if (readers(g, L[k]->w, &r) > 1) {
            add_note(g, p, "copied shared weight", g->values[L[k]->w].name);
            L[k]->w = private_copy(g, L[k]->node, 1, 0);
        }
    if (p->l1.b >= 0) {
        const Value *b = &g->values[p->l1.b];
        int64_t last = b->rank > 0 ? b->dims[b->rank - 1] : 1;
        if (last != p->l1.n_out) {
            add_note(g, p, "widened bias", b->name);
            p->l1.b = private_copy(g, p->l1.bias_node, p->l1.bias_in, p->l1.n_out);
        } else if (readers(g, p->l1.b, &r) > 1) {
            add_note(g, p, "copied shared bias", b->name);
            p->l1.b = private_copy(g, p->l1.bias_node, p->l1.bias_in, 0);
        }
    }
}

/* The Add of a constant right after a MatMul: its bias. */
static void attach_add_bias(const Graph *g, Layer *L)
{
    int32_t r;
    const Node *a;
    int k;
    if (g->nodes[L->node].op != OP_MatMul || readers(g, L->out, &r) != 1)
        return;
    a = &g->nodes[r];
    if (a->op != OP_Add || a->dead || a->quant || a->n_in != 2 || a->n_out < 1 || a->out[0] < 0)
        return;
    k = a->in[0] == L->out ? 1 : 0;
    if (a->in[1 - k] != L->out || !is_f32_const(g, a->in[k]))
        return;
    {
        const Value *c = &g->values[a->in[k]];
        int64_t last = c->rank > 0 ? c->dims[c->rank - 1] : 1;
        if (last != 1 && last != L->n_out)
            return;
        if (c->rank > g->values[L->out].rank)
            return; /* it would broadcast the output to more dimensions */
    }
    L->b = a->in[k];
    L->bias_node = r;
    L->bias_in = k;
    L->out = a->out[0];
}

/* Whether a positive scale of each channel passes through node n:
 * op(s x) = s op(x). The activations are elementwise; the pools work
 * within one channel (axis 1, so only between convs) and are linear (the
 * averages, zero padding included) or take a maximum. */
static int passes_scale(const Node *n, LayerKind k)
{
    if (n->n_out < 1 || n->out[0] < 0)
        return 0;
    if (n->op == OP_Relu || n->op == OP_LeakyRelu || n->op == OP_PRelu)
        return 1;
    if (k != LK_CONV || (n->n_out > 1 && n->out[1] >= 0)) /* MaxPool's Indices */
        return 0;
    return n->op == OP_MaxPool || n->op == OP_AveragePool || n->op == OP_GlobalAveragePool ||
           n->op == OP_GlobalMaxPool;
}

/* Activations that change a channel's values other than in proportion. */
static int non_homogeneous(const Node *n)
{
    static const char *const ops[] = {"Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu",
                                      "Selu", "Celu", "Gelu", "Softplus", "Softsign", "Mish",
                                      "ThresholdedRelu", "Exp", "Erf", NULL};
    int i;
    for (i = 0; ops[i]; i++)
        if (!strcmp(n->op_type, ops[i]) && !n->domain[0])
            return 1;
    return 0;
}

/* Whether some reader of value v is a layer reading it as its data input. */
static int feeds_layer(const Graph *g, int32_t v, Layer *L)
{
    int32_t ni;
    int i;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        for (i = 0; i < n->n_in; i++)
            if (n->in[i] == v && i == 0 && parse_layer(g, ni, L))
                return 1;
    }
    return 0;
}

/* Follows layer 1's output through the activations to a layer 2. Returns
 * 1 with *p filled for a pair, 0 when there is none; a pair that is there
 * but cannot be equalized is logged with the reason and gives 0. */
static int find_pair(Graph *g, const Layer *l1, Pair *p, FILE *log)
{
    int32_t v = l1->out, r;
    const char *via = "", *why = NULL;
    Layer l2;
    for (;;) {
        int nr = readers(g, v, &r);
        const Node *rn = r >= 0 ? &g->nodes[r] : NULL;
        if (nr != 1 || !rn || rn->in[0] != v) {
            if (nr > 1 && feeds_layer(g, v, &l2)) {
                why = arena_printf(g->arena, "'%s' has %d readers", g->values[v].name, nr);
                break;
            }
            return 0;
        }
        if (passes_scale(rn, l1->kind)) {
            via = arena_printf(g->arena, "%s%s -> ", via, rn->op_type);
            v = rn->out[0];
            continue;
        }
        if (parse_layer(g, r, &l2))
            break;
        /* an operator that a positive scale does not pass through */
        if (rn->n_out == 1 && rn->out[0] >= 0 && readers(g, rn->out[0], &r) == 1 &&
            feeds_layer(g, rn->out[0], &l2)) {
            via = arena_printf(g->arena, "%s%s -> ", via, rn->op_type);
            why = non_homogeneous(rn)
                      ? arena_printf(g->arena, "%s does not commute with a per-channel scale", rn->op_type)
                      : arena_printf(g->arena, "%s between is not handled", rn->op_type);
            break;
        }
        return 0;
    }
    if (!why) {
        if (l1->kind != l2.kind)
            why = "channels on different axes";
        else if (l1->n_out != l2.n_in)
            why = arena_printf(g->arena, "%lld channels out, %lld in", (long long)l1->n_out,
                               (long long)l2.n_in);
        else if (l2.trans_a)
            why = "layer 2 has transA";
        else if (!l1->bias_ok)
            why = "layer 1's bias is not a float constant";
    }
    if (why) {
        if (log)
            fprintf(log, "cle: %s '%s' -> %s%s '%s': skipped (%s)\n", g->nodes[l1->node].op_type,
                    label(g, l1->node), via, g->nodes[l2.node].op_type, label(g, l2.node), why);
        return 0;
    }
    memset(p, 0, sizeof *p);
    p->l1 = *l1;
    p->l2 = l2;
    p->via = via;
    p->note = "";
    return 1;
}

/* A value of its own for vi's bytes: the first change copies them. */
static float *writable(Graph *g, uint8_t *owned, int32_t vi)
{
    Value *v = &g->values[vi];
    if (!owned[vi]) {
        int64_t n = value_numel(v);
        float *data = arena_array(g->arena, (size_t)n, sizeof *data);
        if (!data)
            die("compile arena exhausted");
        memcpy(data, v->data, (size_t)n * sizeof *data);
        v->data = data;
        owned[vi] = 1;
    }
    return v->data;
}

/* One round over pair p; returns max |s_i - 1|. */
static double balance(Graph *g, Pair *p, uint8_t *owned)
{
    int64_t i;
    double dev = 0;
    for (i = 0; i < p->l1.n_out; i++) {
        double r1 = span_max(g->values[p->l1.w].data, span_out(&p->l1, i));
        double r2 = span_max(g->values[p->l2.w].data, span_in(&p->l2, i));
        double s;
        if (!(r1 > 0 && r2 > 0 && isfinite(r1) && isfinite(r2)))
            continue; /* a dead or non-finite channel keeps s = 1 */
        s = sqrt(r1 / r2);
        if (fabs(s - 1) > dev)
            dev = fabs(s - 1);
        if (fabs(s - 1) < CLE_NOISE)
            continue;
        span_scale(writable(g, owned, p->l1.w), span_out(&p->l1, i), 1 / s);
        if (p->l1.b >= 0)
            span_scale(writable(g, owned, p->l1.b), span_bias(g, &p->l1, i), 1 / s);
        span_scale(writable(g, owned, p->l2.w), span_in(&p->l2, i), s);
    }
    return dev;
}

int ptq_equalize(Graph *g, int max_rounds, FILE *log)
{
    Pair *pairs;
    uint8_t *owned;
    int32_t ni, vi, n_nodes = g->n_nodes, n_values = g->n_values;
    int n = 0, k, round, rescaled = 0;
    pairs = arena_array(g->arena, (size_t)n_nodes + 1, sizeof *pairs);
    if (!pairs)
        die("compile arena exhausted");
    for (ni = 0; ni < n_nodes; ni++) {
        Layer l1;
        if (!parse_layer(g, ni, &l1))
            continue;
        attach_add_bias(g, &l1);
        if (find_pair(g, &l1, &pairs[n], log)) {
            make_private(g, &pairs[n]);
            pairs[n].ratio1 = range_ratio(g, &pairs[n].l1, 0);
            pairs[n].ratio2 = range_ratio(g, &pairs[n].l2, 1);
            n++;
        }
    }
    /* a layer in two pairs is parsed twice: both copies must name the
     * weight it reads now (make_private may have replaced it) */
    for (k = 0; k < n; k++) {
        pairs[k].l1.w = g->nodes[pairs[k].l1.node].in[1];
        pairs[k].l2.w = g->nodes[pairs[k].l2.node].in[1];
        if (pairs[k].l1.b >= 0)
            pairs[k].l1.b = g->nodes[pairs[k].l1.bias_node].in[pairs[k].l1.bias_in];
    }
    owned = arena_alloc(g->arena, (size_t)g->n_values + 1);
    if (!owned)
        die("compile arena exhausted");
    for (vi = n_values; vi < g->n_values; vi++)
        owned[vi] = 1; /* private_copy's values have new arrays already */
    for (round = 0; round < max_rounds; round++) {
        double dev = 0;
        for (k = 0; k < n; k++) {
            double d = balance(g, &pairs[k], owned);
            if (d >= CLE_TOL)
                pairs[k].rounds++;
            if (d > dev)
                dev = d;
        }
        if (dev < CLE_TOL)
            break;
    }
    for (k = 0; k < n; k++) {
        Pair *p = &pairs[k];
        if (p->rounds)
            rescaled++;
        if (!log)
            continue;
        fprintf(log, "cle: %s '%s' -> %s%s '%s': %lld channels, ", g->nodes[p->l1.node].op_type,
                label(g, p->l1.node), p->via, g->nodes[p->l2.node].op_type, label(g, p->l2.node),
                (long long)p->l1.n_out);
        if (p->rounds)
            fprintf(log, "rescaled in %d round%s", p->rounds, p->rounds == 1 ? "" : "s");
        else
            fprintf(log, "not rescaled");
        fprintf(log, "; range ratio %.4g -> %.4g (layer 1 rows), %.4g -> %.4g (layer 2 columns)%s\n",
                p->ratio1, range_ratio(g, &p->l1, 0), p->ratio2, range_ratio(g, &p->l2, 1), p->note);
    }
    return rescaled;
}
