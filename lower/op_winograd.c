/*
 * Lowering of tvmcc's Winograd operators: the transforms of F(2x2, 3x3)
 * (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
 * 2016) around the 16 MatMuls that passes/winograd.c makes of a 3x3 conv.
 *
 * A tile is the 2 x 2 outputs at (2*th, 2*tw) of image n; it reads the
 * 4 x 4 input patch d at rows 2*th - p0 + i, columns 2*tw - p1 + j (zero
 * outside the image). With
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  A^T = [1 1 1 0; 0 1 -1 -1]
 * WinogradInput writes V_(4a+b)[t][c] = (B^T d B)[a][b] per channel c, one
 * stage per (a, b): four loads and three adds, the lanes b channels of the
 * blocked input. MatMul (the packed template) gives M_xi = V_xi U_xi with
 * U the transformed weights (G g G^T, computed at compile time by the
 * pass). WinogradOutput writes y[n][kb][oh][ow][l] = bias + (A^T M A)[r][s]
 * for the tile of (oh/2, ow/2), r = oh % 2, s = ow % 2: nine loads and
 * adds under selects on (r, s), which do not vary along the lanes.
 */
#include "lower.h"

/* Row a of B^T: its two nonzero columns and their signs (+1 or -1). */
static const int bt_col[4][2] = {{0, 2}, {1, 2}, {2, 1}, {1, 3}};
static const int bt_sign[4][2] = {{1, -1}, {1, 1}, {1, -1}, {1, -1}};
/* Row r of A^T: three nonzero columns, their signs. */
static const int at_col[2][3] = {{0, 1, 2}, {1, 2, 3}};
static const int at_sign[2][3] = {{1, 1, 1}, {1, -1, -1}};

static Expr *add_signed(Lower *L, Expr *acc, Expr *e, int sign)
{
    if (!acc)
        return sign > 0 ? e : ex_sub(L, ex_float(L, DT_FLOAT32, 0.0), e);
    return sign > 0 ? ex_add(L, acc, e) : ex_sub(L, acc, e);
}

/* Input row (or column) 2*o - p + i of an extent `size` image: the
 * clamped index, and in *cond where it can leave the image the in-bounds
 * test (else NULL). */
static Expr *patch_pos(Lower *L, const IterVar *o, int64_t p, int i, int64_t size, Expr **cond)
{
    Expr *pos = ex_add(L, ex_mul(L, ex_var(L, o), ex_int(L, 2)), ex_int(L, i - p));
    int64_t lo = i - p, hi = (o->extent - 1) * 2 + i - p;
    Expr *c = NULL;
    if (lo < 0)
        c = ex_binary(L, BIN_GE, pos, ex_int(L, 0));
    if (hi >= size) {
        Expr *up = ex_lt(L, pos, ex_int(L, size));
        c = c ? ex_and(L, c, up) : up;
    }
    *cond = c;
    if (c)
        pos = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, pos, ex_int(L, 0)), ex_int(L, size - 1));
    return pos;
}

int lower_WinogradInput(Lower *L, Node *n)
{
    Graph *g = L->g;
    const ConvWindow *win = node_window(n);
    const Value *x = &g->values[n->in[0]];
    int64_t th = (win->out[0] + 1) / 2, tw = (win->out[1] + 1) / 2;
    int64_t dims[5];
    int xb = lower_buf_value(L, n->in[0]), a, b;
    dims[0] = x->dims[0];
    dims[1] = th;
    dims[2] = tw;
    dims[3] = x->dims[1];
    dims[4] = x->dims[4];
    for (a = 0; a < 4; a++)
        for (b = 0; b < 4; b++) {
            /* axes (n, th, tw, cb, l): V_xi[t][cb*b + l] row-major */
            Compute *c = lower_stage(L, "winograd_in", lower_buf_value(L, n->out[4 * a + b]), 5, dims);
            Expr *v = NULL;
            int u, w;
            for (u = 0; u < 2; u++) {
                Expr *row = NULL, *ch, *ih = patch_pos(L, &c->axes[1], win->pad_begin[0], bt_col[a][u], x->dims[2], &ch);
                for (w = 0; w < 2; w++) {
                    Expr *cw, *cond, *xi[5], *e;
                    xi[0] = ex_var(L, &c->axes[0]);
                    xi[1] = ex_var(L, &c->axes[3]);
                    xi[2] = ih;
                    xi[3] = patch_pos(L, &c->axes[2], win->pad_begin[1], bt_col[b][w], x->dims[3], &cw);
                    xi[4] = ex_var(L, &c->axes[4]);
                    e = ex_load_nd(L, xb, 5, x->dims, xi);
                    cond = ch && cw ? ex_and(L, ch, cw) : ch ? ch : cw;
                    if (cond)
                        e = ex_select(L, cond, e, ex_float(L, DT_FLOAT32, 0.0));
                    row = add_signed(L, row, e, bt_sign[b][w]);
                }
                v = add_signed(L, v, row, bt_sign[a][u]);
            }
            c->body = v;
        }
    return 0;
}

int lower_WinogradOutput(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *y = &g->values[n->out[0]];
    int64_t K = g->values[n->in[0]].dims[1], bl = y->dims[4];
    int64_t th = (y->dims[2] + 1) / 2, tw = (y->dims[3] + 1) / 2;
    Compute *c = lower_stage(L, "winograd_out", lower_buf_value(L, n->out[0]), 5, y->dims);
    Expr *oh = ex_var(L, &c->axes[2]), *ow = ex_var(L, &c->axes[3]);
    Expr *t, *k, *off, *arm[2][2], *r0, *s0, *v;
    int mb[16], r, s, i, j;
    for (i = 0; i < 16; i++)
        mb[i] = lower_buf_value(L, n->in[i]);
    t = ex_add(L,
               ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &c->axes[0]), ex_int(L, th)),
                                ex_binary(L, BIN_DIV, oh, ex_int(L, 2))),
                      ex_int(L, tw)),
               ex_binary(L, BIN_DIV, ow, ex_int(L, 2)));
    k = ex_add(L, ex_mul(L, ex_var(L, &c->axes[1]), ex_int(L, bl)), ex_var(L, &c->axes[4]));
    off = ex_add(L, ex_mul(L, t, ex_int(L, K)), k);
    for (r = 0; r < 2; r++)
        for (s = 0; s < 2; s++) {
            Expr *e = NULL;
            for (i = 0; i < 3; i++) {
                Expr *row = NULL;
                for (j = 0; j < 3; j++)
                    row = add_signed(L, row, ex_load(L, mb[4 * at_col[r][i] + at_col[s][j]], off), at_sign[s][j]);
                e = add_signed(L, e, row, at_sign[r][i]);
            }
            arm[r][s] = e;
        }
    r0 = ex_binary(L, BIN_EQ, ex_binary(L, BIN_MOD, oh, ex_int(L, 2)), ex_int(L, 0));
    s0 = ex_binary(L, BIN_EQ, ex_binary(L, BIN_MOD, ow, ex_int(L, 2)), ex_int(L, 0));
    v = ex_select(L, r0, ex_select(L, s0, arm[0][0], arm[0][1]), ex_select(L, s0, arm[1][0], arm[1][1]));
    if (n->n_in > 16 && n->in[16] >= 0)
        v = ex_add(L, ex_load(L, lower_buf_value(L, n->in[16]), k), v);
    c->body = v;
    return 0;
}
