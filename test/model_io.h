/*
 * File and buffer helpers of the programs that run a model compiled by
 * tvmcc (test/driver.c, bench/timer.c), included by both, which are each
 * built as one C file with the model's sources. Only stdio and malloc, so
 * they build for the host and for Cortex-M with newlib and semihosting.
 * The includer defines MODEL_IO_PROG, its name for messages.
 */
#ifndef TVMCC_MODEL_IO_H
#define TVMCC_MODEL_IO_H

#include <stdio.h>
#include <stdlib.h>

#define MODEL_IO_ALIGN 64u

/* Rounds p up to the next multiple of MODEL_IO_ALIGN. */
static void *align_up(void *p)
{
    unsigned long a = (unsigned long)(size_t)p;
    return (unsigned char *)p + ((MODEL_IO_ALIGN - a % MODEL_IO_ALIGN) % MODEL_IO_ALIGN);
}

/* Returns n bytes aligned to MODEL_IO_ALIGN (n may be 0), or NULL; never
 * freed. */
static void *alloc_aligned(unsigned long n)
{
    void *p = malloc((size_t)n + MODEL_IO_ALIGN);
    return p ? align_up(p) : NULL;
}

/* Reads exactly want bytes of path into buf; complains and returns -1 if
 * the file cannot be read or has another size. */
static int read_file(const char *path, void *buf, unsigned long want)
{
    FILE *f = fopen(path, "rb");
    unsigned long got;
    int extra;

    if (!f) {
        fprintf(stderr, MODEL_IO_PROG ": cannot open %s\n", path);
        return -1;
    }
    got = want ? (unsigned long)fread(buf, 1, (size_t)want, f) : 0;
    extra = fgetc(f);
    fclose(f);
    if (got != want || extra != EOF) {
        fprintf(stderr, MODEL_IO_PROG ": %s: expected %lu bytes, got %s%lu\n", path, want,
                extra != EOF ? "more than " : "", got);
        return -1;
    }
    return 0;
}

/* Writes n bytes of buf to path; complains and returns -1 on failure. */
static int write_file(const char *path, const void *buf, unsigned long n)
{
    FILE *f = fopen(path, "wb");
    int bad;

    if (!f) {
        fprintf(stderr, MODEL_IO_PROG ": cannot create %s\n", path);
        return -1;
    }
    bad = n && fwrite(buf, 1, (size_t)n, f) != (size_t)n;
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        fprintf(stderr, MODEL_IO_PROG ": cannot write %s\n", path);
        return -1;
    }
    return 0;
}

#endif
