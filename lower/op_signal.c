/*
 * Lowering of the signal-processing operators STFT and MelWeightMatrix.
 *
 * - STFT is one reduction per output element (batch, frame, bin, re/im)
 *   over the frame's samples, like DFT (lower/op_more.c): twiddles from
 *   (k * n) mod N in integers, sums in double. frame_step and frame_length
 *   may be run-time tensors: the kernel reads them, and without a window or
 *   a constant frame_length the reduction runs over the whole signal length
 *   with the samples past frame_length masked out.
 * - MelWeightMatrix computes each element from its (spectrogram bin, mel
 *   bin) pair: the three band edges of the mel bin, converted from the mel
 *   scale to FFT bins, and the triangle between them. As in the operator's
 *   reference, the mel range is split into num_mel_bins + 2 steps (the
 *   count of band edges). All five inputs are read at run time.
 */
#include "lower.h"

static Expr *load_scalar(Lower *L, Node *n, int i, DType t)
{
    return ex_cast(L, t, ex_load(L, lower_buf_value(L, n->in[i]), ex_int(L, 0)));
}

int lower_STFT(Lower *L, Node *n)
{
    const Value *x = &L->g->values[n->in[0]], *y = &L->g->values[n->out[0]];
    int has_w = n->n_in > 2 && n->in[2] >= 0, has_len = n->n_in > 3 && n->in[3] >= 0;
    int64_t Ls = x->dims[1], R = Ls;
    const int64_t *lv;
    DType t = DT_FLOAT64;
    int xb = lower_buf_value(L, n->in[0]);
    Compute *c = lower_stage(L, "stft", lower_buf_value(L, n->out[0]), 4, y->dims);
    IterVar *r;
    Expr *flen, *step, *pos, *xi[3], *re, *im, *th, *cs, *sn, *vr, *vi, *valid, *rv;
    if (has_w) {
        R = L->g->values[n->in[2]].dims[0];
        flen = ex_int(L, R);
    } else if (has_len && value_const_ints(L->g, n->in[3], &lv) == 1) {
        R = lv[0] < Ls ? (lv[0] > 0 ? lv[0] : 1) : Ls;
        flen = ex_int(L, R);
    } else {
        flen = ex_binary(L, BIN_MAX, load_scalar(L, n, 3, DT_INT64), ex_int(L, 1));
    }
    step = load_scalar(L, n, 1, DT_INT64);
    r = lower_raxis(L, c, R);
    rv = ex_var(L, r);
    pos = ex_add(L, ex_mul(L, ex_var(L, &c->axes[1]), step), rv);
    valid = ex_and(L, ex_lt(L, rv, flen), ex_lt(L, pos, ex_int(L, Ls)));
    xi[0] = ex_var(L, &c->axes[0]);
    xi[1] = ex_binary(L, BIN_MIN, ex_binary(L, BIN_MAX, pos, ex_int(L, 0)), ex_int(L, Ls - 1));
    xi[2] = ex_int(L, 0);
    re = ex_cast(L, t, ex_load_nd(L, xb, 3, x->dims, xi));
    if (x->dims[2] == 2) {
        xi[2] = ex_int(L, 1);
        im = ex_cast(L, t, ex_load_nd(L, xb, 3, x->dims, xi));
    } else {
        im = ex_float(L, t, 0.0);
    }
    if (has_w) {
        Expr *w = ex_cast(L, t, ex_load(L, lower_buf_value(L, n->in[2]), rv));
        re = ex_binary(L, BIN_MUL, re, w);
        im = ex_binary(L, BIN_MUL, im, w);
    }
    th = ex_binary(L, BIN_MOD, ex_mul(L, ex_var(L, &c->axes[2]), rv), flen);
    th = ex_binary(L, BIN_DIV, ex_binary(L, BIN_MUL, ex_cast(L, t, th),
                                         ex_float(L, t, 6.283185307179586476925)),
                   ex_cast(L, t, flen));
    cs = ex_unary(L, UN_COS, th);
    sn = ex_unary(L, UN_SIN, th);
    vr = ex_binary(L, BIN_ADD, ex_binary(L, BIN_MUL, re, cs), ex_binary(L, BIN_MUL, im, sn));
    vi = ex_binary(L, BIN_SUB, ex_binary(L, BIN_MUL, im, cs), ex_binary(L, BIN_MUL, re, sn));
    c->rop = RED_SUM;
    c->body = ex_select(L, valid,
                        ex_select(L, ex_binary(L, BIN_EQ, ex_var(L, &c->axes[3]), ex_int(L, 0)),
                                  vr, vi),
                        ex_float(L, t, 0.0));
    L->k->macs += value_numel(y) * R;
    return 0;
}

/* FFT bin of mel band edge i: floor((dft + 1) * hz(i) / rate). */
static Expr *band_edge(Lower *L, Expr *i, Expr *lowmel, Expr *melstep, Expr *dft, Expr *rate)
{
    DType t = DT_FLOAT64;
    Expr *mel = ex_binary(L, BIN_ADD, ex_binary(L, BIN_MUL, ex_cast(L, t, i), melstep), lowmel);
    Expr *hz = ex_binary(L, BIN_MUL, ex_float(L, t, 700.0),
                         ex_binary(L, BIN_SUB,
                                   ex_binary(L, BIN_POW, ex_float(L, t, 10.0),
                                             ex_binary(L, BIN_DIV, mel, ex_float(L, t, 2595.0))),
                                   ex_float(L, t, 1.0)));
    return ex_unary(L, UN_FLOOR,
                    ex_binary(L, BIN_DIV,
                              ex_binary(L, BIN_MUL, ex_binary(L, BIN_ADD, dft, ex_float(L, t, 1.0)),
                                        hz),
                              rate));
}

static Expr *hz_to_mel(Lower *L, Expr *hz)
{
    DType t = DT_FLOAT64;
    return ex_binary(L, BIN_MUL, ex_float(L, t, 2595.0 / 2.302585092994045684018),
                     ex_unary(L, UN_LOG, ex_binary(L, BIN_ADD, ex_float(L, t, 1.0),
                                                   ex_binary(L, BIN_DIV, hz,
                                                             ex_float(L, t, 700.0)))));
}

int lower_MelWeightMatrix(Lower *L, Node *n)
{
    const Value *y = &L->g->values[n->out[0]];
    DType t = DT_FLOAT64;
    Compute *c = lower_stage(L, "melweights", lower_buf_value(L, n->out[0]), 2, y->dims);
    Expr *bins = load_scalar(L, n, 0, t), *dft = load_scalar(L, n, 1, t);
    Expr *rate = load_scalar(L, n, 2, t);
    Expr *lowmel = hz_to_mel(L, load_scalar(L, n, 3, t));
    Expr *highmel = hz_to_mel(L, load_scalar(L, n, 4, t));
    Expr *melstep = ex_binary(L, BIN_DIV, ex_binary(L, BIN_SUB, highmel, lowmel),
                              ex_binary(L, BIN_ADD, bins, ex_float(L, t, 2.0)));
    Expr *i = ex_var(L, &c->axes[1]), *j = ex_cast(L, t, ex_var(L, &c->axes[0]));
    Expr *lo = band_edge(L, i, lowmel, melstep, dft, rate);
    Expr *ce = band_edge(L, ex_add(L, i, ex_int(L, 1)), lowmel, melstep, dft, rate);
    Expr *hi = band_edge(L, ex_add(L, i, ex_int(L, 2)), lowmel, melstep, dft, rate);
    Expr *up, *down, *rise, *fall;
    rise = ex_select(L, ex_binary(L, BIN_EQ, ce, lo), ex_float(L, t, 1.0),
                     ex_binary(L, BIN_DIV, ex_binary(L, BIN_SUB, j, lo),
                               ex_binary(L, BIN_SUB, ce, lo)));
    fall = ex_binary(L, BIN_DIV, ex_binary(L, BIN_SUB, hi, j), ex_binary(L, BIN_SUB, hi, ce));
    up = ex_and(L, ex_binary(L, BIN_GE, j, lo), ex_binary(L, BIN_LE, j, ce));
    down = ex_and(L, ex_binary(L, BIN_GT, j, ce), ex_binary(L, BIN_LT, j, hi));
    c->body = ex_select(L, up, rise, ex_select(L, down, fall, ex_float(L, t, 0.0)));
    return 0;
}
