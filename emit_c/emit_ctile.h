/* How the portable `c` target prints accumulator tiles (emit_ctile.c). */
#ifndef TVMCC_EMIT_CTILE_H
#define TVMCC_EMIT_CTILE_H

#include <stdio.h>

#include "../lower/te.h"
#include "emit_loopq.h"

/* Whether any kernel of the program has an accumulator tile (a
 * FOR_TENSORIZE loop). */
int ctile_any(const Kernel *const *kernels, int n);
/* Prints the definition of the fused multiply-add macro NAME_FMA that the
 * tile updates use (upper is the upper-case model name). */
void ctile_begin(FILE *f, const char *upper);
/* Prints the definition of NAME_NOINLINE, which the `c` target's kernel
 * definitions carry: __attribute__((noinline)) under __GNUC__, else
 * nothing. */
void ctile_noinline(FILE *f, const char *upper);
/* Whether loop is a tile's row loop: `for p: for v: acc[..] = acc[..] +
 * x * y` with acc a local buffer. */
int ctile_row_loop(const Kernel *k, const Stmt *loop);
/* Whether loop is a tile's vector loop: `for v: acc[..] = acc[..] + x * y`. */
int ctile_vector_loop(const Kernel *k, const Stmt *loop);
/* Prints `#pragma GCC unroll n`, guarded for the compilers that know it. */
void ctile_unroll_pragma(FILE *f, int64_t n);
/* Prints s if it is a tile update `acc[i] = acc[i] + x * y` as
 * `acc[i] = NAME_FMA(x, y, acc[i]);` (with indentation) and returns 1,
 * else prints nothing and returns 0. */
int ctile_update(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, const char *upper, const Stmt *offset_row);
/* Whether the tile under the FOR_TENSORIZE loop nest updates acc[base +
 * p*VL + v] with base fixed in the nest, in a larger array (a matmul's row
 * group keeps its tiles side by side): gcc keeps such a tile in memory.
 * Then *row is its row loop, and ctile_offset_open / _close print the
 * nest's start and end: a local copy NAME_t[P*VL] of the tile, loaded from
 * and stored back to acc[base + i], that the updates use (ctile_update with
 * offset_row). */
int ctile_offset_tile(const Kernel *k, const Stmt *nest, const Stmt **row);
void ctile_offset_open(Printer *pr, FILE *f, const Kernel *k, const Stmt *row, int depth, const char *idx_type);
void ctile_offset_close(Printer *pr, FILE *f, const Kernel *k, const Stmt *row, int depth, const char *idx_type);

/* Whether a kernel computes a float32 exp or sigmoid. */
int ctile_uses_expf(const Kernel *const *kernels, int n);
/* Prints static inline float NAME_expf(float), an exp that compilers can
 * vectorize (no libm call). */
void ctile_expf_helper(FILE *f, const char *upper);
/* A loop whose whole body is `if (a + var < b) S` (no else, a and b
 * integer index arithmetic, b free of var): prints it as a loop over
 * [0, min(extent, b - a)) around S and returns 1, else prints nothing and
 * returns 0. The bounds test left inside the tiles' epilogues (the last
 * tile of a row runs past its end) keeps compilers from vectorizing
 * them. */
int ctile_guarded_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth, const char *idx_type,
                       EmitStmtFn emit_body);

#endif
