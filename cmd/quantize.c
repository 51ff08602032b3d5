/*
 * tvmcc quantize: post-training quantization of a float ONNX model into a
 * QDQ model, calibrated by running the model itself, compiled by tvmcc and
 * built with the host's C compiler, over calibration samples. No Python and
 * no other runtime.
 *
 *   1. the float model through the front end and the simplifying passes
 *      (BatchNormalization folded), opset-13 forms (quant/prepare.c),
 *      cross-layer equalization (quant/equalize.c): the prepared model P;
 *   2. the tensors that get a QuantizeLinear (quant/qdq.c: qdq_needs);
 *   3. P with those tensors as extra outputs, built for the host and run
 *      over the samples: min/max and channel means (pass 1), histograms
 *      (pass 2, for the methods that read them; quant/ranges.c);
 *   4. each tensor's range by the method, Q/DQ inserted (qdq_apply);
 *   5. the QDQ model, with its quantized tensors as extra outputs, built and
 *      run beside the float one on the evaluation samples: the accuracy
 *      report; with --max-loss, the layers that lose most are kept in float
 *      until the output's SQNR is met;
 *   6. OUT.onnx and OUT.json, written whole or not at all.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "compile.h"
#include "../frontend/onnx.h"
#include "../quant/calib.h"
#include "../quant/equalize.h"
#include "../quant/hessian.h"
#include "../quant/ptq.h"
#include "../quant/ranges.h"

#define MAX_KEEP 1024

typedef struct QOptions {
    const char *model, *calib, *eval, *out;
    const char *shapes[MAX_SHAPE_BINDINGS];
    int n_shapes;
    RangeMethod method;
    int method_auto;            /* --method auto: each method tried, the best kept */
    double percentile;
    PtqConfig cfg;
    const char *keep[MAX_KEEP];
    int n_keep;
    const char *int16[MAX_KEEP];  /* --int16 and --max-loss's int16 step */
    int n_int16;
    double max_loss;            /* < 0: not given */
    int equalize;
    int gptq;                   /* --weight-rounding gptq */
    uint64_t seed;
    int verbose;
} QOptions;

/* The accuracy of one quantized model against the float one. */
typedef struct TensorStat {
    const char *name;           /* the float tensor */
    const char *op;             /* its producer's op ("input" for a graph input) */
    const char *node;
    float scale;
    int32_t zp;
    DType type;                 /* of its QuantizeLinear output */
    double sig, err;            /* sums over the set */
    double sqnr;                /* 10 log10(sig / err), capped at 100 */
} TensorStat;

typedef struct OutputStat {
    const char *name;
    double sqnr_mean, sqnr_min;
    double top1;                /* agreement of the argmax over the last axis (a
                                 * position where both rows reach their maximum); -1: n/a */
    int64_t rows;
    double ref_sqnr_float, ref_sqnr_quant; /* against output_K.pb; NAN without */
} OutputStat;

typedef struct Eval {
    int n_tensors, n_outputs;
    TensorStat *t;
    OutputStat *o;
    double sqnr;                /* mean over outputs of their mean SQNR */
    int64_t agree, rows;
    int n_samples;
} Eval;

typedef struct Session {
    Arena *a;
    Diag *d;
    QOptions *q;
    Graph *g;                   /* the prepared float graph */
    uint8_t *p_bytes;           /* the prepared float model */
    size_t p_size;
    SampleSet calib, eval;
    QdqNeeds needs;
    RangeStats *stats;
    double **chan_sum;
    int64_t *chan_count;
    int *need_src;              /* need i: output index in fm, or -(input + 2) */
    int n_orig_out;
    HostModel fm;               /* P with the needs as extra outputs */
    int fm_built;
    const char *pass_label;
    HessianSet hs;              /* --weight-rounding gptq: the Convs' input moments */
} Session;

static int usage(FILE *f)
{
    fprintf(f,
            "usage: tvmcc quantize MODEL.onnx --calib DIR -o OUT.onnx [options]\n"
            "\n"
            "Post-training quantization: writes OUT.onnx, a QDQ model (int8 weights per\n"
            "output channel, int32 biases, QuantizeLinear/DequantizeLinear pairs on\n"
            "activations, opset >= 13) and OUT.json, the accuracy report. Calibration runs\n"
            "the float model compiled by tvmcc with the host's C compiler ($CC or cc).\n"
            "\n"
            "  --calib DIR            calibration samples: DIR/<name>/input_K.pb, one\n"
            "                         TensorProto per graph input (the ONNX test-data\n"
            "                         layout); random:N draws N uniform samples in [-1, 1]\n"
            "                         (a smoke test, not representative)\n"
            "  -o, --output OUT.onnx  the quantized model (OUT.json beside it)\n"
            "  --input-shape N=D0,D1  bind the shape of graph input N (repeatable)\n"
            "  --method M             range of each activation: minmax, percentile, mse,\n"
            "                         entropy, or auto (each tried, the best output SQNR\n"
            "                         kept; default mse)\n"
            "  --percentile P         the percentile method's share in percent (99.99)\n"
            "  --per-channel          weights: one scale per output channel (default)\n"
            "  --per-tensor           weights: one scale per tensor\n"
            "  --activations T        int8 (default), uint8 or int16\n"
            "  --keep-float N1,N2     nodes (by name or output name) left in float\n"
            "  --int16 N1,N2          nodes (by name or output name) whose activation\n"
            "                         inputs and outputs are int16 (8-bit --activations)\n"
            "  --max-loss DB          the layers that lose most go to int16, then to\n"
            "                         float, one step at a time, until the outputs' mean\n"
            "                         SQNR against the float model is at least DB decibels\n"
            "  --eval DIR             evaluation samples for the report (default: the\n"
            "                         calibration set); output_K.pb there are compared too\n"
            "  --weight-rounding R    nearest (default), or gptq: each Conv's weights\n"
            "                         rounded one at a time, the error moved onto the\n"
            "                         rest by the input's second moment (calibration)\n"
            "  --no-equalize          no cross-layer equalization\n"
            "  --no-bias-correction   no bias correction\n"
            "  --no-fuse-relu         keep Relu/Clip after Conv/Gemm/MatMul/Add as nodes\n"
            "  --seed S               seed of random:N (default 0)\n"
            "  -v, --verbose          what is done, on stderr\n");
    return f == stdout ? 0 : 2;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tvmcc quantize: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run tvmcc quantize --help for usage)\n");
    return 2;
}

/* ------------------------------------------------------------ front end */

static Graph *front(Session *s, const char *what, const uint8_t *bytes, size_t size)
{
    Options o;
    Pipeline *pl = arena_alloc(s->a, sizeof *pl);
    Options *op = arena_alloc(s->a, sizeof *op);
    int i;
    options_init(&o);
    o.model = bytes ? what : s->q->model;
    o.model_data = bytes;
    o.model_size = size;
    o.out_dir = NULL;
    o.last_pass = "dce";
    for (i = 0; i < s->q->n_shapes; i++)
        o.shapes[o.n_shapes++] = s->q->shapes[i];
    *op = o;
    pipeline_init(pl, op, s->a, s->d);
    if (pipeline_front(pl))
        return NULL;
    return pl->prog.g;
}

/* every name of --keep-float / --int16 names a live node of the prepared
 * graph as quant/qdq.c matches them (qdq_node_named) */
static int check_names(Session *s, const Graph *g, const char *option, const char *const *list,
                       int n)
{
    int i;
    int32_t ni;
    for (i = 0; i < n; i++) {
        int found = 0;
        for (ni = 0; ni < g->n_nodes && !found; ni++)
            found = !g->nodes[ni].dead && qdq_node_named(g, &g->nodes[ni], list[i]);
        if (!found) {
            diag_error(s->d, NULL, option, "no node named '%s' and none whose first output has "
                       "that name (after BatchNormalization folding and the opset-13 forms)",
                       list[i]);
            return 1;
        }
    }
    return 0;
}

static int check_float_model(Session *s, Graph *g)
{
    int32_t ni, i;
    int floats = 0;
    if (g->in_tags || g->out_tags) {
        diag_error(s->d, NULL, NULL, "sequence and optional graph inputs and outputs cannot be "
                   "quantized");
        return 1;
    }
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        int k;
        if (n->dead)
            continue;
        if (n->op == OP_QuantizeLinear || n->op == OP_DequantizeLinear || n->quant ||
            n->op == OP_QLinearConv || n->op == OP_QLinearMatMul || n->op == OP_DynamicQuantizeLinear) {
            diag_error(s->d, n, NULL, "the model is already quantized");
            return 1;
        }
        for (k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && g->values[n->out[k]].dtype == DT_FLOAT32)
                floats = 1;
    }
    for (i = 0; i < g->n_inputs; i++)
        if (g->values[g->inputs[i]].dtype == DT_FLOAT32)
            floats = 1;
    if (!floats) {
        diag_error(s->d, NULL, NULL, "the model has no float32 tensors to quantize");
        return 1;
    }
    return 0;
}

static uint8_t *write_graph(Session *s, const Graph *g, size_t *size)
{
    OnnxWriteOptions wo;
    memset(&wo, 0, sizeof wo);
    wo.opset = 13;
    wo.producer = "tvmcc quantize";
    wo.producer_version = TVMCC_VERSION;
    wo.graph_name = "tvmcc_quantized";
    return onnx_write_model(g, &wo, size, s->d);
}

/* g's bytes with extra outputs (value indexes) appended */
static uint8_t *write_with_outputs(Session *s, Graph *g, const int32_t *extra, int n_extra,
                                   size_t *size)
{
    int32_t *saved = g->outputs, n_saved = g->n_outputs, *outs;
    uint8_t *bytes;
    outs = arena_array(s->a, (size_t)(n_saved + n_extra) + 1, sizeof *outs);
    memcpy(outs, saved, (size_t)n_saved * sizeof *outs);
    memcpy(outs + n_saved, extra, (size_t)n_extra * sizeof *outs);
    g->outputs = outs;
    g->n_outputs = n_saved + n_extra;
    bytes = write_graph(s, g, size);
    g->outputs = saved;
    g->n_outputs = n_saved;
    return bytes;
}

/* ---------------------------------------------------------- calibration */

static int input_index(const Graph *g, const char *name)
{
    int i;
    for (i = 0; i < g->n_inputs; i++)
        if (!strcmp(g->values[g->inputs[i]].name, name))
            return i;
    return -1;
}

static int output_index(const Graph *g, const char *name)
{
    int i;
    for (i = 0; i < g->n_outputs; i++)
        if (!strcmp(g->values[g->outputs[i]].name, name))
            return i;
    return -1;
}

/* the float model with every needed tensor as an output, built for the host */
static int build_float_model(Session *s)
{
    Graph *g = s->g;
    int32_t *extra = arena_array(s->a, (size_t)s->needs.n + 1, sizeof *extra);
    int i, n_extra = 0, rc;
    uint8_t *bytes;
    size_t size;
    s->n_orig_out = g->n_outputs;
    s->need_src = arena_array(s->a, (size_t)s->needs.n + 1, sizeof *s->need_src);
    for (i = 0; i < s->needs.n; i++) {
        const char *name = s->needs.names[i];
        int k = input_index(g, name), o;
        int32_t vi;
        if (k >= 0) {
            s->need_src[i] = -(k + 2);
            continue;
        }
        if ((o = output_index(g, name)) >= 0) {
            s->need_src[i] = o;
            continue;
        }
        vi = graph_find_value(g, name);
        if (vi < 0 || g->values[vi].data) {
            diag_error(s->d, NULL, name, "internal: the prepared model has no such tensor");
            return 1;
        }
        s->need_src[i] = s->n_orig_out + n_extra;
        extra[n_extra++] = vi;
    }
    bytes = write_with_outputs(s, g, extra, n_extra, &size);
    if (!bytes)
        return 1;
    rc = host_model_build(s->a, bytes, size, "float model", s->q->shapes, s->q->n_shapes,
                          s->q->verbose, &s->fm, s->d);
    free(bytes);
    s->fm_built = rc == 0;
    return rc;
}

static const float *need_data(const Session *s, int i, int sample, const SampleSet *set,
                              void *const *out)
{
    int src = s->need_src[i];
    if (src <= -2)
        return set->inputs[sample][-src - 2];
    return out[src];
}

static int64_t need_numel(const Session *s, int i)
{
    int src = s->need_src[i];
    const Value *v = src <= -2 ? &s->g->values[s->g->inputs[-src - 2]] : &s->fm.outputs[src];
    return value_numel(v);
}

static const Value *need_value(const Session *s, int i)
{
    int src = s->need_src[i];
    return src <= -2 ? &s->g->values[s->g->inputs[-src - 2]] : &s->fm.outputs[src];
}

static int pass1(void *ctx, int sample, void *const *out)
{
    Session *s = ctx;
    int i;
    for (i = 0; i < s->needs.n; i++) {
        const float *x = need_data(s, i, sample, &s->calib, out);
        int64_t n = need_numel(s, i);
        range_add(&s->stats[i], x, n);
        if (s->chan_sum[i]) {
            const Value *v = need_value(s, i);
            int axis = s->needs.chan_axis[i], k;
            int64_t ch = v->dims[axis], inner = 1, e;
            for (k = axis + 1; k < v->rank; k++)
                inner *= v->dims[k];
            for (e = 0; e < n; e++)
                if (isfinite(x[e]))
                    s->chan_sum[i][(e / inner) % ch] += x[e];
            s->chan_count[i] += n / (ch ? ch : 1);
        }
    }
    for (i = 0; i < s->hs.n; i++) {
        HessianEntry *h = &s->hs.e[i];
        hessian_add(h, need_data(s, h->need, sample, &s->calib, out), need_value(s, h->need)->dims);
    }
    return 0;
}

static int pass2(void *ctx, int sample, void *const *out)
{
    Session *s = ctx;
    int i;
    for (i = 0; i < s->needs.n; i++)
        range_hist_add(&s->stats[i], need_data(s, i, sample, &s->calib, out), need_numel(s, i));
    return 0;
}

static int run_inputs_only(Session *s, SampleFn fn)
{
    int i;
    for (i = 0; i < s->calib.n_samples; i++)
        if (fn(s, i, NULL))
            return 1;
    return 0;
}

static int calibrate(Session *s)
{
    int i, any_out = 0;
    s->stats = arena_array(s->a, (size_t)s->needs.n + 1, sizeof *s->stats);
    s->chan_sum = arena_array(s->a, (size_t)s->needs.n + 1, sizeof *s->chan_sum);
    s->chan_count = arena_array(s->a, (size_t)s->needs.n + 1, sizeof *s->chan_count);
    for (i = 0; i < s->needs.n; i++) {
        range_init(&s->stats[i]);
        s->chan_sum[i] = NULL;
        s->chan_count[i] = 0;
        if (s->need_src[i] > -2)
            any_out = 1;
    }
    for (i = 0; i < s->needs.n; i++)
        if (s->needs.chan_axis[i] >= 0) {
            const Value *v = need_value(s, i);
            int64_t ch = v->dims[s->needs.chan_axis[i]];
            s->chan_sum[i] = arena_array(s->a, (size_t)ch + 1, sizeof **s->chan_sum);
            memset(s->chan_sum[i], 0, ((size_t)ch + 1) * sizeof **s->chan_sum);
        }
    if (s->q->gptq && hessian_plan(s->a, s->g, s->needs.names, s->needs.n, &s->hs)) {
        diag_error(s->d, NULL, NULL, "out of memory for the inputs' second moments");
        return 1;
    }
    if (any_out ? host_model_run(&s->fm, &s->calib, pass1, s, "calibration (min/max)", s->d)
                : run_inputs_only(s, pass1))
        return 1;
    if (s->q->gptq) {
        hessian_finish(&s->hs, s->q->verbose ? stderr : NULL);
        s->q->cfg.hessians = &s->hs;
        if (s->q->verbose)
            fprintf(stderr, "tvmcc quantize: gptq: %d conv%s rounded against their inputs\n",
                    s->hs.n, s->hs.n == 1 ? "" : "s");
    }
    if (s->q->method == RANGE_MINMAX && !s->q->method_auto)
        return 0;
    for (i = 0; i < s->needs.n; i++)
        if (range_hist_begin(&s->stats[i], s->a, 2048)) {
            diag_error(s->d, NULL, NULL, "out of memory for the histograms");
            return 1;
        }
    return any_out ? host_model_run(&s->fm, &s->calib, pass2, s, "calibration (histograms)",
                                    s->d)
                   : run_inputs_only(s, pass2);
}

/* Each tensor's range by method m on the activation type's grid, and on
 * the int16 grid as well when some layers may be int16 (--int16, or the
 * --max-loss search). On the int16 grid percentile gives way to mse: a
 * step is 1/256 of the int8 one, and clipping a percentile's tail costs
 * far more than the rounding it saves (PP-OCRv4 det, every activation
 * int16: 22.64 dB with percentile ranges, 29.26 with mse). */
static RangeTable *choose_ranges(Session *s, RangeMethod m)
{
    RangeTable *r = arena_alloc(s->a, sizeof *r);
    QGrid grid, grid16;
    RangeMethod m16 = m == RANGE_PERCENTILE ? RANGE_MSE : m;
    int i, want16 = (s->q->n_int16 > 0 || s->q->max_loss >= 0) && s->q->cfg.act != DT_INT16;
    if (s->q->cfg.act == DT_INT16)
        m = m16;
    range_grid(s->q->cfg.act, &grid);
    range_grid(DT_INT16, &grid16);
    r->n = s->needs.n;
    r->t = arena_array(s->a, (size_t)r->n + 1, sizeof *r->t);
    for (i = 0; i < r->n; i++) {
        TensorRange *t = &r->t[i];
        memset(t, 0, sizeof *t);
        t->name = s->needs.names[i];
        t->chan_axis = -1;
        if (range_choose(&s->stats[i], m, s->q->percentile, grid, &t->rmin, &t->rmax) ||
            (want16 && range_choose(&s->stats[i], m16, s->q->percentile, grid16, &t->rmin16,
                                    &t->rmax16))) {
            diag_error(s->d, NULL, t->name, "no range could be chosen for this tensor");
            return NULL;
        }
        t->have16 = want16;
        if (s->chan_sum[i] && s->chan_count[i] > 0) {
            const Value *v = need_value(s, i);
            int64_t ch = v->dims[s->needs.chan_axis[i]], c;
            t->chan_axis = s->needs.chan_axis[i];
            t->channels = ch;
            t->chan_mean = arena_array(s->a, (size_t)ch + 1, sizeof *t->chan_mean);
            for (c = 0; c < ch; c++)
                t->chan_mean[c] = s->chan_sum[i][c] / (double)s->chan_count[i];
        }
    }
    return r;
}

/* ----------------------------------------------------------- evaluation */

typedef struct EvalCtx {
    Session *s;
    Eval *e;
    const HostModel *qm;
    int *q_src;                 /* tensor i: output index in qm */
} EvalCtx;

static double db(double sig, double err)
{
    double v;
    if (err <= 0)
        return 100.0;
    if (sig <= 0)
        return -100.0;
    v = 10.0 * log10(sig / err);
    return v > 100 ? 100 : v < -100 ? -100 : v;
}

static double deq(DType t, const void *q, int64_t i, float scale, int32_t zp)
{
    int32_t v = t == DT_UINT8 ? ((const uint8_t *)q)[i] : t == DT_INT16 ? ((const int16_t *)q)[i]
                                                                       : ((const int8_t *)q)[i];
    return (double)(v - zp) * (double)scale;
}

static int32_t zp_of(DType t, const void *z)
{
    return t == DT_UINT8 ? ((const uint8_t *)z)[0] : t == DT_INT16 ? ((const int16_t *)z)[0]
                                                                   : ((const int8_t *)z)[0];
}

static int64_t argmax_row(const float *x, int64_t row, int64_t len)
{
    int64_t k, best = 0;
    for (k = 1; k < len; k++)
        if (x[row * len + k] > x[row * len + best])
            best = k;
    return best;
}

/* Whether row `row` of f and q share a top-1 position: one where both
 * rows reach their maximum (a saturated output ties at it, in either). */
static int top1_agree(const float *f, const float *q, int64_t row, int64_t len)
{
    float mf = f[row * len + argmax_row(f, row, len)], mq = q[row * len + argmax_row(q, row, len)];
    int64_t k;
    for (k = 0; k < len; k++)
        if (f[row * len + k] == mf && q[row * len + k] == mq)
            return 1;
    return 0;
}

static int eval_sample(void *ctx, int sample, void *const *fo, void *const *qo)
{
    EvalCtx *c = ctx;
    Session *s = c->s;
    Eval *e = c->e;
    int i;
    const SampleSet *set = s->q->eval ? &s->eval : &s->calib;
    for (i = 0; i < e->n_tensors; i++) {
        TensorStat *t = &e->t[i];
        const float *f = need_data(s, i, sample, set, fo);
        const void *q = c->q_src[i] >= 0 ? qo[c->q_src[i]] : NULL;
        int64_t n = need_numel(s, i), k;
        if (!q)
            continue;
        for (k = 0; k < n; k++) {
            double dv = (double)f[k] - deq(t->type, q, k, t->scale, t->zp);
            if (!isfinite(f[k]))
                continue;
            t->sig += (double)f[k] * f[k];
            t->err += dv * dv;
        }
    }
    for (i = 0; i < e->n_outputs; i++) {
        OutputStat *o = &e->o[i];
        const Value *v = &s->fm.outputs[i];
        int64_t n = value_numel(v), k, len, rows;
        double sig = 0, err = 0, v_db;
        if (v->dtype != DT_FLOAT32)
            continue;
        {
            const float *f = fo[i], *q = qo[i];
            for (k = 0; k < n; k++) {
                double dv = (double)f[k] - q[k];
                sig += (double)f[k] * f[k];
                err += dv * dv;
            }
            v_db = db(sig, err);
            o->sqnr_mean += v_db;
            if (sample == 0 || v_db < o->sqnr_min)
                o->sqnr_min = v_db;
            len = v->rank > 0 ? v->dims[v->rank - 1] : 1;
            rows = len > 1 ? n / len : 0;
            for (k = 0; k < rows; k++) {
                e->rows++;
                o->rows++;
                if (top1_agree(f, q, k, len)) {
                    e->agree++;
                    o->top1 += 1;
                }
            }
            if (set->n_outputs > 0 && set->outputs[sample][i]) {
                const float *r = set->outputs[sample][i];
                double rs = 0, ef = 0, eq = 0;
                for (k = 0; k < n; k++) {
                    rs += (double)r[k] * r[k];
                    ef += ((double)r[k] - f[k]) * ((double)r[k] - f[k]);
                    eq += ((double)r[k] - q[k]) * ((double)r[k] - q[k]);
                }
                o->ref_sqnr_float += db(rs, ef);
                o->ref_sqnr_quant += db(rs, eq);
            }
        }
    }
    e->n_samples++;
    return 0;
}

static const char *producer_op(const Graph *g, const char *name, const char **node)
{
    int32_t vi = graph_find_value(g, name), p;
    *node = "";
    if (vi < 0 || (p = g->values[vi].producer) < 0)
        return "input";
    *node = g->nodes[p].name ? g->nodes[p].name : "";
    return g->nodes[p].op_type;
}

/* Quantizes P with ranges r and the current --keep-float list, evaluates
 * it, and returns the QDQ model's bytes (without the extra outputs). */
static uint8_t *quantize_eval(Session *s, const RangeTable *r, Eval *e, size_t *size)
{
    Graph *g3 = front(s, "prepared model", s->p_bytes, s->p_size);
    int32_t *extra;
    int i, n_extra = 0, rc;
    uint8_t *bytes, *qe;
    size_t qe_size;
    HostModel qm;
    EvalCtx c;
    const SampleSet *set = s->q->eval ? &s->eval : &s->calib;
    if (!g3)
        return NULL;
    s->q->cfg.keep_float = s->q->keep;
    s->q->cfg.n_keep_float = s->q->n_keep;
    s->q->cfg.int16_nodes = s->q->int16;
    s->q->cfg.n_int16 = s->q->n_int16;
    if (qdq_apply(g3, &s->q->cfg, r, s->d))
        return NULL;
    bytes = write_graph(s, g3, size);
    if (!bytes)
        return NULL;
    memset(e, 0, sizeof *e);
    memset(&c, 0, sizeof c);
    c.s = s;
    c.e = e;
    e->n_tensors = s->needs.n;
    e->t = arena_array(s->a, (size_t)e->n_tensors + 1, sizeof *e->t);
    e->n_outputs = s->n_orig_out;
    e->o = arena_array(s->a, (size_t)e->n_outputs + 1, sizeof *e->o);
    memset(e->o, 0, ((size_t)e->n_outputs + 1) * sizeof *e->o);
    c.q_src = arena_array(s->a, (size_t)e->n_tensors + 1, sizeof *c.q_src);
    extra = arena_array(s->a, (size_t)e->n_tensors + 1, sizeof *extra);
    for (i = 0; i < e->n_tensors; i++) {
        TensorStat *t = &e->t[i];
        int32_t qv = graph_find_value(g3, arena_printf(s->a, "%s_QuantizeLinear_Output",
                                                       s->needs.names[i]));
        int32_t pi;
        memset(t, 0, sizeof *t);
        t->name = s->needs.names[i];
        t->op = producer_op(s->g, t->name, &t->node);
        c.q_src[i] = -1;
        if (qv < 0 || (pi = g3->values[qv].producer) < 0)
            continue; /* not quantized (kept in float) */
        t->scale = *(const float *)g3->values[g3->nodes[pi].in[1]].data;
        t->type = g3->values[qv].dtype;
        t->zp = zp_of(t->type, g3->values[g3->nodes[pi].in[2]].data);
        c.q_src[i] = g3->n_outputs + n_extra;
        extra[n_extra++] = qv;
    }
    qe = write_with_outputs(s, g3, extra, n_extra, &qe_size);
    if (!qe) {
        free(bytes);
        return NULL;
    }
    rc = host_model_build(s->a, qe, qe_size, "quantized model", s->q->shapes, s->q->n_shapes,
                          s->q->verbose, &qm, s->d);
    free(qe);
    if (rc == 0) {
        c.qm = &qm;
        rc = host_model_run_pair(&s->fm, &qm, set, eval_sample, &c, "evaluation", s->d);
    }
    host_model_free(&qm);
    if (rc != 0) {
        free(bytes);
        return NULL;
    }
    e->sqnr = 0;
    for (i = 0; i < e->n_tensors; i++)
        e->t[i].sqnr = c.q_src[i] >= 0 ? db(e->t[i].sig, e->t[i].err) : NAN;
    for (i = 0; i < e->n_outputs; i++) {
        OutputStat *o = &e->o[i];
        o->name = s->fm.outputs[i].name;
        o->sqnr_mean /= e->n_samples ? e->n_samples : 1;
        o->top1 = o->rows ? o->top1 / (double)o->rows : -1;
        if (set->n_outputs > 0) {
            o->ref_sqnr_float /= e->n_samples ? e->n_samples : 1;
            o->ref_sqnr_quant /= e->n_samples ? e->n_samples : 1;
        } else {
            o->ref_sqnr_float = o->ref_sqnr_quant = NAN;
        }
        e->sqnr += o->sqnr_mean;
    }
    e->sqnr /= e->n_outputs ? e->n_outputs : 1;
    return bytes;
}

/* ------------------------------------------------------- --max-loss */

static int in_list(const char *const *list, int n, const char *name)
{
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(list[i], name))
            return 1;
    return 0;
}

/* how --keep-float, --int16 and --max-loss name a quantized node */
static const char *node_key(const QdqNodeInfo *n)
{
    return n->node[0] ? n->node : n->output;
}

/* the SQNR a quantized node loses: its output's below the lowest of its
 * activation inputs' (dB); NAN when its output was not measured */
static double sqnr_lost(const Eval *e, const QdqNodeInfo *n)
{
    double out_db = NAN, in_db = 100;
    int j, k;
    for (j = 0; j < e->n_tensors; j++) {
        if (!strcmp(e->t[j].name, n->output))
            out_db = e->t[j].sqnr;
        for (k = 0; k < n->n_inputs; k++)
            if (!strcmp(e->t[j].name, n->inputs[k]) && !isnan(e->t[j].sqnr) &&
                e->t[j].sqnr < in_db)
                in_db = e->t[j].sqnr;
    }
    return in_db - out_db;
}

/* the quantized node that loses most, of those not marked in skip; -1 when
 * none is left */
static int worst_node(const Eval *e, QdqNodeInfo *nodes, int n_nodes, const uint8_t *skip)
{
    int i, best = -1;
    double best_loss = -1e300;
    for (i = 0; i < n_nodes; i++) {
        double loss;
        if (skip[i] || isnan(loss = sqnr_lost(e, &nodes[i])))
            continue;
        if (loss > best_loss) {
            best_loss = loss;
            best = i;
        }
    }
    return best;
}

/* The --max-loss search's state: the best model so far and its figures. */
typedef struct Search {
    Session *s;
    uint8_t *best;
    size_t best_size;
    Eval best_e;
    int steps;                  /* evaluations done */
    RangeTable *r;              /* the ranges (the same for every step) */
    const char **tried;         /* layers whose last step did not help */
    int n_tried;
} Search;

enum { SEARCH_STEPS = 64 };

/* the quantized nodes under the current --keep-float / --int16 lists */
static int current_nodes(Search *x, QdqNodeInfo **nodes)
{
    QOptions *q = x->s->q;
    Graph *g = front(x->s, "prepared model", x->s->p_bytes, x->s->p_size);
    if (!g)
        return -1;
    q->cfg.int16_nodes = q->int16;
    q->cfg.n_int16 = q->n_int16;
    return qdq_quantized_nodes(g, &q->cfg, nodes, x->s->d);
}

/* Quantizes and evaluates under the current lists; *better is set when the
 * output SQNR is at least `need` (then the model becomes the best one),
 * else the caller undoes its change. 0, or 1 after reporting. */
static int search_eval(Search *x, double need, const char *what, int *better)
{
    QOptions *q = x->s->q;
    uint8_t *bytes;
    size_t size;
    Eval e;
    x->steps++;
    if (!(bytes = quantize_eval(x->s, x->r, &e, &size)))
        return 1;
    *better = e.sqnr >= need;
    if (*better) {
        free(x->best);
        x->best = bytes;
        x->best_size = size;
        x->best_e = e;
    } else {
        free(bytes);
    }
    if (q->verbose)
        fprintf(stderr, "tvmcc quantize: --max-loss: %s: %.2f dB, %s; %d node%s in int16, %d in "
                "float\n", what, e.sqnr, *better ? "kept" : "undone", q->n_int16,
                q->n_int16 == 1 ? "" : "s", q->n_keep);
    return 0;
}

/* Upward: the layer that loses most (worst_node) to int16 (8-bit
 * activations), or to float when it is int16 already, kept only when the
 * output SQNR rises (a layer whose step did not help is not tried again);
 * one layer a step for the first 8 kept steps, then batches of 2, 4, ...
 * 32. Stops at the bound, after max_steps evaluations, or when nothing is
 * left to try. */
static int search_up(Search *x, int max_steps)
{
    QOptions *q = x->s->q;
    const char **tried = x->tried;
    int accepted = 0, stop = x->steps + max_steps;
    while (x->best_e.sqnr < q->max_loss && x->steps < stop && x->steps < SEARCH_STEPS) {
        QdqNodeInfo *nodes;
        int n_nodes, w, i, b, batch = accepted < 8 ? 1 : 1 << (accepted - 7 < 5 ? accepted - 7 : 5);
        int n16 = q->n_int16, nkeep = q->n_keep, kept;
        uint8_t *skip;
        if ((n_nodes = current_nodes(x, &nodes)) < 0)
            return 1;
        skip = arena_alloc(x->s->a, (size_t)n_nodes + 1);
        for (i = 0; i < n_nodes; i++)
            skip[i] = (uint8_t)in_list(tried, x->n_tried, node_key(&nodes[i]));
        for (b = 0; b < batch && x->n_tried < MAX_KEEP; b++) {
            const char *key;
            int to16;
            if ((w = worst_node(&x->best_e, nodes, n_nodes, skip)) < 0)
                break;
            skip[w] = 1;
            key = node_key(&nodes[w]);
            to16 = q->cfg.act != DT_INT16 && !in_list(q->int16, q->n_int16, key);
            if ((to16 ? q->n_int16 : q->n_keep) >= MAX_KEEP)
                break;
            if (to16)
                q->int16[q->n_int16++] = key;
            else
                q->keep[q->n_keep++] = key;
            tried[x->n_tried++] = key;
            if (q->verbose)
                fprintf(stderr, "tvmcc quantize: --max-loss: %s (%s) %s\n", key, nodes[w].op,
                        to16 ? "to int16" : "to float");
        }
        if (b == 0)
            break;
        if (search_eval(x, nextafter(x->best_e.sqnr, INFINITY), "step", &kept))
            return 1;
        if (kept) {
            int j = 0;
            accepted++;
            /* a layer this step moved to int16 may go on to float */
            for (i = 0; i < x->n_tried; i++)
                if (!in_list(q->int16 + n16, q->n_int16 - n16, tried[i]))
                    tried[j++] = tried[i];
            x->n_tried = j;
        } else {
            q->n_int16 = n16;
            q->n_keep = nkeep;
        }
    }
    return 0;
}

typedef struct Cand {
    const char *key;
    double loss;
    int index;
} Cand;

static int cand_cmp(const void *a, const void *b)
{
    const Cand *x = a, *y = b;
    if (x->loss != y->loss)
        return x->loss < y->loss ? -1 : 1;
    return x->index - y->index;
}

/* drops the n names of drop from list (*n_list entries) */
static void list_remove(const char **list, int *n_list, const Cand *drop, int n)
{
    int i, j = 0, k;
    for (i = 0; i < *n_list; i++) {
        for (k = 0; k < n && strcmp(list[i], drop[k].key); k++)
            ;
        if (k == n)
            list[j++] = list[i];
    }
    *n_list = j;
}

/* Downward (8-bit activations): every quantized 8-bit layer to int16 at
 * once (kept when that is better); when it meets the bound, layers go back
 * to 8 bits, least damaging first (their loss in the last 8-bit
 * evaluation), in chunks: half of them first; a chunk that breaks the
 * bound is halved (a single layer that breaks it stays int16), one that
 * holds doubles the next. *met: the bound was met. */
static int search_down(Search *x, int *met)
{
    QOptions *q = x->s->q;
    QdqNodeInfo *nodes;
    Eval ref = x->best_e;
    Cand *c;
    int n_nodes, n = 0, i, pos, chunk, ok;
    *met = 0;
    if ((n_nodes = current_nodes(x, &nodes)) < 0)
        return 1;
    c = arena_array(x->s->a, (size_t)n_nodes + 1, sizeof *c);
    for (i = 0; i < n_nodes; i++) {
        const char *key = node_key(&nodes[i]);
        if (in_list(q->int16, q->n_int16, key) || q->n_int16 + n >= MAX_KEEP)
            continue;
        c[n].key = key;
        c[n].loss = sqnr_lost(&ref, &nodes[i]);
        if (isnan(c[n].loss))
            c[n].loss = 0;
        c[n].index = i;
        n++;
    }
    if (n == 0)
        return 0;
    qsort(c, (size_t)n, sizeof *c, cand_cmp);
    for (i = 0; i < n; i++)
        q->int16[q->n_int16++] = c[i].key;
    if (search_eval(x, nextafter(x->best_e.sqnr, INFINITY), "every 8-bit layer to int16", &ok))
        return 1;
    if (!ok)
        list_remove(q->int16, &q->n_int16, c, n);
    if (!ok || x->best_e.sqnr < q->max_loss)
        return 0; /* the upward search goes on from the better of the two */
    *met = 1;
    for (pos = 0, chunk = (n + 1) / 2; pos < n && x->steps < SEARCH_STEPS;) {
        int m = chunk < n - pos ? chunk : n - pos;
        list_remove(q->int16, &q->n_int16, c + pos, m);
        if (search_eval(x, q->max_loss, m == 1 ? c[pos].key : "a chunk back to 8 bits", &ok))
            return 1;
        if (ok) {
            pos += m;
            chunk = 2 * m; /* a chunk that held: try a larger one */
            continue;
        }
        for (i = pos; i < pos + m; i++)
            q->int16[q->n_int16++] = c[i].key;
        if (m == 1)
            pos++;
        else
            chunk = m / 2;
    }
    return 0;
}

/* --max-loss: up to 8 upward steps (search_up; enough where one or two
 * layers are the trouble), then, with 8-bit activations, the downward
 * search, then upward again (to float) with what is left of the 64
 * evaluations. TVMCC_TEST_MAX_LOSS_UP=N (a test hook) sets the first
 * upward steps. */
static int max_loss_search(Session *s, uint8_t **best, size_t *best_size, Eval *best_e)
{
    QOptions *q = s->q;
    Search x;
    int met = 0, rc, up = 8;
    const char *env;
    memset(&x, 0, sizeof x);
    x.s = s;
    x.best = *best;
    x.best_size = *best_size;
    x.best_e = *best_e;
    x.tried = arena_array(s->a, MAX_KEEP, sizeof *x.tried);
    if (!(x.r = choose_ranges(s, q->method)))
        return 1;
    if ((env = getenv("TVMCC_TEST_MAX_LOSS_UP")) && *env)
        up = atoi(env);
    rc = search_up(&x, up < 0 ? 0 : up);
    if (!rc && x.best_e.sqnr < q->max_loss && q->cfg.act != DT_INT16)
        rc = search_down(&x, &met);
    if (!rc && !met)
        rc = search_up(&x, SEARCH_STEPS);
    q->cfg.int16_nodes = q->int16;
    q->cfg.n_int16 = q->n_int16;
    *best = x.best;
    *best_size = x.best_size;
    *best_e = x.best_e;
    return rc;
}

/* ------------------------------------------------------------- report */

static void print_report(Session *s, const Eval *e, const char *method, FILE *f)
{
    int i;
    fprintf(f, "tvmcc quantize: %s, %s activations, %s weights, method %s, %d sample%s\n",
            s->q->model, dtype_name(s->q->cfg.act), s->q->cfg.per_channel ? "per-channel"
                                                                         : "per-tensor",
            method, e->n_samples, e->n_samples == 1 ? "" : "s");
    fprintf(f, "%-40s %-18s %-5s %12s %5s %9s\n", "tensor", "producer", "type", "scale", "zp",
            "SQNR dB");
    for (i = 0; i < e->n_tensors; i++) {
        const TensorStat *t = &e->t[i];
        if (!isnan(t->sqnr))
            fprintf(f, "%-40s %-18s %-5s %12.6g %5d %9.2f\n", t->name, t->op,
                    dtype_name(t->type), (double)t->scale, (int)t->zp, t->sqnr);
    }
    for (i = 0; i < e->n_outputs; i++) {
        const OutputStat *o = &e->o[i];
        fprintf(f, "output %s: SQNR mean %.2f dB, worst %.2f dB", o->name, o->sqnr_mean,
                o->sqnr_min);
        if (o->top1 >= 0)
            fprintf(f, ", top-1 agreement %.2f%% of %lld", 100 * o->top1, (long long)o->rows);
        if (!isnan(o->ref_sqnr_float))
            fprintf(f, "; against output_%d.pb: float %.2f dB, quantized %.2f dB", i,
                    o->ref_sqnr_float, o->ref_sqnr_quant);
        fprintf(f, "\n");
    }
}

static cJSON *eval_json(const Eval *e)
{
    cJSON *o = cJSON_CreateObject(), *outs = cJSON_CreateArray(), *ts = cJSON_CreateArray();
    int i;
    cJSON_AddNumberToObject(o, "samples", e->n_samples);
    cJSON_AddNumberToObject(o, "output_sqnr_db", e->sqnr);
    for (i = 0; i < e->n_outputs; i++) {
        const OutputStat *s = &e->o[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", s->name);
        cJSON_AddNumberToObject(j, "sqnr_db_mean", s->sqnr_mean);
        cJSON_AddNumberToObject(j, "sqnr_db_worst", s->sqnr_min);
        if (s->top1 >= 0) {
            cJSON_AddNumberToObject(j, "top1_agreement", s->top1);
            cJSON_AddNumberToObject(j, "rows", (double)s->rows);
        }
        if (!isnan(s->ref_sqnr_float)) {
            cJSON_AddNumberToObject(j, "reference_sqnr_db_float", s->ref_sqnr_float);
            cJSON_AddNumberToObject(j, "reference_sqnr_db_quantized", s->ref_sqnr_quant);
        }
        cJSON_AddItemToArray(outs, j);
    }
    cJSON_AddItemToObject(o, "outputs", outs);
    for (i = 0; i < e->n_tensors; i++) {
        const TensorStat *t = &e->t[i];
        cJSON *j;
        if (isnan(t->sqnr))
            continue; /* not quantized: inside an integer op, or kept float */
        j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "name", t->name);
        cJSON_AddStringToObject(j, "producer", t->op);
        cJSON_AddStringToObject(j, "node", t->node);
        cJSON_AddStringToObject(j, "type", dtype_name(t->type));
        cJSON_AddNumberToObject(j, "scale", (double)t->scale);
        cJSON_AddNumberToObject(j, "zero_point", t->zp);
        cJSON_AddNumberToObject(j, "sqnr_db", t->sqnr);
        cJSON_AddItemToArray(ts, j);
    }
    cJSON_AddItemToObject(o, "tensors", ts);
    return o;
}

/* path with ".onnx" replaced by ext (or ext appended) */
static char *sibling(Arena *a, const char *path, const char *ext)
{
    size_t n = strlen(path);
    if (n > 5 && !strcmp(path + n - 5, ".onnx"))
        n -= 5;
    return arena_printf(a, "%.*s%s", (int)n, path, ext);
}

/* writes both files through temporary names, then renames them */
static int write_outputs(Session *s, const uint8_t *model, size_t size, const char *json)
{
    const char *jpath = sibling(s->a, s->q->out, ".json");
    const char *tm = arena_printf(s->a, "%s.tmp%ld", s->q->out, (long)getpid());
    const char *tj = arena_printf(s->a, "%s.tmp%ld", jpath, (long)getpid());
    FILE *f;
    int ok = 1;
    if (!(f = fopen(tm, "wb")) || fwrite(model, 1, size, f) != size)
        ok = 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (ok && (!(f = fopen(tj, "wb")) || fputs(json, f) < 0 || fputc('\n', f) < 0))
        ok = 0;
    if (ok && f && fclose(f) != 0)
        ok = 0;
    if (ok && (rename(tm, s->q->out) != 0 || rename(tj, jpath) != 0))
        ok = 0;
    if (!ok) {
        unlink(tm);
        unlink(tj);
        diag_error(s->d, NULL, s->q->out, "cannot write the quantized model or its report");
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------- driver */

static void print_list(FILE *f, const char *title, const char *const *list, int n)
{
    int i;
    if (!n)
        return;
    fputs(title, f);
    for (i = 0; i < n; i++)
        fprintf(f, " %s", list[i]);
    fputc('\n', f);
}

/* a comma-separated list of names appended to list[*n] */
static int parse_list(const char **list, int *n_list, const char *v)
{
    while (*v) {
        const char *c = strchr(v, ',');
        size_t n = c ? (size_t)(c - v) : strlen(v);
        char *name;
        if (*n_list >= MAX_KEEP)
            return 1;
        name = malloc(n + 1);
        if (!name)
            return 1;
        memcpy(name, v, n);
        name[n] = 0;
        if (n)
            list[(*n_list)++] = name;
        v += n + (c ? 1 : 0);
    }
    return 0;
}

static int run(Session *s)
{
    QOptions *q = s->q;
    Graph *g2;
    Eval best_e, e;
    uint8_t *best = NULL;
    size_t best_size = 0, size;
    RangeMethod methods[4] = {RANGE_MINMAX, RANGE_PERCENTILE, RANGE_MSE, RANGE_ENTROPY};
    double method_db[4];
    int n_methods = q->method_auto ? 4 : 1, mi, best_m = 0;
    cJSON *root, *jm;
    char *text;
    int rc;
    /* 1. the prepared float model */
    if (!(s->g = front(s, q->model, NULL, 0)) || check_float_model(s, s->g))
        return 1;
    if (ptq_prepare(s->g, s->d) ||
        check_names(s, s->g, "--keep-float", q->keep, q->n_keep) ||
        check_names(s, s->g, "--int16", q->int16, q->n_int16))
        return 1;
    if (q->equalize) {
        int pairs = ptq_equalize(s->g, 20, q->verbose ? stderr : NULL);
        if (q->verbose)
            fprintf(stderr, "tvmcc quantize: cross-layer equalization: %d layer pair%s\n", pairs,
                    pairs == 1 ? "" : "s");
    }
    if (!(s->p_bytes = write_graph(s, s->g, &s->p_size)))
        return 1;
    /* the samples */
    if (samples_load(s->a, s->g, q->calib, q->seed, &s->calib, s->d))
        return 1;
    if (q->eval && samples_load(s->a, s->g, q->eval, q->seed + 1, &s->eval, s->d))
        return 1;
    /* 2. what to measure */
    if (!(g2 = front(s, "prepared model", s->p_bytes, s->p_size)))
        return 1;
    q->cfg.keep_float = q->keep;
    q->cfg.n_keep_float = q->n_keep;
    if (qdq_needs(g2, &q->cfg, &s->needs, s->d))
        return 1;
    /* 3. calibration */
    if (build_float_model(s) || calibrate(s))
        return 1;
    /* 4, 5. ranges, Q/DQ, evaluation (each method with --method auto) */
    for (mi = 0; mi < n_methods; mi++) {
        RangeMethod m = q->method_auto ? methods[mi] : q->method;
        RangeTable *r = choose_ranges(s, m);
        uint8_t *bytes;
        if (!r || !(bytes = quantize_eval(s, r, &e, &size)))
            return 1;
        method_db[mi] = e.sqnr;
        if (q->verbose || q->method_auto)
            fprintf(stderr, "tvmcc quantize: method %s: output SQNR %.2f dB\n",
                    range_method_name(m), e.sqnr);
        if (!best || e.sqnr > best_e.sqnr) {
            free(best);
            best = bytes;
            best_size = size;
            best_e = e;
            best_m = mi;
        } else {
            free(bytes);
        }
    }
    if (q->method_auto)
        q->method = methods[best_m];
    if (q->max_loss >= 0 && max_loss_search(s, &best, &best_size, &best_e))
        return 1;
    print_report(s, &best_e, range_method_name(q->method), stdout);
    print_list(stdout, "kept in float:", q->keep, q->n_keep);
    print_list(stdout, "in int16:", q->int16, q->n_int16);
    if (q->max_loss >= 0 && best_e.sqnr < q->max_loss)
        fprintf(stdout, "--max-loss %.2f dB not reached: %.2f dB when no step that was tried "
                "helped any more\n", q->max_loss, best_e.sqnr);
    root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", q->model);
    cJSON_AddStringToObject(root, "output", q->out);
    cJSON_AddStringToObject(root, "tvmcc_version", TVMCC_VERSION);
    cJSON_AddStringToObject(root, "method", range_method_name(q->method));
    cJSON_AddStringToObject(root, "activations", dtype_name(q->cfg.act));
    cJSON_AddStringToObject(root, "weights", q->cfg.per_channel ? "per-channel" : "per-tensor");
    cJSON_AddBoolToObject(root, "equalization", q->equalize);
    cJSON_AddBoolToObject(root, "bias_correction", q->cfg.bias_correction);
    cJSON_AddNumberToObject(root, "calibration_samples", s->calib.n_samples);
    cJSON_AddStringToObject(root, "evaluated_on", q->eval ? "eval" : "calibration");
    if (q->method_auto) {
        jm = cJSON_CreateObject();
        for (mi = 0; mi < 4; mi++)
            cJSON_AddNumberToObject(jm, range_method_name(methods[mi]), method_db[mi]);
        cJSON_AddItemToObject(root, "method_output_sqnr_db", jm);
    }
    jm = cJSON_CreateArray();
    for (mi = 0; mi < q->n_keep; mi++)
        cJSON_AddItemToArray(jm, cJSON_CreateString(q->keep[mi]));
    cJSON_AddItemToObject(root, "kept_float", jm);
    jm = cJSON_CreateArray();
    for (mi = 0; mi < q->n_int16; mi++)
        cJSON_AddItemToArray(jm, cJSON_CreateString(q->int16[mi]));
    cJSON_AddItemToObject(root, "int16", jm);
    cJSON_AddItemToObject(root, "accuracy", eval_json(&best_e));
    text = cJSON_Print(root);
    rc = text ? write_outputs(s, best, best_size, text) : 1;
    free(text);
    cJSON_Delete(root);
    free(best);
    return rc;
}

int quantize_main(int argc, char **argv)
{
    QOptions q;
    Session s;
    Arena a;
    Diag d;
    int i, rc;
    memset(&q, 0, sizeof q);
    q.method = RANGE_MSE;
    q.percentile = 99.99;
    q.cfg.act = DT_INT8;
    q.cfg.per_channel = 1;
    q.cfg.fuse_relu = 1;
    q.cfg.bias_correction = 1;
    q.max_loss = -1;
    q.equalize = 1;
    for (i = 0; i < argc; i++) {
        const char *o = argv[i], *v = NULL;
        int takes = !strcmp(o, "--calib") || !strcmp(o, "-o") || !strcmp(o, "--output") ||
                    !strcmp(o, "--input-shape") || !strcmp(o, "--method") ||
                    !strcmp(o, "--percentile") || !strcmp(o, "--activations") ||
                    !strcmp(o, "--keep-float") || !strcmp(o, "--int16") ||
                    !strcmp(o, "--max-loss") || !strcmp(o, "--weight-rounding") ||
                    !strcmp(o, "--eval") || !strcmp(o, "--seed");
        if (takes) {
            if (i + 1 >= argc)
                return usage_error("option %s needs a value", o);
            v = argv[++i];
        }
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            return usage(stdout);
        } else if (!strcmp(o, "-v") || !strcmp(o, "--verbose")) {
            q.verbose = 1;
        } else if (!strcmp(o, "--per-channel")) {
            q.cfg.per_channel = 1;
        } else if (!strcmp(o, "--per-tensor")) {
            q.cfg.per_channel = 0;
        } else if (!strcmp(o, "--no-equalize")) {
            q.equalize = 0;
        } else if (!strcmp(o, "--no-bias-correction")) {
            q.cfg.bias_correction = 0;
        } else if (!strcmp(o, "--no-fuse-relu")) {
            q.cfg.fuse_relu = 0;
        } else if (!strcmp(o, "--calib")) {
            q.calib = v;
        } else if (!strcmp(o, "-o") || !strcmp(o, "--output")) {
            q.out = v;
        } else if (!strcmp(o, "--eval")) {
            q.eval = v;
        } else if (!strcmp(o, "--input-shape")) {
            if (q.n_shapes >= MAX_SHAPE_BINDINGS)
                return usage_error("%s", "too many --input-shape options");
            q.shapes[q.n_shapes++] = v;
        } else if (!strcmp(o, "--method")) {
            if (!strcmp(v, "auto"))
                q.method_auto = 1;
            else if (range_method_parse(v, &q.method))
                return usage_error("--method must be minmax, percentile, mse, entropy or auto, "
                                   "not '%s'", v);
        } else if (!strcmp(o, "--percentile")) {
            char *end;
            q.percentile = strtod(v, &end);
            if (*end || !(q.percentile > 50 && q.percentile <= 100))
                return usage_error("--percentile takes a number above 50 and at most 100, not "
                                   "'%s'", v);
        } else if (!strcmp(o, "--activations")) {
            if (!strcmp(v, "int8"))
                q.cfg.act = DT_INT8;
            else if (!strcmp(v, "uint8"))
                q.cfg.act = DT_UINT8;
            else if (!strcmp(v, "int16"))
                q.cfg.act = DT_INT16;
            else
                return usage_error("--activations must be int8, uint8 or int16, not '%s'", v);
        } else if (!strcmp(o, "--keep-float")) {
            if (parse_list(q.keep, &q.n_keep, v))
                return usage_error("%s", "too many --keep-float names");
        } else if (!strcmp(o, "--int16")) {
            if (parse_list(q.int16, &q.n_int16, v))
                return usage_error("%s", "too many --int16 names");
        } else if (!strcmp(o, "--max-loss")) {
            char *end;
            q.max_loss = strtod(v, &end);
            if (*end || !(q.max_loss >= 0 && q.max_loss <= 100))
                return usage_error("--max-loss takes decibels from 0 to 100, not '%s'", v);
        } else if (!strcmp(o, "--weight-rounding")) {
            if (strcmp(v, "nearest") && strcmp(v, "gptq"))
                return usage_error("--weight-rounding must be nearest or gptq, not '%s'", v);
            q.gptq = !strcmp(v, "gptq");
        } else if (!strcmp(o, "--seed")) {
            char *end;
            q.seed = strtoull(v, &end, 10);
            if (*end || !*v)
                return usage_error("--seed takes a number, not '%s'", v);
        } else if (o[0] == '-' && o[1]) {
            return usage_error("unknown option %s", o);
        } else if (q.model) {
            return usage_error("more than one model given (%s)", o);
        } else {
            q.model = o;
        }
    }
    if (!q.model)
        return usage_error("%s", "no model given");
    if (!q.calib)
        return usage_error("%s", "no calibration samples given (--calib DIR or random:N)");
    if (!q.out)
        return usage_error("%s", "no output given (-o OUT.onnx)");
    arena_init(&a, (size_t)16 << 30);
    diag_init(&d, q.model);
    memset(&s, 0, sizeof s);
    s.a = &a;
    s.d = &d;
    s.q = &q;
    rc = run(&s);
    if (s.fm_built)
        host_model_free(&s.fm);
    else if (s.fm.dir)
        host_model_free(&s.fm);
    arena_free(&a);
    return rc ? 1 : 0;
}
