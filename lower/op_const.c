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
    const Attr *a = node_attr(n, "value");
    Compute *c;
    if (o->data)
        return 0;
    c = lower_elemwise_stage(L, n, n->out[0]);
    if (a && a->type == ATTR_TENSOR && a->t && a->t->data) {
        /* the fill value is a one-element constant: read it as a weight */
        Tensor *t = a->t;
        double f = 0;
        int64_t iv = 0;
        switch (t->dtype) {
        case DT_FLOAT32: f = *(const float *)t->data; break;
        case DT_FLOAT64: f = *(const double *)t->data; break;
        case DT_INT8: iv = *(const int8_t *)t->data; break;
        case DT_INT16: iv = *(const int16_t *)t->data; break;
        case DT_INT32: iv = *(const int32_t *)t->data; break;
        case DT_INT64: iv = *(const int64_t *)t->data; break;
        case DT_UINT8: case DT_BOOL: iv = *(const uint8_t *)t->data; break;
        case DT_UINT16: iv = *(const uint16_t *)t->data; break;
        case DT_UINT32: iv = *(const uint32_t *)t->data; break;
        case DT_UINT64: iv = (int64_t)*(const uint64_t *)t->data; break;
        default:
            return diag_error(L->d, n, "value", "fill type %s is not supported at run time",
                              dtype_name(t->dtype) ? dtype_name(t->dtype) : "?");
        }
        if (t->dtype == DT_FLOAT32 || t->dtype == DT_FLOAT64)
            c->body = ex_float(L, o->dtype, f);
        else
            c->body = ex_const_int(L, dtype_compute(o->dtype), iv);
    } else {
        c->body = ex_float(L, DT_FLOAT32, 0.0);
    }
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
