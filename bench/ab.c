/*
 * Paired timing of two builds of one model (bench/ab.sh): a.c and b.c
 * compiled by tvmcc with --name a and --name b, linked into one program,
 * run alternately, one run of a then one of b, so that whatever slows
 * this machine down for a while (a neighbour on the host) slows both
 * alike. A comparison of two processes, even interleaved, sees such
 * phases of a second or more land on one side only.
 *
 *     ab IN0.bin RUNS
 *
 * Reads the models' one input (A_INPUT_BYTES bytes), runs each build 3
 * times untimed, then RUNS times each, alternating; prints one line:
 * minimum, median and mean of each side, b / a for the median and the
 * mean, and whether the outputs differ (1) or are the same bytes (0).
 * Exit status: 0 ok, 1 bad input or a failed run, 2 usage.
 */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "a.h"
#include "b.h"

#if A_NUM_INPUTS != 1 || A_NUM_OUTPUTS < 1 || B_NUM_INPUTS != 1
#error "bench/ab.c times models with one input"
#endif

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void *alloc64(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 64, n ? n : 64) ? NULL : p;
}

int main(int argc, char **argv)
{
    static const unsigned long ib[] = A_INPUT_BYTES, oa_bytes[] = A_OUTPUT_BYTES, ob_bytes[] = B_OUTPUT_BYTES;
    void *outa[A_NUM_OUTPUTS], *outb[B_NUM_OUTPUTS];
    const void *ins[1];
    double *ta, *tb, sa = 0, sb = 0;
    void *in, *wa, *wb;
    long n, i;
    int diff = 0;
    FILE *f;
    if (argc != 3 || (n = strtol(argv[2], NULL, 10)) < 1) {
        fprintf(stderr, "usage: ab IN0.bin RUNS\n");
        return 2;
    }
    in = alloc64(ib[0]);
    wa = alloc64(A_WORKSPACE_BYTES);
    wb = alloc64(B_WORKSPACE_BYTES);
    ta = malloc((size_t)n * sizeof *ta);
    tb = malloc((size_t)n * sizeof *tb);
    if (!in || !wa || !wb || !ta || !tb) {
        fprintf(stderr, "ab: out of memory\n");
        return 1;
    }
    for (i = 0; i < A_NUM_OUTPUTS; i++)
        outa[i] = alloc64(oa_bytes[i]);
    for (i = 0; i < B_NUM_OUTPUTS; i++)
        outb[i] = alloc64(ob_bytes[i]);
    f = fopen(argv[1], "rb");
    if (!f || fread(in, 1, ib[0], f) != ib[0] || fgetc(f) != EOF) {
        fprintf(stderr, "ab: %s: cannot read exactly %lu bytes\n", argv[1], ib[0]);
        return 1;
    }
    fclose(f);
    ins[0] = in;
    for (i = 0; i < 3; i++)
        if (a_run(ins, outa, wa) != 0 || b_run(ins, outb, wb) != 0) {
            fprintf(stderr, "ab: a run failed\n");
            return 1;
        }
    for (i = 0; i < n; i++) {
        double t0 = now_ms(), t1, t2;
        a_run(ins, outa, wa);
        t1 = now_ms();
        b_run(ins, outb, wb);
        t2 = now_ms();
        ta[i] = t1 - t0;
        tb[i] = t2 - t1;
        sa += ta[i];
        sb += tb[i];
    }
    for (i = 0; i < A_NUM_OUTPUTS && i < B_NUM_OUTPUTS; i++)
        diff |= oa_bytes[i] != ob_bytes[i] || memcmp(outa[i], outb[i], oa_bytes[i]) != 0;
    qsort(ta, (size_t)n, sizeof *ta, cmp_double);
    qsort(tb, (size_t)n, sizeof *tb, cmp_double);
    printf("a min %.3f med %.3f mean %.3f | b min %.3f med %.3f mean %.3f | b/a med %.3f mean %.3f | "
           "outputs differ %d\n",
           ta[0], ta[n / 2], sa / (double)n, tb[0], tb[n / 2], sb / (double)n, tb[n / 2] / ta[n / 2], sb / sa,
           diff);
    return 0;
}
