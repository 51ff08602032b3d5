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
 */
#include "infer.h"

#include <string.h>

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
