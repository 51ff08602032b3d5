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
 *
 * LabelEncoder (ai.onnx.ml 2 and 4) maps strings or numbers to strings or
 * numbers: its keys are sorted here, so the runtime call looks each input
 * up by binary search.
 *
 * TfIdfVectorizer (opset 9) counts the pool's n-grams of integers in each
 * row, with skips, as tensor expressions: the pool becomes a constant
 * table, one row per output column (StringParams).
 */
#include "infer.h"

#include <stdio.h>
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

/* A new constant value of n->name's, type t, shape [d0] or [d0, d1], with
 * the bytes at data. */
static int32_t new_const(Graph *g, const Node *n, DType t, int rank, int64_t d0, int64_t d1,
                         void *data)
{
    int32_t serial = 0;
    int32_t vi = graph_fresh_value(g, n->name && n->name[0] ? n->name : "tfidf", "table",
                                   &serial);
    Value *v = &g->values[vi];
    v->dtype = t;
    v->rank = rank;
    v->dims[0] = d0;
    v->dims[1] = d1;
    v->data = data;
    return vi;
}

int infer_TfIdfVectorizer(Graph *g, Node *n, Diag *d)
{
    int errs = d->errors;
    const Value *x = in_val(g, n, 0);
    int64_t min_n = attr_int(n, "min_gram_length", 0, d);
    int64_t max_n = attr_int(n, "max_gram_length", 0, d);
    int64_t max_skip = attr_int(n, "max_skip_count", 0, d);
    const char *mode = attr_string(n, "mode", NULL, d);
    int64_t n_counts, n_indexes, n_pool, n_weights = -1;
    const int64_t *counts = attr_ints(n, "ngram_counts", &n_counts, d);
    const int64_t *indexes = attr_ints(n, "ngram_indexes", &n_indexes, d);
    const int64_t *pool = attr_ints(n, "pool_int64s", &n_pool, d);
    const double *weights = node_attr(n, "weights") ? attr_floats(n, "weights", &n_weights, d)
                                                     : NULL;
    int64_t cols = 0, g_i = 0, level, k, rowlen, dims[2];
    int64_t *table;
    float *w = NULL;
    int rank = x->rank;
    DType xt = x->dtype;
    int64_t xdims[2];
    StringParams p;
    if (d->errors > errs)
        return 1;
    if (node_attr(n, "pool_strings"))
        return diag_error(d, n, "pool_strings", "n-grams of strings are not supported "
                          "(pool_int64s on int32 or int64 input is)");
    if (xt != DT_INT32 && xt != DT_INT64)
        return diag_error(d, n, "X", "must be int32 or int64, got %s", infer_type_name(xt));
    if (rank != 1 && rank != 2)
        return diag_error(d, n, "X", "must have rank 1 or 2, got %d", rank);
    if (!mode || (strcmp(mode, "TF") && strcmp(mode, "IDF") && strcmp(mode, "TFIDF")))
        return diag_error(d, n, "mode", "must be TF, IDF or TFIDF");
    if (min_n < 1 || max_n < min_n || max_n > 16)
        return diag_error(d, n, "max_gram_length", "need 1 <= min_gram_length <= "
                          "max_gram_length <= 16, got %lld and %lld", (long long)min_n,
                          (long long)max_n);
    if (max_skip < 0 || max_skip > (int64_t)1 << 20)
        return diag_error(d, n, "max_skip_count", "must be 0 to 2^20");
    if (!pool || n_pool < 0)
        return diag_error(d, n, "pool_int64s", "required attribute is missing");
    if (!counts || n_counts < 0 || !indexes || n_indexes < 0)
        return diag_error(d, n, counts ? "ngram_indexes" : "ngram_counts",
                          "required attribute is missing");
    if (weights && n_weights != n_indexes)
        return diag_error(d, n, "weights", "has %lld entries, ngram_indexes %lld",
                          (long long)n_weights, (long long)n_indexes);
    for (k = 0; k < n_indexes; k++) {
        if (indexes[k] < 0 || indexes[k] >= ((int64_t)1 << 24))
            return diag_error(d, n, "ngram_indexes", "index %lld is out of range",
                              (long long)indexes[k]);
        if (indexes[k] + 1 > cols)
            cols = indexes[k] + 1;
    }
    for (k = 0; k < rank; k++)
        xdims[k] = x->dims[k];
    rowlen = 1 + max_n;
    table = arena_array(g->arena, (size_t)(cols * rowlen) + 1, sizeof *table);
    if (!table)
        die("compile arena exhausted");
    memset(table, 0, (size_t)(cols * rowlen + 1) * sizeof *table);
    if (strcmp(mode, "TF")) {
        w = arena_array(g->arena, (size_t)cols + 1, sizeof *w);
        if (!w)
            die("compile arena exhausted");
        memset(w, 0, ((size_t)cols + 1) * sizeof *w);
    }
    /* level L (n-grams of L+1 items) spans pool[counts[L] .. counts[L+1]) */
    for (level = 0; level < n_counts; level++) {
        int64_t len = level + 1, lo = counts[level];
        int64_t hi = level + 1 < n_counts ? counts[level + 1] : n_pool, at;
        if (lo < 0 || hi < lo || hi > n_pool || (hi - lo) % len)
            return diag_error(d, n, "ngram_counts", "entry %lld (%lld) does not split "
                              "pool_int64s into %lld-grams", (long long)level, (long long)lo,
                              (long long)len);
        for (at = lo; at < hi; at += len, g_i++) {
            int64_t *row, j;
            if (g_i >= n_indexes)
                return diag_error(d, n, "ngram_indexes", "has %lld entries, fewer than the "
                                  "pool's n-grams", (long long)n_indexes);
            j = indexes[g_i];
            row = table + j * rowlen;
            if (row[0] || (w && w[j] != 0.0f))
                return diag_error(d, n, "ngram_indexes", "column %lld is given twice",
                                  (long long)j);
            if (len >= min_n && len <= max_n) {
                row[0] = len;
                memcpy(row + 1, pool + at, (size_t)len * sizeof *row);
                if (w)
                    w[j] = weights ? (float)weights[g_i] : 1.0f;
            }
        }
    }
    if (g_i != n_indexes)
        return diag_error(d, n, "ngram_indexes", "has %lld entries, the pool %lld n-grams",
                          (long long)n_indexes, (long long)g_i);
    if (infer_need_output(g, n, 0, d))
        return 1;
    memset(&p, 0, sizeof p);
    /* x is not used below: new values may move g->values */
    p.table = new_const(g, n, DT_INT64, 2, cols, rowlen, table);
    p.weights = w ? new_const(g, n, DT_FLOAT32, 1, cols, 0, w) : -1;
    p.max_n = (int)max_n;
    p.max_skip = (int)max_skip;
    p.mode = !strcmp(mode, "TF") ? TFIDF_TF : !strcmp(mode, "IDF") ? TFIDF_IDF : TFIDF_TFIDF;
    node_set_params(g, n, PARAMS_STRING, &p, sizeof p);
    dims[0] = rank == 2 ? xdims[0] : cols;
    dims[1] = cols;
    return value_set(g, n->out[0], DT_FLOAT32, rank, dims, d, n);
}

/* One of LabelEncoder's key or value lists: PREFIX_strings, _int64s,
 * _floats or (ai.onnx.ml 4) _tensor. Numbers are stored in the list's type
 * (floats as float32). */
typedef struct Labels {
    DType t;
    int64_t n;
    const char **s;        /* strings */
    uint8_t *bytes;        /* numbers: n elements of type t */
} Labels;

static int label_list(Graph *g, const Node *n, const char *prefix, Labels *out, Diag *d)
{
    static const char *const kinds[] = {"strings", "int64s", "floats", "tensor"};
    char name[32], field[32] = "";
    const Attr *a, *found = NULL;
    int k, which = -1;
    int64_t i;
    memset(out, 0, sizeof *out);
    for (k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "%s_%s", prefix, kinds[k]);
        a = node_attr(n, name);
        if (!a)
            continue;
        if (found)
            return diag_error(d, n, name, "only one of %s_strings, _int64s, _floats and _tensor "
                              "may be given", prefix);
        found = a;
        which = k;
        memcpy(field, name, sizeof field);
    }
    if (!found)
        return diag_error(d, n, prefix, "none of %s_strings, _int64s, _floats or _tensor is given",
                          prefix);
    if (which == 3 && n->opset < 4)
        return diag_error(d, n, field, "needs ai.onnx.ml opset 4");
    if ((which == 0 && found->type != ATTR_STRINGS) || (which == 1 && found->type != ATTR_INTS) ||
        (which == 2 && found->type != ATTR_FLOATS) || (which == 3 && found->type != ATTR_TENSOR))
        return diag_error(d, n, field, "has the wrong attribute type");
    if (which == 0) {
        out->t = DT_STRING;
        out->n = found->n;
        out->s = found->strings;
        return 0;
    }
    if (which == 3) {
        const Tensor *t = found->t;
        out->t = t->dtype;
        out->n = t->numel;
        if (t->dtype == DT_STRING) {
            out->s = t->data;
            return 0;
        }
        switch (t->dtype) {
        case DT_FLOAT32: case DT_FLOAT64: case DT_INT64: case DT_INT32: case DT_INT16:
        case DT_INT8: case DT_UINT8: case DT_UINT16: case DT_UINT32:
            break;
        default:
            return diag_error(d, n, field, "element type %s is not supported",
                              infer_type_name(t->dtype));
        }
        out->bytes = t->data;
        return 0;
    }
    out->t = which == 1 ? DT_INT64 : DT_FLOAT32;
    out->n = found->n;
    out->bytes = arena_array(g->arena, (size_t)found->n + 1, dtype_size(out->t));
    if (!out->bytes)
        die("compile arena exhausted");
    for (i = 0; i < found->n; i++) {
        if (which == 1) {
            memcpy(out->bytes + 8 * i, &found->ints[i], 8);
        } else {
            float f = (float)found->floats[i];
            memcpy(out->bytes + 4 * i, &f, 4);
        }
    }
    return 0;
}

/* Numeric element k of l: integers as *iv (is_int set), floats as *dv. */
static void label_num(const Labels *l, int64_t k, int64_t *iv, double *dv, int *is_int)
{
    const uint8_t *p = l->bytes + (size_t)k * dtype_size(l->t);
    float f;
    *is_int = !dtype_is_float(l->t);
    switch (l->t) {
    case DT_FLOAT32: memcpy(&f, p, 4); *dv = (double)f; break;
    case DT_FLOAT64: memcpy(dv, p, 8); break;
    case DT_INT64: memcpy(iv, p, 8); break;
    case DT_INT32: { int32_t v; memcpy(&v, p, 4); *iv = v; break; }
    case DT_UINT32: { uint32_t v; memcpy(&v, p, 4); *iv = v; break; }
    case DT_INT16: { int16_t v; memcpy(&v, p, 2); *iv = v; break; }
    case DT_UINT16: { uint16_t v; memcpy(&v, p, 2); *iv = v; break; }
    case DT_INT8: *iv = (int8_t)*p; break;
    default: *iv = *p; break;
    }
}

/* -1, 0, 1 as key a sorts before, with or after key b: strcmp order, or
 * numeric with NaN last */
static int label_cmp(const Labels *l, int64_t a, int64_t b)
{
    int64_t ia = 0, ib = 0;
    double da = 0, db = 0;
    int is_int;
    if (l->s) {
        int c = strcmp(l->s[a], l->s[b]);
        return (c > 0) - (c < 0);
    }
    label_num(l, a, &ia, &da, &is_int);
    label_num(l, b, &ib, &db, &is_int);
    if (is_int)
        return (ia > ib) - (ia < ib);
    if (da != da || db != db)
        return (da != da) - (db != db);
    return (da > db) - (da < db);
}

/* qsort's comparison of key indexes (ties by index, so the order is
 * deterministic) */
static const Labels *sort_keys;
static int order_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    int c = label_cmp(sort_keys, x, y);
    return c ? c : (x > y) - (x < y);
}

/* A constant value [count] of type t holding bytes, named after n. */
static int32_t label_const(Graph *g, const Node *n, DType t, int64_t count, void *bytes)
{
    int32_t serial = 0;
    int32_t vi = graph_fresh_value(g, n->name && n->name[0] ? n->name : "label", "table",
                                   &serial);
    Value *v = &g->values[vi];
    v->dtype = t;
    v->rank = 1;
    v->dims[0] = count;
    v->data = bytes;
    return vi;
}

int infer_LabelEncoder(Graph *g, Node *n, Diag *d)
{
    Labels keys, vals;
    const Value *x = in_val(g, n, 0);
    DType xt = x->dtype;
    int rank = x->rank;
    int64_t dims[TVMCC_MAX_RANK], i, *order, nk;
    size_t vsize;
    const Attr *def_t = node_attr(n, "default_tensor");
    StringParams p;
    int errs = d->errors;
    if (n->opset < 2)
        return diag_error(d, n, NULL, "ai.onnx.ml LabelEncoder-1 (classes_strings) is not "
                          "supported; opset 2 and later are");
    if (label_list(g, n, "keys", &keys, d) || label_list(g, n, "values", &vals, d))
        return 1;
    if (keys.n != vals.n)
        return diag_error(d, n, "values", "has %lld entries, the keys %lld", (long long)vals.n,
                          (long long)keys.n);
    if (keys.t != xt)
        return diag_error(d, n, "keys", "are %s, the input %s", infer_type_name(keys.t),
                          infer_type_name(xt));
    memcpy(dims, x->dims, sizeof dims);
    nk = keys.n;
    /* sort the keys, remembering where each came from */
    order = arena_array(g->arena, (size_t)nk + 1, sizeof *order);
    if (!order)
        die("compile arena exhausted");
    for (i = 0; i < nk; i++)
        order[i] = i;
    sort_keys = &keys;
    qsort(order, (size_t)nk, sizeof *order, order_cmp);
    for (i = 1; i < nk; i++)
        if (label_cmp(&keys, order[i - 1], order[i]) == 0)
            return diag_error(d, n, "keys", "key %lld repeats key %lld",
                              (long long)(order[i] > order[i - 1] ? order[i] : order[i - 1]),
                              (long long)(order[i] > order[i - 1] ? order[i - 1] : order[i]));
    memset(&p, 0, sizeof p);
    p.n_keys = (int)nk;
    p.keys = p.values = -1;
    if (nk > INT32_MAX / 2)
        return diag_error(d, n, "keys", "too many keys");
    if (keys.s) {
        p.skeys = arena_array(g->arena, (size_t)nk + 1, sizeof *p.skeys);
        if (!p.skeys)
            die("compile arena exhausted");
        for (i = 0; i < nk; i++)
            p.skeys[i] = keys.s[order[i]];
    } else {
        size_t ks = dtype_size(keys.t);
        uint8_t *kb = arena_array(g->arena, (size_t)nk + 1, ks);
        if (!kb)
            die("compile arena exhausted");
        for (i = 0; i < nk; i++)
            memcpy(kb + (size_t)i * ks, keys.bytes + (size_t)order[i] * ks, ks);
        p.keys = label_const(g, n, keys.t, nk, kb);
    }
    /* values in key order, then the default */
    if (def_t && (def_t->type != ATTR_TENSOR || def_t->t->numel != 1 ||
                  def_t->t->dtype != vals.t))
        return diag_error(d, n, "default_tensor", "must be one element of the values' type %s",
                          infer_type_name(vals.t));
    if (vals.s) {
        p.svalues = arena_array(g->arena, (size_t)nk + 2, sizeof *p.svalues);
        if (!p.svalues)
            die("compile arena exhausted");
        for (i = 0; i < nk; i++)
            p.svalues[i] = vals.s[order[i]];
        p.svalues[nk] = def_t ? ((const char **)def_t->t->data)[0]
                              : attr_string(n, "default_string", "_Unused", d);
    } else {
        uint8_t *vb;
        vsize = dtype_size(vals.t);
        vb = arena_array(g->arena, (size_t)nk + 1, vsize);
        if (!vb)
            die("compile arena exhausted");
        for (i = 0; i < nk; i++)
            memcpy(vb + (size_t)i * vsize, vals.bytes + (size_t)order[i] * vsize, vsize);
        if (def_t) {
            memcpy(vb + (size_t)nk * vsize, def_t->t->data, vsize);
        } else if (dtype_is_float(vals.t)) {
            double dv = attr_float(n, "default_float", -0.0, d);
            float f = (float)dv;
            if (vals.t == DT_FLOAT64)
                memcpy(vb + (size_t)nk * vsize, &dv, 8);
            else
                memcpy(vb + (size_t)nk * vsize, &f, 4);
        } else {
            int64_t iv = attr_int(n, "default_int64", -1, d);
            /* little-endian storage: the low bytes of the int64 */
            uint8_t le[8];
            int b;
            for (b = 0; b < 8; b++)
                le[b] = (uint8_t)((uint64_t)iv >> (8 * b));
            memcpy(vb + (size_t)nk * vsize, le, vsize);
        }
        p.values = label_const(g, n, vals.t, nk + 1, vb);
    }
    if (d->errors > errs)
        return 1;
    node_set_params(g, n, PARAMS_STRING, &p, sizeof p);
    if (infer_need_output(g, n, 0, d))
        return 1;
    return value_set(g, n->out[0], vals.t, rank, dims, d, n);
}
