/*
 * Property test of the x86 int8 conv templates (lower/tpl_qconv.c): random
 * integer conv stages built as lower_quant_sum() builds them (int32
 * products of the raw 8-bit data, the padding reading the zero point, a
 * per-channel int32 init, a fixed-point requantization post, optionally
 * followed by a table lookup, a clamp table or a residual add) on random
 * shapes (dense, 1x1, strided, padded, depthwise; channels not multiples
 * of 4 or of the vector), scheduled by the AVX2 and AVX-512 targets'
 * template and by the naive schedule, run in the loop-IR interpreter: the
 * outputs must be identical, and the template must have been taken; then
 * a fixed grid of depthwise cases (3x3 and 5x5, strides 1 and 2, padding,
 * widths around the vector widths, int8 and uint8 data), each of which
 * must take the tap-pair rows (q_depthwise). The printed intrinsics are
 * checked by test/x86dw/run.sh.
 *
 *   build/qconv_test [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lower/eval.h"
#include "../../lower/lower.h"
#include "../../lower/sched.h"

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

typedef struct QShape {
    int64_t n, c, h, w, oc, k, s, pad;
    int dw, u8, tail; /* tail: 0 none, 1 table, 2 clamp table, 3 residual */
    int64_t zx;
} QShape;

static int add_const(Graph *g, const char *name, DType t, int64_t n, void *data)
{
    int32_t vi = graph_add_value(g, name);
    Value *v = &g->values[vi];
    v->dtype = t;
    v->rank = 1;
    v->dims[0] = n;
    v->data = data;
    return vi;
}

static int64_t oext(int64_t in, int64_t k, int64_t s, int64_t p)
{
    return (in + 2 * p - k) / s + 1;
}

/* Builds the stage; returns the buffers x, y, r (residual or -1). */
static void build(Lower *L, const QShape *q, int vw, int vi, int vm, int vt, int *xb, int *yb, int *rb)
{
    int64_t oh = oext(q->h, q->k, q->s, q->pad), ow = oext(q->w, q->k, q->s, q->pad);
    int64_t ci = q->dw ? 1 : q->c, dims[4], xd[4], wd[4];
    Compute *c;
    IterVar *rc, *rh, *rw;
    Expr *cond = ex_const_int(L, DT_BOOL, 1), *xi[4], *wi[4], *xv, *wv, *v, *pos[2];
    DType xt = q->u8 ? DT_UINT8 : DT_INT8;
    int i;
    dims[0] = q->n;
    dims[1] = q->oc;
    dims[2] = oh;
    dims[3] = ow;
    xd[0] = q->n;
    xd[1] = q->c;
    xd[2] = q->h;
    xd[3] = q->w;
    wd[0] = q->oc;
    wd[1] = ci;
    wd[2] = wd[3] = q->k;
    *xb = lower_buf_temp(L, "x", xt, q->n * q->c * q->h * q->w);
    *yb = lower_buf_temp(L, "y", DT_INT8, q->n * q->oc * oh * ow);
    *rb = q->tail == 3 ? lower_buf_temp(L, "r", DT_INT8, q->n * q->oc * oh * ow) : -1;
    c = lower_stage(L, "conv_q", *yb, 4, dims);
    rc = lower_raxis(L, c, ci);
    rh = lower_raxis(L, c, q->k);
    rw = lower_raxis(L, c, q->k);
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = q->dw ? ex_add(L, ex_var(L, &c->axes[1]), ex_var(L, rc)) : ex_var(L, rc);
    for (i = 0; i < 2; i++) {
        int64_t in = i ? q->w : q->h;
        Expr *p = ex_add(L, ex_sub(L, ex_mul(L, ex_var(L, &c->axes[2 + i]), ex_int(L, q->s)), ex_int(L, q->pad)),
                         ex_var(L, i ? rw : rh));
        if (q->pad) {
            cond = ex_and(L, cond, ex_and(L, ex_binary(L, BIN_GE, p, ex_int(L, 0)), ex_lt(L, p, ex_int(L, in))));
            p = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, p, ex_int(L, 0)), ex_int(L, in - 1));
        }
        pos[i] = p;
    }
    xi[2] = pos[0];
    xi[3] = pos[1];
    xv = ex_cast(L, DT_INT32, ex_load_nd(L, *xb, 4, xd, xi));
    if (q->pad)
        xv = ex_select(L, cond, xv, ex_const_int(L, DT_INT32, q->zx));
    wi[0] = ex_var(L, &c->axes[1]);
    wi[1] = ex_var(L, rc);
    wi[2] = ex_var(L, rh);
    wi[3] = ex_var(L, rw);
    wv = ex_cast(L, DT_INT32, ex_load_nd(L, lower_buf_value(L, vw), 4, wd, wi));
    {
        ConvWindow *win = lower_alloc(L, sizeof *win);
        win->nsp = 2;
        win->kernel[0] = win->kernel[1] = q->k;
        win->strides[0] = win->strides[1] = q->s;
        win->dilations[0] = win->dilations[1] = 1;
        win->pad_begin[0] = win->pad_begin[1] = win->pad_end[0] = win->pad_end[1] = q->pad;
        win->out[0] = oh;
        win->out[1] = ow;
        win->group = q->dw ? q->c : 1;
        c->window = win;
    }
    c->rop = RED_SUM;
    c->body = ex_mul(L, xv, wv);
    c->init = ex_load(L, lower_buf_value(L, vi), ex_var(L, &c->axes[1]));
    /* requant_int's form, shift 36 */
    v = ex_mul(L, ex_cast(L, DT_INT64, ex_acc(L, DT_INT32)),
               ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, vm), ex_var(L, &c->axes[1]))));
    v = ex_add(L, v, ex_const_int(L, DT_INT64, ((int64_t)1 << 62) + ((int64_t)1 << 35)));
    v = ex_binary(L, BIN_SHR, ex_cast(L, DT_UINT64, v), ex_const_int(L, DT_UINT64, 36));
    v = ex_add(L, ex_cast(L, DT_INT32, v), ex_const_int(L, DT_INT32, 3 - ((int64_t)1 << 26)));
    v = ex_binary(L, BIN_MAX, v, ex_const_int(L, DT_INT32, -128));
    v = ex_binary(L, BIN_MIN, v, ex_const_int(L, DT_INT32, 127));
    v = ex_cast(L, DT_INT8, v);
    if (q->tail == 1 || q->tail == 2)
        v = ex_load(L, lower_buf_value(L, vt), ex_add(L, ex_cast(L, DT_INT64, v), ex_int(L, 128)));
    else if (q->tail == 3) {
        Expr *idx[4];
        for (i = 0; i < 4; i++)
            idx[i] = ex_var(L, &c->axes[i]);
        v = ex_add(L, ex_cast(L, DT_INT32, v), ex_cast(L, DT_INT32, ex_load_nd(L, *rb, 4, dims, idx)));
        v = ex_cast(L, DT_INT8, ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, v, ex_const_int(L, DT_INT32, -128)),
                                          ex_const_int(L, DT_INT32, 127)));
    }
    c->post = v;
    L->k->macs = q->n * q->oc * oh * ow * ci * q->k * q->k;
}

/* Whether the template took the 1x1 path with the positions as the
 * lanes (lower/tpl_qconv.c q_pointwise: a position-tile loop "pt..."). */
static int has_pt(const Kernel *k)
{
    int j;
    for (j = 0; j < k->n_vars; j++)
        if (k->var_names[j] && !strncmp(k->var_names[j], "pt", 2))
            return 1;
    return 0;
}

static int taken(const Kernel *k)
{
    int j;
    for (j = 0; j < k->n_bufs; j++)
        if (k->bufs[j].scope != BUF_UNUSED &&
            (k->bufs[j].dtype == DT_UINT8 || (k->bufs[j].dtype == DT_INT16 && k->bufs[j].scope == BUF_LOCAL)))
            return 1;
    return 0;
}

/* FOR_TENSORIZE loops of s whose body is one store into a local int32
 * array: the depthwise row of tap pairs (q_depthwise) and the epilogues;
 * and (*copies) those storing into a local int16 array: the plane copy. */
static int tensorized_rows(const Kernel *k, const Stmt *s, int *copies)
{
    int i, n = 0;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->for_kind == FOR_TENSORIZE && s->n_body == 1 && s->body[0] &&
        s->body[0]->kind == ST_STORE && k->bufs[s->body[0]->buf].scope == BUF_LOCAL) {
        if (k->bufs[s->body[0]->buf].dtype == DT_INT32)
            n++;
        else if (k->bufs[s->body[0]->buf].dtype == DT_INT16)
            ++*copies;
    }
    for (i = 0; i < s->n_body; i++)
        n += tensorized_rows(k, s->body[i], copies);
    return n;
}

static int run(const QShape *q, int vbits, int *was_taken)
{
    Arena arena;
    Graph *g;
    Lower L[2];
    Kernel k[2];
    Target t;
    int64_t ci = q->dw ? 1 : q->c, nw = q->oc * ci * q->k * q->k, e;
    int8_t *w, *tab;
    int32_t *init, *mult;
    int vw, vi, vm, vt, xb[2], yb[2], rb[2], i, j, ok = 1;
    void **bufs[2];
    arena_init(&arena, (size_t)1 << 26);
    g = graph_new(&arena, "qconv_test");
    w = arena_alloc(&arena, (size_t)nw);
    init = arena_alloc(&arena, (size_t)q->oc * 4);
    mult = arena_alloc(&arena, (size_t)q->oc * 4);
    tab = arena_alloc(&arena, 256);
    for (e = 0; e < nw; e++)
        w[e] = (int8_t)((int)rnd(255) - 127);
    for (e = 0; e < q->oc; e++) {
        init[e] = (int32_t)rnd(200001) - 100000;
        mult[e] = (int32_t)((1u << 28) + rnd(1u << 29));
    }
    for (e = 0; e < 256; e++)
        tab[e] = q->tail == 2 ? (int8_t)(e - 128 < -100 ? -100 : e - 128 > 90 ? 90 : e - 128) : (int8_t)rnd(256);
    vw = add_const(g, "w", DT_INT8, nw, w);
    vi = add_const(g, "init", DT_INT32, q->oc, init);
    vm = add_const(g, "mult", DT_INT32, q->oc, mult);
    vt = add_const(g, "tab", DT_INT8, 256, tab);
    memset(k, 0, sizeof k);
    memset(&t, 0, sizeof t);
    t.name = "test";
    t.isa = "x86-64";
    t.family = target_family(t.isa);
    t.vector_bits = vbits;
    target_default_knobs(&t);
    t.knobs.lanes = vbits / 32;
    t.fma_tile = 1;
    t.vector_registers = vbits >= 512 ? 32 : 16;
    for (i = 0; i < 2; i++) {
        L[i].g = g;
        L[i].d = NULL;
        L[i].arena = &arena;
        L[i].k = &k[i];
        build(&L[i], q, vw, vi, vm, vt, &xb[i], &yb[i], &rb[i]);
        schedule_naive(&L[i]);
        k[i].bufs[yb[i]].written = 1;
    }
    template_apply(&L[1], &t);
    *was_taken = taken(&k[1]) ? 1 + has_pt(&k[1]) : 0;
    if (*was_taken && q->dw) {
        /* 3: the depthwise rows as tap pairs, with the copy's rows */
        int copies = 0;
        if (tensorized_rows(&k[1], k[1].body, &copies) > 0 && copies > 0)
            *was_taken = 3;
    }
    for (i = 0; i < 2; i++) {
        bufs[i] = calloc((size_t)k[i].n_bufs, sizeof *bufs[i]);
        for (j = 0; j < k[i].n_bufs; j++) {
            const Buffer *b = &k[i].bufs[j];
            if (b->scope == BUF_LOCAL)
                continue;
            bufs[i][j] = calloc((size_t)b->numel + 1, 8);
            if (b->scope == BUF_CONST && b->value >= 0 && g->values[b->value].data)
                memcpy(bufs[i][j], g->values[b->value].data, (size_t)b->numel * dtype_size(b->dtype));
        }
    }
    for (e = 0; e < k[0].bufs[xb[0]].numel; e++) {
        uint8_t r = (uint8_t)rnd(256);
        ((uint8_t *)bufs[0][xb[0]])[e] = r;
        ((uint8_t *)bufs[1][xb[1]])[e] = r;
    }
    if (rb[0] >= 0)
        for (e = 0; e < k[0].bufs[rb[0]].numel; e++) {
            uint8_t r = (uint8_t)rnd(256);
            ((uint8_t *)bufs[0][rb[0]])[e] = r;
            ((uint8_t *)bufs[1][rb[1]])[e] = r;
        }
    if (lower_eval(&k[0], bufs[0]) || lower_eval(&k[1], bufs[1]))
        ok = 0;
    if (ok && memcmp(bufs[0][yb[0]], bufs[1][yb[1]], (size_t)k[0].bufs[yb[0]].numel))
        ok = 0;
    if (!ok) {
        printf("FAIL n%lld c%lld h%lld w%lld oc%lld k%lld s%lld p%lld dw%d u8 %d tail %d zx %lld vbits %d\n",
               (long long)q->n, (long long)q->c, (long long)q->h, (long long)q->w, (long long)q->oc,
               (long long)q->k, (long long)q->s, (long long)q->pad, q->dw, q->u8, q->tail, (long long)q->zx, vbits);
        if (getenv("QCONV_TEST_DUMP"))
            loops_dump(&k[1], stdout);
    }
    for (i = 0; i < 2; i++) {
        for (j = 0; j < k[i].n_bufs; j++)
            free(bufs[i][j]);
        free(bufs[i]);
    }
    arena_free(&arena);
    return ok;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 300, i, passed = 0, failed = 0, ntaken = 0, ndw = 0, npw = 0, tk;
    for (i = 0; i < iters; i++) {
        QShape q;
        memset(&q, 0, sizeof q);
        q.n = 1 + rnd(2);
        q.dw = rnd(3) == 0;
        q.c = 1 + rnd(q.dw ? 12 : 20);
        q.oc = q.dw ? q.c : 1 + rnd(40);
        q.k = rnd(3) ? 1 + 2 * rnd(2) : 1 + rnd(5);
        q.s = 1 + rnd(2);
        q.pad = rnd(2) ? 0 : rnd(3);
        if (q.pad >= q.k)
            q.pad = q.k - 1;
        q.h = q.k + rnd(14);
        q.w = q.k + rnd(30);
        q.u8 = rnd(3) == 0;
        q.zx = q.u8 ? rnd(256) : (int64_t)rnd(256) - 128;
        q.tail = (int)rnd(4);
        if (!q.dw && rnd(4) == 0) {
            /* a 1x1 conv on a larger plane: several position tiles, a
             * partial last one, several channel blocks */
            q.k = 1;
            q.s = 1;
            q.pad = 0;
            q.h = 1 + rnd(12);
            q.w = 1 + rnd(40);
            q.oc = 1 + rnd(60);
        }
        if (run(&q, rnd(2) ? 512 : 256, &tk))
            passed++;
        else
            failed++;
        ntaken += tk > 0;
        ndw += tk && q.dw;
        npw += tk == 2 && !q.dw && q.k == 1 && q.s == 1 && q.pad == 0;
    }
    printf("%d cases took the int8 template, %d of them depthwise, %d 1x1\n", ntaken, ndw, npw);
    if (ntaken < iters / 2 || ndw == 0 || npw == 0) {
        printf("FAIL: too few cases reached the int8 template\n");
        failed++;
    }
    {
        /* depthwise convs of every kind the tap-pair rows handle: 3x3 and
         * 5x5, strides 1 and 2, without and with padding, channel counts
         * and widths on both sides of the vector widths (a row of 2 vectors
         * for stride 1), int8 and uint8 data, every tail; each must take
         * the tap-pair rows */
        static const int64_t ks[] = {3, 5}, cs[] = {3, 17}, ws[] = {7, 21, 40};
        int a, b, cc, e, u, wv, vb, ndwp = 0, ncase = 0;
        for (a = 0; a < 2; a++)
            for (b = 1; b <= 2; b++)
                for (e = 0; e < 2; e++)
                    for (cc = 0; cc < 2; cc++)
                        for (u = 0; u < 2; u++)
                            for (wv = 0; wv < 3; wv++)
                                for (vb = 0; vb < 2; vb++) {
                                    QShape q;
                                    memset(&q, 0, sizeof q);
                                    q.n = 1;
                                    q.dw = 1;
                                    q.c = q.oc = cs[cc];
                                    q.k = ks[a];
                                    q.s = b;
                                    q.pad = e ? ks[a] / 2 : 0;
                                    q.h = q.k + 3 + wv;
                                    q.w = ws[wv];
                                    q.u8 = u;
                                    q.zx = u ? 200 : -77;
                                    q.tail = (int)((a + b + e + cc + u + wv) % 4);
                                    ncase++;
                                    if (run(&q, vb ? 512 : 256, &tk))
                                        passed++;
                                    else
                                        failed++;
                                    ndwp += tk == 3;
                                }
        printf("%d of %d depthwise cases took the tap-pair rows\n", ndwp, ncase);
        if (ndwp != ncase) {
            printf("FAIL: a depthwise case did not take the tap-pair rows\n");
            failed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
