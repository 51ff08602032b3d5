/*
 * Type and shape inference of the recurrent layers RNN, GRU and LSTM.
 *
 * X is [seq, batch, input] ([batch, seq, input] with layout=1), W is
 * [dirs, G*hidden, input], R [dirs, G*hidden, hidden] with G gates (1, 3,
 * 4). Outputs: Y [seq, dirs, batch, hidden] ([batch, seq, dirs, hidden]),
 * Y_h and, for LSTM, Y_c [dirs, batch, hidden] ([batch, dirs, hidden]).
 * The optional inputs (B, sequence_lens, initial_h, initial_c, P) are
 * checked against these extents here so that lower/op_rnn.c can index them
 * without further checks. The attributes (direction, layout, clip,
 * linear_before_reset, the activations with their alpha and beta) are
 * parsed into RnnParams for it.
 */
#include "infer.h"

#include <string.h>

static int check_shape(Graph *g, Node *n, int i, int rank, const int64_t *dims, Diag *d)
{
    char field[24];
    Value *v;
    int k;
    if (i >= n->n_in || n->in[i] < 0)
        return 0;
    if (need_input(g, n, i, d))
        return 1;
    v = in_val(g, n, i);
    snprintf(field, sizeof field, "input[%d]", i);
    if (v->rank != rank)
        return diag_error(d, n, field, "rank %d, expected %d", v->rank, rank);
    for (k = 0; k < rank; k++)
        if (v->dims[k] != dims[k])
            return diag_error(d, n, field, "dimension %d is %lld, expected %lld", k,
                              (long long)v->dims[k], (long long)dims[k]);
    return 0;
}

static double default_alpha(RnnAct a)
{
    return a == ACT_LEAKY_RELU ? 0.01 : a == ACT_HARD_SIGMOID ? 0.2 : 1.0;
}

static double default_beta(RnnAct a)
{
    return a == ACT_HARD_SIGMOID ? 0.5 : a == ACT_AFFINE ? 0.0 : 1.0;
}

/* The activations of each direction into p (p->dirs set): the
 * `activations` names (default Sigmoid then Tanh, RNN Tanh) with
 * activation_alpha/beta when they give one per name, else the defaults.
 * Returns 1 after reporting. */
static int read_activations(const Node *n, int gates, RnnParams *p, Diag *d)
{
    static const char *known[] = { "Sigmoid", "Tanh", "Relu", "LeakyRelu", "HardSigmoid",
                                   "Affine", "ScaledTanh", "ThresholdedRelu", "Elu",
                                   "Softsign", "Softplus" }; /* in RnnAct order */
    const Attr *aa = node_attr(n, "activations");
    int64_t na = -1, nal = -1, nbe = -1;
    const double *al = attr_floats(n, "activation_alpha", &nal, d);
    const double *be = attr_floats(n, "activation_beta", &nbe, d);
    const char *const *names = NULL;
    int nact = gates == 1 ? 1 : gates == 3 ? 2 : 3, dir, a, k;
    if (aa && aa->type == ATTR_STRINGS) {
        names = (const char *const *)aa->strings;
        na = aa->n;
    }
    if (names && na != nact * p->dirs)
        return diag_error(d, n, "activations", "expected %d names, got %lld", nact * p->dirs,
                          (long long)na);
    for (dir = 0; dir < p->dirs; dir++)
        for (a = 0; a < nact; a++) {
            const char *nm = names ? names[dir * nact + a] : (gates == 1 || a > 0) ? "Tanh"
                                                                                 : "Sigmoid";
            for (k = 0; k < (int)(sizeof known / sizeof *known); k++)
                if (!strcmp(nm, known[k]))
                    break;
            if (k == (int)(sizeof known / sizeof *known))
                return diag_error(d, n, "activations", "activation '%s' is not supported", nm);
            p->act[dir][a] = (uint8_t)k;
            p->alpha[dir][a] = (al && nal == na) ? al[dir * nact + a] : default_alpha((RnnAct)k);
            p->beta[dir][a] = (be && nbe == na) ? be[dir * nact + a] : default_beta((RnnAct)k);
        }
    return 0;
}

static int infer_rnn(Graph *g, Node *n, Diag *d, int gates)
{
    Value *x, *w;
    const char *dir = attr_string(n, "direction", "forward", d);
    int layout = (int)attr_int(n, "layout", 0, d), dirs, k;
    RnnParams p;
    int64_t seq, batch, in, hid, dims[4];
    if (need_input(g, n, 0, d) || need_input(g, n, 1, d) || need_input(g, n, 2, d))
        return 1;
    x = in_val(g, n, 0);
    w = in_val(g, n, 1);
    if (!dtype_is_float(x->dtype))
        return diag_error(d, n, "input[0]", "element type %s is not supported (float expected)",
                          dtype_name(x->dtype));
    if (x->rank != 3 || w->rank != 3)
        return diag_error(d, n, "input[0]", "X and W must have rank 3");
    if (!strcmp(dir, "bidirectional"))
        dirs = 2;
    else if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
        dirs = 1;
    else
        return diag_error(d, n, "direction", "unknown value '%s'", dir);
    if (layout != 0 && layout != 1)
        return diag_error(d, n, "layout", "must be 0 or 1");
    seq = x->dims[layout ? 1 : 0];
    batch = x->dims[layout ? 0 : 1];
    in = x->dims[2];
    hid = attr_int(n, "hidden_size", w->dims[1] / gates, d);
    if (hid < 1)
        return diag_error(d, n, "hidden_size", "must be positive");
    if (gates == 4 && attr_int(n, "input_forget", 0, d))
        return diag_error(d, n, "input_forget", "coupled input and forget gates are not "
                          "supported");
    dims[0] = dirs; dims[1] = gates * hid; dims[2] = in;
    if (check_shape(g, n, 1, 3, dims, d))
        return 1;
    dims[2] = hid;
    if (check_shape(g, n, 2, 3, dims, d))
        return 1;
    dims[1] = 2 * gates * hid;
    if (check_shape(g, n, 3, 2, dims, d))
        return 1;
    if (check_shape(g, n, 4, 1, &batch, d))
        return 1;
    if (n->n_in > 4 && n->in[4] >= 0 && dtype_is_float(in_val(g, n, 4)->dtype))
        return diag_error(d, n, "input[4]", "sequence_lens must be integers");
    dims[1] = batch; dims[2] = hid;
    if (check_shape(g, n, 5, 3, dims, d) || (gates == 4 && check_shape(g, n, 6, 3, dims, d)))
        return 1;
    dims[1] = 3 * hid;
    if (gates == 4 && check_shape(g, n, 7, 2, dims, d))
        return 1;
    for (k = 1; k < n->n_in && k < 8; k++)
        if (n->in[k] >= 0 && k != 4 && in_val(g, n, k)->dtype != x->dtype)
            return diag_error(d, n, "input", "input %d's type differs from X's", k);
    memset(&p, 0, sizeof p);
    p.dirs = (uint8_t)dirs;
    p.reverse = !strcmp(dir, "reverse");
    p.layout = (uint8_t)layout;
    p.linear_before_reset = attr_int(n, "linear_before_reset", 0, d) != 0;
    p.clip = attr_float(n, "clip", 0.0, d);
    if (read_activations(n, gates, &p, d))
        return 1;
    node_set_params(g, n, PARAMS_RNN, &p, sizeof p);
    if (n->n_out > 0 && n->out[0] >= 0) {
        int64_t y[4];
        y[0] = layout ? batch : seq;
        y[1] = layout ? seq : dirs;
        y[2] = layout ? dirs : batch;
        y[3] = hid;
        if (value_set(g, n->out[0], x->dtype, 4, y, d, n))
            return 1;
    }
    dims[0] = layout ? batch : dirs;
    dims[1] = layout ? dirs : batch;
    dims[2] = hid;
    for (k = 1; k < n->n_out && k < 3; k++)
        if (n->out[k] >= 0 && value_set(g, n->out[k], x->dtype, 3, dims, d, n))
            return 1;
    return 0;
}

int infer_RNN(Graph *g, Node *n, Diag *d) { return infer_rnn(g, n, d, 1); }
int infer_GRU(Graph *g, Node *n, Diag *d) { return infer_rnn(g, n, d, 3); }
int infer_LSTM(Graph *g, Node *n, Diag *d) { return infer_rnn(g, n, d, 4); }
