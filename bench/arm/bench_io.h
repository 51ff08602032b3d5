/*
 * bench_io.h: what the Arm benchmark programs (bench_main.c on Cortex-M,
 * bench_aarch64.c under qemu-aarch64) share: the fixed inputs and the
 * output summary, so runs of different schedules compare value for value.
 * Include after model.h (a model compiled with --name model).
 */
#ifndef TVMCC_BENCH_IO_H
#define TVMCC_BENCH_IO_H

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

/* Allocates every input and fills it with uniform float32 values in
 * [-1, 1) from one fixed linear congruential sequence, and allocates the
 * outputs. Returns nonzero when an allocation fails. */
static int bench_alloc_io(const void **inputs, void **outputs)
{
    static const unsigned long in_bytes[] = MODEL_INPUT_BYTES;
    static const unsigned long out_bytes[] = MODEL_OUTPUT_BYTES;
    uint32_t seed = 12345u;
    unsigned long i;
    int k;
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
    return 0;
}

/* Prints "out: N SUM V0 V1 V2 V3" for the first output read as float32. */
static void bench_print_output(void *const *outputs)
{
    static const unsigned long out_bytes[] = MODEL_OUTPUT_BYTES;
    const float *y = outputs[0];
    unsigned long i, n = out_bytes[0] / sizeof(float);
    double sum = 0;
    for (i = 0; i < n; i++)
        sum += y[i];
    printf("out: %lu %.6e %.6e %.6e %.6e %.6e\n", n, sum, (double)y[0], (double)y[n > 1 ? 1 : 0],
           (double)y[n > 2 ? 2 : 0], (double)y[n > 3 ? 3 : 0]);
}

#endif
