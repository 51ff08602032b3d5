/*
 * Lowering of the operators inference usually turns into constants
 * (frontend/infer_const.c): Shape, Size and Constant always are (their
 * output has data, so they need no code), as are ConstantOfShape and Range
 * with constant inputs; when the inputs of the last two are run-time values
 * they become a fill stage and an arithmetic stage.
 */
#include "lower.h"

static const Value *val(Lower *L, int32_t vi)
{
    return &L->g->values[vi];
}

/* Ops folded by inference: their output is a constant and needs no code.
 * Should one still reach lowering without data, inference went wrong. */
static int folded(Lower *L, Node *n)
{
    if (!val(L, n->out[0])->data)
        die("%s '%s' reached lowering without a folded value", n->op_type, n->name);
    return 0;
}

int lower_Shape(Lower *L, Node *n) { return folded(L, n); }
int lower_Size(Lower *L, Node *n) { return folded(L, n); }
int lower_Constant(Lower *L, Node *n) { return folded(L, n); }

int lower_ConstantOfShape(Lower *L, Node *n)
{
    const Value *o = val(L, n->out[0]);
    const ScalarParams *p = node_scalar(n);
    DType t = (DType)p->fill_dtype;
    Compute *c;
    if (o->data)
        return 0;
    c = lower_elemwise_stage(L, n, n->out[0]);
    if (t == DT_UNDEF)
        c->body = ex_float(L, DT_FLOAT32, 0.0);
    else if (t == DT_FLOAT32 || t == DT_FLOAT64)
        c->body = ex_float(L, o->dtype, p->fill);
    else if (dtype_is_float(t) || t == DT_STRING || !dtype_size(t)) /* float16... */
        return diag_error(L->d, n, "value", "fill type %s is not supported at run time",
                          dtype_name(t) ? dtype_name(t) : "?");
    else
        c->body = ex_const_int(L, dtype_compute(o->dtype), p->fill_int);
    return 0;
}

/* out[i] = start + i * delta with the scalars loaded at run time. */
int lower_Range(Lower *L, Node *n)
{
    const Value *o = val(L, n->out[0]);
    Compute *c;
    Expr *s, *dl;
    if (o->data)
        return 0;
    c = lower_elemwise_stage(L, n, n->out[0]);
    s = ex_load(L, lower_buf_value(L, n->in[0]), ex_int(L, 0));
    dl = ex_load(L, lower_buf_value(L, n->in[2]), ex_int(L, 0));
    c->body = ex_add(L, s, ex_mul(L, ex_cast(L, s->dtype, ex_var(L, &c->axes[0])), dl));
    return 0;
}
