/*
 * File and buffer helpers of the programs that run a model compiled by
 * tvmcc (test/driver.c, bench/timer.c), included by both, which are each
 * built as one C file with the model's sources. Only stdio and malloc, so
 * they build for the host and for Cortex-M with newlib and semihosting.
 * The includer defines MODEL_IO_PROG, its name for messages, and
 * MODEL_IO_STRINGS when it reads and writes string tensors (files of
 * NUL-terminated strings, one per element).
 */
#ifndef TVMCC_MODEL_IO_H
#define TVMCC_MODEL_IO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#ifdef MODEL_IO_STRINGS
/* Reads a file of NUL-terminated strings into a new array of `count`
 * pointers at *buf; complains and returns -1 on a read error or when the
 * file holds another number of strings. */
static int read_strings(const char *path, void **buf, unsigned long count)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL, **ptrs;
    unsigned long n = 0, cap = 0, k = 0, i;
    int c;
    if (!f) {
        fprintf(stderr, MODEL_IO_PROG ": cannot open %s\n", path);
        return -1;
    }
    while ((c = fgetc(f)) != EOF) {
        if (n + 1 >= cap) {
            char *nt;
            cap = cap ? cap * 2 : 256;
            nt = realloc(text, (size_t)cap);
            if (!nt) {
                fclose(f);
                free(text);
                return -1;
            }
            text = nt;
        }
        text[n++] = (char)c;
    }
    fclose(f);
    ptrs = alloc_aligned(count * sizeof *ptrs + 1);
    if (!ptrs || (n && text[n - 1] != '\0')) {
        fprintf(stderr, MODEL_IO_PROG ": %s: not a list of NUL-terminated strings\n", path);
        return -1;
    }
    for (i = 0; i < n; i++)
        if (i == 0 || text[i - 1] == '\0') {
            if (k == count)
                break;
            ptrs[k++] = text + i;
        }
    if (k != count || i != n) {
        fprintf(stderr, MODEL_IO_PROG ": %s: expected %lu strings\n", path, count);
        return -1;
    }
    *buf = ptrs;
    return 0;
}

/* Writes count strings, each followed by NUL, to path; -1 on failure. */
static int write_strings(const char *path, const char *const *s, unsigned long count)
{
    FILE *f = fopen(path, "wb");
    unsigned long i;
    int bad = 0;
    if (!f) {
        fprintf(stderr, MODEL_IO_PROG ": cannot create %s\n", path);
        return -1;
    }
    for (i = 0; i < count && !bad; i++)
        bad = fputs(s[i], f) < 0 || fputc('\0', f) == EOF;
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, MODEL_IO_PROG ": cannot write %s\n", path);
        return -1;
    }
    return 0;
}
#endif

#endif
