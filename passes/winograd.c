/*
 * winograd: 3x3 convs as Winograd F(2x2, 3x3) (Lavin and Gray, 2016).
 *
 * A 2-D Conv in the blocked layout (passes/layout.c gave it tvmcc.layout
 * NCHW<b>c and a blocked input) with a 3x3 kernel, stride 1, dilation 1,
 * one group and constant float32 weights becomes, when the target sets the
 * `winograd` schedule knob:
 *
 *   WinogradInput(x)              -> V_0 .. V_15   [T, C]
 *   MatMul(V_xi, U_xi)            -> M_xi          [T, K]   (16 of them)
 *   WinogradOutput(M_0..M_15, b)  -> y (the conv's own output value)
 *
 * T = N * ceil(OH/2) * ceil(OW/2) tiles of 2 x 2 outputs, each computed
 * from a 4 x 4 input patch with 16 multiply-adds per input channel instead
 * of 36: 2.25 times fewer, in MatMuls that the packed template runs at the
 * speed of a dense matmul. U_xi[c][k] = (G g_kc G^T)[a][b], xi = 4a + b,
 * G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], is computed here in
 * double. The transforms are lower/op_winograd.c; the conv's activation
 * and residual add fuse into WinogradOutput (an injective op).
 *
 * Only where it measured faster than the direct blocked conv on the
 * target's host (bench/results.md): at least WINO_MIN_CHANNELS input and
 * output channels and at least WINO_MIN_TILES tiles, so that each MatMul
 * has rows enough to pay for streaming its weights (U is 16/9 the size
 * of the conv's). The V and M values are arena tensors: the arena grows by
 * up to 32 * T * max(C, K) floats at that conv.
 */
#include "passes.h"

#include <string.h>

#include "../lower/layout.h"
#include "../lower/lower.h"

#define WINO_MIN_CHANNELS 32
#define WINO_MIN_TILES 16

static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

/* Tiles of 2 x 2 outputs of y [N, K/b, OH, OW, b]. */
static int64_t tiles_of(const Value *y)
{
    return y->dims[0] * ((y->dims[2] + 1) / 2) * ((y->dims[3] + 1) / 2);
}

static int applies(const Graph *g, const Node *n)
{
    const ConvWindow *win;
    const Value *x, *w, *y;
    if (n->dead || n->op != OP_Conv || n->quant || n->n_out != 1 || n->in[0] < 0 || n->in[1] < 0 ||
        lower_layout_of(n) != LAYOUT_NCHWC)
        return 0;
    x = &g->values[n->in[0]];
    w = &g->values[n->in[1]];
    y = &g->values[n->out[0]];
    win = node_window(n);
    if (x->rank != 5 || y->rank != 5 || w->rank != 4 || !w->data || x->dtype != DT_FLOAT32 ||
        w->dtype != DT_FLOAT32 || win->nsp != 2 || win->group != 1)
        return 0;
    if (win->kernel[0] != 3 || win->kernel[1] != 3 || win->strides[0] != 1 || win->strides[1] != 1 ||
        win->dilations[0] != 1 || win->dilations[1] != 1 || w->dims[2] != 3 || w->dims[3] != 3)
        return 0;
    if (w->dims[0] < WINO_MIN_CHANNELS || w->dims[1] < WINO_MIN_CHANNELS)
        return 0;
    if (n->n_in > 2 && n->in[2] >= 0 && g->values[n->in[2]].dtype != DT_FLOAT32)
        return 0;
    return tiles_of(y) >= WINO_MIN_TILES;
}

static int32_t new_value(Graph *g, const char *name, int64_t d0, int64_t d1)
{
    int32_t v = graph_add_value(g, name);
    g->values[v].dtype = DT_FLOAT32;
    g->values[v].rank = 2;
    g->values[v].dims[0] = d0;
    g->values[v].dims[1] = d1;
    return v;
}

/* U_xi [C, K] from w [K, C, 3, 3]. */
static float *transformed_weights(Graph *g, const float *w, int64_t K, int64_t C, int a, int b)
{
    float *u = arena_array(g->arena, (size_t)(C * K), sizeof *u);
    int64_t k, c;
    int i, j;
    if (!u)
        die("compile arena exhausted");
    for (k = 0; k < K; k++)
        for (c = 0; c < C; c++) {
            const float *t = w + (k * C + c) * 9;
            double s = 0;
            for (i = 0; i < 3; i++)
                for (j = 0; j < 3; j++)
                    s += G[a][i] * (double)t[i * 3 + j] * G[b][j];
            u[c * K + k] = (float)s;
        }
    return u;
}

static void rewrite(Graph *g, int32_t ci)
{
    Node *c = &g->nodes[ci];
    ConvWindow win = *node_window(c);
    const char *name = c->name ? c->name : "conv";
    int32_t x = c->in[0], w = c->in[1], y = c->out[0], bias = c->n_in > 2 ? c->in[2] : -1;
    int index = c->index;
    int64_t K = g->values[w].dims[0], C = g->values[w].dims[1], T;
    int32_t v[16], m[16], ni;
    int xi;
    T = tiles_of(&g->values[y]);
    c->dead = 1;
    ni = graph_add_node(g, OP_WinogradInput, arena_printf(g->arena, "%s/winograd_in", name), 1, 16);
    node_set_params(g, &g->nodes[ni], PARAMS_WINDOW, &win, sizeof win);
    g->nodes[ni].index = index;
    g->nodes[ni].in[0] = x;
    for (xi = 0; xi < 16; xi++) {
        v[xi] = new_value(g, arena_printf(g->arena, "%s/winograd_v%d", name, xi), T, C);
        g->nodes[ni].out[xi] = v[xi];
        g->values[v[xi]].producer = ni;
    }
    for (xi = 0; xi < 16; xi++) {
        int32_t u = new_value(g, arena_printf(g->arena, "%s/winograd_u%d", name, xi), C, K), mi;
        g->values[u].data = transformed_weights(g, g->values[w].data, K, C, xi / 4, xi % 4);
        g->values[u].producer = -1;
        m[xi] = new_value(g, arena_printf(g->arena, "%s/winograd_m%d", name, xi), T, K);
        mi = graph_add_node(g, OP_MatMul, arena_printf(g->arena, "%s/winograd_mm%d", name, xi), 2, 1);
        g->nodes[mi].index = index;
        g->nodes[mi].in[0] = v[xi];
        g->nodes[mi].in[1] = u;
        g->nodes[mi].out[0] = m[xi];
        g->values[m[xi]].producer = mi;
    }
    ni = graph_add_node(g, OP_WinogradOutput, arena_printf(g->arena, "%s/winograd_out", name), bias >= 0 ? 17 : 16,
                        1);
    g->nodes[ni].index = index;
    for (xi = 0; xi < 16; xi++)
        g->nodes[ni].in[xi] = m[xi];
    if (bias >= 0)
        g->nodes[ni].in[16] = bias;
    g->nodes[ni].out[0] = y;
    g->values[y].producer = ni;
}

int pass_winograd(Graph *g, Diag *d)
{
    int32_t ni, n0 = g->n_nodes;
    int any = 0;
    (void)d;
    if (!g->settings.target || !g->settings.target->knobs.winograd)
        return 0;
    for (ni = 0; ni < n0; ni++)
        if (applies(g, &g->nodes[ni])) {
            rewrite(g, ni);
            any = 1;
        }
    if (any)
        graph_toposort(g);
    return 0;
}
