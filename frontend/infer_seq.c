/*
 * Type and shape inference of the sequence operators. Sequences built and
 * read with compile-time positions were already turned into plain tensor
 * operators by frontend/seq_resolve.c; what reaches here is the general
 * case. tvmcc supports a
 * sequence when its length L is known at compile time and all its elements
 * have one dtype and one shape E: the sequence is then one stacked tensor
 * [L, E...] with Value.is_sequence set, and every sequence operator is an
 * index map over stacked tensors (lower/op_seq.c). Positions (SequenceAt,
 * SequenceInsert, SequenceErase) may be run-time inputs: they only select
 * rows, so the shapes stay static.
 *
 * An empty sequence is [0] and accepts an element of any shape: with no
 * element there is nothing to disagree with. Everything else that would
 * need a per-element shape is refused with an error naming the node:
 * elements of different shapes, SplitToSequence chunks of unequal size,
 * split sizes computed at run time (unless the split axis is empty or a
 * SequenceAt reading the sequence declares the equal-part shape). A
 * sequence may not be a graph input or output (the loader refuses the
 * declared type) nor reach an operator that is not a sequence operator
 * (infer_seq_check_inputs, called by infer_graph for every node).
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

/* "[d0,d1,...]" for messages. */
static const char *dims_str(char *buf, size_t cap, int rank, const int64_t *dims)
{
    size_t k = 0;
    int i;
    k += (size_t)snprintf(buf, cap, "[");
    for (i = 0; i < rank && k + 24 < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (k + 2 < cap)
        snprintf(buf + k, cap - k, "]");
    return buf;
}

/* Sets output 0 to the stacked sequence [len, elem...] and marks it. */
static int set_seq(Graph *g, Node *n, DType dt, int64_t len, int erank, const int64_t *edims,
                   Diag *d)
{
    int64_t dims[TVMCC_MAX_RANK];
    int i;
    if (erank + 1 > TVMCC_MAX_RANK)
        return diag_error(d, n, "output[0]", "a sequence of rank-%d tensors is stacked into "
                          "rank %d, beyond the limit of %d", erank, erank + 1, TVMCC_MAX_RANK);
    dims[0] = len;
    for (i = 0; i < erank; i++)
        dims[i + 1] = edims[i];
    if (value_set(g, n->out[0], dt, erank + 1, dims, d, n))
        return 1;
    g->values[n->out[0]].is_sequence = 1;
    return 0;
}

/* Input 0 must be a sequence; returns it, or NULL after reporting. */
static Value *seq_input(Graph *g, Node *n, Diag *d)
{
    Value *s = in_val(g, n, 0);
    if (!s || !s->is_sequence || s->rank < 1) {
        diag_error(d, n, "input[0]", "'%s' is not a sequence (a sequence comes from "
                   "SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase or "
                   "SplitToSequence)", s ? s->name : "?");
        return NULL;
    }
    return s;
}

/* Position input i (optional). Returns -1 after reporting, 0 when absent or
 * computed at run time (*known = 0), 1 when constant (*p normalised into
 * [0, hi], where negative positions count from len). */
static int read_pos(Graph *g, Node *n, int i, int64_t len, int64_t hi, int64_t *p, Diag *d)
{
    char field[32];
    Value *v = in_val(g, n, i);
    const int64_t *c;
    snprintf(field, sizeof field, "input[%d]", i);
    if (!v)
        return 0;
    if (v->dtype != DT_INT64 && v->dtype != DT_INT32) {
        diag_error(d, n, field, "position must be int32 or int64, got %s",
                   dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
        return -1;
    }
    if (value_numel(v) != 1) {
        diag_error(d, n, field, "position must be a scalar, got %lld elements",
                   (long long)value_numel(v));
        return -1;
    }
    if (value_const_ints(g, n->in[i], &c) != 1)
        return 0;
    *p = c[0] < 0 ? c[0] + len : c[0];
    if (*p < 0 || *p > hi) {
        diag_error(d, n, field, "position %lld is outside [%lld, %lld] for a sequence of "
                   "length %lld", (long long)c[0], (long long)-len, (long long)hi,
                   (long long)len);
        return -1;
    }
    return 1;
}

int infer_SequenceEmpty(Graph *g, Node *n, Diag *d)
{
    int64_t dt = attr_int(n, "dtype", DT_FLOAT32, d);
    if (dt <= 0 || dt > 255 || !dtype_size((DType)dt))
        return diag_error(d, n, "dtype", "element type %lld is not supported", (long long)dt);
    return set_seq(g, n, (DType)dt, 0, 0, NULL, d);
}

int infer_SequenceConstruct(Graph *g, Node *n, Diag *d)
{
    Value *x0 = in_val(g, n, 0);
    char a[256], b[256], field[32];
    int i, k;
    for (i = 0; i < n->n_in; i++) {
        Value *x = in_val(g, n, i);
        snprintf(field, sizeof field, "input[%d]", i);
        if (!x)
            return diag_error(d, n, field, "sequence element is missing");
        if (x->is_sequence)
            return diag_error(d, n, field, "'%s' is a sequence; sequences of sequences are "
                              "not supported", x->name);
        if (x->dtype != x0->dtype)
            return diag_error(d, n, field, "element type %s differs from input 0's %s",
                              dtype_name(x->dtype), dtype_name(x0->dtype));
        for (k = 0; x->rank == x0->rank && k < x->rank; k++)
            if (x->dims[k] != x0->dims[k])
                break;
        if (x->rank != x0->rank || k < x->rank)
            return diag_error(d, n, field, "element shape %s differs from input 0's %s: "
                              "sequences whose elements have different shapes are not "
                              "supported", dims_str(a, sizeof a, x->rank, x->dims),
                              dims_str(b, sizeof b, x0->rank, x0->dims));
    }
    return set_seq(g, n, x0->dtype, n->n_in, x0->rank, x0->dims, d);
}

int infer_SequenceInsert(Graph *g, Node *n, Diag *d)
{
    Value *s = seq_input(g, n, d), *t = in_val(g, n, 1);
    char a[256], b[256];
    int64_t len, p;
    int k;
    if (!s)
        return 1;
    len = s->dims[0];
    if (t->is_sequence)
        return diag_error(d, n, "input[1]", "'%s' is a sequence; sequences of sequences are "
                          "not supported", t->name);
    if (t->dtype != s->dtype)
        return diag_error(d, n, "input[1]", "element type %s differs from the sequence's %s",
                          dtype_name(t->dtype), dtype_name(s->dtype));
    if (len > 0) {
        for (k = 0; t->rank == s->rank - 1 && k < t->rank; k++)
            if (t->dims[k] != s->dims[k + 1])
                break;
        if (t->rank != s->rank - 1 || k < t->rank)
            return diag_error(d, n, "input[1]", "tensor shape %s differs from the sequence "
                              "elements' %s: sequences whose elements have different shapes "
                              "are not supported", dims_str(a, sizeof a, t->rank, t->dims),
                              dims_str(b, sizeof b, s->rank - 1, s->dims + 1));
    }
    if (read_pos(g, n, 2, len, len, &p, d) < 0)
        return 1;
    return set_seq(g, n, s->dtype, len + 1, t->rank, t->dims, d);
}

int infer_SequenceErase(Graph *g, Node *n, Diag *d)
{
    Value *s = seq_input(g, n, d);
    int64_t p;
    if (!s)
        return 1;
    if (s->dims[0] == 0)
        return diag_error(d, n, "input[0]", "cannot erase from the empty sequence '%s'",
                          s->name);
    if (read_pos(g, n, 1, s->dims[0], s->dims[0] - 1, &p, d) < 0)
        return 1;
    return set_seq(g, n, s->dtype, s->dims[0] - 1, s->rank - 1, s->dims + 1, d);
}

int infer_SequenceAt(Graph *g, Node *n, Diag *d)
{
    Value *s = seq_input(g, n, d);
    int64_t p;
    if (!s)
        return 1;
    if (s->dims[0] == 0)
        return diag_error(d, n, "input[0]", "cannot read an element of the empty sequence "
                          "'%s'", s->name);
    if (!in_val(g, n, 1))
        return diag_error(d, n, "input[1]", "required position is missing");
    if (read_pos(g, n, 1, s->dims[0], s->dims[0] - 1, &p, d) < 0)
        return 1;
    return value_set(g, n->out[0], s->dtype, s->rank - 1, s->dims + 1, d, n);
}

int infer_SequenceLength(Graph *g, Node *n, Diag *d)
{
    Value *s = seq_input(g, n, d);
    int64_t *p;
    if (!s)
        return 1;
    if (value_set(g, n->out[0], DT_INT64, 0, NULL, d, n))
        return 1;
    p = arena_alloc(g->arena, sizeof *p);
    if (!p)
        return diag_error(d, n, "output[0]", "compile arena exhausted");
    *p = s->dims[0];
    g->values[n->out[0]].data = p;
    return 0;
}

int infer_ConcatFromSequence(Graph *g, Node *n, Diag *d)
{
    Value *s = seq_input(g, n, d);
    int64_t dims[TVMCC_MAX_RANK], new_axis;
    AxisParams p;
    int r, axis, k;
    if (!s)
        return 1;
    if (!node_attr(n, "axis"))
        return diag_error(d, n, "axis", "required attribute is missing");
    new_axis = attr_int(n, "new_axis", 0, d);
    if (new_axis != 0 && new_axis != 1)
        return diag_error(d, n, "new_axis", "must be 0 or 1, got %lld", (long long)new_axis);
    if (s->dims[0] == 0)
        return diag_error(d, n, "input[0]", "cannot concatenate the empty sequence '%s' (its "
                          "element shape is unknown)", s->name);
    r = s->rank - 1;
    if (infer_axis(n, attr_int(n, "axis", 0, d), r + (int)new_axis, &axis, d, "axis"))
        return 1;
    memset(&p, 0, sizeof p);
    p.axis = axis;
    p.new_axis = (uint8_t)new_axis;
    infer_set_axis(g, n, axis, &p);
    if (new_axis) {
        /* a stack: the sequence axis moves to position `axis` */
        for (k = 0; k < axis; k++)
            dims[k] = s->dims[k + 1];
        dims[axis] = s->dims[0];
        for (k = axis; k < r; k++)
            dims[k + 1] = s->dims[k + 1];
        return value_set(g, n->out[0], s->dtype, r + 1, dims, d, n);
    }
    for (k = 0; k < r; k++)
        dims[k] = s->dims[k + 1];
    dims[axis] *= s->dims[0];
    return value_set(g, n->out[0], s->dtype, r, dims, d, n);
}

/* For a run-time split into `parts` pieces of an axis of extent dim: equal
 * parts are certain when the axis is empty, and accepted when a SequenceAt
 * reading the sequence declares an element whose axis has dim / parts. */
static int equal_parts_declared(Graph *g, const Node *n, int axis, int64_t chunk)
{
    int32_t i;
    for (i = 0; i < g->n_nodes; i++) {
        const Node *m = &g->nodes[i];
        const Value *o;
        if (m->dead || m->op != OP_SequenceAt || m->n_in < 1 || m->in[0] != n->out[0] ||
            m->n_out < 1 || m->out[0] < 0)
            continue;
        o = &g->values[m->out[0]];
        if (!o->declared || o->rank <= axis)
            continue;
        if (o->dims[axis] == chunk)
            return 1;
    }
    return 0;
}

int infer_SplitToSequence(Graph *g, Node *n, Diag *d)
{
    Value *x = in_val(g, n, 0), *sp = in_val(g, n, 1);
    int64_t edims[TVMCC_MAX_RANK], keepdims, dim, len, chunk;
    const int64_t *c;
    int axis, k, erank;
    if (x->is_sequence)
        return diag_error(d, n, "input[0]", "'%s' is a sequence, SplitToSequence splits a "
                          "tensor", x->name);
    if (x->rank < 1)
        return diag_error(d, n, "input[0]", "cannot split a scalar");
    if (infer_axis(n, attr_int(n, "axis", 0, d), x->rank, &axis, d, "axis"))
        return 1;
    infer_set_axis(g, n, axis, NULL);
    keepdims = attr_int(n, "keepdims", 1, d);
    dim = x->dims[axis];
    if (!sp) {
        len = dim;
        chunk = 1;
    } else {
        int64_t cnt;
        if (sp->dtype != DT_INT64 && sp->dtype != DT_INT32)
            return diag_error(d, n, "split", "must be int32 or int64, got %s",
                              dtype_name(sp->dtype) ? dtype_name(sp->dtype) : "?");
        if (sp->rank > 1)
            return diag_error(d, n, "split", "must be a scalar or 1-D, got rank %d", sp->rank);
        cnt = value_const_ints(g, n->in[1], &c);
        if (cnt < 0) {
            /* computed at run time: only the number of parts is known */
            if (sp->rank == 0)
                return diag_error(d, n, "split", "a chunk size computed at run time gives a "
                                  "sequence length unknown at compile time (not supported)");
            len = sp->dims[0];
            chunk = len ? dim / len : 0;
            if (!(len > 0 && dim == 0) &&
                !(len > 0 && dim % len == 0 && equal_parts_declared(g, n, axis, chunk)))
                return diag_error(d, n, "split", "split sizes are computed at run time, so the "
                                  "element shapes are unknown at compile time (supported when "
                                  "the split axis is empty or a SequenceAt reading '%s' "
                                  "declares the equal-part shape)",
                                  g->values[n->out[0]].name);
        } else if (sp->rank == 0) {
            chunk = c[0];
            if (chunk <= 0)
                return diag_error(d, n, "split", "chunk size must be positive, got %lld",
                                  (long long)chunk);
            len = (dim + chunk - 1) / chunk;
            if (dim % chunk)
                return diag_error(d, n, "split", "chunk size %lld does not divide the axis "
                                  "extent %lld: the last element would be smaller, and "
                                  "sequences whose elements have different shapes are not "
                                  "supported", (long long)chunk, (long long)dim);
        } else {
            int64_t sum = 0, i;
            len = cnt;
            chunk = cnt ? c[0] : 0;
            for (i = 0; i < cnt; i++) {
                if (c[i] < 0)
                    return diag_error(d, n, "split", "entry %lld is negative (%lld)",
                                      (long long)i, (long long)c[i]);
                sum += c[i];
            }
            if (sum != dim)
                return diag_error(d, n, "split", "sizes sum to %lld, the axis has %lld",
                                  (long long)sum, (long long)dim);
            for (i = 1; i < cnt; i++)
                if (c[i] != chunk)
                    return diag_error(d, n, "split", "sizes %lld and %lld differ: sequences "
                                      "whose elements have different shapes are not "
                                      "supported", (long long)chunk, (long long)c[i]);
        }
        keepdims = 1; /* ignored when split is given */
    }
    erank = 0;
    for (k = 0; k < x->rank; k++) {
        if (k == axis && !keepdims)
            continue;
        edims[erank++] = k == axis ? chunk : x->dims[k];
    }
    return set_seq(g, n, x->dtype, len, erank, edims, d);
}

/* Called by infer_graph before a node's inference: only the sequence
 * operators (and Identity, which passes a sequence through) accept a
 * sequence input. */
int infer_seq_check_inputs(Graph *g, Node *n, Diag *d)
{
    int i;
    switch (n->op) {
    case OP_SequenceInsert: case OP_SequenceErase: case OP_SequenceAt:
    case OP_SequenceLength: case OP_ConcatFromSequence: case OP_Identity:
        return 0;
    default:
        break;
    }
    for (i = 0; i < n->n_in; i++) {
        const Value *v = in_val(g, n, i);
        char field[32];
        snprintf(field, sizeof field, "input[%d]", i);
        if (v && v->is_sequence)
            return diag_error(d, n, field, "'%s' is a sequence; %s takes a tensor (read an "
                              "element with SequenceAt or join them with ConcatFromSequence)",
                              v->name, n->op_type);
    }
    return 0;
}

/* Called by infer_graph after a node's inference: Identity passes the
 * sequence flag on, and no sequence may be a graph output, except one
 * declared as a sequence, which onnx_bind_stacked_outputs
 * (frontend/seq_resolve.c) splits into its elements after inference. */
int infer_seq_check_outputs(Graph *g, Node *n, Diag *d)
{
    int i, j;
    if (n->op == OP_Identity && in_val(g, n, 0) && in_val(g, n, 0)->is_sequence &&
        out_val(g, n, 0))
        out_val(g, n, 0)->is_sequence = 1;
    for (i = 0; i < n->n_out; i++) {
        const Value *v = out_val(g, n, i);
        if (!v || !v->is_sequence)
            continue;
        for (j = 0; j < g->n_outputs; j++)
            if (g->outputs[j] == n->out[i] && !(g->out_tags && g->out_tags[j].index < 0))
                return diag_error(d, n, "output", "'%s' is a sequence; a graph output must be "
                                  "a tensor (sequence outputs are not supported)", v->name);
    }
    return 0;
}
