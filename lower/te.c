/*
 * Builders for tensor expressions and kernels (te.h). Index arithmetic on
 * integer constants is folded as it is built, and the neutral elements
 * (x+0, x*1, x*0) are simplified, so that the naive loop nests print as the
 * offsets a person would write. Nothing here depends on an operator.
 */
#include "te.h"

#include <string.h>

void *lower_alloc(Lower *L, size_t n)
{
    void *p = arena_alloc(L->arena, n); /* zeroed */
    if (!p)
        die("compile arena exhausted");
    return p;
}

static Expr *new_expr(Lower *L, ExprKind kind, DType t)
{
    Expr *e = lower_alloc(L, sizeof *e);
    e->kind = kind;
    e->dtype = t;
    return e;
}

Expr *ex_int(Lower *L, int64_t v)
{
    return ex_const_int(L, DT_INT64, v);
}

Expr *ex_const_int(Lower *L, DType t, int64_t v)
{
    Expr *e = new_expr(L, EX_INT, t);
    e->ival = v;
    return e;
}

Expr *ex_float(Lower *L, DType t, double v)
{
    Expr *e = new_expr(L, EX_FLOAT, dtype_compute(t));
    e->fval = v;
    return e;
}

Expr *ex_var(Lower *L, const IterVar *iv)
{
    Expr *e = new_expr(L, EX_VAR, DT_INT64);
    e->var = iv->var;
    return e;
}

Expr *ex_acc(Lower *L, DType t)
{
    return new_expr(L, EX_ACC, t);
}

Expr *ex_load(Lower *L, int buf, Expr *offset)
{
    Expr *e;
    if (buf < 0 || buf >= L->k->n_bufs)
        die("ex_load: bad buffer %d", buf);
    e = new_expr(L, EX_LOAD, dtype_compute(L->k->bufs[buf].dtype));
    e->buf = buf;
    e->a = offset;
    return e;
}

Expr *ex_offset(Lower *L, int rank, const int64_t *dims, Expr *const *idx)
{
    Expr *off = ex_int(L, 0);
    int i;
    for (i = 0; i < rank; i++)
        off = ex_add(L, ex_mul(L, off, ex_int(L, dims[i])), idx[i]);
    return off;
}

Expr *ex_load_nd(Lower *L, int buf, int rank, const int64_t *dims, Expr *const *idx)
{
    Expr *e = ex_load(L, buf, ex_offset(L, rank, dims, idx));
    int64_t *d = lower_alloc(L, (size_t)(rank ? rank : 1) * sizeof *d);
    e->nidx = rank;
    e->idx = lower_alloc(L, (size_t)(rank ? rank : 1) * sizeof *e->idx);
    if (rank) {
        memcpy(e->idx, idx, (size_t)rank * sizeof *idx);
        memcpy(d, dims, (size_t)rank * sizeof *d);
    }
    e->dims = d;
    return e;
}

static DType unary_type(UnaryOp op, DType a)
{
    switch (op) {
    case UN_NOT:
    case UN_ISNAN:
    case UN_ISINF:
        return DT_BOOL;
    default:
        return a;
    }
}

Expr *ex_unary(Lower *L, UnaryOp op, Expr *a)
{
    Expr *e = new_expr(L, EX_UNARY, unary_type(op, a->dtype));
    e->op = (int)op;
    e->a = a;
    return e;
}

static int is_cmp_or_logic(BinaryOp op)
{
    return (op >= BIN_EQ && op <= BIN_GE) || op == BIN_AND || op == BIN_OR || op == BIN_XOR;
}

static int is_int_const(const Expr *e, int64_t v)
{
    return e->kind == EX_INT && e->ival == v;
}

Expr *ex_binary(Lower *L, BinaryOp op, Expr *a, Expr *b)
{
    Expr *e;
    DType t = a->dtype;
    if (op >= BIN_EQ && op <= BIN_GE) {
        /* compare in a common type: prefer the float or wider side */
        if (a->dtype != b->dtype) {
            if (dtype_is_float(b->dtype) && !dtype_is_float(a->dtype))
                a = ex_cast(L, b->dtype, a);
            else
                b = ex_cast(L, a->dtype, b);
        }
    } else if (b->dtype != t && !(op == BIN_SHL || op == BIN_SHR)) {
        b = ex_cast(L, t, b);
    }
    if (a->kind == EX_INT && b->kind == EX_INT && t == DT_INT64) {
        int64_t r;
        switch (op) {
        case BIN_ADD:
            if (!ck_add(a->ival, b->ival, &r))
                return ex_int(L, r);
            break;
        case BIN_MUL:
            if (!ck_mul(a->ival, b->ival, &r))
                return ex_int(L, r);
            break;
        case BIN_SUB:
            if (!ck_add(a->ival, -b->ival, &r) && b->ival != INT64_MIN)
                return ex_int(L, r);
            break;
        case BIN_DIV:
        case BIN_MOD:
            if (b->ival != 0 && !(a->ival == INT64_MIN && b->ival == -1))
                return ex_int(L, op == BIN_DIV ? a->ival / b->ival : a->ival % b->ival);
            break;
        default:
            break;
        }
    }
    if (op >= BIN_EQ && op <= BIN_GE && a->kind == EX_INT && b->kind == EX_INT && a->dtype == DT_INT64 &&
        b->dtype == DT_INT64) {
        int64_t x = a->ival, y = b->ival;
        int v = op == BIN_EQ ? x == y : op == BIN_NE ? x != y : op == BIN_LT ? x < y
              : op == BIN_LE ? x <= y : op == BIN_GT ? x > y : x >= y;
        return ex_const_int(L, DT_BOOL, v);
    }
    if ((op == BIN_DIV || op == BIN_MOD) && t == DT_INT64 && b->kind == EX_INT && b->ival > 1) {
        /* (v*m + c) / m and % m for a loop variable v (never negative) and
         * 0 <= c < m: v and c (the Winograd output tiles, oh = 2*th + r) */
        const Expr *mul = a;
        int64_t c = 0;
        if (a->kind == EX_BINARY && a->op == BIN_ADD && a->b->kind == EX_INT) {
            mul = a->a;
            c = a->b->ival;
        }
        if (c >= 0 && c < b->ival && mul->kind == EX_BINARY && mul->op == BIN_MUL && mul->a->kind == EX_VAR &&
            mul->b->kind == EX_INT && mul->b->ival == b->ival)
            return op == BIN_MOD ? ex_int(L, c) : mul->a;
    }
    if (t == DT_INT64 && a->dtype == DT_INT64) {
        if (op == BIN_ADD && is_int_const(a, 0))
            return b;
        if ((op == BIN_ADD || op == BIN_SUB) && is_int_const(b, 0))
            return a;
        if (op == BIN_MUL && (is_int_const(a, 0) || is_int_const(b, 0)))
            return ex_int(L, 0);
        if (op == BIN_MUL && is_int_const(a, 1))
            return b;
        if ((op == BIN_MUL || op == BIN_DIV || op == BIN_FLOORDIV) && is_int_const(b, 1))
            return a;
    }
    e = new_expr(L, EX_BINARY, is_cmp_or_logic(op) ? DT_BOOL : t);
    e->op = (int)op;
    e->a = a;
    e->b = b;
    return e;
}

Expr *ex_select(Lower *L, Expr *cond, Expr *a, Expr *b)
{
    Expr *e;
    if (cond->kind == EX_INT)
        return cond->ival ? a : ex_cast(L, a->dtype, b);
    if (b->dtype != a->dtype)
        b = ex_cast(L, a->dtype, b);
    e = new_expr(L, EX_SELECT, a->dtype);
    e->a = cond;
    e->b = a;
    e->c = b;
    return e;
}

Expr *ex_cast(Lower *L, DType t, Expr *a)
{
    Expr *e;
    t = dtype_compute(t);
    if (a->dtype == t)
        return a;
    if (a->kind == EX_INT && !dtype_is_float(t) && t != DT_BOOL) {
        e = ex_const_int(L, t, a->ival);
        return e;
    }
    if (a->kind == EX_INT && dtype_is_float(t))
        return ex_float(L, t, (double)a->ival);
    e = new_expr(L, EX_CAST, t);
    e->a = a;
    return e;
}

Expr *ex_add(Lower *L, Expr *a, Expr *b) { return ex_binary(L, BIN_ADD, a, b); }
Expr *ex_sub(Lower *L, Expr *a, Expr *b) { return ex_binary(L, BIN_SUB, a, b); }
Expr *ex_mul(Lower *L, Expr *a, Expr *b) { return ex_binary(L, BIN_MUL, a, b); }
Expr *ex_lt(Lower *L, Expr *a, Expr *b) { return ex_binary(L, BIN_LT, a, b); }

Expr *ex_and(Lower *L, Expr *a, Expr *b)
{
    if (a->kind == EX_INT)
        return a->ival ? b : a;
    if (b->kind == EX_INT)
        return b->ival ? a : b;
    return ex_binary(L, BIN_AND, a, b);
}

Expr *ex_var_id(Lower *L, int var)
{
    Expr *e = new_expr(L, EX_VAR, DT_INT64);
    e->var = var;
    return e;
}

Expr *ex_with(Lower *L, const Expr *e, Expr *a, Expr *b, Expr *c)
{
    Expr *n = lower_alloc(L, sizeof *n);
    *n = *e;
    n->a = a;
    n->b = b;
    n->c = c;
    return n;
}

/* ---- statements ---- */

Stmt *st_new(Lower *L, StmtKind kind, int n_body)
{
    Stmt *s = lower_alloc(L, sizeof *s);
    s->kind = kind;
    s->n_body = n_body;
    if (n_body)
        s->body = lower_alloc(L, (size_t)n_body * sizeof *s->body);
    return s;
}

Stmt *st_seq(Lower *L, int n_body)
{
    return st_new(L, ST_SEQ, n_body);
}

Stmt *st_loop(Lower *L, int var, int64_t extent, Stmt *body)
{
    Stmt *s = st_new(L, ST_FOR, 1);
    s->var = var;
    s->extent = extent;
    s->body[0] = body;
    return s;
}

Stmt *st_for(Lower *L, const IterVar *iv, Stmt *body)
{
    return st_loop(L, iv->var, iv->extent, body);
}

Stmt *st_store(Lower *L, int buf, Expr *index, Expr *value)
{
    Stmt *s = st_new(L, ST_STORE, 0);
    DType t = dtype_compute(L->k->bufs[buf].dtype);
    s->buf = buf;
    s->index = index;
    if (t == DT_BOOL && value->dtype != DT_BOOL)
        value = ex_binary(L, BIN_NE, value, value->kind == EX_FLOAT || dtype_is_float(value->dtype)
                                                 ? ex_float(L, value->dtype, 0.0)
                                                 : ex_const_int(L, value->dtype, 0));
    s->value = ex_cast(L, t, value);
    L->k->bufs[buf].written = 1;
    return s;
}

Stmt *st_if_else(Lower *L, Expr *cond, Stmt *then, Stmt *els)
{
    Stmt *s;
    if (cond->kind == EX_INT)
        return cond->ival ? then : els ? els : st_seq(L, 0);
    s = st_new(L, ST_IF, els ? 2 : 1);
    s->cond = cond;
    s->body[0] = then;
    if (els)
        s->body[1] = els;
    return s;
}

Stmt *st_if(Lower *L, Expr *cond, Stmt *then)
{
    return st_if_else(L, cond, then, NULL);
}

Stmt *st_decl(Lower *L, int buf, Stmt *body)
{
    Stmt *s = st_new(L, ST_DECL, 1);
    s->buf = buf;
    s->body[0] = body;
    return s;
}

/* ---- kernels ---- */

static int add_buf(Lower *L, const char *name, DType t, int64_t numel, BufScope scope, int32_t vi)
{
    Kernel *k = L->k;
    Buffer *b;
    if (k->n_bufs == k->cap_bufs) {
        int cap = k->cap_bufs ? k->cap_bufs * 2 : 8;
        Buffer *nb = lower_alloc(L, (size_t)cap * sizeof *nb);
        if (k->n_bufs)
            memcpy(nb, k->bufs, (size_t)k->n_bufs * sizeof *nb);
        k->bufs = nb;
        k->cap_bufs = cap;
    }
    b = &k->bufs[k->n_bufs];
    b->name = name ? name : arena_printf(L->arena, "b%d", k->n_bufs);
    b->dtype = t;
    b->numel = numel;
    b->scope = scope;
    b->value = vi;
    return k->n_bufs++;
}

int lower_buf_value(Lower *L, int32_t vi)
{
    Graph *g = L->g;
    const Value *v = &g->values[vi];
    BufScope scope = BUF_ARENA;
    int i;
    for (i = 0; i < L->k->n_bufs; i++)
        if (L->k->bufs[i].value == vi)
            return i;
    for (i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == vi)
            scope = BUF_OUTPUT;
    if (v->data)
        scope = BUF_CONST;
    else if (v->input_index >= 0)
        scope = BUF_INPUT;
    return add_buf(L, NULL, v->dtype, value_numel(v), scope, vi);
}

int lower_buf_temp(Lower *L, const char *name, DType t, int64_t numel)
{
    (void)name;
    return add_buf(L, NULL, t, numel, BUF_TEMP, -1);
}

IterVar lower_itervar(Lower *L, const char *name, int64_t extent)
{
    Kernel *k = L->k;
    IterVar iv;
    if (k->n_vars == k->cap_vars) {
        int cap = k->cap_vars ? k->cap_vars * 2 : 16;
        const char **nv = lower_alloc(L, (size_t)cap * sizeof *nv);
        if (k->n_vars)
            memcpy(nv, k->var_names, (size_t)k->n_vars * sizeof *nv);
        k->var_names = nv;
        k->cap_vars = cap;
    }
    iv.var = k->n_vars;
    iv.extent = extent;
    iv.name = arena_printf(L->arena, "%s%d", name, k->n_vars);
    k->var_names[k->n_vars++] = iv.name;
    return iv;
}

Compute *lower_stage(Lower *L, const char *name, int out_buf, int rank, const int64_t *dims)
{
    Kernel *k = L->k;
    Compute *c;
    int i;
    if (rank < 0 || rank > TVMCC_MAX_RANK)
        die("lower_stage: bad rank %d", rank);
    if (k->n_stages == k->cap_stages) {
        int cap = k->cap_stages ? k->cap_stages * 2 : 4;
        Compute *ns = lower_alloc(L, (size_t)cap * sizeof *ns);
        if (k->n_stages)
            memcpy(ns, k->stages, (size_t)k->n_stages * sizeof *ns);
        k->stages = ns;
        k->cap_stages = cap;
    }
    c = &k->stages[k->n_stages++];
    memset(c, 0, sizeof *c);
    c->name = name;
    c->out_buf = out_buf;
    c->n_axes = rank;
    for (i = 0; i < rank; i++)
        c->axes[i] = lower_itervar(L, "i", dims[i]);
    return c;
}

IterVar *lower_raxis(Lower *L, Compute *c, int64_t extent)
{
    if (c->n_raxes >= TVMCC_MAX_RANK)
        die("too many reduce axes");
    c->raxes[c->n_raxes] = lower_itervar(L, "r", extent);
    return &c->raxes[c->n_raxes++];
}

Expr *ex_load_broadcast(Lower *L, int buf, int rank_in, const int64_t *dims_in, const Compute *c)
{
    Expr *idx[TVMCC_MAX_RANK];
    int i, off = c->n_axes - rank_in;
    if (off < 0)
        die("broadcast: input rank %d above output rank %d", rank_in, c->n_axes);
    for (i = 0; i < rank_in; i++)
        idx[i] = dims_in[i] == 1 ? ex_int(L, 0) : ex_var(L, &c->axes[off + i]);
    return ex_load_nd(L, buf, rank_in, dims_in, idx);
}

Compute *lower_elemwise_stage(Lower *L, Node *n, int32_t out)
{
    const Value *v = &L->g->values[out];
    (void)n;
    return lower_stage(L, "compute", lower_buf_value(L, out), v->rank, v->dims);
}
