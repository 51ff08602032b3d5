/*
 * bench_aarch64.c: times model_run for a model compiled with --name model
 * for -t aarch64, built -static and run under qemu-aarch64 (user mode) by
 * bench/arm/aarch64.sh.
 *
 *   bench_aarch64 RUNS
 *
 * Fills every input with the fixed pseudo-random float32 sequence of
 * bench_io.h (as bench_main.c does), calls model_run RUNS times and prints
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
#include "bench_io.h"

int main(int argc, char **argv)
{
    const void *inputs[MODEL_NUM_INPUTS];
    void *outputs[MODEL_NUM_OUTPUTS];
    int r, runs = argc > 1 ? atoi(argv[1]) : 10, rc = 0;
    struct timespec t0, t1;

    if (bench_alloc_io(inputs, outputs))
        return 1;
    if (runs < 1)
        runs = 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (r = 0; r < runs && rc == 0; r++)
        rc = model_run(inputs, outputs, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("time: %.6f\n", ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / runs);
    bench_print_output(outputs);
    return rc;
}
