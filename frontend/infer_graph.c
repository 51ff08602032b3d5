/*
 * infer_graph: type and shape inference over a whole graph. Nodes are visited
 * in order (the loader guarantees topological order). For each live node the
 * driver checks the input and output counts against the op table, checks that
 * every present input already has a known type and static shape, and calls
 * the op's infer_<Name>() through a table generated from ops.h. It stops at
 * the first node that fails so that one bad node does not cascade into a page
 * of follow-on errors.
 *
 * Around each call, infer_seq_check_inputs/outputs (infer_seq.c) keep
 * stacked sequences away from operators that take tensors and from the
 * graph outputs.
 *
 * A value may carry a declared shape (value_info, graph outputs); inference
 * replaces it, with a warning when the two disagree.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

typedef int (*InferFn)(Graph *, Node *, Diag *);

static const InferFn infer_table[OP_COUNT] = {
    NULL,
#define OP(name, mi, ma, mo, mao, cat) infer_##name,
#include "../ir/ops.h"
#undef OP
};

/* Checks arity against the op table; reports and returns nonzero on error. */
static int check_arity(const Node *n, Diag *d)
{
    const OpInfo *oi = &op_info[n->op];
    int i;
    if (n->n_in < oi->min_in || (oi->max_in >= 0 && n->n_in > oi->max_in)) {
        if (oi->max_in < 0)
            return diag_error(d, n, "input count", "%s takes at least %d inputs, got %d",
                              oi->name, oi->min_in, n->n_in);
        if (oi->min_in == oi->max_in)
            return diag_error(d, n, "input count", "%s takes %d input%s, got %d", oi->name,
                              oi->min_in, oi->min_in == 1 ? "" : "s", n->n_in);
        return diag_error(d, n, "input count", "%s takes %d to %d inputs, got %d", oi->name,
                          oi->min_in, oi->max_in, n->n_in);
    }
    if (n->n_out < oi->min_out || (oi->max_out >= 0 && n->n_out > oi->max_out)) {
        if (oi->max_out < 0)
            return diag_error(d, n, "output count", "%s has at least %d outputs, got %d",
                              oi->name, oi->min_out, n->n_out);
        return diag_error(d, n, "output count", "%s has %d to %d outputs, got %d", oi->name,
                          oi->min_out, oi->max_out, n->n_out);
    }
    for (i = 0; i < oi->min_in; i++)
        if (n->in[i] < 0) {
            char field[32];
            snprintf(field, sizeof field, "input[%d]", i);
            return diag_error(d, n, field, "required input is missing");
        }
    for (i = 0; i < oi->min_out; i++)
        if (n->out[i] < 0) {
            char field[32];
            snprintf(field, sizeof field, "output[%d]", i);
            return diag_error(d, n, field, "required output is missing");
        }
    return 0;
}

static void shape_text(char *buf, size_t cap, const Value *v, int rank, const int64_t *dims)
{
    size_t k = 0;
    int i;
    k += (size_t)snprintf(buf, cap, "%s[", dtype_name(v->dtype) ? dtype_name(v->dtype) : "?");
    for (i = 0; i < rank && k + 24 < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (k + 2 < cap)
        snprintf(buf + k, cap - k, "]");
}

/* The operators that make string tensors (a runtime call writes each
 * output string pointer). */
static int makes_strings(const Node *n)
{
    return n->op == OP_StringNormalizer || n->op == OP_StringConcat || n->op == OP_StringSplit ||
           n->op == OP_Cast || n->op == OP_CastLike || n->op == OP_LabelEncoder;
}

/* A string graph output must be written by a string operator itself, once:
 * copying one (from an input, or to a second output) would need the
 * target's pointer size, which the byte counts do not know. */
static void check_string_outputs(Graph *g, Diag *d)
{
    int i, j;
    for (i = 0; i < g->n_outputs; i++) {
        const Value *v = &g->values[g->outputs[i]];
        int twice = 0;
        if (v->dtype != DT_STRING)
            continue;
        for (j = 0; j < i; j++)
            twice |= g->outputs[j] == g->outputs[i];
        if (v->producer < 0 || !makes_strings(&g->nodes[v->producer]) || twice) {
            diag_error(d, NULL, NULL, "graph output '%s' is a string tensor not written by a "
                       "string operator (or listed twice); tvmcc does not copy strings",
                       v->name);
            return;
        }
    }
}

/* The operators that take or make string tensors (frontend/infer_string.c;
 * Equal, Cast and CastLike there and in infer_elemwise.c / infer_extra.c;
 * LabelEncoder). */
static int takes_strings(const Node *n, int outputs)
{
    switch (n->op) {
    case OP_StringNormalizer: case OP_StringConcat: case OP_StringSplit: case OP_Cast:
    case OP_CastLike: case OP_LabelEncoder:
        return 1;
    case OP_RegexFullMatch: case OP_Equal:
        return !outputs;
    default:
        return 0;
    }
}

/* String tensors reach only the operators that take them: reports a string
 * input (or, after inference, output) of any other node. */
static int check_strings(Graph *g, const Node *n, int outputs, Diag *d)
{
    int i, count = outputs ? n->n_out : n->n_in;
    if (takes_strings(n, outputs))
        return 0;
    for (i = 0; i < count; i++) {
        int32_t vi = outputs ? n->out[i] : n->in[i];
        char field[32];
        if (vi < 0 || g->values[vi].dtype != DT_STRING)
            continue;
        snprintf(field, sizeof field, "%s[%d]", outputs ? "output" : "input", i);
        return diag_error(d, n, field, "'%s' is a string tensor; %s does not take string "
                          "tensors (docs/user-guide.md, String tensors)",
                          g->values[vi].name, n->op_type);
    }
    return 0;
}

/* Infers node ni (and folds it through g->settings.fold). Returns nonzero
 * after reporting an error. */
static int infer_node(Graph *g, int32_t ni, Diag *d)
{
    int before = d->errors;
    Node *n = &g->nodes[ni];
    int i, rc;
    /* declared shapes of the outputs, to compare after inference */
    struct { DType dt; int rank; int64_t dims[TVMCC_MAX_RANK]; } decl[8];
    if (n->op == OP_UNKNOWN || (unsigned)n->op >= OP_COUNT)
        return diag_error(d, n, NULL, "unsupported operator");
    if (check_arity(n, d) || check_strings(g, n, 0, d))
        return 1;
    rc = 0;
    for (i = 0; i < n->n_in && !rc; i++)
        if (n->in[i] >= 0)
            rc = need_input(g, n, i, d);
    if (rc)
        return 1;
    for (i = 0; i < n->n_out && i < 8; i++) {
        Value *v = out_val(g, n, i);
        decl[i].dt = DT_UNDEF;
        decl[i].rank = -1;
        if (v && v->declared) {
            decl[i].dt = v->dtype;
            decl[i].rank = v->rank;
            memcpy(decl[i].dims, v->dims, sizeof v->dims);
        }
    }
    if (infer_seq_check_inputs(g, n, d))
        return 1;
    rc = infer_table[n->op](g, n, d);
    if (rc || d->errors > before || infer_seq_check_outputs(g, n, d) ||
        check_strings(g, n, 1, d))
        return 1;
    if (g->settings.fold && g->settings.fold(g, ni, d))
        return 1;
    n = &g->nodes[ni];
    n->inferred = 1;
    for (i = 0; i < n->n_out; i++) {
        Value *v = out_val(g, n, i);
        char a[256], b[256];
        int k, differ;
        if (!v)
            continue;
        if (!value_is_static(v))
            return diag_error(d, n, "output", "internal: infer_%s left '%s' without a static "
                              "shape", op_info[n->op].name, v->name);
        if (i >= 8 || decl[i].rank < 0)
            continue;
        differ = decl[i].rank != v->rank || (decl[i].dt != DT_UNDEF && decl[i].dt != v->dtype);
        for (k = 0; !differ && k < v->rank; k++)
            if (decl[i].dims[k] >= 0 && decl[i].dims[k] != v->dims[k])
                differ = 1;
        if (differ) {
            Value tmp = *v;
            tmp.dtype = decl[i].dt;
            shape_text(a, sizeof a, &tmp, decl[i].rank, decl[i].dims);
            shape_text(b, sizeof b, v, v->rank, v->dims);
            diag_warn(d, n, v->name, "inferred %s differs from the declared %s; using %s", b,
                      a, b);
        }
    }
    return d->errors > before;
}

/* Operators whose inference needs a rewrite that runs only after control
 * flow is inlined (frontend/seq_resolve.c), or that the gradient expansion
 * replaces: a condition that depends on one is left to run time. */
static int needs_later_rewrite(const Node *n)
{
    const char *name = (unsigned)n->op < OP_COUNT ? op_info[n->op].name : NULL;
    return n->op == OP_UNKNOWN || !name || strstr(name, "Sequence") || strstr(name, "Optional") ||
           !strcmp(name, "Gradient") || n->op == OP_If || n->op == OP_Loop || n->op == OP_Scan;
}

int infer_value_early(Graph *g, int32_t vi, Diag *d)
{
    uint8_t *need, *seen;
    int32_t *stack, sp = 0, ni, cur;
    int k, rc = 0, produces;
    if (vi < 0 || vi >= g->n_values)
        return -1;
    need = arena_array(g->arena, (size_t)g->n_nodes + 1, 1);
    seen = arena_array(g->arena, (size_t)g->n_values + 1, 1);
    stack = arena_array(g->arena, (size_t)g->n_values + 1, sizeof *stack);
    if (!need || !seen || !stack)
        die("compile arena exhausted");
    memset(need, 0, (size_t)g->n_nodes + 1);
    memset(seen, 0, (size_t)g->n_values + 1);
    /* walk the producers back from vi (each value once); every value
     * without a producer must be a constant or a graph input with a static
     * shape */
    stack[sp++] = vi;
    seen[vi] = 1;
    while (sp > 0) {
        const Value *v = &g->values[cur = stack[--sp]];
        const Node *n;
        if (v->producer < 0) {
            if (!v->data && !value_is_static(v))
                return -1;
            continue;
        }
        if (v->producer >= g->n_nodes)
            return -1;
        n = &g->nodes[v->producer];
        for (k = 0, produces = 0; k < n->n_out; k++)
            produces |= n->out[k] == cur;
        if (!produces) /* a producer index the node list being rebuilt has not updated yet */
            return -1;
        if (need[v->producer] || n->inferred)
            continue;
        need[v->producer] = 1;
        if (n->dead || needs_later_rewrite(n))
            return -1;
        for (k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0 && !seen[n->in[k]]) {
                seen[n->in[k]] = 1;
                stack[sp++] = n->in[k];
            }
    }
    for (ni = 0; ni < g->n_nodes && !rc; ni++)
        if (need[ni] && !g->nodes[ni].inferred && !g->nodes[ni].dead)
            rc = infer_node(g, ni, d);
    return rc ? 1 : 0;
}

int infer_graph(Graph *g, Diag *d)
{
    int before = d->errors;
    int32_t ni;
    for (ni = 0; ni < g->n_nodes; ni++) {
        const Node *n = &g->nodes[ni];
        if (n->dead || n->inferred)
            continue;
        if (infer_node(g, ni, d) || d->errors > before)
            break;
    }
    if (d->errors == before && infer_expand_gradients(g, d) == 0)
        return infer_graph(g, d);
    if (d->errors == before)
        check_string_outputs(g, d);
    return d->errors - before;
}
