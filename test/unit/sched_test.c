/*
 * Property test for the schedule primitives and templates (lower/sched.c,
 * lower/templates.c): a schedule never changes results. For random shapes
 * of a few stage structures (a padded, strided conv with bias and relu, a
 * matmul, a padded max pool, an elementwise stage, a two-stage kernel whose
 * first stage is inlined, a softmax), the kernel is built twice; one copy keeps the
 * naive schedule, the other gets either the template of a random target or
 * a random sequence of primitives with random arguments (refusals are
 * fine: a refused primitive must leave a correct nest), among them
 * cache_write with padded tile rows and primitives scoped to one piece of
 * a partition, compute_at of a random stage and cache_read of a random
 * buffer at a random loop (a refusal must leave the dumped IR unchanged and
 * give a reason). A softmax (two reductions into temps and the stage that
 * reads them) is also scheduled by compute_at of both reductions, last
 * first, at a random loop of the last nest. Packed-template cases take, half of the time, random legal
 * knobs of their workload (lower/knobs.h: the template on a scratch copy
 * gives the workload key and knob space; the override table supplies the
 * pick), as a tuning log would. Both are run by the
 * loop-IR interpreter on the same random inputs and must agree (rtol 1e-4).
 * Fixed kernels then check the dumped loops of compute_at and cache_read
 * and three illegal compute_at requests (a read outside the loop, reads
 * starting at different places, a reduction nest already split).
 * Prints failures and ends with "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/arena.h"
#include "../../lower/eval.h"
#include "../../lower/knobs.h"
#include "../../lower/lower.h"
#include "../../lower/sched.h"

static int passed, failed, packed_cases, knob_cases, blocked_cases;
static int last_packed; /* the last template case's kernel reads a repacked constant */
static int last_flat_dw; /* the last packed case's kernel has the flat depthwise epilogue */
static int last_dw_band; /* ... and copies the depthwise input a band of rows per row of tiles */
static int last_dw_group; /* ... and runs depthwise channels in groups (copies, tiles, epilogues) */
static int last_parallel; /* ... and has a parallel loop */
static int last_prefetch; /* ... and a tile that prefetches its vector operand */
static int last_plane_sum; /* ... and the plane sum's accumulator blocks */
static int last_merged; /* ... and an elementwise loop merged by sched_fuse_flat */
/* the last packed matmul's kernel: its tiles accumulate in the output (no
 * local array), it has a partial last row tile (a second tile nest of
 * fewer rows), its row panels are copied per row block (inside loop mb),
 * its reduction is blocked (loop kb) */
static int last_mm_direct, last_mm_partial, last_mm_block_pack, last_mm_blocked;
static int prefer_blocked; /* random knobs: only blocked reductions when legal */
static int last_post_pass; /* ... and its dump has the c target's in-place post pass */
static int last_positions; /* ... or the positions-vector tile of a pointwise conv */
static int last_dw_tile; /* ... or a depthwise conv's row tiles (loops ot, qt) */
static unsigned long long rng_state = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

enum { K_CONV, K_MATMUL, K_POOL, K_ELEM, K_TWO, K_SOFT, K_MEAN, K_COUNT };
static const char *const kind_names[] = {"conv", "matmul", "pool", "elemwise", "two-stage", "softmax", "mean"};

typedef struct Shape {
    int kind;
    int64_t n, c, h, w, oc, kh, kw, stride, pad; /* conv/pool; matmul uses h, w, c */
    int dw; /* conv: depthwise (oc == c, one input channel per group) */
    int64_t l1; /* the target's L1 bytes (0: the template's default) */
    int cw; /* conv/matmul: the weights are a graph constant (the packed
               template of x86 targets repacks them) */
    int blk; /* conv in blocked channels (lower/op_layout.c, NCHW<b>c): 1
                NCHW input, 2 blocked input; output blocked */
    int64_t b; /* blk: the channel block */
    int bias; /* matmul: init from a bias per column and a Relu post */
    int res; /* conv: the post adds a residual input "r" shaped like y
                (blocked for blk) before the relu */
} Shape;

/* The weights as a buffer: a temp the test fills, or (sh->cw, with a graph)
 * a constant "w" of the graph with random data, made on the first call. */
static int weights_buf(Lower *L, const Shape *sh, int64_t numel)
{
    int32_t vi;
    if (!sh->cw || !L->g)
        return lower_buf_temp(L, "w", DT_FLOAT32, numel);
    vi = graph_find_value(L->g, "w");
    if (vi < 0) {
        Value *v;
        float *data = arena_alloc(L->g->arena, (size_t)numel * sizeof *data);
        int64_t i;
        if (!data)
            return -1;
        for (i = 0; i < numel; i++)
            data[i] = (float)(rnd(20001) / 10000.0 - 1.0);
        vi = graph_add_value(L->g, "w");
        v = &L->g->values[vi];
        v->dtype = DT_FLOAT32;
        v->rank = 1;
        v->dims[0] = numel;
        v->data = data;
    }
    return lower_buf_value(L, vi);
}

static Expr *clampx(Lower *L, Expr *e, int64_t hi)
{
    return ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, e, ex_int(L, 0)), ex_int(L, hi));
}

static int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t p)
{
    return (in + 2 * p - k) / s + 1;
}

/* Window position of output axis `o` and reduce axis `r`, with its bounds
 * test folded into *cond. */
static Expr *window(Lower *L, const IterVar *o, const IterVar *r, const Shape *sh, int64_t in, Expr **cond)
{
    Expr *pos = ex_add(L, ex_sub(L, ex_mul(L, ex_var(L, o), ex_int(L, sh->stride)), ex_int(L, sh->pad)),
                       ex_var(L, r));
    if (sh->pad > 0) {
        *cond = ex_and(L, *cond, ex_binary(L, BIN_GE, pos, ex_int(L, 0)));
        *cond = ex_and(L, *cond, ex_lt(L, pos, ex_int(L, in)));
        pos = clampx(L, pos, in - 1);
    }
    return pos;
}

/* The window a conv stage of sh is tagged with, as lowering tags it
 * (Compute.window): the templates take strides, dilations and pads there. */
static const ConvWindow *conv_tag(Lower *L, const Shape *sh, int64_t oh, int64_t ow)
{
    ConvWindow *w = lower_alloc(L, sizeof *w);
    memset(w, 0, sizeof *w);
    w->nsp = 2;
    w->kernel[0] = sh->kh;
    w->kernel[1] = sh->kw;
    w->strides[0] = w->strides[1] = sh->stride;
    w->dilations[0] = w->dilations[1] = 1;
    w->pad_begin[0] = w->pad_begin[1] = w->pad_end[0] = w->pad_end[1] = sh->pad;
    w->out[0] = oh;
    w->out[1] = ow;
    w->group = sh->dw ? sh->c : 1;
    return w;
}

/* Builds the kernel for sh into L->k; returns the number of buffers that
 * are inputs (the first ones). */
static int build(Lower *L, const Shape *sh)
{
    int64_t oh = out_extent(sh->h, sh->kh, sh->stride, sh->pad);
    int64_t ow = out_extent(sh->w, sh->kw, sh->stride, sh->pad);
    Compute *c;
    Expr *cond = ex_const_int(L, DT_BOOL, 1), *idx[4], *v;
    int i;
    if (sh->kind == K_CONV && sh->blk) {
        /* as lower_conv_nchwc builds it: y[n][mb][oh][ow][mi] over (c, kh,
         * kw) or (cb, kh, kw, ci), weights OIHW at channel mb*b + mi */
        int64_t B = sh->b, bi = sh->blk == 2;
        int64_t xd[5] = {sh->n, bi ? sh->c / B : sh->c, sh->h, sh->w, B};
        int64_t wd[4] = {sh->oc, sh->c, sh->kh, sh->kw};
        int64_t yd[5] = {sh->n, sh->oc / B, oh, ow, B};
        int x = lower_buf_temp(L, "x", DT_FLOAT32, sh->n * sh->c * sh->h * sh->w);
        int w = weights_buf(L, sh, sh->oc * sh->c * sh->kh * sh->kw);
        int b = lower_buf_temp(L, "b", DT_FLOAT32, sh->oc);
        int r = sh->res ? lower_buf_temp(L, "r", DT_FLOAT32, sh->n * sh->oc * oh * ow) : -1;
        int y = lower_buf_temp(L, "y", DT_FLOAT32, sh->n * sh->oc * oh * ow);
        IterVar rc, rh, rw, ri;
        Expr *co, *yi[5];
        c = lower_stage(L, "conv_nchwc", y, 5, yd);
        c->window = conv_tag(L, sh, oh, ow);
        rc = *lower_raxis(L, c, xd[1]);
        rh = *lower_raxis(L, c, sh->kh);
        rw = *lower_raxis(L, c, sh->kw);
        if (bi)
            ri = *lower_raxis(L, c, B);
        idx[0] = ex_var(L, &c->axes[0]);
        idx[1] = ex_var(L, &rc);
        idx[2] = window(L, &c->axes[2], &rh, sh, sh->h, &cond);
        idx[3] = window(L, &c->axes[3], &rw, sh, sh->w, &cond);
        if (bi) {
            Expr *i5[5];
            for (i = 0; i < 4; i++)
                i5[i] = idx[i];
            i5[4] = ex_var(L, &ri);
            v = ex_load_nd(L, x, 5, xd, i5);
        } else {
            v = ex_load_nd(L, x, 4, xd, idx);
        }
        if (sh->pad > 0)
            v = ex_select(L, cond, v, ex_float(L, DT_FLOAT32, 0.0));
        co = ex_add(L, ex_mul(L, ex_var(L, &c->axes[1]), ex_int(L, B)), ex_var(L, &c->axes[4]));
        idx[0] = co;
        idx[1] = bi ? ex_add(L, ex_mul(L, ex_var(L, &rc), ex_int(L, B)), ex_var(L, &ri)) : ex_var(L, &rc);
        idx[2] = ex_var(L, &rh);
        idx[3] = ex_var(L, &rw);
        c->rop = RED_SUM;
        c->body = ex_mul(L, v, ex_load_nd(L, w, 4, wd, idx));
        c->init = ex_load(L, b, co);
        c->post = ex_acc(L, DT_FLOAT32);
        if (r >= 0) {
            for (i = 0; i < 5; i++)
                yi[i] = ex_var(L, &c->axes[i]);
            c->post = ex_add(L, c->post, ex_load_nd(L, r, 5, yd, yi));
        }
        c->post = ex_binary(L, BIN_MAX, c->post, ex_float(L, DT_FLOAT32, 0.0));
        return r >= 0 ? 4 : 3;
    }
    if (sh->kind == K_CONV) {
        /* depthwise: one input channel per output channel (oc == c) */
        int64_t wc = sh->dw ? 1 : sh->c;
        int64_t xd[4] = {sh->n, sh->c, sh->h, sh->w}, wd[4] = {sh->oc, wc, sh->kh, sh->kw};
        int64_t yd[4] = {sh->n, sh->oc, oh, ow};
        int x = lower_buf_temp(L, "x", DT_FLOAT32, sh->n * sh->c * sh->h * sh->w);
        int w = weights_buf(L, sh, sh->oc * wc * sh->kh * sh->kw);
        int b = lower_buf_temp(L, "b", DT_FLOAT32, sh->oc);
        int r = sh->res ? lower_buf_temp(L, "r", DT_FLOAT32, yd[0] * yd[1] * yd[2] * yd[3]) : -1;
        int y = lower_buf_temp(L, "y", DT_FLOAT32, yd[0] * yd[1] * yd[2] * yd[3]);
        IterVar rc, rh, rw;
        c = lower_stage(L, "conv", y, 4, yd);
        c->window = conv_tag(L, sh, oh, ow);
        rc = *lower_raxis(L, c, wc);
        rh = *lower_raxis(L, c, sh->kh);
        rw = *lower_raxis(L, c, sh->kw);
        idx[0] = ex_var(L, &c->axes[0]);
        idx[1] = sh->dw ? ex_add(L, ex_var(L, &c->axes[1]), ex_var(L, &rc)) : ex_var(L, &rc);
        idx[2] = window(L, &c->axes[2], &rh, sh, sh->h, &cond);
        idx[3] = window(L, &c->axes[3], &rw, sh, sh->w, &cond);
        v = ex_select(L, cond, ex_load_nd(L, x, 4, xd, idx), ex_float(L, DT_FLOAT32, 0.0));
        idx[0] = ex_var(L, &c->axes[1]);
        idx[1] = ex_var(L, &rc);
        idx[2] = ex_var(L, &rh);
        idx[3] = ex_var(L, &rw);
        c->rop = RED_SUM;
        c->body = ex_mul(L, v, ex_load_nd(L, w, 4, wd, idx));
        c->init = ex_load(L, b, ex_var(L, &c->axes[1]));
        c->post = ex_binary(L, BIN_MAX, ex_acc(L, DT_FLOAT32), ex_float(L, DT_FLOAT32, 0.0));
        if (r >= 0) {
            Expr *res;
            for (i = 0; i < 4; i++)
                idx[i] = ex_var(L, &c->axes[i]);
            res = ex_load_nd(L, r, 4, yd, idx);
            c->post = ex_binary(L, BIN_MAX, ex_add(L, ex_acc(L, DT_FLOAT32), res), ex_float(L, DT_FLOAT32, 0.0));
            return 4;
        }
        return 3;
    }
    if (sh->kind == K_MATMUL) {
        int64_t ad[2] = {sh->h, sh->c}, bd[2] = {sh->c, sh->w}, yd[2] = {sh->h, sh->w};
        int a = lower_buf_temp(L, "a", DT_FLOAT32, sh->h * sh->c);
        int b = weights_buf(L, sh, sh->c * sh->w);
        int bb = sh->bias ? lower_buf_temp(L, "bias", DT_FLOAT32, sh->w) : -1;
        int y = lower_buf_temp(L, "y", DT_FLOAT32, sh->h * sh->w);
        IterVar rk;
        c = lower_stage(L, "matmul", y, 2, yd);
        rk = *lower_raxis(L, c, sh->c);
        idx[0] = ex_var(L, &c->axes[0]);
        idx[1] = ex_var(L, &rk);
        v = ex_load_nd(L, a, 2, ad, idx);
        idx[0] = ex_var(L, &rk);
        idx[1] = ex_var(L, &c->axes[1]);
        c->rop = RED_SUM;
        c->body = ex_mul(L, v, ex_load_nd(L, b, 2, bd, idx));
        if (!sh->bias)
            return 2;
        c->init = ex_load(L, bb, ex_var(L, &c->axes[1]));
        c->post = ex_binary(L, BIN_MAX, ex_acc(L, DT_FLOAT32), ex_float(L, DT_FLOAT32, 0.0));
        return 3;
    }
    if (sh->kind == K_POOL) {
        int64_t xd[4] = {sh->n, sh->c, sh->h, sh->w}, yd[4] = {sh->n, sh->c, oh, ow};
        int x = lower_buf_temp(L, "x", DT_FLOAT32, sh->n * sh->c * sh->h * sh->w);
        int y = lower_buf_temp(L, "y", DT_FLOAT32, yd[0] * yd[1] * yd[2] * yd[3]);
        IterVar rh, rw;
        c = lower_stage(L, "pool", y, 4, yd);
        rh = *lower_raxis(L, c, sh->kh);
        rw = *lower_raxis(L, c, sh->kw);
        idx[0] = ex_var(L, &c->axes[0]);
        idx[1] = ex_var(L, &c->axes[1]);
        idx[2] = window(L, &c->axes[2], &rh, sh, sh->h, &cond);
        idx[3] = window(L, &c->axes[3], &rw, sh, sh->w, &cond);
        c->rop = RED_MAX;
        c->body = ex_select(L, cond, ex_load_nd(L, x, 4, xd, idx), ex_float(L, DT_FLOAT32, -HUGE_VAL));
        return 1;
    }
    if (sh->kind == K_SOFT) {
        /* softmax over the middle of [n, c, w], built by lower/op_reduce.c:
         * two reductions into temps, then the elementwise stage */
        int64_t v3[3] = {sh->n * sh->h, sh->c, sh->w};
        int x = lower_buf_temp(L, "x", DT_FLOAT32, v3[0] * v3[1] * v3[2]);
        int y = lower_buf_temp(L, "y", DT_FLOAT32, v3[0] * v3[1] * v3[2]);
        lower_softmax_stages(L, x, y, v3, DT_FLOAT32, 0);
        return 1;
    }
    if (sh->kind == K_MEAN) {
        /* a global average pool with a bias: y[n][c] = (b[c] + sum_hw x) / (h*w) */
        int64_t xd[4] = {sh->n, sh->c, sh->h, sh->w}, yd[2] = {sh->n, sh->c};
        int x = lower_buf_temp(L, "x", DT_FLOAT32, sh->n * sh->c * sh->h * sh->w);
        int b = lower_buf_temp(L, "b", DT_FLOAT32, sh->c);
        int y = lower_buf_temp(L, "y", DT_FLOAT32, sh->n * sh->c);
        IterVar rh, rw;
        c = lower_stage(L, "mean", y, 2, yd);
        rh = *lower_raxis(L, c, sh->h);
        rw = *lower_raxis(L, c, sh->w);
        idx[0] = ex_var(L, &c->axes[0]);
        idx[1] = ex_var(L, &c->axes[1]);
        idx[2] = ex_var(L, &rh);
        idx[3] = ex_var(L, &rw);
        c->rop = RED_SUM;
        c->body = ex_load_nd(L, x, 4, xd, idx);
        c->init = ex_load(L, b, ex_var(L, &c->axes[1]));
        c->post = ex_mul(L, ex_acc(L, DT_FLOAT32), ex_float(L, DT_FLOAT32, 1.0 / (double)(sh->h * sh->w)));
        return 2;
    }
    {
        int64_t d[3] = {sh->n, sh->c, sh->w};
        int64_t numel = sh->n * sh->c * sh->w;
        int x = lower_buf_temp(L, "x", DT_FLOAT32, numel);
        int t = sh->kind == K_TWO ? lower_buf_temp(L, "t", DT_FLOAT32, numel) : -1;
        int y = lower_buf_temp(L, "y", DT_FLOAT32, numel);
        if (t >= 0) {
            c = lower_stage(L, "first", t, 3, d);
            c->body = ex_mul(L, ex_load_broadcast(L, x, 3, d, c), ex_float(L, DT_FLOAT32, 3.0));
        }
        c = lower_stage(L, "compute", y, 3, d);
        c->body = ex_add(L, ex_load_broadcast(L, t >= 0 ? t : x, 3, d, c), ex_float(L, DT_FLOAT32, 1.0));
        if (sh->dw) { /* elemwise: times a per-channel scale (a squeeze-excitation Mul) */
            int sc = lower_buf_temp(L, "s", DT_FLOAT32, sh->n * sh->c);
            c->body = ex_mul(L, c->body, ex_load(L, sc, ex_add(L, ex_mul(L, ex_var(L, &c->axes[0]), ex_int(L, sh->c)),
                                                            ex_var(L, &c->axes[1]))));
            return 2;
        }
        if (t >= 0) { /* and the element at the mirrored offset */
            for (i = 0; i < 3; i++)
                idx[i] = ex_var(L, &c->axes[i]);
            c->body = ex_add(L, c->body, ex_load(L, t, ex_sub(L, ex_int(L, numel - 1),
                                                               ex_offset(L, 3, d, idx))));
        }
        return 1;
    }
}

static void random_shape(Shape *sh)
{
    sh->kind = (int)rnd(K_COUNT);
    sh->n = 1 + rnd(2);
    sh->c = 1 + rnd(6);
    sh->oc = 1 + rnd(9);
    sh->kh = 1 + rnd(3);
    sh->kw = 1 + rnd(3);
    sh->stride = 1 + rnd(2);
    sh->pad = rnd(sh->kh < sh->kw ? sh->kh : sh->kw);
    sh->h = sh->kh + rnd(9);
    sh->w = sh->kw + rnd(19);
    sh->dw = 0;
    sh->l1 = 0;
    if (sh->kind == K_MEAN) {
        /* planes from a few elements to several accumulator blocks */
        sh->h = 1 + rnd(24);
        sh->w = 1 + rnd(24);
    }
    sh->cw = (sh->kind == K_CONV || sh->kind == K_MATMUL) && rnd(2);
    if (sh->cw) {
        /* wide enough for several tiles, partial channel vectors and
         * partial last tiles of the packed template */
        sh->oc = 1 + rnd(40);
        sh->w = sh->kw + rnd(40);
        if (sh->kind == K_MATMUL) {
            sh->h = 1 + rnd(40);
            /* a reduction of whole blocks: the row-panel copy in blocks
             * of columns (tpl_packed.c mm_pack_schedule) */
            if (rnd(2))
                sh->c = 16 * (2 + rnd(3));
        }
        if (sh->kind == K_CONV && rnd(3) == 0) {
            /* depthwise */
            sh->dw = 1;
            sh->c = sh->oc = 1 + rnd(20);
            sh->h = sh->kh + rnd(30);
            /* a small L1: the padded plane is copied in bands of rows
             * (tpl_packed.c dw_band_bytes) */
            if (rnd(3) == 0)
                sh->l1 = 2048;
        } else if (sh->kind == K_CONV && rnd(2) == 0) {
            /* a pointwise conv: the template's positions-vector tiles */
            sh->kh = sh->kw = sh->stride = 1;
            sh->pad = 0;
            sh->h = 1 + rnd(9);
        }
    }
}

/* Whether a dumped line stores into a buffer the max of a load of the
 * same buffer ("bN[...] = max((bN[..."): the c target's post pass over the
 * accumulator tile, where the other epilogues store the output. */
static int post_in_place(const char *dump)
{
    const char *line = dump;
    while (line && *line) {
        const char *p = line, *eq, *nl = strchr(line, '\n');
        char pat[32];
        int n;
        while (*p == ' ')
            p++;
        if (sscanf(p, "b%d[", &n) == 1 && (eq = strstr(p, "] = max((")) != NULL && (!nl || eq < nl)) {
            snprintf(pat, sizeof pat, "] = max((b%d[", n);
            if (strncmp(eq, pat, strlen(pat)) == 0)
                return 1;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* Whether a loop of s runs a variable whose name starts with `name` (the
 * template's loops are named by what they run over). */
static int uses_var_named(const Kernel *k, const Stmt *s, const char *name)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && !strncmp(k->var_names[s->var], name, strlen(name)))
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (uses_var_named(k, s->body[i], name))
            return 1;
    return 0;
}

/* Distinct row extents of the tensorized nests in s (the loop around the
 * innermost one of each nest): 0, 1, or 2 when a partial last row tile
 * has a nest of its own. */
static int tile_rows(const Stmt *s, int64_t *seen, int n)
{
    int i;
    if (!s)
        return n;
    if (s->kind == ST_FOR && s->for_kind == FOR_TENSORIZE) {
        const Stmt *q = s;
        while (q->body[0]->kind == ST_FOR && q->body[0]->body[0]->kind == ST_FOR)
            q = q->body[0];
        for (i = 0; i < n; i++)
            if (seen[i] == q->extent)
                return n;
        if (n < 4)
            seen[n++] = q->extent;
        return n;
    }
    for (i = 0; i < s->n_body; i++)
        n = tile_rows(s->body[i], seen, n);
    return n;
}

/* Whether a tensorized nest in s accumulates into buffer buf. */
static int tile_into(const Stmt *s, int buf)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->for_kind == FOR_TENSORIZE) {
        const Stmt *q = s;
        while (q->kind == ST_FOR)
            q = q->body[0];
        return q->kind == ST_STORE && q->buf == buf;
    }
    for (i = 0; i < s->n_body; i++)
        if (tile_into(s->body[i], buf))
            return 1;
    return 0;
}

/* Whether the body of the matmul's row block loop (mb) starts with the
 * row-panel copy: a nest storing to a kernel temp, before the tiles. */
static int mb_has_pack(const Kernel *k, const Stmt *s)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && !strncmp(k->var_names[s->var], "mb", 2)) {
        const Stmt *b = s->body[0];
        while (b && (b->kind == ST_SEQ || b->kind == ST_DECL) && b->n_body)
            b = b->body[0];
        while (b && b->kind == ST_FOR)
            b = b->body[0];
        return b && b->kind == ST_STORE && b->buf != k->stages[0].out_buf;
    }
    for (i = 0; i < s->n_body; i++)
        if (mb_has_pack(k, s->body[i]))
            return 1;
    return 0;
}

/* A conv with constant weights, more input channels (often with small
 * divisors) and a small L1 (run_case), for the packed template's
 * reduction blocking (tpl_packed.c conv_blocks). */
static void blocked_shape(Shape *sh)
{
    random_shape(sh);
    sh->kind = K_CONV;
    sh->cw = 1;
    sh->dw = 0;
    sh->c = rnd(4) ? 32 + 16 * rnd(2) : 24 + rnd(30);
    sh->oc = 17 + rnd(16);
    sh->kh = rnd(4) ? 3 : 2;
    sh->kw = 3;
    sh->pad = rnd(sh->kh < sh->kw ? sh->kh : sh->kw);
    sh->n = 1;
    sh->h = sh->kh + rnd(6);
    /* wide rows, so that groups of rows (l1 bytes of partial sums) are
     * fewer than the rows and the last group may be partial */
    sh->w = sh->kw + 8 + rnd(32);
    sh->l1 = rnd(8) ? 32768 : 16384;
}

/* A conv in blocked channels (NCHW<b>c, b the lanes of vbits or, once in
 * eight, the other x86 width: then the template refuses it): channels
 * multiples of b, random windows, strides, pads, planes, flat 1x1 convs,
 * residual adds, small L1 for the reduction blocking. */
static void nchwc_shape(Shape *sh, int vbits)
{
    random_shape(sh);
    sh->kind = K_CONV;
    sh->cw = 1;
    sh->dw = 0;
    sh->b = rnd(8) ? vbits / 32 : (vbits == 512 ? 8 : 16);
    sh->blk = 1 + rnd(2);
    sh->res = rnd(2);
    sh->c = sh->blk == 2 ? sh->b * (1 + rnd(4)) : 1 + rnd(2 * sh->b);
    sh->oc = sh->b * (1 + rnd(5));
    sh->kh = 1 + rnd(3);
    sh->kw = 1 + rnd(3);
    sh->stride = 1 + rnd(2);
    sh->pad = rnd(sh->kh < sh->kw ? sh->kh : sh->kw);
    if (rnd(4) == 0) {
        sh->kh = sh->kw = sh->stride = 1;
        sh->pad = 0;
    }
    sh->n = 1 + rnd(2);
    /* at least two output rows and columns: a strided window over one
     * output position is refused (as try_conv does) */
    sh->h = sh->kh + sh->stride + rnd(8);
    sh->w = sh->kw + sh->stride + rnd(36);
    sh->l1 = rnd(4) ? 0 : 8192;
}

/* Loop variables of the current nest, for random primitive arguments. */
static int collect_vars(const Stmt *s, int *vars, int n)
{
    int i, j;
    if (!s)
        return n;
    if (s->kind == ST_FOR) {
        for (j = 0; j < n && vars[j] != s->var; j++)
            ;
        if (j == n && n < 64)
            vars[n++] = s->var;
    }
    for (i = 0; i < s->n_body; i++)
        n = collect_vars(s->body[i], vars, n);
    return n;
}

static int at_done, at_refused, cr_done, cr_refused, at_template;

/* loops_dump as a string (free it). */
static char *dump_text(const Kernel *k)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    loops_dump(k, f);
    fclose(f);
    return text;
}

/* A refused primitive leaves the IR as it was and says why. */
static int check_refusal(const Kernel *k, const char *before, int rc, const Sched *s, const char *what)
{
    char *after;
    int same;
    if (!rc)
        return 1;
    after = dump_text(k);
    same = after && before && !strcmp(after, before) && s->err[0];
    if (!same)
        printf("FAIL %s refused (%s) but changed the IR or gave no reason\n", what, s->err);
    free(after);
    return same;
}

static int refusal_failures;

/* compute_at of a random stage at a random loop, or cache_read of a random
 * buffer at a random loop into a random scope. */
static void random_at(Lower *L, Sched *s, const int *vars, int n, int cache)
{
    char *before = dump_text(L->k);
    int rc;
    if (cache) {
        rc = sched_cache_read(s, (int)rnd((unsigned)L->k->n_bufs), vars[rnd((unsigned)n)],
                              rnd(2) ? BUF_LOCAL : BUF_TEMP);
        rc ? cr_refused++ : cr_done++;
    } else {
        rc = sched_compute_at(s, (int)rnd((unsigned)L->k->n_stages), vars[rnd((unsigned)n)]);
        rc ? at_refused++ : at_done++;
    }
    if (!check_refusal(L->k, before, rc, s, cache ? "cache_read" : "compute_at"))
        refusal_failures++;
    free(before);
}

static void random_primitives(Lower *L, int steps)
{
    Sched s;
    int vars[64], n, i, j, o, in;
    sched_init(&s, L);
    for (i = 0; i < steps; i++) {
        n = collect_vars(L->k->body, vars, 0);
        if (!n)
            return;
        switch (rnd(12)) {
        case 9:
        case 10:
            random_at(L, &s, vars, n, 0);
            break;
        case 11:
            random_at(L, &s, vars, n, 1);
            break;
        case 0:
        case 1: {
            int v = vars[rnd((unsigned)n)];
            int64_t e = sched_extent(L->k->body, v);
            if (e > 0)
                sched_split(&s, v, 1 + (int64_t)rnd((unsigned)e), &o, &in);
            break;
        }
        case 2: { /* a random permutation of a random chain of up to 4 loops */
            int band[4], m = 0, v = vars[rnd((unsigned)n)];
            const Stmt *st = L->k->body;
            while (st && !(st->kind == ST_FOR && st->var == v)) {
                for (j = 0; j < st->n_body; j++)
                    if (sched_extent(st->body[j], v) >= 0)
                        break;
                st = j < st->n_body ? st->body[j] : NULL;
            }
            while (st && st->kind == ST_FOR && m < 4) {
                band[m++] = st->var;
                st = st->body[0];
            }
            for (j = m - 1; j > 0; j--) {
                int k = (int)rnd((unsigned)j + 1), t = band[j];
                band[j] = band[k];
                band[k] = t;
            }
            if (m)
                sched_reorder(&s, m, band);
            break;
        }
        case 3:
            if (rnd(2))
                sched_fuse(&s, vars[rnd((unsigned)n)], vars[rnd((unsigned)n)], &o);
            else /* refused unless the two loops are one contiguous range */
                sched_fuse_flat(&s, vars[rnd((unsigned)n)], vars[rnd((unsigned)n)], &o);
            break;
        case 4:
            if (sched_extent(L->k->body, vars[rnd((unsigned)n)]) <= 8)
                sched_unroll(&s, vars[rnd((unsigned)n)]);
            break;
        case 5:
            sched_vectorize(&s, vars[rnd((unsigned)n)]);
            break;
        case 6:
            sched_parallel(&s, vars[rnd((unsigned)n)]);
            break;
        case 7: {
            /* with a random padding of the local tile's rows */
            static const int64_t pads[] = {0, 0, 3, 4, 16};
            int t[2];
            t[0] = vars[rnd((unsigned)n)];
            t[1] = vars[rnd((unsigned)n)];
            s.pad_inner = pads[rnd(5)];
            sched_cache_write(&s, 1 + (int)rnd(2), t);
            s.pad_inner = 0;
            break;
        }
        default: {
            /* partition, then a primitive scoped to one of its pieces */
            int pieces[3], np = 0;
            if (!sched_partition_pieces(&s, vars[rnd((unsigned)n)], (int)rnd(6), pieces, &np) && np &&
                rnd(2)) {
                int p = pieces[rnd((unsigned)np)], t[2];
                s.scope = sched_find_loop(&L->k->body, p);
                t[0] = p;
                t[1] = vars[rnd((unsigned)n)];
                if (rnd(2))
                    sched_split(&s, p, 1 + (int64_t)rnd(5), &o, &in);
                else
                    sched_cache_write(&s, 1 + (int)rnd(2), t);
                s.scope = NULL;
            }
            sched_simplify(&s);
            break;
        }
        }
    }
}

/* compute_at of every earlier stage, last first, at one random loop of
 * the last nest, then a few random primitives on top. */
static void at_chain(Lower *L)
{
    Sched s;
    int vars[64], n, i;
    const Stmt *last = L->k->body->body[L->k->body->n_body - 1];
    n = collect_vars(last, vars, 0);
    sched_init(&s, L);
    if (n) {
        int v = vars[rnd((unsigned)n)];
        for (i = L->k->n_stages - 2; i >= 0; i--) {
            char *before = dump_text(L->k);
            int rc = sched_compute_at(&s, i, v);
            rc ? at_refused++ : at_done++;
            if (!check_refusal(L->k, before, rc, &s, "compute_at"))
                refusal_failures++;
            free(before);
        }
    }
    random_primitives(L, (int)rnd(6));
}

static int run_case(const Shape *sh, int mode, int vbits, int seed)
{
    Arena arena;
    Lower L[3];
    Kernel k[3];
    KnobEntry ent;
    KnobTable tab;
    int forced = 0;
    Target t;
    void **bufs[2];
    Graph *g;
    int n_in = 0, i, j, ok = 1;
    arena_init(&arena, (size_t)1 << 28);
    g = graph_new(&arena, "sched_test");
    memset(k, 0, sizeof k);
    memset(&t, 0, sizeof t);
    t.name = "test";
    t.isa = vbits < 0 ? "c" : "x86-64";
    t.family = target_family(t.isa);
    t.vector_bits = vbits < 0 ? 0 : vbits;
    /* the knobs of targets/c.json, x86-64-avx2.json and -avx512.json,
     * else the defaults (targets/x86-64.json) */
    target_default_knobs(&t);
    if (vbits < 0) {
        t.knobs.lanes = 8;
        t.knobs.rows = 4;
        t.knobs.unroll_vec = 0;
    } else if (vbits >= 256) {
        t.knobs.lanes = vbits / 32;
        t.knobs.rows = vbits >= 512 ? 8 : 6;
        t.knobs.unroll_vec = 0;
        t.knobs.pad = vbits / 32;
        t.knobs.part_vec = vbits < 512;
    }
    t.fma_tile = vbits >= 256; /* as targets/x86-64-avx2.json and -avx512.json declare */
    t.l1_bytes = sh->l1;
    for (i = 0; i < 2; i++) {
        L[i].g = g;
        L[i].d = NULL;
        L[i].arena = &arena;
        L[i].k = &k[i];
        n_in = build(&L[i], sh);
        if (sh->kind == K_CONV) {
            /* as op_nn.c counts them (the packed template's threshold
             * for a parallel region) */
            int64_t oh = out_extent(sh->h, sh->kh, sh->stride, sh->pad);
            int64_t ow = out_extent(sh->w, sh->kw, sh->stride, sh->pad);
            k[i].macs = sh->n * sh->oc * oh * ow * sh->kh * sh->kw * (sh->dw ? 1 : sh->c);
        }
        if (i == 1 && mode == 2 && k[i].n_stages > 1) {
            Sched s;
            sched_init(&s, &L[i]);
            if (sched_compute_inline(&s, 0))
                ok = 0;
        }
        schedule_naive(&L[i]);
        for (j = 0; j < k[i].n_stages; j++)
            k[i].bufs[k[i].stages[j].out_buf].written = 1;
    }
    if (mode == 0) {
        char *dump = NULL;
        size_t dlen = 0;
        FILE *df;
        if (rnd(2)) {
            L[2] = L[1];
            L[2].k = &k[2];
            build(&L[2], sh);
            schedule_naive(&L[2]);
            template_apply(&L[2], &t);
            if (k[2].knobs) {
                static TileKnobs all[4096];
                int n = knobs_enumerate(&k[2].knobs->space, all, 4096), nb = 0, e;
                /* prefer_blocked: a blocked reduction (kc < K) when legal */
                for (e = 0; e < n && prefer_blocked; e++)
                    if (all[e].kc > 0 && all[e].kc < k[2].knobs->space.K)
                        all[nb++] = all[e];
                if (nb > 0)
                    n = nb;
                if (n > 0) {
                    ent.key = k[2].knobs->key;
                    ent.knobs = all[rnd((unsigned)n)];
                    tab.source = NULL;
                    tab.n = 1;
                    tab.entries = &ent;
                    g->settings.knobs = &tab;
                    forced = 1;
                }
            }
        }
        template_apply(&L[1], &t);
        g->settings.knobs = NULL;
        /* the flat depthwise tile stores output rows from a loop "oh"; the
         * plane sum runs its accumulator blocks in a loop "qo" */
        last_flat_dw = last_plane_sum = last_dw_band = last_dw_group = last_parallel = last_prefetch = 0;
        last_merged = 0;
        last_post_pass = last_positions = 0;
        if ((sh->dw || sh->res || sh->kind == K_MEAN || sh->kind == K_ELEM || sh->kind == K_CONV) &&
            (df = open_memstream(&dump, &dlen)) != NULL) {
            loops_dump(&k[1], df);
            fclose(df);
            last_flat_dw = sh->kind == K_CONV && strstr(dump, "for oh") != NULL;
            {
                /* a loop "for gN in 0..G" with G > 1 */
                const char *gl = dump;
                while ((gl = strstr(gl, "for g")) != NULL) {
                    const char *r = strstr(gl, " in 0..");
                    if (r && atoi(r + 7) > 1)
                        last_dw_group = sh->kind == K_CONV;
                    gl += 5;
                }
            }
            last_parallel = strstr(dump, "parallel for") != NULL;
            last_prefetch = strstr(dump, " prefetch +") != NULL;
            /* a band: the copy's row loop "ih" inside the tile-row loop "ot" */
            last_dw_band = sh->kind == K_CONV && strstr(dump, "for ot") && strstr(dump, "for ih") &&
                           strstr(dump, "for ot") < strstr(dump, "for ih");
            last_plane_sum = sh->kind == K_MEAN && strstr(dump, "for qo") != NULL;
            /* sched_fuse_flat names the merged loop outer_inner_f */
            last_merged = sh->kind == K_ELEM && strstr(dump, "_f") != NULL;
            /* the c target's two-pass epilogue: the residual is read into
             * the tile ("acc..] = max((acc...") before the copy-out */
            last_post_pass = sh->res && post_in_place(dump);
            /* conv_positions names its loop over position tiles qt */
            last_positions = sh->res && strstr(dump, "for qt") != NULL;
            if (getenv("SCHED_TEST_DUMP"))
                fputs(dump, stdout);
            free(dump);
        }
        if (forced) {
            const TileKnobs *u = k[1].knobs ? &k[1].knobs->used : NULL;
            knob_cases++;
            if (!u || u->P != ent.knobs.P || u->V != ent.knobs.V || u->G != ent.knobs.G || u->kc != ent.knobs.kc) {
                printf("knobs P=%d V=%d G=%lld kc=%lld of %s not applied\n", ent.knobs.P, ent.knobs.V,
                       (long long)ent.knobs.G, (long long)ent.knobs.kc, ent.key);
                ok = 0;
            }
        }
        for (j = 0; j < k[1].n_bufs; j++)
            if (k[1].bufs[j].scope == BUF_UNUSED) {
                at_template++; /* compute_at_rows moved a stage */
                break;
            }
        last_packed = 0;
        for (j = 0; j < k[1].n_bufs; j++)
            if (k[1].bufs[j].scope == BUF_CONST && k[1].bufs[j].value >= 0 &&
                strcmp(g->values[k[1].bufs[j].value].name, "w") != 0) {
                packed_cases++;
                last_packed = 1;
                break;
            }
        if (uses_var_named(&k[1], k[1].body, "rcb"))
            blocked_cases++;
        last_mm_direct = last_mm_partial = last_mm_block_pack = last_mm_blocked = 0;
        if (sh->kind == K_MATMUL) {
            int64_t seen[4];
            int nrows = tile_rows(k[1].body, seen, 0);
            last_mm_direct = tile_into(k[1].body, k[1].stages[0].out_buf);
            last_mm_partial = nrows == 2;
            last_mm_block_pack = mb_has_pack(&k[1], k[1].body);
            last_mm_blocked = uses_var_named(&k[1], k[1].body, "kb");
        }
        last_dw_tile = sh->dw && uses_var_named(&k[1], k[1].body, "qt");
    }
    else if (mode == 3)
        at_chain(&L[1]);
    else
        random_primitives(&L[1], 2 + (int)rnd(10));
    for (i = 0; i < 2; i++) {
        bufs[i] = calloc((size_t)k[i].n_bufs, sizeof *bufs[i]);
        for (j = 0; j < k[i].n_bufs; j++) {
            Buffer *b = &k[i].bufs[j];
            if (b->scope == BUF_LOCAL)
                continue;
            bufs[i][j] = calloc((size_t)b->numel + 1, sizeof(float));
        }
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
    /* constants (and the template's repacked copies) hold the graph's data */
    for (i = 0; i < 2; i++)
        for (j = 0; j < k[i].n_bufs; j++) {
            const Buffer *b = &k[i].bufs[j];
            if (b->scope == BUF_CONST && b->value >= 0 && g->values[b->value].data)
                memcpy(bufs[i][j], g->values[b->value].data, (size_t)b->numel * sizeof(float));
        }
    if (lower_eval(&k[0], bufs[0]) || lower_eval(&k[1], bufs[1]))
        ok = 0;
    for (j = n_in; j < k[0].n_bufs && ok; j++) {
        int64_t e;
        const Buffer *b = &k[0].bufs[j];
        if (b->scope == BUF_LOCAL || !strcmp(b->name, "t") || b->value != -1)
            continue;
        if (j != k[0].stages[k[0].n_stages - 1].out_buf)
            continue;
        for (e = 0; e < b->numel; e++) {
            float x = ((float *)bufs[0][j])[e], y = ((float *)bufs[1][j])[e];
            if (!(fabsf(x - y) <= 1e-4f * (fabsf(x) > 1 ? fabsf(x) : 1))) {
                ok = 0;
                break;
            }
        }
    }
    if (!ok) {
        printf("FAIL %s%s%s n%lld c%lld h%lld w%lld oc%lld k%lldx%lld s%lld p%lld l1 %lld mode %d vbits %d seed %d\n",
               kind_names[sh->kind], sh->cw ? " (constant weights)" : "", sh->dw ? " depthwise" : "", (long long)sh->n, (long long)sh->c, (long long)sh->h,
               (long long)sh->w, (long long)sh->oc, (long long)sh->kh, (long long)sh->kw,
               (long long)sh->stride, (long long)sh->pad, (long long)sh->l1, mode, vbits, seed);
        if (forced)
            printf("  with knobs P=%d V=%d G=%lld kc=%lld\n", ent.knobs.P, ent.knobs.V, (long long)ent.knobs.G,
                   (long long)ent.knobs.kc);
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

/* Fixed kernels scheduled with each primitive: the dumped loops must be
 * exactly these, results those of the naive schedule, and illegal
 * requests refused with the IR unchanged. Returns the failures. */
static int directed_case(int kind, int prim, const char *expect)
{
    Arena arena;
    Lower L;
    Kernel k;
    Sched s;
    Shape sh;
    Graph *g;
    char *text;
    int rc = 0, bad = 0;
    memset(&sh, 0, sizeof sh);
    sh.kind = kind;
    sh.n = 1;
    sh.h = 2;
    sh.c = 3;
    sh.w = 2;
    sh.kh = sh.kw = sh.stride = 1;
    arena_init(&arena, (size_t)1 << 24);
    g = graph_new(&arena, "directed");
    memset(&k, 0, sizeof k);
    k.name = "directed";
    k.origin = kind_names[kind];
    L.g = g;
    L.d = NULL;
    L.arena = &arena;
    L.k = &k;
    build(&L, &sh);
    schedule_naive(&L);
    sched_init(&s, &L);
    switch (prim) {
    case 0: /* softmax: both reductions at the row loop of the last stage */
        rc = sched_compute_at(&s, 1, k.stages[2].axes[0].var) ||
             sched_compute_at(&s, 0, k.stages[2].axes[0].var);
        break;
    case 1: /* matmul: the row of a that one output row reads */
        rc = sched_cache_read(&s, 0, k.stages[0].axes[0].var, BUF_LOCAL);
        break;
    case 2: /* the max is still read by the rowsum nest, outside the loop */
        rc = !sched_compute_at(&s, 0, k.stages[2].axes[0].var);
        break;
    case 3: /* the mirrored read starts elsewhere in every iteration */
        rc = !sched_compute_at(&s, 0, k.stages[1].axes[0].var);
        break;
    case 4: { /* a reduction nest that no longer holds whole points */
        char *before;
        if (sched_split(&s, k.stages[0].axes[0].var, 2, NULL, NULL)) {
            rc = 1;
            break;
        }
        before = dump_text(&k);
        rc = !sched_compute_at(&s, 0, k.stages[1].axes[0].var) || !check_refusal(&k, before, 1, &s, "compute_at");
        free(before);
        break;
    }
    }
    text = dump_text(&k);
    if (rc || (expect && strcmp(text, expect) != 0) || (!expect && !strstr(s.err, "compute_at"))) {
        printf("FAIL directed case %d (%s): got\n%s", prim, s.err, text);
        bad = 1;
    }
    free(text);
    arena_free(&arena);
    return bad;
}

static int directed_tests(void)
{
    /* the max and the sum shrink to one row (2 elements) in local arrays
     * (the output b1 is allocated before them) */
    static const char *const softmax_at =
        "kernel directed  // softmax\n"
        "  buffer b0: float32[12] temp\n"
        "  buffer b1: float32[12] temp\n"
        "  for i6 in 0..2:\n"
        "    local float32 b7[2]\n"
        "    for i1 in 0..2:\n"
        "      local float32 b4[1]\n"
        "      b4[0] = -inff\n"
        "      for r2 in 0..3:\n"
        "        b4[0] = max(b4[0], b0[((((i6 * 3) + r2) * 2) + i1)])\n"
        "      b7[i1] = b4[0]\n"
        "    local float32 b6[2]\n"
        "    for i4 in 0..2:\n"
        "      local float32 b5[1]\n"
        "      b5[0] = 0f\n"
        "      for r5 in 0..3:\n"
        "        b5[0] = (b5[0] + exp((b0[((((i6 * 3) + r5) * 2) + i4)] - b7[i4])))\n"
        "      b6[i4] = b5[0]\n"
        "    for i7 in 0..3:\n"
        "      for i8 in 0..2:\n"
        "        b1[((((i6 * 3) + i7) * 2) + i8)] = (exp((b0[((((i6 * 3) + i7) * 2) + i8)] - b7[i8])) / b6[i8])\n";
    /* one row of a copied before the row's dot products */
    static const char *const matmul_cache =
        "kernel directed  // matmul\n"
        "  buffer b0: float32[6] temp\n"
        "  buffer b1: float32[6] temp\n"
        "  buffer b2: float32[4] temp\n"
        "  for i0 in 0..2:\n"
        "    local float32 b4[3]\n"
        "    for b0_c3 in 0..3:\n"
        "      b4[b0_c3] = b0[((i0 * 3) + b0_c3)]\n"
        "    for i1 in 0..2:\n"
        "      local float32 b3[1]\n"
        "      b3[0] = 0f\n"
        "      for r2 in 0..3:\n"
        "        b3[0] = (b3[0] + (b4[r2] * b1[((r2 * 2) + i1)]))\n"
        "      b2[((i0 * 2) + i1)] = b3[0]\n";
    int bad = 0;
    bad += directed_case(K_SOFT, 0, softmax_at);
    bad += directed_case(K_MATMUL, 1, matmul_cache);
    bad += directed_case(K_SOFT, 2, NULL);
    bad += directed_case(K_TWO, 3, NULL);
    bad += directed_case(K_SOFT, 4, NULL);
    return bad;
}

int main(int argc, char **argv)
{
    static const int vbits[] = {-1, 0, 32, 128, 256, 512};
    int iters = argc > 1 ? atoi(argv[1]) : 300, i, vb;
    for (i = 0; i < iters; i++) {
        Shape sh;
        int mode;
        random_shape(&sh);
        mode = sh.kind == K_TWO ? (int)rnd(4) : (int)rnd(2);
        if (sh.kind == K_SOFT && rnd(2))
            mode = 3;
        vb = vbits[rnd(6)];
        if (sh.cw && rnd(4)) {
            /* mostly the x86 targets' packed template */
            mode = 0;
            vb = rnd(2) ? 256 : 512;
        }
        if (run_case(&sh, mode, vb, i))
            passed++;
        else
            failed++;
    }
    /* depthwise convs on planes narrower than a vector, stride 1: the flat
     * tile (vectors along the flattened padded plane; conv_depthwise_flat)
     * on AVX-512, and the row tiles on AVX2 where it does not pay */
    {
        static const int64_t fl[][7] = {
            /* c, h, w, k, pad, flat tile wanted with AVX2, with AVX-512 (fewer
             * vectors than rows x vectors per row, and at most 3/8 of the
             * registers) */
            {5, 7, 7, 3, 1, 0, 1}, {3, 7, 7, 5, 2, 0, 1}, {4, 9, 5, 3, 0, 1, 1}, {2, 14, 6, 3, 1, 0, 1},
            {3, 4, 11, 1, 0, 0, 1}, {2, 7, 7, 2, 1, 0, 1}, {3, 30, 9, 3, 1, 0, 0},
        };
        for (i = 0; i < (int)(sizeof fl / sizeof fl[0]); i++) {
            Shape sh;
            int want;
            for (vb = 256; vb <= 512; vb += 256) {
                memset(&sh, 0, sizeof sh);
                sh.kind = K_CONV;
                sh.n = 1;
                sh.c = sh.oc = fl[i][0];
                sh.h = fl[i][1];
                sh.w = fl[i][2];
                sh.kh = sh.kw = fl[i][3];
                sh.pad = fl[i][4];
                sh.stride = 1;
                sh.dw = sh.cw = 1;
                want = (int)fl[i][vb == 512 ? 6 : 5];
                /* the flat tile takes its channels in groups of 4 or 2
                 * when they divide the channels */
                if (run_case(&sh, 0, vb, 1000 + i) && last_flat_dw == want &&
                    (!want || last_dw_group == (sh.c % 2 == 0))) {
                    passed++;
                } else {
                    printf("FAIL depthwise c%lld h%lld w%lld k%lld p%lld vbits %d: flat tile %d, want %d; "
                           "channel groups %d\n",
                           (long long)sh.c, (long long)sh.h, (long long)sh.w, (long long)sh.kh,
                           (long long)sh.pad, vb, last_flat_dw, want, last_dw_group);
                    failed++;
                }
            }
        }
    }
    /* depthwise convs whose padded plane is larger than a quarter of L1:
     * the input copied a band of rows before each row of tiles (rows
     * aligned to vectors when that costs at most a quarter more columns);
     * strides 1 and 2 (column phases), 5x5, wide padding, partial last bands */
    {
        static const int64_t bd[][7] = {
            /* c, h, w, k, pad, stride, L1 bytes; all want bands */
            {3, 60, 60, 3, 1, 1, 32768}, {2, 61, 57, 3, 1, 2, 32768}, {2, 40, 45, 5, 2, 1, 16384},
            {3, 37, 50, 5, 2, 2, 16384}, {2, 33, 70, 3, 2, 1, 16384}, {1, 112, 112, 3, 1, 1, 49152},
            {2, 112, 112, 3, 1, 2, 49152}, {2, 29, 29, 3, 0, 2, 4096},
        };
        for (i = 0; i < (int)(sizeof bd / sizeof bd[0]); i++) {
            Shape sh;
            for (vb = 256; vb <= 512; vb += 256) {
                memset(&sh, 0, sizeof sh);
                sh.kind = K_CONV;
                sh.n = 1 + (i % 2);
                sh.c = sh.oc = bd[i][0];
                sh.h = bd[i][1];
                sh.w = bd[i][2];
                sh.kh = sh.kw = bd[i][3];
                sh.pad = bd[i][4];
                sh.stride = bd[i][5];
                sh.l1 = bd[i][6];
                sh.dw = sh.cw = 1;
                if (run_case(&sh, 0, vb, 1500 + i) && last_dw_band) {
                    passed++;
                } else {
                    printf("FAIL depthwise c%lld h%lld w%lld k%lld s%lld vbits %d: band copy %d, want 1\n",
                           (long long)sh.c, (long long)sh.h, (long long)sh.w, (long long)sh.kh,
                           (long long)sh.stride, vb, last_dw_band);
                    failed++;
                }
            }
        }
    }
    /* depthwise kernels run their channels in parallel from 2^17 MACs
     * (tpl_packed.c DW_PARALLEL_MIN_MACS), 16 times fewer than others */
    {
        static const int64_t pd[][5] = {
            /* c, h, w, k, parallel wanted: 300*49*9 and 12*28*28*9 MACs >= 2^17 */
            {300, 7, 7, 3, 1}, {200, 7, 7, 3, 0}, {12, 56, 56, 3, 1}, {2, 20, 20, 3, 0},
        };
        for (i = 0; i < (int)(sizeof pd / sizeof pd[0]); i++) {
            Shape sh;
            memset(&sh, 0, sizeof sh);
            sh.kind = K_CONV;
            sh.n = 1;
            sh.c = sh.oc = pd[i][0];
            sh.h = pd[i][1];
            sh.w = pd[i][2];
            sh.kh = sh.kw = pd[i][3];
            sh.pad = 1;
            sh.stride = 1;
            sh.dw = sh.cw = 1;
            if (run_case(&sh, 0, 512, 1700 + i) && last_parallel == (int)pd[i][4]) {
                passed++;
            } else {
                printf("FAIL depthwise c%lld h%lld w%lld: parallel %d, want %d\n", (long long)sh.c,
                       (long long)sh.h, (long long)sh.w, last_parallel, (int)pd[i][4]);
                failed++;
            }
        }
    }
    /* pointwise convs over planes larger than L1: the positions tile
     * prefetches the input row two tiles ahead (tpl_conv.c
     * conv_positions); not for planes that stay in L1 (planes of at least
     * 8 vectors: smaller ones take the channel tile, which prefetches its
     * weights) */
    {
        static const int64_t pp[][4] = {
            /* c, oc, h (= w), prefetch wanted */
            {64, 24, 20, 1}, {40, 33, 23, 1}, {4, 8, 13, 0}, {8, 16, 12, 0},
        };
        for (i = 0; i < (int)(sizeof pp / sizeof pp[0]); i++) {
            Shape sh;
            for (vb = 256; vb <= 512; vb += 256) {
                memset(&sh, 0, sizeof sh);
                sh.kind = K_CONV;
                sh.n = 1;
                sh.c = pp[i][0];
                sh.oc = pp[i][1];
                sh.h = sh.w = pp[i][2];
                sh.kh = sh.kw = sh.stride = 1;
                sh.cw = 1;
                if (run_case(&sh, 0, vb, 1800 + i) && last_prefetch == (int)pp[i][3]) {
                    passed++;
                } else {
                    printf("FAIL pointwise c%lld oc%lld h%lld vbits %d: prefetch %d, want %d\n", (long long)sh.c,
                           (long long)sh.oc, (long long)sh.h, vb, last_prefetch, (int)pp[i][3]);
                    failed++;
                }
            }
        }
    }
    /* sums over the plane (a global average pool with a bias): vectors
     * along the flattened plane with AVX-512 when it holds at least the
     * 4 accumulators (64 elements); whole blocks, a rest of whole vectors
     * and a masked one */
    {
        static const int64_t pm[][5] = {
            /* c, h, w, plane sum wanted, parallel wanted (2*c*h*w >= 64K) */
            {3, 8, 8, 1, 0}, {5, 14, 14, 1, 0}, {2, 7, 7, 0, 0}, {4, 1, 200, 1, 0}, {2, 9, 13, 1, 0},
            {1, 56, 56, 1, 0}, {9, 61, 60, 1, 1},
        };
        for (i = 0; i < (int)(sizeof pm / sizeof pm[0]); i++) {
            Shape sh;
            memset(&sh, 0, sizeof sh);
            sh.kind = K_MEAN;
            sh.stride = sh.kh = sh.kw = 1;
            sh.n = 2;
            sh.c = pm[i][0];
            sh.h = pm[i][1];
            sh.w = pm[i][2];
            if (run_case(&sh, 0, 512, 2000 + i) && last_plane_sum == (int)pm[i][3] &&
                (!pm[i][3] || last_parallel == (int)pm[i][4])) {
                passed++;
            } else {
                printf("FAIL mean c%lld h%lld w%lld: plane sum %d, want %d; parallel %d, want %d\n",
                       (long long)sh.c, (long long)sh.h, (long long)sh.w, last_plane_sum, (int)pm[i][3],
                       last_parallel, (int)pm[i][4]);
                failed++;
            }
        }
    }
    /* elementwise on AVX-512: the (c, w) loops merge into one contiguous
     * range, but not under a per-channel scale (its index uses c alone) */
    {
        static const int64_t em[][4] = {
            /* c, w, per-channel scale, merged wanted */
            {5, 7, 0, 1}, {3, 49, 0, 1}, {5, 7, 1, 0}, {4, 196, 1, 0},
        };
        for (i = 0; i < (int)(sizeof em / sizeof em[0]); i++) {
            Shape sh;
            memset(&sh, 0, sizeof sh);
            sh.kind = K_ELEM;
            sh.stride = sh.kh = sh.kw = sh.h = 1;
            sh.n = 2;
            sh.c = em[i][0];
            sh.w = em[i][1];
            sh.dw = (int)em[i][2];
            if (run_case(&sh, 0, 512, 3000 + i) && last_merged == (int)em[i][3]) {
                passed++;
            } else {
                printf("FAIL elemwise c%lld w%lld scale %d: merged %d, want %d\n", (long long)sh.c,
                       (long long)sh.w, sh.dw, last_merged, (int)em[i][3]);
                failed++;
            }
        }
    }
    /* the portable `c` target's packed convs with a residual in the post:
     * the post runs in place over the tile (clamped positions and
     * channels in the last tiles), then the epilogue copies; pointwise
     * (positions tiles with one VL-wide epilogue loop), depthwise (the
     * same, and one-loop phase copies), strided, padded, partial channel
     * blocks and row tiles */
    {
        int twopass = 0, positions = 0, dwc = 0, n = iters / 5 > 8 ? iters / 5 : 8;
        for (i = 0; i < n; i++) {
            Shape sh;
            do
                random_shape(&sh);
            while (sh.kind != K_CONV || !sh.cw);
            sh.res = 1;
            if (i % 4 == 0)
                blocked_shape(&sh), sh.res = 1;
            if (run_case(&sh, 0, -1, 4000 + i))
                passed++;
            else
                failed++;
            twopass += last_packed && last_post_pass;
            positions += last_packed && last_positions;
            dwc += last_dw_tile;
        }
        printf("%d of %d c-target convs with a residual took the in-place post pass, %d the positions tile, "
               "%d were depthwise\n", twopass, n, positions, dwc);
        if (twopass < n / 5 || positions < 1 || dwc < 1) {
            printf("FAIL too few c-target convs took the in-place post pass or the positions tile\n");
            failed++;
        }
    }
    for (i = 0; i < iters / 25; i++) {
        Shape sh;
        blocked_shape(&sh);
        if (run_case(&sh, 0, rnd(2) ? 256 : 512, iters + i))
            passed++;
        else
            failed++;
    }
    /* convs in blocked channels: the blocked template (tpl_packed.c
     * try_conv_nchwc) against the naive schedule; every case whose block
     * is the target's lanes must take the template */
    {
        int took = 0, cases = 0, nb = iters / 3, red0 = blocked_cases;
        for (i = 0; i < nb; i++) {
            Shape sh;
            int vb2 = rnd(2) ? 256 : 512, ok;
            nchwc_shape(&sh, vb2);
            ok = run_case(&sh, 0, vb2, 4000 + i);
            if (ok && sh.b == vb2 / 32) {
                cases++;
                took += last_packed;
                if (!last_packed) {
                    printf("FAIL blocked conv c%lld oc%lld k%lldx%lld s%lld p%lld blk %d b %lld vbits %d: "
                           "not through the template\n", (long long)sh.c, (long long)sh.oc, (long long)sh.kh,
                           (long long)sh.kw, (long long)sh.stride, (long long)sh.pad, sh.blk, (long long)sh.b, vb2);
                    ok = 0;
                }
            }
            if (ok)
                passed++;
            else
                failed++;
        }
        printf("%d of %d blocked-channel convs went through the blocked template, %d with a blocked reduction\n",
               took, cases, blocked_cases - red0);
        if (nb >= 30 && cases == 0) {
            printf("FAIL no blocked-channel conv case\n");
            failed++;
        }
    }
    /* matmuls with constant B on the x86 targets: columns of whole
     * vectors (tiles accumulating in the output, a partial last row tile
     * of its own), or not (the local accumulator array), reductions long
     * enough to be blocked by random knobs, a bias and a Relu (init and
     * post, applied in place), the row panels copied per row block */
    {
        int direct = 0, partial = 0, block_pack = 0, blocked_direct = 0, post_direct = 0, i_ok;
        for (i = 0; i < iters / 6; i++) {
            Shape sh;
            memset(&sh, 0, sizeof sh);
            sh.kind = K_MATMUL;
            sh.cw = 1;
            sh.n = sh.kh = sh.kw = sh.stride = 1;
            sh.h = 1 + rnd(60);
            sh.c = rnd(2) ? 1 + rnd(40) : 32 * (1 + rnd(4));
            sh.w = rnd(4) ? 16 * (1 + rnd(4)) : 1 + rnd(64);
            sh.bias = (int)rnd(2);
            prefer_blocked = (int)rnd(2);
            if (prefer_blocked)
                sh.c = 128 * (1 + rnd(2));
            i_ok = run_case(&sh, 0, rnd(2) ? 256 : 512, 4000 + i);
            prefer_blocked = 0;
            if (i_ok) {
                passed++;
            } else {
                printf("FAIL matmul m%lld k%lld n%lld bias %d\n", (long long)sh.h, (long long)sh.c,
                       (long long)sh.w, sh.bias);
                failed++;
            }
            direct += last_mm_direct;
            partial += last_mm_direct && last_mm_partial;
            block_pack += last_mm_block_pack;
            blocked_direct += last_mm_direct && last_mm_blocked;
            post_direct += last_mm_direct && sh.bias;
        }
        printf("matmul: %d accumulated in the output (%d with a partial row tile, %d blocked, %d with "
               "bias and Relu), %d copied row panels per row block\n",
               direct, partial, blocked_direct, post_direct, block_pack);
        if (iters >= 300 && (!direct || !partial || !blocked_direct || !post_direct || !block_pack)) {
            printf("FAIL a matmul form was not reached\n");
            failed++;
        }
    }
    printf("compute_at: %d done, %d refused; cache_read: %d done, %d refused\n", at_done, at_refused,
           cr_done, cr_refused);
    if (iters >= 100 && (!at_done || !at_refused || !cr_done || !cr_refused)) {
        printf("FAIL compute_at or cache_read was never both applied and refused\n");
        failed++;
    }
    printf("%d template cases computed a stage inside the last one\n", at_template);
    if (iters >= 300 && !at_template) {
        printf("FAIL no template case used compute_at\n");
        failed++;
    }
    if (refusal_failures) {
        printf("FAIL %d refusals changed the IR\n", refusal_failures);
        failed++;
    }
    failed += directed_tests();
    printf("%d cases went through the packed template, %d with random legal knobs, %d with a blocked reduction\n",
           packed_cases, knob_cases, blocked_cases);
    if (iters >= 300 && blocked_cases == 0) {
        printf("FAIL no case reached the blocked reduction\n");
        failed++;
    }
    if (iters >= 100 && knob_cases == 0) {
        printf("FAIL no case took random knobs\n");
        failed++;
    }
    if (iters >= 100 && packed_cases == 0) {
        printf("FAIL no case reached the packed template\n");
        failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
