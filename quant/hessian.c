/*
 * Hessian-aware rounding of Conv weights (hessian.h).
 *
 * Rounding each weight to the nearest level minimizes the error of the
 * weights, not of the layer's output. Where the input is smooth (neighbouring
 * pixels nearly equal, as early in a vision network) a depthwise filter's
 * output is a small difference of large products, and the rounding errors of
 * its taps add up in the output instead of averaging out: on PP-OCRv4 det the
 * second conv's output fell from 54 to 31 dB SQNR with 46 dB weights.
 *
 * The output error of one output channel with weight error d (a row of
 * icpg * kh * kw taps) is E[(d . x)^2] = d^T H d, H = E[x x^T] over the
 * input patches x the channel sees. GPTQ rounds the taps one at a time in a
 * fixed order and moves each rounding error onto the taps not yet rounded,
 * by the amounts that minimize d^T H d given the taps already fixed; with
 * U the upper Cholesky factor of H^-1 (H^-1 = U^T U) that is
 *
 *     q_i = round(w_i / s);  e = (w_i - s q_i) / U_ii;  w_j -= e U_ij (j > i)
 *
 * H is damped by 1% of its mean diagonal (as the paper does), which keeps
 * the factorization stable when the patches seen are fewer than the taps or
 * an input channel is dead.
 *
 * Cost: H is summed over at most PATCH_BUDGET multiply-adds per Conv and
 * sample, taking evenly spaced output positions (all of them on small
 * layers, at least 64 per sample); the factorization is O(k^3) per group,
 * once per calibration.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hessian.h"

#define PATCH_BUDGET ((int64_t)1 << 23)
#define DAMP 0.01

static int name_index(const char *const *names, int n, const char *name)
{
    int i;
    for (i = 0; i < n; i++)
        if (names[i] && !strcmp(names[i], name))
            return i;
    return -1;
}

static int64_t ints_at(const Node *n, const char *name, int i, int64_t def)
{
    int64_t count = 0;
    const int64_t *v = attr_ints(n, name, &count, NULL);
    return v && i < count ? v[i] : def;
}

int hessian_plan(Arena *a, const Graph *g, const char *const *names, int n_names,
                 HessianSet *out)
{
    int32_t ni;
    out->n = 0;
    out->e = arena_array(a, (size_t)g->n_nodes + 1, sizeof *out->e);
    if (!out->e)
        return 1;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        const Value *w, *x;
        const Attr *ap;
        HessianEntry *e;
        int need;
        size_t cells;
        if (n->op != OP_Conv || n->n_in < 2 || n->in[0] < 0 || n->in[1] < 0)
            continue;
        w = &g->values[n->in[1]];
        x = &g->values[n->in[0]];
        ap = node_attr(n, "auto_pad");
        if (w->dtype != DT_FLOAT32 || !w->data || w->rank != 4 || x->rank != 4 ||
            x->dtype != DT_FLOAT32 || (ap && ap->s && strcmp(ap->s, "NOTSET")) ||
            (need = name_index(names, n_names, x->name)) < 0 ||
            hessian_find(out, w->name))
            continue;
        e = &out->e[out->n];
        memset(e, 0, sizeof *e);
        e->weight = w->name;
        e->input = x->name;
        e->need = need;
        e->groups = attr_int(n, "group", 1, NULL);
        e->icpg = w->dims[1];
        e->kh = w->dims[2];
        e->kw = w->dims[3];
        e->sh = ints_at(n, "strides", 0, 1);
        e->sw = ints_at(n, "strides", 1, 1);
        e->dh = ints_at(n, "dilations", 0, 1);
        e->dw = ints_at(n, "dilations", 1, 1);
        e->pt = ints_at(n, "pads", 0, 0);
        e->pl = ints_at(n, "pads", 1, 0);
        e->pb = ints_at(n, "pads", 2, 0);
        e->pr = ints_at(n, "pads", 3, 0);
        e->k = e->icpg * e->kh * e->kw;
        if (e->groups < 1 || e->k < 1 || e->k > HESSIAN_MAX_K ||
            e->groups * e->icpg != x->dims[1] || w->dims[0] % e->groups)
            continue;
        cells = (size_t)e->groups * (size_t)e->k * (size_t)e->k;
        if (!(e->h = arena_array(a, cells, sizeof *e->h)))
            return 1;
        memset(e->h, 0, cells * sizeof *e->h);
        out->n++;
    }
    return 0;
}

const HessianEntry *hessian_find(const HessianSet *s, const char *weight)
{
    int i;
    for (i = 0; s && i < s->n; i++)
        if (!strcmp(s->e[i].weight, weight))
            return &s->e[i];
    return NULL;
}

void hessian_add(HessianEntry *e, const float *x, const int64_t *dims)
{
    int64_t nb = dims[0], c = dims[1], ih = dims[2], iw = dims[3];
    int64_t oh = (ih + e->pt + e->pb - e->dh * (e->kh - 1) - 1) / e->sh + 1;
    int64_t ow = (iw + e->pl + e->pr - e->dw * (e->kw - 1) - 1) / e->sw + 1;
    int64_t positions = nb * oh * ow, cost = e->groups * e->k * (e->k + 1) / 2, take, j;
    double *patch;
    if (oh < 1 || ow < 1 || positions < 1)
        return;
    take = PATCH_BUDGET / (cost ? cost : 1);
    if (take < 64)
        take = 64;
    if (take > positions)
        take = positions;
    patch = malloc((size_t)e->k * sizeof *patch);
    if (!patch)
        return;
    for (j = 0; j < take; j++) {
        int64_t p = j * positions / take, b = p / (oh * ow), oy = p / ow % oh, ox = p % ow, grp;
        for (grp = 0; grp < e->groups; grp++) {
            double *h = e->h + grp * e->k * e->k;
            int64_t ci, ky, kx, a, bb, t = 0;
            for (ci = 0; ci < e->icpg; ci++)
                for (ky = 0; ky < e->kh; ky++)
                    for (kx = 0; kx < e->kw; kx++) {
                        int64_t y = oy * e->sh - e->pt + ky * e->dh;
                        int64_t xx = ox * e->sw - e->pl + kx * e->dw;
                        float v = 0;
                        if (y >= 0 && y < ih && xx >= 0 && xx < iw)
                            v = x[((b * c + grp * e->icpg + ci) * ih + y) * iw + xx];
                        patch[t++] = isfinite(v) ? (double)v : 0.0;
                    }
            for (a = 0; a < e->k; a++) {
                double pa = patch[a];
                if (pa == 0)
                    continue;
                for (bb = a; bb < e->k; bb++)
                    h[a * e->k + bb] += pa * patch[bb];
            }
        }
    }
    e->count += take;
    free(patch);
}

/* In place: the lower Cholesky factor L of the symmetric positive definite
 * m (lower half read), L L^T = m. 1 when m is not positive definite. */
static int cholesky(double *m, int64_t k)
{
    int64_t i, j, t;
    for (j = 0; j < k; j++) {
        double d = m[j * k + j];
        for (t = 0; t < j; t++)
            d -= m[j * k + t] * m[j * k + t];
        if (!(d > 0))
            return 1;
        d = sqrt(d);
        m[j * k + j] = d;
        for (i = j + 1; i < k; i++) {
            double v = m[i * k + j];
            for (t = 0; t < j; t++)
                v -= m[i * k + t] * m[j * k + t];
            m[i * k + j] = v / d;
        }
        for (i = 0; i < j; i++)
            m[i * k + j] = 0;
    }
    return 0;
}

/* h (k x k, upper half the sums of count patches) becomes U, the upper
 * Cholesky factor of the damped inverse. 1 when it cannot. */
static int factor(double *h, int64_t k, int64_t count, double *tmp)
{
    int64_t i, j, t;
    double mean = 0, damp;
    for (i = 0; i < k; i++)
        for (j = i; j < k; j++)
            h[j * k + i] = h[i * k + j] /= (double)count;
    for (i = 0; i < k; i++)
        mean += h[i * k + i];
    mean /= (double)k;
    if (!(mean > 0))
        return 1;
    damp = DAMP * mean;
    for (i = 0; i < k; i++)
        h[i * k + i] += h[i * k + i] > 0 ? damp : mean;
    if (cholesky(h, k))
        return 1;
    /* tmp = L^-1 (lower), by forward substitution on each column */
    memset(tmp, 0, (size_t)(k * k) * sizeof *tmp);
    for (j = 0; j < k; j++) {
        tmp[j * k + j] = 1.0 / h[j * k + j];
        for (i = j + 1; i < k; i++) {
            double v = 0;
            for (t = j; t < i; t++)
                v -= h[i * k + t] * tmp[t * k + j];
            tmp[i * k + j] = v / h[i * k + i];
        }
    }
    /* h = H^-1 = L^-T L^-1 (full) */
    for (i = 0; i < k; i++)
        for (j = i; j < k; j++) {
            double v = 0;
            for (t = j; t < k; t++)
                v += tmp[t * k + i] * tmp[t * k + j];
            h[i * k + j] = h[j * k + i] = v;
        }
    /* H^-1 = M M^T with M lower; U = M^T */
    if (cholesky(h, k))
        return 1;
    for (i = 0; i < k; i++)
        for (j = i + 1; j < k; j++) {
            h[i * k + j] = h[j * k + i];
            h[j * k + i] = 0;
        }
    return 0;
}

void hessian_finish(HessianSet *s, FILE *log)
{
    int i;
    for (i = 0; i < s->n; i++) {
        HessianEntry *e = &s->e[i];
        double *tmp;
        int64_t grp;
        e->ok = 0;
        if (e->count < 1)
            continue;
        tmp = malloc((size_t)(e->k * e->k) * sizeof *tmp);
        if (!tmp)
            continue;
        e->ok = 1;
        for (grp = 0; grp < e->groups && e->ok; grp++)
            if (factor(e->h + grp * e->k * e->k, e->k, e->count, tmp))
                e->ok = 0;
        free(tmp);
        if (!e->ok && log)
            fprintf(log, "tvmcc quantize: gptq: %s: the input's second moment is singular; "
                    "rounded to nearest\n", e->weight);
    }
}

void hessian_round_row(const HessianEntry *e, int64_t grp, const float *w, float s, int8_t *q)
{
    const double *u = e->h + grp * e->k * e->k;
    double *r = malloc((size_t)e->k * sizeof *r);
    int64_t i, j, k = e->k;
    if (!r) {
        for (i = 0; i < k; i++) {
            double v = nearbyint((double)(w[i] / s));
            q[i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
        }
        return;
    }
    for (i = 0; i < k; i++)
        r[i] = (double)w[i];
    for (i = 0; i < k; i++) {
        double v = nearbyint(r[i] / (double)s), err;
        v = v > 127 ? 127 : v < -127 ? -127 : v;
        q[i] = (int8_t)v;
        err = (r[i] - v * (double)s) / u[i * k + i];
        for (j = i + 1; j < k; j++)
            r[j] -= err * u[i * k + j];
    }
    free(r);
}
