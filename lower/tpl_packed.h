/*
 * The packed-panel template's files share this header (nothing outside
 * lower/tpl_*.c includes it): the plan of a tile, the window of a conv,
 * and the helpers one template file uses from another.
 *
 *   tpl_packed.c  entry (template_packed), planning, knobs, weight
 *                 packing, the padded data copies, the shared update nest
 *   tpl_conv.c    dense conv: window matching, reduction blocking, the
 *                 conv tile nest (shared with tpl_nchwc.c), 1x1 positions
 *   tpl_nchwc.c   blocked-layout conv (NCHW<b>c)
 *   tpl_dwconv.c  depthwise conv
 *   tpl_matmul.c  MatMul / Gemm
 *   tpl_sum.c     plane sums (global average pooling)
 *   tpl_pool.c    max pooling (NCHW), through tpl_dwconv.c's row tiles
 *   tpl_threads.c the parallel loops (small kernels serial, even splits,
 *                 parallel copies)
 */
#ifndef TVMCC_TPL_PACKED_H
#define TVMCC_TPL_PACKED_H

#include "sched.h"
#include "knobs.h"
#include "loopq.h"

/* A tile's shape and the weight panels it reads. */
typedef struct Plan {
    int lanes, V, VL, P;
    int64_t co;         /* output channels (columns); of one group when grouped */
    int64_t ncb;        /* channel blocks of VL (of one group) */
    int64_t groups;     /* a grouped conv's groups (panels [g][cb]...), else 0 or 1 */
    int whole;          /* tpl_plan_tile: V must divide the vectors of co (a blocked grouped conv) */
    int nr;             /* reduce loops */
    int64_t rext[3];
    int64_t wco, wr[3], wc0; /* weight offset = wc0 + co*wco + sum r_i*wr[i] */
    int wbuf;           /* original constant buffer */
    int pbuf;           /* packed constant buffer */
} Plan;

/* A conv's window (tpl_conv_window), as the depthwise tiles take it. */
typedef struct Window {
    int64_t N, C, H, W, OH, OW, KH, KW, s[2], d[2], lo[2], hi[2];
} Window;

/* A plan's groups: 1 unless it tiles a grouped conv. */
static inline int64_t tpl_groups(const Plan *pl) { return pl->groups > 1 ? pl->groups : 1; }

static inline int64_t tpl_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Reduce steps ahead of the current one whose weights a conv or matmul
 * tile prefetches (32 steps: 4 KB at 32 lanes; gemm1024: 32 steps ~2.5%
 * faster than none, 8 steps ~1.7%). */
#define TILE_PREFETCH_STEPS 32

/* Fewest accumulators a conv tile one position shorter than the plan's
 * may have (tpl_conv_nchwc): more than the FMAs in flight on the FMA-bound
 * cores (4 cycles latency x 2 pipes). On Zen 3, resnet18's 56-wide 3x3
 * convs ran as fast in 5 x 16 tiles as in 6 x 16 (10 and 12
 * accumulators) and 40% slower in 4 x 16 (8). */
#define SHORT_TILE_MIN_ACCS 9

/* ---- tpl_packed.c: planning, knobs, packing, copies, the update nest ---- */
Stmt *tpl_tile(Lower *L, int acc, Expr *ai, Expr *a, Expr *b, const IterVar *rv,
               const IterVar *pv, const IterVar *vv);
int64_t tpl_weight_prefetch(const Target *t, int VL);
int tpl_regs(const Target *t);
int tpl_vmax(const Target *t);
int64_t tpl_l2_budget(const Target *t);
int tpl_pick_rows(int64_t n, int pmax);
void tpl_plan_tile(Plan *pl, const Target *t, int64_t co, int64_t rows);
TileKnobs tpl_choose_knobs(Lower *L, const Target *t, TileShape shape, const char *op, const char *desc,
                           int64_t rows, int64_t cols, int64_t K, int P, int V, int64_t G, int64_t kc);
void tpl_plan_set(Plan *pl, const TileKnobs *kn);
const char *tpl_conv_desc(Lower *L, int64_t N, int64_t C, int64_t H, int64_t W, int64_t Co, int64_t KH,
                          int64_t KW, const int64_t *s, const int64_t *d, const int64_t *lo, const int64_t *hi);
void tpl_strided_rows(Plan *pl, const Target *t, int64_t S, int64_t KW, int64_t rows);
int tpl_pack_weights(Lower *L, Plan *pl);
Stmt *tpl_update_nest(Lower *L, const Target *t, const Plan *pl, int acc, const IterVar *rv,
                      const IterVar *pv, const IterVar *vv, int abuf, Expr *aidx, Expr *cb, Expr *r1e,
                      Expr *accb);
int tpl_operands(const Lower *L, const Compute *c, const Expr **data, const Expr **weights, const Expr **cond);
Expr *tpl_init_value(Lower *L, const Compute *c, Expr *const *map);
/* A tile's body: local buffer acc declared around first; then; last (the
 * init, the tile and the epilogue, or the copy, tiles and epilogue). */
Stmt *tpl_acc_block(Lower *L, int acc, Stmt *first, Stmt *then, Stmt *last);
Stmt *tpl_store_out(Lower *L, const Compute *c, Expr *index, Expr *const *map, Expr *accv);
int tpl_f32_load(const Kernel *k, const Expr *e);
int tpl_const_load(const Lower *L, const Expr *e);
int tpl_copy_lanes(const Target *t);
Stmt *tpl_copy_phased_at(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                         int64_t Hp, int64_t S, int64_t Wj, int64_t lo0, Expr *row0, int64_t lo1, int lanes,
                         Expr *xchan, int64_t Cx, double fill);
Stmt *tpl_copy_phased(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                      int64_t Hp, int64_t S, int64_t Wj, int64_t lo0, int64_t lo1, int lanes, Expr *xchan,
                      int64_t Cx, double fill);
Stmt *tpl_copy_padded(Lower *L, int xp, int x, const IterVar *nv, int64_t Ci, int64_t H, int64_t W,
                      int64_t Hp, int64_t Wp, int64_t lo0, int64_t lo1, int lanes);
int64_t tpl_l1_budget(const Target *t);
int tpl_pack_panels(Lower *L, Plan *pl, int64_t b, int64_t e, const int64_t *co, int64_t c0);

/* ---- tpl_conv.c ---- */
/* A grouped conv's input channel index (co / mg) * cig + rc: 0 and mg,
 * cig when e is that for output channel variable co, reduce variable rc. */
int tpl_grouped_channel(const Expr *e, int co, int rc, int64_t *mg, int64_t *cig);
int tpl_flat_ok(Lower *L, const Expr *e, int oh, int ow, int64_t OW);
void tpl_conv_blocks(const Target *t, const Plan *pl, int64_t Ci, int64_t KHW, int pointwise, int64_t rows,
                     int64_t T, int64_t *kc, int64_t *G);
int tpl_window(Lower *L, const Compute *c, const Expr *xl, const Expr *cond, int r0, int64_t H, int64_t W,
               int64_t *s, int64_t *d, int64_t *lo, int64_t *hi);
int tpl_conv_window(Lower *L, const Compute *c, const Expr *xl, const Expr *cond, int64_t H, int64_t W,
                    int64_t *s, int64_t *d, int64_t *lo, int64_t *hi);
Window tpl_window_make(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH,
                       int64_t KW, const int64_t *s, const int64_t *d, const int64_t *lo, const int64_t *hi);
void tpl_conv_flat_blocks(const Target *t, const Plan *pl, int64_t Ci, int64_t KHW, int64_t *rows, int64_t *T,
                          int64_t *kc, int64_t *G);
int tpl_conv_reduce_vars(Lower *L, const Plan *pl, int64_t R, int64_t kc, int64_t G, int64_t T,
                         const IterVar *ogv, const IterVar *ohv, const IterVar *owv, IterVar *rv,
                         IterVar *rcbv, Expr **ohe, Expr **r1e, Expr **accb);
void tpl_conv_tile_nest(Lower *L, const Plan *pl, int acc, Stmt *copy, Stmt *init, Stmt *tile, Stmt *epi,
                        int blocked, Expr *ohe, int64_t OHx, int64_t G, const IterVar *nv,
                        const IterVar *cbv, const IterVar *ogv, const IterVar *ohv, const IterVar *owv,
                        const IterVar *rcbv);
/* *depthwise set when it lowered a depthwise conv (tpl_dwconv.c) */
int tpl_conv(Lower *L, const Target *t, Compute *c, int *depthwise);

void tpl_conv_map_init(Lower *L, const Compute *c, Expr **map, int flat, int clamp, Expr *q, Expr *ohe,
                       int64_t OH, int64_t OW);
void tpl_conv_map_out(Lower *L, const Compute *c, Expr **map, int flat, Expr *q, int64_t OW);

/* ---- the templates, each 0 when it replaced the kernel's nest, 1 when
 * the stage is not its shape (nest untouched) ---- */
int tpl_conv_nchwc(Lower *L, const Target *t, Compute *c);
/* pl NULL: a max pool (tpl_pool.c), the window's maximum instead of its
 * weighted sum */
int tpl_conv_depthwise(Lower *L, const Target *t, Compute *c, const Plan *pl, int xbuf, const Window *w);
int tpl_maxpool(Lower *L, const Target *t, Compute *c);
int tpl_dwconv_nchwc(Lower *L, const Target *t, Compute *c);
Stmt *tpl_vec_fma_tile(Lower *L, int acc, Expr *ai, Expr *a, Expr *b, const IterVar *rv, const IterVar *pv,
                       const IterVar *vv, int lanes);
Stmt *tpl_max_tile(Lower *L, int acc, Expr *ai, Expr *b, const IterVar *rv, const IterVar *pv, const IterVar *vv,
                   int V, int lanes, int plain);
Stmt *tpl_nan_guard(Lower *L, int xp, int64_t n, int lanes, Stmt *exact, Stmt *fast);
int tpl_matmul(Lower *L, const Target *t, Compute *c);
int tpl_plane_sum(Lower *L, const Target *t, Compute *c);

/* ---- tpl_threads.c: the parallel loops ---- */
void tpl_serial_all(Stmt *s);
/* whether the kernel is too small for a parallel region */
int tpl_small_kernel(const Lower *L, int depthwise);
/* after a template: small kernels serial, the parallel loop widened to
 * enough even iterations, large input copies parallel */
void tpl_threads(Lower *L, const Target *t, int depthwise);
/* the same for a kernel of `work` operations costing a depthwise conv's
 * multiply-add each (a max pool's taps) */
void tpl_threads_work(Lower *L, const Target *t, int64_t work);
/* The element operations of a stage: its output and reduce extents'
 * product. */
int64_t tpl_stage_work(const Compute *c);
/* New rank-1 graph constant WHAT_KERNEL of n elements of type t holding
 * data (tpl_qconv.c): a buffer of the kernel. */
int tpl_new_const(Lower *L, const char *what, DType t, int64_t n, void *data);
/* The operands of an int8 sum (tpl_qconv.c): data int32(8-bit load) under
 * an optional padding select (its load, condition, constant), weights
 * int32(load of an int8 constant with data); nonzero when not. */
int tpl_q_data(const Kernel *k, const Expr *e, const Expr **load, const Expr **cond, int64_t *zx);
int tpl_q_weights(const Lower *L, const Expr *e, const Expr **load);
/* Whether e is a function of var reading constants only (tpl_qconv.c). */
int tpl_const_of(const Lower *L, const Expr *e, int var, int index_var);
/* out[i] = f(iv = i) of type t through the interpreter (tpl_qconv.c). */
int tpl_eval_over(Lower *L, const IterVar *iv, Expr *f, DType t, const char *name, void *out);
/* tpl_qconv_m4.c: int8 conv / matrix product (Arm cores with DSP) */
int tpl_qconv_m4(Lower *L, Compute *c, int mve);
int tpl_qdw_m4(Lower *L, Compute *c);
/* The requantizations of op_quant.c's requant_int in e rewritten on the
 * high word of a product, for the Armv7E-M printers (shifts 33..62: the
 * sum's; below 32: a quantized Add / Mul / rescale's); e itself when it
 * has none. An LqRewrite (ctx unused). */
Expr *m4q_requant_all(Lower *L, const Expr *e, void *ctx);
/* tpl_qconv.c: int8 conv (x86 targets) */
int tpl_qconv(Lower *L, const Target *t, Compute *c);

#endif
