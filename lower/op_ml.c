/*
 * Lowering of the ai.onnx.ml operators (frontend/infer_ml.c): Binarizer
 * and ArrayFeatureExtractor are one elementwise / gather stage each
 * (LabelEncoder is lowered in lower/op_string.c).
 *
 * TreeEnsemble is one stage over the output [N, n_targets]. The trees are
 * known at compile time, so each becomes an expression: a node is
 * select(test on X[n, feature], true subtree, false subtree) and a leaf is
 * its weight where the output column is the leaf's target, else the
 * aggregate's identity (0 for sums; the type's largest / lowest value for
 * MIN / MAX). The trees' expressions are combined in tree order, as the
 * reference accumulates them, so a sample costs one root-to-leaf path per
 * tree and target (a select evaluates only the branch taken).
 */
#include "lower.h"

#include <float.h>
#include <math.h>

int lower_Binarizer(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    DType ct = dtype_compute(x->dtype);
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    Expr *v = ex_load_broadcast(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, c);
    int fl = dtype_is_float(ct);
    double t = node_ml(n)->threshold;
    Expr *th = fl ? ex_float(L, ct, t) : ex_const_int(L, ct, dtype_float_to_int(ct, t));
    c->body = ex_select(L, ex_binary(L, BIN_GT, v, th),
                        fl ? ex_float(L, ct, 1.0) : ex_const_int(L, ct, 1),
                        fl ? ex_float(L, ct, 0.0) : ex_const_int(L, ct, 0));
    return 0;
}

/* out[..., j] = X[..., indices[j]]; an index outside the last axis is
 * clamped (the reference raises) so that the kernel never reads out of
 * bounds. */
int lower_ArrayFeatureExtractor(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]];
    int64_t F = x->dims[x->rank - 1];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    int r = L->g->values[n->out[0]].rank, i;
    Expr *xi[TVMCC_MAX_RANK], *k;
    k = ex_cast(L, DT_INT64, ex_load(L, lower_buf_value(L, n->in[1]), ex_var(L, &c->axes[r - 1])));
    k = ex_select(L, ex_lt(L, k, ex_int(L, 0)), ex_add(L, k, ex_int(L, F)), k);
    k = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, k, ex_int(L, 0)), ex_int(L, F - 1));
    for (i = 0; i < x->rank - 1; i++)
        xi[i] = ex_var(L, &c->axes[i]);
    xi[x->rank - 1] = k;
    c->body = ex_load_nd(L, lower_buf_value(L, n->in[0]), x->rank, x->dims, xi);
    return 0;
}

typedef struct TreeCtx {
    const MlParams *p;
    int xb;
    const Value *x;
    DType ct;
    Expr *row, *col;  /* sample and target (output axes) */
    Expr *ident;      /* the aggregate's identity */
} TreeCtx;

static Expr *leaf_expr(Lower *L, const TreeCtx *t, int64_t leaf)
{
    const MlParams *p = t->p;
    Expr *w = ex_float(L, t->ct, p->leaf_weight[leaf]);
    if (p->aggregate == TREE_AVERAGE)
        w = ex_binary(L, BIN_DIV, w, ex_float(L, t->ct, (double)p->n_trees));
    return ex_select(L, ex_binary(L, BIN_EQ, t->col, ex_int(L, p->leaf_target[leaf])), w,
                     t->ident);
}

/* The test of node i on the sample's feature (NaN goes the true way when
 * missing_true is set). */
static Expr *node_test(Lower *L, const TreeCtx *t, int64_t i)
{
    const MlParams *p = t->p;
    Expr *xi[2] = { t->row, ex_int(L, p->feature[i]) };
    Expr *v = ex_load_nd(L, t->xb, 2, t->x->dims, xi), *s, *cond = NULL;
    static const BinaryOp cmp[] = { BIN_LE, BIN_LT, BIN_GE, BIN_GT, BIN_EQ, BIN_NE };
    int64_t k;
    if (p->mode[i] == TREE_MEMBER) {
        for (k = 0; k < p->member_count[i]; k++) {
            Expr *eq = ex_binary(L, BIN_EQ, v,
                                 ex_float(L, t->ct, p->members[p->member_start[i] + k]));
            cond = cond ? ex_binary(L, BIN_OR, cond, eq) : eq;
        }
        if (!cond)
            cond = ex_const_int(L, DT_BOOL, 0);
    } else {
        s = ex_float(L, t->ct, p->split[i]);
        cond = ex_binary(L, cmp[p->mode[i]], v, s);
    }
    if (p->missing_true[i])
        cond = ex_binary(L, BIN_OR, cond, ex_unary(L, UN_ISNAN, v));
    return cond;
}

/* The tree under node i (inference checked it is a tree). */
static Expr *tree_expr(Lower *L, const TreeCtx *t, int64_t i)
{
    const MlParams *p = t->p;
    Expr *a = p->true_leaf[i] ? leaf_expr(L, t, p->true_id[i]) : tree_expr(L, t, p->true_id[i]);
    Expr *b = p->false_leaf[i] ? leaf_expr(L, t, p->false_id[i])
                               : tree_expr(L, t, p->false_id[i]);
    return ex_select(L, node_test(L, t, i), a, b);
}

int lower_TreeEnsemble(Lower *L, Node *n)
{
    const MlParams *p = node_ml(n);
    const Value *x = &L->g->values[n->in[0]];
    Compute *c = lower_elemwise_stage(L, n, n->out[0]);
    TreeCtx t;
    Expr *acc;
    int64_t k;
    double big = x->dtype == DT_FLOAT64 ? DBL_MAX : FLT_MAX;
    t.p = p;
    t.xb = lower_buf_value(L, n->in[0]);
    t.x = x;
    t.ct = dtype_compute(x->dtype);
    t.row = ex_var(L, &c->axes[0]);
    t.col = ex_var(L, &c->axes[1]);
    t.ident = ex_float(L, t.ct, p->aggregate == TREE_MIN ? big
                                : p->aggregate == TREE_MAX ? -big : 0.0);
    acc = t.ident;
    for (k = 0; k < p->n_trees; k++) {
        int64_t r = p->roots[k];
        Expr *e = p->true_leaf[r] && p->false_leaf[r] && p->true_id[r] == p->false_id[r]
                      ? leaf_expr(L, &t, r)
                      : tree_expr(L, &t, r);
        if (p->aggregate == TREE_MIN)
            acc = ex_binary(L, BIN_MIN, acc, e);
        else if (p->aggregate == TREE_MAX)
            acc = ex_binary(L, BIN_MAX, acc, e);
        else
            acc = ex_add(L, acc, e);
    }
    c->body = acc;
    return 0;
}
