/*
 * Max pooling (2-D, float32, NCHW) on the x86 vector targets, through the
 * depthwise conv's row tiles (tpl_dwconv.c): the stage lower_MaxPool
 * builds, acc = max(acc, x[n][c][oh*s0 - p0 + kh*d0][ow*s1 - p1 + kw*d1])
 * over the window with the taps outside the image reading -inf (the
 * padding select), matched here, then tiled like a depthwise conv without
 * weights: each channel's plane copied with -inf around it and, for a
 * column stride S > 1, split into S column phases, so that every tap of a
 * tile reads whole contiguous vectors; P output rows x VL columns of
 * accumulators updated tap by tap in the window's order.
 *
 * The result is the generic schedule's, bit for bit: every output element
 * starts at the stage's init (-inf) and takes tvmrt_maxf(acc, x) for the
 * taps in the same order (emit_intrin.c prints that rule lane-wise, NaN
 * included); a padded tap reads -inf where the select gave -inf.
 *
 * Left to the generic schedule: other ranks, a body that is not a plain
 * load of the input under its padding select (a fused producer), the
 * Indices output (a second stage), the portable `c` target (gcc vectorizes
 * its pooling loops itself).
 */
#include "tpl_packed.h"

#include <math.h>

/* Whether e is a float32 -inf constant (the padding select's value). */
static int is_minus_inf(const Expr *e)
{
    return e && e->kind == EX_FLOAT && e->dtype == DT_FLOAT32 && isinf(e->fval) && e->fval < 0;
}

/* Whether index e is exactly axis variable var (or 0 when the axis has one
 * position). */
static int index_is_axis(const Expr *e, const IterVar *axis)
{
    LqAffine a;
    int v = axis->var;
    if (!lq_affine(e, &a) || a.c0 != 0 || !lq_aff_only(&a, &v, 1))
        return 0;
    return axis->extent == 1 || lq_aff_coef(&a, v) == 1;
}

int tpl_maxpool(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *xl = c->body, *cond = NULL;
    int64_t s[2], d[2], lo[2], hi[2];
    Window w;
    if (t->family->portable || t->vector_bits < 256 || c->rop != RED_MAX || c->n_axes != 4 ||
        c->n_raxes != 2 || !c->window || c->window->nsp != 2 || !xl || k->bufs[c->out_buf].dtype != DT_FLOAT32)
        return 1;
    if ((c->post && c->post->dtype != DT_FLOAT32) || (c->init && c->init->dtype != DT_FLOAT32))
        return 1;
    if (xl->kind == EX_SELECT) {
        if (!is_minus_inf(xl->c))
            return 1;
        cond = xl->a;
        xl = xl->b;
    }
    if (!tpl_f32_load(k, xl) || xl->nidx != 4 || !xl->dims || xl->buf == c->out_buf ||
        xl->dims[0] != c->axes[0].extent || xl->dims[1] != c->axes[1].extent)
        return 1;
    if (!index_is_axis(xl->idx[0], &c->axes[0]) || !index_is_axis(xl->idx[1], &c->axes[1]))
        return 1;
    if (tpl_window(L, c, xl, cond, 0, xl->dims[2], xl->dims[3], s, d, lo, hi))
        return 1;
    w = tpl_window_make(c->axes[0].extent, c->axes[1].extent, xl->dims[2], xl->dims[3], c->axes[2].extent,
                        c->axes[3].extent, c->raxes[0].extent, c->raxes[1].extent, s, d, lo, hi);
    return tpl_conv_depthwise(L, t, c, NULL, xl->buf, &w);
}
