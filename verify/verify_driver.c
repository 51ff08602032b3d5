/*
 * The program `tvmcc verify` builds around a model compiled with --name
 * model (embedded in tvmcc, written into its temporary directory):
 *
 *     driver IN_DIR OUT_DIR [RUNS]
 *
 * reads IN_DIR/input_K.bin (the dense bytes of graph input K, exactly
 * MODEL_INPUT_BYTES[K] of them; for a string input its strings, each
 * followed by NUL), runs model_run RUNS times (default 1) on
 * the static arena and writes OUT_DIR/output_K.bin and OUT_DIR/measure.txt:
 *
 *     unit ns|instructions
 *     runs N
 *     total V          mean per run of model_run
 *     kernel I V       with VERIFY_KERNELS: mean per run of kernel I
 *
 * The clock: clock_gettime on hosted targets (VERIFY_CLOCK_POSIX, ns);
 * on Cortex-M under qemu -icount shift=0 (VERIFY_CLOCK_SYSTICK) SysTick
 * counts the core clock, and qemu advances its clock 1 ns per instruction,
 * so a tick is VERIFY_TICK_INSNS instructions (unit instructions).
 * VERIFY_KERNELS (the number of kernels in NAME.json) turns on the
 * per-kernel hooks of model.c (TVMCC_KERNEL_BEGIN/END, defined by the
 * verify_hooks.h that the build force-includes).
 *
 * Only stdio and malloc, so the same file builds for Linux and for
 * Cortex-M with newlib and semihosting. Exit status: 0 ok, 1 model or data
 * error, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define MODEL_IO_PROG "driver"
#define MODEL_IO_STRINGS
#include "model_io.h"

static const unsigned long input_bytes[] = MODEL_INPUT_BYTES;
static const unsigned long output_bytes[] = MODEL_OUTPUT_BYTES;
static const char *const input_dtypes[] = MODEL_INPUT_DTYPES;
static const char *const output_dtypes[] = MODEL_OUTPUT_DTYPES;

#if defined(VERIFY_CLOCK_POSIX)
#include <time.h>
#define VERIFY_UNIT "ns"
static void clock_start(void)
{
}

static unsigned long long clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}
#elif defined(VERIFY_CLOCK_SYSTICK)
#define VERIFY_UNIT "instructions"
#define SYST_CSR (*(volatile unsigned long *)0xE000E010u)
#define SYST_RVR (*(volatile unsigned long *)0xE000E014u)
#define SYST_CVR (*(volatile unsigned long *)0xE000E018u)
#define SYST_MAX 0x00FFFFFFul

static volatile unsigned long systick_wraps;

/* overrides the start-up file's weak handler: counts the counter's wraps */
void systick_handler(void);
void systick_handler(void)
{
    systick_wraps++;
}

static void clock_start(void)
{
    SYST_RVR = SYST_MAX;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* enable, interrupt on wrap, core clock */
    while (SYST_CVR == 0) /* until the first reload */
        ;
}

static unsigned long long clock_now(void)
{
    unsigned long w, v;
    do {
        w = systick_wraps;
        v = SYST_CVR;
    } while (w != systick_wraps);
    return ((unsigned long long)w * (SYST_MAX + 1u) + (SYST_MAX - v)) * VERIFY_TICK_INSNS;
}
#else
#error "define VERIFY_CLOCK_POSIX or VERIFY_CLOCK_SYSTICK"
#endif

#ifdef VERIFY_CLOCK_SYSTICK
/* Entered right before the first timed run and right after the last: the
 * cycle estimator tvmcc verify loads into qemu (m4est, -plugin) takes a
 * snapshot of its counters at the entry of each. */
void verify_mark_begin(void) __attribute__((noinline));
void verify_mark_end(void) __attribute__((noinline));
volatile unsigned verify_mark_last;
void verify_mark_begin(void)
{
    verify_mark_last = 1u;
}
void verify_mark_end(void)
{
    verify_mark_last = 2u;
}
#define MARK_BEGIN() verify_mark_begin()
#define MARK_END() verify_mark_end()
#else
#define MARK_BEGIN() ((void)0)
#define MARK_END() ((void)0)
#endif

#ifdef VERIFY_KERNELS
static unsigned long long kernel_sum[VERIFY_KERNELS], kernel_t0;

void verify_kernel_begin(int i);
void verify_kernel_end(int i);

void verify_kernel_begin(int i)
{
    (void)i;
    kernel_t0 = clock_now();
}

void verify_kernel_end(int i)
{
    if (i >= 0 && i < VERIFY_KERNELS)
        kernel_sum[i] += clock_now() - kernel_t0;
}
#endif

/* dir/stem_K.bin; NULL when it does not fit */
static const char *file_name(char *buf, size_t cap, const char *dir, const char *stem, int k)
{
    int n = sprintf(buf, "%.*s/%s_%d.bin", (int)(cap > 40 ? cap - 40 : 0), dir, stem, k);
    return n > 0 && (size_t)n < cap ? buf : NULL;
}

int main(int argc, char **argv)
{
    /* +1 keeps the arrays legal when a model has no inputs */
    const void *inputs[MODEL_NUM_INPUTS + 1] = { 0 };
    void *outputs[MODEL_NUM_OUTPUTS + 1] = { 0 };
    char path[1024];
    unsigned long long t0, total;
    long runs = 1, r;
    FILE *f;
    int i, rc;

    if (argc == 4) {
        char *end;
        runs = strtol(argv[3], &end, 10);
        if (*end || runs < 1)
            argc = 0;
    }
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: driver IN_DIR OUT_DIR [RUNS]\n");
        return 2;
    }
    for (i = 0; i < MODEL_NUM_INPUTS; i++) {
        void *buf = alloc_aligned(input_bytes[i]);
        if (!buf || !file_name(path, sizeof path, argv[1], "input", i)) {
            fprintf(stderr, "driver: out of memory for input %d\n", i);
            return 1;
        }
        if (strcmp(input_dtypes[i], "string") == 0 ?
                read_strings(path, &buf, input_bytes[i] / sizeof(const char *)) :
                read_file(path, buf, input_bytes[i]))
            return 1;
        inputs[i] = buf;
    }
    for (i = 0; i < MODEL_NUM_OUTPUTS; i++) {
        if (!(outputs[i] = alloc_aligned(output_bytes[i]))) {
            fprintf(stderr, "driver: out of memory for output %d\n", i);
            return 1;
        }
        memset(outputs[i], 0xA5, (size_t)output_bytes[i]);
    }
    clock_start();
    t0 = clock_now();
    MARK_BEGIN();
    for (r = 0; r < runs; r++) {
        rc = model_run(inputs, outputs, NULL);
        if (rc != 0) {
            fprintf(stderr, "driver: model_run failed with status %d\n", rc);
            return 1;
        }
    }
    MARK_END();
    total = clock_now() - t0;
    for (i = 0; i < MODEL_NUM_OUTPUTS; i++)
        if (!file_name(path, sizeof path, argv[2], "output", i) ||
            (strcmp(output_dtypes[i], "string") == 0 ?
                 write_strings(path, outputs[i], output_bytes[i] / sizeof(const char *)) :
                 write_file(path, outputs[i], output_bytes[i])))
            return 1;
    sprintf(path, "%.900s/measure.txt", argv[2]);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "driver: cannot create %s\n", path);
        return 1;
    }
    fprintf(f, "unit %s\nruns %ld\ntotal %llu\n", VERIFY_UNIT, runs,
            total / (unsigned long long)runs);
#ifdef VERIFY_KERNELS
    for (i = 0; i < VERIFY_KERNELS; i++)
        fprintf(f, "kernel %d %llu\n", i, kernel_sum[i] / (unsigned long long)runs);
#endif
    if (fclose(f) != 0) {
        fprintf(stderr, "driver: cannot write %s\n", path);
        return 1;
    }
    return 0;
}
