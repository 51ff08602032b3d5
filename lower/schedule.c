/*
 * The naive schedule and the loop-IR printer.
 *
 * schedule_naive() turns each Compute stage of a kernel into the loop nest
 * its definition implies: one serial loop per output axis, and for a
 * reduction a scalar accumulator (a one-element BUF_LOCAL buffer) that is
 * initialised, updated across the reduce axes in order, and passed through
 * `post` before the store. Stages run in their order. This is the reference
 * every later schedule is checked against.
 */
#include "loopq.h"

#include <math.h>
#include <string.h>

static Expr *identity_of(Lower *L, ReduceOp rop, DType t)
{
    int fl = dtype_is_float(t);
    switch (rop) {
    case RED_SUM:
        return fl ? ex_float(L, t, 0.0) : ex_const_int(L, t, 0);
    case RED_PROD:
        return fl ? ex_float(L, t, 1.0) : ex_const_int(L, t, 1);
    case RED_MAX:
        if (fl)
            return ex_float(L, t, -HUGE_VAL);
        if (t == DT_BOOL)
            return ex_const_int(L, t, 0);
        return ex_const_int(L, t, dtype_is_unsigned_int(t) ? 0 : (t == DT_INT8 ? INT8_MIN : t == DT_INT16 ? INT16_MIN : t == DT_INT32 ? INT32_MIN : INT64_MIN));
    case RED_MIN:
        if (fl)
            return ex_float(L, t, HUGE_VAL);
        if (t == DT_BOOL)
            return ex_const_int(L, t, 1);
        return ex_const_int(L, t, t == DT_UINT8 ? (int64_t)UINT8_MAX : t == DT_UINT16 ? (int64_t)UINT16_MAX : t == DT_UINT32 ? (int64_t)UINT32_MAX : t == DT_UINT64 ? -1 : t == DT_INT8 ? INT8_MAX : t == DT_INT16 ? INT16_MAX : t == DT_INT32 ? INT32_MAX : INT64_MAX);
    default:
        unreachable();
    }
}

static Expr *combine(Lower *L, ReduceOp rop, Expr *acc, Expr *v)
{
    switch (rop) {
    case RED_SUM: return ex_binary(L, BIN_ADD, acc, v);
    case RED_PROD: return ex_binary(L, BIN_MUL, acc, v);
    case RED_MAX: return ex_binary(L, BIN_MAX, acc, v);
    case RED_MIN: return ex_binary(L, BIN_MIN, acc, v);
    default: unreachable();
    }
}

Expr *lower_out_index(Lower *L, const Compute *c)
{
    Expr *idx[TVMCC_MAX_RANK];
    int64_t dims[TVMCC_MAX_RANK];
    int i;
    if (c->out_index)
        return c->out_index;
    for (i = 0; i < c->n_axes; i++) {
        idx[i] = ex_var(L, &c->axes[i]);
        dims[i] = c->axes[i].extent;
    }
    return ex_offset(L, c->n_axes, dims, idx);
}

static Stmt *lower_compute(Lower *L, const Compute *c)
{
    Expr *index = lower_out_index(L, c);
    Stmt *inner;
    int i;
    if (c->rop == RED_NONE) {
        if (c->n_raxes)
            die("stage '%s' has reduce axes but no reduce op", c->name);
        inner = st_store(L, c->out_buf, index, c->body);
    } else {
        DType t = c->body->dtype;
        int acc = lower_buf_temp(L, "acc", t, 1);
        Expr *accv;
        Stmt *upd, *seq;
        L->k->bufs[acc].scope = BUF_LOCAL;
        accv = ex_load(L, acc, ex_int(L, 0));
        upd = st_store(L, acc, ex_int(L, 0), combine(L, c->rop, accv, c->body));
        for (i = c->n_raxes - 1; i >= 0; i--)
            upd = st_for(L, &c->raxes[i], upd);
        seq = st_seq(L, 3);
        seq->body[0] = st_store(L, acc, ex_int(L, 0),
                                c->init ? ex_cast(L, t, c->init) : identity_of(L, c->rop, t));
        seq->body[1] = upd;
        seq->body[2] = st_store(L, c->out_buf, index, c->post ? lq_subst(L, c->post, NULL, accv) : accv);
        inner = st_decl(L, acc, seq);
    }
    for (i = c->n_axes - 1; i >= 0; i--)
        inner = st_for(L, &c->axes[i], inner);
    return inner;
}

Stmt *schedule_naive(Lower *L)
{
    Kernel *k = L->k;
    Stmt *s = st_seq(L, k->n_stages);
    int i;
    for (i = 0; i < k->n_stages; i++)
        s->body[i] = lower_compute(L, &k->stages[i]);
    k->body = s;
    return s;
}

/* ---- printing (--dump-loops) ---- */

static const char *const unary_names[] = {
    "neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "erf", "floor", "ceil",
    "round", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "not", "bitnot", "isnan", "isinf", "sign", "recip", "log1p", "expm1",
    "e8m0_down", "e8m0_nearest", "e8m0_nearest_nosat", "e8m0_up_nosat"};
static const char *const binary_names[] = {
    "+", "-", "*", "/", "%", "floordiv", "pow", "min", "max", "==", "!=", "<", "<=",
    ">", ">=", "&&", "||", "xor", "&", "|", "^", "<<", ">>"};

const char *te_unary_name(int op) { return unary_names[op]; }
const char *te_binary_name(int op) { return binary_names[op]; }

void expr_dump(const Kernel *k, const Expr *e, FILE *f)
{
    switch (e->kind) {
    case EX_INT:
        fprintf(f, "%lld", (long long)e->ival);
        break;
    case EX_FLOAT:
        fprintf(f, "%.9g%s", e->fval, e->dtype == DT_FLOAT64 ? "" : "f");
        break;
    case EX_VAR:
        fprintf(f, "%s", k->var_names[e->var]);
        break;
    case EX_ACC:
        fprintf(f, "acc");
        break;
    case EX_LOAD:
        fprintf(f, "%s[", k->bufs[e->buf].name);
        expr_dump(k, e->a, f);
        fprintf(f, "]");
        break;
    case EX_UNARY:
        fprintf(f, "%s(", unary_names[e->op]);
        expr_dump(k, e->a, f);
        fprintf(f, ")");
        break;
    case EX_BINARY:
        if (e->op == BIN_FLOORDIV || e->op == BIN_POW || e->op == BIN_MIN || e->op == BIN_MAX ||
            e->op == BIN_XOR) {
            fprintf(f, "%s(", binary_names[e->op]);
            expr_dump(k, e->a, f);
            fprintf(f, ", ");
            expr_dump(k, e->b, f);
            fprintf(f, ")");
        } else {
            fprintf(f, "(");
            expr_dump(k, e->a, f);
            fprintf(f, " %s ", binary_names[e->op]);
            expr_dump(k, e->b, f);
            fprintf(f, ")");
        }
        break;
    case EX_SELECT:
        fprintf(f, "select(");
        expr_dump(k, e->a, f);
        fprintf(f, ", ");
        expr_dump(k, e->b, f);
        fprintf(f, ", ");
        expr_dump(k, e->c, f);
        fprintf(f, ")");
        break;
    case EX_CAST:
        fprintf(f, "%s(", dtype_name(e->dtype));
        expr_dump(k, e->a, f);
        fprintf(f, ")");
        break;
    }
}

static void stmt_dump(const Kernel *k, const Stmt *s, int depth, FILE *f)
{
    static const char *const kinds[] = {"", "unrolled ", "vectorized ", "parallel ", "tensorized "};
    int i;
    if (!s)
        return;
    switch (s->kind) {
    case ST_SEQ:
        for (i = 0; i < s->n_body; i++)
            stmt_dump(k, s->body[i], depth, f);
        break;
    case ST_FOR:
        fprintf(f, "%*s%sfor %s in 0..%lld", depth * 2, "", kinds[s->for_kind], k->var_names[s->var],
                (long long)s->extent);
        if (s->prefetch)
            fprintf(f, " prefetch +%lld", (long long)s->prefetch);
        if (s->prefetch_l2)
            fprintf(f, " prefetch-l2 +%lld", (long long)s->prefetch_l2);
        if (s->for_kind == FOR_PARALLEL && s->chunk > 1)
            fprintf(f, " chunk %lld", (long long)s->chunk);
        fprintf(f, ":\n");
        stmt_dump(k, s->body[0], depth + 1, f);
        break;
    case ST_STORE:
        fprintf(f, "%*s%s[", depth * 2, "", k->bufs[s->buf].name);
        expr_dump(k, s->index, f);
        fprintf(f, "] = ");
        expr_dump(k, s->value, f);
        fprintf(f, "\n");
        break;
    case ST_IF:
        fprintf(f, "%*sif ", depth * 2, "");
        expr_dump(k, s->cond, f);
        fprintf(f, ":\n");
        stmt_dump(k, s->body[0], depth + 1, f);
        if (s->n_body > 1 && s->body[1]) {
            fprintf(f, "%*selse:\n", depth * 2, "");
            stmt_dump(k, s->body[1], depth + 1, f);
        }
        break;
    case ST_DECL:
        fprintf(f, "%*slocal %s %s[%lld]\n", depth * 2, "", dtype_name(k->bufs[s->buf].dtype),
                k->bufs[s->buf].name, (long long)k->bufs[s->buf].numel);
        stmt_dump(k, s->body[0], depth, f);
        break;
    }
}

void loops_dump(const Kernel *k, FILE *f)
{
    static const char *const scopes[] = {"input", "output", "const", "arena", "temp", "local", "unused"};
    int i;
    fprintf(f, "kernel %s  // %s\n", k->name, k->origin ? k->origin : "");
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].scope != BUF_LOCAL && k->bufs[i].scope != BUF_UNUSED)
            fprintf(f, "  buffer %s: %s[%lld] %s\n", k->bufs[i].name, dtype_name(k->bufs[i].dtype),
                    (long long)k->bufs[i].numel, scopes[k->bufs[i].scope]);
    if (k->ext) {
        fprintf(f, "  call %s\n", k->ext->fn);
        return;
    }
    stmt_dump(k, k->body, 1, f);
}
