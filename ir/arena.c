/*
 * Bump allocator over a list of chunks. Chunks grow geometrically so a large
 * compilation does not produce thousands of mallocs; large requests get a
 * chunk of their own.
 */
#include "arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaChunk {
    ArenaChunk *next;
    size_t cap;   /* usable bytes after the header */
    size_t used;  /* bytes handed out from this chunk */
    /* data follows, aligned to 16 */
};

#define CHUNK_HDR ((sizeof(ArenaChunk) + 15u) & ~(size_t)15u)
#define MIN_CHUNK ((size_t)1 << 16)

void arena_init(Arena *a, size_t budget_bytes)
{
    a->head = NULL;
    a->used_bytes = 0;
    a->budget_bytes = budget_bytes;
}

void arena_free(Arena *a)
{
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_bytes = 0;
}

void *arena_alloc(Arena *a, size_t n)
{
    ArenaChunk *c = a->head;
    size_t need = (n + 15u) & ~(size_t)15u;
    if (need < n)
        return NULL;
    if (a->budget_bytes && (need > a->budget_bytes || a->used_bytes > a->budget_bytes - need))
        return NULL;
    if (!c || c->cap - c->used < need) {
        size_t cap = c ? c->cap * 2 : MIN_CHUNK;
        if (cap > ((size_t)1 << 26))
            cap = (size_t)1 << 26;
        if (cap < need)
            cap = need;
        c = malloc(CHUNK_HDR + cap);
        if (!c)
            die("out of memory allocating %zu bytes", cap);
        c->cap = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    {
        void *p = (char *)c + CHUNK_HDR + c->used;
        c->used += need;
        a->used_bytes += need;
        memset(p, 0, n);
        return p;
    }
}

void *arena_array(Arena *a, size_t count, size_t size)
{
    if (size && count > ((size_t)-1) / size)
        return NULL;
    return arena_alloc(a, count * size);
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *p;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        die("vsnprintf failed");
    p = arena_alloc(a, (size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void die_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tvmcc: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

int ck_add(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return 1;
    *r = a + b;
    return 0;
}

int ck_mul(int64_t a, int64_t b, int64_t *r)
{
    if (a == 0 || b == 0) {
        *r = 0;
        return 0;
    }
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
              : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return 1;
    *r = a * b;
    return 0;
}
