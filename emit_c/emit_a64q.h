/*
 * AArch64 NEON loops for 8-bit integer sums of products (emit_a64q.c),
 * the tiles of lower/templates_a64q.c: SDOT (the Armv8.2 dot product
 * extension, __ARM_FEATURE_DOTPROD) or SMULL + SADALP without it, and
 * SMLAL lanes for depthwise convs. Called from emit_arm.c's hooks when the
 * target's "dot" knob is set.
 */
#ifndef TVMCC_EMIT_A64Q_H
#define TVMCC_EMIT_A64Q_H

#include <stdio.h>

#include "../ir/target.h"
#include "../lower/te.h"
#include "emit_loopq.h"

/* Sets pr->a64_dot from t's "dot" knob and, when set, prints the inline
 * helpers the loops call (under the NEON guard); once per NAME.c. */
void emit_a64q_begin(Printer *pr, FILE *f, const Target *t);
/* Prints loop s, the reduce nest around an 8-bit register tile, with NEON
 * intrinsics under `#if defined(__ARM_NEON) && defined(__aarch64__)` and
 * the portable loop under #else, and returns 1; else prints nothing and
 * returns 0. */
int emit_a64q_stmt(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit);

#endif
