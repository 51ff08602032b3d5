/*
 * Lowering of the recurrent layers RNN, GRU and LSTM.
 *
 * The time loop is sequential, and the sequence length is static, so each
 * time step of each direction becomes its own group of stages, in order:
 *
 *   gx[b, g]  = sum_k X[t, b, k] * W[d, g, k] + Wb[d, g]   (all gates)
 *   gh[b, g]  = sum_k H[d, b, k] * R[d, g, k] + Rb[d, g]
 *   (GRU with linear_before_reset=0 also: the hidden gate's recurrent term
 *    over r * H, a third reduction that recomputes r inline)
 *   state update, elementwise and in place: H (and, for LSTM, C first)
 *   Y[t, d, b, :] = H, or 0 past the batch's sequence length
 *
 * The state H ([dirs, batch, hidden], and C for LSTM) lives in scratch
 * buffers, initialised from initial_h / initial_c or zero, and is copied to
 * Y_h / Y_c at the end. An in-place update is safe: each element reads only
 * its own previous value. With sequence_lens a batch past its length keeps
 * its state and writes zeros to Y; the reverse direction starts at the
 * batch's last valid step, so step s handles time len-1-s (or s itself
 * once s >= len, where it only writes the zero row). Gate orders are the
 * specification's: GRU z r h, LSTM i o f c, peepholes i o f.
 */
#include "lower.h"

#include <string.h>

typedef struct Rnn {
    Node *n;
    int gates, dirs, layout, lbr;
    int64_t seq, batch, in, hid;
    DType t;                /* compute type */
    int xb, wb, rb, bb, lb, pb; /* input buffers; -1 when absent */
    int hb, cb;             /* state buffers */
    int gx, gh, g2;         /* per-step scratch */
    const RnnParams *p;     /* activations, clip, direction (inference) */
} Rnn;

static int present(const Node *n, int i)
{
    return i < n->n_in && n->in[i] >= 0;
}

static Expr *fc(Lower *L, const Rnn *r, double v)
{
    return ex_float(L, r->t, v);
}

/* Applies activation `a` of direction d to e. */
static Expr *activate(Lower *L, const Rnn *r, int d, int a, Expr *e)
{
    const RnnParams *p = r->p;
    double al = p->alpha[d][a], be = p->beta[d][a];
    if (p->clip > 0)
        e = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, e, fc(L, r, -p->clip)), fc(L, r, p->clip));
    switch ((RnnAct)p->act[d][a]) {
    case ACT_SIGMOID:
        return ex_unary(L, UN_SIGMOID, e);
    case ACT_TANH:
        return ex_unary(L, UN_TANH, e);
    case ACT_RELU:
        return ex_binary(L, BIN_MAX, e, fc(L, r, 0));
    case ACT_LEAKY_RELU:
        return ex_select(L, ex_lt(L, e, fc(L, r, 0)), ex_mul(L, e, fc(L, r, al)), e);
    case ACT_HARD_SIGMOID:
        return ex_binary(L, BIN_MIN, fc(L, r, 1),
                         ex_binary(L, BIN_MAX, fc(L, r, 0),
                                   ex_add(L, ex_mul(L, e, fc(L, r, al)), fc(L, r, be))));
    case ACT_AFFINE:
        return ex_add(L, ex_mul(L, e, fc(L, r, al)), fc(L, r, be));
    case ACT_SCALED_TANH:
        return ex_mul(L, fc(L, r, al), ex_unary(L, UN_TANH, ex_mul(L, e, fc(L, r, be))));
    case ACT_THRESHOLDED_RELU:
        return ex_select(L, ex_binary(L, BIN_GT, e, fc(L, r, al)), e, fc(L, r, 0));
    case ACT_ELU:
        return ex_select(L, ex_lt(L, e, fc(L, r, 0)),
                         ex_mul(L, fc(L, r, al), ex_unary(L, UN_EXPM1, e)), e);
    case ACT_SOFTSIGN:
        return ex_binary(L, BIN_DIV, e, ex_add(L, fc(L, r, 1), ex_unary(L, UN_ABS, e)));
    case ACT_SOFTPLUS:
        return ex_unary(L, UN_LOG1P, ex_unary(L, UN_EXP, e));
    }
    die("activation %d passed the check", (int)p->act[d][a]);
    return e;
}

/* Takes the parsed attributes and allocates the buffers. */
static int setup(Lower *L, Node *n, Rnn *r, int gates)
{
    const Value *x = &L->g->values[n->in[0]];
    memset(r, 0, sizeof *r);
    r->n = n;
    r->p = node_rnn(n);
    r->gates = gates;
    r->dirs = r->p->dirs;
    r->layout = r->p->layout;
    r->lbr = r->p->linear_before_reset;
    r->seq = x->dims[r->layout ? 1 : 0];
    r->batch = x->dims[r->layout ? 0 : 1];
    r->in = x->dims[2];
    r->hid = L->g->values[n->in[2]].dims[2];
    r->t = dtype_compute(x->dtype);
    r->xb = lower_buf_value(L, n->in[0]);
    r->wb = lower_buf_value(L, n->in[1]);
    r->rb = lower_buf_value(L, n->in[2]);
    r->bb = present(n, 3) ? lower_buf_value(L, n->in[3]) : -1;
    r->lb = present(n, 4) ? lower_buf_value(L, n->in[4]) : -1;
    r->pb = gates == 4 && present(n, 7) ? lower_buf_value(L, n->in[7]) : -1;
    r->hb = lower_buf_temp(L, "h", r->t, r->dirs * r->batch * r->hid);
    if (gates == 4)
        r->cb = lower_buf_temp(L, "c", r->t, r->dirs * r->batch * r->hid);
    r->gx = lower_buf_temp(L, "gx", r->t, r->batch * gates * r->hid);
    r->gh = lower_buf_temp(L, "gh", r->t, r->batch * gates * r->hid);
    if (gates == 3 && !r->lbr)
        r->g2 = lower_buf_temp(L, "gh2", r->t, r->batch * r->hid);
    return 0;
}

/* Clamped sequence length of batch b (int64). */
static Expr *seq_len(Lower *L, const Rnn *r, Expr *b)
{
    Expr *len = ex_cast(L, DT_INT64, ex_load(L, r->lb, b));
    return ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, len, ex_int(L, 0)), ex_int(L, r->seq));
}

/* Time index handled at step s of direction d for batch b. */
static Expr *time_of(Lower *L, const Rnn *r, int d, int64_t s, Expr *b)
{
    int rev = d == 1 || r->p->reverse;
    Expr *len;
    if (!rev)
        return ex_int(L, s);
    if (r->lb < 0)
        return ex_int(L, r->seq - 1 - s);
    len = seq_len(L, r, b);
    return ex_select(L, ex_lt(L, ex_int(L, s), len), ex_sub(L, ex_sub(L, len, ex_int(L, 1)),
                                                            ex_int(L, s)),
                     ex_int(L, s));
}

static Expr *valid_at(Lower *L, const Rnn *r, int64_t s, Expr *b)
{
    if (r->lb < 0)
        return ex_const_int(L, DT_BOOL, 1);
    return ex_lt(L, ex_int(L, s), seq_len(L, r, b));
}

/* Offset of state element (d, b, j). */
static Expr *state_at(Lower *L, const Rnn *r, int d, Expr *b, Expr *j)
{
    return ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_int(L, d), ex_int(L, r->batch)), b),
                            ex_int(L, r->hid)),
                  j);
}

/* Element [b, g*hid + j] of a [batch, gates*hid] scratch buffer. */
static Expr *gate_at(Lower *L, const Rnn *r, int buf, Expr *b, int g, Expr *j)
{
    Expr *off = ex_add(L, ex_mul(L, b, ex_int(L, r->gates * r->hid)),
                       ex_add(L, ex_int(L, g * r->hid), j));
    return ex_load(L, buf, off);
}

static Expr *bias(Lower *L, const Rnn *r, int d, int64_t at, Expr *g)
{
    if (r->bb < 0)
        return fc(L, r, 0);
    return ex_load(L, r->bb, ex_add(L, ex_int(L, d * 2 * r->gates * r->hid + at), g));
}

/* Sum of both pre-activation terms of gate g at (b, j). */
static Expr *pre(Lower *L, const Rnn *r, Expr *b, int g, Expr *j)
{
    return ex_add(L, gate_at(L, r, r->gx, b, g, j), gate_at(L, r, r->gh, b, g, j));
}

static Expr *peep(Lower *L, const Rnn *r, int d, int k, Expr *j, Expr *cv)
{
    if (r->pb < 0)
        return fc(L, r, 0);
    return ex_mul(L, ex_load(L, r->pb, ex_add(L, ex_int(L, (d * 3 + k) * r->hid), j)), cv);
}

static void step(Lower *L, const Rnn *r, int d, int64_t s, int yb)
{
    int64_t gd[2], hd[2];
    int G = r->gates;
    Compute *c;
    IterVar *k;
    Expr *b, *j, *t, *xi[3], *wi[3], *v, *hprev, *valid;
    gd[0] = hd[0] = r->batch;
    gd[1] = G * r->hid;
    hd[1] = r->hid;
    /* input term */
    c = lower_stage(L, "gates_x", r->gx, 2, gd);
    k = lower_raxis(L, c, r->in);
    b = ex_var(L, &c->axes[0]);
    t = time_of(L, r, d, s, b);
    xi[0] = r->layout ? b : t;
    xi[1] = r->layout ? t : b;
    xi[2] = ex_var(L, k);
    wi[0] = ex_int(L, d);
    wi[1] = ex_var(L, &c->axes[1]);
    wi[2] = ex_var(L, k);
    c->rop = RED_SUM;
    c->body = ex_mul(L, ex_load_nd(L, r->xb, 3, L->g->values[r->n->in[0]].dims, xi),
                     ex_load_nd(L, r->wb, 3, L->g->values[r->n->in[1]].dims, wi));
    if (r->bb >= 0)
        c->init = bias(L, r, d, 0, ex_var(L, &c->axes[1]));
    /* recurrent term */
    c = lower_stage(L, "gates_h", r->gh, 2, gd);
    k = lower_raxis(L, c, r->hid);
    b = ex_var(L, &c->axes[0]);
    wi[1] = ex_var(L, &c->axes[1]);
    wi[2] = ex_var(L, k);
    c->rop = RED_SUM;
    c->body = ex_mul(L, ex_load(L, r->hb, state_at(L, r, d, b, ex_var(L, k))),
                     ex_load_nd(L, r->rb, 3, L->g->values[r->n->in[2]].dims, wi));
    if (r->bb >= 0)
        c->init = bias(L, r, d, G * r->hid, ex_var(L, &c->axes[1]));
    if (G == 3 && !r->lbr) {
        /* (r (.) H) * Rh^T + Rbh */
        Expr *rg;
        c = lower_stage(L, "gates_rh", r->g2, 2, hd);
        k = lower_raxis(L, c, r->hid);
        b = ex_var(L, &c->axes[0]);
        rg = activate(L, r, d, 0, pre(L, r, b, 1, ex_var(L, k)));
        wi[1] = ex_add(L, ex_int(L, 2 * r->hid), ex_var(L, &c->axes[1]));
        wi[2] = ex_var(L, k);
        c->rop = RED_SUM;
        c->body = ex_mul(L, ex_mul(L, rg, ex_load(L, r->hb, state_at(L, r, d, b, ex_var(L, k)))),
                         ex_load_nd(L, r->rb, 3, L->g->values[r->n->in[2]].dims, wi));
        if (r->bb >= 0)
            c->init = bias(L, r, d, 5 * r->hid, ex_var(L, &c->axes[1]));
    }
    if (G == 4) {
        Expr *cprev, *ig, *fg, *cc;
        c = lower_stage(L, "cell", r->cb, 2, hd);
        b = ex_var(L, &c->axes[0]);
        j = ex_var(L, &c->axes[1]);
        c->out_index = state_at(L, r, d, b, j);
        cprev = ex_load(L, r->cb, c->out_index);
        ig = activate(L, r, d, 0, ex_add(L, pre(L, r, b, 0, j), peep(L, r, d, 0, j, cprev)));
        fg = activate(L, r, d, 0, ex_add(L, pre(L, r, b, 2, j), peep(L, r, d, 2, j, cprev)));
        cc = activate(L, r, d, 1, pre(L, r, b, 3, j));
        v = ex_add(L, ex_mul(L, fg, cprev), ex_mul(L, ig, cc));
        c->body = ex_select(L, valid_at(L, r, s, b), v, cprev);
    }
    c = lower_stage(L, "hidden", r->hb, 2, hd);
    b = ex_var(L, &c->axes[0]);
    j = ex_var(L, &c->axes[1]);
    c->out_index = state_at(L, r, d, b, j);
    hprev = ex_load(L, r->hb, c->out_index);
    valid = valid_at(L, r, s, b);
    if (G == 1) {
        v = activate(L, r, d, 0, pre(L, r, b, 0, j));
    } else if (G == 3) {
        Expr *z = activate(L, r, d, 0, pre(L, r, b, 0, j)), *hc;
        if (r->lbr)
            hc = ex_add(L, gate_at(L, r, r->gx, b, 2, j),
                        ex_mul(L, activate(L, r, d, 0, pre(L, r, b, 1, j)),
                               gate_at(L, r, r->gh, b, 2, j)));
        else
            hc = ex_add(L, gate_at(L, r, r->gx, b, 2, j),
                        ex_load(L, r->g2, ex_add(L, ex_mul(L, b, ex_int(L, r->hid)), j)));
        hc = activate(L, r, d, 1, hc);
        v = ex_add(L, ex_mul(L, ex_sub(L, fc(L, r, 1), z), hc), ex_mul(L, z, hprev));
    } else {
        Expr *cnew = ex_load(L, r->cb, state_at(L, r, d, b, j));
        Expr *og = activate(L, r, d, 0, ex_add(L, pre(L, r, b, 1, j), peep(L, r, d, 1, j, cnew)));
        v = ex_mul(L, og, activate(L, r, d, 2, cnew));
    }
    c->body = ex_select(L, valid, v, hprev);
    if (yb < 0)
        return;
    c = lower_stage(L, "y", yb, 2, hd);
    b = ex_var(L, &c->axes[0]);
    j = ex_var(L, &c->axes[1]);
    t = time_of(L, r, d, s, b);
    if (r->layout)
        c->out_index = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, b,
                                  ex_int(L, r->seq)), t), ex_int(L, r->dirs)), ex_int(L, d)),
                                  ex_int(L, r->hid)), j);
    else
        c->out_index = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, t,
                                  ex_int(L, r->dirs)), ex_int(L, d)), ex_int(L, r->batch)), b),
                                  ex_int(L, r->hid)), j);
    c->body = ex_select(L, valid_at(L, r, s, b), ex_load(L, r->hb, state_at(L, r, d, b, j)),
                        fc(L, r, 0));
}

/* State buffer sb initialised from input i or zero. */
static void init_state(Lower *L, const Rnn *r, int sb, int i)
{
    int64_t dims[3];
    Compute *c;
    dims[0] = r->dirs;
    dims[1] = r->batch;
    dims[2] = r->hid;
    c = lower_stage(L, "init", sb, 3, dims);
    if (present(r->n, i))
        c->body = ex_cast(L, r->t, ex_load(L, lower_buf_value(L, r->n->in[i]),
                                           state_at(L, r, 0, ex_add(L, ex_mul(L,
                                               ex_var(L, &c->axes[0]), ex_int(L, r->batch)),
                                               ex_var(L, &c->axes[1])),
                                               ex_var(L, &c->axes[2]))));
    else
        c->body = fc(L, r, 0);
}

/* Copies state sb to output o ([dirs, batch, hid], or [batch, dirs, hid]). */
static void final_state(Lower *L, const Rnn *r, int sb, int o)
{
    int64_t dims[3];
    Compute *c;
    if (o >= r->n->n_out || r->n->out[o] < 0)
        return;
    dims[0] = r->dirs;
    dims[1] = r->batch;
    dims[2] = r->hid;
    c = lower_stage(L, "final", lower_buf_value(L, r->n->out[o]), 3, dims);
    if (r->layout)
        c->out_index = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &c->axes[1]),
                                                               ex_int(L, r->dirs)),
                                                   ex_var(L, &c->axes[0])),
                                        ex_int(L, r->hid)),
                              ex_var(L, &c->axes[2]));
    c->body = ex_load(L, sb, state_at(L, r, 0, ex_add(L, ex_mul(L, ex_var(L, &c->axes[0]),
                                                                  ex_int(L, r->batch)),
                                                        ex_var(L, &c->axes[1])),
                                      ex_var(L, &c->axes[2])));
}

static int lower_rnn(Lower *L, Node *n, int gates)
{
    Rnn r;
    int d, yb;
    int64_t s;
    if (setup(L, n, &r, gates))
        return 1;
    yb = n->n_out > 0 && n->out[0] >= 0 ? lower_buf_value(L, n->out[0]) : -1;
    init_state(L, &r, r.hb, 5);
    if (gates == 4)
        init_state(L, &r, r.cb, 6);
    for (d = 0; d < r.dirs; d++)
        for (s = 0; s < r.seq; s++)
            step(L, &r, d, s, yb);
    final_state(L, &r, r.hb, 1);
    if (gates == 4)
        final_state(L, &r, r.cb, 2);
    L->k->macs += r.dirs * r.seq * r.batch * gates * r.hid * (r.in + r.hid);
    return 0;
}

int lower_RNN(Lower *L, Node *n) { return lower_rnn(L, n, 1); }
int lower_GRU(Lower *L, Node *n) { return lower_rnn(L, n, 3); }
int lower_LSTM(Lower *L, Node *n) { return lower_rnn(L, n, 4); }
