/*
 * AArch64 NEON tiles for 8-bit integer sums of products (targets with the
 * "dot" knob: aarch64.json). The stage is an int32 sum of
 * (int32)X * (int32)W with X and W 8-bit loads (a padded window reads the
 * zero point through a select); lower/templates_arm.c builds the tile with
 * the factors chosen here, and emit_c/emit_a64q.c prints it:
 *
 *   dot   the innermost reduce axis of extent > 1 walks both operands with
 *         unit stride (an NHWC conv's input channels, merged with the
 *         kernel column where both continue it; Gemm's K with B
 *         transposed). The axis stays whole and innermost around a tile of
 *         4 rows (output pixels) x 4 lanes (output channels); each
 *         accumulator becomes an int32x4_t that SDOT (vdotq_s32: 16
 *         products per instruction) or, without the dot product extension,
 *         SMULL + SADALP feeds 16 bytes at a time, summed across lanes
 *         once at the end. 16 accumulators + 4 + 4 operand vectors fit the
 *         32 NEON registers.
 *   lane  the vector axis (the innermost output axis) walks one operand
 *         with unit stride, the other with unit stride too (a depthwise
 *         conv's channels: input and [1, KH, KW, C] weights) or not at all
 *         (broadcast); its extent is a multiple of 8. The tile is 4 rows x
 *         16 lanes (8 when 16 does not divide it): each group of 8 lanes
 *         is one 8-byte load per operand widened to int16x8 and two
 *         SMLAL into two int32x4_t: 16 accumulators.
 *
 * Integer sums are exact modulo 2^32, so the new order of the products
 * gives the naive schedule's bits.
 */
#include "templates_a64q.h"

#include "loopq.h"

/* The 8-bit load under (int32) casts and a padding select, and its type;
 * NULL when e is not of that form. */
static const Expr *byte_load(const Lower *L, const Expr *e, DType *t)
{
    if (e->kind == EX_SELECT)
        e = e->b;
    if (e->kind != EX_CAST || e->dtype != DT_INT32 || e->a->kind != EX_LOAD)
        return NULL;
    *t = L->k->bufs[e->a->buf].dtype;
    return *t == DT_INT8 || *t == DT_UINT8 ? e->a : NULL;
}

/* Coefficient of var in index e, a clamp to a window's bounds
 * min(max(x, lo), hi) read as x (the interior pieces have none); *ok
 * cleared when e has another form in var. */
static int64_t coef(const Expr *e, int var, int *ok)
{
    int64_t a, b;
    if (!lq_uses_var(e, var))
        return 0;
    switch (e->kind) {
    case EX_VAR: return 1;
    case EX_CAST: return coef(e->a, var, ok);
    case EX_BINARY:
        a = coef(e->a, var, ok);
        b = coef(e->b, var, ok);
        switch (e->op) {
        case BIN_ADD: return a + b;
        case BIN_SUB: return a - b;
        case BIN_MUL:
            if (e->a->kind == EX_INT)
                return e->a->ival * b;
            if (e->b->kind == EX_INT)
                return e->b->ival * a;
            break;
        case BIN_MIN: case BIN_MAX:
            if (e->b->kind == EX_INT)
                return a;
            break;
        default: break;
        }
        break;
    default: break;
    }
    *ok = 0;
    return 0;
}

static int64_t coef_of(const Expr *idx, int var)
{
    int ok = 1;
    int64_t c = coef(idx, var, &ok);
    return ok ? c : -1;
}

/* The innermost reduce axis of extent > 1 (-1: none). */
static int inner_raxis(const Compute *c, int below)
{
    int i;
    for (i = below - 1; i >= 0 && c->raxes[i].extent == 1; i--)
        ;
    return i;
}

int a64q_plan(const Lower *L, const Compute *c, A64qPlan *p)
{
    const Expr *a, *b;
    DType ta = DT_INT8, tb = DT_INT8;
    int i, o, v;
    int64_t ca, cb, ext;
    p->dot = p->lane = 0;
    if (c->rop != RED_SUM || !c->body || c->body->kind != EX_BINARY || c->body->op != BIN_MUL ||
        c->body->dtype != DT_INT32)
        return 0;
    a = byte_load(L, c->body->a, &ta);
    b = byte_load(L, c->body->b, &tb);
    if (!a || !b || (ta == DT_UINT8 && tb == DT_UINT8))
        return 0;
    /* dot: unit stride in both along the innermost reduce axis, at least
     * 8 long, or with the reduce axis around it continuing it in both
     * (kernel column x 3 input channels: emit merges them) */
    i = inner_raxis(c, c->n_raxes);
    if (i >= 0 && coef_of(a->a, c->raxes[i].var) == 1 && coef_of(b->a, c->raxes[i].var) == 1) {
        ext = c->raxes[i].extent;
        o = inner_raxis(c, i);
        if (ext < 8 && o == i - 1 && o >= 0 &&
            coef_of(a->a, c->raxes[o].var) == ext && coef_of(b->a, c->raxes[o].var) == ext)
            ext *= c->raxes[o].extent;
        if (ext >= 8) {
            p->dot = 1;
            p->acc = 16;
            p->lanes = 4;
            return 1;
        }
    }
    /* lane: the vector axis */
    for (v = c->n_axes - 1; v >= 0 && c->axes[v].extent == 1; v--)
        ;
    if (v < 0 || c->axes[v].extent % 8)
        return 0;
    ca = coef_of(a->a, c->axes[v].var);
    cb = coef_of(b->a, c->axes[v].var);
    if ((ca != 0 && ca != 1) || (cb != 0 && cb != 1) || ca + cb == 0)
        return 0;
    p->lane = 1;
    p->lanes = c->axes[v].extent % 16 ? 8 : 16;
    p->acc = 4 * p->lanes;
    return 1;
}
