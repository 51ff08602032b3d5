/*
 * bench_main.c: counts the instructions of one model_run on qemu's
 * mps2-an386 (Cortex-M4F), built with test/arm/startup.c and
 * test/arm/mps2-an386.ld for a model compiled with --name model.
 *
 * qemu implements no DWT cycle counter (CYCCNT reads as 0), so time comes
 * from SysTick: clocked by the core clock, reloading every 2^24 ticks, with
 * an interrupt counting the wraps. Under `-icount shift=0` qemu advances its
 * virtual clock by 1 ns per executed instruction, so SysTick ticks are a
 * fixed number of instructions (40 at the board's 25 MHz). Rather than
 * trusting that figure, the program times a loop of known length (two
 * instructions per iteration) and reports both counts; bench/arm/run.sh
 * scales model_run's ticks by the loop's instructions per tick.
 *
 * Cycle estimates come from a TCG plugin (bench/arm/m4est), which snapshots
 * its counters whenever execution enters bench_mark_begin or
 * bench_mark_end. They bracket three regions, in this order: the
 * calibration loop, nothing (the markers' own cost, which run.sh
 * subtracts), and model_run. Without the plugin they are two tiny
 * functions.
 *
 * Prints:
 *   calib: TICKS INSNS
 *   run: STATUS TICKS
 *   out: N SUM V0 V1 V2 V3    (outputs as float32, for comparing schedules)
 * and exits with model_run's status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#include "model.h"
#include "tvmrt.h"
#include "bench_io.h"

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_MAX 0x00FFFFFFu

/* Calibration loop: iterations, at two instructions (subs, bne) each. */
#define CALIB_ITERS 4000000u

void systick_handler(void);

static volatile uint32_t wraps;

void systick_handler(void)
{
    wraps++;
}

static void ticks_start(void)
{
    SYST_RVR = SYST_MAX;
    SYST_CVR = 0;
    SYST_CSR = 7u; /* enable, interrupt on wrap, core clock */
    /* The first tick loads the reload value; count from there. */
    while (SYST_CVR == 0)
        ;
}

/* Ticks since ticks_start; re-reads when a wrap lands between the reads. */
static uint32_t ticks_now(void)
{
    uint32_t w, v;
    do {
        w = wraps;
        v = SYST_CVR;
    } while (w != wraps);
    return w * (SYST_MAX + 1u) + (SYST_MAX - v);
}

/* Marker functions: out of line and not identical (so that neither
 * inlining nor identical-code folding merges them), entered only from
 * main. */
void bench_mark_begin(void) __attribute__((noinline));
void bench_mark_end(void) __attribute__((noinline));
volatile uint32_t bench_mark_last;

void bench_mark_begin(void)
{
    bench_mark_last = 1u;
}

void bench_mark_end(void)
{
    bench_mark_last = 2u;
}

static void spin(uint32_t n)
{
    __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
}

int main(void)
{
    const void *inputs[MODEL_NUM_INPUTS];
    void *outputs[MODEL_NUM_OUTPUTS];
    uint32_t t0, t1, calib;
    int rc;

    if (bench_alloc_io(inputs, outputs))
        return 1;

    ticks_start();
    t0 = ticks_now();
    bench_mark_begin();
    spin(CALIB_ITERS);
    bench_mark_end();
    calib = ticks_now() - t0;
    printf("calib: %lu %lu\n", (unsigned long)calib, 2ul * CALIB_ITERS);

    /* NULL workspace: the static arena, counted in .bss. */
    bench_mark_begin();
    bench_mark_end();
    t0 = ticks_now();
    bench_mark_begin();
    rc = model_run(inputs, outputs, NULL);
    bench_mark_end();
    t1 = ticks_now();
    printf("run: %d %lu\n", rc, (unsigned long)(t1 - t0));

    bench_print_output(outputs);
    return rc;
}
