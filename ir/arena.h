/*
 * Compile-time memory. Everything the compiler allocates for one compilation
 * comes from one Arena and is released at once by arena_free(); passes never
 * call free(). Allocation failure is an internal error (die). The arena keeps
 * a byte budget so that an input file cannot make the compiler allocate
 * without bound: exceeding it is reported as a user error by the caller
 * by checking arena_alloc's NULL result.
 */
#ifndef TVMCC_ARENA_H
#define TVMCC_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct ArenaChunk ArenaChunk;

typedef struct Arena {
    ArenaChunk *head;     /* most recent chunk, singly linked to older ones */
    size_t used_bytes;    /* total bytes handed out so far */
    size_t budget_bytes;  /* 0 = unlimited; otherwise arena_alloc returns NULL past it */
} Arena;

void arena_init(Arena *a, size_t budget_bytes);
void arena_free(Arena *a);
/* Zeroed memory aligned to 16 bytes; NULL only when the budget is exceeded. */
void *arena_alloc(Arena *a, size_t n);
/* Like arena_alloc but n = count * size with overflow check (NULL on overflow). */
void *arena_array(Arena *a, size_t count, size_t size);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Internal errors: print file:line and abort. Never used for bad input. */
#ifdef __GNUC__
__attribute__((noreturn, format(printf, 3, 4)))
#endif
void die_at(const char *file, int line, const char *fmt, ...);
#define die(...) die_at(__FILE__, __LINE__, __VA_ARGS__)
#define unreachable() die_at(__FILE__, __LINE__, "unreachable")

/* Checked int64 arithmetic: return 1 on overflow, else store the result. */
int ck_add(int64_t a, int64_t b, int64_t *r);
int ck_mul(int64_t a, int64_t b, int64_t *r);

#endif
