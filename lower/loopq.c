/*
 * Queries on loop IR and tensor expressions, and substitutions (loopq.h).
 * Expressions are trees (a node may be shared, never cyclic); a query walks
 * the operands a, b, c and not the per-dimension indices of a load (idx),
 * which repeat what its offset a already says.
 */
#include "loopq.h"

#include <string.h>

/* ---- uses ---- */

int lq_uses_var(const Expr *e, int var)
{
    if (!e)
        return 0;
    if (e->kind == EX_VAR && e->var == var)
        return 1;
    return lq_uses_var(e->a, var) || lq_uses_var(e->b, var) || lq_uses_var(e->c, var);
}

int lq_loads(const Expr *e, int buf)
{
    return lq_count_loads(e, buf) > 0;
}

int lq_count_loads(const Expr *e, int buf)
{
    if (!e)
        return 0;
    return (e->kind == EX_LOAD && e->buf == buf) + lq_count_loads(e->a, buf) + lq_count_loads(e->b, buf) +
           lq_count_loads(e->c, buf);
}

int lq_stmt_loads(const Stmt *s, int buf)
{
    return lq_stmt_count_loads(s, buf) > 0;
}

int lq_stmt_count_loads(const Stmt *s, int buf)
{
    int i, n;
    if (!s)
        return 0;
    n = lq_count_loads(s->index, buf) + lq_count_loads(s->value, buf) + lq_count_loads(s->cond, buf);
    for (i = 0; i < s->n_body; i++)
        n += lq_stmt_count_loads(s->body[i], buf);
    return n;
}

int lq_stmt_uses_buf(const Stmt *s, int buf)
{
    int i;
    if (!s)
        return 0;
    if ((s->kind == ST_STORE || s->kind == ST_DECL) && s->buf == buf)
        return 1;
    if (lq_loads(s->index, buf) || lq_loads(s->value, buf) || lq_loads(s->cond, buf))
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (lq_stmt_uses_buf(s->body[i], buf))
            return 1;
    return 0;
}

int lq_stored_at(const Stmt *s, int buf, const Expr **idx)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_STORE && s->buf == buf) {
        if (idx)
            *idx = s->index;
        return 1;
    }
    for (i = 0; i < s->n_body; i++)
        if (lq_stored_at(s->body[i], buf, idx))
            return 1;
    return 0;
}

int lq_loads_stored(const Stmt *body, const Expr *e)
{
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && lq_stored_at(body, e->buf, NULL))
        return 1;
    return lq_loads_stored(body, e->a) || lq_loads_stored(body, e->b) || lq_loads_stored(body, e->c);
}

int lq_has_loop(const Stmt *s)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_FOR)
        return 1;
    for (i = 0; i < s->n_body; i++)
        if (lq_has_loop(s->body[i]))
            return 1;
    return 0;
}

static uint64_t type_mag(DType t)
{
    if (t == DT_BOOL)
        return 1;
    if (dtype_is_signed_int(t))
        return UINT64_C(1) << (8 * dtype_size(t) - 1);
    if (dtype_is_unsigned_int(t))
        return dtype_size(t) >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * dtype_size(t))) - 1;
    return UINT64_MAX;
}

static uint64_t mag_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t mag_mul(uint64_t a, uint64_t b)
{
    return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

uint64_t lq_mag(const Expr *e)
{
    uint64_t t = type_mag(e->dtype), r = t;
    if (t == UINT64_MAX && !dtype_is_unsigned_int(e->dtype))
        return UINT64_MAX; /* float */
    switch (e->kind) {
    case EX_INT:
        return e->ival < 0 ? (uint64_t)(-(e->ival + 1)) + 1 : (uint64_t)e->ival;
    case EX_CAST:
        /* a signed integer type keeps a value its range holds */
        if (dtype_is_signed_int(e->dtype) && (dtype_is_signed_int(e->a->dtype) || dtype_is_unsigned_int(e->a->dtype))) {
            uint64_t a = lq_mag(e->a);
            r = a <= t - 1 ? a : t;
        }
        break;
    case EX_BINARY:
        if (!dtype_is_signed_int(e->dtype))
            break;
        if (e->op == BIN_ADD || e->op == BIN_SUB)
            r = mag_add(lq_mag(e->a), lq_mag(e->b));
        else if (e->op == BIN_MUL)
            r = mag_mul(lq_mag(e->a), lq_mag(e->b));
        else if (e->op == BIN_MIN || e->op == BIN_MAX) {
            uint64_t a = lq_mag(e->a), b = lq_mag(e->b);
            r = a > b ? a : b;
        }
        break;
    default:
        break;
    }
    return r < t ? r : t;
}

int lq_same_expr(const Expr *a, const Expr *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->op != b->op)
        return 0;
    switch (a->kind) {
    case EX_INT: return a->ival == b->ival;
    case EX_FLOAT: return a->fval == b->fval;
    case EX_VAR: return a->var == b->var;
    case EX_LOAD:
        if (a->buf != b->buf)
            return 0;
        break;
    default:
        break;
    }
    return lq_same_expr(a->a, b->a) && lq_same_expr(a->b, b->b) && lq_same_expr(a->c, b->c);
}

/* ---- affine index expressions ---- */

int64_t lq_coef(const Expr *e, int var, int *ok)
{
    if (!e || !lq_uses_var(e, var))
        return 0;
    if (e->kind == EX_VAR)
        return 1;
    if (e->kind == EX_BINARY && e->dtype == DT_INT64) {
        switch (e->op) {
        case BIN_ADD: return lq_coef(e->a, var, ok) + lq_coef(e->b, var, ok);
        case BIN_SUB: return lq_coef(e->a, var, ok) - lq_coef(e->b, var, ok);
        case BIN_MUL:
            if (e->a->kind == EX_INT)
                return e->a->ival * lq_coef(e->b, var, ok);
            if (e->b->kind == EX_INT)
                return e->b->ival * lq_coef(e->a, var, ok);
            break;
        default:
            break;
        }
    }
    *ok = 0;
    return 0;
}

int lq_unit_stride(const Expr *idx, int var)
{
    int ok = 1;
    int64_t c = lq_coef(idx, var, &ok);
    return ok && c == 1;
}

int lq_aff_add(LqAffine *a, int var, int64_t coef)
{
    int i;
    for (i = 0; i < a->n; i++)
        if (a->var[i] == var) {
            a->coef[i] += coef;
            if (a->coef[i] == 0) {
                a->var[i] = a->var[a->n - 1];
                a->coef[i] = a->coef[a->n - 1];
                a->n--;
            }
            return 0;
        }
    if (coef == 0)
        return 0;
    if (a->n == LQ_MAX_TERMS)
        return 1;
    a->var[a->n] = var;
    a->coef[a->n++] = coef;
    return 0;
}

/* a += k * b; nonzero on a term or constant past 2^40 or no room. */
static int aff_addk(LqAffine *a, const LqAffine *b, int64_t k)
{
    int i;
    const int64_t lim = (int64_t)1 << 40;
    if (k > lim || k < -lim || b->c0 > lim || b->c0 < -lim)
        return 1;
    a->c0 += k * b->c0;
    for (i = 0; i < b->n; i++) {
        if (b->coef[i] > lim || b->coef[i] < -lim || lq_aff_add(a, b->var[i], k * b->coef[i]))
            return 1;
    }
    return 0;
}

int lq_affine(const Expr *e, LqAffine *out)
{
    LqAffine a, b;
    memset(out, 0, sizeof *out);
    if (!e || e->dtype != DT_INT64)
        return 0;
    switch (e->kind) {
    case EX_INT:
        out->c0 = e->ival;
        return 1;
    case EX_VAR:
        return !lq_aff_add(out, e->var, 1);
    case EX_BINARY:
        if (!lq_affine(e->a, &a) || !lq_affine(e->b, &b))
            return 0;
        if (e->op == BIN_ADD || e->op == BIN_SUB)
            return !aff_addk(out, &a, 1) && !aff_addk(out, &b, e->op == BIN_ADD ? 1 : -1);
        if (e->op == BIN_MUL && b.n == 0)
            return !aff_addk(out, &a, b.c0);
        if (e->op == BIN_MUL && a.n == 0)
            return !aff_addk(out, &b, a.c0);
        return 0;
    default:
        return 0;
    }
}

int64_t lq_aff_coef(const LqAffine *a, int var)
{
    int i;
    for (i = 0; i < a->n; i++)
        if (a->var[i] == var)
            return a->coef[i];
    return 0;
}

int lq_aff_only(const LqAffine *a, const int *vars, int n)
{
    int i, j;
    for (i = 0; i < a->n; i++) {
        for (j = 0; j < n && vars[j] != a->var[i]; j++)
            ;
        if (j == n)
            return 0;
    }
    return 1;
}

int lq_same_affine(const LqAffine *a, const LqAffine *b)
{
    int i;
    if (a->n != b->n || a->c0 != b->c0)
        return 0;
    for (i = 0; i < a->n; i++)
        if (lq_aff_coef(b, a->var[i]) != a->coef[i])
            return 0;
    return 1;
}

Expr *lq_aff_expr(Lower *L, const LqAffine *a)
{
    Expr *e = ex_int(L, a->c0);
    int i;
    for (i = 0; i < a->n; i++)
        e = ex_add(L, e, a->coef[i] == 1 ? ex_var_id(L, a->var[i])
                                         : ex_mul(L, ex_var_id(L, a->var[i]), ex_int(L, a->coef[i])));
    return e;
}

/* ---- substitution ---- */

Expr *lq_subst(Lower *L, const Expr *e, Expr *const *map, Expr *acc)
{
    Expr *c;
    int i;
    if (!e)
        return NULL;
    if (e->kind == EX_VAR && map && map[e->var])
        return map[e->var];
    if (e->kind == EX_ACC && acc)
        return acc;
    if (!e->a && !e->b && !e->c)
        return (Expr *)e;
    c = ex_with(L, e, lq_subst(L, e->a, map, acc), lq_subst(L, e->b, map, acc), lq_subst(L, e->c, map, acc));
    if (e->nidx) {
        c->idx = lower_alloc(L, (size_t)e->nidx * sizeof *c->idx);
        for (i = 0; i < e->nidx; i++)
            c->idx[i] = lq_subst(L, e->idx[i], map, acc);
    }
    return c;
}

Expr *lq_subst_var(Lower *L, const Expr *e, int var, Expr *r)
{
    Expr *a, *b, *c;
    if (!e)
        return NULL;
    if (e->kind == EX_VAR)
        return e->var == var ? r : (Expr *)e;
    if (!e->a && !e->b && !e->c)
        return (Expr *)e;
    a = lq_subst_var(L, e->a, var, r);
    b = lq_subst_var(L, e->b, var, r);
    c = lq_subst_var(L, e->c, var, r);
    if (e->kind == EX_BINARY && (e->dtype == DT_INT64 || (e->op >= BIN_EQ && e->op <= BIN_GE)) &&
        a->dtype == DT_INT64 && b->dtype == DT_INT64)
        return ex_binary(L, (BinaryOp)e->op, a, b); /* index arithmetic and its comparisons */
    if (e->kind == EX_SELECT && a->kind == EX_INT)
        return a->ival ? b : c;
    return ex_with(L, e, a, b, c);
}

Stmt *lq_stmt_rewrite(Lower *L, const Stmt *s, LqRewrite fn, void *ctx)
{
    Stmt *n;
    int i;
    if (!s)
        return NULL;
    n = lower_alloc(L, sizeof *n);
    *n = *s;
    n->index = fn(L, s->index, ctx);
    n->value = fn(L, s->value, ctx);
    n->cond = fn(L, s->cond, ctx);
    if (s->n_body) {
        n->body = lower_alloc(L, (size_t)s->n_body * sizeof *n->body);
        for (i = 0; i < s->n_body; i++)
            n->body[i] = lq_stmt_rewrite(L, s->body[i], fn, ctx);
    }
    return n;
}

static Expr *subst_map(Lower *L, const Expr *e, void *map)
{
    return lq_subst(L, e, (Expr *const *)map, NULL);
}

Stmt *lq_stmt_subst(Lower *L, const Stmt *s, Expr *const *map)
{
    return lq_stmt_rewrite(L, s, subst_map, (void *)map);
}

typedef struct VarSubst {
    int var;
    Expr *r;
} VarSubst;

static Expr *subst_one(Lower *L, const Expr *e, void *ctx)
{
    const VarSubst *vs = ctx;
    return lq_subst_var(L, e, vs->var, vs->r);
}

Stmt *lq_stmt_subst_var(Lower *L, const Stmt *s, int var, Expr *r)
{
    VarSubst vs;
    vs.var = var;
    vs.r = r;
    return lq_stmt_rewrite(L, s, subst_one, &vs);
}
