/*
 * Lowering of ConvTranspose, Einsum and Det.
 *
 * ConvTranspose is written in gather form, one reduction stage over the
 * output: out[n, m, y..] = B[m] + sum over the group's input channels c and
 * kernel taps k.. of x[n, c, (y + pad - k*dil) / s] * W[c, m % Mg, k..],
 * counting only taps where y + pad - k*dil is a non-negative multiple of
 * the stride that lands inside the input. No scatter, no intermediate.
 *
 * Einsum is one stage too: the output labels are its axes, every other
 * label is a reduce axis, and the body is the product of the operands
 * loaded at their labels (a repeated label reads a diagonal; a dimension of
 * extent 1 broadcasts). The labels come parsed by frontend/infer_linalg.c
 * (the node's EinsumParams).
 *
 * Det expands the determinant by cofactors, so it is limited to matrices
 * up to 3x3 (the frontend reports larger ones).
 */
#include "lower.h"

#include <string.h>

int lower_ConvTranspose(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    const ConvWindow *win = node_window(n);
    int64_t group = win->group, mg = w->dims[1], cg = x->dims[1] / group;
    const int64_t *s = win->strides, *dil = win->dilations;
    int64_t kvol = 1;
    int nsp = win->nsp, i;
    int xb = lower_buf_value(L, n->in[0]), wb = lower_buf_value(L, n->in[1]);
    Compute *c = lower_stage(L, "convtranspose", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    IterVar *rc = lower_raxis(L, c, cg);
    Expr *xi[TVMCC_MAX_RANK], *wi[TVMCC_MAX_RANK], *cond = ex_const_int(L, DT_BOOL, 1), *grp;
    grp = ex_binary(L, BIN_DIV, ex_var(L, &c->axes[1]), ex_int(L, mg));
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_add(L, ex_mul(L, grp, ex_int(L, cg)), ex_var(L, rc));
    wi[0] = xi[1];
    wi[1] = ex_binary(L, BIN_MOD, ex_var(L, &c->axes[1]), ex_int(L, mg));
    for (i = 0; i < nsp; i++) {
        int64_t in = x->dims[2 + i], k = win->kernel[i], pb = win->pad_begin[i];
        IterVar *rk = lower_raxis(L, c, k);
        Expr *pos;
        kvol *= k;
        pos = ex_sub(L, ex_add(L, ex_var(L, &c->axes[2 + i]), ex_int(L, pb)),
                     ex_mul(L, ex_var(L, rk), ex_int(L, dil[i])));
        cond = ex_and(L, cond, ex_binary(L, BIN_GE, pos, ex_int(L, 0)));
        if (s[i] > 1)
            cond = ex_and(L, cond, ex_binary(L, BIN_EQ, ex_binary(L, BIN_MOD, pos, ex_int(L, s[i])),
                                             ex_int(L, 0)));
        pos = ex_binary(L, BIN_DIV, ex_binary(L, BIN_MAX, pos, ex_int(L, 0)), ex_int(L, s[i]));
        cond = ex_and(L, cond, ex_lt(L, pos, ex_int(L, in)));
        xi[2 + i] = ex_binary(L, BIN_MIN, pos, ex_int(L, in - 1));
        wi[2 + i] = ex_var(L, rk);
    }
    c->rop = RED_SUM;
    c->body = ex_select(L, cond,
                        ex_mul(L, ex_load_nd(L, xb, x->rank, x->dims, xi),
                               ex_load_nd(L, wb, w->rank, w->dims, wi)),
                        ex_float(L, x->dtype, 0.0));
    if (n->n_in > 2 && n->in[2] >= 0)
        c->init = ex_load(L, lower_buf_value(L, n->in[2]), ex_var(L, &c->axes[1]));
    L->k->macs += value_numel(y) * cg * kvol;
    return 0;
}

int lower_Einsum(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *y = &g->values[n->out[0]];
    const EinsumParams *ep = node_einsum(n);
    int used[64], op, i, j, nout = ep->nout;
    const uint8_t *olab = ep->out;
    int64_t ext[64];
    Expr *var[64], *body = NULL;
    Compute *c;
    memset(used, 0, sizeof used);
    for (i = 0; i < 64; i++)
        ext[i] = 1;
    for (op = 0; op < ep->n_ops; op++) {
        const Value *v = &g->values[n->in[op]];
        for (i = 0; i < ep->nlab[op]; i++) {
            used[ep->lab[op][i]]++;
            if (v->dims[i] != 1)
                ext[ep->lab[op][i]] = v->dims[i];
        }
    }
    c = lower_stage(L, "einsum", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    for (i = 0; i < nout; i++) {
        var[olab[i]] = ex_var(L, &c->axes[i]);
        used[olab[i]] = -1;
    }
    for (op = 0; op < ep->n_ops; op++)
        for (i = 0; i < ep->nlab[op]; i++)
            if (used[ep->lab[op][i]] > 0) {
                var[ep->lab[op][i]] = ex_var(L, lower_raxis(L, c, ext[ep->lab[op][i]]));
                used[ep->lab[op][i]] = -1;
            }
    for (op = 0; op < n->n_in; op++) {
        const Value *v = &g->values[n->in[op]];
        Expr *xi[TVMCC_MAX_RANK], *ld;
        for (j = 0; j < v->rank; j++)
            xi[j] = v->dims[j] == 1 ? ex_int(L, 0) : var[ep->lab[op][j]];
        ld = ex_load_nd(L, lower_buf_value(L, n->in[op]), v->rank, v->dims, xi);
        body = body ? ex_mul(L, body, ld) : ld;
    }
    c->rop = c->n_raxes ? RED_SUM : RED_NONE;
    c->body = body;
    return 0;
}

/* Determinant of the trailing n x n matrices (n <= 3) by cofactors. */
int lower_Det(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    int64_t m = x->dims[x->rank - 1], base;
    int xb = lower_buf_value(L, n->in[0]), i;
    Compute *c = lower_stage(L, "det", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    Expr *bi[TVMCC_MAX_RANK], *off, *a[9];
    for (i = 0; i < y->rank; i++)
        bi[i] = ex_var(L, &c->axes[i]);
    off = ex_mul(L, ex_offset(L, y->rank, y->dims, bi), ex_int(L, m * m));
    for (base = 0; base < m * m; base++)
        a[base] = ex_load(L, xb, ex_add(L, off, ex_int(L, base)));
    if (m == 1) {
        c->body = a[0];
    } else if (m == 2) {
        c->body = ex_sub(L, ex_mul(L, a[0], a[3]), ex_mul(L, a[1], a[2]));
    } else {
        Expr *c0 = ex_sub(L, ex_mul(L, a[4], a[8]), ex_mul(L, a[5], a[7]));
        Expr *c1 = ex_sub(L, ex_mul(L, a[3], a[8]), ex_mul(L, a[5], a[6]));
        Expr *c2 = ex_sub(L, ex_mul(L, a[3], a[7]), ex_mul(L, a[4], a[6]));
        c->body = ex_add(L, ex_sub(L, ex_mul(L, a[0], c0), ex_mul(L, a[1], c1)),
                         ex_mul(L, a[2], c2));
    }
    return 0;
}
