/*
 * Cross-layer equalization (quant/equalize.c) on the models that
 * test/quantize/make_cle_models.py writes, each loaded through the
 * pipeline front end as `tvmcc quantize` loads it. For each model:
 *
 *  - ptq_equalize rescales the expected number of pairs, and its log
 *    names the pairs it skipped and why;
 *  - the output-channel range ratio max_i r_i / min_i r_i of each layer 1
 *    dropped (the models multiply some channels by 50 to 300), and after
 *    convergence r1_i = r2_i on both sides of every channel;
 *  - the graph computes the same function: a reference evaluator written
 *    here (Conv, MaxPool, AveragePool, Relu, LeakyRelu, PRelu, Sigmoid, Clip,
 *    Add, Gemm, MatMul; double accumulation) runs a second, untouched load
 *    of the model and the equalized graph on random inputs, within 1e-4
 *    relative;
 *  - the loader's constant bytes are unchanged, and the graph verifies;
 *  - a model whose pairs are all blocked keeps every weight as it was.
 *
 *   build/equalize_test MODEL_DIR
 *   build/equalize_test --log MODEL.onnx...   equalize each model, print
 *                                             the log and the time taken
 *   build/equalize_test --emit MODEL.onnx DIR  compile the equalized model
 *                                             into DIR as tvmcc would
 *                                             (test/quantize/cle_models.sh)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../passes/passes.h"
#include "../../pipeline/pipeline.h"
#include "../../quant/equalize.h"

static int passed, failed;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (cond)                                                                        \
            passed++;                                                                    \
        else {                                                                           \
            failed++;                                                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                  \
            printf(__VA_ARGS__);                                                         \
            printf("\n");                                                                \
        }                                                                                \
    } while (0)

typedef struct Case {
    const char *file;
    int pairs;                /* pairs ptq_equalize must report rescaled */
    const char *l1[4], *l2[4]; /* their layers, NULL-terminated */
    const char *log[4];       /* words the log must contain */
} Case;

static const Case cases[] = {
    {"cle_conv_chain.onnx", 2, {"c1", "dw"}, {"dw", "c3"}, {"Conv 'c1' -> Relu -> AveragePool -> Conv 'dw'"}},
    {"cle_groups.onnx", 3, {"g1", "g2", "g3"}, {"g2", "g3", "g4"},
     {"PRelu -> MaxPool -> Conv 'g2'", "LeakyRelu -> Conv 'g3'"}},
    {"cle_gemm.onnx", 3, {"fc1", "fc2", "mm3"}, {"fc2", "mm3", "mm4"}, {"widened bias 'b2'"}},
    {"cle_matmul3d.onnx", 1, {"mm1"}, {"mm2"}, {"MatMul 'mm1' -> Relu -> MatMul 'mm2'"}},
    {"cle_blocked.onnx", 0, {NULL}, {NULL},
     {"Clip does not commute", "Sigmoid does not commute", "'q2' has 2 readers", "'q3' has 2 readers"}},
    {"cle_shared.onnx", 2, {"s1"}, {"s2"},
     {"Gemm 's1' -> Relu -> Gemm 's2'", "copied shared weight 'w', copied shared bias 'b'",
      "Gemm 't1' -> Relu -> Gemm 't2'", "copied shared weight 'v'"}},
};

/* ---- loading ---- */

typedef struct Loaded {
    Options o;
    Arena arena;
    Diag d;
    Pipeline pl;
} Loaded;

static Graph *load(Loaded *L, const char *path)
{
    options_init(&L->o);
    L->o.model = path;
    arena_init(&L->arena, (size_t)1 << 30);
    diag_init(&L->d, path);
    pipeline_init(&L->pl, &L->o, &L->arena, &L->d);
    if (pipeline_front(&L->pl))
        return NULL;
    return L->pl.prog.g;
}

static int32_t find_node(const Graph *g, const char *name)
{
    int32_t i;
    for (i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && !strcmp(g->nodes[i].name, name))
            return i;
    return -1;
}

/* ---- the reference evaluator ---- */

/* Flat index into `in` (broadcast to `out`'s shape, numpy rules) of
 * out's flat index oi. */
static int64_t bcast(const Value *out, const Value *in, int64_t oi)
{
    int64_t ii = 0, stride = 1;
    int k;
    for (k = out->rank - 1; k >= 0; k--) {
        int64_t c = oi % out->dims[k];
        int ki = k - (out->rank - in->rank);
        oi /= out->dims[k];
        if (ki < 0)
            continue;
        if (in->dims[ki] != 1)
            ii += c * stride;
        stride *= in->dims[ki];
    }
    return ii;
}

static void eval_conv(const Graph *g, const Node *n, double **val)
{
    const ConvWindow *win = node_window(n);
    const Value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]], *y = &g->values[n->out[0]];
    const double *X = val[n->in[0]], *W = val[n->in[1]];
    const double *B = n->n_in > 2 && n->in[2] >= 0 ? val[n->in[2]] : NULL;
    double *Y = val[n->out[0]];
    int64_t N = x->dims[0], H = x->dims[2], Wd = x->dims[3];
    int64_t M = y->dims[1], icpg = w->dims[1], kh = w->dims[2], kw = w->dims[3];
    int64_t OH = y->dims[2], OW = y->dims[3], ocpg = M / win->group;
    int64_t b, m, oh, ow, c, i, j;
    for (b = 0; b < N; b++)
        for (m = 0; m < M; m++)
            for (oh = 0; oh < OH; oh++)
                for (ow = 0; ow < OW; ow++) {
                    double acc = B ? B[m] : 0;
                    int64_t grp = m / ocpg;
                    for (c = 0; c < icpg; c++)
                        for (i = 0; i < kh; i++)
                            for (j = 0; j < kw; j++) {
                                int64_t ih = oh * win->strides[0] - win->pad_begin[0] + i * win->dilations[0];
                                int64_t iw = ow * win->strides[1] - win->pad_begin[1] + j * win->dilations[1];
                                if (ih < 0 || ih >= H || iw < 0 || iw >= Wd)
                                    continue;
                                acc += X[((b * x->dims[1] + grp * icpg + c) * H + ih) * Wd + iw] *
                                       W[((m * icpg + c) * kh + i) * kw + j];
                            }
                    Y[((b * M + m) * OH + oh) * OW + ow] = acc;
                }
}

static void eval_gemm(const Graph *g, const Node *n, double **val)
{
    const ScalarParams *p = node_scalar(n);
    const Value *a = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    const double *A = val[n->in[0]], *B = val[n->in[1]];
    int64_t M = y->dims[0], N = y->dims[1], K = p->trans_a ? a->dims[0] : a->dims[1], i, j, k;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double acc = 0;
            for (k = 0; k < K; k++)
                acc += A[p->trans_a ? k * M + i : i * K + k] * B[p->trans_b ? j * K + k : k * N + j];
            acc *= p->alpha;
            if (n->n_in > 2 && n->in[2] >= 0)
                acc += p->beta * val[n->in[2]][bcast(y, &g->values[n->in[2]], i * N + j)];
            val[n->out[0]][i * N + j] = acc;
        }
}

/* MatMul with a 2-D B: A's last axis against B's rows. */
static int eval_matmul(const Graph *g, const Node *n, double **val)
{
    const Value *a = &g->values[n->in[0]], *b = &g->values[n->in[1]];
    int64_t K, N, rows, r, j, k;
    if (b->rank != 2)
        return 1;
    K = b->dims[0];
    N = b->dims[1];
    rows = value_numel(a) / K;
    for (r = 0; r < rows; r++)
        for (j = 0; j < N; j++) {
            double acc = 0;
            for (k = 0; k < K; k++)
                acc += val[n->in[0]][r * K + k] * val[n->in[1]][k * N + j];
            val[n->out[0]][r * N + j] = acc;
        }
    return 0;
}

/* MaxPool and AveragePool (2-D; the average over the window's positions
 * inside the input unless count_include_pad). */
static void eval_pool(const Graph *g, const Node *n, double **val)
{
    const ConvWindow *win = node_window(n);
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int64_t H = x->dims[2], W = x->dims[3], OH = y->dims[2], OW = y->dims[3];
    int64_t nc, oh, ow, i, j;
    for (nc = 0; nc < y->dims[0] * y->dims[1]; nc++)
        for (oh = 0; oh < OH; oh++)
            for (ow = 0; ow < OW; ow++) {
                double acc = n->op == OP_MaxPool ? -HUGE_VAL : 0;
                int64_t cnt = 0;
                for (i = 0; i < win->kernel[0]; i++)
                    for (j = 0; j < win->kernel[1]; j++) {
                        int64_t ih = oh * win->strides[0] - win->pad_begin[0] + i * win->dilations[0];
                        int64_t iw = ow * win->strides[1] - win->pad_begin[1] + j * win->dilations[1];
                        double v;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
                            cnt += win->count_include_pad;
                            continue;
                        }
                        v = val[n->in[0]][(nc * H + ih) * W + iw];
                        acc = n->op == OP_MaxPool ? (v > acc ? v : acc) : acc + v;
                        cnt++;
                    }
                val[n->out[0]][(nc * OH + oh) * OW + ow] = n->op == OP_MaxPool ? acc : acc / (double)cnt;
            }
}

/* Computes node n into val[n->out[0]]; 1 for an operator it lacks. */
static int eval_node(const Graph *g, const Node *n, double **val)
{
    const Value *y = &g->values[n->out[0]];
    const double *X = val[n->in[0]];
    double *Y = val[n->out[0]];
    int64_t i, cnt = value_numel(y);
    switch (n->op) {
    case OP_Conv:
        if (y->rank != 4)
            return 1;
        eval_conv(g, n, val);
        return 0;
    case OP_Gemm:
        eval_gemm(g, n, val);
        return 0;
    case OP_MaxPool:
    case OP_AveragePool:
        if (y->rank != 4 || (n->n_out > 1 && n->out[1] >= 0))
            return 1;
        eval_pool(g, n, val);
        return 0;
    case OP_MatMul:
        return eval_matmul(g, n, val);
    case OP_Relu:
        for (i = 0; i < cnt; i++)
            Y[i] = X[i] > 0 ? X[i] : 0;
        return 0;
    case OP_LeakyRelu: {
        double alpha = node_scalar(n)->alpha;
        for (i = 0; i < cnt; i++)
            Y[i] = X[i] >= 0 ? X[i] : alpha * X[i];
        return 0;
    }
    case OP_Sigmoid:
        for (i = 0; i < cnt; i++)
            Y[i] = 1 / (1 + exp(-X[i]));
        return 0;
    case OP_Clip: {
        double lo = n->n_in > 1 && n->in[1] >= 0 ? val[n->in[1]][0] : -HUGE_VAL;
        double hi = n->n_in > 2 && n->in[2] >= 0 ? val[n->in[2]][0] : HUGE_VAL;
        for (i = 0; i < cnt; i++)
            Y[i] = X[i] < lo ? lo : X[i] > hi ? hi : X[i];
        return 0;
    }
    case OP_PRelu:
    case OP_Add:
        for (i = 0; i < cnt; i++) {
            double a = X[bcast(y, &g->values[n->in[0]], i)];
            double b = val[n->in[1]][bcast(y, &g->values[n->in[1]], i)];
            Y[i] = n->op == OP_Add ? a + b : a >= 0 ? a : a * b;
        }
        return 0;
    default:
        return 1;
    }
}

/* Evaluates g on `inputs` (one array per graph input); returns the value
 * arrays, or NULL (reported) when an operator is missing. */
static double **evaluate(Graph *g, double *const *inputs)
{
    double **val = calloc((size_t)g->n_values, sizeof *val);
    int32_t vi, ni;
    int i;
    for (vi = 0; vi < g->n_values; vi++) {
        const Value *v = &g->values[vi];
        int64_t n = v->rank >= 0 ? value_numel(v) : -1, k;
        if (n < 0)
            continue;
        val[vi] = calloc((size_t)n + 1, sizeof(double));
        if (v->data && v->dtype == DT_FLOAT32)
            for (k = 0; k < n; k++)
                val[vi][k] = ((const float *)v->data)[k];
    }
    for (i = 0; i < g->n_inputs; i++)
        memcpy(val[g->inputs[i]], inputs[i], (size_t)value_numel(&g->values[g->inputs[i]]) * sizeof(double));
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead)
            continue;
        if (eval_node(g, n, val)) {
            printf("FAIL: the evaluator has no %s (node '%s')\n", n->op_type, n->name);
            return NULL;
        }
    }
    return val;
}

static void free_vals(const Graph *g, double **val)
{
    int32_t vi;
    if (!val)
        return;
    for (vi = 0; vi < g->n_values; vi++)
        free(val[vi]);
    free(val);
}

/* ---- channel ranges, computed here independently of equalize.c ---- */

/* Range of output channel (side 0) or input channel (side 1) ch of the
 * weights of node ni. */
static double chan_range(const Graph *g, int32_t ni, int side, int64_t ch)
{
    const Node *n = &g->nodes[ni];
    const Value *w = &g->values[n->in[1]];
    const float *W = w->data;
    int64_t i, cnt = value_numel(w);
    double r = 0;
    for (i = 0; i < cnt; i++) {
        int64_t o, c;
        if (n->op == OP_Conv) {
            int64_t ksz = cnt / (w->dims[0] * w->dims[1]), icpg = w->dims[1];
            int64_t ocpg = w->dims[0] / node_window(n)->group;
            o = i / (icpg * ksz);
            c = (o / ocpg) * icpg + (i / ksz) % icpg;
        } else {
            int tb = n->op == OP_Gemm && node_scalar(n)->trans_b;
            int64_t row = i / w->dims[1], col = i % w->dims[1];
            o = tb ? row : col;
            c = tb ? col : row;
        }
        if ((side ? c : o) == ch && fabs(W[i]) > r)
            r = fabs(W[i]);
    }
    return r;
}

static int64_t out_channels(const Graph *g, int32_t ni)
{
    const Node *n = &g->nodes[ni];
    const Value *w = &g->values[n->in[1]];
    if (n->op == OP_Conv || (n->op == OP_Gemm && node_scalar(n)->trans_b))
        return w->dims[0];
    return w->dims[1];
}

static double out_ratio(const Graph *g, int32_t ni)
{
    int64_t c, n = out_channels(g, ni);
    double lo = 0, hi = 0;
    for (c = 0; c < n; c++) {
        double r = chan_range(g, ni, 0, c);
        if (r > 0 && (lo == 0 || r < lo))
            lo = r;
        if (r > hi)
            hi = r;
    }
    return lo > 0 ? hi / lo : 1;
}

/* ---- one model ---- */

typedef struct Snap {
    const void *ptr;
    void *copy;
    size_t size;
} Snap;

static void run_case(const char *dir, const Case *c)
{
    char path[4096];
    Loaded ref, eq;
    Graph *g0, *g;
    Snap *snap;
    const void **ptrs;
    char *logbuf = NULL;
    size_t loglen = 0;
    FILE *log;
    int32_t vi;
    int k, n_snap = 0, got, t, o;
    double ratio_before[4];
    unsigned long long rng = 0x2545f4914f6cdd1dull;
    snprintf(path, sizeof path, "%s/%s", dir, c->file);
    g0 = load(&ref, path);
    g = load(&eq, path);
    CHECK(g0 && g, "%s: load failed", c->file);
    if (!g0 || !g)
        return;
    snap = calloc((size_t)g->n_values, sizeof *snap);
    ptrs = calloc((size_t)g->n_values, sizeof *ptrs);
    for (vi = 0; vi < g->n_values; vi++) {
        Value *v = &g->values[vi];
        ptrs[vi] = v->data;
        if (v->data && v->dtype == DT_FLOAT32) {
            snap[n_snap].ptr = v->data;
            snap[n_snap].size = (size_t)value_numel(v) * sizeof(float);
            snap[n_snap].copy = malloc(snap[n_snap].size);
            memcpy(snap[n_snap].copy, v->data, snap[n_snap].size);
            n_snap++;
        }
    }
    for (k = 0; c->l1[k]; k++)
        ratio_before[k] = out_ratio(g, find_node(g, c->l1[k]));

    log = open_memstream(&logbuf, &loglen);
    got = ptq_equalize(g, 50, log);
    fclose(log);
    CHECK(got == c->pairs, "%s: %d pairs rescaled, expected %d; log:\n%s", c->file, got, c->pairs, logbuf);
    for (k = 0; k < 4 && c->log[k]; k++)
        CHECK(strstr(logbuf, c->log[k]) != NULL, "%s: log lacks \"%s\":\n%s", c->file, c->log[k], logbuf);
    CHECK(graph_verify(g, &eq.d) == 0, "%s: graph_verify fails after equalization", c->file);

    /* (b) the ratios dropped, and every channel is balanced */
    for (k = 0; c->l1[k]; k++) {
        int32_t n1 = find_node(g, c->l1[k]), n2 = find_node(g, c->l2[k]);
        double after = out_ratio(g, n1), worst = 0;
        int64_t ch;
        CHECK(after < ratio_before[k] / 5, "%s: '%s' range ratio %.4g -> %.4g", c->file, c->l1[k],
              ratio_before[k], after);
        for (ch = 0; ch < out_channels(g, n1); ch++) {
            double r1 = chan_range(g, n1, 0, ch), r2 = chan_range(g, n2, 1, ch);
            if (r1 > 0 && r2 > 0 && fabs(r1 / r2 - 1) > worst)
                worst = fabs(r1 / r2 - 1);
        }
        CHECK(worst < 1e-3, "%s: '%s' -> '%s' unbalanced after equalization: max |r1/r2 - 1| = %.3g",
              c->file, c->l1[k], c->l2[k], worst);
    }
    if (c->pairs == 0)
        for (vi = 0; vi < g0->n_values && vi < g->n_values; vi++)
            CHECK(g->values[vi].data == ptrs[vi], "%s: '%s' changed with no pair rescaled", c->file,
                  g->values[vi].name);

    /* the loader's bytes */
    for (k = 0; k < n_snap; k++)
        CHECK(!memcmp(snap[k].ptr, snap[k].copy, snap[k].size), "%s: a loaded constant was written", c->file);

    /* (c) the same function */
    for (t = 0; t < 3; t++) {
        double **in = calloc((size_t)g->n_inputs + 1, sizeof *in), **v0, **v1;
        int i;
        for (i = 0; i < g->n_inputs; i++) {
            int64_t j, n = value_numel(&g->values[g->inputs[i]]);
            in[i] = malloc((size_t)n * sizeof(double));
            for (j = 0; j < n; j++) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                in[i][j] = (double)(rng % 2000001) / 1000000.0 - 1.0;
            }
        }
        v0 = evaluate(g0, in);
        v1 = evaluate(g, in);
        CHECK(v0 && v1, "%s: evaluation failed", c->file);
        for (o = 0; v0 && v1 && o < g->n_outputs; o++) {
            int32_t a = g0->outputs[o], b = g->outputs[o];
            int64_t j, n = value_numel(&g->values[b]);
            double diff = 0, mag = 0;
            for (j = 0; j < n; j++) {
                if (fabs(v0[a][j] - v1[b][j]) > diff)
                    diff = fabs(v0[a][j] - v1[b][j]);
                if (fabs(v0[a][j]) > mag)
                    mag = fabs(v0[a][j]);
            }
            CHECK(n > 0 && diff <= 1e-4 * mag, "%s: output '%s' differs by %.3g (magnitude %.3g)", c->file,
                  g->values[b].name, diff, mag);
        }
        free_vals(g0, v0);
        free_vals(g, v1);
        for (i = 0; i < g->n_inputs; i++)
            free(in[i]);
        free(in);
    }
    if (getenv("EQUALIZE_TEST_LOG"))
        printf("%s", logbuf);
    for (k = 0; k < n_snap; k++)
        free(snap[k].copy);
    free(snap);
    free(ptrs);
    free(logbuf);
    arena_free(&ref.arena);
    arena_free(&eq.arena);
}

/* max_rounds 0 changes nothing; one round of a single pair balances it. */
static void run_rounds(const char *dir)
{
    char path[4096];
    Loaded L;
    Graph *g;
    int32_t w;
    const void *before;
    snprintf(path, sizeof path, "%s/cle_matmul3d.onnx", dir);
    g = load(&L, path);
    CHECK(g != NULL, "cle_matmul3d.onnx: load failed");
    if (!g)
        return;
    w = g->nodes[find_node(g, "mm1")].in[1];
    before = g->values[w].data;
    CHECK(ptq_equalize(g, 0, NULL) == 0 && g->values[w].data == before, "max_rounds 0 rescaled something");
    CHECK(ptq_equalize(g, 1, NULL) == 1 && g->values[w].data != before, "one round did not rescale the pair");
    CHECK(ptq_equalize(g, 10, NULL) == 0, "a balanced pair was rescaled again");
    arena_free(&L.arena);
}

/* --log: ptq_equalize on any model, its log and time. */
static int show_log(int argc, char **argv)
{
    int i, status = 0;
    for (i = 2; i < argc; i++) {
        Loaded L;
        Graph *g = load(&L, argv[i]);
        clock_t t0 = clock();
        int n;
        if (!g) {
            status = 1;
            continue;
        }
        n = ptq_equalize(g, 50, stdout);
        printf("%s: %d pairs rescaled in %.3f s\n", argv[i], n, (double)(clock() - t0) / CLOCKS_PER_SEC);
        arena_free(&L.arena);
    }
    return status;
}

/* --emit: the equalized graph compiled to C (target c, NAME model). */
static int emit(const char *model, const char *dir)
{
    Loaded L;
    Graph *g = load(&L, model);
    int status;
    if (!g)
        return 1;
    printf("%s: %d pairs rescaled\n", model, ptq_equalize(g, 50, NULL));
    status = pipeline_lower(&L.pl) || pipeline_plan(&L.pl) || pipeline_install(&L.pl.prog, dir, &L.arena, &L.d);
    arena_free(&L.arena);
    return status;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "build/cle";
    size_t i;
    if (argc > 1 && !strcmp(argv[1], "--log"))
        return show_log(argc, argv);
    if (argc == 4 && !strcmp(argv[1], "--emit"))
        return emit(argv[2], argv[3]);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(dir, &cases[i]);
    run_rounds(dir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
