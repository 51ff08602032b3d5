/*
 * Schedule primitives on the loop IR (see sched.h for the contract of each).
 *
 * The IR is a tree of Stmt nodes; a primitive finds its loops by variable id,
 * builds the replacement subtree from fresh nodes (the arena never frees, so
 * the old subtree is simply dropped) and links it into the parent's slot.
 * Substituting a variable rebuilds index expressions through the te.c
 * builders, so constant arithmetic folds as the naive schedule's does and
 * unrolled copies print with literal offsets.
 *
 * Legality is checked structurally and conservatively: a primitive that
 * cannot prove the transformation keeps every output point's computation
 * refuses rather than guesses.
 *
 * compute_at and cache_read, and the bound inference they share, are in
 * sched_bound.c; the IR queries and substitutions both files use are
 * lower/loopq.c's.
 */
#include "sched_impl.h"
#include "loopq.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_UNROLL 256
#define MAX_TILE_ELEMS 1024

int sched_refuse(Sched *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return 1;
}

void sched_init(Sched *s, Lower *L)
{
    s->L = L;
    s->scope = NULL;
    s->pad_inner = 0;
    s->at_local = 0;
    s->at_once = 0;
    s->err[0] = 0;
}

/* Root slot in which primitives look for their loops. */
static Stmt **root_of(Sched *s)
{
    return s->scope ? s->scope : &s->L->k->body;
}

/* ---- queries ---- */

/* Slot holding the first loop over var (depth first), or NULL. */
static Stmt **find_loop(Stmt **slot, int var)
{
    Stmt *s = *slot;
    int i;
    if (!s)
        return NULL;
    if (s->kind == ST_FOR && s->var == var)
        return slot;
    for (i = 0; i < s->n_body; i++) {
        Stmt **r = find_loop(&s->body[i], var);
        if (r)
            return r;
    }
    return NULL;
}

Stmt **sched_find_loop(Stmt **root, int var)
{
    return find_loop(root, var);
}

int64_t sched_extent(const Stmt *root, int var)
{
    Stmt *r = (Stmt *)root;
    Stmt **slot = find_loop(&r, var);
    return slot ? (*slot)->extent : -1;
}

/* Whether a subtree stores to a non-local tensor that it also reads, or
 * (when need_var >= 0) stores to a non-local tensor at an index that does
 * not depend on need_var. Such a subtree may carry a dependence across the
 * iterations of a loop around it. */
static int carries_dep(const Kernel *k, const Stmt *s, const Stmt *root, int need_var)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_STORE && k->bufs[s->buf].scope != BUF_LOCAL) {
        if (lq_stmt_loads(root, s->buf))
            return 1;
        if (need_var >= 0 && !lq_uses_var(s->index, need_var))
            return 1;
    }
    for (i = 0; i < s->n_body; i++)
        if (carries_dep(k, s->body[i], root, need_var))
            return 1;
    return 0;
}

/* ---- split, reorder, fuse ---- */

int sched_split(Sched *s, int var, int64_t factor, int *outer, int *inner)
{
    Lower *L = s->L;
    Stmt **slot = find_loop(root_of(s), var);
    Stmt *loop, *body;
    IterVar vo, vi;
    Expr *e;
    int64_t n;
    if (!slot)
        return sched_refuse(s, "split: no loop over %s", L->k->var_names[var]);
    loop = *slot;
    n = loop->extent;
    if (factor < 1 || factor > n)
        return sched_refuse(s, "split: factor %lld outside 1..%lld", (long long)factor, (long long)n);
    vo = lower_itervar(L, arena_printf(L->arena, "%s_o", L->k->var_names[var]), (n + factor - 1) / factor);
    vi = lower_itervar(L, arena_printf(L->arena, "%s_i", L->k->var_names[var]), factor);
    e = ex_add(L, ex_mul(L, ex_var(L, &vo), ex_int(L, factor)), ex_var(L, &vi));
    body = lq_stmt_subst_var(L, loop->body[0], var, e);
    if (n % factor)
        body = st_if(L, ex_lt(L, e, ex_int(L, n)), body);
    *slot = st_loop(L, vo.var, vo.extent, st_loop(L, vi.var, vi.extent, body));
    (*slot)->for_kind = loop->for_kind == FOR_PARALLEL ? FOR_PARALLEL : FOR_SERIAL;
    if (outer)
        *outer = vo.var;
    if (inner)
        *inner = vi.var;
    return 0;
}

int sched_reorder(Sched *s, int n, const int *vars)
{
    Lower *L = s->L;
    Stmt **band[TVMCC_MAX_RANK * 4];
    Stmt *loops[TVMCC_MAX_RANK * 4], *guards[TVMCC_MAX_RANK * 4];
    int i, j, top = -1, n_guard = 0;
    if (n < 1 || n > (int)(sizeof band / sizeof band[0]))
        return sched_refuse(s, "reorder: %d loops", n);
    /* the band starts at the listed loop that is found first */
    for (i = 0; i < n; i++) {
        for (j = 0; j < i; j++)
            if (vars[j] == vars[i])
                return sched_refuse(s, "reorder: %s listed twice", L->k->var_names[vars[i]]);
        if (!find_loop(root_of(s), vars[i]))
            return sched_refuse(s, "reorder: no loop over %s", L->k->var_names[vars[i]]);
    }
    for (i = 0; i < n && top < 0; i++) {
        Stmt **sl = find_loop(root_of(s), vars[i]);
        int inside = 0;
        for (j = 0; j < n; j++)
            if (j != i && find_loop(root_of(s), vars[j]) &&
                !find_loop(&(*sl)->body[0], vars[j]))
                inside = 1;
        if (!inside)
            top = i;
    }
    if (top < 0)
        return sched_refuse(s, "reorder: loops do not form one nest");
    band[0] = find_loop(root_of(s), vars[top]);
    for (i = 1; i < n; i++) {
        Stmt **next = &(*band[i - 1])->body[0];
        /* step over split's guards: if (cond) without else */
        while (*next && (*next)->kind == ST_IF && ((*next)->n_body < 2 || !(*next)->body[1])) {
            if (n_guard == (int)(sizeof guards / sizeof guards[0]))
                return sched_refuse(s, "reorder: too many guards in the band");
            guards[n_guard++] = *next;
            next = &(*next)->body[0];
        }
        if (*next == NULL || (*next)->kind != ST_FOR)
            return sched_refuse(s, "reorder: loops are not perfectly nested");
        band[i] = next;
    }
    for (i = 0; i < n; i++) {
        int found = 0;
        for (j = 0; j < n; j++)
            if ((*band[i])->var == vars[j])
                found = 1;
        if (!found)
            return sched_refuse(s, "reorder: %s lies inside the band but is not listed",
                          L->k->var_names[(*band[i])->var]);
    }
    if (carries_dep(L->k, (*band[n - 1])->body[0], (*band[n - 1])->body[0], -1))
        return sched_refuse(s, "reorder: the band reads a tensor it writes");
    for (i = 0; i < n; i++)
        loops[i] = *band[i];
    /* rebuild the chain in the requested order with fresh nodes */
    {
        Stmt *inner = loops[n - 1]->body[0];
        for (i = n_guard - 1; i >= 0; i--)
            inner = st_if(L, guards[i]->cond, inner);
        for (i = n - 1; i >= 0; i--) {
            const Stmt *src = NULL;
            for (j = 0; j < n; j++)
                if (loops[j]->var == vars[i])
                    src = loops[j];
            inner = st_loop(L, src->var, src->extent, inner);
            inner->for_kind = src->for_kind;
        }
        *band[0] = inner;
    }
    return 0;
}

int sched_fuse(Sched *s, int outer, int inner, int *fused)
{
    Lower *L = s->L;
    Stmt **slot = find_loop(root_of(s), outer);
    Stmt *a, *b, *body;
    IterVar f;
    Expr *fv;
    if (!slot)
        return sched_refuse(s, "fuse: no loop over %s", L->k->var_names[outer]);
    a = *slot;
    b = a->body[0];
    if (!b || b->kind != ST_FOR || b->var != inner)
        return sched_refuse(s, "fuse: %s is not the only statement of %s", L->k->var_names[inner],
                      L->k->var_names[outer]);
    f = lower_itervar(L, arena_printf(L->arena, "%s_%s_f", L->k->var_names[outer],
                                      L->k->var_names[inner]), a->extent * b->extent);
    fv = ex_var(L, &f);
    body = lq_stmt_subst_var(L, b->body[0], outer, ex_binary(L, BIN_DIV, fv, ex_int(L, b->extent)));
    body = lq_stmt_subst_var(L, body, inner, ex_binary(L, BIN_MOD, fv, ex_int(L, b->extent)));
    *slot = st_loop(L, f.var, f.extent, body);
    if (fused)
        *fused = f.var;
    return 0;
}

/* Whether index e is affine in outer and inner with coef(outer) ==
 * B * coef(inner). */
static int flat_index(const Expr *e, int outer, int inner, int64_t B)
{
    int ok = 1;
    int64_t co = lq_coef(e, outer, &ok), ci = lq_coef(e, inner, &ok);
    return ok && co == B * ci;
}

/* Whether every use of outer and inner in e is inside a load index with
 * coef(outer) == B * coef(inner). */
static int flat_uses_ok(const Expr *e, int outer, int inner, int64_t B)
{
    if (!e)
        return 1;
    if (e->kind == EX_VAR)
        return e->var != outer && e->var != inner;
    if (e->kind == EX_LOAD)
        return flat_index(e->a, outer, inner, B);
    if (e->nidx)
        return !lq_uses_var(e, outer) && !lq_uses_var(e, inner);
    return flat_uses_ok(e->a, outer, inner, B) && flat_uses_ok(e->b, outer, inner, B) &&
           flat_uses_ok(e->c, outer, inner, B);
}

static int flat_stmt_ok(const Stmt *s, int outer, int inner, int64_t B)
{
    int i;
    if (!s)
        return 1;
    switch (s->kind) {
    case ST_STORE:
        if (!flat_index(s->index, outer, inner, B))
            return 0;
        return flat_uses_ok(s->value, outer, inner, B);
    case ST_IF:
        if (lq_uses_var(s->cond, outer) || lq_uses_var(s->cond, inner))
            return 0;
        break;
    default:
        break;
    }
    for (i = 0; i < s->n_body; i++)
        if (!flat_stmt_ok(s->body[i], outer, inner, B))
            return 0;
    return 1;
}

int sched_fuse_flat(Sched *s, int outer, int inner, int *fused)
{
    Lower *L = s->L;
    Stmt **slot = find_loop(root_of(s), outer);
    Stmt *a, *b, *body;
    IterVar f;
    if (!slot)
        return sched_refuse(s, "fuse_flat: no loop over %s", L->k->var_names[outer]);
    a = *slot;
    b = a->body[0];
    if (!b || b->kind != ST_FOR || b->var != inner)
        return sched_refuse(s, "fuse_flat: %s is not the only statement of %s", L->k->var_names[inner],
                      L->k->var_names[outer]);
    if (!flat_stmt_ok(b->body[0], outer, inner, b->extent))
        return sched_refuse(s, "fuse_flat: %s and %s are not one contiguous range in every index",
                      L->k->var_names[outer], L->k->var_names[inner]);
    f = lower_itervar(L, arena_printf(L->arena, "%s_%s_f", L->k->var_names[outer],
                                      L->k->var_names[inner]), a->extent * b->extent);
    body = lq_stmt_subst_var(L, b->body[0], outer, ex_int(L, 0));
    body = lq_stmt_subst_var(L, body, inner, ex_var_id(L, f.var));
    *slot = st_loop(L, f.var, f.extent, body);
    if (fused)
        *fused = f.var;
    return 0;
}

/* ---- annotations ---- */

static int count_loops(const Stmt *s, int var, int *innermost)
{
    int i, c = 0;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->var == var) {
        c = 1;
        if (lq_has_loop(s->body[0]))
            *innermost = 0;
    }
    for (i = 0; i < s->n_body; i++)
        c += count_loops(s->body[i], var, innermost);
    return c;
}

static int max_extent(const Stmt *s, int var)
{
    int i;
    int64_t m = 0;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->var == var)
        m = s->extent;
    for (i = 0; i < s->n_body; i++) {
        int64_t c = max_extent(s->body[i], var);
        if (c > m)
            m = c;
    }
    return (int)(m > MAX_UNROLL ? MAX_UNROLL + 1 : m);
}

static void unroll_in(Lower *L, Stmt **slot, int var)
{
    Stmt *s = *slot;
    int i;
    if (!s)
        return;
    if (s->kind == ST_FOR && s->var == var) {
        Stmt *seq = st_seq(L, (int)s->extent);
        int64_t v;
        for (v = 0; v < s->extent; v++) {
            seq->body[v] = lq_stmt_subst_var(L, s->body[0], var, ex_int(L, v));
            unroll_in(L, &seq->body[v], var);
        }
        *slot = seq;
        return;
    }
    for (i = 0; i < s->n_body; i++)
        unroll_in(L, &s->body[i], var);
}

int sched_unroll(Sched *s, int var)
{
    int innermost = 1;
    if (!count_loops(s->L->k->body, var, &innermost))
        return sched_refuse(s, "unroll: no loop over %s", s->L->k->var_names[var]);
    if (max_extent(s->L->k->body, var) > MAX_UNROLL)
        return sched_refuse(s, "unroll: %s has more than %d iterations", s->L->k->var_names[var], MAX_UNROLL);
    unroll_in(s->L, &s->L->k->body, var);
    return 0;
}

static void mark(Stmt *s, int var, ForKind kind)
{
    int i;
    if (!s)
        return;
    if (s->kind == ST_FOR && s->var == var)
        s->for_kind = kind;
    for (i = 0; i < s->n_body; i++)
        mark(s->body[i], var, kind);
}

int sched_vectorize(Sched *s, int var)
{
    int innermost = 1;
    if (!count_loops(s->L->k->body, var, &innermost))
        return sched_refuse(s, "vectorize: no loop over %s", s->L->k->var_names[var]);
    if (!innermost)
        return sched_refuse(s, "vectorize: %s is not an innermost loop", s->L->k->var_names[var]);
    mark(s->L->k->body, var, FOR_VECTORIZE);
    return 0;
}

static int inside_parallel(const Stmt *s, int var, int in_par)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->var == var)
        return in_par;
    if (s->kind == ST_FOR && s->for_kind == FOR_PARALLEL)
        in_par = 1;
    for (i = 0; i < s->n_body; i++)
        if (inside_parallel(s->body[i], var, in_par))
            return 1;
    return 0;
}

int sched_parallel(Sched *s, int var)
{
    Lower *L = s->L;
    Stmt **slot = find_loop(root_of(s), var);
    if (!slot)
        return sched_refuse(s, "parallel: no loop over %s", L->k->var_names[var]);
    if (inside_parallel(L->k->body, var, 0))
        return sched_refuse(s, "parallel: %s is inside a parallel loop", L->k->var_names[var]);
    if (carries_dep(L->k, (*slot)->body[0], (*slot)->body[0], var))
        return sched_refuse(s, "parallel: iterations of %s may write the same element", L->k->var_names[var]);
    (*slot)->for_kind = FOR_PARALLEL;
    return 0;
}

/* ---- cache_write ---- */

typedef struct Rebuf {
    int from, to; /* loads of buffer from become loads of to at idx */
    Expr *idx;
} Rebuf;

/* Copy of e with every load of buffer `from` replaced by a load of `to` at idx. */
static Expr *rebuf(Lower *L, const Expr *e, void *ctx)
{
    const Rebuf *rb = ctx;
    if (!e)
        return NULL;
    if (e->kind == EX_LOAD && e->buf == rb->from)
        return ex_load(L, rb->to, rb->idx);
    if (!e->a && !e->b && !e->c)
        return (Expr *)e;
    return ex_with(L, e, rebuf(L, e->a, ctx), rebuf(L, e->b, ctx), rebuf(L, e->c, ctx));
}

/* The stores to `from` in the fresh copy s go to `to` at idx. */
static void restore(Stmt *s, const Rebuf *rb)
{
    int i;
    if (!s)
        return;
    if (s->kind == ST_STORE && s->buf == rb->from) {
        s->buf = rb->to;
        s->index = rb->idx;
    }
    for (i = 0; i < s->n_body; i++)
        restore(s->body[i], rb);
}

/* Copy of s with buffer `from` (loads and stores) replaced by `to` at idx. */
Stmt *sched_rebuf(Lower *L, const Stmt *s, int from, int to, Expr *idx)
{
    Rebuf rb;
    Stmt *n;
    rb.from = from;
    rb.to = to;
    rb.idx = idx;
    n = lq_stmt_rewrite(L, s, rebuf, &rb);
    restore(n, &rb);
    return n;
}

int sched_cache_write(Sched *s, int n, const int *tile)
{
    Lower *L = s->L;
    Kernel *k = L->k;
    Stmt **band0, *cur, *decl, *guard = NULL, *seq, *nseq;
    int64_t ext[TVMCC_MAX_RANK * 4], lext[TVMCC_MAX_RANK * 4], numel = 1;
    Expr *lin;
    int i, j, acc, nacc, nphase;
    if (n < 1 || n > (int)(sizeof ext / sizeof ext[0]))
        return sched_refuse(s, "cache_write: %d tile loops", n);
    band0 = find_loop(root_of(s), tile[0]);
    if (!band0)
        return sched_refuse(s, "cache_write: no loop over %s", k->var_names[tile[0]]);
    cur = *band0;
    for (i = 0; i < n; i++) {
        if (!cur || cur->kind != ST_FOR || cur->var != tile[i])
            return sched_refuse(s, "cache_write: tile loops are not a perfect band in the given order");
        ext[i] = cur->extent;
        cur = cur->body[0];
    }
    for (i = 0; i < n; i++) {
        lext[i] = ext[i];
        if (i == n - 1 && s->pad_inner > 1)
            lext[i] = (ext[i] + s->pad_inner - 1) / s->pad_inner * s->pad_inner;
        numel *= lext[i];
    }
    if (numel > MAX_TILE_ELEMS)
        return sched_refuse(s, "cache_write: tile of %lld elements", (long long)numel);
    if (cur && cur->kind == ST_IF && (cur->n_body < 2 || !cur->body[1])) {
        guard = cur;
        cur = cur->body[0];
    }
    if (!cur || cur->kind != ST_DECL)
        return sched_refuse(s, "cache_write: the tile band does not enclose an accumulator");
    decl = cur;
    acc = decl->buf;
    if (k->bufs[acc].scope != BUF_LOCAL || k->bufs[acc].numel != 1)
        return sched_refuse(s, "cache_write: accumulator is not a local scalar");
    seq = decl->body[0];
    nphase = seq->kind == ST_SEQ ? seq->n_body : 1;
    /* distribution over the phases is legal when they communicate only
     * through the accumulator */
    if (carries_dep(k, seq, seq, -1))
        return sched_refuse(s, "cache_write: the nest reads a tensor it writes");
    nacc = lower_buf_temp(L, "acc", k->bufs[acc].dtype, numel);
    k->bufs[nacc].scope = BUF_LOCAL;
    lin = ex_int(L, 0);
    for (i = 0; i < n; i++)
        lin = ex_add(L, ex_mul(L, lin, ex_int(L, lext[i])), ex_var_id(L, tile[i]));
    nseq = st_seq(L, nphase);
    for (i = 0; i < nphase; i++) {
        Stmt *ph = sched_rebuf(L, seq->kind == ST_SEQ ? seq->body[i] : seq, acc, nacc, lin);
        Stmt **inner = &ph;
        /* sink the tile loops under the phase's own (reduce) loops */
        while ((*inner)->kind == ST_FOR && (*inner)->n_body == 1)
            inner = &(*inner)->body[0];
        if (guard)
            *inner = st_if(L, guard->cond, *inner);
        for (j = n - 1; j >= 0; j--)
            *inner = st_loop(L, tile[j], ext[j], *inner);
        nseq->body[i] = ph;
    }
    *band0 = st_decl(L, nacc, nseq);
    return 0;
}

/* ---- compute_inline ---- */

static Expr *inline_loads(Lower *L, const Expr *e, const Compute *p)
{
    if (!e)
        return NULL;
    if (e->kind == EX_LOAD && e->buf == p->out_buf) {
        /* decompose the row-major offset into the producer's axes */
        Expr *off = inline_loads(L, e->a, p), *body = p->body;
        int64_t stride = 1;
        int i;
        for (i = p->n_axes - 1; i >= 0; i--) {
            Expr *ix = stride == 1 ? off : ex_binary(L, BIN_DIV, off, ex_int(L, stride));
            if (i > 0)
                ix = ex_binary(L, BIN_MOD, ix, ex_int(L, p->axes[i].extent));
            body = lq_subst_var(L, body, p->axes[i].var, ix);
            stride *= p->axes[i].extent;
        }
        return ex_cast(L, e->dtype, body);
    }
    if (!e->a && !e->b && !e->c)
        return (Expr *)e;
    return ex_with(L, e, inline_loads(L, e->a, p), inline_loads(L, e->b, p), inline_loads(L, e->c, p));
}

int sched_compute_inline(Sched *s, int stage)
{
    Lower *L = s->L;
    Kernel *k = L->k;
    Compute *p, prod;
    int i;
    if (stage < 0 || stage >= k->n_stages)
        return sched_refuse(s, "compute_inline: no stage %d", stage);
    p = &k->stages[stage];
    if (p->rop != RED_NONE || p->out_index || k->bufs[p->out_buf].scope != BUF_TEMP)
        return sched_refuse(s, "compute_inline: stage '%s' is not an injective stage into scratch", p->name);
    if (dtype_compute(k->bufs[p->out_buf].dtype) != k->bufs[p->out_buf].dtype ||
        k->bufs[p->out_buf].dtype == DT_BOOL)
        return sched_refuse(s, "compute_inline: stage '%s' stores a narrowed type", p->name);
    if (lq_loads(p->body, p->out_buf))
        return sched_refuse(s, "compute_inline: stage '%s' reads its own output", p->name);
    for (i = 0; i < k->n_stages; i++)
        if (i != stage && k->stages[i].out_buf == p->out_buf)
            return sched_refuse(s, "compute_inline: another stage writes '%s'", k->bufs[p->out_buf].name);
    prod = *p;
    for (i = stage + 1; i < k->n_stages; i++) {
        Compute *c = &k->stages[i];
        c->body = inline_loads(L, c->body, &prod);
        c->init = inline_loads(L, c->init, &prod);
        c->post = inline_loads(L, c->post, &prod);
        c->out_index = inline_loads(L, c->out_index, &prod);
    }
    for (i = stage; i + 1 < k->n_stages; i++)
        k->stages[i] = k->stages[i + 1];
    k->n_stages--;
    /* the scratch buffer stays declared (and placed) but is no longer used */
    k->bufs[prod.out_buf].written = 0;
    return 0;
}

/* ---- ranges, simplification and loop partitioning ----
 *
 * Every loop runs from 0, so the range of each variable is known from its
 * enclosing loop. Interval arithmetic over index expressions then decides
 * bounds tests: a select whose condition always holds keeps one arm, a
 * clamp (min/max) that never binds disappears, and a guard that always
 * holds is dropped. partition() splits a loop into border and interior
 * ranges so that the interior copy simplifies this way (the padding tests
 * of a convolution or a pooling window). */

Range sched_range(int64_t lo, int64_t hi)
{
    Range r;
    r.known = 1;
    r.lo = lo;
    r.hi = hi;
    return r;
}

static int64_t min4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
}

static int64_t max4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
}

/* Range of an index expression; unknown when it leaves the small values
 * of loop indices (so no int64 overflow can occur below). */
static Range range_of(const Expr *e, const Range *vr)
{
    Range a, b, none;
    const int64_t lim = (int64_t)1 << 40;
    none.known = 0;
    none.lo = none.hi = 0;
    if (!e || e->dtype != DT_INT64)
        return none;
    switch (e->kind) {
    case EX_INT:
        return (e->ival > -lim && e->ival < lim) ? sched_range(e->ival, e->ival) : none;
    case EX_VAR:
        return vr[e->var];
    case EX_BINARY:
        a = range_of(e->a, vr);
        b = range_of(e->b, vr);
        if (!a.known || !b.known || a.lo <= -lim || a.hi >= lim || b.lo <= -lim || b.hi >= lim)
            return none;
        switch (e->op) {
        case BIN_ADD: return sched_range(a.lo + b.lo, a.hi + b.hi);
        case BIN_SUB: return sched_range(a.lo - b.hi, a.hi - b.lo);
        case BIN_MUL:
            if (a.hi - a.lo < lim / 2 && b.hi - b.lo < lim / 2 && (a.hi < 1 << 20 || b.hi < 1 << 20))
                return sched_range(min4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi),
                           max4(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi));
            return none;
        case BIN_MIN: return sched_range(a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi);
        case BIN_MAX: return sched_range(a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi);
        case BIN_DIV:
        case BIN_FLOORDIV:
            if (b.lo == b.hi && b.lo > 0 && a.lo >= 0)
                return sched_range(a.lo / b.lo, a.hi / b.lo);
            return none;
        case BIN_MOD:
            if (b.lo == b.hi && b.lo > 0 && a.lo >= 0)
                return a.hi < b.lo ? a : sched_range(0, b.lo - 1);
            return none;
        default:
            return none;
        }
    default:
        return none;
    }
}

/* 1: always true, 0: always false, -1: unknown. */
static int truth(const Expr *e, const Range *vr)
{
    Range a, b;
    int x, y;
    if (!e)
        return -1;
    if (e->kind == EX_INT && e->dtype == DT_BOOL)
        return e->ival != 0;
    if (e->kind != EX_BINARY)
        return -1;
    if (e->op == BIN_AND || e->op == BIN_OR) {
        x = truth(e->a, vr);
        y = truth(e->b, vr);
        if (e->op == BIN_AND)
            return (x == 0 || y == 0) ? 0 : (x == 1 && y == 1) ? 1 : -1;
        return (x == 1 || y == 1) ? 1 : (x == 0 && y == 0) ? 0 : -1;
    }
    if (e->op < BIN_EQ || e->op > BIN_GE || e->a->dtype != DT_INT64 || e->b->dtype != DT_INT64)
        return -1;
    a = range_of(e->a, vr);
    b = range_of(e->b, vr);
    if (!a.known || !b.known)
        return -1;
    switch (e->op) {
    case BIN_LT: return a.hi < b.lo ? 1 : a.lo >= b.hi ? 0 : -1;
    case BIN_LE: return a.hi <= b.lo ? 1 : a.lo > b.hi ? 0 : -1;
    case BIN_GT: return a.lo > b.hi ? 1 : a.hi <= b.lo ? 0 : -1;
    case BIN_GE: return a.lo >= b.hi ? 1 : a.hi < b.lo ? 0 : -1;
    case BIN_EQ: return (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) ? 1 : (a.hi < b.lo || b.hi < a.lo) ? 0 : -1;
    case BIN_NE: return (a.hi < b.lo || b.hi < a.lo) ? 1 : (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) ? 0 : -1;
    default: return -1;
    }
}

/* Which operand of an int64 min/max always wins: 0 a, 1 b, -1 unknown. */
static int minmax_pick(const Expr *e, const Range *vr)
{
    Range a = range_of(e->a, vr), b = range_of(e->b, vr);
    if (!a.known || !b.known)
        return -1;
    if (e->op == BIN_MIN)
        return a.hi <= b.lo ? 0 : b.hi <= a.lo ? 1 : -1;
    return a.lo >= b.hi ? 0 : b.lo >= a.hi ? 1 : -1;
}

static int is_minmax64(const Expr *e)
{
    return e->kind == EX_BINARY && (e->op == BIN_MIN || e->op == BIN_MAX) && e->dtype == DT_INT64;
}

/* Bounds tests and clamps that remain in e under ranges vr. */
static int count_tests(const Expr *e, const Range *vr)
{
    int t;
    if (!e)
        return 0;
    if (e->kind == EX_SELECT) {
        t = truth(e->a, vr);
        if (t >= 0)
            return count_tests(t ? e->b : e->c, vr);
        return 1 + count_tests(e->a, vr) + count_tests(e->b, vr) + count_tests(e->c, vr);
    }
    if (is_minmax64(e)) {
        t = minmax_pick(e, vr);
        if (t >= 0)
            return count_tests(t ? e->b : e->a, vr);
        return 1 + count_tests(e->a, vr) + count_tests(e->b, vr);
    }
    return count_tests(e->a, vr) + count_tests(e->b, vr) + count_tests(e->c, vr);
}

static int count_stmt_tests(const Stmt *s, Range *vr)
{
    int i, c = 0;
    Range save;
    if (!s)
        return 0;
    c += count_tests(s->index, vr) + count_tests(s->value, vr);
    if (s->kind == ST_IF) {
        int t = truth(s->cond, vr);
        if (t >= 0)
            return count_stmt_tests(t ? s->body[0] : (s->n_body > 1 ? s->body[1] : NULL), vr);
        c += 1 + count_tests(s->cond, vr);
    }
    if (s->kind == ST_FOR) {
        save = vr[s->var];
        vr[s->var] = sched_range(0, s->extent - 1);
        c += count_stmt_tests(s->body[0], vr);
        vr[s->var] = save;
        return c;
    }
    for (i = 0; i < s->n_body; i++)
        c += count_stmt_tests(s->body[i], vr);
    return c;
}

/* Whether the conjunction c contains the test `x op bound`. */
static int has_fact(const Expr *c, int op, const Expr *x, int64_t bound)
{
    if (!c || c->kind != EX_BINARY)
        return 0;
    if (c->op == BIN_AND)
        return has_fact(c->a, op, x, bound) || has_fact(c->b, op, x, bound);
    return c->op == op && c->b->kind == EX_INT && c->b->dtype == DT_INT64 &&
           c->b->ival == bound && lq_same_expr(c->a, x);
}

/* The true arm e of a select on cond, without the index clamps that cond
 * already guarantees: max(x, lo) where cond tests x >= lo, min(x, hi) where
 * it tests x < hi + 1. Both the emitted C and eval.c evaluate only the arm
 * a select picks, so the arm may assume its condition. */
static Expr *drop_clamps(Lower *L, const Expr *e, const Expr *cond)
{
    Expr *a, *b, *c;
    if (!e || (!e->a && !e->b && !e->c))
        return (Expr *)e;
    a = drop_clamps(L, e->a, cond);
    b = drop_clamps(L, e->b, cond);
    c = drop_clamps(L, e->c, cond);
    if (is_minmax64(e) && b->kind == EX_INT) {
        if (e->op == BIN_MAX && (has_fact(cond, BIN_GE, a, b->ival) || has_fact(cond, BIN_GT, a, b->ival - 1)))
            return a;
        if (e->op == BIN_MIN && (has_fact(cond, BIN_LT, a, b->ival + 1) || has_fact(cond, BIN_LE, a, b->ival)))
            return a;
    }
    if (a == e->a && b == e->b && c == e->c)
        return (Expr *)e;
    return ex_with(L, e, a, b, c);
}

static Expr *simplify(Lower *L, const Expr *e, const Range *vr)
{
    Expr *a, *b, *c;
    int t;
    if (!e || (!e->a && !e->b && !e->c))
        return (Expr *)e;
    if (e->kind == EX_SELECT && (t = truth(e->a, vr)) >= 0)
        return simplify(L, t ? e->b : e->c, vr);
    if (is_minmax64(e) && (t = minmax_pick(e, vr)) >= 0)
        return simplify(L, t ? e->b : e->a, vr);
    if (e->dtype == DT_BOOL && (t = truth(e, vr)) >= 0)
        return ex_const_int(L, DT_BOOL, t);
    a = simplify(L, e->a, vr);
    b = simplify(L, e->b, vr);
    c = simplify(L, e->c, vr);
    if (e->kind == EX_SELECT)
        b = drop_clamps(L, b, a);
    if (a == e->a && b == e->b && c == e->c)
        return (Expr *)e;
    if (e->kind == EX_BINARY && e->op == BIN_AND)
        return ex_and(L, a, b);
    return ex_with(L, e, a, b, c);
}

/* Simplifies s in place under the ranges of its enclosing loops. */
static Stmt *simplify_stmt(Lower *L, Stmt *s, Range *vr)
{
    int i;
    Range save;
    if (!s)
        return NULL;
    if (s->kind == ST_IF) {
        int t = truth(s->cond, vr);
        if (t == 1)
            return simplify_stmt(L, s->body[0], vr);
        if (t == 0)
            return s->n_body > 1 && s->body[1] ? simplify_stmt(L, s->body[1], vr) : st_seq(L, 0);
        s->cond = simplify(L, s->cond, vr);
    }
    s->index = simplify(L, s->index, vr);
    s->value = simplify(L, s->value, vr);
    if (s->kind == ST_FOR) {
        save = vr[s->var];
        vr[s->var] = sched_range(0, s->extent - 1);
        s->body[0] = simplify_stmt(L, s->body[0], vr);
        vr[s->var] = save;
        return s;
    }
    for (i = 0; i < s->n_body; i++)
        s->body[i] = simplify_stmt(L, s->body[i], vr);
    return s;
}

Range *sched_var_ranges(Lower *L)
{
    Range *vr = lower_alloc(L, (size_t)(L->k->n_vars + 1) * sizeof *vr);
    return vr; /* zeroed: every variable unknown until its loop is entered */
}

void sched_simplify(Sched *s)
{
    s->L->k->body = simplify_stmt(s->L, s->L->k->body, sched_var_ranges(s->L));
}

/* Sets vr for the loops enclosing the first loop over var (and var itself
 * to its full range); returns that loop or NULL. */
static Stmt *enter_loop(Stmt *s, int var, Range *vr)
{
    int i;
    Stmt *r;
    if (!s)
        return NULL;
    if (s->kind == ST_FOR) {
        vr[s->var] = sched_range(0, s->extent - 1);
        if (s->var == var)
            return s;
    }
    for (i = 0; i < s->n_body; i++)
        if ((r = enter_loop(s->body[i], var, vr)) != NULL)
            return r;
    if (s->kind == ST_FOR)
        vr[s->var].known = 0;
    return NULL;
}

static Stmt *piece(Lower *L, const Stmt *loop, int64_t lo, int64_t hi)
{
    IterVar v;
    Stmt *f;
    if (lo == 0) {
        f = st_loop(L, loop->var, hi, lq_stmt_subst_var(L, loop->body[0], -1, NULL));
    } else {
        v = lower_itervar(L, arena_printf(L->arena, "%s_p", L->k->var_names[loop->var]), hi - lo);
        f = st_loop(L, v.var, hi - lo,
                   lq_stmt_subst_var(L, loop->body[0], loop->var, ex_add(L, ex_var(L, &v), ex_int(L, lo))));
    }
    f->for_kind = loop->for_kind;
    return f;
}

/* Partitions every loop over var; the piece variables of the first one go
 * to pieces[0..*np) when pieces is not NULL (and is then cleared). */
static void partition_in(Lower *L, Stmt **slot, int var, int64_t lo, int64_t hi,
                         int **pieces, int *np)
{
    Stmt *s = *slot;
    int i, n = 0;
    if (!s)
        return;
    if (s->kind == ST_FOR && s->var == var && lo < hi && hi <= s->extent) {
        Stmt *seq = st_seq(L, 3);
        if (lo > 0)
            seq->body[n++] = piece(L, s, 0, lo);
        seq->body[n++] = piece(L, s, lo, hi);
        if (hi < s->extent)
            seq->body[n++] = piece(L, s, hi, s->extent);
        seq->n_body = n;
        *slot = seq;
        if (*pieces) {
            for (i = 0; i < n; i++)
                (*pieces)[i] = seq->body[i]->var;
            *np = n;
            *pieces = NULL;
        }
        return;
    }
    for (i = 0; i < s->n_body; i++)
        partition_in(L, &s->body[i], var, lo, hi, pieces, np);
}

int sched_partition(Sched *s, int var, int max_border)
{
    int pieces[3], n;
    return sched_partition_pieces(s, var, max_border, pieces, &n);
}

int sched_partition_pieces(Sched *s, int var, int max_border, int *pieces, int *n_pieces)
{
    Lower *L = s->L;
    Range *vr = sched_var_ranges(L);
    Stmt *loop = enter_loop(L->k->body, var, vr);
    int64_t n, mid, lo, hi;
    int best;
    if (!loop)
        return sched_refuse(s, "partition: no loop over %s", L->k->var_names[var]);
    n = loop->extent;
    mid = n / 2;
    vr[var] = sched_range(mid, mid);
    best = count_stmt_tests(loop->body[0], vr);
    vr[var] = sched_range(0, n - 1);
    if (count_stmt_tests(loop->body[0], vr) == best)
        return sched_refuse(s, "partition: no bounds test of %s to remove", L->k->var_names[var]);
    for (lo = 0; lo < mid; lo++) {
        vr[var] = sched_range(lo, mid);
        if (count_stmt_tests(loop->body[0], vr) == best)
            break;
    }
    for (hi = n; hi > mid + 1; hi--) {
        vr[var] = sched_range(mid, hi - 1);
        if (count_stmt_tests(loop->body[0], vr) == best)
            break;
    }
    if (lo > max_border || n - hi > max_border)
        return sched_refuse(s, "partition: border of %s wider than %d", L->k->var_names[var], max_border);
    *n_pieces = 0;
    partition_in(L, &L->k->body, var, lo, hi, &pieces, n_pieces);
    sched_simplify(s);
    return 0;
}
