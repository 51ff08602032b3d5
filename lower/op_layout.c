/*
 * Operators in a non-ONNX data layout, chosen by the layout pass
 * (passes/layout.c) from the target's preferred layout. A node carries the
 * attribute "tvmcc.layout" = "NHWC" when its activations are stored
 * channels-last; its weights were re-laid out at compile time:
 *
 *   Conv  x [N,H,W,C]  w [M,KH,KW,C/group]  y [N,OH,OW,M]
 *
 * The window (strides, dilations, pads after auto_pad) is the node's
 * ConvWindow, parsed by inference in ONNX's spatial order, which is the
 * same in every layout.
 *
 * The compute keeps the output axes in storage order (n, oh, ow, m) and
 * reduces over (kh, kw, c), so the innermost reduction and the innermost
 * output axis both walk contiguous memory. The maths is the same as the
 * NCHW definition in op_nn.c.
 *
 * "NCHW<b>c" (x86: b = 16 with AVX-512, 8 with AVX2) stores channels in
 * blocks of b, innermost:
 *
 *   Conv  x [N,C,H,W] or [N,C/b,H,W,b]  w [M,C,KH,KW]  y [N,M/b,OH,OW,b]
 *
 * with output axes (n, mb, oh, ow, mi), output channel mb*b + mi, and
 * reduce axes (c, kh, kw) for an NCHW input or (cb, kh, kw, ci) for a
 * blocked one (input channel cb*b + ci): every index is affine in the
 * axes, which the packed template (tpl_packed.c, conv_nchwc) needs. The
 * weights stay OIHW (read at the blocked channel; the template packs
 * them at compile time). A grouped conv (passes/layout.c: groups of whole
 * blocks) reads, for output block mb, the input channels (or blocks) of
 * its group: c + (mb / (M/G/b)) * C/G (C/G/b blocked), w's C being C/G.
 *
 *   MaxPool  x [N,C/b,H,W,b]  y [N,C/b,OH,OW,b]
 *
 * takes the max over the window (kh, kw) at every (n, cb, oh, ow, ci); the
 * innermost axis walks b contiguous channels.
 *
 *   depthwise Conv  x [N,C/b,H,W,b]  w [C/b,1,KH,KW,b]  y [N,C/b,OH,OW,b]
 *
 * (group = C = M, with the target's dw_nchwc knob) sums over (kh, kw) at
 * every (n, cb, oh, ow, ci), the weights re-laid out by the layout pass so
 * that a tap's b weights are one vector.
 */
#include <math.h>
#include <string.h>

#include "layout.h"
#include "lower.h"

int lower_layout_of(const Node *n)
{
    const Attr *a = node_attr(n, "tvmcc.layout");
    if (!a || a->type != ATTR_STRING || !a->s)
        return LAYOUT_NCHW;
    if (!strcmp(a->s, "NHWC"))
        return LAYOUT_NHWC;
    return strncmp(a->s, "NCHW", 4) == 0 && strlen(a->s) > 5 ? LAYOUT_NCHWC : LAYOUT_NCHW;
}

/* Index into a padded spatial dimension: the input position and, when it
 * can leave [0, size), the in-bounds condition (NULL when it cannot). */
static Expr *spatial(Lower *L, const IterVar *o, const IterVar *k, int64_t s, int64_t dil,
                     int64_t pb, int64_t size, Expr **cond)
{
    Expr *pos = ex_add(L, ex_sub(L, ex_mul(L, ex_var(L, o), ex_int(L, s)), ex_int(L, pb)),
                       ex_mul(L, ex_var(L, k), ex_int(L, dil)));
    int64_t hi = (o->extent - 1) * s - pb + (k->extent - 1) * dil;
    Expr *c = NULL;
    if (pb > 0)
        c = ex_binary(L, BIN_GE, pos, ex_int(L, 0));
    if (hi >= size) {
        Expr *up = ex_lt(L, pos, ex_int(L, size));
        c = c ? ex_and(L, c, up) : up;
    }
    *cond = c;
    if (c) /* keep the load in bounds even where the select discards it */
        pos = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, pos, ex_int(L, 0)), ex_int(L, size - 1));
    return pos;
}

/* The load of blocked x [N,C/b,H,W,b] at (n, cb, window row, window
 * column, l) of stage c (axes n, cb, oh, ow, l; window reduce axes rh,
 * rw), and where the window can leave the image, the in-bounds condition
 * in *cond (NULL when it cannot). */
static Expr *window_load_nchwc(Lower *L, Compute *c, const IterVar *rh, const IterVar *rw, const ConvWindow *win,
                               int xb, const Value *x, Expr **cond)
{
    Expr *xi[5], *ch, *cw;
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, &c->axes[1]);
    xi[2] = spatial(L, &c->axes[2], rh, win->strides[0], win->dilations[0], win->pad_begin[0], x->dims[2], &ch);
    xi[3] = spatial(L, &c->axes[3], rw, win->strides[1], win->dilations[1], win->pad_begin[1], x->dims[3], &cw);
    xi[4] = ex_var(L, &c->axes[4]);
    *cond = ch;
    if (cw)
        *cond = ch ? ex_and(L, ch, cw) : cw;
    return ex_load_nd(L, xb, 5, x->dims, xi);
}

/* A depthwise conv (group = C = M) in the blocked layout: the lanes are
 * channels, x [N,C/b,H,W,b], w [C/b,1,KH,KW,b] (re-laid out by
 * passes/layout.c):
 *   y[n][mb][oh][ow][mi] = init + sum over (kh, kw) of
 *       x[n][mb][oh*s0 - p0 + kh*d0][ow*s1 - p1 + kw*d1][mi] * w[mb][0][kh][kw][mi] */
static int lower_dwconv_nchwc(Lower *L, Node *n)
{
    Graph *g = L->g;
    const ConvWindow *win = node_window(n);
    const Value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    int xb = lower_buf_value(L, n->in[0]), wb = lower_buf_value(L, n->in[1]);
    Compute *c = lower_stage(L, "dwconv_nchwc", lower_buf_value(L, n->out[0]), 5, y->dims);
    IterVar *rh = lower_raxis(L, c, w->dims[2]), *rw = lower_raxis(L, c, w->dims[3]);
    Expr *wi[5], *cond, *xv = window_load_nchwc(L, c, rh, rw, win, xb, x, &cond);
    if (cond)
        xv = ex_select(L, cond, xv, ex_float(L, x->dtype, 0.0));
    wi[0] = ex_var(L, &c->axes[1]);
    wi[1] = ex_int(L, 0);
    wi[2] = ex_var(L, rh);
    wi[3] = ex_var(L, rw);
    wi[4] = ex_var(L, &c->axes[4]);
    c->window = win;
    c->rop = RED_SUM;
    c->body = ex_mul(L, xv, ex_load_nd(L, wb, 5, w->dims, wi));
    if (n->n_in > 2 && n->in[2] >= 0)
        c->init = ex_load(L, lower_buf_value(L, n->in[2]),
                          ex_add(L, ex_mul(L, ex_var(L, &c->axes[1]), ex_int(L, y->dims[4])), ex_var(L, &c->axes[4])));
    L->k->macs += value_numel(y) * w->dims[2] * w->dims[3];
    return 0;
}

static int lower_dense_conv_nchwc(Lower *L, Node *n)
{
    Graph *g = L->g;
    const ConvWindow *win = node_window(n);
    const Value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    int64_t b = y->dims[4], k[2], in[2];
    const int64_t *st = win->strides, *dil = win->dilations, *pads = win->pad_begin;
    int blocked_in = x->rank == 5;
    int xb = lower_buf_value(L, n->in[0]), wb = lower_buf_value(L, n->in[1]);
    Compute *c = lower_stage(L, "conv_nchwc", lower_buf_value(L, n->out[0]), 5, y->dims);
    IterVar *rc, *rh, *rw, *ri = NULL;
    Expr *xi[5], *wi[4], *ch, *cw, *cond = NULL, *xv, *co;
    int i;
    for (i = 0; i < 2; i++) {
        k[i] = w->dims[2 + i];
        in[i] = x->dims[2 + i];
    }
    rc = lower_raxis(L, c, blocked_in ? w->dims[1] / x->dims[4] : w->dims[1]);
    rh = lower_raxis(L, c, k[0]);
    rw = lower_raxis(L, c, k[1]);
    if (blocked_in)
        ri = lower_raxis(L, c, x->dims[4]);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_var(L, rc);
    if (win->group > 1) /* the group's first input channel (block) */
        xi[1] = ex_add(L, ex_mul(L, ex_binary(L, BIN_DIV, ex_var(L, &c->axes[1]), ex_int(L, y->dims[1] / win->group)),
                                 ex_int(L, rc->extent)),
                       xi[1]);
    xi[2] = spatial(L, &c->axes[2], rh, st[0], dil[0], pads[0], in[0], &ch);
    xi[3] = spatial(L, &c->axes[3], rw, st[1], dil[1], pads[1], in[1], &cw);
    if (blocked_in)
        xi[4] = ex_var(L, ri);
    if (ch)
        cond = ch;
    if (cw)
        cond = cond ? ex_and(L, cond, cw) : cw;
    xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
    if (cond)
        xv = ex_select(L, cond, xv, ex_float(L, x->dtype, 0.0));
    co = ex_add(L, ex_mul(L, ex_var(L, &c->axes[1]), ex_int(L, b)), ex_var(L, &c->axes[4]));
    wi[0] = co;
    wi[1] = blocked_in ? ex_add(L, ex_mul(L, ex_var(L, rc), ex_int(L, x->dims[4])), ex_var(L, ri))
                       : ex_var(L, rc);
    wi[2] = ex_var(L, rh);
    wi[3] = ex_var(L, rw);
    c->window = win;
    c->rop = RED_SUM;
    c->body = ex_mul(L, xv, ex_load_nd(L, wb, 4, w->dims, wi));
    if (n->n_in > 2 && n->in[2] >= 0)
        c->init = ex_load(L, lower_buf_value(L, n->in[2]), co);
    L->k->macs += value_numel(y) * w->dims[1] * k[0] * k[1];
    return 0;
}

int lower_conv_nchwc(Lower *L, Node *n)
{
    /* the layout pass gives a blocked depthwise conv weights of rank 5 */
    if (L->g->values[n->in[1]].rank == 5)
        return lower_dwconv_nchwc(L, n);
    return lower_dense_conv_nchwc(L, n);
}

int lower_maxpool_nchwc(Lower *L, Node *n)
{
    Graph *g = L->g;
    const ConvWindow *win = node_window(n);
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    const int64_t *k = win->kernel;
    int xb = lower_buf_value(L, n->in[0]);
    Compute *c = lower_stage(L, "maxpool_nchwc", lower_buf_value(L, n->out[0]), 5, y->dims);
    IterVar *rh = lower_raxis(L, c, k[0]), *rw = lower_raxis(L, c, k[1]);
    Expr *cond, *xv = window_load_nchwc(L, c, rh, rw, win, xb, x, &cond);
    c->rop = RED_MAX;
    c->body = cond ? ex_select(L, cond, xv, ex_float(L, x->dtype, -HUGE_VAL)) : xv;
    c->window = win; /* the x86 max-pool template reads it (lower/tpl_pool.c) */
    return 0;
}

int lower_conv_nhwc(Lower *L, Node *n)
{
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *w = &g->values[n->in[1]];
    const Value *y = &g->values[n->out[0]];
    const ConvWindow *win = node_window(n);
    /* weights OHWI, or [1, KH, KW, C] for an integer depthwise conv
     * (passes/layout.c) */
    int ihwo = win->group > 1 && w->dims[0] == 1 && w->dims[3] == y->dims[3] &&
               win->group == y->dims[3];
    int64_t group = win->group, m = ihwo ? w->dims[3] : w->dims[0], mg = m / group;
    int64_t cg = ihwo ? 1 : w->dims[3];
    const int64_t *st = win->strides, *dil = win->dilations, *pads = win->pad_begin;
    int xb = lower_buf_value(L, n->in[0]), wb = lower_buf_value(L, n->in[1]);
    Compute *c = lower_stage(L, "conv_nhwc", lower_buf_value(L, n->out[0]), 4, y->dims);
    IterVar *rh, *rw, *rc;
    Expr *xi[4], *wi[4], *ch, *cw, *cond = NULL, *xv;
    rh = lower_raxis(L, c, w->dims[1]);
    rw = lower_raxis(L, c, w->dims[2]);
    rc = lower_raxis(L, c, cg);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = spatial(L, &c->axes[1], rh, st[0], dil[0], pads[0], x->dims[1], &ch);
    xi[2] = spatial(L, &c->axes[2], rw, st[1], dil[1], pads[1], x->dims[2], &cw);
    xi[3] = ex_var(L, rc);
    if (group > 1)
        xi[3] = ex_add(L, ex_mul(L, ex_binary(L, BIN_DIV, ex_var(L, &c->axes[3]), ex_int(L, mg)),
                                 ex_int(L, cg)),
                       xi[3]);
    if (ch)
        cond = ch;
    if (cw)
        cond = cond ? ex_and(L, cond, cw) : cw;
    xv = ex_load_nd(L, xb, 4, x->dims, xi);
    if (cond)
        xv = ex_select(L, cond, xv, dtype_is_float(x->dtype) ? ex_float(L, x->dtype, 0.0)
                                                             : ex_const_int(L, x->dtype, 0));
    wi[0] = ihwo ? ex_int(L, 0) : ex_var(L, &c->axes[3]);
    wi[1] = ex_var(L, rh);
    wi[2] = ex_var(L, rw);
    wi[3] = ihwo ? ex_var(L, &c->axes[3]) : ex_var(L, rc);
    c->window = win;
    c->rop = RED_SUM;
    c->body = ex_mul(L, xv, ex_load_nd(L, wb, 4, w->dims, wi));
    if (n->n_in > 2 && n->in[2] >= 0)
        c->init = ex_load(L, lower_buf_value(L, n->in[2]), ex_var(L, &c->axes[3]));
    if (n->quant)
        lower_quant_sum(L, n, c, &c->axes[3]);
    L->k->macs += value_numel(y) * w->dims[1] * w->dims[2] * cg;
    return 0;
}
