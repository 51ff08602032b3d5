/*
 * The training operators of ai.onnx.preview.training, expanded into
 * ordinary nodes once the graph is inferred: Gradient, and the optimizers
 * Adagrad, Adam and Momentum (their update formulas, per optimized tensor,
 * as elementwise nodes; R and T may be computed at run time).
 *
 * Gradient: reverse-mode differentiation at compile time. A Gradient node names a tensor y and tensors xs of its own
 * graph and outputs dy/dx for each x, with the seed dy/dy = 1 (all ones).
 *
 * infer_Gradient gives each output the type and shape of its x. When the
 * whole graph has been inferred, infer_expand_gradients() replaces every
 * Gradient node by ordinary nodes: the nodes on a path from some x to y are
 * visited in reverse order and each contributes the adjoints of its inputs
 * from the adjoint of its output (the rules below); adjoints reaching one
 * value from several readers are added. Shapes are known by then, so the
 * adjoint of a broadcast input is summed back to its shape with ReduceSum
 * and Reshape. The new nodes are put in order and inferred like the rest;
 * constant folding then evaluates them where their inputs are constant.
 *
 * Differentiable here: Add, Sub, Mul, Div, Neg, Identity, Sum, Relu,
 * Sigmoid, Tanh, Exp, Log, Sqrt and 2-D MatMul. Any other operator between
 * an x and y is an error naming it.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

typedef struct Grad {
    Graph *g;
    Diag *d;
    const Node *gn;    /* the Gradient node (copied: the node array grows) */
    int32_t *adj;      /* value -> adjoint value, -1 none */
    const uint8_t *wanted; /* value is on a path from some x to y */
    int counter;       /* for fresh value names */
} Grad;

static int32_t fresh(Grad *G, const char *what)
{
    return graph_add_value(G->g, arena_printf(G->g->arena, "%s/grad_%s_%d", G->gn->name, what,
                                              G->counter++));
}

/* A new node op(in[0..n_in)) with one fresh output, returned. */
static int32_t node_n(Grad *G, OpKind op, int n_in, const int32_t *in)
{
    int32_t ni = graph_add_node(G->g, op, arena_printf(G->g->arena, "%s/%s", G->gn->name,
                                                     op_info[op].name), n_in, 1);
    int32_t out = fresh(G, op_info[op].name);
    Node *n = &G->g->nodes[ni];
    n->index = G->gn->index;
    memcpy(n->in, in, (size_t)n_in * sizeof *in);
    n->out[0] = out;
    G->g->values[out].producer = ni;
    return out;
}

/* op(a) when b < 0, else op(a, b). */
static int32_t node2(Grad *G, OpKind op, int32_t a, int32_t b)
{
    int32_t in[2];
    in[0] = a;
    in[1] = b;
    return node_n(G, op, b >= 0 ? 2 : 1, in);
}

/* A constant tensor; fill is stored in dtype dt (a float type). */
static int32_t constant(Grad *G, DType dt, int rank, const int64_t *dims, double fill)
{
    int32_t vi = fresh(G, "const");
    Value *v = &G->g->values[vi];
    int64_t n = 1, i;
    size_t es = dtype_size(dt);
    unsigned char *p;
    for (i = 0; i < rank; i++)
        n *= dims[i];
    p = arena_array(G->g->arena, (size_t)n + 1, es);
    if (!p)
        die("compile arena exhausted");
    for (i = 0; i < n; i++) {
        float f = (float)fill;
        if (dt == DT_FLOAT64) {
            memcpy(p + (size_t)i * es, &fill, es);
        } else if (dt == DT_FLOAT16 || dt == DT_BFLOAT16) {
            uint16_t h = dt == DT_FLOAT16 ? dtype_f32_to_f16(f) : dtype_f32_to_bf16(f);
            memcpy(p + (size_t)i * es, &h, es);
        } else {
            memcpy(p + (size_t)i * es, &f, es);
        }
    }
    v->dtype = dt;
    v->rank = rank;
    if (rank > 0)
        memcpy(v->dims, dims, (size_t)rank * sizeof *dims);
    v->data = p;
    return vi;
}

static int32_t scalar(Grad *G, DType dt, double x)
{
    return constant(G, dt, 0, NULL, x);
}

static int32_t int64_vector(Grad *G, int n, const int64_t *x)
{
    int32_t vi = fresh(G, "ints");
    Value *v = &G->g->values[vi];
    int64_t *p = arena_array(G->g->arena, (size_t)n + 1, sizeof *p);
    if (!p)
        die("compile arena exhausted");
    if (n)
        memcpy(p, x, (size_t)n * sizeof *p);
    v->dtype = DT_INT64;
    v->rank = 1;
    v->dims[0] = n;
    v->data = p;
    return vi;
}

/* Sums adjoint a, of the shape of the op's output y, back to the shape of
 * value t, undoing numpy broadcasting. (New values have no shape until the
 * expanded nodes are inferred, hence y.) */
static int32_t sum_to(Grad *G, int32_t a, int32_t y, int32_t t)
{
    const Value *va = &G->g->values[y], *vt = &G->g->values[t];
    int64_t axes[TVMCC_MAX_RANK];
    int n_axes = 0, i, lead = va->rank - vt->rank;
    int32_t r, ni;
    if (va->rank == vt->rank && !memcmp(va->dims, vt->dims, (size_t)va->rank * sizeof va->dims[0]))
        return a;
    for (i = 0; i < va->rank; i++)
        if (i < lead || (vt->dims[i - lead] == 1 && va->dims[i] != 1))
            axes[n_axes++] = i;
    if (n_axes) {
        if (G->g->opset >= 13) {
            r = node2(G, OP_ReduceSum, a, int64_vector(G, n_axes, axes));
            ni = G->g->values[r].producer;
        } else {
            Attr at;
            int64_t *p = arena_array(G->g->arena, (size_t)n_axes, sizeof *p);
            if (!p)
                die("compile arena exhausted");
            memcpy(p, axes, (size_t)n_axes * sizeof *p);
            r = node2(G, OP_ReduceSum, a, -1);
            ni = G->g->values[r].producer;
            memset(&at, 0, sizeof at);
            at.name = "axes";
            at.type = ATTR_INTS;
            at.n = n_axes;
            at.ints = p;
            node_add_attr(G->g, ni, at);
        }
        a = r;
    }
    vt = &G->g->values[t];
    return node2(G, OP_Reshape, a, int64_vector(G, vt->rank, vt->dims));
}

/* Adds contribution c to the adjoint of value v (if v leads back to an x). */
static void accumulate(Grad *G, int32_t v, int32_t c)
{
    if (v < 0 || !G->wanted[v])
        return;
    G->adj[v] = G->adj[v] < 0 ? c : node2(G, OP_Add, G->adj[v], c);
}

/* Transpose of a 2-D value. */
static int32_t transpose2(Grad *G, int32_t a)
{
    return node2(G, OP_Transpose, a, -1); /* default perm reverses the axes */
}

/* The adjoints of node n's inputs from gy, the adjoint of its output. Only
 * inputs marked in `wanted` get one. Returns nonzero after reporting. */
static int backward(Grad *G, const Node *n, int32_t gy)
{
    Graph *g = G->g;
    int32_t a = n->in[0], b = n->n_in > 1 ? n->in[1] : -1, y = n->out[0];
    DType dt = g->values[y].dtype;
    int i;
#define WANT(v) ((v) >= 0 && G->wanted[v])
    switch (n->op) {
    case OP_Identity:
        accumulate(G, a, gy);
        return 0;
    case OP_Add:
    case OP_Sub:
        if (WANT(a))
            accumulate(G, a, sum_to(G, gy, y, a));
        if (WANT(b))
            accumulate(G, b, sum_to(G, n->op == OP_Sub ? node2(G, OP_Neg, gy, -1) : gy, y, b));
        return 0;
    case OP_Sum:
        for (i = 0; i < n->n_in; i++)
            if (WANT(n->in[i]))
                accumulate(G, n->in[i], sum_to(G, gy, y, n->in[i]));
        return 0;
    case OP_Mul:
        if (WANT(a))
            accumulate(G, a, sum_to(G, node2(G, OP_Mul, gy, b), y, a));
        if (WANT(b))
            accumulate(G, b, sum_to(G, node2(G, OP_Mul, gy, a), y, b));
        return 0;
    case OP_Div: /* y = a / b: da = gy / b, db = -gy * y / b */
        if (WANT(a))
            accumulate(G, a, sum_to(G, node2(G, OP_Div, gy, b), y, a));
        if (WANT(b)) {
            int32_t t = node2(G, OP_Div, node2(G, OP_Mul, gy, y), b);
            accumulate(G, b, sum_to(G, node2(G, OP_Neg, t, -1), y, b));
        }
        return 0;
    case OP_Neg:
        accumulate(G, a, node2(G, OP_Neg, gy, -1));
        return 0;
    case OP_Relu: { /* gy where a > 0, else 0 */
        int32_t in[3];
        in[0] = node2(G, OP_Greater, a, scalar(G, dt, 0.0));
        in[1] = gy;
        in[2] = scalar(G, dt, 0.0);
        accumulate(G, a, node_n(G, OP_Where, 3, in));
        return 0;
    }
    case OP_Sigmoid: /* gy * y * (1 - y) */
        accumulate(G, a, node2(G, OP_Mul, node2(G, OP_Mul, gy, y),
                               node2(G, OP_Sub, scalar(G, dt, 1.0), y)));
        return 0;
    case OP_Tanh: /* gy * (1 - y^2) */
        accumulate(G, a, node2(G, OP_Mul, gy,
                               node2(G, OP_Sub, scalar(G, dt, 1.0), node2(G, OP_Mul, y, y))));
        return 0;
    case OP_Exp:
        accumulate(G, a, node2(G, OP_Mul, gy, y));
        return 0;
    case OP_Log:
        accumulate(G, a, node2(G, OP_Div, gy, a));
        return 0;
    case OP_Sqrt: /* gy / (2 y) */
        accumulate(G, a, node2(G, OP_Div, gy, node2(G, OP_Mul, scalar(G, dt, 2.0), y)));
        return 0;
    case OP_MatMul:
        if (g->values[a].rank != 2 || g->values[b].rank != 2)
            break;
        if (WANT(a))
            accumulate(G, a, node2(G, OP_MatMul, gy, transpose2(G, b)));
        if (WANT(b))
            accumulate(G, b, node2(G, OP_MatMul, transpose2(G, a), gy));
        return 0;
    default:
        break;
    }
#undef WANT
    return diag_error(G->d, G->gn, "y",
                      "cannot differentiate through node '%s' (%s, #%ld)%s", n->name, n->op_type,
                      (long)n->index,
                      n->op == OP_MatMul ? ": only 2-D MatMul is differentiated" : "");
}

/* Makes output value `out` the result of `src` (an Identity node). */
static void bind_output(Grad *G, int32_t src, int32_t out)
{
    int32_t id;
    if (out < 0)
        return;
    id = graph_add_node(G->g, OP_Identity, G->gn->name, 1, 1);
    G->g->nodes[id].index = G->gn->index;
    G->g->nodes[id].in[0] = src;
    G->g->nodes[id].out[0] = out;
    G->g->values[out].producer = id;
}

/* Expands Gradient node gi. Returns nonzero after reporting. */
static int expand(Graph *g, int32_t gi, Diag *d)
{
    Node gn = g->nodes[gi];
    const Attr *xs = node_attr(&gn, "xs");
    const char *yname = attr_string(&gn, "y", NULL, d);
    int32_t y, nv = g->n_values, ni, nn = g->n_nodes, i;
    uint8_t *from_x, *to_y;
    Grad G;
    if (!yname)
        return 1;
    y = graph_find_value(g, yname);
    /* infer_Gradient checked xs, y and the outputs */
    from_x = arena_alloc(g->arena, (size_t)nv + 1);
    to_y = arena_alloc(g->arena, (size_t)nv + 1);
    memset(&G, 0, sizeof G);
    G.adj = arena_array(g->arena, (size_t)nv + 1, sizeof *G.adj);
    if (!from_x || !to_y || !G.adj)
        die("compile arena exhausted");
    memset(from_x, 0, (size_t)nv + 1);
    memset(to_y, 0, (size_t)nv + 1);
    for (i = 0; i < nv; i++)
        G.adj[i] = -1;
    G.g = g;
    G.d = d;
    G.gn = &gn;
    for (i = 0; i < xs->n; i++)
        from_x[graph_find_value(g, xs->strings[i])] = 1;
    /* values that depend on some x (nodes are in order) */
    for (ni = 0; ni < nn; ni++) {
        const Node *n = &g->nodes[ni];
        int k, hit = 0;
        if (n->dead || ni == gi)
            continue;
        for (k = 0; k < n->n_in; k++)
            hit |= n->in[k] >= 0 && from_x[n->in[k]];
        for (k = 0; hit && k < n->n_out; k++)
            if (n->out[k] >= 0)
                from_x[n->out[k]] = 1;
    }
    /* ... and that y depends on */
    to_y[y] = 1;
    for (ni = nn - 1; ni >= 0; ni--) {
        const Node *n = &g->nodes[ni];
        int k, hit = 0;
        if (n->dead || ni == gi)
            continue;
        for (k = 0; k < n->n_out; k++)
            hit |= n->out[k] >= 0 && to_y[n->out[k]];
        for (k = 0; hit && k < n->n_in; k++)
            if (n->in[k] >= 0)
                to_y[n->in[k]] = 1;
    }
    for (i = 0; i < nv; i++)
        from_x[i] = (uint8_t)(from_x[i] && to_y[i]); /* on a path from an x to y */
    G.wanted = from_x;
    if (!dtype_is_float(g->values[y].dtype))
        return infer_need_float(&gn, &g->values[y], "y", d);
    if (from_x[y])
        G.adj[y] = constant(&G, g->values[y].dtype, g->values[y].rank, g->values[y].dims, 1.0);
    for (ni = nn - 1; ni >= 0; ni--) {
        Node n = g->nodes[ni];
        if (n.dead || ni == gi || n.n_out < 1 || n.out[0] < 0 || G.adj[n.out[0]] < 0)
            continue;
        if (n.n_out > 1)
            return diag_error(d, &gn, "y", "cannot differentiate through node '%s' (%s, #%ld): "
                              "it has several outputs", n.name, n.op_type, (long)n.index);
        if (backward(&G, &n, G.adj[n.out[0]]))
            return 1;
    }
    /* outputs: the adjoint of each x, zeros where y does not depend on it */
    for (i = 0; i < gn.n_out; i++) {
        int32_t x = graph_find_value(g, xs->strings[i]);
        if (gn.out[i] < 0)
            continue;
        bind_output(&G, G.adj[x] >= 0 ? G.adj[x]
                                      : constant(&G, g->values[x].dtype, g->values[x].rank,
                                                 g->values[x].dims, 0.0),
                    gn.out[i]);
    }
    g->nodes[gi].dead = 1;
    return 0;
}

/* ---- optimizers ---- */

/* Cast of v to dtype dt (v itself if it has that type). */
static int32_t cast_to(Grad *G, int32_t v, DType dt)
{
    int32_t out;
    Attr to;
    if (G->g->values[v].dtype == dt)
        return v;
    out = node2(G, OP_Cast, v, -1);
    memset(&to, 0, sizeof to);
    to.name = "to";
    to.type = ATTR_INT;
    to.i = (int64_t)dt;
    node_add_attr(G->g, G->g->values[out].producer, to);
    return out;
}

#define MUL(a, b) node2(&G, OP_Mul, a, b)
#define ADD(a, b) node2(&G, OP_Add, a, b)
#define SUB(a, b) node2(&G, OP_Sub, a, b)
#define DIV(a, b) node2(&G, OP_Div, a, b)

/* MUL etc. are used in expand_optimizer, where G is the Grad. */

/* T > 0 ? a : b, with T the int64 update count. */
static int32_t if_t_positive(Grad *G, int32_t t, int32_t a, int32_t b)
{
    int32_t in[3], zero = int64_vector(G, 1, &(int64_t){0});
    G->g->values[zero].rank = 0; /* a scalar, so T > 0 keeps T's rank 0 */
    in[0] = node2(G, OP_Greater, t, zero);
    in[1] = a;
    in[2] = b;
    return node_n(G, OP_Where, 3, in);
}

static int expand_optimizer(Graph *g, int32_t ni, Diag *d)
{
    Node on = g->nodes[ni];
    int per = on.op == OP_Adam ? 4 : 3, n = (on.n_in - 2) / per, i;
    int32_t R = on.in[0], T = on.in[1];
    Grad G;
    double eps = attr_float(&on, "epsilon", 1e-6, d);
    double norm = attr_float(&on, "norm_coefficient", 0.0, d);
    memset(&G, 0, sizeof G);
    G.g = g;
    G.d = d;
    G.gn = &on;
    for (i = 0; i < n; i++) {
        int32_t X = on.in[2 + i], Gr = on.in[2 + n + i], V = on.in[2 + 2 * n + i];
        DType dt = g->values[X].dtype;
        int32_t r = cast_to(&G, R, dt), tf = cast_to(&G, T, dt);
        int32_t greg = ADD(MUL(scalar(&G, dt, norm), X), Gr), xn;
        if (on.op == OP_Adagrad) { /* V is H here */
            double decay = attr_float(&on, "decay_factor", 0.0, d);
            int32_t rr = DIV(r, ADD(scalar(&G, dt, 1.0), MUL(tf, scalar(&G, dt, decay))));
            int32_t hn = ADD(V, MUL(greg, greg));
            int32_t ha = ADD(node2(&G, OP_Sqrt, hn, -1), scalar(&G, dt, eps));
            xn = SUB(X, DIV(MUL(rr, greg), ha));
            bind_output(&G, xn, on.out[i]);
            bind_output(&G, hn, on.out[n + i]);
        } else if (on.op == OP_Momentum) {
            double alpha = attr_float(&on, "alpha", 0.0, d), beta = attr_float(&on, "beta", 0.0, d);
            const char *mode = attr_string(&on, "mode", "standard", d);
            int32_t badj = if_t_positive(&G, T, scalar(&G, dt, beta), scalar(&G, dt, 1.0));
            int32_t vn = ADD(MUL(scalar(&G, dt, alpha), V), MUL(badj, greg));
            if (!strcmp(mode, "nesterov"))
                xn = SUB(X, MUL(r, ADD(greg, MUL(scalar(&G, dt, alpha), vn))));
            else
                xn = SUB(X, MUL(r, vn));
            bind_output(&G, xn, on.out[i]);
            bind_output(&G, vn, on.out[n + i]);
        } else { /* Adam */
            int32_t H = on.in[2 + 3 * n + i];
            double alpha = attr_float(&on, "alpha", 0.9, d), beta = attr_float(&on, "beta", 0.999, d);
            double post = attr_float(&on, "norm_coefficient_post", 0.0, d);
            int32_t vn = ADD(MUL(scalar(&G, dt, alpha), V), MUL(scalar(&G, dt, 1.0 - alpha), greg));
            int32_t hn = ADD(MUL(scalar(&G, dt, beta), H),
                             MUL(scalar(&G, dt, 1.0 - beta), MUL(greg, greg)));
            int32_t hs = ADD(node2(&G, OP_Sqrt, hn, -1), scalar(&G, dt, eps));
            int32_t bt = node2(&G, OP_Pow, scalar(&G, dt, beta), tf);
            int32_t at = node2(&G, OP_Pow, scalar(&G, dt, alpha), tf);
            int32_t radj = DIV(MUL(r, node2(&G, OP_Sqrt, SUB(scalar(&G, dt, 1.0), bt), -1)),
                               SUB(scalar(&G, dt, 1.0), at));
            radj = if_t_positive(&G, T, radj, r);
            xn = SUB(X, DIV(MUL(radj, vn), hs));
            bind_output(&G, MUL(scalar(&G, dt, 1.0 - post), xn), on.out[i]);
            bind_output(&G, vn, on.out[n + i]);
            bind_output(&G, hn, on.out[2 * n + i]);
        }
    }
    g->nodes[ni].dead = 1;
    return d->errors ? 1 : 0;
}

int infer_expand_gradients(Graph *g, Diag *d)
{
    int32_t ni, nn = g->n_nodes;
    int any = 0;
    for (ni = 0; ni < nn; ni++) {
        OpKind op = g->nodes[ni].op;
        if (g->nodes[ni].dead)
            continue;
        if (op == OP_Gradient || op == OP_Adagrad || op == OP_Adam || op == OP_Momentum) {
            if (op == OP_Gradient ? expand(g, ni, d) : expand_optimizer(g, ni, d))
                return 1;
            any = 1;
        }
    }
    if (any)
        graph_toposort(g);
    return any ? 0 : -1;
}

int infer_Gradient(Graph *g, Node *n, Diag *d)
{
    const Attr *xs = node_attr(n, "xs");
    const Attr *zs = node_attr(n, "zs");
    const char *yname = attr_string(n, "y", NULL, d);
    int64_t nz = 0;
    int32_t y;
    int i;
    if (!xs || xs->type != ATTR_STRINGS || xs->n < 1)
        return diag_error(d, n, "xs", "required list of tensor names is missing");
    if (zs && zs->type != ATTR_STRINGS)
        return diag_error(d, n, "zs", "must be a list of tensor names");
    if (zs)
        nz = zs->n;
    if (!yname)
        return diag_error(d, n, "y", "required tensor name is missing");
    y = graph_find_value(g, yname);
    if (y < 0)
        return diag_error(d, n, "y", "no tensor named '%s' in the graph", yname);
    if (g->values[y].producer < 0)
        return diag_error(d, n, "y", "'%s' is not computed by a node", yname);
    if (xs->n + nz != n->n_in)
        return diag_error(d, n, "input count", "xs and zs name %lld tensors but the node has "
                          "%d inputs", (long long)(xs->n + nz), n->n_in);
    if (xs->n != n->n_out)
        return diag_error(d, n, "output count", "xs names %lld tensors but the node has %d "
                          "outputs", (long long)xs->n, n->n_out);
    for (i = 0; i < xs->n; i++) {
        int32_t x = graph_find_value(g, xs->strings[i]);
        const Value *v;
        char field[32];
        snprintf(field, sizeof field, "xs[%d]", i);
        if (x < 0)
            return diag_error(d, n, field, "no tensor named '%s' in the graph", xs->strings[i]);
        if (n->in[i] != x)
            return diag_error(d, n, field, "input %d is not '%s': a Gradient evaluated at other "
                              "values than the graph's own is not supported", i, xs->strings[i]);
        v = &g->values[x];
        if (!value_is_static(v))
            return diag_error(d, n, field, "'%s' has no known type and shape", v->name);
        if (infer_need_float(n, v, field, d))
            return 1;
        if (n->out[i] >= 0 && value_set(g, n->out[i], v->dtype, v->rank, v->dims, d, n))
            return 1;
    }
    return 0;
}

/* Checks an optimizer's inputs (R, T, then `per` groups of n tensors) and
 * gives each output the shape of its X, V or H. */
static int infer_optimizer(Graph *g, Node *n, Diag *d, int per)
{
    const Value *R = in_val(g, n, 0), *T = in_val(g, n, 1);
    int k = (n->n_in - 2) / per, i, j;
    if ((n->n_in - 2) % per || k < 1)
        return diag_error(d, n, "input count", "takes R, T and %d tensors per optimized "
                          "tensor, got %d inputs", per, n->n_in);
    if (n->n_out != (per - 1) * k)
        return diag_error(d, n, "output count", "%d optimized tensors give %d outputs, got %d",
                          k, (per - 1) * k, n->n_out);
    if (infer_need_float(n, R, "input[0]", d))
        return 1;
    if (value_numel(R) != 1)
        return diag_error(d, n, "input[0]", "the learning rate R must be a scalar");
    if (T->dtype != DT_INT64 || value_numel(T) != 1)
        return diag_error(d, n, "input[1]", "the update count T must be an int64 scalar");
    if (n->op == OP_Momentum) {
        const char *mode = attr_string(n, "mode", NULL, d);
        if (!node_attr(n, "alpha") || !node_attr(n, "beta") || !mode ||
            !node_attr(n, "norm_coefficient"))
            return diag_error(d, n, "alpha", "Momentum needs the attributes alpha, beta, mode "
                              "and norm_coefficient");
        if (strcmp(mode, "standard") && strcmp(mode, "nesterov"))
            return diag_error(d, n, "mode", "must be 'standard' or 'nesterov', got '%s'", mode);
    }
    for (i = 0; i < k; i++) {
        const Value *x = in_val(g, n, 2 + i);
        char field[32];
        snprintf(field, sizeof field, "input[%d]", 2 + i);
        if (infer_need_float(n, x, field, d))
            return 1;
        for (j = 1; j < per; j++) {
            const Value *o = in_val(g, n, 2 + j * k + i);
            snprintf(field, sizeof field, "input[%d]", 2 + j * k + i);
            if (o->dtype != x->dtype || o->rank != x->rank ||
                memcmp(o->dims, x->dims, (size_t)x->rank * sizeof x->dims[0]))
                return diag_error(d, n, field, "'%s' must have the type and shape of '%s'",
                                  o->name, x->name);
        }
        for (j = 0; j < per - 1; j++)
            if (n->out[j * k + i] >= 0 &&
                value_set(g, n->out[j * k + i], x->dtype, x->rank, x->dims, d, n))
                return 1;
    }
    return 0;
}

int infer_Adagrad(Graph *g, Node *n, Diag *d)
{
    return infer_optimizer(g, n, d, 3);
}

int infer_Momentum(Graph *g, Node *n, Diag *d)
{
    return infer_optimizer(g, n, d, 3);
}

int infer_Adam(Graph *g, Node *n, Diag *d)
{
    return infer_optimizer(g, n, d, 4);
}
