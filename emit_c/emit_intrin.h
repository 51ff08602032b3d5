/*
 * Vector loops as x86 intrinsics (emit_intrin.c). A loop the schedule marked
 * FOR_VECTORIZE whose extent is the target's vector width, and whose body is
 * lane-wise float32 arithmetic over contiguous or loop-invariant loads, is
 * printed as one vector statement per store (<immintrin.h>), so the register
 * tile of a convolution or matmul becomes broadcast-FMA on whole vectors
 * whatever the C compiler's own vectorizer decides. Only the x86 family
 * (ir/family.c) with AVX2 or AVX-512 gets this; every other target keeps
 * plain C. (The
 * tensorized register tile is printed from the target's declaration, by
 * emit_tile.c.)
 */
#ifndef TVMCC_EMIT_INTRIN_H
#define TVMCC_EMIT_INTRIN_H

#include <stdio.h>

#include "../ir/target.h"
#include "../lower/te.h"
#include "printer.h"

/* The x86 family's hooks (declared in ir/target.h, listed in ir/family.c):
 * emit_intrin_lanes(t), the float32 lanes of t's vectors that get
 * intrinsics (16 with AVX-512, 8 with AVX2, else 0); emit_intrin_begin,
 * which prints <immintrin.h> (unless a declared tile's header has it) and
 * the helpers below; emit_intrin_stmt, which prints a FOR_VECTORIZE loop
 * of at most that many iterations with emit_intrin_loop. */
/* Prints loop (extent == lanes) as vector statements at indentation depth
 * and returns 1, or prints nothing and returns 0 when the body does not
 * qualify (the caller then prints the scalar loop). */
int emit_intrin_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth, int lanes);

/* Prints the static inline vector helpers (tvmcc_exp16 / tvmcc_exp8) that
 * vectorized loops may call; nothing when lanes is 0. */
void emit_intrin_helpers(FILE *f, int lanes);

#endif
