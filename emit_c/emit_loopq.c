/*
 * Queries on loop IR shared by the printers of target intrinsics
 * (emit_intrin.c for x86, emit_arm.c for Arm): variable uses, affine
 * coefficients, structural equality and stores.
 */
#include "emit_loopq.h"

int lq_uses_var(const Expr *e, int var)
{
    if (!e)
        return 0;
    if (e->kind == EX_VAR && e->var == var)
        return 1;
    return lq_uses_var(e->a, var) || lq_uses_var(e->b, var) || lq_uses_var(e->c, var);
}

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

int lq_stored_at(const Stmt *s, int buf, const Expr **idx)
{
    int i;
    if (!s)
        return 0;
    if (s->kind == ST_STORE && s->buf == buf) {
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
    const Expr *idx;
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && lq_stored_at(body, e->buf, &idx))
        return 1;
    return lq_loads_stored(body, e->a) || lq_loads_stored(body, e->b) ||
           lq_loads_stored(body, e->c);
}

void lq_print_else(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit, const Stmt **fallback)
{
    const Stmt *prev = *fallback;
    fprintf(f, "#else\n");
    *fallback = s;
    emit(pr, f, k, s, depth);
    *fallback = prev;
    fprintf(f, "#endif\n");
}
