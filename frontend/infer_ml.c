/*
 * Shape and type inference of the ai.onnx.ml operators tvmcc implements:
 * Binarizer, ArrayFeatureExtractor and TreeEnsemble (ai.onnx.ml 5), lowered
 * by lower/op_ml.c. Their parameters go into the node's MlParams
 * (ir/params.h); TreeEnsemble's arrays are checked here once (lengths,
 * indices in range, every tree a tree) so that the lowering can walk them
 * without checks. LabelEncoder, also of that domain, is in
 * frontend/infer_string.c (string and numeric keys and values).
 */
#include "infer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int infer_Binarizer(Graph *g, Node *n, Diag *d)
{
    Value *x;
    MlParams p;
    int errs = d->errors;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_numeric(n, x, "X", d))
        return 1;
    memset(&p, 0, sizeof p);
    p.threshold = attr_float(n, "threshold", 0.0, d);
    if (d->errors > errs)
        return 1;
    node_set_params(g, n, PARAMS_ML, &p, sizeof p);
    return infer_same_shape_out(g, n, 0, x, d);
}

/* X[..., indices]: the indices (int64, 1-D or [1, n]) select along the last
 * axis; a 1-D X gives [1, n] (onnxruntime's and the reference's shape). */
int infer_ArrayFeatureExtractor(Graph *g, Node *n, Diag *d)
{
    Value *x, *ix;
    int64_t dims[TVMCC_MAX_RANK], cnt;
    int i, r;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    ix = in_val(g, n, 1);
    if (x->rank < 1)
        return diag_error(d, n, "X", "a scalar has no features to select");
    if (ix->dtype != DT_INT64)
        return diag_error(d, n, "Y", "indices must be int64, got %s", infer_type_name(ix->dtype));
    cnt = value_numel(ix);
    if (x->rank == 1) {
        dims[0] = 1;
        dims[1] = cnt;
        r = 2;
    } else {
        for (i = 0; i < x->rank - 1; i++)
            dims[i] = x->dims[i];
        dims[x->rank - 1] = cnt;
        r = x->rank;
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, r, dims, d, n);
}

/* Attribute `name` as doubles: a float tensor (TreeEnsemble's form) or
 * FLOATS. Returns the count, -1 when absent, -2 after reporting. */
static int64_t float_array(Graph *g, const Node *n, const char *name, const double **out,
                           Diag *d)
{
    const Attr *a = node_attr(n, name);
    double *v;
    int64_t k;
    if (!a)
        return -1;
    if (a->type == ATTR_FLOATS) {
        *out = a->floats;
        return a->n;
    }
    if (a->type != ATTR_TENSOR || !a->t || a->t->rank > 1 ||
        (a->t->dtype != DT_FLOAT32 && a->t->dtype != DT_FLOAT64)) {
        diag_error(d, n, name, "must be a 1-D float32 or float64 tensor");
        return -2;
    }
    v = arena_array(g->arena, (size_t)a->t->numel + 1, sizeof *v);
    if (!v)
        die("compile arena exhausted");
    for (k = 0; k < a->t->numel; k++)
        v[k] = a->t->dtype == DT_FLOAT32 ? (double)((const float *)a->t->data)[k]
                                         : ((const double *)a->t->data)[k];
    *out = v;
    return a->t->numel;
}

/* Depth-first walk of the tree under node `i`; every node index reached
 * must be in range and reached once (a tree, not a graph with cycles or
 * shared subtrees). */
static int walk_tree(const Node *n, const MlParams *p, int64_t i, uint8_t *seen, Diag *d)
{
    int side;
    if (i < 0 || i >= p->n_nodes)
        return diag_error(d, n, "nodes_truenodeids", "node index %lld is out of range",
                          (long long)i);
    if (seen[i])
        return diag_error(d, n, "nodes_truenodeids", "node %lld is reached twice (not a "
                          "tree)", (long long)i);
    seen[i] = 1;
    for (side = 0; side < 2; side++) {
        int64_t c = side ? p->false_id[i] : p->true_id[i];
        if (side ? p->false_leaf[i] : p->true_leaf[i]) {
            if (c < 0 || c >= p->n_leaves)
                return diag_error(d, n, "leaf_weights", "leaf index %lld is out of range",
                                  (long long)c);
        } else if (walk_tree(n, p, c, seen, d)) {
            return 1;
        }
    }
    return 0;
}

/* Integer array attribute of exactly `want` entries (want < 0: any): INTS,
 * or an integer tensor (nodes_modes is a uint8 tensor). */
static const int64_t *ints_of(Graph *g, const Node *n, const char *name, int64_t want,
                              int64_t *cnt, Diag *d)
{
    const Attr *a = node_attr(n, name);
    const int64_t *v;
    if (a && a->type == ATTR_TENSOR && a->t && a->t->rank <= 1 && a->t->dtype != DT_BOOL &&
        (dtype_is_signed_int(a->t->dtype) || dtype_is_unsigned_int(a->t->dtype))) {
        int64_t *w = arena_array(g->arena, (size_t)a->t->numel + 1, sizeof *w), k;
        Tensor *t = a->t;
        if (!w)
            die("compile arena exhausted");
        for (k = 0; k < t->numel; k++) {
            const unsigned char *e = (const unsigned char *)t->data +
                                     (size_t)k * dtype_size(t->dtype);
            switch (t->dtype) {
            case DT_UINT8: w[k] = *e; break;
            case DT_INT8: w[k] = *(const int8_t *)(const void *)e; break;
            case DT_INT16: w[k] = *(const int16_t *)(const void *)e; break;
            case DT_INT32: w[k] = *(const int32_t *)(const void *)e; break;
            case DT_INT64: w[k] = *(const int64_t *)(const void *)e; break;
            default:
                diag_error(d, n, name, "integer tensor of type %s is not supported",
                           infer_type_name(t->dtype));
                return NULL;
            }
        }
        *cnt = t->numel;
        v = w;
    } else {
        v = attr_ints(n, name, cnt, d);
    }
    if (!v) {
        diag_error(d, n, name, "required attribute is missing");
        return NULL;
    }
    if (want >= 0 && *cnt != want) {
        diag_error(d, n, name, "has %lld entries, expected %lld", (long long)*cnt,
                   (long long)want);
        return NULL;
    }
    return v;
}

static uint8_t *flags_of(Graph *g, const int64_t *v, int64_t cnt)
{
    uint8_t *f = arena_array(g->arena, (size_t)cnt + 1, 1);
    int64_t k;
    if (!f)
        die("compile arena exhausted");
    for (k = 0; k < cnt; k++)
        f[k] = v ? v[k] != 0 : 0;
    return f;
}

int infer_TreeEnsemble(Graph *g, Node *n, Diag *d)
{
    Value *x;
    MlParams p;
    const int64_t *modes, *tl, *fl, *mt = NULL;
    const double *mem = NULL;
    int64_t cnt, nn, nmem = -1, k, next = 0, dims[2];
    int64_t *mstart, *mcount;
    uint8_t *mode, *seen;
    int errs = d->errors;
    if (n->opset < 5)
        return diag_error(d, n, "opset", "TreeEnsemble is an ai.onnx.ml 5 operator, the "
                          "model imports ai.onnx.ml %d", n->opset);
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (!dtype_is_float(x->dtype))
        return diag_error(d, n, "X", "element type %s is not supported (float expected)",
                          infer_type_name(x->dtype));
    if (x->rank != 2)
        return diag_error(d, n, "X", "must be 2-D [N, features], got rank %d", x->rank);
    memset(&p, 0, sizeof p);
    if (attr_int(n, "post_transform", 0, d) != 0)
        return diag_error(d, n, "post_transform", "only NONE (0) is supported");
    k = attr_int(n, "aggregate_function", 1, d);
    if (k < 0 || k > 3)
        return diag_error(d, n, "aggregate_function", "unknown value %lld", (long long)k);
    p.aggregate = (uint8_t)k;
    p.n_targets = attr_int(n, "n_targets", 0, d);
    if (d->errors > errs)
        return 1;
    if (p.n_targets < 1)
        return diag_error(d, n, "n_targets", "required positive attribute is missing");
    if (!(modes = ints_of(g, n, "nodes_modes", -1, &nn, d)))
        return 1;
    p.n_nodes = nn;
    if (!(p.feature = ints_of(g, n, "nodes_featureids", nn, &cnt, d)) ||
        !(p.true_id = ints_of(g, n, "nodes_truenodeids", nn, &cnt, d)) ||
        !(p.false_id = ints_of(g, n, "nodes_falsenodeids", nn, &cnt, d)) ||
        !(tl = ints_of(g, n, "nodes_trueleafs", nn, &cnt, d)) ||
        !(fl = ints_of(g, n, "nodes_falseleafs", nn, &cnt, d)) ||
        !(p.leaf_target = ints_of(g, n, "leaf_targetids", -1, &p.n_leaves, d)) ||
        !(p.roots = ints_of(g, n, "tree_roots", -1, &p.n_trees, d)))
        return 1;
    if (node_attr(n, "nodes_missing_value_tracks_true") &&
        !(mt = ints_of(g, n, "nodes_missing_value_tracks_true", nn, &cnt, d)))
        return 1;
    cnt = float_array(g, n, "nodes_splits", &p.split, d);
    if (cnt == -2)
        return 1;
    if (cnt != nn)
        return diag_error(d, n, "nodes_splits", "has %lld entries, expected %lld",
                          (long long)cnt, (long long)nn);
    cnt = float_array(g, n, "leaf_weights", &p.leaf_weight, d);
    if (cnt == -2)
        return 1;
    if (cnt != p.n_leaves)
        return diag_error(d, n, "leaf_weights", "has %lld entries, expected %lld",
                          (long long)cnt, (long long)p.n_leaves);
    if ((nmem = float_array(g, n, "membership_values", &mem, d)) == -2)
        return 1;
    p.members = mem;
    p.true_leaf = flags_of(g, tl, nn);
    p.false_leaf = flags_of(g, fl, nn);
    p.missing_true = flags_of(g, mt, nn);
    mode = arena_array(g->arena, (size_t)nn + 1, 1);
    mstart = arena_array(g->arena, (size_t)nn + 1, sizeof *mstart);
    mcount = arena_array(g->arena, (size_t)nn + 1, sizeof *mcount);
    seen = arena_array(g->arena, (size_t)nn + 1, 1);
    if (!mode || !mstart || !mcount || !seen)
        die("compile arena exhausted");
    memset(seen, 0, (size_t)nn + 1);
    /* the MEMBER nodes take the NaN-separated runs of membership_values in
     * node order */
    for (k = 0; k < nn; k++) {
        if (modes[k] < TREE_LEQ || modes[k] > TREE_MEMBER)
            return diag_error(d, n, "nodes_modes", "unknown mode %lld", (long long)modes[k]);
        mode[k] = (uint8_t)modes[k];
        if (p.feature[k] < 0 || p.feature[k] >= x->dims[1])
            return diag_error(d, n, "nodes_featureids", "feature %lld is out of range for %lld "
                              "columns", (long long)p.feature[k], (long long)x->dims[1]);
        mstart[k] = next;
        mcount[k] = 0;
        if (mode[k] != TREE_MEMBER)
            continue;
        while (next < nmem && !isnan(mem[next]))
            next++, mcount[k]++;
        if (next >= nmem)
            return diag_error(d, n, "membership_values", "has fewer NaN-terminated sets than "
                              "set membership nodes");
        next++;
    }
    for (k = 0; k < p.n_leaves; k++)
        if (p.leaf_target[k] < 0 || p.leaf_target[k] >= p.n_targets)
            return diag_error(d, n, "leaf_targetids", "target %lld is out of range for "
                              "n_targets %lld", (long long)p.leaf_target[k],
                              (long long)p.n_targets);
    p.mode = mode;
    p.member_start = mstart;
    p.member_count = mcount;
    for (k = 0; k < p.n_trees; k++) {
        int64_t r = p.roots[k];
        if (r < 0 || r >= nn)
            return diag_error(d, n, "tree_roots", "root %lld is out of range", (long long)r);
        /* a root whose two branches are the same leaf is that leaf (as the
         * reference reads it) */
        if (p.true_leaf[r] && p.false_leaf[r] && p.true_id[r] == p.false_id[r]) {
            if (r >= p.n_leaves)
                return diag_error(d, n, "tree_roots", "leaf root %lld is out of range",
                                  (long long)r);
            continue;
        }
        if (walk_tree(n, &p, r, seen, d))
            return 1;
    }
    node_set_params(g, n, PARAMS_ML, &p, sizeof p);
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    dims[0] = x->dims[0];
    dims[1] = p.n_targets;
    return value_set(g, n->out[0], x->dtype, 2, dims, d, n);
}
