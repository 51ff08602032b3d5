/*
 * String operators. String tensors are accepted as graph inputs and
 * outputs; infer_graph lets them reach only the operators below.
 *
 * StringNormalizer (opset 10): removes the stopwords from a [C] or [1, C]
 * tensor of strings, then changes case (ASCII letters; other bytes, UTF-8
 * included, are kept). The number of strings it keeps depends on the data,
 * so with stopwords the output shape is the model's declared one, checked
 * at run time (the run function returns TVMRT_ERR_SHAPE when the count
 * differs); when every string is removed the output is one empty string.
 *
 * StringConcat (opset 20): the byte strings joined, with broadcasting.
 * StringSplit (opset 20): Python's str.split(delimiter, maxsplit) of each
 * string, padded with "" to the longest; that length depends on the data,
 * so it is the model's declared last output dimension, checked at run time.
 * RegexFullMatch (opset 20): the pattern (a subset of RE2, frontend/regex.h)
 * is compiled here into a table the runtime runs.
 * Equal on strings (infer_elemwise.c) and Cast / CastLike to and from
 * strings (infer_string_cast below) are runtime calls too.
 */
#include "infer.h"

#include <stdlib.h>
#include <string.h>

#include "regex.h"

int infer_StringNormalizer(Graph *g, Node *n, Diag *d)
{
    int errs = d->errors;
    const Value *x = in_val(g, n, 0);
    const Attr *stop = node_attr(n, "stopwords");
    const char *action = attr_string(n, "case_change_action", "NONE", d);
    int64_t sens = attr_int(n, "is_case_sensitive", 0, d);
    int64_t c;
    Value *y;
    int i;
    if (d->errors > errs)
        return 1;
    if (x->dtype != DT_STRING)
        return diag_error(d, n, "input[0]", "must be a string tensor, got %s",
                          infer_type_name(x->dtype));
    if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
        return diag_error(d, n, "input[0]", "must have shape [C] or [1, C]");
    if (strcmp(action, "NONE") && strcmp(action, "LOWER") && strcmp(action, "UPPER"))
        return diag_error(d, n, "case_change_action", "must be NONE, LOWER or UPPER, got '%s'",
                          action);
    if (sens != 0 && sens != 1)
        return diag_error(d, n, "is_case_sensitive", "must be 0 or 1");
    if (stop && stop->type != ATTR_STRINGS)
        return diag_error(d, n, "stopwords", "must be a list of strings");
    if (infer_need_output(g, n, 0, d))
        return 1;
    {
        StringParams p;
        memset(&p, 0, sizeof p);
        p.case_change_action = !strcmp(action, "LOWER") ? CASE_LOWER
                               : !strcmp(action, "UPPER") ? CASE_UPPER : CASE_NONE;
        p.is_case_sensitive = (uint8_t)sens;
        if (stop) {
            p.n_stopwords = (int)stop->n;
            p.stopwords = stop->strings;
        }
        node_set_params(g, n, PARAMS_STRING, &p, sizeof p);
    }
    if (!stop || stop->n == 0)
        return value_set(g, n->out[0], DT_STRING, x->rank, x->dims, d, n);
    y = out_val(g, n, 0);
    if (!y->declared || y->rank != x->rank)
        return diag_error(d, n, "output[0]", "how many strings are left after removing the "
                          "stopwords depends on the data: declare the output's shape (rank %d) "
                          "in the model", x->rank);
    for (i = 0; i < y->rank; i++)
        if (y->dims[i] < 0)
            return diag_error(d, n, "output[0]", "the declared shape of '%s' has an unknown "
                              "dimension; the number of strings left must be fixed", y->name);
    c = y->dims[y->rank - 1];
    if ((y->rank == 2 && y->dims[0] != 1) || c < 1 || c > x->dims[x->rank - 1])
        return diag_error(d, n, "output[0]", "declared shape of '%s' cannot hold 1 to %lld of the "
                          "input strings", y->name, (long long)x->dims[x->rank - 1]);
    return value_set(g, n->out[0], DT_STRING, y->rank, y->dims, d, n);
}

int infer_StringConcat(Graph *g, Node *n, Diag *d)
{
    int i;
    for (i = 0; i < 2; i++)
        if (in_val(g, n, i)->dtype != DT_STRING)
            return diag_error(d, n, i ? "Y" : "X", "must be a string tensor, got %s",
                              infer_type_name(in_val(g, n, i)->dtype));
    return infer_elementwise(g, n, d, DT_STRING, 1);
}

int infer_StringSplit(Graph *g, Node *n, Diag *d)
{
    int errs = d->errors;
    const Value *x = in_val(g, n, 0);
    const char *delim = attr_string(n, "delimiter", "", d);
    int64_t maxsplit = attr_int(n, "maxsplit", -1, d);
    int64_t dims[TVMCC_MAX_RANK], width;
    const Value *y;
    StringParams p;
    int i;
    if (d->errors > errs)
        return 1;
    if (x->dtype != DT_STRING)
        return diag_error(d, n, "X", "must be a string tensor, got %s", infer_type_name(x->dtype));
    if (x->rank + 1 > TVMCC_MAX_RANK)
        return diag_error(d, n, "X", "rank %d is too large", x->rank);
    if (maxsplit > INT32_MAX)
        maxsplit = -1;
    if (infer_need_output(g, n, 0, d) || infer_need_output(g, n, 1, d))
        return 1;
    y = out_val(g, n, 0);
    width = y->declared && y->rank == x->rank + 1 ? y->dims[x->rank] : -1;
    if (width < 0 && value_numel(x) == 0)
        width = 0; /* no strings, no parts */
    if (width < 0)
        return diag_error(d, n, "Y", "the number of parts of the longest string depends on the "
                          "data: declare the output's shape (rank %d, a fixed last dimension) in "
                          "the model", x->rank + 1);
    if (width > INT32_MAX / 2)
        return diag_error(d, n, "Y", "declared last dimension %lld is too large",
                          (long long)width);
    memset(&p, 0, sizeof p);
    p.delimiter = delim;
    p.maxsplit = maxsplit < 0 ? -1 : maxsplit;
    node_set_params(g, n, PARAMS_STRING, &p, sizeof p);
    for (i = 0; i < x->rank; i++)
        dims[i] = x->dims[i];
    dims[x->rank] = width;
    if (value_set(g, n->out[0], DT_STRING, x->rank + 1, dims, d, n))
        return 1;
    return value_set(g, n->out[1], DT_INT64, x->rank, x->dims, d, n);
}

int infer_RegexFullMatch(Graph *g, Node *n, Diag *d)
{
    int errs = d->errors;
    const Value *x = in_val(g, n, 0);
    const char *pattern = attr_string(n, "pattern", NULL, d);
    char err[200];
    int32_t *prog, *copy;
    int n_prog;
    StringParams p;
    if (d->errors > errs)
        return 1;
    if (!pattern)
        return diag_error(d, n, "pattern", "required attribute is missing");
    if (x->dtype != DT_STRING)
        return diag_error(d, n, "X", "must be a string tensor, got %s", infer_type_name(x->dtype));
    if (regex_compile(pattern, &prog, &n_prog, err, sizeof err))
        return diag_error(d, n, "pattern", "'%s': %s (tvmcc supports a subset of RE2: "
                          "docs/user-guide.md, String tensors)", pattern, err);
    copy = arena_array(g->arena, (size_t)n_prog, sizeof *copy);
    if (!copy)
        die("compile arena exhausted");
    memcpy(copy, prog, (size_t)n_prog * sizeof *copy);
    free(prog);
    memset(&p, 0, sizeof p);
    p.n_prog = n_prog;
    p.prog = copy;
    node_set_params(g, n, PARAMS_STRING, &p, sizeof p);
    if (infer_need_output(g, n, 0, d))
        return 1;
    return value_set(g, n->out[0], DT_BOOL, x->rank, x->dims, d, n);
}

/* The number types a string is cast to or from. */
static int string_castable(DType t)
{
    switch (t) {
    case DT_FLOAT32: case DT_FLOAT64: case DT_INT8: case DT_UINT8: case DT_INT16:
    case DT_UINT16: case DT_INT32: case DT_UINT32: case DT_INT64: case DT_UINT64:
        return 1;
    default:
        return 0;
    }
}

int infer_string_cast(const Node *n, DType from, DType to, Diag *d)
{
    if (from == DT_STRING && to == DT_STRING)
        return diag_error(d, n, "to", "a cast from string to string (a copy) is not supported");
    if (from == DT_STRING && !string_castable(to))
        return diag_error(d, n, "to", "a cast from string to %s is not supported (float32, "
                          "float64 and the integer types are)", infer_type_name(to));
    if (to == DT_STRING && !string_castable(from))
        return diag_error(d, n, "input", "a cast from %s to string is not supported (float32, "
                          "float64 and the integer types are)", infer_type_name(from));
    return 0;
}
