/*
 * Helpers shared by the infer_<Name>() functions: input and output access,
 * the "is this input usable" check, numpy broadcasting, axis normalisation,
 * the fallback to a declared output shape, the generic elementwise rule,
 * and the one sliding-window rule of convolutions and pooling
 * (infer_conv_window: kernel, strides, dilations, pads, auto_pad, output extent).
 * Each helper reports its own errors through the Diag, naming the node and
 * the field, so infer functions can simply return what the helper returned.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

Value *in_val(Graph *g, const Node *n, int i)
{
    if (i < 0 || i >= n->n_in || n->in[i] < 0 || n->in[i] >= g->n_values)
        return NULL;
    return &g->values[n->in[i]];
}

Value *out_val(Graph *g, const Node *n, int i)
{
    if (i < 0 || i >= n->n_out || n->out[i] < 0 || n->out[i] >= g->n_values)
        return NULL;
    return &g->values[n->out[i]];
}

int need_input(Graph *g, const Node *n, int i, Diag *d)
{
    char field[32];
    Value *v = in_val(g, n, i);
    snprintf(field, sizeof field, "input[%d]", i);
    if (!v)
        return diag_error(d, n, field, "required input is missing");
    if (v->dtype == DT_UNDEF || !dtype_size(v->dtype))
        return diag_error(d, n, field, "element type of '%s' is unknown", v->name);
    if (!value_is_static(v))
        return diag_error(d, n, field, "shape of '%s' is not static", v->name);
    return 0;
}

/* Writes "[d0,d1,...]" into buf (for messages). */
static const char *shape_str(char *buf, size_t cap, int rank, const int64_t *dims)
{
    size_t k = 0;
    int i;
    buf[k++] = '[';
    for (i = 0; i < rank && k + 24 < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (k + 2 <= cap) {
        buf[k++] = ']';
        buf[k] = 0;
    } else {
        buf[cap - 1] = 0;
    }
    return buf;
}

int infer_broadcast(const Node *n, int ra, const int64_t *da, int rb, const int64_t *db,
                    int *rout, int64_t *dout, Diag *d, const char *field)
{
    int r = ra > rb ? ra : rb, i;
    int64_t res[TVMCC_MAX_RANK]; /* dout may alias da or db */
    if (r > TVMCC_MAX_RANK || ra < 0 || rb < 0)
        return diag_error(d, n, field, "broadcast rank %d is outside 0..%d", r,
                          TVMCC_MAX_RANK);
    for (i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t a = ia >= 0 ? da[ia] : 1, b = ib >= 0 ? db[ib] : 1;
        if (a == b || b == 1)
            res[i] = a;
        else if (a == 1)
            res[i] = b;
        else {
            char sa[200], sb[200];
            return diag_error(d, n, field, "shapes %s and %s cannot be broadcast (dimension %d)",
                              shape_str(sa, sizeof sa, ra, da), shape_str(sb, sizeof sb, rb, db),
                              i);
        }
    }
    for (i = 0; i < r; i++)
        dout[i] = res[i];
    *rout = r;
    return 0;
}

void infer_set_axis(Graph *g, Node *n, int axis, const AxisParams *p)
{
    AxisParams only;
    if (!p) {
        memset(&only, 0, sizeof only);
        only.axis = axis;
        p = &only;
    }
    node_set_params(g, n, PARAMS_AXIS, p, sizeof *p);
}

int infer_set_scalar(Graph *g, Node *n, const ScalarParams *p, int errs, Diag *d)
{
    if (d->errors > errs)
        return 1;
    node_set_params(g, n, PARAMS_SCALAR, p, sizeof *p);
    return 0;
}

int infer_axis(const Node *n, int64_t axis, int rank, int *out, Diag *d, const char *field)
{
    if (axis < -(int64_t)rank || axis >= rank)
        return diag_error(d, n, field, "axis %lld is out of range for rank %d", (long long)axis,
                          rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return 0;
}

/* Rows written OP_UNARY / OP_BINARY (ir/ops.h): elementwise, one or two
 * inputs broadcast against each other. */
static const uint8_t elementwise_row[OP_COUNT] = {
    0,
#define OP(name, mi, ma, mo, mao, cat) 0,
#define OP_UNARY(name, un) 1,
#define OP_BINARY(name, bin) 1,
#include "../ir/ops.h"
#undef OP
#undef OP_UNARY
#undef OP_BINARY
};

/* Number of leading inputs of m that broadcast into its output 0, or 0
 * when m is not an elementwise operator (CastLike: only input 0, input 1
 * gives the type). */
static int broadcast_inputs(const Node *m)
{
    if ((unsigned)m->op >= OP_COUNT)
        return 0;
    if (elementwise_row[m->op])
        return m->n_in;
    switch (m->op) {
    case OP_Cast: case OP_CastLike: case OP_Identity: case OP_Abs: case OP_Relu:
    case OP_Erf: case OP_Sign: case OP_Clip:
        return 1;
    case OP_Div: case OP_Pow: case OP_Mod: case OP_BitShift: case OP_Where: case OP_Min:
    case OP_Max: case OP_Sum: case OP_Mean:
        return m->n_in;
    default:
        return 0;
    }
}

/* A value whose shape is known at this point of inference: a graph input,
 * an initializer or constant, or the output of a node already inferred. */
static int shape_known(const Graph *g, int32_t vi)
{
    const Value *v = &g->values[vi];
    if (v->producer >= 0)
        return g->nodes[v->producer].inferred;
    return value_is_static(v);
}

/* The shape of value vi (output of node ni, whose shape the node cannot
 * infer) recovered from the declared shape of a later value that provably
 * has the same shape: vi passed through elementwise operators whose other
 * operands are scalars or themselves of vi's shape (ReduceSum -> Log ->
 * CastLike in the expanded ReduceLogSum, Range -> Mul -> Cos ... in the
 * expanded window functions). The nodes are in topological order, so one
 * forward sweep finds every such value. Returns 1 and the shape when some
 * are declared, all alike; 0 otherwise. */
static int shape_from_uses(Graph *g, int32_t ni, int32_t vi, int *rank, int64_t *dims)
{
    uint8_t *same = arena_array(g->arena, (size_t)g->n_values, 1);
    int32_t j;
    int found = 0, k;
    if (!same)
        die("compile arena exhausted");
    memset(same, 0, (size_t)g->n_values);
    same[vi] = 1;
    for (j = ni + 1; j < g->n_nodes; j++) {
        const Node *m = &g->nodes[j];
        int nb = broadcast_inputs(m), any = 0, ok = 1, i;
        const Value *o;
        if (m->dead || !nb || m->n_out < 1 || m->out[0] < 0)
            continue;
        for (i = 0; i < nb && ok; i++) {
            int32_t u = m->in[i];
            if (u < 0)
                continue;
            if (same[u])
                any = 1;
            else if (!shape_known(g, u) || g->values[u].rank != 0)
                ok = 0;
        }
        if (!any || !ok)
            continue;
        same[m->out[0]] = 1;
        o = &g->values[m->out[0]];
        if (!o->declared || o->rank < 0)
            continue;
        for (k = 0; k < o->rank; k++)
            if (o->dims[k] < 0)
                break;
        if (k < o->rank)
            continue;
        if (!found) {
            *rank = o->rank;
            memcpy(dims, o->dims, (size_t)o->rank * sizeof *dims);
            found = 1;
        } else if (*rank != o->rank || memcmp(dims, o->dims, (size_t)o->rank * sizeof *dims)) {
            return 0;
        }
    }
    return found;
}

int infer_use_declared(Graph *g, Node *n, int i, Diag *d, const char *why)
{
    return infer_use_declared_as(g, n, i, DT_UNDEF, d, why);
}

int infer_use_declared_as(Graph *g, Node *n, int i, DType dt, Diag *d, const char *why)
{
    char field[32];
    Value *v = out_val(g, n, i);
    int64_t dims[TVMCC_MAX_RANK];
    int k, rank = -1;
    snprintf(field, sizeof field, "output[%d]", i);
    if (!v)
        return diag_error(d, n, field, "%s (and the output is omitted)", why);
    if (v->declared && v->dtype != DT_UNDEF && dtype_size(v->dtype) && v->rank >= 0) {
        int ok = 1;
        for (k = 0; k < v->rank; k++) {
            dims[k] = v->dims[k];
            if (dims[k] < 0)
                ok = 0;
        }
        if (ok)
            return value_set(g, n->out[i], v->dtype, v->rank, dims, d, n);
    }
    if (dt != DT_UNDEF && shape_from_uses(g, (int32_t)(n - g->nodes), n->out[i], &rank, dims) &&
        (!v->declared || v->rank < 0 || v->rank == rank))
        return value_set(g, n->out[i], dt, rank, dims, d, n);
    return diag_error(d, n, field, "%s, and '%s' has no complete declared shape in the model",
                      why, v->name);
}

int infer_elementwise(Graph *g, Node *n, Diag *d, DType dt, int same_type)
{
    int rank = 0, i, seen = 0;
    int64_t dims[TVMCC_MAX_RANK];
    DType t0 = DT_UNDEF;
    for (i = 0; i < n->n_in; i++) {
        Value *v;
        char field[32];
        if (n->in[i] < 0)
            continue;
        if (need_input(g, n, i, d))
            return 1;
        v = in_val(g, n, i);
        snprintf(field, sizeof field, "input[%d]", i);
        if (!seen) {
            t0 = v->dtype;
            rank = v->rank;
            for (int k = 0; k < rank; k++)
                dims[k] = v->dims[k];
            seen = 1;
            continue;
        }
        if (same_type && v->dtype != t0)
            return diag_error(d, n, field, "element type %s differs from the first input's %s",
                              dtype_name(v->dtype), dtype_name(t0));
        if (infer_broadcast(n, rank, dims, v->rank, v->dims, &rank, dims, d, field))
            return 1;
    }
    if (!seen)
        return diag_error(d, n, "input[0]", "required input is missing");
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], dt != DT_UNDEF ? dt : t0, rank, dims, d, n);
}

const char *infer_type_name(DType t)
{
    const char *s = dtype_name(t);
    return s ? s : "unsupported";
}

int infer_need_output(Graph *g, const Node *n, int i, Diag *d)
{
    if (!out_val(g, n, i)) {
        char field[32];
        snprintf(field, sizeof field, "output[%d]", i);
        return diag_error(d, n, field, "required output is missing");
    }
    return 0;
}

int infer_attr_fits(const Node *n, const char *name, DType t, Diag *d)
{
    int errs = d->errors;
    double v;
    if (dtype_is_float(t) || !node_attr(n, name))
        return 0;
    v = attr_float(n, name, 0, d);
    if (d->errors > errs)
        return 1;
    if (!dtype_double_fits(t, v))
        return diag_error(d, n, name, "%g is not a value of the input's type %s", v,
                          infer_type_name(t));
    return 0;
}

int infer_same_shape_out(Graph *g, Node *n, int i, const Value *x, Diag *d)
{
    if (!out_val(g, n, i))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[i], x->dtype, x->rank, x->dims, d, n);
}

int infer_need_numeric(const Node *n, const Value *v, const char *field, Diag *d)
{
    if (v->dtype == DT_BOOL || !dtype_size(v->dtype))
        return diag_error(d, n, field, "element type %s is not supported",
                          dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
    return 0;
}

int infer_need_float(const Node *n, const Value *v, const char *field, Diag *d)
{
    if (!dtype_is_float(v->dtype))
        return diag_error(d, n, field, "element type %s is not supported (float expected)",
                          infer_type_name(v->dtype));
    return 0;
}

int infer_read_ints(const Node *n, const char *name, int want, int64_t def, int64_t lo,
                    int64_t *dst, Diag *d)
{
    int64_t cnt, i;
    const int64_t *v = attr_ints(n, name, &cnt, d);
    for (i = 0; i < want; i++)
        dst[i] = def;
    if (cnt < 0 || !v)
        return 0;
    if (cnt != want)
        return diag_error(d, n, name, "has %lld entries, expected %d", (long long)cnt, want);
    for (i = 0; i < want; i++) {
        if (v[i] < lo)
            return diag_error(d, n, name, "entry %lld is %lld, must be at least %lld",
                              (long long)i, (long long)v[i], (long long)lo);
        dst[i] = v[i];
    }
    return 0;
}

int64_t infer_split_pads(int64_t total, int upper)
{
    int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2); /* floor(total / 2) */
    return upper ? half : total - half;
}

int infer_conv_window(const Node *n, const Value *x, const int64_t *kernel, int ceil_ok,
                      ConvWindow *w, Diag *d)
{
    const char *ap;
    int i;
    int64_t pads[2 * TVMCC_MAX_SPATIAL];
    memset(w, 0, sizeof *w);
    w->nsp = x->rank - 2;
    w->group = 1;
    if (w->nsp < 1)
        return diag_error(d, n, "input[0]", "rank %d is too small: expected N x C x spatial",
                          x->rank);
    if (kernel) {
        int64_t kc;
        const int64_t *ka = attr_ints(n, "kernel_shape", &kc, d);
        for (i = 0; i < w->nsp; i++)
            w->kernel[i] = kernel[i];
        if (kc >= 0 && ka) {
            if (kc != w->nsp)
                return diag_error(d, n, "kernel_shape", "has %lld entries, expected %d",
                                  (long long)kc, w->nsp);
            for (i = 0; i < w->nsp; i++)
                if (ka[i] != kernel[i])
                    return diag_error(d, n, "kernel_shape",
                                      "entry %d is %lld but the weights say %lld", i,
                                      (long long)ka[i], (long long)kernel[i]);
        }
    } else {
        int64_t kc;
        attr_ints(n, "kernel_shape", &kc, d);
        if (kc < 0)
            return diag_error(d, n, "kernel_shape", "required attribute is missing");
        if (infer_read_ints(n, "kernel_shape", w->nsp, 1, 1, w->kernel, d))
            return 1;
    }
    for (i = 0; i < w->nsp; i++)
        if (w->kernel[i] < 1)
            return diag_error(d, n, "kernel_shape", "entry %d is %lld, must be positive", i,
                              (long long)w->kernel[i]);
    if (infer_read_ints(n, "strides", w->nsp, 1, 1, w->strides, d) ||
        infer_read_ints(n, "dilations", w->nsp, 1, 1, w->dilations, d) ||
        infer_read_ints(n, "pads", 2 * w->nsp, 0, 0, pads, d))
        return 1;
    if (ceil_ok)
        w->ceil_mode = attr_int(n, "ceil_mode", 0, d) != 0;
    ap = attr_string(n, "auto_pad", "NOTSET", d);
    for (i = 0; i < w->nsp; i++) {
        int64_t in = x->dims[2 + i], dk, s = w->strides[i];
        if (ck_mul(w->kernel[i] - 1, w->dilations[i], &dk) || ck_add(dk, 1, &dk) ||
            s > INT32_MAX)
            return diag_error(d, n, "kernel_shape", "dilated kernel extent overflows");
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            int64_t total;
            w->out[i] = (in + s - 1) / s;
            total = (w->out[i] - 1) * s + dk - in;
            if (total < 0)
                total = 0;
            w->pad_begin[i] = infer_split_pads(total, ap[5] == 'U');
            w->pad_end[i] = total - w->pad_begin[i];
        } else if (!strcmp(ap, "VALID") || !strcmp(ap, "NOTSET")) {
            int64_t span;
            w->pad_begin[i] = ap[0] == 'V' ? 0 : pads[i];
            w->pad_end[i] = ap[0] == 'V' ? 0 : pads[w->nsp + i];
            if (w->pad_begin[i] > INT32_MAX || w->pad_end[i] > INT32_MAX)
                return diag_error(d, n, "pads", "entry %d is too large", i);
            span = in + w->pad_begin[i] + w->pad_end[i] - dk;
            if (span < 0)
                return diag_error(d, n, "kernel_shape",
                                  "dilated kernel %lld is larger than the padded input %lld "
                                  "(spatial dimension %d)",
                                  (long long)dk, (long long)(in + w->pad_begin[i] + w->pad_end[i]),
                                  i);
            if (w->ceil_mode) {
                w->out[i] = (span + s - 1) / s + 1;
                /* the last window must start inside the input or the left pad */
                if ((w->out[i] - 1) * s >= in + w->pad_begin[i])
                    w->out[i]--;
            } else {
                w->out[i] = span / s + 1;
            }
        } else {
            return diag_error(d, n, "auto_pad", "unknown value '%s'", ap);
        }
    }
    return 0;
}
