/*
 * Tensorize (emit_tile.c): a loop the schedule marked FOR_TENSORIZE is
 * matched against the tile intrinsics its target declares (targets/NAME.json,
 * parsed in ir/target.c) and, when one matches, printed as a register tile
 * from that declaration's C templates. Nothing in this file names an ISA.
 */
#ifndef TVMCC_EMIT_TILE_H
#define TVMCC_EMIT_TILE_H

#include <stdio.h>

#include "../ir/target.h"
#include "../lower/te.h"
#include "emit_loopq.h"

/* Selects target t's tile intrinsics and prints their headers (each
 * distinct header once, under its guard). Call once per NAME.c. */
void emit_tile_begin(Printer *pr, FILE *f, const Target *t);
/* Whether a declared tile's unguarded header already contains `text`
 * (e.g. "<immintrin.h>"), so the caller need not include it again. */
int emit_tile_has_header(const Target *t, const char *text);
/* Prints loop (FOR_TENSORIZE) as the first declared tile intrinsic it
 * matches and returns 1, or prints nothing and returns 0 (the caller
 * prints the scalar nest). */
int emit_tile_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth, EmitStmtFn emit);
/* An init nest `for p: for v: acc[i] = x` (the tile's own p and v loops
 * and accumulator index; x a float32 constant: a matmul's zero) followed
 * by a FOR_TENSORIZE nest that
 * matches a declared tile without a guard: prints the tile with its
 * accumulators starting from x (no store of x to acc and load back) and
 * returns 1; else prints nothing and returns 0. */
int emit_tile_init_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *init, const Stmt *loop, int depth);

/* Prints C template tpl (a declaration's, checked by ir/target.c) with
 * each $names[i] replaced by what arg(pr, f, i, ctx) prints; $$ prints $.
 * Shared by the tile printer and the lane-wise printer of emit_arm.c. */
typedef void (*EmitTplArgFn)(Printer *pr, FILE *f, int i, const void *ctx);
void emit_template(Printer *pr, FILE *f, const char *tpl, const char *const *names, int n, EmitTplArgFn arg, const void *ctx);

#endif
