/*
 * NonZero and Unique: runtime calls (runtime_min/tvmrt.c) that check the
 * data-dependent count against the compiled one and return
 * TVMRT_ERR_SHAPE when they differ, which a kernel of loop IR cannot do.
 * See frontend/infer_datadep.c.
 */
#include "lower.h"

#include <string.h>

static void arg(ExternCall *c, ExtArgKind kind, int buf, int64_t ival)
{
    c->args[c->n_args].kind = kind;
    c->args[c->n_args].buf = buf;
    c->args[c->n_args++].ival = ival;
}

static ExternCall *call(Lower *L, const char *fn)
{
    ExternCall *c = arena_alloc(L->arena, sizeof *c);
    if (!c)
        die("compile arena exhausted");
    memset(c, 0, sizeof *c);
    c->fn = fn;
    L->k->ext = c;
    return c;
}

/* The written buffer of output i, or an integer 0 (NULL) when omitted. */
static void arg_out(Lower *L, ExternCall *c, const Node *n, int i)
{
    int b;
    if (i >= n->n_out || n->out[i] < 0) {
        arg(c, EXT_INT, 0, 0);
        return;
    }
    b = lower_buf_value(L, n->out[i]);
    L->k->bufs[b].written = 1;
    arg(c, EXT_BUF, b, 0);
}

/* tvmrt_nonzero(x, dtype, n, dims, out, k) */
int lower_NonZero(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    ExternCall *c = call(L, "tvmrt_nonzero");
    int32_t *dims = arena_array(L->arena, (size_t)x->rank + 1, sizeof *dims);
    int i;
    if (!dims)
        die("compile arena exhausted");
    dims[0] = x->rank;
    for (i = 0; i < x->rank; i++)
        dims[1 + i] = (int32_t)x->dims[i];
    arg(c, EXT_BUF, lower_buf_value(L, n->in[0]), 0);
    arg(c, EXT_INT, 0, x->dtype);
    arg(c, EXT_INT, 0, value_numel(x));
    c->args[c->n_args].kind = EXT_INTS;
    c->args[c->n_args].n_ints = x->rank + 1;
    c->args[c->n_args++].ints = dims;
    arg_out(L, c, n, 0);
    arg(c, EXT_INT, 0, y->dims[1]);
    return 0;
}

/* tvmrt_unique(x, dtype, outer, len, inner, sorted, k, y, indices,
 * inverse, counts, scratch) */
int lower_Unique(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    const AxisParams *p = node_axis(n);
    ExternCall *c = call(L, "tvmrt_unique");
    int64_t outer = 1, inner = 1, len = value_numel(x), k;
    int i, scratch;
    if (p->axis >= 0) {
        for (i = 0; i < p->axis; i++)
            outer *= x->dims[i];
        for (i = p->axis + 1; i < x->rank; i++)
            inner *= x->dims[i];
        len = x->dims[p->axis];
    }
    k = p->axis >= 0 ? y->dims[p->axis] : y->dims[0];
    scratch = lower_buf_temp(L, "scratch", DT_INT32, 3 * len + 1);
    L->k->bufs[scratch].written = 1;
    arg(c, EXT_BUF, lower_buf_value(L, n->in[0]), 0);
    arg(c, EXT_INT, 0, x->dtype);
    arg(c, EXT_INT, 0, outer);
    arg(c, EXT_INT, 0, len);
    arg(c, EXT_INT, 0, inner);
    arg(c, EXT_INT, 0, p->sorted);
    arg(c, EXT_INT, 0, k);
    for (i = 0; i < 4; i++)
        arg_out(L, c, n, i);
    arg(c, EXT_BUF, scratch, 0);
    return 0;
}
