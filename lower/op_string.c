/*
 * String operators: each is one call into the runtime (runtime_min/tvmrt.c),
 * since the loop IR has no strings. See frontend/infer_string.c for the
 * semantics.
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
