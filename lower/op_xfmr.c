/*
 * Lowering of the transformer operators (shapes and attributes parsed by
 * frontend/infer_xfmr.c into XfmrParams).
 *
 * Gelu, Swish and Mish are one injective stage each. RMSNormalization is a
 * reduction stage (1 / sqrt(mean of squares + epsilon) per kept position)
 * into a temp, then the normalising stage. RotaryEmbedding writes the
 * rotated halves (or the even / odd lanes when interleaved) and the part
 * of each head past rotary_embedding_dim as separate stages into strided
 * regions of the output (out_index), so no stage needs a select.
 *
 * Attention is the chain of tensor expressions
 *
 *   present_k/v  = concat(past, new) along the sequence    (copy stages)
 *   X[b,h,s,t]   = softcap(scale * sum_e Q[b,h,s,e] K[b,h/r,t,e] + bias)
 *   P            = softmax over t of X                      (lower/op_reduce.c)
 *   Y[b,h,s,v]   = sum_t P[b,h,s,t] V[b,h/r,t,v]
 *
 * with r = q_heads / kv_heads (grouped query attention) and bias the mask
 * (bool: 0 or -inf; float: as is; positions past a short mask: -inf), the
 * causal triangle (t > s + past: -inf) and, from opset 24, the padding of
 * each batch's keys (t >= nonpad_kv_seqlen[b]: -inf). The two products are
 * ordinary sum-of-products reductions, so the schedule templates tile them
 * like MatMul (the output's innermost axis is the vector axis, the query
 * sequence the row axis); the softmax stages are Softmax's own. 3-D inputs
 * are read in place as [batch, sequence, heads, head size] views and a 3-D
 * Y is written through the same view: no transposes are materialised.
 * X and P are kernel temps of the compute type, placed in the arena.
 *
 * qk_matmul_output_mode (ONNX 1.20.1's function body): 0 the scaled
 * product, 1 after the bias, 2 after the softcap, 3 after the softmax. The
 * product stage stops at the requested point, the output is a copy of the
 * temp, and an elementwise stage applies the remaining steps.
 */
#include "lower.h"

#include <math.h>

/* ---- activations ---- */

static Compute *act_stage(Lower *L, Node *n, Expr **x, DType *ct)
{
    const Value *v = &L->g->values[n->in[0]];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    *x = ex_load_broadcast(L, lower_buf_value(L, n->in[0]), v->rank, v->dims, c);
    *ct = dtype_compute(v->dtype);
    return c;
}

/* none: x/2 (1 + erf(x / sqrt 2)); tanh: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
int lower_Gelu(Lower *L, Node *n)
{
    Expr *x, *u;
    DType ct;
    Compute *c = act_stage(L, n, &x, &ct);
    if (node_xfmr(n)->tanh) {
        Expr *x3 = ex_mul(L, ex_mul(L, x, x), x);
        u = ex_mul(L, ex_float(L, ct, sqrt(2.0 / 3.14159265358979323846)),
                   ex_add(L, x, ex_mul(L, ex_float(L, ct, 0.044715), x3)));
        u = ex_unary(L, UN_TANH, u);
    } else {
        u = ex_unary(L, UN_ERF, ex_mul(L, x, ex_float(L, ct, 0.70710678118654752440)));
    }
    c->body = ex_mul(L, ex_mul(L, ex_float(L, ct, 0.5), x), ex_add(L, ex_float(L, ct, 1.0), u));
    return 0;
}

/* x * sigmoid(alpha x) */
int lower_Swish(Lower *L, Node *n)
{
    Expr *x;
    DType ct;
    Compute *c = act_stage(L, n, &x, &ct);
    double a = node_xfmr(n)->alpha;
    c->body = ex_mul(L, x, ex_unary(L, UN_SIGMOID, a == 1.0 ? x : ex_mul(L, ex_float(L, ct, a), x)));
    return 0;
}

/* x * tanh(softplus(x)), softplus(x) = log1p(exp(x)) */
int lower_Mish(Lower *L, Node *n)
{
    Expr *x;
    DType ct;
    Compute *c = act_stage(L, n, &x, &ct);
    c->body = ex_mul(L, x, ex_unary(L, UN_TANH, ex_unary(L, UN_LOG1P, ex_unary(L, UN_EXP, x))));
    return 0;
}

/* ---- RMSNormalization ---- */

int lower_RMSNormalization(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *s = &L->g->values[n->in[1]];
    int axis = node_scalar(n)->axis, xb = lower_buf_value(L, n->in[0]), rb, i;
    double eps = node_scalar(n)->epsilon;
    DType ct = dtype_compute(x->dtype);
    int64_t outer = 1, cnt = 1;
    Expr *xi[TVMCC_MAX_RANK], *ki[TVMCC_MAX_RANK], *xv, *sv;
    Compute *c;
    for (i = 0; i < axis; i++)
        outer *= x->dims[i];
    for (i = axis; i < x->rank; i++)
        cnt *= x->dims[i];
    rb = lower_buf_temp(L, "invrms", ct, outer);
    c = lower_stage(L, "invrms", rb, axis, x->dims);
    for (i = 0; i < x->rank; i++)
        xi[i] = i < axis ? ex_var(L, &c->axes[i]) : ex_var(L, lower_raxis(L, c, x->dims[i]));
    xv = ex_load_nd(L, xb, x->rank, x->dims, xi);
    c->rop = RED_SUM;
    c->body = ex_mul(L, xv, xv);
    c->post = ex_unary(L, UN_RECIP, ex_unary(L, UN_SQRT, ex_add(L, ex_binary(L, BIN_DIV,
                       ex_acc(L, ct), ex_float(L, ct, (double)cnt)), ex_float(L, ct, eps))));

    c = lower_elemwise_stage(L, n, n->out[0]);
    for (i = 0; i < axis; i++)
        ki[i] = ex_var(L, &c->axes[i]);
    xv = ex_load_broadcast(L, xb, x->rank, x->dims, c);
    sv = ex_cast(L, ct, ex_load_broadcast(L, lower_buf_value(L, n->in[1]), s->rank, s->dims, c));
    c->body = ex_mul(L, ex_mul(L, xv, ex_cast(L, ct, ex_load_nd(L, rb, axis, x->dims, ki))), sv);
    return 0;
}

/* ---- shared: [batch, heads, sequence, size] views of 3-D and 4-D tensors ---- */

/* Offset of element (b, h, s, e) of a tensor of shape dims (rank 3:
 * [B, S, H * E], rank 4: [B, H, S, E]) whose heads have size E. */
static Expr *bhse_offset(Lower *L, int rank, const int64_t *dims, int64_t E, Expr *b, Expr *h,
                         Expr *s, Expr *e)
{
    Expr *idx[4];
    if (rank == 3) {
        idx[0] = b;
        idx[1] = s;
        idx[2] = ex_add(L, ex_mul(L, h, ex_int(L, E)), e);
        return ex_offset(L, 3, dims, idx);
    }
    idx[0] = b;
    idx[1] = h;
    idx[2] = s;
    idx[3] = e;
    return ex_offset(L, 4, dims, idx);
}

/* ---- RotaryEmbedding ---- */

typedef struct Rope {
    const XfmrParams *p;
    const Value *x;
    int xb, yb, cb, sb, pb;     /* input, output, cos, sin, position_ids (-1) */
    int64_t maxpos;
} Rope;

/* A stage over the heads' positions [B, H, S, extent] (4-D) or
 * [B, S, H, extent] (3-D), in memory order; fills b, h, s, i. */
static Compute *rope_stage(Lower *L, const Rope *r, const char *name, int64_t extent, Expr **b,
                           Expr **h, Expr **s, Expr **i)
{
    const XfmrParams *p = r->p;
    int64_t d[4];
    Compute *c;
    int hs = p->three_d ? 2 : 1, ss = p->three_d ? 1 : 2;
    d[0] = p->batch;
    d[hs] = p->q_heads;
    d[ss] = p->q_seq;
    d[3] = extent;
    c = lower_stage(L, name, r->yb, 4, d);
    *b = ex_var(L, &c->axes[0]);
    *h = ex_var(L, &c->axes[hs]);
    *s = ex_var(L, &c->axes[ss]);
    *i = ex_var(L, &c->axes[3]);
    return c;
}

/* cos (sin when is_sin) of rotation i at (b, s). */
static Expr *rope_cache(Lower *L, const Rope *r, int is_sin, Expr *b, Expr *s, Expr *i)
{
    int64_t half = r->p->rot_dim / 2;
    Expr *row = ex_add(L, ex_mul(L, b, ex_int(L, r->p->q_seq)), s);
    if (r->pb >= 0) { /* position ids, clamped into the cache */
        row = ex_cast(L, DT_INT64, ex_load(L, r->pb, row));
        row = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, row, ex_int(L, 0)),
                        ex_int(L, r->maxpos - 1));
    }
    return ex_load(L, is_sin ? r->sb : r->cb, ex_add(L, ex_mul(L, row, ex_int(L, half)), i));
}

/* Output lanes lo = first, hi = second of each rotated pair:
 *   y[lo] = cos x[lo] - sin x[hi],  y[hi] = sin x[lo] + cos x[hi]
 * with (lo, hi) = (i, i + rot/2), or (2i, 2i + 1) when interleaved. */
static void rope_half(Lower *L, const Rope *r, int second)
{
    const XfmrParams *p = r->p;
    int64_t half = p->rot_dim / 2;
    Expr *b, *h, *s, *i, *lo, *hi, *xl, *xh, *cv, *sv;
    Compute *c = rope_stage(L, r, second ? "rope_hi" : "rope_lo", half, &b, &h, &s, &i);
    if (p->interleaved) {
        lo = ex_mul(L, i, ex_int(L, 2));
        hi = ex_add(L, lo, ex_int(L, 1));
    } else {
        lo = i;
        hi = ex_add(L, i, ex_int(L, half));
    }
    xl = ex_load(L, r->xb, bhse_offset(L, r->x->rank, r->x->dims, p->head, b, h, s, lo));
    xh = ex_load(L, r->xb, bhse_offset(L, r->x->rank, r->x->dims, p->head, b, h, s, hi));
    cv = rope_cache(L, r, 0, b, s, i);
    sv = rope_cache(L, r, 1, b, s, i);
    c->body = second ? ex_add(L, ex_mul(L, sv, xl), ex_mul(L, cv, xh))
                     : ex_sub(L, ex_mul(L, cv, xl), ex_mul(L, sv, xh));
    c->out_index = bhse_offset(L, r->x->rank, r->x->dims, p->head, b, h, s, second ? hi : lo);
}

int lower_RotaryEmbedding(Lower *L, Node *n)
{
    Rope r;
    const XfmrParams *p = node_xfmr(n);
    r.p = p;
    r.x = &L->g->values[n->in[0]];
    r.xb = lower_buf_value(L, n->in[0]);
    r.yb = lower_buf_value(L, n->out[0]);
    r.cb = lower_buf_value(L, n->in[1]);
    r.sb = lower_buf_value(L, n->in[2]);
    r.pb = n->n_in > 3 && n->in[3] >= 0 ? lower_buf_value(L, n->in[3]) : -1;
    r.maxpos = L->g->values[n->in[1]].dims[0];
    rope_half(L, &r, 0);
    rope_half(L, &r, 1);
    if (p->rot_dim < p->head) { /* the rest of each head passes through */
        Expr *b, *h, *s, *i, *e;
        Compute *c = rope_stage(L, &r, "rope_pass", p->head - p->rot_dim, &b, &h, &s, &i);
        e = ex_add(L, i, ex_int(L, p->rot_dim));
        c->body = ex_load(L, r.xb, bhse_offset(L, r.x->rank, r.x->dims, p->head, b, h, s, e));
        c->out_index = bhse_offset(L, r.x->rank, r.x->dims, p->head, b, h, s, e);
    }
    return 0;
}

/* ---- Attention ---- */

typedef struct Attn {
    const XfmrParams *p;
    Node *n;
    DType ct;
    int64_t T;                  /* total key sequence: past + new */
    int kb, vb;                 /* K / V buffers: the inputs, or present (all T) */
    int kall, vall;             /* kb / vb hold [B, kv_heads, T, size] */
} Attn;

static int has_in(const Node *n, int i) { return n->n_in > i && n->in[i] >= 0; }
static int has_out(const Node *n, int i) { return n->n_out > i && n->out[i] >= 0; }

/* K (or V) element (b, g, t, e), g a K/V head, t < T. */
static Expr *kv_load(Lower *L, const Attn *a, int is_v, Expr *b, Expr *g, Expr *t, Expr *e)
{
    const XfmrParams *p = a->p;
    int64_t E = is_v ? p->v_head : p->head;
    if (is_v ? a->vall : a->kall) {
        int64_t d[4];
        Expr *idx[4];
        d[0] = p->batch, d[1] = p->kv_heads, d[2] = a->T, d[3] = E;
        idx[0] = b, idx[1] = g, idx[2] = t, idx[3] = e;
        return ex_load_nd(L, is_v ? a->vb : a->kb, 4, d, idx);
    }
    {
        const Value *v = &L->g->values[a->n->in[is_v ? 2 : 1]];
        return ex_load(L, is_v ? a->vb : a->kb, bhse_offset(L, v->rank, v->dims, E, b, g, t, e));
    }
}

/* present = concat(past, new) along the sequence into buffer ob: one
 * stage per part, each writing its region. */
static void concat_kv(Lower *L, const Attn *a, int is_v, int ob)
{
    const XfmrParams *p = a->p;
    const Node *n = a->n;
    int64_t E = is_v ? p->v_head : p->head, d[4], od[4];
    Expr *oi[4];
    Compute *c;
    const Value *nv = &L->g->values[n->in[is_v ? 2 : 1]];
    int nb = lower_buf_value(L, n->in[is_v ? 2 : 1]);
    od[0] = p->batch, od[1] = p->kv_heads, od[2] = a->T, od[3] = E;
    if (p->past_seq > 0) {
        int pb = lower_buf_value(L, n->in[is_v ? 5 : 4]);
        d[0] = p->batch, d[1] = p->kv_heads, d[2] = p->past_seq, d[3] = E;
        c = lower_stage(L, is_v ? "present_v_past" : "present_k_past", ob, 4, d);
        for (int i = 0; i < 4; i++)
            oi[i] = ex_var(L, &c->axes[i]);
        c->body = ex_load_nd(L, pb, 4, d, oi);
        c->out_index = ex_offset(L, 4, od, oi);
    }
    d[0] = p->batch, d[1] = p->kv_heads, d[2] = p->kv_seq, d[3] = E;
    c = lower_stage(L, is_v ? "present_v" : "present_k", ob, 4, d);
    for (int i = 0; i < 4; i++)
        oi[i] = ex_var(L, &c->axes[i]);
    c->body = ex_load(L, nb, bhse_offset(L, nv->rank, nv->dims, E, oi[0], oi[1], oi[2], oi[3]));
    if (p->past_seq > 0) {
        oi[2] = ex_add(L, oi[2], ex_int(L, p->past_seq));
        c->out_index = ex_offset(L, 4, od, oi);
    }
}

/* The Q head's K/V head: h / (q_heads / kv_heads). */
static Expr *kv_head(Lower *L, const Attn *a, Expr *h)
{
    int64_t r = a->p->q_heads / a->p->kv_heads;
    return r == 1 ? h : ex_binary(L, BIN_DIV, h, ex_int(L, r));
}

/* v plus the bias at (b, h, s, t): mask, causal triangle, key padding. */
static Expr *add_bias(Lower *L, const Attn *a, Expr *v, Expr *const *bhst)
{
    const XfmrParams *p = a->p;
    const Node *n = a->n;
    Expr *ninf = ex_float(L, a->ct, -HUGE_VAL), *t = bhst[3];
    if (has_in(n, 3)) {
        const Value *m = &L->g->values[n->in[3]];
        int64_t Lm = m->dims[m->rank - 1];
        Expr *mi[4], *mv;
        int i;
        for (i = 0; i < m->rank; i++) {
            int ax = 4 - m->rank + i;
            mi[i] = m->dims[i] == 1 ? ex_int(L, 0) : bhst[ax];
        }
        if (Lm < a->T) /* a short mask: the keys past it are masked out */
            mi[m->rank - 1] = ex_binary(L, BIN_MIN, t, ex_int(L, Lm - 1));
        mv = ex_load_nd(L, lower_buf_value(L, n->in[3]), m->rank, m->dims, mi);
        if (m->dtype == DT_BOOL)
            v = ex_select(L, mv, v, ninf);
        else
            v = ex_add(L, v, ex_cast(L, a->ct, mv));
        if (Lm < a->T)
            v = ex_select(L, ex_lt(L, t, ex_int(L, Lm)), v, ninf);
    }
    if (p->causal)
        v = ex_select(L, ex_binary(L, BIN_GT, t, ex_add(L, bhst[2], ex_int(L, p->past_seq))),
                      ninf, v);
    if (has_in(n, 6)) {
        Expr *len = ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, n->in[6]), bhst[0]));
        v = ex_select(L, ex_lt(L, t, len), v, ninf);
    }
    return v;
}

static Expr *softcap(Lower *L, const Attn *a, Expr *v)
{
    Expr *cap = ex_float(L, a->ct, a->p->softcap);
    return ex_mul(L, cap, ex_unary(L, UN_TANH, ex_binary(L, BIN_DIV, v, cap)));
}

/* Steps from..upto-1 of (bias, softcap) applied to v at (b, h, s, t). */
static Expr *logit_steps(Lower *L, const Attn *a, Expr *v, Expr *const *bhst, int from, int upto)
{
    if (from <= 1 && upto > 1)
        v = add_bias(L, a, v, bhst);
    if (from <= 2 && upto > 2 && a->p->softcap != 0.0)
        v = softcap(L, a, v);
    return v;
}

/* An elementwise stage over [B, q_heads, S, T] into ob: f(src). */
static Compute *score_stage(Lower *L, const Attn *a, const char *name, int ob, Expr **bhst)
{
    int64_t d[4];
    Compute *c;
    int i;
    d[0] = a->p->batch, d[1] = a->p->q_heads, d[2] = a->p->q_seq, d[3] = a->T;
    c = lower_stage(L, name, ob, 4, d);
    for (i = 0; i < 4; i++)
        bhst[i] = ex_var(L, &c->axes[i]);
    return c;
}

static void copy_scores(Lower *L, const Attn *a, const char *name, int from, int to, int steps0,
                        int steps1)
{
    Expr *bhst[4];
    int64_t d[4];
    Compute *c = score_stage(L, a, name, to, bhst);
    d[0] = a->p->batch, d[1] = a->p->q_heads, d[2] = a->p->q_seq, d[3] = a->T;
    c->body = logit_steps(L, a, ex_load_nd(L, from, 4, d, bhst), bhst, steps0, steps1);
}

int lower_Attention(Lower *L, Node *n)
{
    Attn a;
    const XfmrParams *p = node_xfmr(n);
    const Value *q = &L->g->values[n->in[0]];
    int qb = lower_buf_value(L, n->in[0]), xb, pb, i;
    int want_qk = has_out(n, 3), upto;
    int64_t rows, v3[3], d[4];
    Expr *bhst[4], *e, *qv, *kv, *o[4];
    Compute *c;
    IterVar *r;
    a.p = p;
    a.n = n;
    a.ct = dtype_compute(q->dtype);
    a.T = p->past_seq + p->kv_seq;
    rows = p->batch * p->q_heads * p->q_seq;

    /* K and V: the inputs, or the present caches */
    a.kall = p->past_seq > 0 || has_out(n, 1);
    a.vall = p->past_seq > 0 || has_out(n, 2);
    a.kb = a.kall ? (has_out(n, 1) ? lower_buf_value(L, n->out[1])
                                   : lower_buf_temp(L, "present_k", q->dtype,
                                                    p->batch * p->kv_heads * a.T * p->head))
                  : lower_buf_value(L, n->in[1]);
    a.vb = a.vall ? (has_out(n, 2) ? lower_buf_value(L, n->out[2])
                                   : lower_buf_temp(L, "present_v", q->dtype,
                                                    p->batch * p->kv_heads * a.T * p->v_head))
                  : lower_buf_value(L, n->in[2]);
    if (a.kall)
        concat_kv(L, &a, 0, a.kb);
    if (a.vall)
        concat_kv(L, &a, 1, a.vb);

    /* X = scale * Q K^T (then bias, softcap up to the requested output) */
    upto = want_qk && p->qk_mode < 3 ? p->qk_mode + 1 : 3;
    xb = lower_buf_temp(L, "scores", a.ct, rows * a.T);
    c = score_stage(L, &a, "qk", xb, bhst);
    r = lower_raxis(L, c, p->head);
    e = ex_var(L, r);
    qv = ex_load(L, qb, bhse_offset(L, q->rank, q->dims, p->head, bhst[0], bhst[1], bhst[2], e));
    kv = kv_load(L, &a, 0, bhst[0], kv_head(L, &a, bhst[1]), bhst[3], e);
    c->rop = RED_SUM;
    c->body = ex_mul(L, qv, kv);
    c->post = logit_steps(L, &a, ex_mul(L, ex_acc(L, a.ct), ex_float(L, a.ct, p->scale)), bhst,
                          1, upto);
    L->k->macs += rows * a.T * p->head;
    if (want_qk && p->qk_mode < 3) {
        int yb = lower_buf_value(L, n->out[3]);
        copy_scores(L, &a, "qk_output", xb, yb, 3, 3);
        if (upto < 3) {
            int x2 = lower_buf_temp(L, "logits", a.ct, rows * a.T);
            copy_scores(L, &a, "logits", xb, x2, upto, 3);
            xb = x2;
        }
    }

    /* P = softmax over the keys */
    pb = lower_buf_temp(L, "probs", a.ct, rows * a.T);
    v3[0] = rows, v3[1] = a.T, v3[2] = 1;
    lower_softmax_stages(L, xb, pb, v3, a.ct, 0);
    if (want_qk && p->qk_mode == 3)
        copy_scores(L, &a, "qk_output", pb, lower_buf_value(L, n->out[3]), 3, 3);

    /* Y = P V, axes in Y's memory order: [B, H, S, Ev] or [B, S, H, Ev] */
    d[0] = p->batch;
    d[p->three_d ? 2 : 1] = p->q_heads;
    d[p->three_d ? 1 : 2] = p->q_seq;
    d[3] = p->v_head;
    c = lower_stage(L, "pv", lower_buf_value(L, n->out[0]), 4, d);
    for (i = 0; i < 4; i++)
        o[i] = ex_var(L, &c->axes[i]);
    if (p->three_d) { /* o = (b, s, h, v) */
        Expr *t = o[1];
        o[1] = o[2];
        o[2] = t;
    }
    r = lower_raxis(L, c, a.T);
    bhst[0] = o[0], bhst[1] = o[1], bhst[2] = o[2], bhst[3] = ex_var(L, r);
    {
        int64_t sd[4];
        sd[0] = p->batch, sd[1] = p->q_heads, sd[2] = p->q_seq, sd[3] = a.T;
        c->rop = RED_SUM;
        c->body = ex_mul(L, ex_load_nd(L, pb, 4, sd, bhst),
                         kv_load(L, &a, 1, o[0], kv_head(L, &a, o[1]), bhst[3], o[3]));
    }
    L->k->macs += rows * a.T * p->v_head;
    return 0;
}
