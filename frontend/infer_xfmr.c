/*
 * Shape and type inference for the transformer operators: the activations
 * Gelu (opset 20), Swish (24) and Mish (18), RMSNormalization, RotaryEmbedding
 * and Attention (23; Attention 24 adds nonpad_kv_seqlen). The maths is in
 * lower/op_xfmr.c, which reads what is parsed here (XfmrParams, ScalarParams
 * for RMSNormalization).
 *
 * Attention sees Q, K and V as [batch, heads, sequence, head size]; 3-D
 * inputs [batch, sequence, heads * head size] are split into heads by
 * q_num_heads / kv_num_heads. K and V may have fewer heads than Q (grouped
 * query attention: Q head h uses K/V head h / (q_heads / kv_heads)).
 * past_key / past_value are prepended to K / V along the sequence; the
 * mask is broadcast to [batch, q_heads, q_sequence, total sequence] and may
 * be shorter than the total sequence along its last axis (the rest is
 * masked out).
 */
#include "infer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The operator exists from `since`: an older model cannot use it. */
static int need_opset(const Node *n, int since, Diag *d)
{
    if (n->opset < since)
        return diag_error(d, n, "opset", "%s exists from opset %d; the model imports %d",
                          n->op_type, since, n->opset);
    return 0;
}

static int act_common(Graph *g, Node *n, Diag *d, int since, XfmrParams *p, int errs)
{
    Value *x;
    if (need_opset(n, since, d) || need_input(g, n, 0, d))
        return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    if (d->errors > errs)
        return 1;
    node_set_params(g, n, PARAMS_XFMR, p, sizeof *p);
    return infer_same_shape_out(g, n, 0, x, d);
}

int infer_Gelu(Graph *g, Node *n, Diag *d)
{
    XfmrParams p;
    int errs = d->errors;
    const char *a = attr_string(n, "approximate", "none", d);
    memset(&p, 0, sizeof p);
    if (!strcmp(a, "tanh"))
        p.tanh = 1;
    else if (strcmp(a, "none"))
        return diag_error(d, n, "approximate", "'%s' is not one of none, tanh", a);
    return act_common(g, n, d, 20, &p, errs);
}

int infer_Swish(Graph *g, Node *n, Diag *d)
{
    XfmrParams p;
    int errs = d->errors;
    memset(&p, 0, sizeof p);
    p.alpha = attr_float(n, "alpha", 1.0, d);
    return act_common(g, n, d, 24, &p, errs);
}

int infer_Mish(Graph *g, Node *n, Diag *d)
{
    XfmrParams p;
    memset(&p, 0, sizeof p);
    return act_common(g, n, d, 18, &p, d->errors);
}

/* Y = X / sqrt(mean(X^2 over axis..rank-1) + epsilon) * scale. */
int infer_RMSNormalization(Graph *g, Node *n, Diag *d)
{
    Value *x, *s;
    ScalarParams sp;
    int axis, j, r, errs = d->errors;
    int64_t od[TVMCC_MAX_RANK], st;
    if (need_opset(n, 23, d) || need_input(g, n, 0, d) || need_input(g, n, 1, d))
        return 1;
    x = in_val(g, n, 0);
    s = in_val(g, n, 1);
    if (infer_need_float(n, x, "input[0]", d) || infer_need_float(n, s, "input[1]", d))
        return 1;
    if (infer_axis(n, attr_int(n, "axis", -1, d), x->rank, &axis, d, "axis"))
        return 1;
    st = attr_int(n, "stash_type", 1, d);
    if (st != 1 && st != 11)
        return diag_error(d, n, "stash_type", "%lld is not float (1) or double (11)",
                          (long long)st);
    memset(&sp, 0, sizeof sp);
    sp.axis = axis;
    sp.epsilon = attr_float(n, "epsilon", 1e-5, d);
    if (infer_set_scalar(g, n, &sp, errs, d))
        return 1;
    if (s->rank > x->rank ||
        infer_broadcast(n, x->rank, x->dims, s->rank, s->dims, &r, od, d, "input[1]"))
        return s->rank > x->rank ? diag_error(d, n, "input[1]", "rank above the input's") : 1;
    for (j = 0; j < r; j++)
        if (od[j] != x->dims[j])
            return diag_error(d, n, "input[1]", "does not broadcast to the input's shape");
    return infer_same_shape_out(g, n, 0, x, d);
}

/* Input 0 is [B, H, S, D] (4-D) or [B, S, H * D] (3-D, num_heads given);
 * the caches are [max position, rot / 2] with position_ids [B, S], else
 * [B, S, rot / 2]. */
int infer_RotaryEmbedding(Graph *g, Node *n, Diag *d)
{
    Value *x, *cs, *pos = NULL;
    XfmrParams p;
    int64_t nh, D, B, S, half;
    int i, errs = d->errors;
    if (need_opset(n, 23, d))
        return 1;
    for (i = 0; i < 3; i++)
        if (need_input(g, n, i, d))
            return 1;
    x = in_val(g, n, 0);
    if (infer_need_float(n, x, "input[0]", d))
        return 1;
    memset(&p, 0, sizeof p);
    p.interleaved = attr_int(n, "interleaved", 0, d) != 0;
    nh = attr_int(n, "num_heads", 0, d);
    if (x->rank == 4) {
        if (nh && nh != x->dims[1])
            return diag_error(d, n, "num_heads", "%lld differs from the input's %lld heads",
                              (long long)nh, (long long)x->dims[1]);
        nh = x->dims[1];
        S = x->dims[2];
        D = x->dims[3];
    } else if (x->rank == 3) {
        if (nh <= 0 || x->dims[2] % nh)
            return diag_error(d, n, "num_heads", "must be given and divide the hidden size %lld "
                              "of a 3-D input", (long long)x->dims[2]);
        S = x->dims[1];
        D = x->dims[2] / nh;
    } else {
        return diag_error(d, n, "input[0]", "rank %d is not 3 or 4", x->rank);
    }
    B = x->dims[0];
    p.batch = B;
    p.q_heads = nh;
    p.q_seq = S;
    p.head = D;
    p.three_d = x->rank == 3;
    p.rot_dim = attr_int(n, "rotary_embedding_dim", 0, d);
    if (!p.rot_dim)
        p.rot_dim = D;
    if (p.rot_dim < 0 || p.rot_dim > D || p.rot_dim % 2)
        return diag_error(d, n, "rotary_embedding_dim", "%lld is not an even size up to the "
                          "head size %lld", (long long)p.rot_dim, (long long)D);
    half = p.rot_dim / 2;
    if (n->n_in > 3 && n->in[3] >= 0) {
        pos = in_val(g, n, 3);
        if (pos->dtype != DT_INT64 || pos->rank != 2 || pos->dims[0] != B || pos->dims[1] != S)
            return diag_error(d, n, "input[3]", "position_ids must be int64 [%lld, %lld]",
                              (long long)B, (long long)S);
    }
    for (i = 1; i < 3; i++) {
        const char *f = i == 1 ? "input[1]" : "input[2]";
        cs = in_val(g, n, i);
        if (cs->dtype != x->dtype)
            return diag_error(d, n, f, "type %s differs from the input's",
                              infer_type_name(cs->dtype));
        if (pos ? cs->rank != 2 || cs->dims[1] != half
                : cs->rank != 3 || cs->dims[0] != B || cs->dims[1] != S || cs->dims[2] != half)
            return diag_error(d, n, f, pos ? "must be [max position, %lld]"
                                           : "must be [batch, sequence, %lld]", (long long)half);
    }
    if (d->errors > errs)
        return 1;
    node_set_params(g, n, PARAMS_XFMR, &p, sizeof p);
    return infer_same_shape_out(g, n, 0, x, d);
}

/* Checks that input i has exactly the given 4-D shape. */
static int need_shape4(Graph *g, Node *n, int i, const int64_t *want, DType t, Diag *d)
{
    char field[16];
    Value *v = in_val(g, n, i);
    int j;
    snprintf(field, sizeof field, "input[%d]", i);
    if (v->dtype != t)
        return diag_error(d, n, field, "type %s differs from Q's", infer_type_name(v->dtype));
    for (j = 0; j < 4; j++)
        if (v->rank != 4 || v->dims[j] != want[j])
            return diag_error(d, n, field, "must be [%lld, %lld, %lld, %lld]",
                              (long long)want[0], (long long)want[1], (long long)want[2],
                              (long long)want[3]);
    return 0;
}

/* Output i (when the model asks for it) of type t and the given shape. */
static int set_out(Graph *g, Node *n, int i, DType t, int rank, const int64_t *dims, Diag *d)
{
    if (i >= n->n_out || n->out[i] < 0)
        return 0;
    return value_set(g, n->out[i], t, rank, dims, d, n);
}

int infer_Attention(Graph *g, Node *n, Diag *d)
{
    Value *q, *k, *v, *m;
    XfmrParams p;
    int64_t dims[4], T;
    int i, errs = d->errors;
    if (need_opset(n, 23, d))
        return 1;
    for (i = 0; i < 3; i++)
        if (need_input(g, n, i, d))
            return 1;
    q = in_val(g, n, 0);
    k = in_val(g, n, 1);
    v = in_val(g, n, 2);
    if (infer_need_float(n, q, "input[0]", d))
        return 1;
    if (k->dtype != q->dtype || v->dtype != q->dtype)
        return diag_error(d, n, k->dtype != q->dtype ? "input[1]" : "input[2]",
                          "type differs from Q's %s", infer_type_name(q->dtype));
    if (q->rank != k->rank || q->rank != v->rank || (q->rank != 3 && q->rank != 4))
        return diag_error(d, n, "input[0]", "Q, K and V must all be 3-D or all 4-D");
    memset(&p, 0, sizeof p);
    p.three_d = q->rank == 3;
    p.batch = q->dims[0];
    if (k->dims[0] != p.batch || v->dims[0] != p.batch)
        return diag_error(d, n, "input[1]", "batch differs from Q's %lld", (long long)p.batch);
    if (p.three_d) {
        p.q_heads = attr_int(n, "q_num_heads", 0, d);
        p.kv_heads = attr_int(n, "kv_num_heads", 0, d);
        if (p.q_heads <= 0 || p.kv_heads <= 0)
            return diag_error(d, n, p.q_heads <= 0 ? "q_num_heads" : "kv_num_heads",
                              "must be given (positive) for 3-D inputs");
        if (q->dims[2] % p.q_heads || k->dims[2] % p.kv_heads || v->dims[2] % p.kv_heads)
            return diag_error(d, n, "q_num_heads", "the hidden sizes %lld, %lld, %lld are not "
                              "multiples of the head counts", (long long)q->dims[2],
                              (long long)k->dims[2], (long long)v->dims[2]);
        p.q_seq = q->dims[1];
        p.kv_seq = k->dims[1];
        p.head = q->dims[2] / p.q_heads;
        p.v_head = v->dims[2] / p.kv_heads;
        if (k->dims[2] / p.kv_heads != p.head)
            return diag_error(d, n, "input[1]", "head size %lld differs from Q's %lld",
                              (long long)(k->dims[2] / p.kv_heads), (long long)p.head);
        if (v->dims[1] != p.kv_seq)
            return diag_error(d, n, "input[2]", "sequence differs from K's");
    } else {
        p.q_heads = q->dims[1];
        p.kv_heads = k->dims[1];
        p.q_seq = q->dims[2];
        p.kv_seq = k->dims[2];
        p.head = q->dims[3];
        p.v_head = v->dims[3];
        if (k->dims[3] != p.head)
            return diag_error(d, n, "input[1]", "head size %lld differs from Q's %lld",
                              (long long)k->dims[3], (long long)p.head);
        if (v->dims[1] != p.kv_heads || v->dims[2] != p.kv_seq)
            return diag_error(d, n, "input[2]", "heads or sequence differ from K's");
    }
    if (p.kv_heads <= 0 || p.q_heads % p.kv_heads)
        return diag_error(d, n, "kv_num_heads", "%lld K/V heads do not divide %lld Q heads",
                          (long long)p.kv_heads, (long long)p.q_heads);
    if ((n->n_in > 4 && n->in[4] >= 0) != (n->n_in > 5 && n->in[5] >= 0))
        return diag_error(d, n, "input[4]", "past_key and past_value go together");
    if (n->n_in > 4 && n->in[4] >= 0) {
        Value *pk = in_val(g, n, 4);
        p.past_seq = pk->rank == 4 ? pk->dims[2] : -1;
        dims[0] = p.batch, dims[1] = p.kv_heads, dims[2] = p.past_seq, dims[3] = p.head;
        if (need_shape4(g, n, 4, dims, q->dtype, d))
            return 1;
        dims[3] = p.v_head;
        if (need_shape4(g, n, 5, dims, q->dtype, d))
            return 1;
    }
    T = p.past_seq + p.kv_seq;
    if (n->n_in > 3 && n->in[3] >= 0) {
        int64_t want[4];
        m = in_val(g, n, 3);
        want[0] = p.batch, want[1] = p.q_heads, want[2] = p.q_seq, want[3] = T;
        if (m->dtype != DT_BOOL && !dtype_is_float(m->dtype))
            return diag_error(d, n, "input[3]", "attn_mask type %s is not bool or float",
                              infer_type_name(m->dtype));
        if (m->rank < 1 || m->rank > 4)
            return diag_error(d, n, "input[3]", "attn_mask rank %d is not 1..4", m->rank);
        for (i = 0; i < m->rank; i++) {
            int64_t e = m->dims[m->rank - 1 - i], w = want[3 - i];
            if (i == 0 ? e < 1 || e > w : e != 1 && e != w)
                return diag_error(d, n, "input[3]", "attn_mask does not broadcast to "
                                  "[%lld, %lld, %lld, %lld]", (long long)want[0],
                                  (long long)want[1], (long long)want[2], (long long)want[3]);
        }
    }
    if (n->n_in > 6 && n->in[6] >= 0) {
        Value *nk = in_val(g, n, 6);
        if (n->opset < 24)
            return diag_error(d, n, "input[6]", "nonpad_kv_seqlen exists from opset 24");
        if (nk->dtype != DT_INT64 || nk->rank != 1 || nk->dims[0] != p.batch)
            return diag_error(d, n, "input[6]", "nonpad_kv_seqlen must be int64 [%lld]",
                              (long long)p.batch);
    }
    p.causal = attr_int(n, "is_causal", 0, d) != 0;
    p.softcap = attr_float(n, "softcap", 0.0, d);
    p.scale = node_attr(n, "scale") ? attr_float(n, "scale", 1.0, d)
                                    : 1.0 / sqrt((double)p.head);
    p.qk_mode = (int)attr_int(n, "qk_matmul_output_mode", 0, d);
    if (p.qk_mode < 0 || p.qk_mode > 3)
        return diag_error(d, n, "qk_matmul_output_mode", "%d is not 0..3", p.qk_mode);
    {
        int64_t sp = attr_int(n, "softmax_precision", 1, d);
        if (sp != 1 && sp != 10 && sp != 11 && sp != 16)
            return diag_error(d, n, "softmax_precision", "%lld is not a float type",
                              (long long)sp);
    }
    if (d->errors > errs)
        return 1;
    node_set_params(g, n, PARAMS_XFMR, &p, sizeof p);
    if (!out_val(g, n, 0))
        return diag_error(d, n, "output[0]", "required output is missing");
    if (p.three_d) {
        dims[0] = p.batch, dims[1] = p.q_seq, dims[2] = p.q_heads * p.v_head;
        if (set_out(g, n, 0, q->dtype, 3, dims, d))
            return 1;
    } else {
        dims[0] = p.batch, dims[1] = p.q_heads, dims[2] = p.q_seq, dims[3] = p.v_head;
        if (set_out(g, n, 0, q->dtype, 4, dims, d))
            return 1;
    }
    dims[0] = p.batch, dims[1] = p.kv_heads, dims[2] = T, dims[3] = p.head;
    if (set_out(g, n, 1, q->dtype, 4, dims, d))
        return 1;
    dims[3] = p.v_head;
    if (set_out(g, n, 2, q->dtype, 4, dims, d))
        return 1;
    dims[1] = p.q_heads, dims[2] = p.q_seq, dims[3] = T;
    return set_out(g, n, 3, q->dtype, 4, dims, d);
}
