/*
 * Type and shape inference for the data-movement operators (Reshape,
 * Flatten, Transpose, Squeeze, Unsqueeze, Concat, Split, Slice, Gather,
 * Expand, Tile, Pad). The operators whose result is known at compile time
 * (Shape, Size, Constant, ConstantOfShape, Range) are in infer_const.c.
 *
 * Shape-like inputs (Reshape's shape, Slice's starts, Pad's pads...) must be
 * compile-time constants; when one is computed at run time the output falls
 * back to its declared shape (infer_use_declared). Attribute spellings of the
 * older opsets are handled where the backend tests use them (Squeeze and
 * Unsqueeze axes before 13, Split sizes before 13, Slice before 10, Pad
 * before 11, Reshape before 5).
 *
 * Transpose, Concat, Split, Gather, Slice and Pad store their parsed
 * parameters on the node (PermParams, AxisParams, SliceParams, PadParams)
 * for lower/op_shape.c.
 */
#include "infer.h"

#include <string.h>

/* Reads the int list given by attribute `name` (opset < `since`) or input
 * `idx` (from `since`). Returns the count, -1 when absent, -2 when the input
 * is present but not a compile-time constant. */
static int64_t ints_arg(Graph *g, Node *n, Diag *d, const char *name, int since, int idx,
                        const int64_t **out)
{
    if (n->opset < since) {
        int64_t cnt;
        *out = attr_ints(n, name, &cnt, d);
        return cnt;
    }
    if (idx >= n->n_in || n->in[idx] < 0)
        return -1;
    {
        int64_t cnt = value_const_ints(g, n->in[idx], out);
        return cnt < 0 ? -2 : cnt;
    }
}

/* ---- reshaping without moving data ---- */

int infer_Reshape(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    const int64_t *shape;
    int64_t cnt, dims[TVMCC_MAX_RANK], known = 1, numel;
    int allowzero = (int)attr_int(n, "allowzero", 0, d), infer_at = -1, i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    cnt = ints_arg(g, n, d, "shape", 5, 1, &shape);
    if (cnt == -2)
        return infer_use_declared_as(g, n, 0, in_val(g, n, 0)->dtype, d,
                                     "shape input is computed at run time");
    if (cnt < 0)
        return diag_error(d, n, "shape", "required shape is missing");
    if (cnt > TVMCC_MAX_RANK)
        return diag_error(d, n, "shape", "rank %lld exceeds the supported %d", (long long)cnt,
                          TVMCC_MAX_RANK);
    numel = value_numel(x);
    for (i = 0; i < (int)cnt; i++) {
        int64_t s = shape[i];
        if (s == 0 && !allowzero) {
            if (i >= x->rank)
                return diag_error(d, n, "shape", "entry %d is 0 (copy) but the input has rank %d",
                                  i, x->rank);
            s = x->dims[i];
        }
        if (s == -1) {
            if (infer_at >= 0)
                return diag_error(d, n, "shape", "more than one -1 entry");
            infer_at = i;
            continue;
        }
        if (s < -1)
            return diag_error(d, n, "shape", "entry %d is %lld", i, (long long)s);
        dims[i] = s;
        if (ck_mul(known, s, &known))
            return diag_error(d, n, "shape", "element count overflows");
    }
    if (infer_at >= 0) {
        if (known == 0)
            return diag_error(d, n, "shape", "-1 entry is ambiguous next to a 0 dimension");
        if (numel % known)
            return diag_error(d, n, "shape", "input of %lld elements cannot be viewed with "
                              "the other dimensions' product %lld",
                              (long long)numel, (long long)known);
        dims[infer_at] = numel / known;
    } else if (known != numel) {
        return diag_error(d, n, "shape", "asks for %lld elements, the input has %lld",
                          (long long)known, (long long)numel);
    }
    return value_set(g, n->out[0], x->dtype, (int)cnt, dims, d, n);
}

int infer_Flatten(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    int64_t axis = attr_int(n, "axis", 1, d), dims[2] = {1, 1};
    int i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    if (axis < -(int64_t)x->rank || axis > x->rank)
        return diag_error(d, n, "axis", "%lld is out of range for rank %d", (long long)axis,
                          x->rank);
    if (axis < 0)
        axis += x->rank;
    for (i = 0; i < x->rank; i++)
        dims[i < axis ? 0 : 1] *= x->dims[i];
    return value_set(g, n->out[0], x->dtype, 2, dims, d, n);
}

int infer_Transpose(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    const int64_t *perm;
    int64_t cnt, dims[TVMCC_MAX_RANK];
    int seen[TVMCC_MAX_RANK] = {0}, i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    perm = attr_ints(n, "perm", &cnt, d);
    if (cnt < 0) {
        int64_t rev[TVMCC_MAX_RANK];
        for (i = 0; i < x->rank; i++) {
            rev[i] = x->rank - 1 - i;
            dims[i] = x->dims[x->rank - 1 - i];
        }
        node_set_perm(g, n, x->rank, rev);
        return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
    }
    if (cnt != x->rank)
        return diag_error(d, n, "perm", "has %lld entries for an input of rank %d",
                          (long long)cnt, x->rank);
    for (i = 0; i < x->rank; i++) {
        if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]])
            return diag_error(d, n, "perm", "is not a permutation of 0..%d", x->rank - 1);
        seen[perm[i]] = 1;
        dims[i] = x->dims[perm[i]];
    }
    node_set_perm(g, n, x->rank, perm);
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

int infer_Squeeze(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    const int64_t *axes;
    int64_t cnt, dims[TVMCC_MAX_RANK];
    int drop[TVMCC_MAX_RANK] = {0}, i, r = 0;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    cnt = ints_arg(g, n, d, "axes", 13, 1, &axes);
    if (cnt == -2)
        return infer_use_declared_as(g, n, 0, in_val(g, n, 0)->dtype, d,
                                     "axes input is computed at run time");
    if (cnt < 0) {
        for (i = 0; i < x->rank; i++)
            drop[i] = x->dims[i] == 1;
    }
    for (i = 0; i < (int)cnt; i++) {
        int a;
        if (infer_axis(n, axes[i], x->rank, &a, d, "axes"))
            return 1;
        if (x->dims[a] != 1)
            return diag_error(d, n, "axes", "dimension %d has size %lld, not 1", a,
                              (long long)x->dims[a]);
        drop[a] = 1;
    }
    for (i = 0; i < x->rank; i++)
        if (!drop[i])
            dims[r++] = x->dims[i];
    return value_set(g, n->out[0], x->dtype, r, dims, d, n);
}

int infer_Unsqueeze(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    const int64_t *axes;
    int64_t cnt, dims[TVMCC_MAX_RANK];
    int ins[TVMCC_MAX_RANK] = {0}, i, j = 0, r;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    cnt = ints_arg(g, n, d, "axes", 13, 1, &axes);
    if (cnt == -2)
        return infer_use_declared_as(g, n, 0, in_val(g, n, 0)->dtype, d,
                                     "axes input is computed at run time");
    if (cnt < 0)
        return diag_error(d, n, "axes", "required axes are missing");
    if (x->rank + cnt > TVMCC_MAX_RANK)
        return diag_error(d, n, "axes", "result rank %lld exceeds the supported %d",
                          (long long)(x->rank + cnt), TVMCC_MAX_RANK);
    r = x->rank + (int)cnt;
    for (i = 0; i < (int)cnt; i++) {
        int a;
        if (infer_axis(n, axes[i], r, &a, d, "axes"))
            return 1;
        if (ins[a])
            return diag_error(d, n, "axes", "axis %d is listed twice", a);
        ins[a] = 1;
    }
    for (i = 0; i < r; i++)
        dims[i] = ins[i] ? 1 : x->dims[j++];
    return value_set(g, n->out[0], x->dtype, r, dims, d, n);
}

/* ---- joining, splitting, selecting ---- */

int infer_Concat(Graph *g, Node *n, Diag *d)
{
    Value *x0 = in_val(g, n, 0);
    int64_t dims[TVMCC_MAX_RANK];
    int axis, i, k;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    if (!node_attr(n, "axis") && n->opset >= 4)
        return diag_error(d, n, "axis", "required attribute is missing");
    if (x0->rank == 0)
        return diag_error(d, n, "input[0]", "cannot concatenate scalars");
    if (infer_axis(n, attr_int(n, "axis", 1, d), x0->rank, &axis, d, "axis"))
        return 1;
    infer_set_axis(g, n, axis, NULL);
    memcpy(dims, x0->dims, sizeof dims);
    for (i = 1; i < n->n_in; i++) {
        Value *v = in_val(g, n, i);
        char field[32];
        snprintf(field, sizeof field, "input[%d]", i);
        if (need_input(g, n, i, d))
            return 1;
        if (v->dtype != x0->dtype)
            return diag_error(d, n, field, "type %s differs from input[0]'s %s",
                              infer_type_name(v->dtype), infer_type_name(x0->dtype));
        if (v->rank != x0->rank)
            return diag_error(d, n, field, "rank %d differs from input[0]'s %d", v->rank,
                              x0->rank);
        for (k = 0; k < v->rank; k++)
            if (k != axis && v->dims[k] != x0->dims[k])
                return diag_error(d, n, field, "dimension %d is %lld, input[0] has %lld", k,
                                  (long long)v->dims[k], (long long)x0->dims[k]);
        if (ck_add(dims[axis], v->dims[axis], &dims[axis]))
            return diag_error(d, n, "axis", "size overflows");
    }
    return value_set(g, n->out[0], x0->dtype, x0->rank, dims, d, n);
}

int infer_Split(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    const int64_t *split;
    int64_t cnt, dims[TVMCC_MAX_RANK], total = 0, num;
    int axis, i;
    if (need_input(g, n, 0, d))
        return 1;
    if (x->rank == 0)
        return diag_error(d, n, "input[0]", "cannot split a scalar");
    if (infer_axis(n, attr_int(n, "axis", 0, d), x->rank, &axis, d, "axis"))
        return 1;
    infer_set_axis(g, n, axis, NULL);
    cnt = ints_arg(g, n, d, "split", 13, 1, &split);
    if (cnt == -2) {
        /* sizes known only at run time: trust the declared output shapes,
         * which must at least tile the split axis */
        for (i = 0; i < n->n_out; i++) {
            Value *o;
            if (n->out[i] < 0)
                continue;
            if (infer_use_declared(g, n, i, d, "split sizes are computed at run time"))
                return 1;
            o = out_val(g, n, i);
            if (o->rank != x->rank || o->dtype != x->dtype)
                return diag_error(d, n, "split", "declared output %d does not match the input", i);
            total += o->dims[axis];
        }
        if (total != x->dims[axis])
            return diag_error(d, n, "split", "declared sizes add up to %lld, the dimension is "
                              "%lld", (long long)total, (long long)x->dims[axis]);
        return 0;
    }
    if (cnt >= 0 && cnt != n->n_out)
        return diag_error(d, n, "split", "has %lld entries for %d outputs", (long long)cnt,
                          n->n_out);
    num = attr_int(n, "num_outputs", n->n_out, d);
    if (cnt < 0 && num != n->n_out)
        return diag_error(d, n, "num_outputs", "is %lld but the node has %d outputs",
                          (long long)num, n->n_out);
    if (cnt < 0 && !node_attr(n, "num_outputs") && x->dims[axis] % n->n_out)
        return diag_error(d, n, "split", "dimension %lld does not divide into %d equal parts",
                          (long long)x->dims[axis], n->n_out);
    memcpy(dims, x->dims, sizeof dims);
    for (i = 0; i < n->n_out; i++) {
        int64_t s;
        if (cnt >= 0) {
            s = split[i];
        } else {
            /* equal parts of ceil(dim / n); the last one takes what is left */
            int64_t part = (x->dims[axis] + n->n_out - 1) / n->n_out;
            s = x->dims[axis] - total < part ? x->dims[axis] - total : part;
        }
        if (s < 0)
            return diag_error(d, n, "split", "size %lld is negative", (long long)s);
        total += s;
        if (total > x->dims[axis])
            break;
        dims[axis] = s;
        if (n->out[i] >= 0 && value_set(g, n->out[i], x->dtype, x->rank, dims, d, n))
            return 1;
    }
    if (total != x->dims[axis])
        return diag_error(d, n, "split", "sizes add up to %lld, the dimension is %lld",
                          (long long)total, (long long)x->dims[axis]);
    return 0;
}

/* Slice parameters for every axis of x: first index, step and count, and
 * the entries as lower/op_shape.c reads them (sp). Returns 0, 1 after
 * reporting, or -1 when an input is not constant. */
static int slice_params(Graph *g, Node *n, Diag *d, const Value *x, int64_t *start,
                        int64_t *step, int64_t *count, SliceParams *p)
{
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    int64_t ns, ne, na = -1, nsp = -1;
    int done[TVMCC_MAX_RANK] = {0}, i;
    if (n->opset < 10) {
        st = attr_ints(n, "starts", &ns, d);
        en = attr_ints(n, "ends", &ne, d);
        ax = attr_ints(n, "axes", &na, d);
    } else {
        if (n->n_in < 3 || n->in[1] < 0 || n->in[2] < 0)
            return diag_error(d, n, "starts", "starts and ends inputs are required");
        ns = value_const_ints(g, n->in[1], &st);
        ne = value_const_ints(g, n->in[2], &en);
        if (ns < 0 || ne < 0)
            return -1;
        if (n->n_in > 3 && n->in[3] >= 0 && (na = value_const_ints(g, n->in[3], &ax)) < 0)
            return -1;
        if (n->n_in > 4 && n->in[4] >= 0 && (nsp = value_const_ints(g, n->in[4], &sp)) < 0)
            return -1;
    }
    if (ns < 0 || ne != ns)
        return diag_error(d, n, "ends", "starts and ends must have the same length");
    if ((na >= 0 && na != ns) || (nsp >= 0 && nsp != ns))
        return diag_error(d, n, "axes", "axes and steps must have the length of starts");
    for (i = 0; i < x->rank; i++) {
        start[i] = 0;
        step[i] = 1;
        count[i] = x->dims[i];
    }
    for (i = 0; i < (int)ns; i++) {
        int a;
        int64_t dim, s = st[i], e = en[i], k = sp ? sp[i] : 1;
        if (infer_axis(n, ax ? ax[i] : i, x->rank, &a, d, "axes"))
            return 1;
        if (done[a])
            return diag_error(d, n, "axes", "axis %d is listed twice", a);
        done[a] = 1;
        if (k == 0)
            return diag_error(d, n, "steps", "step for axis %d is 0", a);
        p->start[i] = s;
        p->axis[i] = a;
        p->step[i] = k;
        p->n = i + 1;
        dim = x->dims[a];
        if (s < 0)
            s += dim;
        if (e < 0)
            e += dim;
        if (k > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            count[a] = e > s ? (e - s - 1) / k + 1 : 0;
        } else {
            int64_t mag = k == INT64_MIN ? INT64_MAX : -k;
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            count[a] = s > e ? (s - e - 1) / mag + 1 : 0;
        }
        start[a] = s;
        step[a] = k;
    }
    return 0;
}

int infer_Slice(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    int64_t start[TVMCC_MAX_RANK], step[TVMCC_MAX_RANK], count[TVMCC_MAX_RANK];
    SliceParams p;
    int rc;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    memset(&p, 0, sizeof p);
    rc = slice_params(g, n, d, x, start, step, count, &p);
    if (rc < 0) {
        memset(&p, 0, sizeof p);
        p.runtime = 1;
        node_set_params(g, n, PARAMS_SLICE, &p, sizeof p);
        return infer_use_declared_as(g, n, 0, in_val(g, n, 0)->dtype, d,
                                     "slice bounds are computed at run time");
    }
    if (rc)
        return 1;
    node_set_params(g, n, PARAMS_SLICE, &p, sizeof p);
    return value_set(g, n->out[0], x->dtype, x->rank, count, d, n);
}

int infer_Gather(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0), *ix = in_val(g, n, 1);
    const int64_t *iv;
    int64_t dims[TVMCC_MAX_RANK], cnt, k;
    int axis, i, r = 0;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || infer_need_output(g, n, 0, d))
        return 1;
    if (ix->dtype != DT_INT32 && ix->dtype != DT_INT64)
        return diag_error(d, n, "indices", "must be int32 or int64, got %s", infer_type_name(ix->dtype));
    if (x->rank == 0)
        return diag_error(d, n, "data", "cannot gather from a scalar");
    if (infer_axis(n, attr_int(n, "axis", 0, d), x->rank, &axis, d, "axis"))
        return 1;
    infer_set_axis(g, n, axis, NULL);
    if (x->rank - 1 + ix->rank > TVMCC_MAX_RANK)
        return diag_error(d, n, "indices", "result rank %d exceeds the supported %d",
                          x->rank - 1 + ix->rank, TVMCC_MAX_RANK);
    cnt = value_const_ints(g, n->in[1], &iv);
    for (k = 0; k < cnt; k++)
        if (iv[k] < -x->dims[axis] || iv[k] >= x->dims[axis])
            return diag_error(d, n, "indices", "index %lld is out of range for dimension %lld",
                              (long long)iv[k], (long long)x->dims[axis]);
    for (i = 0; i < axis; i++)
        dims[r++] = x->dims[i];
    for (i = 0; i < ix->rank; i++)
        dims[r++] = ix->dims[i];
    for (i = axis + 1; i < x->rank; i++)
        dims[r++] = x->dims[i];
    return value_set(g, n->out[0], x->dtype, r, dims, d, n);
}

int infer_Expand(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    const int64_t *shape;
    int64_t cnt, dims[TVMCC_MAX_RANK];
    int r, i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    cnt = value_const_ints(g, n->in[1], &shape);
    if (cnt < 0) {
        const Value *y;
        int off;
        if (infer_use_declared(g, n, 0, d, "shape input is computed at run time"))
            return 1;
        /* the declared shape must be one the input broadcasts to */
        y = out_val(g, n, 0);
        off = y->rank - x->rank;
        for (i = 0; i < x->rank && off >= 0; i++)
            if (x->dims[i] != 1 && x->dims[i] != y->dims[off + i])
                off = -1;
        if (off < 0)
            return diag_error(d, n, "output[0]", "declared shape of '%s' is not a broadcast of "
                              "the input's shape", y->name);
        return 0;
    }
    if (cnt > TVMCC_MAX_RANK)
        return diag_error(d, n, "shape", "rank %lld exceeds the supported %d", (long long)cnt,
                          TVMCC_MAX_RANK);
    for (i = 0; i < (int)cnt; i++)
        if (shape[i] < 0)
            return diag_error(d, n, "shape", "entry %d is negative", i);
    if (infer_broadcast(n, x->rank, x->dims, (int)cnt, shape, &r, dims, d, "shape"))
        return 1;
    return value_set(g, n->out[0], x->dtype, r, dims, d, n);
}

int infer_Tile(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    const int64_t *rep;
    int64_t cnt, dims[TVMCC_MAX_RANK];
    int i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    cnt = value_const_ints(g, n->in[1], &rep);
    if (cnt < 0)
        return infer_use_declared_as(g, n, 0, in_val(g, n, 0)->dtype, d,
                                     "repeats input is computed at run time");
    if (cnt != x->rank)
        return diag_error(d, n, "repeats", "has %lld entries for an input of rank %d",
                          (long long)cnt, x->rank);
    for (i = 0; i < x->rank; i++) {
        if (rep[i] < 0)
            return diag_error(d, n, "repeats", "entry %d is negative", i);
        if (ck_mul(x->dims[i], rep[i], &dims[i]))
            return diag_error(d, n, "repeats", "dimension %d overflows", i);
    }
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

/* Pad parameters: pads before/after per axis, and p (mode, the entries'
 * axes, leading pads and constant value for lower/op_shape.c). Returns 0,
 * 1 after reporting, -1 when the pads or the axes are not constant (p
 * then says which, with the axes of the entries when only the pads are
 * computed at run time). */
static int pad_params(Graph *g, Node *n, Diag *d, const Value *x, int64_t *begin,
                      int64_t *end, PadParams *p)
{
    const int64_t *pads, *axes = NULL;
    int64_t np, na = x->rank;
    const char *m = attr_string(n, "mode", "constant", d);
    int i;
    if (!strcmp(m, "constant"))
        p->mode = PAD_CONSTANT;
    else if (!strcmp(m, "reflect"))
        p->mode = PAD_REFLECT;
    else if (!strcmp(m, "edge"))
        p->mode = PAD_EDGE;
    else if (!strcmp(m, "wrap"))
        p->mode = PAD_WRAP;
    else
        return diag_error(d, n, "mode", "unknown mode '%s'", m);
    if (n->opset < 11) {
        pads = attr_ints(n, n->opset < 2 ? "paddings" : "pads", &np, d);
        if (np < 0)
            return diag_error(d, n, "pads", "required attribute is missing");
        i = d->errors;
        p->value = attr_float(n, "value", 0, d);
        if (d->errors > i)
            return 1;
    } else {
        if (n->n_in < 2 || n->in[1] < 0)
            return diag_error(d, n, "pads", "required input is missing");
        np = value_const_ints(g, n->in[1], &pads);
        if (n->n_in > 3 && n->in[3] >= 0 && (na = value_const_ints(g, n->in[3], &axes)) < 0) {
            p->runtime_axes = 1;
            return -1;
        }
    }
    if (na > TVMCC_MAX_RANK)
        return diag_error(d, n, "axes", "has %lld entries, more than the supported rank %d",
                          (long long)na, TVMCC_MAX_RANK);
    p->n = (int)na;
    for (i = 0; i < (int)na; i++) {
        p->axis[i] = i;
        if (axes && infer_axis(n, axes[i], x->rank, &p->axis[i], d, "axes"))
            return 1;
    }
    if (np < 0) {
        p->runtime_pads = 1;
        return -1;
    }
    if (np != 2 * na)
        return diag_error(d, n, "pads", "has %lld entries, expected %lld", (long long)np,
                          (long long)(2 * na));
    for (i = 0; i < x->rank; i++)
        begin[i] = end[i] = 0;
    for (i = 0; i < (int)na; i++) {
        begin[p->axis[i]] = p->begin[i] = pads[i];
        end[p->axis[i]] = pads[i + na];
    }
    for (i = 0; i < x->rank; i++) {
        int64_t dim = x->dims[i], o;
        if (ck_add(dim, begin[i], &o) || ck_add(o, end[i], &o) || o < 0)
            return diag_error(d, n, "pads", "axis %d: size %lld padded by %lld and %lld is "
                              "invalid", i, (long long)dim, (long long)begin[i],
                              (long long)end[i]);
        if (p->mode != PAD_CONSTANT && (begin[i] > 0 || end[i] > 0) && dim == 0)
            return diag_error(d, n, "pads", "axis %d is empty and cannot be padded in '%s' mode",
                              i, m);
        if (p->mode == PAD_REFLECT && (begin[i] > dim - 1 || end[i] > dim - 1) &&
            (begin[i] > 0 || end[i] > 0))
            return diag_error(d, n, "pads", "axis %d: reflect padding needs pads below the "
                              "dimension %lld", i, (long long)dim);
    }
    return 0;
}

int infer_Pad(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0);
    int64_t begin[TVMCC_MAX_RANK], end[TVMCC_MAX_RANK], dims[TVMCC_MAX_RANK];
    PadParams p;
    int rc, i;
    if (need_input(g, n, 0, d) || infer_need_output(g, n, 0, d))
        return 1;
    memset(&p, 0, sizeof p);
    rc = pad_params(g, n, d, x, begin, end, &p);
    if (rc > 0)
        return 1;
    node_set_params(g, n, PARAMS_PAD, &p, sizeof p);
    if (rc < 0)
        return infer_use_declared_as(g, n, 0, in_val(g, n, 0)->dtype, d,
                                     "pads are computed at run time");
    if (n->opset < 11 && infer_attr_fits(n, "value", x->dtype, d))
        return 1;
    if (n->opset >= 11 && n->n_in > 2 && n->in[2] >= 0) {
        Value *cv = in_val(g, n, 2);
        if (cv->dtype != x->dtype)
            return diag_error(d, n, "constant_value", "type %s differs from the input's %s",
                              infer_type_name(cv->dtype), infer_type_name(x->dtype));
        if (value_numel(cv) != 1)
            return diag_error(d, n, "constant_value", "must be a scalar");
    }
    for (i = 0; i < x->rank; i++)
        dims[i] = x->dims[i] + begin[i] + end[i];
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}
