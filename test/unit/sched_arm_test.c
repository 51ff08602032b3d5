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
 * template_apply with a Cortex-M4-like target (the defaults); a third of
 * the float cases get vector tiles (knob vec = 4, the NEON / MVE path),
 * which must leave a vectorized loop of 4 when the vector axis has 4 or
 * more points. The integer
 * kinds are QLinearConv / MatMulInteger-like contractions as op_quant.c
 * builds them (NCHW uint8 input minus a zero point under padding selects,
 * int8 weights minus theirs, int32 sums) with the DSP knobs (dsp = 1,
 * random integer tiles): a reduce axis of even extent must leave a pair
 * loop (two iterations whose body is only int32 multiply-accumulates into
 * the register tile: what emit_arm.c prints as SMLAD). The loop-IR
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

enum { A_CONV, A_DWCONV, A_MATMUL, A_DENSE, A_POOL, A_QCONV, A_QMATMUL, A_COUNT };
static const char *const kind_names[] = {"conv", "depthwise", "matmul", "dense", "pool", "qconv",
                                         "qmatmul"};

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
    if (t->kind == A_QCONV) {
        /* NCHW: x [n, c, h, w] uint8, w [m, c, kh, kw] int8, y int32 */
        int64_t oh = out_size(t->h, t->kh, t->sh, t->dh, t->pt, t->pb);
        int64_t ow = out_size(t->w, t->kw, t->sw, t->dw, t->pl, t->pr);
        int64_t xd[4] = {t->n, t->c, t->h, t->w}, wd[4] = {t->m, t->c, t->kh, t->kw};
        int64_t yd[4] = {t->n, t->m, oh, ow};
        int x = lower_buf_temp(L, "x", DT_UINT8, t->n * t->c * t->h * t->w);
        int w = lower_buf_temp(L, "w", DT_INT8, t->m * t->c * t->kh * t->kw);
        int xz = lower_buf_temp(L, "xz", DT_UINT8, 1);
        int y = lower_buf_temp(L, "y", DT_INT32, yd[0] * yd[1] * yd[2] * yd[3]);
        IterVar *rc, *rh, *rw;
        c = lower_stage(L, "qconv", y, 4, yd);
        rc = lower_raxis(L, c, t->c);
        rh = lower_raxis(L, c, t->kh);
        rw = lower_raxis(L, c, t->kw);
        xi[0] = ex_var(L, &c->axes[0]);
        xi[1] = ex_var(L, rc);
        xi[2] = pos_of(L, &c->axes[2], rh, t->sh, t->dh, t->pt, t->h, &cond);
        xi[3] = pos_of(L, &c->axes[3], rw, t->sw, t->dw, t->pl, t->w, &cond);
        v = ex_sub(L, ex_cast(L, DT_INT32, ex_load_nd(L, x, 4, xd, xi)),
                   ex_cast(L, DT_INT32, ex_load(L, xz, ex_int(L, 0))));
        if (cond)
            v = ex_select(L, cond, v, ex_const_int(L, DT_INT32, 0));
        wi[0] = ex_var(L, &c->axes[1]);
        wi[1] = ex_var(L, rc);
        wi[2] = ex_var(L, rh);
        wi[3] = ex_var(L, rw);
        c->rop = RED_SUM;
        c->body = ex_mul(L, v, ex_sub(L, ex_cast(L, DT_INT32, ex_load_nd(L, w, 4, wd, wi)),
                                       ex_const_int(L, DT_INT32, -3)));
        return 3;
    }
    if (t->kind == A_QMATMUL) {
        /* [h, c] uint8 x [c, m] uint8, zero points, int32 */
        int64_t ad[2] = {t->h, t->c}, bd[2] = {t->c, t->m}, yd[2] = {t->h, t->m};
        int a = lower_buf_temp(L, "a", DT_UINT8, t->h * t->c);
        int b = lower_buf_temp(L, "b", DT_UINT8, t->c * t->m);
        int az = lower_buf_temp(L, "az", DT_UINT8, 1);
        int y = lower_buf_temp(L, "y", DT_INT32, t->h * t->m);
        IterVar *rk;
        c = lower_stage(L, "qmatmul", y, 2, yd);
        rk = lower_raxis(L, c, t->c);
        xi[0] = ex_var(L, &c->axes[0]);
        xi[1] = ex_var(L, rk);
        wi[0] = ex_var(L, rk);
        wi[1] = ex_var(L, &c->axes[1]);
        c->rop = RED_SUM;
        c->body = ex_mul(L, ex_sub(L, ex_cast(L, DT_INT32, ex_load_nd(L, a, 2, ad, xi)),
                                   ex_cast(L, DT_INT32, ex_load(L, az, ex_int(L, 0)))),
                         ex_sub(L, ex_cast(L, DT_INT32, ex_load_nd(L, b, 2, bd, wi)),
                                ex_const_int(L, DT_INT32, 128)));
        return 3;
    }
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
    if (t->kind == A_MATMUL || t->kind == A_DENSE || t->kind == A_QMATMUL) {
        t->h = 1 + rnd(9);
        t->c = 1 + rnd(20);
        t->m = 1 + rnd(24);
    }
    t->relu = (int)rnd(2);
    t->use_template = rnd(4) == 0;
    t->k.acc = 1 + (int)rnd(24);
    t->k.lanes = 1 + (int)rnd(8);
    t->k.unroll_red = (int)rnd(7);
    if (t->kind == A_QCONV || t->kind == A_QMATMUL) {
        t->relu = 0;
        t->k.dsp = 1;
        t->k.int_acc = 1 + (int)rnd(16);
        t->k.int_lanes = 1 + (int)rnd(8);
    } else if (rnd(3) == 0) {
        t->k.vec = 4;
    }
}

/* Whether some loop of extent 2 holds only int32 multiply-accumulates into
 * a local register tile (the pair loop emit_arm.c prints as SMLAD). */
static int mac_only(const Kernel *k, const Stmt *s)
{
    int i;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            if (!mac_only(k, s->body[i]))
                return 0;
        return s->n_body > 0;
    }
    return s->kind == ST_STORE && k->bufs[s->buf].scope == BUF_LOCAL &&
           k->bufs[s->buf].dtype == DT_INT32 && s->value->kind == EX_BINARY &&
           s->value->op == BIN_ADD && s->value->b->kind == EX_BINARY && s->value->b->op == BIN_MUL;
}

static int has_pair_loop(const Kernel *k, const Stmt *s)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->extent == 2 && s->body[0] && mac_only(k, s->body[0]))
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (has_pair_loop(k, s->body[i]))
            return 1;
    return 0;
}

static int has_vector_loop(const Stmt *s)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->for_kind == FOR_VECTORIZE && s->extent == 4)
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (has_vector_loop(s->body[i]))
            return 1;
    return 0;
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
    tg.family = target_family(tg.isa);
    tg.vector_bits = 32;
    tg.has_fpu = 1;
    /* the knobs of targets/cortex-m4.json */
    target_default_knobs(&tg);
    tg.knobs.acc = 12;
    tg.knobs.lanes = 4;
    tg.knobs.unroll_red = 4;
    tg.knobs.dsp = 1;
    tg.knobs.int_acc = 8;
    tg.knobs.int_lanes = 8;
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
    if (t->kind != A_POOL && (t->use_template || (t->k.dsp ? t->k.int_acc : t->k.acc) > 1) &&
        !has_tile(&k[1])) {
        const Compute *c = &k[1].stages[0];
        int64_t outs = 1;
        for (j = 0; j < c->n_axes; j++)
            outs *= c->axes[j].extent;
        if (outs > 1) {
            ok = 0;
            why = 1;
        }
    }
    if (ok && (t->kind == A_QCONV || t->kind == A_QMATMUL) && !t->use_template) {
        const Compute *c = &k[0].stages[0];
        int even = 0;
        for (j = 0; j < c->n_raxes; j++)
            even |= c->raxes[j].extent % 2 == 0;
        if (even && !has_pair_loop(&k[1], k[1].body)) {
            ok = 0;
            why = 4;
        }
    }
    if (ok && t->k.vec && !t->use_template && t->kind != A_POOL) {
        const Compute *c = &k[0].stages[0];
        if (c->axes[c->n_axes - 1].extent >= 4 && !has_vector_loop(k[1].body)) {
            ok = 0;
            why = 5;
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
            int q = rand() % 256;
            if (k[0].bufs[j].dtype == DT_UINT8) {
                ((uint8_t *)bufs[0][j])[e] = (uint8_t)q;
                ((uint8_t *)bufs[1][j])[e] = (uint8_t)q;
            } else if (k[0].bufs[j].dtype == DT_INT8) {
                ((int8_t *)bufs[0][j])[e] = (int8_t)(q - 128);
                ((int8_t *)bufs[1][j])[e] = (int8_t)(q - 128);
            } else {
                ((float *)bufs[0][j])[e] = r;
                ((float *)bufs[1][j])[e] = r;
            }
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
        static const char *const reasons[] = {"", "no register tile", "eval error", "results differ",
                                              "no pair loop", "no vector loop"};
        printf("FAIL (%s) %s n%lld h%lld w%lld c%lld m%lld g%lld k%lldx%lld s%lldx%lld d%lldx%lld "
               "p%lld,%lld,%lld,%lld relu%d %s acc%d lanes%d unroll%d vec%d int%dx%d seed %d\n",
               reasons[why], kind_names[t->kind], (long long)t->n, (long long)t->h, (long long)t->w,
               (long long)t->c, (long long)t->m, (long long)t->group, (long long)t->kh,
               (long long)t->kw, (long long)t->sh, (long long)t->sw, (long long)t->dh,
               (long long)t->dw, (long long)t->pt, (long long)t->pl, (long long)t->pb,
               (long long)t->pr, t->relu, t->use_template ? "template" : "knobs", t->k.acc,
               t->k.lanes, t->k.unroll_red, t->k.vec, t->k.int_acc, t->k.int_lanes, seed);
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
