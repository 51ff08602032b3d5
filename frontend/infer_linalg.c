/*
 * Shape and type inference for ConvTranspose, Einsum and Det.
 *
 * ConvTranspose: each spatial output extent is
 *   stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads,
 * unless output_shape is given (or auto_pad is SAME_*, which asks for
 * in * stride), in which case the pads are derived from it as the ONNX
 * definition says. The window (with the derived begin pads) is stored on the
 * node for lower/op_linalg.c.
 *
 * Einsum: the equation is parsed into labels per operand ("..." stands for
 * the broadcast leading dimensions); the output labels are the explicit
 * right-hand side, or, without "->", the ellipsis then the labels used
 * once, in alphabetical order. The labels of every operand and of the
 * output are stored on the node (EinsumParams) for lower/op_linalg.c.
 */
#include "infer.h"

#include <ctype.h>
#include <string.h>

int infer_ConvTranspose(Graph *g, Node *n, Diag *d)
{
    Value *x, *w;
    int64_t s[TVMCC_MAX_RANK], dil[TVMCC_MAX_RANK], op[TVMCC_MAX_RANK], pads[2 * TVMCC_MAX_RANK];
    int64_t osh[TVMCC_MAX_RANK], dims[TVMCC_MAX_RANK], group, cnt;
    const char *ap = attr_string(n, "auto_pad", "NOTSET", d);
    int i, nsp, have_os;
    ConvWindow win;
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    w = in_val(g, n, 1);
    if (!dtype_is_float(x->dtype) || w->dtype != x->dtype)
        return diag_error(d, n, "input[0]", "float input and weights of one type expected");
    if (x->rank < 3 || w->rank != x->rank)
        return diag_error(d, n, "input[1]", "input rank %d and weight rank %d must be equal and "
                          "at least 3", x->rank, w->rank);
    nsp = x->rank - 2;
    group = attr_int(n, "group", 1, d);
    if (group < 1 || x->dims[1] % group || w->dims[0] != x->dims[1])
        return diag_error(d, n, "group", "weights need %lld input channels divisible by group "
                          "%lld", (long long)x->dims[1], (long long)group);
    if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID") && strcmp(ap, "SAME_UPPER") &&
        strcmp(ap, "SAME_LOWER"))
        return diag_error(d, n, "auto_pad", "unknown value '%s'", ap);
    attr_ints(n, "output_shape", &cnt, d);
    have_os = cnt >= 0;
    if (infer_read_ints(n, "strides", nsp, 1, INT64_MIN, s, d) ||
        infer_read_ints(n, "dilations", nsp, 1, INT64_MIN, dil, d) ||
        infer_read_ints(n, "output_padding", nsp, 0, INT64_MIN, op, d) ||
        infer_read_ints(n, "pads", 2 * nsp, 0, INT64_MIN, pads, d) ||
        infer_read_ints(n, "output_shape", nsp, 0, INT64_MIN, osh, d))
        return 1;
    if (have_os && cnt == x->rank) /* some exporters give N and C too */
        infer_read_ints(n, "output_shape", x->rank, 0, INT64_MIN, dims, d),
            memcpy(osh, dims + 2, (size_t)nsp * sizeof *osh);
    memset(&win, 0, sizeof win);
    win.nsp = nsp;
    win.group = group;
    for (i = 0; i < nsp; i++) {
        int64_t full = s[i] * (x->dims[2 + i] - 1) + op[i] + (w->dims[2 + i] - 1) * dil[i] + 1;
        if (s[i] < 1 || dil[i] < 1 || op[i] < 0)
            return diag_error(d, n, "strides", "strides, dilations and output_padding must be "
                              "positive");
        if (have_os)
            dims[2 + i] = osh[i];
        else if (!strncmp(ap, "SAME_", 5))
            dims[2 + i] = x->dims[2 + i] * s[i];
        else if (!strcmp(ap, "VALID"))
            dims[2 + i] = full;
        else
            dims[2 + i] = full - pads[i] - pads[nsp + i];
        if (dims[2 + i] < 1)
            return diag_error(d, n, "pads", "spatial output extent %d is %lld", i,
                              (long long)dims[2 + i]);
        win.kernel[i] = w->dims[2 + i];
        win.strides[i] = s[i];
        win.dilations[i] = dil[i];
        win.output_padding[i] = op[i];
        win.out[i] = dims[2 + i];
        if (have_os || !strncmp(ap, "SAME_", 5))
            win.pad_begin[i] = infer_split_pads(full - dims[2 + i], !strcmp(ap, "SAME_UPPER"));
        else
            win.pad_begin[i] = !strcmp(ap, "VALID") ? 0 : pads[i];
        win.pad_end[i] = full - dims[2 + i] - win.pad_begin[i];
    }
    dims[0] = x->dims[0];
    dims[1] = w->dims[1] * group;
    if (n->n_in > 2 && n->in[2] >= 0) {
        Value *b = in_val(g, n, 2);
        if (b->rank != 1 || b->dims[0] != dims[1])
            return diag_error(d, n, "input[2]", "bias must be 1-D of length %lld",
                              (long long)dims[1]);
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    node_set_params(g, n, PARAMS_WINDOW, &win, sizeof win);
    return value_set(g, n->out[0], x->dtype, x->rank, dims, d, n);
}

/* Label of a letter: 0..51; the ellipsis dimensions are 52 + j, j counted
 * from the last one (they broadcast right-aligned). */
static int label_of(int ch)
{
    return islower(ch) ? ch - 'a' : isupper(ch) ? 26 + ch - 'A' : -1;
}

/* Checks the equation's syntax before anything indexes tables with its
 * characters: terms of letters, each with at most one "...", one term per
 * input separated by ',', and an optional "->" with one output term.
 * Returns NULL or what is wrong. */
static const char *einsum_syntax(const char *eq, int n_in)
{
    const char *p = eq, *arrow = strstr(eq, "->");
    int terms = 1, dots_in_term = 0;
    if (arrow && strstr(arrow + 2, "->"))
        return "more than one '->'";
    for (; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (p == arrow) {
            p++; /* skip '>' */
            dots_in_term = 0;
            continue;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ' ')
            continue;
        if (c == ',') {
            if (arrow && p > arrow)
                return "',' in the output term";
            terms++;
            dots_in_term = 0;
            continue;
        }
        if (c == '.') {
            if (p[1] != '.' || p[2] != '.')
                return "'.' outside an ellipsis '...'";
            if (dots_in_term++)
                return "more than one ellipsis in a term";
            p += 2;
            continue;
        }
        return "characters other than letters, ',', '...' and '->'";
    }
    if (terms != n_in)
        return "the number of terms differs from the number of inputs";
    return NULL;
}

int infer_Einsum(Graph *g, Node *n, Diag *d)
{
    const char *eq = attr_string(n, "equation", NULL, d), *p;
    int64_t ext[64], dims[TVMCC_MAX_RANK];
    int count[64], op = 0, ell = 0, r = 0, i;
    DType t;
    EinsumParams ep;
    if (!eq)
        return diag_error(d, n, "equation", "required attribute is missing");
    if (n->n_in > EINSUM_MAX_OPERANDS)
        return diag_error(d, n, "input count", "more than %d operands are not supported",
                          EINSUM_MAX_OPERANDS);
    memset(&ep, 0, sizeof ep);
    ep.n_ops = n->n_in;
    {
        const char *why = einsum_syntax(eq, n->n_in);
        if (why)
            return diag_error(d, n, "equation", "'%s': %s", eq, why);
    }
    for (i = 0; i < 64; i++) {
        ext[i] = -1;
        count[i] = 0;
    }
    if (need_input(g, n, 0, d))
        return 1;
    t = in_val(g, n, 0)->dtype;
    p = eq;
    for (op = 0; op < n->n_in; op++) {
        Value *v;
        int nl = 0, k = 0, e = -1;
        const char *q;
        if (need_input(g, n, op, d))
            return 1;
        v = in_val(g, n, op);
        if (v->dtype != t)
            return diag_error(d, n, "input", "operands have different types");
        for (q = p; *q && *q != ',' && *q != '-'; q++)
            if (label_of(*q) >= 0)
                nl++;
        if (strstr(p, "...") && strstr(p, "...") < q)
            e = v->rank - nl;
        if (e < -1 || (e < 0 && nl != v->rank))
            return diag_error(d, n, "equation", "term %d does not match input rank %d", op,
                              v->rank);
        if (e > ell)
            ell = e;
        for (; p < q; p++) {
            int lb = label_of(*p), j;
            if (*p == '.') {
                for (j = 0; j < e; j++, k++) {
                    int el = 52 + (e - 1 - j); /* counted from the right */
                    if (ext[el] < 0 || ext[el] == 1)
                        ext[el] = v->dims[k];
                    ep.lab[op][k] = (uint8_t)el;
                }
                p += 2;
                continue;
            }
            if (lb < 0)
                continue;
            if (ext[lb] >= 0 && ext[lb] != v->dims[k] && ext[lb] != 1 && v->dims[k] != 1)
                return diag_error(d, n, "equation", "label '%c' has extents %lld and %lld", *p,
                                  (long long)ext[lb], (long long)v->dims[k]);
            if (ext[lb] < 0 || ext[lb] == 1)
                ext[lb] = v->dims[k];
            count[lb]++;
            ep.lab[op][k] = (uint8_t)lb;
            k++;
        }
        ep.nlab[op] = (uint8_t)k;
        if (*p == ',')
            p++;
        else if (op + 1 < n->n_in)
            return diag_error(d, n, "equation", "has fewer terms than the %d inputs", n->n_in);
    }
    if (*p && *p != '-')
        return diag_error(d, n, "equation", "has more terms than inputs");
    if (ell > TVMCC_MAX_RANK)
        return diag_error(d, n, "equation", "too many ellipsis dimensions");
    if (*p == '-') {
        for (p += 2; *p; p++) {
            int lb = label_of(*p);
            if (*p == '.') {
                if (r + ell > TVMCC_MAX_RANK)
                    return diag_error(d, n, "equation", "output rank above %d", TVMCC_MAX_RANK);
                for (i = ell - 1; i >= 0; i--) {
                    ep.out[r] = (uint8_t)(52 + i);
                    dims[r++] = ext[52 + i];
                }
                p += 2;
            } else if (lb >= 0) {
                if (!count[lb] || r >= TVMCC_MAX_RANK)
                    return diag_error(d, n, "equation", "output label '%c' is invalid", *p);
                ep.out[r] = (uint8_t)lb;
                dims[r++] = ext[lb];
            }
        }
    } else {
        for (i = ell - 1; i >= 0; i--) {
            ep.out[r] = (uint8_t)(52 + i);
            dims[r++] = ext[52 + i];
        }
        for (i = 0; i < 52; i++)
            if (count[i] == 1 && r < TVMCC_MAX_RANK) {
                ep.out[r] = (uint8_t)i;
                dims[r++] = ext[i];
            }
    }
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    ep.nout = r;
    node_set_params(g, n, PARAMS_EINSUM, &ep, sizeof ep);
    return value_set(g, n->out[0], t, r, dims, d, n);
}

int infer_Det(Graph *g, Node *n, Diag *d)
{
    Value *x;
    if (need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (!dtype_is_float(x->dtype))
        return diag_error(d, n, "input[0]", "float input expected");
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return diag_error(d, n, "input[0]", "square matrices expected in the last two dimensions");
    if (x->dims[x->rank - 1] > 3)
        return diag_error(d, n, "input[0]", "matrices above 3x3 are not supported (the "
                          "determinant is expanded by cofactors)");
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    return value_set(g, n->out[0], x->dtype, x->rank - 2, x->dims, d, n);
}
