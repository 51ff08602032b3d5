/*
 * bench_aarch64.c: times model_run for a model compiled with --name model
 * for -t aarch64, built -static and run under qemu-aarch64 (user mode) by
 * bench/arm/aarch64.sh.
 *
 *   bench_aarch64 RUNS
 *
 * Fills every input with the same fixed pseudo-random float32 sequence as
 * bench_main.c, calls model_run RUNS times and prints
 *   time: SECONDS_PER_RUN
 *   out: N SUM V0 V1 V2 V3
 * (CLOCK_MONOTONIC around the RUNS calls; under qemu this is emulated time,
 * which tracks the number and kind of guest instructions executed).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>

#include "model.h"

int main(int argc, char **argv)
{
    static const unsigned long in_bytes[] = MODEL_INPUT_BYTES;
    static const unsigned long out_bytes[] = MODEL_OUTPUT_BYTES;
    const void *inputs[MODEL_NUM_INPUTS];
    void *outputs[MODEL_NUM_OUTPUTS];
    uint32_t seed = 12345u;
    unsigned long i, n;
    int k, r, runs = argc > 1 ? atoi(argv[1]) : 10, rc = 0;
    struct timespec t0, t1;
    double sum = 0;
    float *y;

    for (k = 0; k < MODEL_NUM_INPUTS; k++) {
        float *x = malloc(in_bytes[k]);
        if (!x)
            return 1;
        for (i = 0; i < in_bytes[k] / sizeof(float); i++) {
            seed = seed * 1664525u + 1013904223u;
            x[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
        }
        inputs[k] = x;
    }
    for (k = 0; k < MODEL_NUM_OUTPUTS; k++)
        if (!(outputs[k] = malloc(out_bytes[k])))
            return 1;
    if (runs < 1)
        runs = 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (r = 0; r < runs && rc == 0; r++)
        rc = model_run(inputs, outputs, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("time: %.6f\n", ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / runs);
    y = outputs[0];
    n = out_bytes[0] / sizeof(float);
    for (i = 0; i < n; i++)
        sum += y[i];
    printf("out: %lu %.6e %.6e %.6e %.6e %.6e\n", n, sum, (double)y[0], (double)y[n > 1 ? 1 : 0],
           (double)y[n > 2 ? 2 : 0], (double)y[n > 3 ? 3 : 0]);
    return rc;
}
