/*
 * Bound inference and the two primitives built on it: compute_at and
 * cache_read (see sched.h for their contracts). The other primitives are
 * in sched.c.
 */
#include "sched_impl.h"
#include "loopq.h"

#include <string.h>

/* ---- bound inference: compute_at and cache_read ----
 *
 * Both primitives place work at the top of a loop L's body and need the
 * region of a buffer that the loop nest under L reads in one iteration of
 * L. Each read's offset must be affine in the loop variables; it is split
 * into per-dimension indices of the buffer's shape (each term goes to the
 * outermost dimension whose stride divides its coefficient, the constant
 * by mixed radix) and the split is accepted only when every dimension's
 * index stays inside the dimension over the full loop ranges, which makes
 * the row-major offset and the indices the same thing. In each dimension
 * the terms over L and the loops around it (fixed during one iteration of
 * L) are the region's start; they must be the same for every read, and
 * the terms over loops inside L span the region's extent. */

#define MAX_LOCAL_ELEMS 256

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

typedef struct Region {
    Kernel *k;
    int buf;                       /* the buffer whose reads are bounded */
    int rank;
    int64_t dims[TVMCC_MAX_RANK];  /* its shape (row-major) */
    int64_t stride[TVMCC_MAX_RANK];
    const char *outer;             /* outer[v]: v is L or a loop around it */
    Range *vr;                     /* ranges of the loops around the read */
    int n_reads;
    LqAffine base[TVMCC_MAX_RANK];   /* outer terms of the region's start */
    int64_t lo[TVMCC_MAX_RANK], hi[TVMCC_MAX_RANK]; /* inner span */
    const char *why;               /* the reason a read cannot be bounded */
} Region;

/* Per-dimension indices of an affine offset into r's shape; nonzero when
 * the split does not keep every index inside its dimension. */
static int split_dims(const Region *r, const LqAffine *off, LqAffine *d, int check, const Range *vr)
{
    int i, j;
    int64_t c = off->c0;
    for (j = 0; j < r->rank; j++)
        memset(&d[j], 0, sizeof d[j]);
    for (i = 0; i < off->n; i++) {
        int pick = -1;
        for (j = 0; j < r->rank && pick < 0; j++)
            if (r->dims[j] > 1 && off->coef[i] % r->stride[j] == 0)
                pick = j;
        if (pick < 0)
            return 1;
        if (lq_aff_add(&d[pick], off->var[i], off->coef[i] / r->stride[pick]))
            return 1;
    }
    for (j = 0; j < r->rank; j++) {
        d[j].c0 = floordiv64(c, r->stride[j]);
        c -= d[j].c0 * r->stride[j];
    }
    if (!check)
        return 0;
    for (j = 0; j < r->rank; j++) {
        int64_t lo = d[j].c0, hi = d[j].c0;
        for (i = 0; i < d[j].n; i++) {
            Range v = vr[d[j].var[i]];
            if (!v.known)
                return 1;
            if (d[j].coef[i] > 0) {
                lo += d[j].coef[i] * v.lo;
                hi += d[j].coef[i] * v.hi;
            } else {
                lo += d[j].coef[i] * v.hi;
                hi += d[j].coef[i] * v.lo;
            }
        }
        if (lo < 0 || hi > r->dims[j] - 1)
            return 1;
    }
    return 0;
}

/* Splits per-dimension index d into its outer terms (o) and the span of
 * the rest (constant included) over the inner loop ranges. */
static void outer_inner(const Region *r, const LqAffine *d, const Range *vr, LqAffine *o,
                        int64_t *lo, int64_t *hi)
{
    int i;
    memset(o, 0, sizeof *o);
    *lo = *hi = d->c0;
    for (i = 0; i < d->n; i++) {
        int64_t c = d->coef[i];
        if (r->outer[d->var[i]]) {
            lq_aff_add(o, d->var[i], c);
        } else if (c > 0) {
            *lo += c * vr[d->var[i]].lo;
            *hi += c * vr[d->var[i]].hi;
        } else {
            *lo += c * vr[d->var[i]].hi;
            *hi += c * vr[d->var[i]].lo;
        }
    }
}

static void region_read(Region *r, const Expr *e)
{
    LqAffine off, d[TVMCC_MAX_RANK], o;
    int64_t lo, hi;
    int j;
    if (!e || r->why)
        return;
    if (e->kind == EX_LOAD && e->buf == r->buf) {
        if (!lq_affine(e->a, &off)) {
            r->why = "an index is not affine in the loops";
            return;
        }
        if (split_dims(r, &off, d, 1, r->vr)) {
            r->why = "an index does not split into the buffer's dimensions";
            return;
        }
        for (j = 0; j < r->rank; j++) {
            outer_inner(r, &d[j], r->vr, &o, &lo, &hi);
            if (r->n_reads == 0) {
                r->base[j] = o;
                r->lo[j] = lo;
                r->hi[j] = hi;
            } else if (!lq_same_affine(&r->base[j], &o)) {
                r->why = "reads start at different places in one iteration";
                return;
            } else {
                r->lo[j] = lo < r->lo[j] ? lo : r->lo[j];
                r->hi[j] = hi > r->hi[j] ? hi : r->hi[j];
            }
        }
        r->n_reads++;
    }
    region_read(r, e->a);
    region_read(r, e->b);
    region_read(r, e->c);
}

/* Bounds the reads of r->buf in s (loops around s already in r->vr). */
static void region_walk(Region *r, const Stmt *s)
{
    int i;
    Range save;
    if (!s || r->why)
        return;
    region_read(r, s->index);
    region_read(r, s->value);
    region_read(r, s->cond);
    if (s->kind == ST_FOR) {
        save = r->vr[s->var];
        r->vr[s->var] = sched_range(0, s->extent - 1);
        region_walk(r, s->body[0]);
        r->vr[s->var] = save;
        return;
    }
    for (i = 0; i < s->n_body; i++)
        region_walk(r, s->body[i]);
}

/* Marks L and the loops around it (depth-first path to the first loop
 * over var) as outer, with their ranges; returns the slot of L. */
static Stmt **path_to(Stmt **slot, int var, char *outer, Range *vr)
{
    Stmt *s = *slot;
    Stmt **r;
    int i;
    if (!s)
        return NULL;
    if (s->kind == ST_FOR) {
        outer[s->var] = 1;
        vr[s->var] = sched_range(0, s->extent - 1);
        if (s->var == var)
            return slot;
    }
    for (i = 0; i < s->n_body; i++)
        if ((r = path_to(&s->body[i], var, outer, vr)) != NULL)
            return r;
    if (s->kind == ST_FOR) {
        outer[s->var] = 0;
        vr[s->var].known = 0;
    }
    return NULL;
}

static int on_path_parallel(const Stmt *s, int var)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR && s->var == var)
        return s->for_kind == FOR_PARALLEL;
    for (i = 0; i < s->n_body; i++)
        if (sched_extent(s->body[i], var) >= 0)
            return (s->kind == ST_FOR && s->for_kind == FOR_PARALLEL) || on_path_parallel(s->body[i], var);
    return 0;
}

/* Sets up r for buffer buf of the given shape and bounds its reads under
 * loop var; returns L's slot, or NULL with the reason in s->err. */
static Stmt **bound_reads(Sched *s, const char *who, Region *r, int buf, int rank,
                          const int64_t *dims, int var)
{
    Lower *L = s->L;
    Kernel *k = L->k;
    char *outer = lower_alloc(L, (size_t)k->n_vars + 1);
    Stmt **slot;
    int j;
    memset(r, 0, sizeof *r);
    r->k = k;
    r->buf = buf;
    r->rank = rank;
    for (j = rank - 1; j >= 0; j--) {
        r->dims[j] = dims[j];
        r->stride[j] = j == rank - 1 ? 1 : r->stride[j + 1] * dims[j + 1];
    }
    r->outer = outer;
    r->vr = sched_var_ranges(L);
    slot = path_to(&k->body, var, outer, r->vr);
    if (!slot) {
        sched_refuse(s, "%s: no loop over %s", who, k->var_names[var]);
        return NULL;
    }
    if ((*slot)->for_kind == FOR_VECTORIZE || (*slot)->for_kind == FOR_TENSORIZE) {
        sched_refuse(s, "%s: %s is a vector or tensorized loop", who, k->var_names[var]);
        return NULL;
    }
    region_walk(r, (*slot)->body[0]);
    if (r->why) {
        sched_refuse(s, "%s: reads of %s under %s cannot be bounded: %s", who, k->bufs[buf].name,
               k->var_names[var], r->why);
        return NULL;
    }
    if (!r->n_reads) {
        sched_refuse(s, "%s: %s is not read under %s", who, k->bufs[buf].name, k->var_names[var]);
        return NULL;
    }
    return slot;
}

static int64_t region_numel(const Region *r, int64_t *ext)
{
    int64_t n = 1;
    int j;
    for (j = 0; j < r->rank; j++) {
        ext[j] = r->hi[j] - r->lo[j] + 1;
        n *= ext[j];
    }
    return n;
}

/* Row-major offset into the region (extents ext) of a read at offset off. */
static Expr *region_index(Lower *L, const Region *r, const int64_t *ext, const Expr *off)
{
    LqAffine a, d[TVMCC_MAX_RANK], o, in;
    int64_t lo, hi;
    Expr *e = ex_int(L, 0);
    int j, i;
    lq_affine(off, &a);
    split_dims(r, &a, d, 0, NULL);
    for (j = 0; j < r->rank; j++) {
        outer_inner(r, &d[j], r->vr, &o, &lo, &hi);
        /* the index relative to the region start: the inner terms */
        memset(&in, 0, sizeof in);
        in.c0 = d[j].c0 - r->lo[j];
        for (i = 0; i < d[j].n; i++)
            if (!r->outer[d[j].var[i]])
                lq_aff_add(&in, d[j].var[i], d[j].coef[i]);
        e = ex_add(L, ex_mul(L, e, ex_int(L, ext[j])), lq_aff_expr(L, &in));
    }
    return e;
}

/* Where reread() redirects the reads of r->buf: region buffer nb of
 * extents ext. */
typedef struct Reread {
    const Region *r;
    const int64_t *ext;
    int nb;
} Reread;

/* Copy of e with the reads of r->buf redirected into the region buffer. */
static Expr *reread(Lower *L, const Expr *e, void *ctx)
{
    const Reread *rr = ctx;
    if (!e)
        return NULL;
    if (e->kind == EX_LOAD && e->buf == rr->r->buf)
        return ex_load(L, rr->nb, region_index(L, rr->r, rr->ext, e->a));
    if (!e->a && !e->b && !e->c)
        return (Expr *)e;
    return ex_with(L, e, reread(L, e->a, ctx), reread(L, e->b, ctx), reread(L, e->c, ctx));
}

/* Start of the region in dimension j: the outer terms plus the low end. */
static Expr *region_start(Lower *L, const Region *r, int j)
{
    LqAffine a = r->base[j];
    a.c0 += r->lo[j];
    return lq_aff_expr(L, &a);
}

/* Puts `first` before L's body, inside a declaration of nb when it is a
 * local buffer; the body's reads of r->buf go to nb. */
static void place(Lower *L, Stmt *loop, const Region *r, const int64_t *ext, int nb, Stmt *first)
{
    Stmt *seq = st_seq(L, 2);
    Reread rr;
    rr.r = r;
    rr.ext = ext;
    rr.nb = nb;
    seq->body[0] = first;
    seq->body[1] = lq_stmt_rewrite(L, loop->body[0], reread, &rr);
    if (L->k->bufs[nb].scope == BUF_LOCAL) {
        loop->body[0] = st_decl(L, nb, seq);
    } else {
        loop->body[0] = seq;
    }
}

/* Whether every store to buf in s is at offset `index`. */
static int stores_only_at(const Stmt *s, int buf, const Expr *index)
{
    int i;
    if (!s)
        return 1;
    if (s->kind == ST_STORE && s->buf == buf && !lq_same_expr(s->index, index))
        return 0;
    for (i = 0; i < s->n_body; i++)
        if (!stores_only_at(s->body[i], buf, index))
            return 0;
    return 1;
}

/* Whether a store in `w` may change a value that `rd` reads. */
static int writes_read(const Kernel *k, const Stmt *w, const Stmt *rd)
{
    int i, b;
    if (!w)
        return 0;
    if (w->kind == ST_STORE && k->bufs[w->buf].scope != BUF_LOCAL) {
        if (lq_stmt_loads(rd, w->buf))
            return 1;
        if (k->bufs[w->buf].inplace)
            for (b = 0; b < k->n_bufs; b++)
                if (k->bufs[b].inplace && lq_stmt_loads(rd, b))
                    return 1;
    }
    for (i = 0; i < w->n_body; i++)
        if (writes_read(k, w->body[i], rd))
            return 1;
    return 0;
}

/* ---- compute_at ---- */

int sched_compute_at(Sched *s, int stage, int var)
{
    Lower *L = s->L;
    Kernel *k = L->k;
    const Compute *p;
    Region r;
    Stmt **slot, *nest, *body, *loop;
    Expr *idx[TVMCC_MAX_RANK], *full, *nidx;
    int64_t dims[TVMCC_MAX_RANK], ext[TVMCC_MAX_RANK], numel;
    int i, j, ip = -1, ic = -1, buf, nb, local;
    if (stage < 0 || stage >= k->n_stages)
        return sched_refuse(s, "compute_at: no stage %d", stage);
    p = &k->stages[stage];
    buf = p->out_buf;
    if (var < 0 || var >= k->n_vars)
        return sched_refuse(s, "compute_at: no loop variable %d", var);
    if (k->bufs[buf].scope != BUF_TEMP || k->bufs[buf].persist || k->bufs[buf].inplace)
        return sched_refuse(s, "compute_at: stage '%s' does not write a kernel temp", p->name);
    if (p->out_index)
        return sched_refuse(s, "compute_at: stage '%s' does not store row-major over its axes", p->name);
    if (lq_loads(p->body, buf) || lq_loads(p->init, buf) || lq_loads(p->post, buf))
        return sched_refuse(s, "compute_at: stage '%s' reads its own output", p->name);
    for (i = 0; i < k->n_stages; i++)
        if (i != stage && k->stages[i].out_buf == buf)
            return sched_refuse(s, "compute_at: another stage writes '%s'", k->bufs[buf].name);
    if (!k->body || k->body->kind != ST_SEQ)
        return sched_refuse(s, "compute_at: the kernel is not a sequence of stage nests");
    for (i = 0; i < k->body->n_body; i++) {
        if (lq_stored_at(k->body->body[i], buf, NULL)) {
            if (ip >= 0)
                return sched_refuse(s, "compute_at: '%s' is written by several nests", k->bufs[buf].name);
            ip = i;
        }
        if (ic < 0 && sched_find_loop(&k->body->body[i], var))
            ic = i;
    }
    if (ip < 0)
        return sched_refuse(s, "compute_at: no nest writes '%s'", k->bufs[buf].name);
    if (ic < 0)
        return sched_refuse(s, "compute_at: no loop over %s", k->var_names[var]);
    if (ic <= ip)
        return sched_refuse(s, "compute_at: %s is not a loop of a later nest than stage '%s'",
                      k->var_names[var], p->name);
    /* the producer's nest must still be the chain of its axis loops, so
     * that every point of it is computed whole (a reduction with all its
     * reduce loops) below the chain */
    nest = k->body->body[ip];
    for (j = 0; j < p->n_axes; j++) {
        if (!nest || nest->kind != ST_FOR || nest->var != p->axes[j].var || nest->extent != p->axes[j].extent)
            return sched_refuse(s, "compute_at: the loops of stage '%s' are no longer its axes in order "
                             "(its points may be computed in parts)", p->name);
        dims[j] = p->axes[j].extent;
        idx[j] = ex_var(L, &p->axes[j]);
        nest = nest->body[0];
    }
    body = nest;
    full = ex_offset(L, p->n_axes, dims, idx);
    if (!stores_only_at(body, buf, full))
        return sched_refuse(s, "compute_at: stage '%s' stores elsewhere than at its axes", p->name);
    for (j = 0; j < p->n_axes; j++)
        if (sched_find_loop(&body, p->axes[j].var))
            return sched_refuse(s, "compute_at: stage '%s' loops over an axis twice", p->name);
    if (lq_stmt_count_loads(k->body, buf) != lq_stmt_count_loads(*sched_find_loop(&k->body, var), buf) ||
        lq_stmt_count_loads((*sched_find_loop(&k->body, var))->body[0], buf) == 0)
        return sched_refuse(s, "compute_at: %s is not an ancestor of every read of '%s'",
                      k->var_names[var], k->bufs[buf].name);
    /* moving the producer later must not change what it reads */
    for (i = ip + 1; i <= ic; i++)
        if (writes_read(k, k->body->body[i], body))
            return sched_refuse(s, "compute_at: a later nest writes a tensor stage '%s' reads", p->name);
    slot = bound_reads(s, "compute_at", &r, buf, p->n_axes, dims, var);
    if (!slot)
        return 1;
    loop = *slot;
    numel = region_numel(&r, ext);
    local = numel <= MAX_LOCAL_ELEMS && dtype_compute(k->bufs[buf].dtype) == k->bufs[buf].dtype;
    if (s->at_local && !local)
        return sched_refuse(s, "compute_at: a region of %lld elements does not fit a local array", (long long)numel);
    if (s->at_once) {
        int64_t trips = numel;
        for (j = 0; j < k->n_vars; j++)
            if (r.outer[j] && (trips *= r.vr[j].hi + 1) > k->bufs[buf].numel)
                return sched_refuse(s, "compute_at: the iterations of %s would compute points of '%s' again",
                              k->var_names[var], k->bufs[buf].name);
    }
    if (!local && on_path_parallel(k->body, var))
        return sched_refuse(s, "compute_at: a region of %lld elements in the workspace would be shared "
                         "by the iterations of a parallel loop", (long long)numel);
    /* the producer over the region: axis a_j runs over [start_j, start_j + ext_j) */
    nb = lower_buf_temp(L, "region", k->bufs[buf].dtype, numel);
    k->bufs[nb].scope = local ? BUF_LOCAL : BUF_TEMP;
    k->bufs[nb].written = 1;
    nidx = ex_int(L, 0);
    nest = body;
    for (j = 0; j < p->n_axes; j++) {
        Expr *at = region_start(L, &r, j);
        nidx = ex_add(L, ex_mul(L, nidx, ex_int(L, ext[j])), ext[j] > 1 ? ex_var(L, &p->axes[j]) : ex_int(L, 0));
        nest = lq_stmt_subst_var(L, nest, p->axes[j].var, ext[j] > 1 ? ex_add(L, at, ex_var(L, &p->axes[j])) : at);
    }
    nest = sched_rebuf(L, nest, buf, nb, nidx);
    for (j = p->n_axes - 1; j >= 0; j--)
        if (ext[j] > 1)
            nest = st_loop(L, p->axes[j].var, ext[j], nest);
    place(L, loop, &r, ext, nb, nest);
    /* drop the producer's own nest; the full temp is no longer used */
    for (i = ip; i + 1 < k->body->n_body; i++)
        k->body->body[i] = k->body->body[i + 1];
    k->body->n_body--;
    k->bufs[buf].scope = BUF_UNUSED;
    k->bufs[buf].written = 0;
    return 0;
}

/* ---- cache_read ---- */

int sched_cache_read(Sched *s, int buf, int var, BufScope scope)
{
    Lower *L = s->L;
    Kernel *k = L->k;
    Region r;
    Stmt **slot, *copy;
    int64_t dims[TVMCC_MAX_RANK], ext[TVMCC_MAX_RANK], numel;
    Expr *src, *dst;
    IterVar cv[TVMCC_MAX_RANK];
    int j, rank = 1, nb;
    const Buffer *b;
    if (buf < 0 || buf >= k->n_bufs)
        return sched_refuse(s, "cache_read: no buffer %d", buf);
    b = &k->bufs[buf];
    if (var < 0 || var >= k->n_vars)
        return sched_refuse(s, "cache_read: no loop variable %d", var);
    if (scope != BUF_LOCAL && scope != BUF_TEMP)
        return sched_refuse(s, "cache_read: scope must be local or temp");
    if (b->scope == BUF_LOCAL || b->scope == BUF_UNUSED || b->scope == BUF_OUTPUT)
        return sched_refuse(s, "cache_read: %s is not a tensor the kernel reads", b->name);
    if (lq_stored_at(k->body, buf, NULL) || b->inplace)
        return sched_refuse(s, "cache_read: %s is written by the kernel", b->name);
    /* the shape of the value when it is known, else one flat dimension */
    dims[0] = b->numel;
    if (b->value >= 0 && L->g) {
        const Value *v = &L->g->values[b->value];
        int64_t n = 1;
        for (j = 0; j < v->rank; j++)
            n *= v->dims[j];
        if (v->rank > 0 && v->rank <= TVMCC_MAX_RANK && n == b->numel) {
            rank = v->rank;
            memcpy(dims, v->dims, (size_t)rank * sizeof *dims);
        }
    }
    slot = bound_reads(s, "cache_read", &r, buf, rank, dims, var);
    if (!slot && rank > 1) {
        /* a view of another shape: bound the flat offsets */
        rank = 1;
        dims[0] = b->numel;
        slot = bound_reads(s, "cache_read", &r, buf, rank, dims, var);
    }
    if (!slot)
        return 1;
    numel = region_numel(&r, ext);
    if (scope == BUF_LOCAL && numel > MAX_LOCAL_ELEMS)
        return sched_refuse(s, "cache_read: a local region of %lld elements", (long long)numel);
    if (scope == BUF_TEMP && on_path_parallel(k->body, var))
        return sched_refuse(s, "cache_read: a region in the workspace would be shared by the iterations "
                         "of a parallel loop");
    nb = lower_buf_temp(L, "cache", b->dtype, numel);
    k->bufs[nb].scope = scope;
    k->bufs[nb].written = 1;
    /* for c_j in 0..ext_j: cache[c] = buf[start + c] */
    src = ex_int(L, 0);
    dst = ex_int(L, 0);
    for (j = 0; j < rank; j++) {
        Expr *at = region_start(L, &r, j);
        if (ext[j] > 1) {
            cv[j] = lower_itervar(L, arena_printf(L->arena, "%s_c", b->name), ext[j]);
            at = ex_add(L, at, ex_var(L, &cv[j]));
        }
        src = ex_add(L, ex_mul(L, src, ex_int(L, dims[j])), at);
        dst = ex_add(L, ex_mul(L, dst, ex_int(L, ext[j])), ext[j] > 1 ? ex_var(L, &cv[j]) : ex_int(L, 0));
    }
    copy = st_store(L, nb, dst, ex_load(L, buf, src));
    for (j = rank - 1; j >= 0; j--)
        if (ext[j] > 1)
            copy = st_loop(L, cv[j].var, ext[j], copy);
    place(L, *slot, &r, ext, nb, copy);
    return 0;
}
