/*
 * Vector loops printed as x86 intrinsics (see emit_intrin.h).
 *
 * A loop over v with extent LANES qualifies when its body is a sequence of
 * float32 stores in which
 *   - every store index is v + (something invariant in v),
 *   - every value is built from float32 +, -, *, /, min, max and casts
 *     float32 -> float32 of: loads at v + invariant (one vector load),
 *     and subexpressions invariant in v (one broadcast),
 *   - a buffer the body stores is loaded only at that same index, and no
 *     buffer shares memory with another (in-place reuse).
 * Then lane l of every vector operation is exactly iteration v = l of the
 * scalar loop, statement by statement, so the results do not change: min
 * and max keep tvmrt_minf/maxf's NaN rule, and a*b + c stays a separate
 * multiply and add that the compiler contracts exactly as it contracts the
 * scalar code. The body is printed once with v bound to 0, so each index
 * names lane 0's element.
 */
#include "emit_intrin.h"

#include <string.h>

#include "emit.h"

typedef struct Isa {
    const char *p;    /* intrinsic prefix: "_mm512" or "_mm256" */
} Isa;

int emit_intrin_lanes(const Target *t)
{
    if (!t || !t->isa || strcmp(t->isa, "x86-64"))
        return 0;
    if (t->vector_bits >= 512)
        return 16;
    if (t->vector_bits >= 256)
        return 8;
    return 0;
}

static int uses_var(const Expr *e, int var)
{
    if (!e)
        return 0;
    if (e->kind == EX_VAR && e->var == var)
        return 1;
    return uses_var(e->a, var) || uses_var(e->b, var) || uses_var(e->c, var);
}

/* Coefficient of var in an affine int64 index; 0 with *ok cleared when the
 * index is not affine in var. */
static int64_t coef(const Expr *e, int var, int *ok)
{
    if (!e || !uses_var(e, var))
        return 0;
    if (e->kind == EX_VAR)
        return 1;
    if (e->kind == EX_BINARY && e->dtype == DT_INT64) {
        switch (e->op) {
        case BIN_ADD: return coef(e->a, var, ok) + coef(e->b, var, ok);
        case BIN_SUB: return coef(e->a, var, ok) - coef(e->b, var, ok);
        case BIN_MUL:
            if (e->a->kind == EX_INT)
                return e->a->ival * coef(e->b, var, ok);
            if (e->b->kind == EX_INT)
                return e->b->ival * coef(e->a, var, ok);
            break;
        default:
            break;
        }
    }
    *ok = 0;
    return 0;
}

static int unit_stride(const Expr *idx, int var)
{
    int ok = 1;
    int64_t c = coef(idx, var, &ok);
    return ok && c == 1;
}

static int same_expr(const Expr *a, const Expr *b)
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
    return same_expr(a->a, b->a) && same_expr(a->b, b->b) && same_expr(a->c, b->c);
}

static int stored_at(const Stmt *body, int buf, const Expr **idx)
{
    int i;
    if (body->kind == ST_STORE) {
        if (body->buf == buf) {
            *idx = body->index;
            return 1;
        }
        return 0;
    }
    for (i = 0; i < body->n_body; i++)
        if (stored_at(body->body[i], buf, idx))
            return 1;
    return 0;
}

/* Whether e loads a buffer that body stores. */
static int loads_stored(const Stmt *body, const Expr *e)
{
    const Expr *idx;
    if (!e)
        return 0;
    if (e->kind == EX_LOAD && stored_at(body, e->buf, &idx))
        return 1;
    return loads_stored(body, e->a) || loads_stored(body, e->b) || loads_stored(body, e->c);
}

static int vec_expr_ok(const Kernel *k, const Stmt *body, const Expr *e, int var)
{
    const Expr *sidx;
    if (!e || e->dtype != DT_FLOAT32)
        return 0;
    if (!uses_var(e, var))
        return !loads_stored(body, e);
    switch (e->kind) {
    case EX_LOAD:
        if (k->bufs[e->buf].dtype != DT_FLOAT32 || k->bufs[e->buf].inplace)
            return 0;
        if (!unit_stride(e->a, var))
            return 0;
        if (stored_at(body, e->buf, &sidx) && !same_expr(sidx, e->a))
            return 0;
        return 1;
    case EX_BINARY:
        switch (e->op) {
        case BIN_ADD: case BIN_SUB: case BIN_MUL: case BIN_DIV: case BIN_MIN: case BIN_MAX:
            return vec_expr_ok(k, body, e->a, var) && vec_expr_ok(k, body, e->b, var);
        default:
            return 0;
        }
    case EX_CAST:
        return vec_expr_ok(k, body, e->a, var);
    default:
        return 0;
    }
}

static int vec_stmt_ok(const Kernel *k, const Stmt *body, const Stmt *s, int var)
{
    int i;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            if (!vec_stmt_ok(k, body, s->body[i], var))
                return 0;
        return 1;
    }
    if (s->kind != ST_STORE)
        return 0;
    if (k->bufs[s->buf].dtype != DT_FLOAT32 || k->bufs[s->buf].inplace)
        return 0;
    if (k->bufs[s->buf].scope == BUF_LOCAL && k->bufs[s->buf].numel == 1)
        return 0;
    return unit_stride(s->index, var) && vec_expr_ok(k, body, s->value, var);
}

static void indent(FILE *f, int depth)
{
    fprintf(f, "%*s", depth * 4, "");
}

static void vec_expr(FILE *f, const Kernel *k, const Isa *x, const Expr *e, int var)
{
    static const char *const names[] = {"add", "sub", "mul", "div"};
    if (!uses_var(e, var)) {
        fprintf(f, "%s_set1_ps(", x->p);
        emit_expr(f, k, e);
        fprintf(f, ")");
        return;
    }
    switch (e->kind) {
    case EX_LOAD:
        fprintf(f, "%s_loadu_ps(&%s[", x->p, k->bufs[e->buf].name);
        emit_index(f, k, e->a, 0);
        fprintf(f, "])");
        return;
    case EX_CAST:
        vec_expr(f, k, x, e->a, var);
        return;
    case EX_BINARY:
        if (e->op == BIN_MIN || e->op == BIN_MAX) {
            /* tvmrt_maxf(a, b) = (a > b || a != a) ? a : b, lane-wise */
            const char *cmp = e->op == BIN_MIN ? "_CMP_LT_OQ" : "_CMP_GT_OQ";
            if (!strcmp(x->p, "_mm512")) {
                fprintf(f, "_mm512_mask_blend_ps(_mm512_cmp_ps_mask(");
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(f, k, x, e->b, var);
                fprintf(f, ", %s) | _mm512_cmp_ps_mask(", cmp);
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ", _CMP_UNORD_Q), ");
                vec_expr(f, k, x, e->b, var);
                fprintf(f, ", ");
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ")");
            } else {
                fprintf(f, "_mm256_blendv_ps(");
                vec_expr(f, k, x, e->b, var);
                fprintf(f, ", ");
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ", _mm256_or_ps(_mm256_cmp_ps(");
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(f, k, x, e->b, var);
                fprintf(f, ", %s), _mm256_cmp_ps(", cmp);
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ", ");
                vec_expr(f, k, x, e->a, var);
                fprintf(f, ", _CMP_UNORD_Q)))");
            }
            return;
        }
        fprintf(f, "%s_%s_ps(", x->p, names[e->op - BIN_ADD]);
        vec_expr(f, k, x, e->a, var);
        fprintf(f, ", ");
        vec_expr(f, k, x, e->b, var);
        fprintf(f, ")");
        return;
    default:
        unreachable();
    }
}

static void vec_stmt(FILE *f, const Kernel *k, const Isa *x, const Stmt *s, int var, int depth)
{
    int i;
    if (s->kind == ST_SEQ) {
        for (i = 0; i < s->n_body; i++)
            vec_stmt(f, k, x, s->body[i], var, depth);
        return;
    }
    indent(f, depth);
    fprintf(f, "%s_storeu_ps(&%s[", x->p, k->bufs[s->buf].name);
    emit_index(f, k, s->index, 0);
    fprintf(f, "], ");
    vec_expr(f, k, x, s->value, var);
    fprintf(f, ");\n");
}

int emit_intrin_loop(FILE *f, const Kernel *k, const Stmt *loop, int depth, int lanes)
{
    Isa x;
    if (!lanes || loop->kind != ST_FOR || loop->extent != lanes || !loop->body[0])
        return 0;
    if (!vec_stmt_ok(k, loop->body[0], loop->body[0], loop->var))
        return 0;
    x.p = lanes == 16 ? "_mm512" : "_mm256";
    indent(f, depth);
    fprintf(f, "{\n");
    indent(f, depth + 1);
    fprintf(f, "const int32_t %s = 0; /* lane 0 of a %d-lane vector */\n", k->var_names[loop->var], lanes);
    vec_stmt(f, k, &x, loop->body[0], loop->var, depth + 1);
    indent(f, depth);
    fprintf(f, "}\n");
    return 1;
}
