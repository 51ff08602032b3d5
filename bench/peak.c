/*
 * Measures this machine's fp32 FMA peak in GFLOP/s (bench/run.sh), so the GEMM
 * benchmark can report a fraction of a peak measured here rather than taken
 * from a data sheet.
 *
 *     peak [SECONDS]        (default 0.3 s per trial, best of 10 trials)
 *
 * Build with -O2 -march=native; the widest of AVX-512F / AVX2+FMA that the
 * compiler enables is used. Each thread runs a loop of independent vector
 * FMAs (enough accumulators to cover FMA latency times the number of FMA
 * ports); built with -fopenmp, OMP_NUM_THREADS threads run it at once and
 * the sum is reported. Prints: "<GFLOP/s> <isa> <threads>".
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__AVX512F__)
#define ISA "avx512"
#define LANES 16
typedef __m512 vec;
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VSUM(v) _mm512_reduce_add_ps(v)
#elif defined(__AVX2__) && defined(__FMA__)
#define ISA "avx2"
#define LANES 8
typedef __m256 vec;
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
static float vsum256(__m256 v)
{
    float t[8];
    int i;
    float s = 0.0f;
    _mm256_storeu_ps(t, v);
    for (i = 0; i < 8; i++)
        s += t[i];
    return s;
}
#define VSUM(v) vsum256(v)
#else
#error "bench/peak.c needs AVX-512F or AVX2+FMA (build with -march=native on such a CPU)"
#endif

/* Independent chains: >= 4-cycle latency x 2 FMA ports with margin, and
 * few enough that the accumulators, the multiplier and the addend stay in
 * registers: 16 of AVX-512's 32, 12 of AVX2's 16 (16 chains there spill
 * through the stack, and on AMD Zen 3 the store-to-load forwarding in the
 * chain halved the figure: 58 GFLOP/s where the convolutions ran at 80). */
#if defined(__AVX512F__)
#define CHAINS 16
#else
#define CHAINS 12
#endif
/* Vector FMAs per inner iteration = CHAINS * UNROLL. */
#define UNROLL 4

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One vector FMA on each accumulator. Written out by hand (not an array
 * and a loop) so the accumulators stay in registers at -O2. */
#define STEP12                                                                  \
    do {                                                                        \
        a0 = VFMA(a0, m, d); a1 = VFMA(a1, m, d); a2 = VFMA(a2, m, d);          \
        a3 = VFMA(a3, m, d); a4 = VFMA(a4, m, d); a5 = VFMA(a5, m, d);          \
        a6 = VFMA(a6, m, d); a7 = VFMA(a7, m, d); a8 = VFMA(a8, m, d);          \
        a9 = VFMA(a9, m, d); a10 = VFMA(a10, m, d); a11 = VFMA(a11, m, d);      \
    } while (0)
#if CHAINS == 16
#define STEP                                                                    \
    do {                                                                        \
        STEP12;                                                                 \
        a12 = VFMA(a12, m, d); a13 = VFMA(a13, m, d); a14 = VFMA(a14, m, d);    \
        a15 = VFMA(a15, m, d);                                                  \
    } while (0)
#else
#define STEP STEP12
#endif

/* Runs iters iterations of CHAINS * UNROLL vector FMAs; returns a value that
 * depends on every accumulator so nothing can be removed. */
static float fma_loop(long iters, float seed)
{
    vec m = VSET1(0.99999994f), d = VSET1(1e-7f * seed);
    vec a0 = VSET1(seed), a1 = VSET1(seed + 1), a2 = VSET1(seed + 2), a3 = VSET1(seed + 3);
    vec a4 = VSET1(seed + 4), a5 = VSET1(seed + 5), a6 = VSET1(seed + 6), a7 = VSET1(seed + 7);
    vec a8 = VSET1(seed + 8), a9 = VSET1(seed + 9), a10 = VSET1(seed + 10);
    vec a11 = VSET1(seed + 11);
#if CHAINS == 16
    vec a12 = VSET1(seed + 12), a13 = VSET1(seed + 13);
    vec a14 = VSET1(seed + 14), a15 = VSET1(seed + 15);
#endif
    long it;

    for (it = 0; it < iters; it++) {
        STEP; /* UNROLL = 4 steps per iteration */
        STEP;
        STEP;
        STEP;
    }
    a0 = VADD(VADD(VADD(a0, a1), VADD(a2, a3)), VADD(VADD(a4, a5), VADD(a6, a7)));
    a8 = VADD(VADD(a8, a9), VADD(a10, a11));
#if CHAINS == 16
    a8 = VADD(a8, VADD(VADD(a12, a13), VADD(a14, a15)));
#endif
    return VSUM(VADD(a0, a8));
}

/* GFLOP/s of one thread over about seconds, best of 10 trials. */
static double one_thread(double seconds, volatile float *sink)
{
    long iters = 1000;
    double best = 0.0;
    int trial;

    /* Calibrate the iteration count to about `seconds` per trial. */
    for (;;) {
        double t = now_s();
        *sink += fma_loop(iters, 1.0f);
        t = now_s() - t;
        if (t > seconds / 4) {
            iters = (long)((double)iters * seconds / t);
            break;
        }
        iters *= 2;
    }
    for (trial = 0; trial < 10; trial++) {
        double t = now_s(), g;
        *sink += fma_loop(iters, 1.0f + (float)trial);
        t = now_s() - t;
        g = (double)iters * UNROLL * CHAINS * LANES * 2.0 / t * 1e-9;
        if (g > best)
            best = g;
    }
    return best;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.3;
    double total = 0.0;
    int threads = 1;
    static volatile float sink[64 * 16];

    if (seconds <= 0.0)
        seconds = 0.3;
#ifdef _OPENMP
#pragma omp parallel reduction(+ : total)
    {
#pragma omp single
        threads = omp_get_num_threads();
        total += one_thread(seconds, &sink[16 * (omp_get_thread_num() % 64)]);
    }
#else
    total = one_thread(seconds, &sink[0]);
#endif
    printf("%.1f %s %d\n", total, ISA, threads);
    return 0;
}
