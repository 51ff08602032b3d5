/*
 * Per-kernel minimum times for bench/kernel_minima.sh: force-included
 * (cc -include) into a build of tvmcc's output with bench/timer.c, it
 * defines the TVMCC_KERNEL_BEGIN / TVMCC_KERNEL_END hooks that NAME.c
 * leaves empty otherwise, keeps each kernel's shortest time over all runs
 * (warm-ups included) and writes "INDEX MICROSECONDS" lines, INDEX the
 * kernel's position in NAME.json, to $KERNEL_MINIMA_OUT (default
 * kernel_minima.txt) at exit. Minima, not means: on a shared host a
 * neighbour's load lengthens some runs by a third, never shortens one.
 */
#ifndef KERNEL_MINIMA_H
#define KERNEL_MINIMA_H
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KERNEL_MINIMA_MAX 4096

static double km_start[KERNEL_MINIMA_MAX], km_best[KERNEL_MINIMA_MAX];
static int km_seen[KERNEL_MINIMA_MAX], km_registered;

static double km_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void km_write(void)
{
    const char *path = getenv("KERNEL_MINIMA_OUT");
    FILE *f = fopen(path ? path : "kernel_minima.txt", "w");
    int i;
    if (!f) {
        fprintf(stderr, "kernel_minima: cannot write %s\n", path ? path : "kernel_minima.txt");
        return;
    }
    for (i = 0; i < KERNEL_MINIMA_MAX; i++)
        if (km_seen[i])
            fprintf(f, "%d %.3f\n", i, km_best[i]);
    fclose(f);
}

static void km_begin(int i)
{
    if (!km_registered) {
        km_registered = 1;
        atexit(km_write);
    }
    if (i >= 0 && i < KERNEL_MINIMA_MAX)
        km_start[i] = km_now_us();
}

static void km_end(int i)
{
    double d;
    if (i < 0 || i >= KERNEL_MINIMA_MAX)
        return;
    d = km_now_us() - km_start[i];
    if (!km_seen[i] || d < km_best[i])
        km_best[i] = d;
    km_seen[i] = 1;
}

#define TVMCC_KERNEL_BEGIN(i) km_begin(i)
#define TVMCC_KERNEL_END(i) km_end(i)
#endif
