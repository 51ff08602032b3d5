/*
 * Integer convolutions and matrix products for Arm cores with the DSP
 * extension (Cortex-M4/M7/M33/M55): the int32 sums of 8-bit products that
 * lower_quant_sum() (op_quant.c) makes of a quantized Conv, Gemm or MatMul
 * whose weights are a constant int8 tensor, as im2col into 16-bit columns
 * and a 2 x 3 register tile of SMLADs.
 *
 * The stage is matched by structure, in any layout:
 *
 *   out[pos, co] = post( init[co] + sum_r D(pos, r) * int32(W[co, r]) )
 *
 * where D is int32 of an 8-bit load (under a padding select with a
 * constant), which does not depend on co, and W is an int8 constant whose
 * index is affine in co and the reduce axes r. pos are the other output
 * axes (batch and output pixels), K the product of the reduce extents.
 * The kernel's nest becomes, per tile of three positions:
 *
 *   - im2col: the three positions' operands widened to int16 into
 *     xc[g][col][4] (KG = ceil(K/4) groups of 4 reduce points), each group's
 *     four values in the order k0, k2, k1, k3, which is the order SXTB16
 *     splits a word of four int8 weights into (even bytes, then odd bytes):
 *     one 64-bit load of the column then pairs with the weight word
 *     without a permute. Reduce points past K hold 0 (written once);
 *   - the tile (FOR_TENSORIZE, Stmt.tz = TZ_M4Q_2X3): for each pair of
 *     output channels, acc[co][col] = init[co] + sum over the groups;
 *     emit_c/emit_arm.c prints it as a call of one assembly function
 *     (GCC and Clang on Thumb-2 with the DSP extension) whose inner step
 *     loads the pair's two weight words with one LDRD, splits them with 4
 *     SXTB16, and for each of the three columns loads two words of int16
 *     pairs with one LDRD and does 4 SMLADs: 24 MACs in 28 cycles on a
 *     Cortex-M4, all 14 usable core registers (6 accumulators); other
 *     compilers get the nest as loops;
 *   - the epilogue: post(acc) per output channel and position.
 *
 * The weights are packed at compile time into int32 words (4 int8 of one
 * channel each; int32 so that the array is word-aligned for LDRD), two
 * channels per group: wp[(pair*KG + g)*2 + r]; init[co] is evaluated at
 * compile time (the bias with the zero-point terms folded in) into a
 * constant. Integer sums are exact modulo 2^32, so the results are the
 * naive schedule's bit for bit.
 *
 * Memory: xc (KG*24 bytes) and acc (6 per pair, int32) are kernel scratch
 * in the arena.
 */
#include "tpl_packed.h"
#include "eval.h"

#include <string.h>

/* Smallest number of positions worth a tile of three. */
#define M4Q_MIN_POSITIONS 3
/* Fewest output channels for an im2col of single values (below). */
#define M4Q_MIN_CHANNELS_BYTEWISE 8
/* Longest such reduction printed as one store per point. */
#define M4Q_UNROLL_BYTEWISE 64

/* The data operand (tpl_q_data): an 8-bit load under a padding select
 * whose constant fits int16. */
static int m4q_data(const Kernel *k, const Expr *e)
{
    const Expr *ld, *cond;
    int64_t zx;
    return !tpl_q_data(k, e, &ld, &cond, &zx) && zx >= -32768 && zx <= 32767;
}

/* A sum of 8-bit data and int8 constant weights, int32 init: its data
 * and weight operands, either order; nonzero when it is not one. */
static int m4q_operands(const Lower *L, const Compute *c, const Expr **data, const Expr **wl)
{
    if (c->init && c->init->dtype != DT_INT32)
        return 1;
    if (!tpl_q_weights(L, c->body->b, wl) && m4q_data(L->k, c->body->a))
        *data = c->body->a;
    else if (!tpl_q_weights(L, c->body->a, wl) && m4q_data(L->k, c->body->b))
        *data = c->body->b;
    else
        return 1;
    return 0;
}

/* An int64 operand whose value is an int32: a cast of an int32 value, or
 * a constant in range. */
static int m4q_int32_operand(const Expr *e)
{
    if (e->kind == EX_INT)
        return e->ival >= INT32_MIN && e->ival <= INT32_MAX;
    return e->kind == EX_CAST && e->dtype == DT_INT64 && e->a->dtype == DT_INT32;
}

/* init[co] for co < Co into out (zero when the stage has no init), through
 * the loop-IR interpreter: nonzero when init depends on more than co. */
static int m4q_eval_init(Lower *L, const Compute *c, int cov, int64_t Co, int32_t *out)
{
    IterVar iv;
    Expr **map;
    if (!c->init)
        return 0;
    if (!tpl_const_of(L, c->init, cov, 1))
        return 1;
    iv = lower_itervar(L, "co", Co);
    map = lower_alloc(L, (size_t)(L->k->n_vars + 1) * sizeof *map);
    map[cov] = ex_var(L, &iv);
    return tpl_eval_over(L, &iv, ex_cast(L, DT_INT32, lq_subst(L, c->init, map, NULL)), DT_INT32, "m4q_init", out);
}

/* Whether index e is x + var with var absent from x, through additions
 * (the parts without var may hold a padded window's clamps, which
 * lq_affine refuses). */
static int m4q_unit(const Expr *e, int var)
{
    LqAffine a;
    if (lq_affine(e, &a))
        return lq_aff_coef(&a, var) == 1;
    if (e->kind == EX_CAST)
        return m4q_unit(e->a, var);
    if (e->kind != EX_BINARY || e->op != BIN_ADD)
        return 0;
    if (!lq_uses_var(e->a, var))
        return m4q_unit(e->b, var);
    if (!lq_uses_var(e->b, var))
        return m4q_unit(e->a, var);
    return 0;
}

/* The stage's nest in the kernel's body: the naive schedule's sequence
 * holds one nest per stage (a fused Transpose after the conv keeps its
 * own); then constants the new nest no longer reads (the original
 * weights and the init it replaced by its own copies) leave the kernel's
 * arguments. */
static void m4q_drop_unused(Kernel *k);
static void m4q_set_nest(Kernel *k, const Compute *c, Stmt *s)
{
    if (k->body && k->body->kind == ST_SEQ && k->body->n_body == k->n_stages && c == &k->stages[0])
        k->body->body[0] = s;
    else
        k->body = s;
    m4q_drop_unused(k);
}

/* Constants the new nest no longer reads (the original weights and the
 * init it replaced by its own copies) leave the kernel's arguments. */
static void m4q_drop_unused(Kernel *k)
{
    int i;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].scope == BUF_CONST && !lq_stmt_uses_buf(k->body, i))
            k->bufs[i].scope = BUF_UNUSED;
}

/* The requantization of op_quant.c's requant_int,
 *   t = int32(uint64(acc * m + 2^62 + 2^(s-1)) >> s),
 * with 33 <= s <= 62 and acc, m in int32, rewritten on the high word of
 * the product, which Armv7E-M gets from one SMULL:
 *   hi = int32(uint64(acc * m) >> 32)
 *   t  = int32(uint32(hi + 2^31 + 2^(s-33)) >> (s-32)) - 2^(62-s).
 * Exact: with acc * m = hi * 2^32 + lo (0 <= lo < 2^32), both are
 * floor((acc * m + 2^(s-1)) / 2^s) + 2^(62-s), since lo / 2^32 < 1 adds
 * nothing to floor((hi + 2^(s-33) + lo / 2^32) / 2^(s-32)), and 2^31 is a
 * multiple of 2^(s-32); |hi| < 2^30 keeps the uint32 sum in range. The
 * other nodes are kept (a copy where the rewrite is below them). */
static Expr *m4q_requant(Lower *L, const Expr *e)
{
    Expr *a, *b, *c;
    if (!e)
        return NULL;
    if (e->kind == EX_CAST && e->dtype == DT_INT32 && e->a->kind == EX_BINARY && e->a->op == BIN_SHR &&
        e->a->b->kind == EX_INT && e->a->a->kind == EX_CAST && e->a->a->dtype == DT_UINT64 &&
        e->a->a->a->kind == EX_BINARY && e->a->a->a->op == BIN_ADD && e->a->a->a->b->kind == EX_INT) {
        int64_t sh = e->a->b->ival;
        const Expr *prod = e->a->a->a->a;
        if (sh >= 33 && sh <= 62 && e->a->a->a->b->ival == ((int64_t)1 << 62) + ((int64_t)1 << (sh - 1)) &&
            prod->kind == EX_BINARY && prod->op == BIN_MUL && prod->dtype == DT_INT64 && m4q_int32_operand(prod->a) &&
            m4q_int32_operand(prod->b)) {
            Expr *hi = ex_cast(L, DT_INT32, ex_binary(L, BIN_SHR, ex_cast(L, DT_UINT64, (Expr *)prod),
                                                      ex_const_int(L, DT_UINT64, 32)));
            Expr *u = ex_binary(L, BIN_ADD, ex_cast(L, DT_UINT32, hi),
                                ex_const_int(L, DT_UINT32, ((int64_t)1 << 31) + ((int64_t)1 << (sh - 33))));
            u = ex_binary(L, BIN_SHR, u, ex_const_int(L, DT_UINT32, sh - 32));
            return ex_binary(L, BIN_ADD, ex_cast(L, DT_INT32, u), ex_const_int(L, DT_INT32, -((int64_t)1 << (62 - sh))));
        }
    }
    a = m4q_requant(L, e->a);
    b = m4q_requant(L, e->b);
    c = m4q_requant(L, e->c);
    if (a == e->a && b == e->b && c == e->c)
        return (Expr *)e;
    return ex_with(L, e, a, b, c);
}

/* A copy of index e without its clamps min(max(x, lo), hi) (either
 * nesting) to constant bounds; a lone min or max stays. */
static Expr *m4q_unclamp(Lower *L, const Expr *e)
{
    Expr *a, *b, *c;
    if (!e)
        return NULL;
    if (e->kind == EX_BINARY && (e->op == BIN_MIN || e->op == BIN_MAX) && e->b->kind == EX_INT &&
        e->a->kind == EX_BINARY && e->a->op == (e->op == BIN_MIN ? BIN_MAX : BIN_MIN) && e->a->b->kind == EX_INT)
        return m4q_unclamp(L, e->a->a);
    a = m4q_unclamp(L, e->a);
    b = m4q_unclamp(L, e->b);
    c = m4q_unclamp(L, e->c);
    if (a == e->a && b == e->b && c == e->c)
        return (Expr *)e;
    return ex_with(L, e, a, b, c);
}

/* The window tests of an unrolled im2col, merged: the conjunctions'
 * atoms, an atom base + k < hi (base + k >= lo) kept once per base with
 * the tightest bound, any other atom once. */
typedef struct M4qAtoms {
    const Expr *base[256];
    int64_t bound[256];
    int op[256]; /* BIN_LT, BIN_GE, or -1: the atom itself in base */
    int n;
} M4qAtoms;

static int m4q_atom(M4qAtoms *t, const Expr *e)
{
    const Expr *base;
    int64_t off = 0, bound;
    int op = -1, i;
    if (e->kind == EX_BINARY && e->op == BIN_AND)
        return m4q_atom(t, e->a) || m4q_atom(t, e->b);
    base = e;
    if (e->kind == EX_BINARY && (e->op == BIN_LT || e->op == BIN_GE) && e->b->kind == EX_INT) {
        base = e->a;
        if (base->kind == EX_BINARY && base->op == BIN_ADD && base->b->kind == EX_INT) {
            off = base->b->ival;
            base = base->a;
        }
        op = e->op;
        bound = e->b->ival - off;
    } else {
        bound = 0;
    }
    for (i = 0; i < t->n; i++)
        if (t->op[i] == op && lq_same_expr(t->base[i], base)) {
            if (op == BIN_LT && bound < t->bound[i])
                t->bound[i] = bound;
            if (op == BIN_GE && bound > t->bound[i])
                t->bound[i] = bound;
            return 0;
        }
    if (t->n == (int)(sizeof t->base / sizeof t->base[0]))
        return 1;
    t->base[t->n] = base;
    t->bound[t->n] = bound;
    t->op[t->n] = op;
    t->n++;
    return 0;
}

/* An unrolled im2col (each store int16(select(window test, x[..], zero
 * point))) as: if (every test holds) fast, the stores of the plain loads
 * (tpl_qconv_m4 makes them: their indices without the clamps to the image,
 * which change nothing inside, as one base plus constant offsets); else
 * the stores as they are. A first conv's window is inside the image at
 * all but its edge positions. */
static Stmt *m4q_interior(Lower *L, Stmt *all, Stmt *fast)
{
    M4qAtoms *t = lower_alloc(L, sizeof *t);
    Expr *cond = NULL;
    int i;
    t->n = 0;
    for (i = 0; i < all->n_body; i++) {
        const Stmt *st = all->body[i];
        const Expr *v = st->value->kind == EX_CAST ? st->value->a : NULL;
        if (!v || v->kind != EX_SELECT || m4q_atom(t, v->a))
            return all;
    }
    for (i = 0; i < t->n; i++) {
        Expr *a = (Expr *)t->base[i];
        if (t->op[i] >= 0)
            a = ex_binary(L, (BinaryOp)t->op[i], a, ex_const_int(L, t->base[i]->dtype, t->bound[i]));
        cond = cond ? ex_and(L, cond, a) : a;
    }
    return cond ? st_if_else(L, cond, fast, all) : all;
}

/* A product term of requant_int's sum, mult * x with x scaled by 2^e
 * (int32, x's bound permitting); NULL when it is not such a term. */
static Expr *m4q_scaled_term(Lower *L, const Expr *t, int e)
{
    const Expr *x, *m;
    if (t->kind != EX_BINARY || t->op != BIN_MUL || t->dtype != DT_INT64)
        return NULL;
    x = t->a;
    m = t->b;
    if (x->kind != EX_CAST || x->a->dtype != DT_INT32 || lq_mag(m) > ((uint64_t)1 << 31) ||
        lq_mag(x->a) >= ((uint64_t)1 << (31 - e)))
        return NULL;
    return ex_binary(L, BIN_MUL,
                     ex_cast(L, DT_INT64, ex_binary(L, BIN_MUL, x->a, ex_const_int(L, DT_INT32, (int64_t)1 << e))),
                     (Expr *)m);
}

/* op_quant.c requant_int's form for a shift s < 32 with the add and clamp
 * in int32 (a quantized Add, Mul or rescale),
 *   t = int32(uint64(P + 2^62 + 2^(s-1)) >> s) + d,  d = zy - 2^(62-s) mod 2^32,
 * P a product mult * x or a sum of two, rewritten on the high word of
 * P * 2^(33-s) (each x scaled by 2^(33-s) in int32):
 *   h = int32(uint64(P * 2^(33-s)) >> 32)
 *   t = int32(uint32(h + 2^31 + 1) >> 1) - 2^30 + zy.
 * Exact: (P + 2^(s-1)) / 2^s = (h + 1 + lo / 2^32) / 2 with lo the low
 * word, and floor((n + f) / 2) = floor(n / 2) for an integer n and
 * 0 <= f < 1; |P| * 2^(33-s) <= 2^62 keeps |h| <= 2^30. On Armv7E-M the
 * products are one SMULL and an SMLAL, and the end one SSAT with its shift
 * (emit_expr.c requant_asr): a Conv + Add epilogue 25 -> about 12
 * instructions. The other nodes are kept (a copy where the rewrite is
 * below them). */
static Expr *m4q_requant_narrow(Lower *L, const Expr *e)
{
    Expr *a, *b, *c;
    if (!e)
        return NULL;
    if (e->kind == EX_BINARY && e->op == BIN_ADD && e->dtype == DT_INT32 && e->b->kind == EX_INT &&
        e->a->kind == EX_CAST && e->a->a->kind == EX_BINARY && e->a->a->op == BIN_SHR && e->a->a->b->kind == EX_INT &&
        e->a->a->a->kind == EX_CAST && e->a->a->a->dtype == DT_UINT64 && e->a->a->a->a->kind == EX_BINARY &&
        e->a->a->a->a->op == BIN_ADD && e->a->a->a->a->b->kind == EX_INT) {
        int64_t sh = e->a->a->b->ival;
        const Expr *p = e->a->a->a->a->a;
        if (sh >= 1 && sh < 32 && e->a->a->a->a->b->ival == ((int64_t)1 << 62) + ((int64_t)1 << (sh - 1)) &&
            p->dtype == DT_INT64) {
            int ex = 33 - (int)sh;
            Expr *np = NULL;
            if (p->kind == EX_BINARY && p->op == BIN_ADD) {
                Expr *t0 = m4q_scaled_term(L, p->a, ex), *t1 = m4q_scaled_term(L, p->b, ex);
                if (t0 && t1)
                    np = ex_binary(L, BIN_ADD, t0, t1);
            } else {
                np = m4q_scaled_term(L, p, ex);
            }
            if (np && lq_mag(np) <= ((uint64_t)1 << 62)) {
                int64_t zy = (e->b->ival + ((int64_t)1 << (62 - sh))) & INT64_C(0xffffffff);
                Expr *h, *u;
                if (zy >= ((int64_t)1 << 31))
                    zy -= (int64_t)1 << 32;
                h = ex_cast(L, DT_INT32, ex_binary(L, BIN_SHR, ex_cast(L, DT_UINT64, np), ex_const_int(L, DT_UINT64, 32)));
                u = ex_binary(L, BIN_ADD, ex_cast(L, DT_UINT32, h), ex_const_int(L, DT_UINT32, ((int64_t)1 << 31) + 1));
                u = ex_binary(L, BIN_SHR, u, ex_const_int(L, DT_UINT32, 1));
                u = ex_binary(L, BIN_ADD, ex_cast(L, DT_INT32, u), ex_const_int(L, DT_INT32, -((int64_t)1 << 30)));
                return ex_binary(L, BIN_ADD, u, ex_const_int(L, DT_INT32, zy));
            }
        }
    }
    a = m4q_requant_narrow(L, e->a);
    b = m4q_requant_narrow(L, e->b);
    c = m4q_requant_narrow(L, e->c);
    if (a == e->a && b == e->b && c == e->c)
        return (Expr *)e;
    return ex_with(L, e, a, b, c);
}

Expr *m4q_requant_all(Lower *L, const Expr *e, void *ctx)
{
    (void)ctx;
    return m4q_requant_narrow(L, m4q_requant(L, e));
}

/* Halfword position of reduce point j (0..3) in its group: k0, k2, k1, k3
 * (the map is its own inverse). */
static int64_t m4q_pos(int64_t j)
{
    return (j & 1) * 2 + (j >> 1);
}

/* The offset of weight (co, reduce point kk) in its buffer (kk flat over
 * the reduce axes, row-major), from the weight index's affine form: its
 * constant, co's coefficient wco and the reduce axes' wr; -1 when outside
 * the buffer's numel values. */
static int64_t m4q_weight_at(const Compute *c, const LqAffine *aw, int64_t wco, const int64_t *wr, int64_t numel,
                             int64_t co, int64_t kk)
{
    int64_t rest = kk, off = aw->c0 + co * wco;
    int i;
    for (i = c->n_raxes - 1; i >= 0; i--) {
        off += rest % c->raxes[i].extent * wr[i];
        rest /= c->raxes[i].extent;
    }
    return off >= 0 && off < numel ? off : -1;
}

/* ---- the Helium (MVE) form, Armv8.1-M (Cortex-M55) ----
 *
 * The same sums as the SMLAD tile, with int8 operands as VMLADAVA.S8
 * takes them (16 products summed into a scalar per instruction): per
 * tile of three positions the columns xm[col][Kp] as int8 (uint8 data
 * less 128, the 128 * sum of the channel's weights added to its init),
 * weights wm[co][Kp] int8, K padded to Kp, a multiple of 16, with zeros;
 * the tile (TZ_MVE_2X3, tz_arg[0] = Kp) two channels by three columns per
 * step, the five vectors of a step loaded once. emit_c/emit_arm.c prints
 * it with <arm_mve.h> under __ARM_FEATURE_MVE's integer bit, the loops
 * otherwise. */
static int64_t m4q_kp(int64_t K)
{
    return (K + 15) / 16 * 16;
}

static int m4q_mve_pack(Lower *L, Compute *c, const Expr *wl, const LqAffine *aw, int cov, int64_t wco, int64_t Co,
                        int64_t K, const int64_t *wr, int u8, int *xm, int *wm, int *ib, int *acc)
{
    const Buffer *wb = &L->k->bufs[wl->buf];
    const int8_t *wsrc = L->g->values[wb->value].data;
    int64_t Kp = m4q_kp(K), NP = (Co + 1) / 2, co, kk;
    int8_t *wdst = lower_alloc(L, (size_t)(NP * 2 * Kp));
    int32_t *idst = lower_alloc(L, (size_t)(NP * 2) * sizeof *idst);
    if (m4q_eval_init(L, c, cov, Co, idst))
        return 1;
    for (co = 0; co < Co; co++)
        for (kk = 0; kk < K; kk++) {
            int64_t off = m4q_weight_at(c, aw, wco, wr, wb->numel, co, kk);
            if (off < 0)
                return 1;
            wdst[co * Kp + kk] = wsrc[off];
            if (u8)
                idst[co] += 128 * (int32_t)wsrc[off];
        }
    *wm = tpl_new_const(L, "mve_w", DT_INT8, NP * 2 * Kp, wdst);
    *ib = tpl_new_const(L, "mve_init", DT_INT32, NP * 2, idst);
    *xm = lower_buf_temp(L, "xm", DT_INT8, 3 * Kp);
    *acc = lower_buf_temp(L, "acc", DT_INT32, NP * 6);
    return 0;
}

/* The im2col (value by value: xm[col*Kp + kk] = int8(D - off)), the
 * padding's zeros (once) and the tile nest of the MVE form; map holds the
 * output axes' expressions of the column's position. */
static void m4q_mve_nests(Lower *L, Compute *c, const Expr *data, Expr **map, const IterVar *colv, int64_t K,
                          int64_t Co, int u8, int xm, int wm, int ib, int acc, Stmt **im, Stmt **mm, Stmt **zero)
{
    int64_t Kp = m4q_kp(K), NP = (Co + 1) / 2;
    IterVar rv[TVMCC_MAX_RANK + 1], prv, rrv, ccv, kv;
    Expr *kk = ex_int(L, 0), *v;
    Stmt *st;
    int i;
    for (i = 0; i < c->n_raxes; i++) {
        rv[i] = lower_itervar(L, "rk", c->raxes[i].extent);
        kk = ex_add(L, ex_mul(L, kk, ex_int(L, c->raxes[i].extent)), ex_var(L, &rv[i]));
        map[c->raxes[i].var] = ex_var(L, &rv[i]);
    }
    v = ex_cast(L, DT_INT32, lq_subst(L, data, map, NULL));
    if (u8)
        v = ex_sub(L, v, ex_const_int(L, DT_INT32, 128));
    st = st_store(L, xm, ex_add(L, ex_mul(L, ex_var(L, colv), ex_int(L, Kp)), kk), ex_cast(L, DT_INT8, v));
    for (i = c->n_raxes - 1; i >= 0; i--)
        st = st_for(L, &rv[i], st);
    *im = st_for(L, colv, st);
    *zero = NULL;
    if (Kp > K) {
        IterVar zc = lower_itervar(L, "col", 3), zj = lower_itervar(L, "j", Kp - K);
        Expr *ix = ex_add(L, ex_mul(L, ex_var(L, &zc), ex_int(L, Kp)), ex_add(L, ex_var(L, &zj), ex_int(L, K)));
        *zero = st_for(L, &zc, st_for(L, &zj, st_store(L, xm, ix, ex_const_int(L, DT_INT8, 0))));
    }
    prv = lower_itervar(L, "pr", NP);
    rrv = lower_itervar(L, "rr", 2);
    ccv = lower_itervar(L, "cc", 3);
    kv = lower_itervar(L, "k", Kp);
    {
        Expr *row = ex_add(L, ex_mul(L, ex_var(L, &prv), ex_int(L, 2)), ex_var(L, &rrv));
        Expr *ai = ex_add(L, ex_mul(L, row, ex_int(L, 3)), ex_var(L, &ccv));
        Expr *xi = ex_add(L, ex_mul(L, ex_var(L, &ccv), ex_int(L, Kp)), ex_var(L, &kv));
        Expr *wi = ex_add(L, ex_mul(L, row, ex_int(L, Kp)), ex_var(L, &kv));
        Expr *prod = ex_mul(L, ex_cast(L, DT_INT32, ex_load(L, xm, xi)), ex_cast(L, DT_INT32, ex_load(L, wm, wi)));
        Stmt *init = st_for(L, &rrv, st_for(L, &ccv, st_store(L, acc, ai, ex_load(L, ib, row))));
        Stmt *upd = st_for(L, &kv, st_for(L, &rrv, st_for(L, &ccv, st_store(L, acc, ai,
                                                                             ex_add(L, ex_load(L, acc, ai), prod)))));
        Stmt *b = st_seq(L, 2);
        b->body[0] = init;
        b->body[1] = upd;
        *mm = st_for(L, &prv, b);
        (*mm)->for_kind = FOR_TENSORIZE;
        (*mm)->tz = TZ_MVE_2X3;
        (*mm)->tz_arg[0] = Kp;
    }
}

int tpl_qconv_m4(Lower *L, Compute *c, int mve)
{
    Kernel *k = L->k;
    const Expr *data, *wl;
    LqAffine aw;
    int vars[TVMCC_MAX_RANK * 2], nv = 0, i, cov = -1, coi = -1, last, u8;
    int64_t P = 1, K = 1, Co, KG, NP, T, wco, wr[TVMCC_MAX_RANK], stride[TVMCC_MAX_RANK];
    const int8_t *wsrc;
    const Buffer *wb;
    int32_t *wdst, *idst;
    int wp, ib, xc, acc;
    IterVar ptv, colv, rv[TVMCC_MAX_RANK + 1], prv, rrv, ccv, gv, hv, cov2, col2;
    Expr **map, *q, *qc;
    Stmt *im, *mm, *s, *zero = NULL;

    if (c->rop != RED_SUM || c->n_raxes < 1 || !c->body || c->body->kind != EX_BINARY ||
        c->body->op != BIN_MUL || c->body->dtype != DT_INT32 || !L->g)
        return 1;
    if (m4q_operands(L, c, &data, &wl))
        return 1;
    /* the weight index: affine in one output axis (co) and the reduce axes */
    if (!lq_affine(wl->a, &aw))
        return 1;
    for (i = 0; i < c->n_axes; i++) {
        if (lq_aff_coef(&aw, c->axes[i].var)) {
            if (coi >= 0)
                return 1;
            coi = i;
        }
        vars[nv++] = c->axes[i].var;
    }
    for (i = 0; i < c->n_raxes; i++)
        vars[nv++] = c->raxes[i].var;
    if (coi < 0 || !lq_aff_only(&aw, vars, nv))
        return 1;
    cov = c->axes[coi].var;
    if (lq_uses_var(data, cov))
        return 1;
    Co = c->axes[coi].extent;
    wco = lq_aff_coef(&aw, cov);
    for (i = 0; i < c->n_axes; i++)
        if (i != coi)
            P *= c->axes[i].extent;
    for (i = 0; i < c->n_raxes; i++) {
        wr[i] = lq_aff_coef(&aw, c->raxes[i].var);
        K *= c->raxes[i].extent;
    }
    if (P < M4Q_MIN_POSITIONS || K < 1 || K > (1 << 24) || Co < 1)
        return 1;
    /* a reduction whose innermost extent is not a multiple of 4 (a first
     * conv's 1 or 3 input channels) widens value by value: worth it over
     * enough channels only (bench/arm, est. cycles/MAC against the quad
     * forms of templates_arm.c: DS-CNN's first conv, 64 channels, 4.9 ->
     * 1.8; ResNet-8's, 16, 3.9 -> 2.35; MobileNet's, 8, 3.5 -> 2.75; the
     * loop form of the im2col, before the unrolled one for K <= 64, made
     * the 8-channel one 6.7) */
    if (!mve && c->raxes[c->n_raxes - 1].extent % 4 && Co < M4Q_MIN_CHANNELS_BYTEWISE)
        return 1;
    {
        /* uint8 data: the MVE form takes it less 128 */
        const Expr *e = data->kind == EX_SELECT ? data->b : data;
        while (e->kind == EX_CAST)
            e = e->a;
        u8 = e->kind == EX_LOAD && k->bufs[e->buf].dtype == DT_UINT8;
    }
    KG = (K + 3) / 4;
    NP = (Co + 1) / 2;
    T = tpl_ceil_div(P, 3);

    if (mve) {
        if (m4q_mve_pack(L, c, wl, &aw, cov, wco, Co, K, wr, u8, &xc, &wp, &ib, &acc))
            return 1;
    } else {
        /* packed weights and the init constant */
        wb = &k->bufs[wl->buf];
        wsrc = L->g->values[wb->value].data;
        wdst = lower_alloc(L, (size_t)(NP * KG * 2) * sizeof *wdst);
        {
            int64_t co, kk;
            for (co = 0; co < Co; co++)
                for (kk = 0; kk < K; kk++) {
                    int64_t off = m4q_weight_at(c, &aw, wco, wr, wb->numel, co, kk);
                    uint32_t byte;
                    if (off < 0)
                        return 1;
                    byte = (uint32_t)(uint8_t)wsrc[off];
                    wdst[((co / 2) * KG + kk / 4) * 2 + co % 2] |= (int32_t)(byte << (8 * (kk % 4)));
                }
        }
        idst = lower_alloc(L, (size_t)(NP * 2) * sizeof *idst);
        if (m4q_eval_init(L, c, cov, Co, idst))
            return 1;
        wp = tpl_new_const(L, "m4q_w", DT_INT32, NP * KG * 2, wdst);
        ib = tpl_new_const(L, "m4q_init", DT_INT32, NP * 2, idst);
        xc = lower_buf_temp(L, "xc", DT_INT16, KG * 12);
        acc = lower_buf_temp(L, "acc", DT_INT32, NP * 6);
    }
    /* positions: the output axes but co, row-major; pos axis i of the flat
     * position q is (q / stride[i]) % extent */
    {
        int64_t st = 1;
        for (i = c->n_axes - 1; i >= 0; i--) {
            stride[i] = st;
            if (i != coi)
                st *= c->axes[i].extent;
        }
    }
    map = lower_alloc(L, (size_t)(k->n_vars + 8) * sizeof *map);
    ptv = lower_itervar(L, "pt", T);
    colv = lower_itervar(L, "col", 3);
    q = ex_add(L, ex_mul(L, ex_var(L, &ptv), ex_int(L, 3)), ex_var(L, &colv));
    qc = T * 3 != P ? ex_binary(L, BIN_MIN, q, ex_int(L, P - 1)) : q;
    for (i = 0; i < c->n_axes; i++)
        if (i != coi)
            map[c->axes[i].var] = ex_binary(L, BIN_MOD, ex_binary(L, BIN_DIV, qc, ex_int(L, stride[i])),
                                            ex_int(L, c->axes[i].extent));

    if (mve) {
        m4q_mve_nests(L, c, data, map, &colv, K, Co, u8, xc, wp, ib, acc, &im, &mm, &zero);
    } else {
        /* im2col of column col: xc[(g*3 + col)*4 + pos(j)] = D(q, r) for the
         * reduce point kk = 4g + j; when the last reduce extent is a multiple
         * of 4 it is split into (g, j) with j unrolled, so every index is
         * affine */
        last = c->n_raxes - 1;
        for (i = 0; i < c->n_raxes; i++)
            rv[i] = lower_itervar(L, "rk", c->raxes[i].extent);
        if (c->raxes[last].extent % 4 == 0) {
            IterVar c4 = lower_itervar(L, "rg", c->raxes[last].extent / 4);
            Stmt *quad = st_seq(L, 4);
            Expr *outer = ex_int(L, 0), *g;
            for (i = 0; i < last; i++) {
                outer = ex_add(L, ex_mul(L, outer, ex_int(L, c->raxes[i].extent)), ex_var(L, &rv[i]));
                map[c->raxes[i].var] = ex_var(L, &rv[i]);
            }
            g = ex_add(L, ex_mul(L, outer, ex_int(L, c->raxes[last].extent / 4)), ex_var(L, &c4));
            for (i = 0; i < 4; i++) {
                Expr *ix = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, g, ex_int(L, 3)), ex_var(L, &colv)), ex_int(L, 4)),
                                  ex_int(L, m4q_pos(i)));
                map[c->raxes[last].var] = ex_add(L, ex_mul(L, ex_var(L, &c4), ex_int(L, 4)), ex_int(L, i));
                quad->body[i] = st_store(L, xc, ix, ex_cast(L, DT_INT16, lq_subst(L, data, map, NULL)));
            }
            im = st_for(L, &c4, quad);
            {
                /* four contiguous bytes of x per step: one word, two SXTB16
                 * (emit_c/emit_arm.c) */
                const Expr *ld = data->kind == EX_SELECT ? data->b->a : data->a;
                if (m4q_unit(ld->a, c->raxes[last].var)) {
                    im->for_kind = FOR_TENSORIZE;
                    im->tz = TZ_M4Q_WIDEN4;
                }
            }
            for (i = last - 1; i >= 0; i--)
                im = st_for(L, &rv[i], im);
        } else {
            Expr *kk = ex_int(L, 0), *ix;
            for (i = 0; i <= last; i++) {
                kk = ex_add(L, ex_mul(L, kk, ex_int(L, c->raxes[i].extent)), ex_var(L, &rv[i]));
                map[c->raxes[i].var] = ex_var(L, &rv[i]);
            }
            /* (kk/4*3 + col)*4 + pos(kk%4), pos(j) = (j%2)*2 + j/2 */
            ix = ex_add(L,
                        ex_mul(L, ex_add(L, ex_mul(L, ex_binary(L, BIN_DIV, kk, ex_int(L, 4)), ex_int(L, 3)),
                                         ex_var(L, &colv)),
                               ex_int(L, 4)),
                        ex_add(L, ex_mul(L, ex_binary(L, BIN_MOD, kk, ex_int(L, 2)), ex_int(L, 2)),
                               ex_binary(L, BIN_DIV, ex_binary(L, BIN_MOD, kk, ex_int(L, 4)), ex_int(L, 2))));
            im = st_store(L, xc, ix, ex_cast(L, DT_INT16, lq_subst(L, data, map, NULL)));
            if (K <= M4Q_UNROLL_BYTEWISE) {
                /* a short reduction (a first conv's 27 or 40 points): every
                 * point its own store, destination and window offsets
                 * constants (the divisions above folded) */
                Stmt *all = st_seq(L, (int)K), *fast = NULL;
                int64_t kk2, rc[TVMCC_MAX_RANK + 1];
                const Expr *ld = data->kind == EX_SELECT && data->b->kind == EX_CAST ? data->b->a : NULL;
                Expr *base = NULL;
                if (ld && ld->kind == EX_LOAD) {
                    /* inside the window: x[base + sum r_i * rc_i], base the
                     * unclamped index at r = 0 */
                    Expr *u = m4q_unclamp(L, ld->a);
                    int ok = 1;
                    for (i = 0; i <= last; i++) {
                        rc[i] = lq_coef(u, c->raxes[i].var, &ok);
                        map[c->raxes[i].var] = ex_int(L, 0);
                    }
                    if (ok) {
                        base = lq_subst(L, u, map, NULL);
                        fast = st_seq(L, (int)K);
                    }
                }
                for (kk2 = 0; kk2 < K; kk2++) {
                    int64_t rest = kk2, off = 0;
                    Expr *ix2 = ex_add(L, ex_mul(L, ex_add(L, ex_int(L, kk2 / 4 * 3), ex_var(L, &colv)), ex_int(L, 4)),
                                       ex_int(L, m4q_pos(kk2 % 4)));
                    for (i = last; i >= 0; i--) {
                        map[c->raxes[i].var] = ex_int(L, rest % c->raxes[i].extent);
                        off += rest % c->raxes[i].extent * (fast ? rc[i] : 0);
                        rest /= c->raxes[i].extent;
                    }
                    all->body[kk2] = st_store(L, xc, ix2, ex_cast(L, DT_INT16, lq_subst(L, data, map, NULL)));
                    if (fast)
                        fast->body[kk2] = st_store(L, xc, ix2,
                                                   ex_cast(L, DT_INT16, ex_cast(L, data->b->dtype,
                                                                                ex_load(L, ld->buf, ex_add(L, base, ex_int(L, off))))));
                }
                im = fast ? m4q_interior(L, all, fast) : all;
            } else {
                for (i = last; i >= 0; i--)
                    im = st_for(L, &rv[i], im);
            }
        }
        im = st_for(L, &colv, im);
        im->for_kind = FOR_UNROLL;
        if (KG * 4 > K) {
            /* the reduce points past K: 0 in every column, once */
            IterVar zc = lower_itervar(L, "col", 3), zj = lower_itervar(L, "j", KG * 4 - K);
            Expr *kk = ex_add(L, ex_var(L, &zj), ex_int(L, K));
            Expr *ix = ex_add(L,
                              ex_mul(L, ex_add(L, ex_mul(L, ex_int(L, KG - 1), ex_int(L, 3)), ex_var(L, &zc)),
                                     ex_int(L, 4)),
                              ex_add(L, ex_mul(L, ex_binary(L, BIN_MOD, kk, ex_int(L, 2)), ex_int(L, 2)),
                                     ex_binary(L, BIN_DIV, ex_binary(L, BIN_MOD, kk, ex_int(L, 4)), ex_int(L, 2))));
            zero = st_for(L, &zc, st_for(L, &zj, st_store(L, xc, ix, ex_const_int(L, DT_INT16, 0))));
        }

        /* the tile: for each pair of channels, acc = init, then the groups */
        prv = lower_itervar(L, "pr", NP);
        rrv = lower_itervar(L, "rr", 2);
        ccv = lower_itervar(L, "cc", 3);
        gv = lower_itervar(L, "g", KG);
        hv = lower_itervar(L, "h", 4);
        {
            Expr *row = ex_add(L, ex_mul(L, ex_var(L, &prv), ex_int(L, 2)), ex_var(L, &rrv));
            Expr *ai = ex_add(L, ex_mul(L, row, ex_int(L, 3)), ex_var(L, &ccv));
            Expr *xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &gv), ex_int(L, 3)), ex_var(L, &ccv)),
                                        ex_int(L, 4)),
                              ex_var(L, &hv));
            Expr *wi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &prv), ex_int(L, KG)), ex_var(L, &gv)),
                                        ex_int(L, 2)),
                              ex_var(L, &rrv));
            /* the weight byte at position h: byte pos(h) of the word */
            Expr *sh = ex_mul(L,
                              ex_add(L, ex_mul(L, ex_binary(L, BIN_MOD, ex_var(L, &hv), ex_int(L, 2)), ex_int(L, 2)),
                                     ex_binary(L, BIN_DIV, ex_var(L, &hv), ex_int(L, 2))),
                              ex_int(L, 8));
            Expr *wv = ex_cast(L, DT_INT32,
                               ex_cast(L, DT_INT8,
                                       ex_binary(L, BIN_SHR, ex_cast(L, DT_UINT32, ex_load(L, wp, wi)),
                                                 ex_cast(L, DT_UINT32, sh))));
            Expr *prod = ex_mul(L, ex_cast(L, DT_INT32, ex_load(L, xc, xi)), wv);
            Stmt *init = st_store(L, acc, ai, ex_load(L, ib, row));
            Stmt *upd = st_store(L, acc, ai, ex_add(L, ex_load(L, acc, ai), prod));
            init = st_for(L, &rrv, st_for(L, &ccv, init));
            upd = st_for(L, &gv, st_for(L, &rrv, st_for(L, &ccv, st_for(L, &hv, upd))));
            s = st_seq(L, 2);
            s->body[0] = init;
            s->body[1] = upd;
            mm = st_for(L, &prv, s);
            mm->for_kind = FOR_TENSORIZE;
            mm->tz = TZ_M4Q_2X3;
        }

    }
    /* epilogue: out = post(acc) per channel, the tile's columns unrolled
     * (each an index of constants and pt); the full tiles in a loop, a
     * last partial one after it with its real columns only */
    cov2 = lower_itervar(L, "co", Co);
    col2 = lower_itervar(L, "col", 3);
    {
        Expr *q2 = ex_add(L, ex_mul(L, ex_var(L, &ptv), ex_int(L, 3)), ex_var(L, &col2));
        Expr *ai = ex_add(L, ex_mul(L, ex_var(L, &cov2), ex_int(L, 3)), ex_var(L, &col2));
        Expr *index;
        Stmt *es, *cols;
        int64_t Tf = P / 3, rem = P - 3 * Tf, n;
        for (i = 0; i < c->n_axes; i++)
            map[c->axes[i].var] = i == coi ? ex_var(L, &cov2)
                                           : ex_binary(L, BIN_MOD, ex_binary(L, BIN_DIV, q2, ex_int(L, stride[i])),
                                                       ex_int(L, c->axes[i].extent));
        index = lower_out_index(L, c);
        es = st_store(L, c->out_buf, lq_subst(L, index, map, NULL),
                      c->post ? lq_subst(L, c->post, map, ex_load(L, acc, ai)) : ex_load(L, acc, ai));
        s = st_seq(L, 2);
        for (n = 0; n < 2; n++) {
            int64_t ncol = n == 0 ? 3 : rem, j;
            Stmt *tile;
            if (n == 0 ? Tf == 0 : rem == 0) {
                s->body[n] = st_seq(L, 0);
                continue;
            }
            cols = st_seq(L, (int)ncol);
            for (j = 0; j < ncol; j++)
                cols->body[j] = lq_stmt_subst_var(L, es, col2.var, ex_int(L, j));
            tile = st_seq(L, 3);
            tile->body[0] = im;
            tile->body[1] = mm;
            tile->body[2] = st_for(L, &cov2, cols);
            if (n == 0) {
                IterVar full = ptv;
                full.extent = Tf;
                s->body[0] = st_for(L, &full, tile);
            } else {
                s->body[1] = lq_stmt_subst_var(L, tile, ptv.var, ex_int(L, Tf));
            }
        }
    }
    if (zero) {
        Stmt *b = st_seq(L, 2);
        b->body[0] = zero;
        b->body[1] = s;
        s = b;
    }
    m4q_set_nest(k, c, s);
    return 0;
}

/* ---- depthwise 3 x 3 ----
 *
 * An NHWC depthwise conv (one input channel per output channel, a 3 x 3
 * window, stride 1 or 2, no dilation): per image and channel, the plane
 * widened to int16 with its padding (the zero point) into xw[Hp][Wp] (Wp
 * even, one column of slack), then per output row (FOR_TENSORIZE,
 * Stmt.tz = TZ_M4Q_DW3) the row's sums into acc[OW] and the epilogue
 * post(acc) per position. emit_c/emit_arm.c prints the sums with the
 * channel's nine weights paired once per plane, (w0,w1) and (w1,w2) per
 * kernel row, and per kernel row one word load of two int16 columns each:
 * with stride 1, two outputs from the words (c0,c1) and (c2,c3):
 *   out0 = SMLAD((c0,c1), (w0,w1)) + SMLABT((c2,c3), (w1,w2))
 *   out1 = SMLATB((c0,c1), (w0,w1)) + SMLAD((c2,c3), (w1,w2))
 * (18 MACs in 12 multiply-accumulates and 6 loads); with stride 2, one
 * output per pair of words. The weights are repacked into wq[c][kh][kw]
 * (the same bytes), init[c] evaluated at compile time. */
int tpl_qdw_m4(Lower *L, Compute *c)
{
    Kernel *k = L->k;
    const Expr *data, *wl, *xl;
    const ConvWindow *win = c->window;
    LqAffine aw;
    int vars[8], wq, ib, xw, acc;
    int64_t N, C, OH, OW, H, W, S, Hp, Wp, zx = 0, wco, wkh, wkw;
    const int8_t *wsrc;
    const Buffer *wb;
    int8_t *wdst;
    int32_t *idst;
    IterVar nv, cv, ohv, owv, khv, kwv, ow2;
    Expr **map;
    Stmt *widen, *fill, *row, *epi, *s;

    if (c->rop != RED_SUM || !win || win->nsp != 2 || c->n_axes != 4 || c->n_raxes != 3 || !c->body ||
        c->body->kind != EX_BINARY || c->body->op != BIN_MUL || c->body->dtype != DT_INT32 || !L->g)
        return 1;
    if (m4q_operands(L, c, &data, &wl))
        return 1;
    if (data->kind == EX_SELECT) {
        zx = data->c->ival;
        data = data->b;
    }
    xl = data->a;
    N = c->axes[0].extent;
    OH = c->axes[1].extent;
    OW = c->axes[2].extent;
    C = c->axes[3].extent;
    /* NHWC, the window 3 x 3, the reduce channel of extent 1 */
    if (xl->nidx != 4 || !xl->dims || xl->dims[0] != N || xl->dims[3] != C || win->group != C || C < 2 ||
        c->raxes[0].extent != 3 || c->raxes[1].extent != 3 || c->raxes[2].extent != 1 || win->kernel[0] != 3 ||
        win->kernel[1] != 3 || win->dilations[0] != 1 || win->dilations[1] != 1 ||
        win->strides[0] != win->strides[1] || (win->strides[0] != 1 && win->strides[0] != 2) ||
        win->out[0] != OH || win->out[1] != OW)
        return 1;
    {
        /* x[n][oh*s + kh - pt][ow*s + kw - pl][c] */
        LqAffine a3;
        int cv3[2];
        cv3[0] = c->axes[3].var;
        cv3[1] = c->raxes[2].var; /* of extent 1 */
        if (!lq_affine(xl->idx[3], &a3) || a3.c0 || !lq_aff_only(&a3, cv3, 2) || lq_aff_coef(&a3, cv3[0]) != 1)
            return 1;
        if (!lq_uses_var(xl->idx[1], c->axes[1].var) || !lq_uses_var(xl->idx[1], c->raxes[0].var) ||
            !lq_uses_var(xl->idx[2], c->axes[2].var) || !lq_uses_var(xl->idx[2], c->raxes[1].var))
            return 1;
    }
    H = xl->dims[1];
    W = xl->dims[2];
    S = win->strides[0];
    Hp = (OH - 1) * S + 3;
    Wp = ((OW - 1) * S + 3 + 1 + 1) / 2 * 2;
    if (win->pad_begin[0] < 0 || win->pad_begin[1] < 0 || Hp * Wp > (1 << 20))
        return 1;
    /* weights: affine in (c, kh, kw) */
    if (!lq_affine(wl->a, &aw))
        return 1;
    vars[0] = c->axes[3].var;
    vars[1] = c->raxes[0].var;
    vars[2] = c->raxes[1].var;
    vars[3] = c->raxes[2].var;
    if (!lq_aff_only(&aw, vars, 4))
        return 1;
    wco = lq_aff_coef(&aw, vars[0]);
    wkh = lq_aff_coef(&aw, vars[1]);
    wkw = lq_aff_coef(&aw, vars[2]);
    wb = &k->bufs[wl->buf];
    wsrc = L->g->values[wb->value].data;
    wdst = lower_alloc(L, (size_t)(C * 9));
    {
        int64_t ch, a, b;
        for (ch = 0; ch < C; ch++)
            for (a = 0; a < 3; a++)
                for (b = 0; b < 3; b++) {
                    int64_t off = aw.c0 + ch * wco + a * wkh + b * wkw;
                    if (off < 0 || off >= wb->numel)
                        return 1;
                    wdst[(ch * 3 + a) * 3 + b] = wsrc[off];
                }
    }
    idst = lower_alloc(L, (size_t)C * sizeof *idst);
    if (m4q_eval_init(L, c, c->axes[3].var, C, idst))
        return 1;
    wq = tpl_new_const(L, "m4dw_w", DT_INT8, C * 9, wdst);
    ib = tpl_new_const(L, "m4dw_init", DT_INT32, C, idst);
    xw = lower_buf_temp(L, "xw", DT_INT16, Hp * Wp);
    acc = lower_buf_temp(L, "acc", DT_INT32, OW + 1);

    nv = lower_itervar(L, "n", N);
    cv = lower_itervar(L, "c", C);
    ohv = lower_itervar(L, "oh", OH);
    owv = lower_itervar(L, "ow", OW);
    ow2 = lower_itervar(L, "ow", OW);
    khv = lower_itervar(L, "kh", 3);
    kwv = lower_itervar(L, "kw", 3);
    /* the plane: the zero point everywhere once (the padding, which no
     * channel overwrites), then per channel its H x W values at
     * xw[ih + pt][iw + pl] (rows and columns past the image but inside the
     * plane, read by no window, are left out) */
    {
        IterVar zv = lower_itervar(L, "z", Hp * Wp), hv = lower_itervar(L, "ih", H), wv = lower_itervar(L, "iw", W);
        int64_t h1 = H < Hp - win->pad_begin[0] ? H : Hp - win->pad_begin[0];
        int64_t w1 = W < Wp - win->pad_begin[1] ? W : Wp - win->pad_begin[1];
        Expr *xi, *xo;
        hv.extent = h1;
        wv.extent = w1;
        fill = st_for(L, &zv, st_store(L, xw, ex_var(L, &zv), ex_const_int(L, DT_INT16, zx)));
        xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &nv), ex_int(L, H)), ex_var(L, &hv)),
                                                  ex_int(L, W)),
                                        ex_var(L, &wv)),
                              ex_int(L, C)),
                    ex_var(L, &cv));
        xo = ex_add(L, ex_mul(L, ex_add(L, ex_var(L, &hv), ex_int(L, win->pad_begin[0])), ex_int(L, Wp)),
                    ex_add(L, ex_var(L, &wv), ex_int(L, win->pad_begin[1])));
        widen = st_for(L, &hv, st_for(L, &wv, st_store(L, xw, xo, ex_cast(L, DT_INT16, ex_load(L, xl->buf, xi)))));
        /* printed two columns per word store (emit_c/emit_arm.c) */
        widen->for_kind = FOR_TENSORIZE;
        widen->tz = TZ_M4Q_PLANE;
        widen->tz_arg[0] = win->pad_begin[1];
        widen->tz_arg[1] = C;
        widen->tz_arg[2] = zx;
    }
    /* a row of sums: acc[ow] = init[c] + sum xw[oh*S + kh][ow*S + kw] * wq[c][kh][kw] */
    {
        Expr *xi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &ohv), ex_int(L, S)), ex_var(L, &khv)),
                                    ex_int(L, Wp)),
                          ex_add(L, ex_mul(L, ex_var(L, &owv), ex_int(L, S)), ex_var(L, &kwv)));
        Expr *wi = ex_add(L, ex_mul(L, ex_add(L, ex_mul(L, ex_var(L, &cv), ex_int(L, 3)), ex_var(L, &khv)),
                                    ex_int(L, 3)),
                          ex_var(L, &kwv));
        Expr *prod = ex_mul(L, ex_cast(L, DT_INT32, ex_load(L, xw, xi)), ex_cast(L, DT_INT32, ex_load(L, wq, wi)));
        Stmt *b = st_seq(L, 2);
        b->body[0] = st_store(L, acc, ex_var(L, &owv), ex_load(L, ib, ex_var(L, &cv)));
        b->body[1] = st_for(L, &khv, st_for(L, &kwv, st_store(L, acc, ex_var(L, &owv),
                                                                ex_add(L, ex_load(L, acc, ex_var(L, &owv)), prod))));
        row = st_for(L, &owv, b);
    }
    /* the row's epilogue */
    map = lower_alloc(L, (size_t)(k->n_vars + 1) * sizeof *map);
    map[c->axes[0].var] = ex_var(L, &nv);
    map[c->axes[1].var] = ex_var(L, &ohv);
    map[c->axes[2].var] = ex_var(L, &ow2);
    map[c->axes[3].var] = ex_var(L, &cv);
    {
        Expr *index = lower_out_index(L, c);
        Expr *a = ex_load(L, acc, ex_var(L, &ow2));
        epi = st_for(L, &ow2, st_store(L, c->out_buf, lq_subst(L, index, map, NULL),
                                       c->post ? lq_subst(L, c->post, map, a) : a));
    }
    s = st_seq(L, 2);
    s->body[0] = row;
    s->body[1] = epi;
    s = st_for(L, &ohv, s);
    s->for_kind = FOR_TENSORIZE;
    s->tz = TZ_M4Q_DW3;
    s->tz_arg[0] = S;
    s->tz_arg[1] = Wp;
    {
        Stmt *b = st_seq(L, 2);
        b->body[0] = widen;
        b->body[1] = s;
        s = st_for(L, &nv, st_for(L, &cv, b));
        b = st_seq(L, 2);
        b->body[0] = fill;
        b->body[1] = s;
        s = b;
    }
    m4q_set_nest(k, c, s);
    return 0;
}
