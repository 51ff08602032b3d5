/*
 * Type and shape inference for the operators whose result is known at
 * compile time from shapes or attributes alone: Shape (with the start/end
 * of opset 15), Size, Constant (value and the value_float(s)/value_int(s)
 * spellings; strings and sparse tensors are rejected), and ConstantOfShape
 * and Range when their inputs are constants. These set the output's data
 * (arena-allocated, dense storage bytes) here, so that shape-like inputs
 * further down can be read with value_const_ints(); every other op is
 * folded later by running its lowered kernel. When the inputs of
 * ConstantOfShape or Range are run-time values the output falls back to
 * its declared shape and lower/op_const.c emits a fill / arithmetic stage.
 */
#include "infer.h"
#include "limits.h"

#include <math.h>
#include <string.h>

/* Attaches zeroed constant storage for output vi (already value_set). */
/* Whether a generated constant is too large to fold (limits.h). */
static int too_big_to_fold(const Graph *g, int32_t vi)
{
    const Value *v = &g->values[vi];
    return value_numel(v) * (int64_t)dtype_size(v->dtype) > FOLD_EXPAND_LIMIT_BYTES;
}

static void *alloc_data(Graph *g, Node *n, int32_t vi, Diag *d)
{
    Value *v = &g->values[vi];
    int64_t numel = value_numel(v);
    void *p;
    if (numel < 0)
        return NULL;
    p = arena_array(g->arena, (size_t)(numel ? numel : 1), dtype_size(v->dtype));
    if (!p)
        diag_error(d, n, v->name, "constant of %lld elements exceeds the memory budget",
                   (long long)numel);
    v->data = p;
    return p;
}

int infer_Shape(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    int64_t s, e, len, *p;
    int i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    s = attr_int(n, "start", 0, d);
    e = attr_int(n, "end", x->rank, d);
    if (s < 0)
        s += x->rank;
    if (e < 0)
        e += x->rank;
    s = s < 0 ? 0 : s > x->rank ? x->rank : s;
    e = e < 0 ? 0 : e > x->rank ? x->rank : e;
    len = e > s ? e - s : 0;
    if (value_set(g, n->out[0], DT_INT64, 1, &len, d, n))
        return 1;
    if (!(p = alloc_data(g, n, n->out[0], d)))
        return 1;
    for (i = 0; i < len; i++)
        p[i] = x->dims[s + i];
    return 0;
}

int infer_Size(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    int64_t *p;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    if (value_set(g, n->out[0], DT_INT64, 0, NULL, d, n))
        return 1;
    if (!(p = alloc_data(g, n, n->out[0], d)))
        return 1;
    p[0] = value_numel(x);
    return 0;
}

int infer_Constant(Graph *g, Node *n, Diag *d)
{
    int i, rc;
    const Attr *a = NULL;
    if (infer_need_output(g, n, 0, d))
        return 1;
    for (i = 0; i < n->n_attr; i++) {
        const char *nm = n->attr[i].name;
        if (!strcmp(nm, "value") || !strcmp(nm, "value_float") || !strcmp(nm, "value_floats") ||
            !strcmp(nm, "value_int") || !strcmp(nm, "value_ints"))
            a = &n->attr[i];
        else if (!strcmp(nm, "value_string") || !strcmp(nm, "value_strings"))
            return diag_error(d, n, nm, "string constants are not supported");
        else if (!strcmp(nm, "sparse_value"))
            return diag_error(d, n, nm, "sparse constants are not supported");
    }
    if (!a)
        return diag_error(d, n, "value", "Constant has no value attribute");
    if (!strcmp(a->name, "value")) {
        const Tensor *t = a->t;
        if (a->type != ATTR_TENSOR || !t)
            return diag_error(d, n, "value", "must be a tensor attribute");
        if (t->dtype == DT_STRING)
            return diag_error(d, n, "value", "string constants are not supported");
        if (!dtype_size(t->dtype) || (!t->data && t->numel > 0))
            return diag_error(d, n, "value", "element type %d is not supported", (int)t->dtype);
        if (value_set(g, n->out[0], t->dtype, t->rank, t->dims, d, n))
            return 1;
        if (t->data) {
            g->values[n->out[0]].data = t->data;
            return 0;
        }
        return alloc_data(g, n, n->out[0], d) ? 0 : 1;
    }
    if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
        int isf = a->name[6] == 'f';
        if (a->type != (isf ? ATTR_FLOAT : ATTR_INT))
            return diag_error(d, n, a->name, "has the wrong attribute type");
        rc = value_set(g, n->out[0], isf ? DT_FLOAT32 : DT_INT64, 0, NULL, d, n);
        if (rc || !alloc_data(g, n, n->out[0], d))
            return 1;
        if (isf)
            ((float *)g->values[n->out[0]].data)[0] = (float)a->f;
        else
            ((int64_t *)g->values[n->out[0]].data)[0] = a->i;
        return 0;
    }
    {
        int isf = a->name[6] == 'f';
        int64_t k, cnt = a->n;
        if (a->type != (isf ? ATTR_FLOATS : ATTR_INTS))
            return diag_error(d, n, a->name, "has the wrong attribute type");
        rc = value_set(g, n->out[0], isf ? DT_FLOAT32 : DT_INT64, 1, &cnt, d, n);
        if (rc || !alloc_data(g, n, n->out[0], d))
            return 1;
        for (k = 0; k < cnt; k++) {
            if (isf)
                ((float *)g->values[n->out[0]].data)[k] = (float)a->floats[k];
            else
                ((int64_t *)g->values[n->out[0]].data)[k] = a->ints[k];
        }
        return 0;
    }
}

/* ConstantOfShape's value as ScalarParams (for a fill at run time). */
static void set_fill(Graph *g, Node *n, const Tensor *t)
{
    ScalarParams p;
    const void *v = t ? t->data : NULL;
    memset(&p, 0, sizeof p);
    p.fill_dtype = (uint8_t)(t ? t->dtype : DT_UNDEF);
    switch (t ? t->dtype : DT_UNDEF) {
    case DT_FLOAT32: p.fill = *(const float *)v; break;
    case DT_FLOAT64: p.fill = *(const double *)v; break;
    case DT_INT8: p.fill_int = *(const int8_t *)v; break;
    case DT_INT16: p.fill_int = *(const int16_t *)v; break;
    case DT_INT32: p.fill_int = *(const int32_t *)v; break;
    case DT_INT64: p.fill_int = *(const int64_t *)v; break;
    case DT_UINT8: case DT_BOOL: p.fill_int = *(const uint8_t *)v; break;
    case DT_UINT16: p.fill_int = *(const uint16_t *)v; break;
    case DT_UINT32: p.fill_int = *(const uint32_t *)v; break;
    case DT_UINT64: p.fill_int = (int64_t)*(const uint64_t *)v; break;
    default: break; /* float16...: refused by the lowering, folded otherwise */
    }
    node_set_params(g, n, PARAMS_SCALAR, &p, sizeof p);
}

int infer_ConstantOfShape(Graph *g, Node *n, Diag *d)
{
    const Attr *a = node_attr(n, "value");
    const int64_t *shape;
    int64_t cnt, k, numel;
    DType dt = DT_FLOAT32;
    const void *fill = NULL;
    unsigned char *p;
    size_t sz;
    int i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    if (a) {
        if (a->type != ATTR_TENSOR || !a->t || a->t->numel != 1 || !dtype_size(a->t->dtype) ||
            a->t->dtype == DT_STRING || !a->t->data)
            return diag_error(d, n, "value", "must be a one-element tensor of a numeric type");
        dt = a->t->dtype;
        fill = a->t->data;
    }
    set_fill(g, n, a ? a->t : NULL);
    cnt = value_const_ints(g, n->in[0], &shape);
    if (cnt < 0) {
        int rc = infer_use_declared(g, n, 0, d, "shape input is computed at run time");
        if (!rc && g->values[n->out[0]].dtype != dt)
            return diag_error(d, n, "value", "type %s differs from the declared output's %s",
                              infer_type_name(dt), infer_type_name(g->values[n->out[0]].dtype));
        return rc;
    }
    if (cnt > TVMCC_MAX_RANK)
        return diag_error(d, n, "input", "rank %lld exceeds the supported %d", (long long)cnt,
                          TVMCC_MAX_RANK);
    for (i = 0; i < (int)cnt; i++)
        if (shape[i] < 0)
            return diag_error(d, n, "input", "entry %d is negative", i);
    if (value_set(g, n->out[0], dt, (int)cnt, shape, d, n))
        return 1;
    if (too_big_to_fold(g, n->out[0]))
        return 0; /* filled at run time */
    if (!(p = alloc_data(g, n, n->out[0], d)))
        return 1;
    numel = value_numel(&g->values[n->out[0]]);
    sz = dtype_size(dt);
    if (fill)
        for (k = 0; k < numel; k++)
            memcpy(p + (size_t)k * sz, fill, sz);
    return 0;
}

/* Stores v (given as double or int64 by the type) at element i of p. */
static void store_num(DType t, void *p, int64_t i, double f, int64_t v)
{
    switch (t) {
    case DT_FLOAT32: ((float *)p)[i] = (float)f; break;
    case DT_FLOAT64: ((double *)p)[i] = f; break;
    case DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DT_INT64: ((int64_t *)p)[i] = v; break;
    default: unreachable();
    }
}

int infer_Range(Graph *g, Node *n, Diag *d)
{
    Value *s = in_val(g, n, 0);
    DType t = s ? s->dtype : DT_UNDEF;
    int64_t count = 0, k;
    int i;
    void *p;
    for (i = 0; i < 3; i++) {
        Value *v;
        if (need_input(g, n, i, d))
            return 1;
        v = in_val(g, n, i);
        if (v->dtype != t)
            return diag_error(d, n, i == 1 ? "limit" : "delta", "type %s differs from start's %s",
                              infer_type_name(v->dtype), infer_type_name(t));
        if (value_numel(v) != 1)
            return diag_error(d, n, i == 0 ? "start" : i == 1 ? "limit" : "delta",
                              "must be a scalar");
    }
    if (t != DT_FLOAT32 && t != DT_FLOAT64 && t != DT_INT16 && t != DT_INT32 && t != DT_INT64)
        return diag_error(d, n, "start", "type %s is not supported by Range", infer_type_name(t));
    if (!g->values[n->in[0]].data || !g->values[n->in[1]].data || !g->values[n->in[2]].data)
        return infer_use_declared_as(g, n, 0, t, d, "Range inputs are computed at run time");
    if (dtype_is_float(t)) {
        double a, b, c, q;
        value_const_double(g, n->in[0], &a);
        value_const_double(g, n->in[1], &b);
        value_const_double(g, n->in[2], &c);
        if (c == 0 || !isfinite(a) || !isfinite(b) || !isfinite(c))
            return diag_error(d, n, "delta", "start, limit and delta must be finite and delta "
                              "non-zero");
        q = ceil((b - a) / c);
        if (q > 2147483647.0)
            return diag_error(d, n, "limit", "Range would have too many elements");
        count = q > 0 ? (int64_t)q : 0;
        if (value_set(g, n->out[0], t, 1, &count, d, n))
            return 1;
        if (too_big_to_fold(g, n->out[0]))
            return 0; /* computed at run time */
        if (!(p = alloc_data(g, n, n->out[0], d)))
            return 1;
        for (k = 0; k < count; k++)
            store_num(t, p, k, a + (double)k * c, 0);
    } else {
        const int64_t *a, *b, *c;
        int64_t diff, q;
        value_const_ints(g, n->in[0], &a);
        value_const_ints(g, n->in[1], &b);
        value_const_ints(g, n->in[2], &c);
        if (c[0] == 0)
            return diag_error(d, n, "delta", "must be non-zero");
        if (a[0] == INT64_MIN || ck_add(b[0], -a[0], &diff))
            return diag_error(d, n, "limit", "limit - start overflows");
        q = diff / c[0];
        if (diff % c[0] != 0 && ((diff > 0) == (c[0] > 0)))
            q++;
        count = q > 0 ? q : 0;
        if (count > 2147483647)
            return diag_error(d, n, "limit", "Range would have too many elements");
        if (value_set(g, n->out[0], t, 1, &count, d, n))
            return 1;
        if (too_big_to_fold(g, n->out[0]))
            return 0; /* computed at run time */
        if (!(p = alloc_data(g, n, n->out[0], d)))
            return 1;
        for (k = 0; k < count; k++)
            store_num(t, p, k, 0, a[0] + k * c[0]);
    }
    return 0;
}
