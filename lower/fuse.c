/*
 * Inlining the internal buffers of a fused group.
 *
 * All members of a group were lowered into one kernel, so a value passed
 * from one member to the next is a buffer written by a producer stage and
 * read by later stages. Two rewrites remove such a buffer B:
 *
 * 1. compute_inline: the producer P is injective (no reduction, default
 *    row-major store). Every load B[idx0..idxn] in a consumer becomes P's
 *    body with P's axes replaced by idx0..idxn. This fuses injective chains
 *    and injective ops at the input of a reduction (the paper's rules 2, 3).
 * 2. epilogue: the producer P is a reduction and its only consumer C is an
 *    injective stage over the same shape that reads B exactly at its own
 *    axes. C's body, with its axes renamed to P's and the load of B replaced
 *    by P's result, becomes P's `post`, and P writes C's output. This fuses
 *    bias, activation and residual adds into a convolution or matmul (rule 1).
 *
 * A buffer neither rewrite can remove stays a buffer: the kernel is still
 * correct, only less fused. Both rewrites are exact except that an inlined
 * value skips its storage rounding, so they are applied only to buffers
 * whose storage type is their compute type (float32, float64, int32, int64...).
 */
#include "fuse.h"

#include <string.h>

typedef struct VarMap {
    int n;
    int from[2 * TVMCC_MAX_RANK];
    Expr *to[2 * TVMCC_MAX_RANK];
} VarMap;

static void *alloc(Lower *L, size_t n)
{
    void *p = arena_alloc(L->arena, n);
    if (!p)
        die("compile arena exhausted");
    return p;
}

/* What to put in place of a load of `buf` (NULL: keep the load). */
typedef Expr *(*LoadFn)(Lower *L, const Expr *load, void *ctx);

/* Deep copy of e with variables mapped through m and loads of `buf`
 * replaced through fn. */
static Expr *rewrite(Lower *L, const Expr *e, const VarMap *m, int buf, LoadFn fn, void *ctx)
{
    Expr *c;
    int i;
    if (!e)
        return NULL;
    if (e->kind == EX_VAR && m) {
        for (i = 0; i < m->n; i++)
            if (m->from[i] == e->var)
                return m->to[i];
    }
    if (e->kind == EX_LOAD && e->buf == buf && fn) {
        Expr *r = fn(L, e, ctx);
        if (r)
            return r;
    }
    c = alloc(L, sizeof *c);
    *c = *e;
    c->a = rewrite(L, e->a, m, buf, fn, ctx);
    c->b = rewrite(L, e->b, m, buf, fn, ctx);
    c->c = rewrite(L, e->c, m, buf, fn, ctx);
    if (e->nidx) {
        c->idx = alloc(L, (size_t)e->nidx * sizeof *c->idx);
        for (i = 0; i < e->nidx; i++)
            c->idx[i] = rewrite(L, e->idx[i], m, buf, fn, ctx);
    }
    return c;
}

static int count_loads(const Expr *e, int buf)
{
    int i, n = 0;
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && e->buf == buf)
        n++;
    n += count_loads(e->a, buf) + count_loads(e->b, buf) + count_loads(e->c, buf);
    for (i = 0; i < e->nidx; i++)
        n += count_loads(e->idx[i], buf);
    return n;
}

static int stage_loads(const Compute *c, int buf)
{
    return count_loads(c->body, buf) + count_loads(c->init, buf) + count_loads(c->post, buf) +
           count_loads(c->out_index, buf);
}

/* ---- rewrite 1: compute_inline ---- */

typedef struct InlineCtx {
    const Compute *p;
    int ok;          /* cleared when a load cannot be matched */
} InlineCtx;

/* Whether load `ld` can be expressed in P's axes; fills the map. */
static int match_load(const Compute *p, const Expr *ld, VarMap *m)
{
    int k;
    m->n = 0;
    if (ld->nidx == p->n_axes && ld->nidx > 0) {
        for (k = 0; k < p->n_axes; k++)
            if (ld->dims[k] != p->axes[k].extent)
                return 0;
        for (k = 0; k < p->n_axes; k++) {
            m->from[m->n] = p->axes[k].var;
            m->to[m->n++] = ld->idx[k];
        }
        return 1;
    }
    if (p->n_axes == 1) {
        m->from[0] = p->axes[0].var;
        m->to[0] = ld->a;
        m->n = 1;
        return 1;
    }
    return p->n_axes == 0;
}

static Expr *inline_load(Lower *L, const Expr *ld, void *vctx)
{
    InlineCtx *ctx = vctx;
    VarMap m;
    if (!match_load(ctx->p, ld, &m)) {
        ctx->ok = 0;
        return NULL;
    }
    return ex_cast(L, ld->dtype, rewrite(L, ctx->p->body, &m, -1, NULL, NULL));
}

static int loads_matchable(const Compute *p, const Expr *e, int buf)
{
    VarMap m;
    int i;
    if (!e)
        return 1;
    if (e->kind == EX_LOAD && e->buf == buf && !match_load(p, e, &m))
        return 0;
    if (!loads_matchable(p, e->a, buf) || !loads_matchable(p, e->b, buf) ||
        !loads_matchable(p, e->c, buf))
        return 0;
    for (i = 0; i < e->nidx; i++)
        if (!loads_matchable(p, e->idx[i], buf))
            return 0;
    return 1;
}

static int try_inline(Lower *L, int pi, int buf)
{
    Kernel *k = L->k;
    Compute *p = &k->stages[pi];
    InlineCtx ctx;
    int s;
    if (p->rop != RED_NONE || p->out_index)
        return 0;
    for (s = pi + 1; s < k->n_stages; s++) {
        Compute *c = &k->stages[s];
        if (!loads_matchable(p, c->body, buf) || !loads_matchable(p, c->init, buf) ||
            !loads_matchable(p, c->post, buf) || count_loads(c->out_index, buf))
            return 0;
    }
    ctx.p = p;
    ctx.ok = 1;
    for (s = pi + 1; s < k->n_stages; s++) {
        Compute *c = &k->stages[s];
        if (!stage_loads(c, buf))
            continue;
        c->body = rewrite(L, c->body, NULL, buf, inline_load, &ctx);
        c->init = rewrite(L, c->init, NULL, buf, inline_load, &ctx);
        c->post = rewrite(L, c->post, NULL, buf, inline_load, &ctx);
    }
    if (!ctx.ok)
        die("fusion: a checked load did not match");
    return 1;
}

/* ---- rewrite 2: epilogue ---- */

typedef struct EpiCtx {
    Expr *result;    /* P's result (post or the accumulator) */
} EpiCtx;

static Expr *epilogue_load(Lower *L, const Expr *ld, void *vctx)
{
    EpiCtx *ctx = vctx;
    return ex_cast(L, ld->dtype, ctx->result);
}

/* Whether every load of buf in e reads it at exactly c's own axes. */
static int loads_at_own_axes(const Compute *c, const Expr *e, int buf)
{
    int i;
    if (!e)
        return 1;
    if (e->kind == EX_LOAD && e->buf == buf) {
        if (e->nidx != c->n_axes)
            return c->n_axes == 1 && e->a->kind == EX_VAR && e->a->var == c->axes[0].var;
        for (i = 0; i < c->n_axes; i++) {
            const Expr *ix = e->idx[i];
            if (e->dims[i] != c->axes[i].extent)
                return 0;
            if (c->axes[i].extent == 1 && ix->kind == EX_INT && ix->ival == 0)
                continue; /* a broadcast index into a unit dimension */
            if (ix->kind != EX_VAR || ix->var != c->axes[i].var)
                return 0;
        }
        return 1;
    }
    if (!loads_at_own_axes(c, e->a, buf) || !loads_at_own_axes(c, e->b, buf) ||
        !loads_at_own_axes(c, e->c, buf))
        return 0;
    for (i = 0; i < e->nidx; i++)
        if (!loads_at_own_axes(c, e->idx[i], buf))
            return 0;
    return 1;
}

static int try_epilogue(Lower *L, int pi, int buf, int *removed)
{
    Kernel *k = L->k;
    Compute *p = &k->stages[pi], *c = NULL;
    VarMap m;
    EpiCtx ctx;
    int s, ci = -1, i;
    if (p->rop == RED_NONE || p->out_index)
        return 0;
    for (s = pi + 1; s < k->n_stages; s++) {
        if (!stage_loads(&k->stages[s], buf))
            continue;
        if (ci >= 0)
            return 0; /* more than one consumer stage */
        ci = s;
    }
    if (ci < 0)
        return 0;
    c = &k->stages[ci];
    if (c->rop != RED_NONE || c->out_index || c->n_axes != p->n_axes || c->init || c->post)
        return 0;
    for (i = 0; i < c->n_axes; i++)
        if (c->axes[i].extent != p->axes[i].extent)
            return 0;
    if (!loads_at_own_axes(c, c->body, buf))
        return 0;
    /* the consumer must not read anything a stage between P and C writes */
    for (s = pi + 1; s < ci; s++)
        if (stage_loads(c, k->stages[s].out_buf))
            return 0;
    m.n = 0;
    for (i = 0; i < c->n_axes; i++) {
        m.from[m.n] = c->axes[i].var;
        m.to[m.n++] = ex_var(L, &p->axes[i]);
    }
    ctx.result = p->post ? p->post : ex_acc(L, p->body->dtype);
    p->post = rewrite(L, c->body, &m, buf, epilogue_load, &ctx);
    p->out_buf = c->out_buf;
    *removed = ci;
    return 1;
}

static void remove_stage(Kernel *k, int s)
{
    memmove(&k->stages[s], &k->stages[s + 1], (size_t)(k->n_stages - s - 1) * sizeof *k->stages);
    k->n_stages--;
}

static int internal_value(const Graph *g, const int32_t *nodes, int n_nodes, int32_t vi)
{
    int i, j, m;
    int produced = 0;
    for (j = 0; j < g->n_outputs; j++)
        if (g->outputs[j] == vi)
            return 0;
    for (m = 0; m < n_nodes; m++) {
        const Node *n = &g->nodes[nodes[m]];
        for (i = 0; i < n->n_out; i++)
            if (n->out[i] == vi)
                produced = 1;
    }
    if (!produced)
        return 0;
    /* no live node outside the group reads it */
    for (i = 0; i < g->n_nodes; i++) {
        const Node *n = &g->nodes[i];
        int member = 0;
        if (n->dead)
            continue;
        for (m = 0; m < n_nodes; m++)
            member |= nodes[m] == i;
        if (member)
            continue;
        for (j = 0; j < n->n_in; j++)
            if (n->in[j] == vi)
                return 0;
    }
    return 1;
}

static int writers(const Kernel *k, int buf, int *which)
{
    int s, n = 0;
    for (s = 0; s < k->n_stages; s++)
        if (k->stages[s].out_buf == buf) {
            *which = s;
            n++;
        }
    return n;
}

void fuse_inline(Lower *L, const int32_t *nodes, int n_nodes)
{
    Kernel *k = L->k;
    const Graph *g = L->g;
    int changed = 1, b;
    while (changed) {
        changed = 0;
        for (b = 0; b < k->n_bufs; b++) {
            Buffer *buf = &k->bufs[b];
            int pi = -1, removed = -1, s, still = 0;
            if (buf->scope != BUF_ARENA || buf->value < 0 || dtype_compute(buf->dtype) != buf->dtype ||
                buf->dtype == DT_BOOL)
                continue;
            if (!internal_value(g, nodes, n_nodes, buf->value))
                continue;
            if (writers(k, b, &pi) != 1)
                continue;
            if (try_inline(L, pi, b)) {
                remove_stage(k, pi);
            } else if (try_epilogue(L, pi, b, &removed)) {
                remove_stage(k, removed);
            } else {
                continue;
            }
            for (s = 0; s < k->n_stages; s++)
                still += stage_loads(&k->stages[s], b) + (k->stages[s].out_buf == b);
            if (still)
                die("fusion left references to an inlined buffer");
            buf->scope = BUF_UNUSED;
            buf->written = 0;
            changed = 1;
        }
    }
}

int fuse_inplace_pair(const Kernel *k, int *in, int *out)
{
    const Compute *c;
    int b;
    if (k->n_stages != 1)
        return 0;
    c = &k->stages[0];
    if (c->rop != RED_NONE || c->out_index || c->n_raxes)
        return 0;
    if (k->bufs[c->out_buf].scope != BUF_ARENA || count_loads(c->body, c->out_buf))
        return 0;
    for (b = 0; b < k->n_bufs; b++) {
        const Buffer *buf = &k->bufs[b];
        if (b == c->out_buf || buf->scope != BUF_ARENA || buf->written)
            continue;
        if (buf->numel * (int64_t)dtype_size(buf->dtype) !=
            k->bufs[c->out_buf].numel * (int64_t)dtype_size(k->bufs[c->out_buf].dtype))
            continue;
        if (!count_loads(c->body, b) || !loads_at_own_axes(c, c->body, b))
            continue;
        *in = b;
        *out = c->out_buf;
        return 1;
    }
    return 0;
}

/* Whether every load in e is a (broadcast) read at c's own axes. */
static int loads_broadcast_own(const Compute *c, const Expr *e)
{
    int i;
    if (!e)
        return 1;
    if (e->kind == EX_VAR)
        return 0; /* an axis used as a value depends on the layout */
    if (e->kind == EX_LOAD) {
        int off = c->n_axes - e->nidx;
        if (e->nidx == 0 || off < 0)
            return e->nidx == 0 && e->a->kind == EX_INT; /* a scalar */
        for (i = 0; i < e->nidx; i++) {
            const Expr *ix = e->idx[i];
            if (e->dims[i] == 1 && ix->kind == EX_INT && ix->ival == 0)
                continue;
            if (ix->kind != EX_VAR || ix->var != c->axes[off + i].var ||
                e->dims[i] != c->axes[off + i].extent)
                return 0;
        }
        return 1;
    }
    return loads_broadcast_own(c, e->a) && loads_broadcast_own(c, e->b) &&
           loads_broadcast_own(c, e->c);
}

int fuse_is_elementwise(const Kernel *k)
{
    const Compute *c;
    if (k->n_stages != 1)
        return 0;
    c = &k->stages[0];
    if (c->rop != RED_NONE || c->out_index || c->n_raxes || c->init || c->post)
        return 0;
    return loads_broadcast_own(c, c->body);
}
