/*
 * The parallel loops of the packed templates (issue 19: two threads).
 *
 * Each template (tpl_conv.c, tpl_nchwc.c, tpl_dwconv.c, tpl_matmul.c)
 * marks one loop of its tile nest FOR_PARALLEL: the emitted C prints it as
 * `#pragma omp parallel for` under `#ifdef _OPENMP`, so a build without
 * OpenMP is single-threaded and unchanged. After the template, this pass
 * decides for the whole kernel:
 *
 *   - small kernels run serially: a parallel region costs microseconds
 *     (the threads' wake-up and the barrier at its end), more than half of
 *     a kernel of a few tens of microseconds;
 *   - the parallel loop gets enough even iterations: a loop of few
 *     iterations, or an odd number, leaves one thread idle for a share of
 *     the kernel (5 position blocks of mobilenet_v2's 14x14 1x1 convs: 3
 *     and 2 per thread, 1.2 times faster instead of 2). Such a loop is
 *     fused with the loop directly inside it (sched_fuse: one loop over
 *     both, each iteration the same work as before, in the same order);
 *   - the data copy that runs before the tiles (the zero-padded input of
 *     the conv tiles, tpl_copy_phased) gets a parallel loop of its own when
 *     it is large: serial, it was a tenth of a 2-thread conv's time
 *     (resnet18's stride-2 1x1 downsample convs did not get faster at all).
 *     The copy's rows are independent; the region's end is the barrier
 *     after which the tiles read them.
 *
 * The results do not change: a parallel loop's iterations write disjoint
 * elements (sched_parallel checks it), and each element is computed by one
 * thread in the same order as by one thread alone, so the 2-thread output
 * equals the 1-thread output bit for bit (test/threads checks it).
 */
#include "tpl_packed.h"
#include "sched.h"

/* Kernels with fewer multiply-accumulates run their tile loops serially
 * even when built with OpenMP. A depthwise kernel does one FMA per loaded
 * vector and copies its input: its channels are worth a parallel region
 * from 16 times fewer (mobilenet_v2's 14x14 and 7x7 ones, 0.25-1.4 M,
 * take 30-60 us on one thread). */
#define PARALLEL_MIN_MACS ((int64_t)1 << 21)
#define DW_PARALLEL_MIN_MACS (PARALLEL_MIN_MACS / 16)

/* Weights from which a kernel under PARALLEL_MIN_MACS still gets a
 * parallel loop: a matrix-vector product (the classifier's Gemm) streams
 * its weights from memory, and two cores fetch them faster than one
 * (shufflenet_v2's 1024 x 1000: 134 us on one thread). */
#define PARALLEL_MIN_WEIGHTS ((int64_t)1 << 18)

/* Element operations (stores and loads of reductions) below which a kernel
 * of template_generic runs serially (x86): a parallel region costs a few
 * microseconds on a quiet machine and more where other processes share
 * the cores; a 116 x 28 x 28 Concat (90 K elements, 29 us) took 45 us on
 * two threads, a 7x7 global average pool 9 us and 20 us. */
#define GENERIC_PARALLEL_MIN ((int64_t)1 << 17)

/* Iterations a parallel loop should have: at least PAR_MIN_ITERS, and an
 * even number below PAR_EVEN_ITERS (an odd count n leaves one thread of
 * two idle for 1/(n+1) of the loop). */
#define PAR_MIN_ITERS 4
#define PAR_EVEN_ITERS 32

/* Elements a copy before the tiles stores before it gets a parallel loop
 * of its own (128 KB of floats: a few microseconds on one thread). */
#define COPY_PARALLEL_MIN ((int64_t)1 << 17)

/* A parallel loop hands its iterations out in chunks of consecutive
 * iterations: chunks of at least CHUNK_MIN_WORK stores (a multiply-add of
 * a tile counts one), but no fewer than PAR_MIN_CHUNKS of them (the last
 * chunk a thread takes is what the other may wait for); in practice
 * PAR_MIN_CHUNKS chunks unless an iteration is a large tile of its own.
 * One iteration at a time, regnet_x_400mf's 1x1 conv over 32 channels at
 * 112 x 112 (5018 iterations of 320 multiply-adds) ran slower on two
 * threads than on one (325 against 278 us): every iteration an atomic
 * increment of the shared counter, neighbouring iterations' outputs
 * sharing cache lines across the cores. Medians at two threads on Zen 3
 * (bench/ab.sh, THREADS=2), against one at a time: mobilenet_v2 about 0.80,
 * shufflenet_v2 0.86, efficientnet_b0 0.91, regnet_x_400mf 0.93,
 * resnet18, googlenet, squeezenet1_1 0.98; chunks of 64K stores instead
 * (more chunks) 1-4% slower than these, 8 or 32 chunks within 1%. */
#define CHUNK_MIN_WORK ((int64_t)1 << 20)
#define PAR_MIN_CHUNKS 16

void tpl_serial_all(Stmt *s)
{
    int i;
    if (!s)
        return;
    if (s->kind == ST_FOR && s->for_kind == FOR_PARALLEL)
        s->for_kind = FOR_SERIAL;
    for (i = 0; i < s->n_body; i++)
        tpl_serial_all(s->body[i]);
}

/* Floats of the kernel's constants (weights). */
static int64_t const_numel(const Kernel *k)
{
    int64_t n = 0;
    int i;
    for (i = 0; i < k->n_bufs; i++)
        if (k->bufs[i].scope == BUF_CONST)
            n += k->bufs[i].numel;
    return n;
}

/* A MatMul that multiplies a WinogradInput's transformed values: one of
 * the 16 products of one Winograd conv (passes/winograd.c). */
static int winograd_product(const Lower *L)
{
    const Node *n;
    int32_t p;
    if (!L->g || L->k->n_nodes != 1)
        return 0;
    n = &L->g->nodes[L->k->nodes[0]];
    if (n->op != OP_MatMul || n->n_in < 1 || n->in[0] < 0)
        return 0;
    p = L->g->values[n->in[0]].producer;
    return p >= 0 && L->g->nodes[p].op == OP_WinogradInput;
}

int tpl_small_kernel(const Lower *L, int depthwise)
{
    int64_t macs = L->k->macs;
    /* a Winograd conv's products are small one by one (squeezenet1_1's
     * 196 x 32 x 128: 0.8 M, 25 us on one thread) but are its whole work;
     * counted as the 16 together they run on both threads, 12-13 us each
     * plus the region. Paired medians at two threads, Intel family 6 model
     * 207, AVX2: squeezenet1_1 0.963, googlenet 0.931, resnet18 (all its
     * products already parallel) 1.005. */
    if (winograd_product(L))
        macs *= 16;
    if (macs >= (depthwise ? DW_PARALLEL_MIN_MACS : PARALLEL_MIN_MACS))
        return 0;
    return const_numel(L->k) < PARALLEL_MIN_WEIGHTS;
}

int64_t tpl_stage_work(const Compute *c)
{
    int64_t n = 1;
    int j;
    for (j = 0; j < c->n_axes; j++)
        n *= c->axes[j].extent;
    for (j = 0; j < c->n_raxes; j++)
        n *= c->raxes[j].extent;
    return n;
}

void template_serial_small(Lower *L, const Target *t)
{
    const Kernel *k = L->k;
    int64_t work = 0;
    int i;
    if (!t || !t->fma_tile)
        return;
    for (i = 0; i < k->n_stages; i++)
        if (k->bufs[k->stages[i].out_buf].scope != BUF_UNUSED)
            work += tpl_stage_work(&k->stages[i]);
    if (work < GENERIC_PARALLEL_MIN)
        tpl_serial_all(k->body);
}

/* The first parallel loop under *slot (depth first). */
static Stmt **find_parallel(Stmt **slot)
{
    Stmt *s = *slot;
    int i;
    if (!s)
        return NULL;
    if (s->kind == ST_FOR && s->for_kind == FOR_PARALLEL)
        return slot;
    for (i = 0; i < s->n_body; i++) {
        Stmt **r = find_parallel(&s->body[i]);
        if (r)
            return r;
    }
    return NULL;
}

/* Elements stored by one execution of s (an if counts its larger branch). */
static int64_t stores_of(const Stmt *s)
{
    int64_t n = 0, b;
    int i;
    if (!s)
        return 0;
    switch (s->kind) {
    case ST_STORE:
        return 1;
    case ST_FOR:
        return s->extent * stores_of(s->body[0]);
    case ST_IF:
        n = stores_of(s->body[0]);
        b = s->n_body > 1 ? stores_of(s->body[1]) : 0;
        return n > b ? n : b;
    default:
        for (i = 0; i < s->n_body; i++)
            n += stores_of(s->body[i]);
        return n;
    }
}

static int few_iters(int64_t n)
{
    return n < PAR_MIN_ITERS || (n % 2 && n < PAR_EVEN_ITERS);
}

/* Fuses the loop over var with the loops directly inside it while it has
 * too few (or an odd number of) iterations; returns the variable of the
 * resulting loop. */
static int widen(Sched *s, int var)
{
    for (;;) {
        Stmt **slot = sched_find_loop(&s->L->k->body, var);
        Stmt *in;
        int f;
        if (!slot || !few_iters((*slot)->extent))
            return var;
        in = (*slot)->body[0];
        if ((*slot)->n_body != 1 || !in || in->kind != ST_FOR || in->for_kind != FOR_SERIAL ||
            sched_fuse(s, var, in->var, &f))
            return var;
        var = f;
    }
}

/* A sequence that holds the tiles' parallel loop and, before it, loops
 * without one (the copies): each large copy loop made parallel. */
static void copies_parallel(Sched *s, Stmt *st)
{
    int i, j;
    if (!st || (st->kind == ST_FOR && st->for_kind == FOR_PARALLEL))
        return;
    if (st->kind == ST_SEQ) {
        for (i = 0; i < st->n_body && !find_parallel(&st->body[i]); i++)
            ;
        if (i < st->n_body) {
            for (j = 0; j < i; j++) {
                Stmt *c = st->body[j];
                int var;
                if (!c || c->kind != ST_FOR || stores_of(c) < COPY_PARALLEL_MIN)
                    continue;
                var = widen(s, c->var);
                sched_parallel(s, var); /* refused when iterations overlap */
            }
        }
    }
    for (i = 0; i < st->n_body; i++)
        copies_parallel(s, st->body[i]);
}

/* The parallel loop widened and the copies made parallel (x86). */
static void parallel_plan(Lower *L, const Target *t)
{
    Sched s;
    Stmt **p;
    /* the portable target keeps the template's loops: its C tiles are
     * vectorized by the C compiler, which a fused loop's divisions could
     * disturb, and it is not measured with threads */
    if (t->family->portable)
        return;
    p = find_parallel(&L->k->body);
    if (!p)
        return;
    sched_init(&s, L);
    {
        int var = (*p)->var, w;
        (*p)->for_kind = FOR_SERIAL;
        w = widen(&s, var);
        p = sched_find_loop(&L->k->body, w);
        if (p)
            (*p)->for_kind = FOR_PARALLEL;
    }
    copies_parallel(&s, L->k->body);
}

void tpl_threads(Lower *L, const Target *t, int depthwise)
{
    if (tpl_small_kernel(L, depthwise)) {
        tpl_serial_all(L->k->body);
        return;
    }
    parallel_plan(L, t);
}

/* Each parallel loop under s gets its chunk: CHUNK_MIN_WORK stores'
 * worth of iterations, capped at a PAR_MIN_CHUNKS-th of the loop. */
static void chunks_of(Stmt *s)
{
    int i;
    if (!s)
        return;
    if (s->kind == ST_FOR && s->for_kind == FOR_PARALLEL) {
        int64_t per = stores_of(s->body[0]);
        int64_t c = per > 0 ? (CHUNK_MIN_WORK + per - 1) / per : 1;
        int64_t most = s->extent / PAR_MIN_CHUNKS;
        if (c > most)
            c = most;
        s->chunk = c > 1 ? c : 1;
        return; /* the loop's iterations run serially inside */
    }
    for (i = 0; i < s->n_body; i++)
        chunks_of(s->body[i]);
}

void tpl_parallel_chunks(Lower *L)
{
    chunks_of(L->k->body);
}

void tpl_threads_work(Lower *L, const Target *t, int64_t work)
{
    if (work < DW_PARALLEL_MIN_MACS) {
        tpl_serial_all(L->k->body);
        return;
    }
    parallel_plan(L, t);
}
