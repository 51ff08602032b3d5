/*
 * Shape checks of tvmcc's Winograd operators (passes/winograd.c makes
 * them after inference; no file can name them).
 *
 * WinogradInput: x [N, C/b, H, W, b] (the blocked layout) with the conv's
 * window -> 16 values [T, C], T = N * ceil(OH/2) * ceil(OW/2) tiles of
 * 2 x 2 outputs. WinogradOutput: those 16 products [T, K] and an optional
 * bias [K] -> y [N, K/b, OH, OW, b], whose shape the pass gives (it is the
 * conv's output): checked against the tiles here.
 */
#include "infer.h"

static int64_t tiles_of(int64_t n, int64_t oh, int64_t ow)
{
    return n * ((oh + 1) / 2) * ((ow + 1) / 2);
}

int infer_WinogradInput(Graph *g, Node *n, Diag *d)
{
    const ConvWindow *win = node_window(n);
    const Value *x;
    int64_t dims[2];
    int i;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (x->dtype != DT_FLOAT32 || x->rank != 5)
        return diag_error(d, n, "input[0]", "expected float32 [N, C/b, H, W, b]");
    dims[0] = tiles_of(x->dims[0], win->out[0], win->out[1]);
    dims[1] = x->dims[1] * x->dims[4];
    for (i = 0; i < 16; i++) {
        if (infer_need_output(g, n, i, d))
            return 1;
        if (value_set(g, n->out[i], DT_FLOAT32, 2, dims, d, n))
            return 1;
    }
    return 0;
}

int infer_WinogradOutput(Graph *g, Node *n, Diag *d)
{
    const Value *m, *y;
    int i;
    for (i = 0; i < 16; i++)
        if (need_input(g, n, i, d))
            return 1;
    m = in_val(g, n, 0);
    for (i = 1; i < 16; i++) {
        const Value *mi = in_val(g, n, i);
        if (mi->dtype != DT_FLOAT32 || mi->rank != 2 || mi->dims[0] != m->dims[0] || mi->dims[1] != m->dims[1])
            return diag_error(d, n, "input", "the 16 products must be float32 [T, K] alike");
    }
    if (n->n_in > 16 && n->in[16] >= 0) {
        const Value *b = in_val(g, n, 16);
        if (b->dtype != DT_FLOAT32 || b->rank != 1 || b->dims[0] != m->dims[1])
            return diag_error(d, n, "input[16]", "bias must be float32 [K]");
    }
    if (infer_need_output(g, n, 0, d))
        return 1;
    y = out_val(g, n, 0);
    if (y->rank != 5 || y->dims[1] * y->dims[4] != m->dims[1] ||
        tiles_of(y->dims[0], y->dims[2], y->dims[3]) != m->dims[0])
        return diag_error(d, n, "output[0]", "shape does not match the %lld tiles of %lld channels",
                          (long long)m->dims[0], (long long)m->dims[1]);
    return 0;
}
