/*
 * String operators: each is one call into the runtime (runtime_min/tvmrt.c),
 * since the loop IR has no strings. See frontend/infer_string.c for the
 * semantics. Strings an operator makes go into a character pool in the
 * workspace, --string-bytes per output string, which lives to the end of
 * the run (the outputs point into it).
 */
#include "lower.h"

#include <string.h>

static void arg_buf(ExternCall *c, int buf)
{
    c->args[c->n_args].kind = EXT_BUF;
    c->args[c->n_args++].buf = buf;
}

static void arg_int(ExternCall *c, int64_t v)
{
    c->args[c->n_args].kind = EXT_INT;
    c->args[c->n_args++].ival = v;
}

static void arg_ints(ExternCall *c, int n, const int32_t *v)
{
    c->args[c->n_args].kind = EXT_INTS;
    c->args[c->n_args].n_ints = n;
    c->args[c->n_args++].ints = v;
}

static ExternCall *ext_call(Lower *L, const char *fn)
{
    ExternCall *c = arena_alloc(L->arena, sizeof *c);
    if (!c)
        die("compile arena exhausted");
    memset(c, 0, sizeof *c);
    c->fn = fn;
    L->k->ext = c;
    return c;
}

/* The buffer of value vi, which the call writes. */
static int out_buf(Lower *L, int32_t vi)
{
    int b = lower_buf_value(L, vi);
    L->k->bufs[b].written = 1;
    return b;
}

/* Adds the pool for n_out strings (buffer, bytes) to c's arguments, or
 * reports that it is too large. */
static int arg_pool(Lower *L, Node *n, ExternCall *c, int64_t n_out)
{
    int64_t string_bytes = L->g->settings.string_bytes > 0 ? L->g->settings.string_bytes : 64;
    int64_t bytes;
    int pool;
    if (ck_mul(string_bytes, n_out, &bytes) || bytes >= ((int64_t)1 << 31))
        return diag_error(L->d, n, "output[0]", "character pool of %lld x %lld bytes is too "
                          "large (--string-bytes)", (long long)n_out, (long long)string_bytes);
    if (bytes == 0)
        bytes = 1;
    pool = lower_buf_temp(L, "pool", DT_UINT8, bytes);
    L->k->bufs[pool].persist = 1;
    L->k->bufs[pool].written = 1;
    arg_buf(c, pool);
    arg_int(c, bytes);
    return 0;
}

/* {rank, dims of output, strides of input 0, strides of input 1} of a
 * broadcasting binary node, for tvmrt_bcast. */
static const int32_t *bcast_shape(Lower *L, const Node *n)
{
    const Graph *g = L->g;
    const Value *y = &g->values[n->out[0]];
    int rank = y->rank, i, k;
    int32_t *s = arena_array(L->arena, (size_t)(1 + 3 * rank), sizeof *s);
    if (!s)
        die("compile arena exhausted");
    s[0] = rank;
    for (i = 0; i < rank; i++)
        s[1 + i] = (int32_t)y->dims[i];
    for (k = 0; k < 2; k++) {
        const Value *x = &g->values[n->in[k]];
        int64_t stride = 1;
        for (i = rank - 1; i >= 0; i--) {
            int xi = i - (rank - x->rank);
            int64_t dim = xi >= 0 ? x->dims[xi] : 1;
            s[1 + (k + 1) * rank + i] = dim == 1 ? 0 : (int32_t)stride;
            stride *= dim;
        }
    }
    return s;
}

/* tvmrt_string_concat(a, b, out, n, shape, pool, pool_bytes) */
int lower_StringConcat(Lower *L, Node *n)
{
    ExternCall *c = ext_call(L, "tvmrt_string_concat");
    int64_t numel = value_numel(&L->g->values[n->out[0]]);
    arg_buf(c, lower_buf_value(L, n->in[0]));
    arg_buf(c, lower_buf_value(L, n->in[1]));
    arg_buf(c, out_buf(L, n->out[0]));
    arg_int(c, numel);
    arg_ints(c, 1 + 3 * L->g->values[n->out[0]].rank, bcast_shape(L, n));
    return arg_pool(L, n, c, numel);
}

/* tvmrt_string_eq(a, b, out, n, shape) */
int lower_string_equal(Lower *L, Node *n)
{
    ExternCall *c = ext_call(L, "tvmrt_string_eq");
    arg_buf(c, lower_buf_value(L, n->in[0]));
    arg_buf(c, lower_buf_value(L, n->in[1]));
    arg_buf(c, out_buf(L, n->out[0]));
    arg_int(c, value_numel(&L->g->values[n->out[0]]));
    arg_ints(c, 1 + 3 * L->g->values[n->out[0]].rank, bcast_shape(L, n));
    return 0;
}

/* tvmrt_string_split(in, n_in, out, width, counts, delim, maxsplit, pool,
 * pool_bytes) */
int lower_StringSplit(Lower *L, Node *n)
{
    const StringParams *p = node_string(n);
    const Value *y = &L->g->values[n->out[0]];
    ExternCall *c = ext_call(L, "tvmrt_string_split");
    arg_buf(c, lower_buf_value(L, n->in[0]));
    arg_int(c, value_numel(&L->g->values[n->in[0]]));
    arg_buf(c, out_buf(L, n->out[0]));
    arg_int(c, y->dims[y->rank - 1]);
    arg_buf(c, out_buf(L, n->out[1]));
    c->args[c->n_args].kind = EXT_STRINGS;
    c->args[c->n_args].n_strings = p->delimiter && p->delimiter[0] ? 1 : 0;
    c->args[c->n_args++].strings = &p->delimiter;
    arg_int(c, p->maxsplit);
    return arg_pool(L, n, c, value_numel(y));
}

/* tvmrt_regex_full_match(in, n, out, prog, scratch) */
int lower_RegexFullMatch(Lower *L, Node *n)
{
    const StringParams *p = node_string(n);
    ExternCall *c = ext_call(L, "tvmrt_regex_full_match");
    int scratch = lower_buf_temp(L, "scratch", DT_INT32, 5 * (int64_t)p->prog[0] + 1);
    L->k->bufs[scratch].written = 1;
    arg_buf(c, lower_buf_value(L, n->in[0]));
    arg_int(c, value_numel(&L->g->values[n->in[0]]));
    arg_buf(c, out_buf(L, n->out[0]));
    arg_ints(c, p->n_prog, p->prog);
    arg_buf(c, scratch);
    return 0;
}

/* tvmrt_cast_to_string(in, dtype, out, n, pool, pool_bytes) or
 * tvmrt_cast_from_string(in, out, dtype, n) */
int lower_string_cast(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    ExternCall *c;
    if (x->dtype == DT_STRING) {
        c = ext_call(L, "tvmrt_cast_from_string");
        arg_buf(c, lower_buf_value(L, n->in[0]));
        arg_buf(c, out_buf(L, n->out[0]));
        arg_int(c, y->dtype);
        arg_int(c, value_numel(y));
        return 0;
    }
    c = ext_call(L, "tvmrt_cast_to_string");
    arg_buf(c, lower_buf_value(L, n->in[0]));
    arg_int(c, x->dtype);
    arg_buf(c, out_buf(L, n->out[0]));
    arg_int(c, value_numel(y));
    return arg_pool(L, n, c, value_numel(y));
}

/* tvmrt_string_normalize(in, n_in, out, n_out, pool, pool_bytes, stopwords,
 *                        n_stopwords, case_action, case_sensitive) */
int lower_StringNormalizer(Lower *L, Node *n)
{
    Graph *g = L->g;
    ExternCall *c = arena_alloc(L->arena, sizeof *c);
    const StringParams *p = node_string(n);
    int64_t n_in = value_numel(&g->values[n->in[0]]);
    int64_t n_out = value_numel(&g->values[n->out[0]]);
    int in = lower_buf_value(L, n->in[0]);
    int out = lower_buf_value(L, n->out[0]);
    int64_t pool_bytes = 0;
    /* bytes of the character pool per output string (--string-bytes) */
    int64_t string_bytes = g->settings.string_bytes > 0 ? g->settings.string_bytes : 64;
    if (!c)
        die("compile arena exhausted");
    memset(c, 0, sizeof *c);
    c->fn = "tvmrt_string_normalize";
    L->k->bufs[out].written = 1;
    arg_buf(c, in);
    arg_int(c, n_in);
    arg_buf(c, out);
    arg_int(c, n_out);
    if (p->case_change_action != CASE_NONE) {
        int pool;
        if (ck_mul(string_bytes, n_out, &pool_bytes) || pool_bytes >= ((int64_t)1 << 31))
            return diag_error(L->d, n, "output[0]", "character pool of %lld x %lld bytes is too "
                              "large (--string-bytes)", (long long)n_out,
                              (long long)string_bytes);
        pool = lower_buf_temp(L, "pool", DT_UINT8, pool_bytes);
        L->k->bufs[pool].persist = 1;
        L->k->bufs[pool].written = 1;
        arg_buf(c, pool);
    } else {
        arg_int(c, 0); /* NULL: the output points at the input strings */
    }
    arg_int(c, pool_bytes);
    c->args[c->n_args].kind = EXT_STRINGS;
    c->args[c->n_args].n_strings = p->n_stopwords;
    c->args[c->n_args++].strings = p->stopwords;
    arg_int(c, p->n_stopwords);
    arg_int(c, p->case_change_action); /* CaseAction: 0 none, 1 lower, 2 upper */
    arg_int(c, p->is_case_sensitive);
    L->k->ext = c;
    return 0;
}

/* TfIdfVectorizer: Y[b, j] = the number of (start s, skip k) at which row
 * b of X holds column j's n-gram, items s, s + (k + 1), ...: a sum over s
 * and k of the match condition, the n-gram's length and items loaded from
 * the constant table. A unigram is counted at k = 0 only. IDF gives the
 * column's weight where the count is not 0, TFIDF count * weight. */
int lower_TfIdfVectorizer(Lower *L, Node *n)
{
    const StringParams *p = node_string(n);
    Graph *g = L->g;
    const Value *x = &g->values[n->in[0]], *y = &g->values[n->out[0]];
    int64_t C = x->dims[x->rank - 1], rowlen = p->max_n + 1;
    int xb = lower_buf_value(L, n->in[0]);
    int tb = lower_buf_value(L, p->table);
    Compute *c = lower_stage(L, "tfidf", lower_buf_value(L, n->out[0]), y->rank, y->dims);
    IterVar *s = lower_raxis(L, c, C > 0 ? C : 1);
    IterVar *k = lower_raxis(L, c, p->max_skip + 1);
    Expr *j = ex_var(L, &c->axes[y->rank - 1]);
    Expr *row = ex_mul(L, j, ex_int(L, rowlen));
    Expr *len = ex_load(L, tb, row);
    Expr *step = ex_add(L, ex_var(L, k), ex_int(L, 1));
    Expr *last = ex_add(L, ex_var(L, s), ex_mul(L, ex_sub(L, len, ex_int(L, 1)), step));
    Expr *match;
    int i;
    match = ex_and(L, ex_binary(L, BIN_GT, len, ex_int(L, 0)),
                   ex_binary(L, BIN_OR, ex_binary(L, BIN_EQ, ex_var(L, k), ex_int(L, 0)),
                             ex_binary(L, BIN_GT, len, ex_int(L, 1))));
    match = ex_and(L, match, ex_lt(L, last, ex_int(L, C)));
    for (i = 0; i < p->max_n; i++) {
        Expr *pos = ex_binary(L, BIN_MIN, ex_add(L, ex_var(L, s), ex_mul(L, ex_int(L, i), step)),
                              ex_int(L, C > 0 ? C - 1 : 0));
        Expr *item, *tok;
        if (x->rank == 2)
            pos = ex_add(L, ex_mul(L, ex_var(L, &c->axes[0]), ex_int(L, C)), pos);
        item = ex_cast(L, DT_INT64, ex_load(L, xb, pos));
        tok = ex_load(L, tb, ex_add(L, row, ex_int(L, i + 1)));
        match = ex_and(L, match, ex_binary(L, BIN_OR, ex_binary(L, BIN_LE, len, ex_int(L, i)),
                                           ex_binary(L, BIN_EQ, item, tok)));
    }
    if (C == 0)
        match = ex_const_int(L, DT_BOOL, 0);
    c->rop = RED_SUM;
    c->body = ex_select(L, match, ex_float(L, DT_FLOAT32, 1.0), ex_float(L, DT_FLOAT32, 0.0));
    if (p->mode != TFIDF_TF) {
        Expr *w = ex_load(L, lower_buf_value(L, p->weights), j);
        Expr *acc = ex_acc(L, DT_FLOAT32);
        c->post = p->mode == TFIDF_IDF
                      ? ex_select(L, ex_binary(L, BIN_GT, acc, ex_float(L, DT_FLOAT32, 0.0)), w,
                                  ex_float(L, DT_FLOAT32, 0.0))
                      : ex_mul(L, acc, w);
    }
    return 0;
}

/* tvmrt_label_encode(in, n, key_dtype, keys, skeys, n_keys, out, values,
 * svalues, value_bytes): numeric keys and values are constant buffers,
 * strings constant string arrays */
int lower_LabelEncoder(Lower *L, Node *n)
{
    const StringParams *p = node_string(n);
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    ExternCall *c = ext_call(L, "tvmrt_label_encode");
    arg_buf(c, lower_buf_value(L, n->in[0]));
    arg_int(c, value_numel(x));
    arg_int(c, x->dtype);
    if (p->keys >= 0)
        arg_buf(c, lower_buf_value(L, p->keys));
    else
        arg_int(c, 0);
    c->args[c->n_args].kind = EXT_STRINGS;
    c->args[c->n_args].n_strings = p->skeys ? p->n_keys : 0;
    c->args[c->n_args++].strings = p->skeys;
    arg_int(c, p->n_keys);
    arg_buf(c, out_buf(L, n->out[0]));
    if (p->values >= 0)
        arg_buf(c, lower_buf_value(L, p->values));
    else
        arg_int(c, 0);
    c->args[c->n_args].kind = EXT_STRINGS;
    c->args[c->n_args].n_strings = p->svalues ? p->n_keys + 1 : 0;
    c->args[c->n_args++].strings = p->svalues;
    arg_int(c, y->dtype == DT_STRING ? 0 : (int64_t)dtype_size(y->dtype));
    return 0;
}
