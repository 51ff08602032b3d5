/*
 * Integer convolution tiles for the x86 targets (AVX2, AVX-512): the int32
 * sums of 8-bit products that lower_quant_sum() (op_quant.c) makes of a
 * quantized Conv, group 1, 2-D, NCHW, with constant int8 weights.
 *
 * The stage is matched by structure:
 *
 *   out = post( init[c] + sum_{ci,kh,kw} X(ci, oh*s+kh*d, ow*s+kw*d) * int32(W[c][ci][kh][kw]) )
 *
 * with X = int32(x[..]) (int8 or uint8 data), or select(inside, int32(x), zx)
 * when the window reads padding. The kernel's nest becomes:
 *
 *   - a copy of the image into xq[Hp][Wp][Cq] (channels innermost, Cq = Ci
 *     rounded up to 4), every value biased to uint8 (x + 128 for int8
 *     data) and the padding holding zx biased the same way; the channels
 *     past Ci hold 0;
 *   - the weights repacked at compile time into wq[cb][kh][kw][g][VL][4]
 *     (int8; wq[..][v][j] = W[cb*VL + v][4g + j][kh][kw], 0 past the last
 *     channel), a new graph constant;
 *   - the bias folded: every sum starts from init[c] - 128 * sum(W[c])
 *     (a new int32 constant of the corrections, added to the stage's init),
 *     which cancels the products of the bias exactly;
 *   - per tile of P output positions x VL output channels: a local int32
 *     accumulator tile, the reduce loops kh, kw, g around
 *     `for p: for v: for j < 4: acc[p*VL + v] += int32(xq[..p..j]) *
 *     int32(wq[..v..j])` (kh marked FOR_TENSORIZE: emit_c/emit_qtile.c
 *     prints it with vpdpbusd, or an exact vpmaddwd form where the
 *     compiler offers no VNNI), then post(acc) stored per output element.
 *
 * Integer sums are exact (modulo 2^32 like the naive schedule's int32
 * accumulator), so the order of the reduction does not matter: the results
 * are the naive schedule's bit for bit.
 */
#include "tpl_packed.h"
#include "eval.h"

#include <string.h>

/* The data operand x of a product: int32(load) or select(c, int32(load),
 * zx); gives the load, the condition (or NULL) and zx. */
int tpl_q_data(const Kernel *k, const Expr *e, const Expr **load, const Expr **cond, int64_t *zx)
{
    *cond = NULL;
    *zx = 0;
    if (e->kind == EX_SELECT) {
        if (e->c->kind != EX_INT)
            return 1;
        *cond = e->a;
        *zx = e->c->ival;
        e = e->b;
    }
    if (e->kind != EX_CAST || e->dtype != DT_INT32 || e->a->kind != EX_LOAD)
        return 1;
    e = e->a;
    if (e->dtype != DT_INT8 && e->dtype != DT_UINT8)
        return 1;
    if (k->bufs[e->buf].dtype != e->dtype)
        return 1;
    *load = e;
    return 0;
}

/* The weight operand: int32(load of an int8 constant with data). */
int tpl_q_weights(const Lower *L, const Expr *e, const Expr **load)
{
    const Buffer *b;
    if (e->kind != EX_CAST || e->dtype != DT_INT32 || e->a->kind != EX_LOAD || e->a->dtype != DT_INT8)
        return 1;
    b = &L->k->bufs[e->a->buf];
    if (b->dtype != DT_INT8 || b->scope != BUF_CONST || !L->g || b->value < 0 || !L->g->values[b->value].data)
        return 1;
    *load = e->a;
    return 0;
}

/* New int32 or int8 graph constant of n elements holding data. */
int tpl_new_const(Lower *L, const char *what, DType t, int64_t n, void *data)
{
    Graph *g = L->g;
    int32_t vi = graph_add_value(g, arena_printf(L->arena, "%s_%s", what, L->k->name ? L->k->name : "k"));
    Value *nv = &g->values[vi];
    nv->dtype = t;
    nv->rank = 1;
    nv->dims[0] = n;
    nv->data = data;
    return lower_buf_value(L, vi);
}

/* The padded, channels-last, biased copy of image n:
 * xq[(ih*Wp + iw)*Cq + c] = uint8(x[n][c][ih+lo0][iw+lo1] + bias) inside
 * the image, uint8(zx + bias) outside it, 0 for c >= Ci. flat: a 1x1
 * window over the whole plane, positions q = iw over H*W (Hp = 1). */
static Stmt *q_copy(Lower *L, int xq, const Expr *xl, const IterVar *nv, int64_t Ci, int64_t Cq, int64_t H,
                    int64_t W, int64_t Hp, int64_t Wp, int64_t lo0, int64_t lo1, int flat, int64_t bias,
                    int64_t zx, Expr *chan, int64_t Cx)
{
    IterVar ih = lower_itervar(L, "ih", Hp), iw, cc = lower_itervar(L, "cc", Ci);
    Expr *row = ex_add(L, ex_var(L, &ih), ex_int(L, lo0));
    Expr *pad = ex_const_int(L, DT_INT32, L->k->bufs[xq].dtype == DT_UINT8 ? (zx + bias) & 0xff : zx + bias);
    Stmt *inrow, *padrow, *s, *cz = NULL;
    int64_t j0 = 0, j1 = Wp, cols = flat ? H * W : W;
    int n = 0;
    /* columns [j0, j1) read the image */
    while (j0 < Wp && j0 + lo1 < 0)
        j0++;
    while (j1 > j0 && j1 - 1 + lo1 >= cols)
        j1--;
    inrow = st_seq(L, 4);
    if (j0 > 0) {
        IterVar a = lower_itervar(L, "iw", j0), c2 = lower_itervar(L, "cc", Cq);
        Expr *ix = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &ih), ex_int(L, Wp)), ex_var(L, &a)),
                                    ex_int(L, Cq)),
                          ex_var(L, &c2));
        inrow->body[n++] = st_for(L, &a, st_for(L, &c2, st_store(L, xq, ix, pad)));
    }
    if (j1 > j0) {
        Expr *col, *xi, *ix, *v;
        Expr *idx[4];
        iw = lower_itervar(L, "iw", j1 - j0);
        col = ex_add(L, ex_var(L, &iw), ex_int(L, j0 + lo1));
        idx[0] = ex_var(L, nv);
        idx[1] = chan ? ex_add(L, chan, ex_var(L, &cc)) : ex_var(L, &cc);
        if (flat) {
            /* the plane as one row of H*W columns */
            xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, idx[0], ex_int(L, Cx)), idx[1]), ex_int(L, H * W)), col);
        } else {
            idx[2] = row;
            idx[3] = col;
            xi = ex_offset(L, 4, xl->dims, idx);
        }
        v = ex_cast(L, DT_INT32, ex_load(L, xl->buf, xi));
        if (bias)
            v = ex_add(L, v, ex_const_int(L, DT_INT32, bias));
        ix = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &ih), ex_int(L, Wp)),
                                        ex_add(L, ex_var(L, &iw), ex_int(L, j0))),
                              ex_int(L, Cq)),
                    ex_var(L, &cc));
        s = st_store(L, xq, ix, v);
        s = st_for(L, &cc, s);
        if (Cq > Ci) {
            IterVar c3 = lower_itervar(L, "cc", Cq - Ci);
            Expr *iz = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &ih), ex_int(L, Wp)),
                                                  ex_add(L, ex_var(L, &iw), ex_int(L, j0))),
                                        ex_int(L, Cq)),
                              ex_add(L, ex_var(L, &c3), ex_int(L, Ci)));
            Stmt *s2 = st_seq(L, 2);
            s2->body[0] = s;
            s2->body[1] = st_for(L, &c3, st_store(L, xq, iz, ex_const_int(L, DT_INT32, 0)));
            s = s2;
        }
        inrow->body[n++] = st_for(L, &iw, s);
    }
    if (j1 < Wp) {
        int64_t from = j1 > j0 ? j1 : j0;
        IterVar a = lower_itervar(L, "iw", Wp - from), c2 = lower_itervar(L, "cc", Cq);
        Expr *ix = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &ih), ex_int(L, Wp)),
                                              ex_add(L, ex_var(L, &a), ex_int(L, from))),
                                    ex_int(L, Cq)),
                          ex_var(L, &c2));
        inrow->body[n++] = st_for(L, &a, st_for(L, &c2, st_store(L, xq, ix, pad)));
    }
    inrow->n_body = n;
    {
        IterVar a = lower_itervar(L, "iw", Wp * Cq);
        Expr *ix = ex_add(L, ex_mul(L, ex_var(L, &ih), ex_int(L, Wp * Cq)), ex_var(L, &a));
        padrow = st_for(L, &a, st_store(L, xq, ix, pad));
    }
    (void)cz;
    if (flat)
        return st_for(L, &ih, inrow);
    s = st_if_else(L, ex_and(L, ex_binary(L, BIN_GE, row, ex_int(L, 0)), ex_lt(L, row, ex_int(L, H))), inrow,
                   padrow);
    return st_for(L, &ih, s);
}


/* ---- the epilogue: what follows the conv's own requantization ----
 *
 * The post of a fused kernel is the requantization of the sum to 8 bits
 * (an integer expression, which vectorizes), then whatever the fused nodes
 * do with that 8-bit value: a DequantizeLinear -> Clip -> QuantizeLinear
 * left in float, a table lookup (a quantized Relu)... When that remainder
 * depends on the 8-bit value alone (every other load a constant element),
 * it is a function of 256 inputs: it is evaluated here through the loop-IR
 * interpreter (the definition the scalar code prints) into a table, and
 * the post becomes a clamp when the table is one, else a lookup. */

static int has_acc(const Expr *e)
{
    return e && (e->kind == EX_ACC || has_acc(e->a) || has_acc(e->b) || has_acc(e->c));
}

/* The smallest 8-bit integer subexpression of e that contains the
 * accumulator. */
static const Expr *find_q8(const Expr *e)
{
    const Expr *r;
    if (!has_acc(e))
        return NULL;
    if ((r = find_q8(e->a)) || (r = find_q8(e->b)) || (r = find_q8(e->c)))
        return r;
    return e->dtype == DT_INT8 || e->dtype == DT_UINT8 ? e : NULL;
}

static Expr *replace_node(Lower *L, const Expr *e, const Expr *target, Expr *repl)
{
    if (!e)
        return NULL;
    if (e == target)
        return repl;
    if (!e->a && !e->b && !e->c)
        return (Expr *)e;
    return ex_with(L, e, replace_node(L, e->a, target, repl), replace_node(L, e->b, target, repl),
                   replace_node(L, e->c, target, repl));
}

/* Whether e uses no variable but var, no accumulator, and loads only
 * elements of constants with data (at indices that use no variable unless
 * index_var): a function of var that the interpreter can evaluate. */
int tpl_const_of(const Lower *L, const Expr *e, int var, int index_var)
{
    if (!e)
        return 1;
    if (e->kind == EX_ACC)
        return 0;
    if (e->kind == EX_VAR)
        return e->var == var;
    if (e->kind == EX_LOAD) {
        const Buffer *b = &L->k->bufs[e->buf];
        if (b->scope != BUF_CONST || b->value < 0 || !L->g->values[b->value].data ||
            (!index_var && lq_uses_var(e->a, var)))
            return 0;
    }
    return tpl_const_of(L, e->a, var, index_var) && tpl_const_of(L, e->b, var, index_var) &&
           tpl_const_of(L, e->c, var, index_var);
}

/* out[i] = f at iv = i for every i of iv's extent, f stored as type t,
 * through the loop-IR interpreter (the definition the scalar code prints);
 * f reads only constants (tpl_const_of). Nonzero when a load went out of
 * bounds. */
int tpl_eval_over(Lower *L, const IterVar *iv, Expr *f, DType t, const char *name, void *out)
{
    Kernel *k = L->k;
    int tb = lower_buf_temp(L, name, t, iv->extent), i, r;
    void **bufs = lower_alloc(L, (size_t)k->n_bufs * sizeof *bufs);
    Stmt *saved;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].scope == BUF_CONST && k->bufs[i].value >= 0)
            bufs[i] = L->g->values[k->bufs[i].value].data;
    bufs[tb] = out;
    saved = k->body;
    k->body = st_for(L, iv, st_store(L, tb, ex_var(L, iv), f));
    r = lower_eval(k, bufs);
    k->body = saved;
    k->bufs[tb].scope = BUF_UNUSED;
    return r;
}

/* A copy of a 256-entry 8-bit table followed by 3 zero bytes: the vector
 * epilogue (emit_c/emit_qtile.c) gathers 4 bytes at each index and keeps
 * the first. */
static uint8_t *pad_tab(Lower *L, const uint8_t *tab)
{
    uint8_t *t = lower_alloc(L, 256 + 3);
    memcpy(t, tab, 256);
    t[256] = t[257] = t[258] = 0;
    return t;
}

static Expr *q8_post(Lower *L, Expr *post, DType out, int tab32)
{
    Kernel *k = L->k;
    const Expr *q = find_q8(post);
    IterVar iv;
    Expr *ph, *f;
    int tb;
    int64_t lo = 0, qlo, qhi, a = 0, b = 0;
    uint8_t *tab;
    if (!q || q == post || (out != DT_INT8 && out != DT_UINT8))
        return post;
    if (tab32) {
        /* already a lookup in an 8-bit constant table: its padded copy */
        const Expr *e = post->kind == EX_CAST && post->dtype == out ? post->a : post;
        const Buffer *tb2 = e->kind == EX_LOAD ? &k->bufs[e->buf] : NULL;
        if (tb2 && (tb2->dtype == DT_INT8 || tb2->dtype == DT_UINT8) && tb2->scope == BUF_CONST && tb2->value >= 0 &&
            tb2->numel == 256 && L->g->values[tb2->value].data && e->a->kind == EX_BINARY && e->a->op == BIN_SUB) {
            tb = tpl_new_const(L, "qconv_tab", tb2->dtype, 256 + 3, pad_tab(L, L->g->values[tb2->value].data));
            return ex_cast(L, out, ex_load(L, tb, e->a));
        }
    }
    qlo = q->dtype == DT_INT8 ? -128 : 0;
    qhi = qlo + 255;
    iv = lower_itervar(L, "q", 256);
    ph = ex_cast(L, q->dtype, ex_add(L, ex_var(L, &iv), ex_int(L, qlo)));
    f = replace_node(L, post, q, ph);
    if (!tpl_const_of(L, f, iv.var, 0))
        return post;
    tab = lower_alloc(L, 256);
    if (tpl_eval_over(L, &iv, f, out, "qtab", tab))
        return post;
    /* a clamp: tab[x] = min(max(x, a), b) in the output's type */
    {
        int clamp = 1;
        int64_t x;
        lo = out == DT_INT8 ? -128 : 0;
        a = out == DT_INT8 ? (int64_t)(int8_t)tab[0] : (int64_t)tab[0];
        b = out == DT_INT8 ? (int64_t)(int8_t)tab[255] : (int64_t)tab[255];
        for (x = qlo; x <= qhi && clamp; x++) {
            int64_t y = out == DT_INT8 ? (int64_t)(int8_t)tab[x - qlo] : (int64_t)tab[x - qlo];
            if (y != (x < a ? a : x > b ? b : x))
                clamp = 0;
        }
        if (clamp && a >= lo && b <= lo + 255) {
            Expr *v = ex_cast(L, DT_INT32, (Expr *)q);
            v = ex_binary(L, BIN_MAX, v, ex_const_int(L, DT_INT32, a));
            v = ex_binary(L, BIN_MIN, v, ex_const_int(L, DT_INT32, b));
            return ex_cast(L, out, v);
        }
    }
    {
        int t2;
        if (tab32) {
            /* padded for the vector epilogue's 4-byte gathers */
            t2 = tpl_new_const(L, "qconv_tab", out, 256 + 3, pad_tab(L, tab));
            return ex_cast(L, out, ex_load(L, t2, ex_sub(L, ex_cast(L, DT_INT64, (Expr *)q), ex_int(L, qlo))));
        }
        t2 = tpl_new_const(L, "qconv_tab", out, 256, tab);
        return ex_load(L, t2, ex_sub(L, ex_cast(L, DT_INT64, (Expr *)q), ex_int(L, qlo)));
    }
}

/* Marks the copy's image rows of a one-channel plane (q_copy with Ci 1):
 * `for iw: for cc < 1: xp[..iw..] = x[..iw..]` loses its unit loop and
 * becomes FOR_TENSORIZE, which emit_c/emit_qtile.c prints as widening
 * vector loads (a loop the C compiler leaves scalar: it cannot prove that
 * the int16 plane and the 8-bit image do not overlap). */
static Stmt *q_mark_rows(Lower *L, Stmt *s, int xp, int xbuf)
{
    int i;
    if (!s)
        return s;
    if (s->kind == ST_FOR && s->n_body == 1 && s->body[0] && s->body[0]->kind == ST_FOR &&
        s->body[0]->extent == 1 && s->body[0]->body[0] && s->body[0]->body[0]->kind == ST_STORE &&
        s->body[0]->body[0]->buf == xp && lq_loads(s->body[0]->body[0]->value, xbuf)) {
        Stmt *r = st_loop(L, s->var, s->extent, lq_stmt_subst_var(L, s->body[0]->body[0], s->body[0]->var, ex_int(L, 0)));
        r->for_kind = FOR_TENSORIZE;
        return r;
    }
    for (i = 0; i < s->n_body; i++)
        s->body[i] = q_mark_rows(L, s->body[i], xp, xbuf);
    return s;
}

/* A depthwise int8 conv (one input channel per output channel): per
 * channel, its plane copied with the padding holding zx into a local
 * int16 array; per output row, the sums of the row computed with the
 * positions as the vector axis (one loop the C compiler vectorizes:
 * widening loads, invariant weights, int32 multiply-adds), then the post
 * per element. */
static int q_depthwise(Lower *L, const Target *t, Compute *c, const Expr *xl, const Expr *wl, const Expr *cond, int64_t zx)
{
    Kernel *k = L->k;
    int64_t N = c->axes[0].extent, C = c->axes[1].extent, OH = c->axes[2].extent, OW = c->axes[3].extent;
    int64_t KH = c->raxes[1].extent, KW = c->raxes[2].extent, H = xl->dims[2], W = xl->dims[3];
    int64_t s[2], d[2], lo[2], hi[2], Hp, Wp, kh, kw;
    IterVar nv, cv, ohv, owv, owv2, rv;
    int64_t lanes = t->vector_bits / 32, OWp, slack, step;
    int xp, acc, pairs;
    Expr **map, *sum, *pst, *index;
    Stmt *copy, *row, *seq, *epi, *body;
    if (tpl_conv_window(L, c, xl, cond, H, W, s, d, lo, hi))
        return 1;
    /* the weight operand is used as it is, at (c, 0, kh, kw) */
    (void)wl;
    Hp = hi[0] - lo[0] + 1;
    Wp = hi[1] - lo[1] + 1;
    if (Hp * Wp > 32768 || OW > 4096)
        return 1;
    /* the row as tap pairs (emit_c/emit_qtile.c's depthwise row): unit
     * dilation along the row, stride 1 or 2, an init that does not vary
     * along it; stride 1 computes 2 vectors of columns at a time, or one
     * vector of single taps when the row fits one */
    pairs = (lanes == 8 || lanes == 16) && d[1] == 1 && (s[1] == 1 || s[1] == 2) && KH * KW <= 64 &&
            (!c->init || !lq_uses_var(c->init, c->axes[3].var));
    /* the row computed and requantized in whole vectors: OWp columns, the
     * plane followed by `slack` zeros that the columns past OW read (the
     * tap pairs read up to s*OWp + KW columns from the last row's start) */
    step = pairs && s[1] == 1 && OW > lanes ? 2 * lanes : lanes;
    OWp = lanes >= 8 ? tpl_ceil_div(OW, step) * step : OW;
    slack = pairs ? s[1] * OWp + KW + 1 : (OWp - OW) * s[1];
    nv = lower_itervar(L, "n", N);
    cv = lower_itervar(L, "c", C);
    ohv = lower_itervar(L, "oh", OH);
    owv = lower_itervar(L, "ow", OWp);
    owv2 = lower_itervar(L, "ow", OWp);
    rv = lower_itervar(L, "r", 1);
    xp = lower_buf_temp(L, "xp", DT_INT16, Hp * Wp + slack);
    k->bufs[xp].scope = BUF_LOCAL;
    k->bufs[xp].no_init = 1;
    acc = lower_buf_temp(L, "acc", DT_INT32, OWp);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1;
    copy = q_copy(L, xp, xl, &nv, 1, 1, H, W, Hp, Wp, lo[0], lo[1], 0, 0, zx, ex_var(L, &cv), C);
    if (pairs)
        copy = q_mark_rows(L, copy, xp, xl->buf);
    if (slack) {
        IterVar sv = lower_itervar(L, "sl", slack);
        Stmt *s2 = st_seq(L, 2);
        s2->body[0] = copy;
        s2->body[1] = st_for(L, &sv, st_store(L, xp, ex_add(L, ex_var(L, &sv), ex_int(L, Hp * Wp)),
                                              ex_const_int(L, DT_INT32, 0)));
        copy = s2;
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[1].var] = ex_var(L, &cv);
    map[c->axes[2].var] = ex_var(L, &ohv);
    map[c->axes[3].var] = ex_var(L, &owv);
    map[c->raxes[0].var] = ex_int(L, 0);
    sum = c->init ? lq_subst(L, c->init, map, NULL) : ex_const_int(L, DT_INT32, 0);
    for (kh = 0; kh < KH; kh++)
        for (kw = 0; kw < KW; kw++) {
            Expr *xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &ohv), ex_int(L, s[0])), ex_int(L, kh * d[0])),
                                        ex_int(L, Wp)),
                              ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, s[1])), ex_int(L, kw * d[1])));
            Expr *wv;
            map[c->raxes[1].var] = ex_int(L, kh);
            map[c->raxes[2].var] = ex_int(L, kw);
            wv = lq_subst(L, c->body->b, map, NULL);
            sum = ex_add(L, sum, ex_mul(L, ex_cast(L, DT_INT32, ex_load(L, xp, xi)), wv));
        }
    row = st_store(L, acc, ex_var(L, &owv), sum);
    row = st_for(L, &owv, row);
    row->for_kind = pairs ? FOR_TENSORIZE : FOR_VECTORIZE;
    map[c->axes[3].var] = ex_var(L, &owv2);
    index = lower_out_index(L, c);
    pst = c->post ? q8_post(L, c->post, k->bufs[c->out_buf].dtype, 1) : NULL;
    epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL),
                   pst ? lq_subst(L, pst, map, ex_load(L, acc, ex_var(L, &owv2))) : ex_load(L, acc, ex_var(L, &owv2)));
    if (OWp != OW)
        epi = st_if(L, ex_lt(L, ex_var(L, &owv2), ex_int(L, OW)), epi);
    epi = st_for(L, &owv2, epi);
    epi->for_kind = FOR_VECTORIZE;
    /* one row: emit_c/emit_qtile.c prints it with vectors */
    epi = st_for(L, &rv, epi);
    epi->for_kind = FOR_TENSORIZE;
    seq = st_seq(L, 2);
    seq->body[0] = row;
    seq->body[1] = epi;
    body = st_seq(L, 2);
    body->body[0] = copy;
    body->body[1] = st_for(L, &ohv, st_decl(L, acc, seq));
    body = st_for(L, &cv, st_decl(L, xp, body));
    body->for_kind = FOR_PARALLEL;
    k->body = st_for(L, &nv, body);
    return 0;
}

/* A 1x1 conv of stride 1 without padding on NCHW data (the flat case),
 * with the positions as the vector lanes: the image copied into
 * xq[g][HWp][4] (four consecutive channels of a position in one int32
 * lane, biased to uint8), the weights packed [cb][g][R][4], and per tile
 * of R output channels x VLp positions the same FOR_TENSORIZE update as
 * the dense tile with the roles of the operands exchanged (the data a
 * vector, the weights one broadcast int32 per row). Each output channel's
 * positions are then consecutive in the tile and in the NCHW output, so
 * the epilogue (FOR_TENSORIZE `for r: for v`, emit_c/emit_qtile.c) stores
 * whole vectors. */
static int q_pointwise(Lower *L, const Target *t, Compute *c, const Expr *xl, const int8_t *wsrc,
                       const Buffer *wb, int64_t wco, int64_t wci, int64_t wc0, int64_t bias)
{
    Kernel *k = L->k;
    int64_t N = c->axes[0].extent, Co = c->axes[1].extent, OH = c->axes[2].extent, OW = c->axes[3].extent;
    int64_t Ci = c->raxes[0].extent, HW = OH * OW, Cq = (Ci + 3) / 4 * 4, G4 = Cq / 4;
    int64_t lanes = t->vector_bits / 32, NV, VLp, R = 1, T, HWp, ncb, cands[] = {12, 10, 8, 6, 4, 3, 2, 1};
    int xq, acc, wq, corr, i;
    IterVar nv, ptv, cbv, rv, vv, jv, gv;
    Expr **map, *co, *q, *accix;
    Stmt *copy, *init, *tile, *epi, *seq, *loops, *body;
    int8_t *wdst;
    int32_t *cdst;
    if (!tpl_flat_ok(L, c->post, c->axes[2].var, c->axes[3].var, OW) ||
        !tpl_flat_ok(L, c->out_index, c->axes[2].var, c->axes[3].var, OW))
        return 1;
    NV = HW >= 2 * lanes && lanes == 16 ? 2 : 1;
    VLp = NV * lanes;
    for (i = 0; i < 8; i++)
        if (Co % cands[i] == 0 && cands[i] * NV <= 24) {
            R = cands[i];
            break;
        }
    if (R < 4 && Co > 8)
        return 1;
    T = tpl_ceil_div(HW, VLp);
    HWp = T * VLp;
    ncb = Co / R;
    wdst = lower_alloc(L, (size_t)(ncb * G4 * R * 4));
    cdst = lower_alloc(L, (size_t)Co * sizeof *cdst);
    {
        int64_t ch, ci, off;
        for (ch = 0; ch < Co; ch++)
            for (ci = 0; ci < Cq; ci++) {
                int8_t w = 0;
                if (ci < Ci) {
                    off = wc0 + ch * wco + ci * wci;
                    if (off < 0 || off >= wb->numel)
                        return 1;
                    w = wsrc[off];
                    cdst[ch] -= (int32_t)(bias * w);
                }
                wdst[(((ch / R) * G4 + ci / 4) * R + ch % R) * 4 + ci % 4] = w;
            }
    }
    wq = tpl_new_const(L, "qconv_w", DT_INT8, ncb * G4 * R * 4, wdst);
    corr = tpl_new_const(L, "qconv_corr", DT_INT32, Co, cdst);
    nv = lower_itervar(L, "n", N);
    ptv = lower_itervar(L, "pt", T);
    cbv = lower_itervar(L, "cb", ncb);
    rv = lower_itervar(L, "r", R);
    vv = lower_itervar(L, "v", VLp);
    jv = lower_itervar(L, "j", 4);
    gv = lower_itervar(L, "rg", G4);
    xq = lower_buf_temp(L, "xq", DT_UINT8, G4 * HWp * 4);
    acc = lower_buf_temp(L, "acc", DT_INT32, R * VLp);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1;
    /* the copy: xq[(g*HWp + p)*4 + j] = x[n][4g + j][p] + bias (0 past
     * Ci; the positions past HW hold 0 and are never stored) */
    {
        IterVar g2 = lower_itervar(L, "cg", G4), p2 = lower_itervar(L, "cp", HW), j2 = lower_itervar(L, "cj", 4);
        Expr *ch = ex_add(L, ex_mul(L, ex_var(L, &g2), ex_int(L, 4)), ex_var(L, &j2));
        Expr *ix = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &g2), ex_int(L, HWp)), ex_var(L, &p2)), ex_int(L, 4)),
                          ex_var(L, &j2));
        Expr *xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, Ci)), ch), ex_int(L, HW)),
                          ex_var(L, &p2));
        Expr *v;
        Stmt *s1;
        if (Cq > Ci)
            xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, Ci)),
                                           ex_binary(L, BIN_MIN, ch, ex_int(L, Ci - 1))), ex_int(L, HW)),
                        ex_var(L, &p2));
        v = ex_cast(L, DT_INT32, ex_load(L, xl->buf, xi));
        if (bias)
            v = ex_add(L, v, ex_const_int(L, DT_INT32, bias));
        if (Cq > Ci)
            v = ex_select(L, ex_lt(L, ch, ex_int(L, Ci)), v, ex_const_int(L, DT_INT32, 0));
        s1 = st_for(L, &p2, st_for(L, &j2, st_store(L, xq, ix, v)));
        /* four channel planes interleaved by emit_c/emit_qtile.c (whole
         * groups of 4 channels only) */
        if (Cq == Ci && (lanes == 8 || lanes == 16))
            s1->for_kind = FOR_TENSORIZE;
        s1 = st_for(L, &g2, s1);
        if (HWp > HW) {
            IterVar g3 = lower_itervar(L, "cg", G4), p3 = lower_itervar(L, "cp", (HWp - HW) * 4);
            Expr *iz = ex_add(L, ex_add(L, ex_mul(L, ex_var(L, &g3), ex_int(L, HWp * 4)), ex_int(L, HW * 4)),
                              ex_var(L, &p3));
            copy = st_seq(L, 2);
            copy->body[0] = s1;
            copy->body[1] = st_for(L, &g3, st_for(L, &p3, st_store(L, xq, iz, ex_const_int(L, DT_INT32, 0))));
        } else {
            copy = s1;
        }
    }
    accix = ex_add(L, ex_mul(L, ex_var(L, &rv), ex_int(L, VLp)), ex_var(L, &vv));
    {
        Expr *xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &gv), ex_int(L, HWp)),
                                              ex_add(L, ex_mul(L, ex_var(L, &ptv), ex_int(L, VLp)), ex_var(L, &vv))),
                                    ex_int(L, 4)),
                          ex_var(L, &jv));
        Expr *wi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, G4)),
                                                                  ex_var(L, &gv)),
                                                        ex_int(L, R)),
                                              ex_var(L, &rv)),
                                    ex_int(L, 4)),
                          ex_var(L, &jv));
        Expr *prod = ex_mul(L, ex_cast(L, DT_INT32, ex_load(L, xq, xi)), ex_cast(L, DT_INT32, ex_load(L, wq, wi)));
        tile = st_store(L, acc, accix, ex_add(L, ex_load(L, acc, accix), prod));
        tile = st_for(L, &jv, tile);
        tile = st_for(L, &vv, tile);
        tile = st_for(L, &rv, tile);
        tile = st_for(L, &gv, tile);
        tile->for_kind = FOR_TENSORIZE;
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    co = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, R)), ex_var(L, &rv));
    q = ex_add(L, ex_mul(L, ex_var(L, &ptv), ex_int(L, VLp)), ex_var(L, &vv));
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[1].var] = co;
    {
        Expr *iv, *qc = HWp != HW ? ex_binary(L, BIN_MIN, q, ex_int(L, HW - 1)) : q;
        map[c->axes[2].var] = ex_binary(L, BIN_DIV, qc, ex_int(L, OW));
        map[c->axes[3].var] = ex_binary(L, BIN_MOD, qc, ex_int(L, OW));
        iv = ex_load(L, corr, co);
        if (c->init)
            iv = ex_add(L, lq_subst(L, c->init, map, NULL), iv);
        init = st_store(L, acc, accix, iv);
        init = st_for(L, &vv, init);
        init->for_kind = FOR_VECTORIZE;
        init = st_for(L, &rv, init);
    }
    {
        Expr *index, *pst;
        map[c->axes[2].var] = ex_int(L, 0);
        map[c->axes[3].var] = q;
        index = lower_out_index(L, c);
        if (c->post) {
            pst = q8_post(L, c->post, k->bufs[c->out_buf].dtype, 1);
            epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), lq_subst(L, pst, map, ex_load(L, acc, accix)));
        } else {
            epi = tpl_store_out(L, c, index, map, ex_load(L, acc, accix));
        }
        if (HWp != HW)
            epi = st_if(L, ex_lt(L, q, ex_int(L, HW)), epi);
        epi = st_for(L, &vv, epi);
        epi->for_kind = FOR_VECTORIZE;
        epi = st_for(L, &rv, epi);
        epi->for_kind = FOR_TENSORIZE;
    }
    seq = st_seq(L, 3);
    seq->body[0] = init;
    seq->body[1] = tile;
    seq->body[2] = epi;
    loops = st_for(L, &cbv, st_decl(L, acc, seq));
    loops = st_for(L, &ptv, loops);
    loops->for_kind = FOR_PARALLEL;
    body = st_seq(L, 2);
    body->body[0] = copy;
    body->body[1] = loops;
    k->body = st_for(L, &nv, body);
    return 0;
}

int tpl_qconv(Lower *L, const Target *t, Compute *c)
{
    Kernel *k = L->k;
    const Expr *xl, *wl, *cond;
    LqAffine a0, a1, aw;
    int i, flat, lanes, regs, V, P, pmax, xq, acc, wq, corr;
    int64_t N, Ci, Cq, G4, Co, KH, KW, H, W, OH, OW, s[2], d[2], lo[2], hi[2], zx, bias, VL, ncb, T, Hp, Wp,
        rows, wco, wr[3], wc0;
    IterVar nv, cbv, ohv, owv, pv, vv, jv, rv[3];
    Expr **map, *co, *q, *accix;
    Stmt *copy, *init, *tile, *epi, *seq, *loops, *body;
    const int8_t *wsrc;
    int8_t *wdst;
    int32_t *cdst;
    const Buffer *wb;
    if (c->rop != RED_SUM || !c->body || c->body->kind != EX_BINARY || c->body->op != BIN_MUL ||
        c->body->dtype != DT_INT32 || c->n_axes != 4 || c->n_raxes != 3 || !c->window)
        return 1;
    if (k->bufs[c->out_buf].dtype == DT_FLOAT32 || k->bufs[c->out_buf].dtype == DT_FLOAT64)
        return 1;
    if (c->init && c->init->dtype != DT_INT32)
        return 1;
    if (tpl_q_data(k, c->body->a, &xl, &cond, &zx) || tpl_q_weights(L, c->body->b, &wl))
        return 1;
    if (xl->nidx != 4 || !xl->dims || xl->buf == c->out_buf)
        return 1;
    N = c->axes[0].extent;
    Co = c->axes[1].extent;
    OH = c->axes[2].extent;
    OW = c->axes[3].extent;
    Ci = c->raxes[0].extent;
    KH = c->raxes[1].extent;
    KW = c->raxes[2].extent;
    H = xl->dims[2];
    W = xl->dims[3];
    if (xl->dims[0] != N)
        return 1;
    if (Ci == 1 && xl->dims[1] == Co && Co > 1) {
        /* depthwise: the input channel is the output channel */
        int vc[2];
        vc[0] = c->axes[1].var;
        vc[1] = c->raxes[0].var; /* of extent 1 */
        if (!lq_affine(xl->idx[1], &a1) || a1.c0 || !lq_aff_only(&a1, vc, 2) || lq_aff_coef(&a1, vc[0]) != 1)
            return 1;
        if (!lq_affine(xl->idx[0], &a0) || a0.c0)
            return 1;
        return q_depthwise(L, t, c, xl, wl, cond, zx);
    }
    if (xl->dims[1] != Ci)
        return 1;
    /* batch and channel indices: n and the reduce channel (group 1) */
    if (!lq_affine(xl->idx[0], &a0) || !lq_affine(xl->idx[1], &a1) || a0.c0 || a1.c0)
        return 1;
    {
        int v0 = c->axes[0].var, v1 = c->raxes[0].var;
        if (!lq_aff_only(&a0, &v0, 1) || (N > 1 && lq_aff_coef(&a0, v0) != 1))
            return 1;
        if (!lq_aff_only(&a1, &v1, 1) || lq_aff_coef(&a1, v1) != 1)
            return 1;
    }
    if (tpl_conv_window(L, c, xl, cond, H, W, s, d, lo, hi))
        return 1;
    if (!lq_affine(wl->a, &aw))
        return 1;
    {
        int vars[4];
        vars[0] = c->axes[1].var;
        for (i = 0; i < 3; i++)
            vars[1 + i] = c->raxes[i].var;
        if (!lq_aff_only(&aw, vars, 4))
            return 1;
        wco = lq_aff_coef(&aw, vars[0]);
        for (i = 0; i < 3; i++)
            wr[i] = lq_aff_coef(&aw, vars[1 + i]);
        wc0 = aw.c0;
    }
    wb = &k->bufs[wl->buf];
    wsrc = L->g->values[wb->value].data;
    bias = xl->dtype == DT_INT8 ? 128 : 0;
    if (KH == 1 && KW == 1 && !cond && s[0] == 1 && s[1] == 1 && lo[0] == 0 && lo[1] == 0 && OH == H &&
        OW == W && xl->dims[1] == Ci && !q_pointwise(L, t, c, xl, wsrc, wb, wco, wr[0], wc0, bias)) {
        if (!lq_stmt_uses_buf(k->body, wl->buf))
            k->bufs[wl->buf].scope = BUF_UNUSED;
        return 0;
    }
    Cq = (Ci + 3) / 4 * 4;
    G4 = Cq / 4;

    /* the tile: P positions x V vectors of `lanes` int32 channels */
    lanes = t->vector_bits / 32;
    regs = tpl_regs(t);
    V = tpl_ceil_div(Co, lanes) % 2 == 0 ? 2 : 1;
    VL = (int64_t)V * lanes;
    ncb = tpl_ceil_div(Co, VL);
    if (ncb * VL > 2 * Co)
        return 1;
    flat = KH == 1 && KW == 1 && !cond && s[0] == 1 && s[1] == 1 && lo[0] == 0 && lo[1] == 0 && OH == H &&
           OW == W;
    rows = flat ? OH * OW : OW;
    pmax = (regs - V - 2) / V;
    if (pmax > 28)
        pmax = 28;
    P = tpl_pick_rows(rows, pmax);
    T = tpl_ceil_div(rows, P);
    if (flat) {
        Hp = 1;
        Wp = T * P;
    } else {
        Hp = hi[0] - lo[0] + 1;
        Wp = hi[1] - lo[1] + 1;
        if ((T * P - 1) * s[1] + d[1] * (KW - 1) + 1 > Wp)
            Wp = (T * P - 1) * s[1] + d[1] * (KW - 1) + 1;
    }

    /* weights packed [cb][kh][kw][g][VL][4] and the bias corrections */
    wdst = lower_alloc(L, (size_t)(ncb * KH * KW * G4 * VL * 4));
    cdst = lower_alloc(L, (size_t)(ncb * VL) * sizeof *cdst);
    {
        int64_t cb, kh, kw, g, v, j;
        for (cb = 0; cb < ncb; cb++)
            for (kh = 0; kh < KH; kh++)
                for (kw = 0; kw < KW; kw++)
                    for (g = 0; g < G4; g++)
                        for (v = 0; v < VL; v++)
                            for (j = 0; j < 4; j++) {
                                int64_t ch = cb * VL + v, ci = 4 * g + j, off;
                                int8_t w = 0;
                                if (ch < Co && ci < Ci) {
                                    off = wc0 + ch * wco + ci * wr[0] + kh * wr[1] + kw * wr[2];
                                    if (off < 0 || off >= wb->numel)
                                        return 1;
                                    w = wsrc[off];
                                    cdst[ch] -= (int32_t)(bias * w);
                                }
                                wdst[((((cb * KH + kh) * KW + kw) * G4 + g) * VL + v) * 4 + j] = w;
                            }
    }
    wq = tpl_new_const(L, "qconv_w", DT_INT8, ncb * KH * KW * G4 * VL * 4, wdst);
    corr = tpl_new_const(L, "qconv_corr", DT_INT32, ncb * VL, cdst);

    nv = lower_itervar(L, "n", N);
    cbv = lower_itervar(L, "cb", ncb);
    ohv = lower_itervar(L, "oh", flat ? 1 : OH);
    owv = lower_itervar(L, "ot", T);
    pv = lower_itervar(L, "p", P);
    vv = lower_itervar(L, "v", VL);
    jv = lower_itervar(L, "j", 4);
    rv[0] = lower_itervar(L, "rh", KH);
    rv[1] = lower_itervar(L, "rw", KW);
    rv[2] = lower_itervar(L, "rg", G4);
    xq = lower_buf_temp(L, "xq", DT_UINT8, Hp * Wp * Cq);
    acc = lower_buf_temp(L, "acc", DT_INT32, (int64_t)P * VL);
    k->bufs[acc].scope = BUF_LOCAL;
    k->bufs[acc].no_init = 1;
    copy = q_copy(L, xq, xl, &nv, Ci, Cq, H, W, Hp, Wp, lo[0], lo[1], flat, bias, zx, NULL, Ci);

    /* the tile: acc[p*VL + v] += int32(xq[..]) * int32(wq[..]) */
    accix = ex_add(L, ex_mul(L, ex_var(L, &pv), ex_int(L, VL)), ex_var(L, &vv));
    {
        Expr *row = ex_add(L, ex_mul(L, ex_var(L, &ohv), ex_int(L, s[0])), ex_mul(L, ex_var(L, &rv[0]), ex_int(L, d[0])));
        Expr *col = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, P)), ex_var(L, &pv)),
                                     ex_int(L, s[1])),
                           ex_mul(L, ex_var(L, &rv[1]), ex_int(L, d[1])));
        Expr *xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, row, ex_int(L, Wp)), col), ex_int(L, Cq)),
                          ex_add(L, ex_mul(L, ex_var(L, &rv[2]), ex_int(L, 4)), ex_var(L, &jv)));
        Expr *wi = ex_var(L, &cbv);
        Expr *prod;
        for (i = 0; i < 3; i++)
            wi = ex_add(L, ex_mul(L, wi, ex_int(L, rv[i].extent)), ex_var(L, &rv[i]));
        wi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, wi, ex_int(L, VL)), ex_var(L, &vv)), ex_int(L, 4)),
                    ex_var(L, &jv));
        prod = ex_mul(L, ex_cast(L, DT_INT32, ex_load(L, xq, xi)), ex_cast(L, DT_INT32, ex_load(L, wq, wi)));
        tile = st_store(L, acc, accix, ex_add(L, ex_load(L, acc, accix), prod));
        tile = st_for(L, &jv, tile);
        tile = st_for(L, &vv, tile);
        tile = st_for(L, &pv, tile);
        /* reduce loops of one iteration are left out (the printer would
         * bind them as constants before the tile is matched); rg stays */
        for (i = 2; i >= 0; i--)
            if (rv[i].extent > 1 || i == 2)
                tile = st_for(L, &rv[i], tile);
            else
                tile = lq_stmt_subst_var(L, tile, rv[i].var, ex_int(L, 0));
        tile->for_kind = FOR_TENSORIZE;
    }

    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    co = ex_add(L, ex_mul(L, ex_var(L, &cbv), ex_int(L, VL)), ex_var(L, &vv));
    q = ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, P)), ex_var(L, &pv));
    map[c->axes[0].var] = ex_var(L, &nv);
    /* init: the stage's init at a real channel and position, plus the
     * correction */
    {
        Expr *iv, *cc = Co % VL ? ex_binary(L, BIN_MIN, co, ex_int(L, Co - 1)) : co;
        Expr *qc = T * P != rows ? ex_binary(L, BIN_MIN, q, ex_int(L, rows - 1)) : q;
        map[c->axes[1].var] = cc;
        if (flat) {
            map[c->axes[2].var] = ex_binary(L, BIN_DIV, qc, ex_int(L, OW));
            map[c->axes[3].var] = ex_binary(L, BIN_MOD, qc, ex_int(L, OW));
        } else {
            map[c->axes[2].var] = ex_var(L, &ohv);
            map[c->axes[3].var] = qc;
        }
        iv = ex_load(L, corr, co);
        if (c->init)
            iv = ex_add(L, lq_subst(L, c->init, map, NULL), iv);
        init = st_store(L, acc, accix, iv);
        init = st_for(L, &vv, init);
        init->for_kind = FOR_VECTORIZE;
        init = st_for(L, &pv, init);
    }
    /* epilogue: real channels and positions only, positions innermost */
    {
        Expr *index;
        map[c->axes[1].var] = co;
        if (flat && tpl_flat_ok(L, c->post, c->axes[2].var, c->axes[3].var, OW) &&
            tpl_flat_ok(L, c->out_index, c->axes[2].var, c->axes[3].var, OW)) {
            map[c->axes[2].var] = ex_int(L, 0);
            map[c->axes[3].var] = q;
        } else if (flat) {
            map[c->axes[2].var] = ex_binary(L, BIN_DIV, q, ex_int(L, OW));
            map[c->axes[3].var] = ex_binary(L, BIN_MOD, q, ex_int(L, OW));
        } else {
            map[c->axes[2].var] = ex_var(L, &ohv);
            map[c->axes[3].var] = q;
        }
        index = lower_out_index(L, c);
        if (c->post) {
            Expr *pst = q8_post(L, c->post, k->bufs[c->out_buf].dtype, 0);
            epi = st_store(L, c->out_buf, lq_subst(L, index, map, NULL), lq_subst(L, pst, map, ex_load(L, acc, accix)));
        } else {
            epi = tpl_store_out(L, c, index, map, ex_load(L, acc, accix));
        }
        if (T * P != rows)
            epi = st_if(L, ex_lt(L, q, ex_int(L, rows)), epi);
        epi = st_for(L, &pv, epi);
        epi->for_kind = FOR_VECTORIZE;
        if (Co % VL)
            epi = st_if(L, ex_lt(L, co, ex_int(L, Co)), epi);
        epi = st_for(L, &vv, epi);
    }
    seq = st_seq(L, 3);
    seq->body[0] = init;
    seq->body[1] = tile;
    seq->body[2] = epi;
    loops = st_for(L, &ohv, st_for(L, &owv, st_decl(L, acc, seq)));
    loops = st_for(L, &cbv, loops);
    if (ncb > 1)
        loops->for_kind = FOR_PARALLEL;
    else if (!flat && OH > 1)
        loops->body[0]->for_kind = FOR_PARALLEL;
    body = st_seq(L, 2);
    body->body[0] = copy;
    body->body[1] = loops;
    k->body = st_for(L, &nv, body);
    if (!lq_stmt_uses_buf(k->body, wl->buf))
        k->bufs[wl->buf].scope = BUF_UNUSED;
    return 0;
}
