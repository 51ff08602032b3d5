/*
 * Helpers of the quantize pass shared with quantize_qop.c (quant_util.h),
 * moved out of passes/quantize.c unchanged.
 */
#include "quant_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int is_q8(DType t)
{
    return t == DT_INT8 || t == DT_UINT8;
}

int is_qtype(DType t)
{
    return is_q8(t) || t == DT_INT16 || t == DT_UINT16;
}

void qrange(DType t, int32_t *lo, int32_t *hi)
{
    switch (t) {
    case DT_INT8: *lo = -128; *hi = 127; break;
    case DT_UINT8: *lo = 0; *hi = 255; break;
    case DT_INT16: *lo = -32768; *hi = 32767; break;
    case DT_UINT16: *lo = 0; *hi = 65535; break;
    default: *lo = INT32_MIN; *hi = INT32_MAX; break;
    }
}

int same_scale(double a, double b)
{
    return fabs(a - b) <= 1e-6 * fmax(fabs(a), fabs(b));
}

/* Element i of a constant parameter (a scalar repeats). */
double pelem(const Graph *g, int32_t v, int64_t i)
{
    double x = 0;
    if (v < 0)
        return 0;
    if (value_numel(&g->values[v]) == 1)
        i = 0;
    if (value_const_elem(g, v, i, &x))
        return NAN;
    return x;
}

/* The real multipliers m[0..n) as mult[i] / 2^shift with one shift: the
 * largest (at most 62) that keeps every mult[i] below 2^31. */
int fixed_point(const double *m, int n, int32_t *mult, int *shift)
{
    double mx = 0;
    int i, s = 62;
    for (i = 0; i < n; i++) {
        if (!(m[i] >= 0) || !isfinite(m[i]))
            return 1;
        mx = fmax(mx, m[i]);
    }
    if (!(mx > 0))
        mx = 1; /* all zero: any shift */
    while (s > 1 && mx * ldexp(1.0, s) >= 2147483647.0)
        s--;
    if (mx * ldexp(1.0, s) >= 2147483647.0)
        return 1;
    for (i = 0; i < n; i++)
        mult[i] = (int32_t)llround(m[i] * ldexp(1.0, s));
    *shift = s;
    return 0;
}

QuantParams *new_params(Graph *g, QuantKind kind, DType xt, int32_t zx, double sy,
                        int32_t zy, DType ty)
{
    QuantParams *q = arena_alloc(g->arena, sizeof *q);
    memset(q, 0, sizeof *q);
    q->sy = sy;
    q->kind = (uint8_t)kind;
    q->xtype = (uint8_t)xt;
    q->zx = zx;
    q->zy = zy;
    q->init = -1;
    q->table = -1;
    q->mult_v = -1;
    qrange(ty, &q->lo, &q->hi);
    return q;
}

/* A new constant value of type t and shape [n] holding data. */
int32_t new_const(Graph *g, const char *name, DType t, int64_t n, void *data)
{
    int32_t vi = graph_add_value(g, name);
    Value *v = &g->values[vi];
    v->dtype = t;
    v->rank = 1;
    v->dims[0] = n;
    v->data = data;
    v->producer = -1;
    v->input_index = -1;
    return vi;
}

int64_t woff(const WLayout *l, int64_t c, int64_t k)
{
    return c * l->cstride + (k / l->kinner) * l->kouter + k % l->kinner;
}

/* Fills q's multipliers and init for a sum with input scale sx, zero point
 * zx, weight scales ws (per channel or one), zero point zw, bias (float
 * value, int32 DQ or -1), output scale sy. */
int sum_params(Ctx *c, int32_t ni, QuantParams *q, double sx, const QT *w, const WLayout *l,
               const QT *bq, int32_t bias_f, double alpha, double beta, double sy)
{
    Graph *g = c->g;
    const Value *wv = &g->values[w->q];
    int64_t C = l->C, ch, k;
    double *m = calloc((size_t)C + 1, sizeof *m);
    int32_t *mult = arena_array(g->arena, (size_t)C, sizeof *mult);
    int32_t *init = arena_array(g->arena, (size_t)C, sizeof *init);
    int err = 0;
    if (!m)
        die("out of memory");
    for (ch = 0; ch < C && !err; ch++) {
        double sw = pelem(g, w->scale, w->n == 1 ? 0 : ch), acc, b = 0;
        int64_t sum = 0;
        m[ch] = sx * sw * alpha / sy;
        for (k = 0; k < l->K; k++) {
            double wk;
            value_const_elem(g, w->q, woff(l, ch, k), &wk);
            sum += (int64_t)wk - q->zw;
        }
        if (bq) {
            double sb = pelem(g, bq->scale, bq->n == 1 ? 0 : ch), bi = pelem(g, bq->q, ch);
            if (same_scale(sb * beta, sx * sw * alpha))
                b = bi;
            else
                b = nearbyint(bi * sb * beta / (sx * sw * alpha));
        } else if (bias_f >= 0) {
            b = nearbyint(pelem(g, bias_f, value_numel(&g->values[bias_f]) == 1 ? 0 : ch) *
                          beta / (sx * sw * alpha));
        }
        acc = b - (double)q->zx * (double)sum;
        if (!(fabs(acc) < 2147483647.0))
            err = 1;
        else
            init[ch] = (int32_t)acc;
    }
    (void)wv;
    if (!err)
        err = fixed_point(m, (int)C, mult, &q->shift);
    free(m);
    if (err)
        return 1;
    q->nch = (int)C;
    q->mult = mult;
    if (C > 1)
        q->mult_v = new_const(g, arena_printf(g->arena, "%s.qmult%ld", g->nodes[ni].name, (long)g->n_values), DT_INT32,
                              C, mult);
    q->init = new_const(g, arena_printf(g->arena, "%s.qinit%ld", g->nodes[ni].name, (long)g->n_values), DT_INT32, C,
                        init);
    return 0;
}

/* Per-channel weight scales must run along the channel axis. */
int weights_ok(const Graph *g, const QT *w, int chan_axis, int64_t C)
{
    const Value *wv = &g->values[w->q];
    int64_t i, n;
    if (!wv->data || !is_q8(wv->dtype))
        return 0;
    if (w->n != 1 && (w->axis != chan_axis || w->n != C))
        return 0;
    /* one zero point for all channels */
    n = w->zp >= 0 ? value_numel(&g->values[w->zp]) : 0;
    for (i = 1; i < n; i++)
        if (pelem(g, w->zp, i) != pelem(g, w->zp, 0))
            return 0;
    return 1;
}

int32_t *new_inputs(Graph *g, Node *n, int count)
{
    int32_t *in = arena_array(g->arena, (size_t)count, sizeof *in);
    int i;
    for (i = 0; i < count; i++)
        in[i] = -1;
    n->in = in;
    n->n_in = count;
    return in;
}

int bias_ok(const Graph *g, int32_t b, int64_t C)
{
    const Value *v = &g->values[b];
    int64_t n = value_numel(v);
    return v->data && dtype_is_float(v->dtype) && (n == 1 || n == C);
}
