/*
 * Property test for the Cortex-M register tiles (lower/templates_arm.c):
 * for random shapes and random knobs the tiled kernel computes exactly what
 * the naive schedule computes.
 *
 * Kernels have the structures the Cortex-M targets schedule: an NHWC conv
 * as lower/op_layout.c builds it (padding selects with clamped loads,
 * stride, dilation, groups including depthwise, bias, relu), a batched
 * matmul, a one-row dense layer and an NHWC max pool. Each is built twice;
 * one copy keeps the naive schedule, the other gets template_arm_apply with
 * random knobs (accumulators 1..24, lanes 1..8, reduce unroll 0..6) or
 * template_apply with a Cortex-M4-like target (the defaults). The loop-IR
 * interpreter runs both on the same random inputs; the outputs must be
 * bit-identical (the tiles keep every output's reduction order). A case
 * also fails when the template left a conv or matmul with no register tile
 * (a local buffer of more than one element) although the knobs allow one.
 * Prints failures and ends with "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/arena.h"
#include "../../lower/eval.h"
#include "../../lower/sched.h"
#include "../../lower/templates_arm.h"

static int passed, failed;
static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

enum { A_CONV, A_DWCONV, A_MATMUL, A_DENSE, A_POOL, A_COUNT };
static const char *const kind_names[] = {"conv", "depthwise", "matmul", "dense", "pool"};

typedef struct Case {
    int kind;
    int64_t n, h, w, c, m, group, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    int relu, use_template;
    ArmKnobs k;
} Case;

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1)
{
    return (in + p0 + p1 - (k - 1) * d - 1) / s + 1;
}

/* Input position of output axis o and reduce axis r along one spatial
 * dimension, clamped, with its bounds test and-ed into *cond. */
static Expr *pos_of(Lower *L, const IterVar *o, const IterVar *r, int64_t s, int64_t d, int64_t p,
                    int64_t size, Expr **cond)
{
    Expr *pos = ex_add(L, ex_sub(L, ex_mul(L, ex_var(L, o), ex_int(L, s)), ex_int(L, p)),
                       ex_mul(L, ex_var(L, r), ex_int(L, d)));
    int64_t hi = (o->extent - 1) * s - p + (r->extent - 1) * d;
    Expr *c = NULL;
    if (p > 0)
        c = ex_binary(L, BIN_GE, pos, ex_int(L, 0));
    if (hi >= size)
        c = c ? ex_and(L, c, ex_lt(L, pos, ex_int(L, size))) : ex_lt(L, pos, ex_int(L, size));
    if (!c)
        return pos;
    *cond = *cond ? ex_and(L, *cond, c) : c;
    return ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, pos, ex_int(L, 0)), ex_int(L, size - 1));
}

/* Builds the case's kernel; returns the number of input buffers (first). */
static int build(Lower *L, const Case *t)
{
    Compute *c;
    Expr *cond = NULL, *xi[4], *wi[4], *v;
    if (t->kind == A_CONV || t->kind == A_DWCONV || t->kind == A_POOL) {
        int64_t oh = out_size(t->h, t->kh, t->sh, t->dh, t->pt, t->pb);
        int64_t ow = out_size(t->w, t->kw, t->sw, t->dw, t->pl, t->pr);
        int64_t m = t->kind == A_POOL ? t->c : t->m, cg = t->c / t->group, mg = m / t->group;
        int64_t xd[4] = {t->n, t->h, t->w, t->c}, wd[4] = {m, t->kh, t->kw, cg};
        int64_t yd[4] = {t->n, oh, ow, m};
        int x = lower_buf_temp(L, "x", DT_FLOAT32, t->n * t->h * t->w * t->c);
        int w = t->kind == A_POOL ? -1 : lower_buf_temp(L, "w", DT_FLOAT32, m * t->kh * t->kw * cg);
        int b = t->kind == A_POOL ? -1 : lower_buf_temp(L, "b", DT_FLOAT32, m);
        int y = lower_buf_temp(L, "y", DT_FLOAT32, yd[0] * yd[1] * yd[2] * yd[3]);
        IterVar *rh, *rw, *rc = NULL;
        c = lower_stage(L, t->kind == A_POOL ? "pool" : "conv", y, 4, yd);
        rh = lower_raxis(L, c, t->kh);
        rw = lower_raxis(L, c, t->kw);
        if (t->kind != A_POOL)
            rc = lower_raxis(L, c, cg);
        xi[0] = ex_var(L, &c->axes[0]);
        xi[1] = pos_of(L, &c->axes[1], rh, t->sh, t->dh, t->pt, t->h, &cond);
        xi[2] = pos_of(L, &c->axes[2], rw, t->sw, t->dw, t->pl, t->w, &cond);
        if (t->kind == A_POOL) {
            xi[3] = ex_var(L, &c->axes[3]);
            v = ex_load_nd(L, x, 4, xd, xi);
            if (cond)
                v = ex_select(L, cond, v, ex_float(L, DT_FLOAT32, -HUGE_VAL));
            c->rop = RED_MAX;
            c->body = v;
            return 1;
        }
        xi[3] = ex_var(L, rc);
        if (t->group > 1)
            xi[3] = ex_add(L, ex_mul(L, ex_binary(L, BIN_DIV, ex_var(L, &c->axes[3]), ex_int(L, mg)),
                                     ex_int(L, cg)),
                           xi[3]);
        v = ex_load_nd(L, x, 4, xd, xi);
        if (cond)
            v = ex_select(L, cond, v, ex_float(L, DT_FLOAT32, 0.0));
        wi[0] = ex_var(L, &c->axes[3]);
        wi[1] = ex_var(L, rh);
        wi[2] = ex_var(L, rw);
        wi[3] = ex_var(L, rc);
        c->rop = RED_SUM;
        c->body = ex_mul(L, v, ex_load_nd(L, w, 4, wd, wi));
        c->init = ex_load(L, b, ex_var(L, &c->axes[3]));
        if (t->relu)
            c->post = ex_binary(L, BIN_MAX, ex_acc(L, DT_FLOAT32), ex_float(L, DT_FLOAT32, 0.0));
        return 3;
    }
    {
        /* matmul [n, h, c] x [n, c, m]; dense: [1, c] x [c, m] + bias */
        int64_t bn = t->kind == A_DENSE ? 1 : t->n, rows = t->kind == A_DENSE ? 1 : t->h;
        int64_t ad[3] = {bn, rows, t->c}, bd[3] = {bn, t->c, t->m}, yd[3] = {bn, rows, t->m};
        int a = lower_buf_temp(L, "a", DT_FLOAT32, bn * rows * t->c);
        int b = lower_buf_temp(L, "b", DT_FLOAT32, bn * t->c * t->m);
        int bias = lower_buf_temp(L, "bias", DT_FLOAT32, t->m);
        int y = lower_buf_temp(L, "y", DT_FLOAT32, bn * rows * t->m);
        IterVar *rk;
        c = lower_stage(L, "matmul", y, 3, yd);
        rk = lower_raxis(L, c, t->c);
        xi[0] = ex_var(L, &c->axes[0]);
        xi[1] = ex_var(L, &c->axes[1]);
        xi[2] = ex_var(L, rk);
        v = ex_load_nd(L, a, 3, ad, xi);
        wi[0] = ex_var(L, &c->axes[0]);
        wi[1] = ex_var(L, rk);
        wi[2] = ex_var(L, &c->axes[2]);
        c->rop = RED_SUM;
        c->body = ex_mul(L, v, ex_load_nd(L, b, 3, bd, wi));
        if (t->kind == A_DENSE)
            c->init = ex_load(L, bias, ex_var(L, &c->axes[2]));
        if (t->relu)
            c->post = ex_binary(L, BIN_MAX, ex_acc(L, DT_FLOAT32), ex_float(L, DT_FLOAT32, 0.0));
        return 3;
    }
}

static void random_case(Case *t)
{
    memset(t, 0, sizeof *t);
    t->kind = (int)rnd(A_COUNT);
    t->n = 1 + rnd(2);
    t->kh = 1 + rnd(4);
    t->kw = 1 + rnd(4);
    t->sh = 1 + rnd(2);
    t->sw = 1 + rnd(2);
    t->dh = 1 + (rnd(4) == 0);
    t->dw = 1 + (rnd(4) == 0);
    t->pt = rnd((unsigned)t->kh);
    t->pb = rnd((unsigned)t->kh);
    t->pl = rnd((unsigned)t->kw);
    t->pr = rnd((unsigned)t->kw);
    t->h = (t->kh - 1) * t->dh + 1 + rnd(8);
    t->w = (t->kw - 1) * t->dw + 1 + rnd(14);
    t->c = 1 + rnd(9);
    t->m = 1 + rnd(13);
    t->group = 1;
    if (t->kind == A_DWCONV) {
        t->group = t->c;
        t->m = t->c * (1 + (rnd(3) == 0)); /* channel multiplier 1 or 2 */
    } else if (t->kind == A_CONV && rnd(4) == 0 && t->c % 2 == 0) {
        t->group = 2;
        t->m = 2 * (1 + rnd(5));
    }
    if (t->kind == A_MATMUL || t->kind == A_DENSE) {
        t->h = 1 + rnd(9);
        t->c = 1 + rnd(20);
        t->m = 1 + rnd(24);
    }
    t->relu = (int)rnd(2);
    t->use_template = rnd(4) == 0;
    t->k.acc = 1 + (int)rnd(24);
    t->k.lanes = 1 + (int)rnd(8);
    t->k.unroll_red = (int)rnd(7);
}

static int has_tile(const Kernel *k)
{
    int i;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].scope == BUF_LOCAL && k->bufs[i].numel > 1)
            return 1;
    return 0;
}

static int run_case(const Case *t, int seed)
{
    Arena arena;
    Lower L[2];
    Kernel k[2];
    Target tg;
    void **bufs[2];
    int n_in = 0, i, j, ok = 1, why = 0;
    arena_init(&arena, (size_t)1 << 26);
    memset(k, 0, sizeof k);
    memset(&tg, 0, sizeof tg);
    tg.name = "cortex-m4-like";
    tg.isa = "armv7e-m";
    tg.vector_bits = 32;
    tg.has_fpu = 1;
    for (i = 0; i < 2; i++) {
        L[i].g = NULL;
        L[i].d = NULL;
        L[i].arena = &arena;
        L[i].k = &k[i];
        n_in = build(&L[i], t);
        schedule_naive(&L[i]);
        for (j = 0; j < k[i].n_stages; j++)
            k[i].bufs[k[i].stages[j].out_buf].written = 1;
    }
    if (t->use_template)
        template_apply(&L[1], &tg);
    else
        template_arm_apply(&L[1], &t->k);
    /* a sum of products with more than one output and room for two
     * accumulators must get a register tile */
    if (t->kind != A_POOL && (t->use_template || t->k.acc > 1) && !has_tile(&k[1])) {
        const Compute *c = &k[1].stages[0];
        int64_t outs = 1;
        for (j = 0; j < c->n_axes; j++)
            outs *= c->axes[j].extent;
        if (outs > 1) {
            ok = 0;
            why = 1;
        }
    }
    for (i = 0; i < 2; i++) {
        bufs[i] = calloc((size_t)k[i].n_bufs, sizeof *bufs[i]);
        for (j = 0; j < k[i].n_bufs; j++)
            if (k[i].bufs[j].scope != BUF_LOCAL)
                bufs[i][j] = calloc((size_t)k[i].bufs[j].numel + 1, sizeof(float));
    }
    srand((unsigned)seed);
    for (j = 0; j < n_in; j++) {
        int64_t e;
        for (e = 0; e < k[0].bufs[j].numel; e++) {
            float r = (float)rand() / (float)RAND_MAX - 0.5f;
            ((float *)bufs[0][j])[e] = r;
            ((float *)bufs[1][j])[e] = r;
        }
    }
    if (lower_eval(&k[0], bufs[0]) || lower_eval(&k[1], bufs[1])) {
        ok = 0;
        why = 2;
    }
    if (ok) {
        int yb = k[0].stages[0].out_buf;
        if (memcmp(bufs[0][yb], bufs[1][yb], (size_t)k[0].bufs[yb].numel * sizeof(float)) != 0) {
            ok = 0;
            why = 3;
        }
    }
    if (!ok) {
        static const char *const reasons[] = {"", "no register tile", "eval error", "results differ"};
        printf("FAIL (%s) %s n%lld h%lld w%lld c%lld m%lld g%lld k%lldx%lld s%lldx%lld d%lldx%lld "
               "p%lld,%lld,%lld,%lld relu%d %s acc%d lanes%d unroll%d seed %d\n",
               reasons[why], kind_names[t->kind], (long long)t->n, (long long)t->h, (long long)t->w,
               (long long)t->c, (long long)t->m, (long long)t->group, (long long)t->kh,
               (long long)t->kw, (long long)t->sh, (long long)t->sw, (long long)t->dh,
               (long long)t->dw, (long long)t->pt, (long long)t->pl, (long long)t->pb,
               (long long)t->pr, t->relu, t->use_template ? "template" : "knobs", t->k.acc,
               t->k.lanes, t->k.unroll_red, seed);
        if (getenv("SCHED_ARM_DUMP"))
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
    int iters = argc > 1 ? atoi(argv[1]) : 400, i;
    for (i = 0; i < iters; i++) {
        Case t;
        random_case(&t);
        if (run_case(&t, i))
            passed++;
        else
            failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
