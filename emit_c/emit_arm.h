/*
 * Loops printed with Arm intrinsics (emit_arm.c): on cores with the DSP
 * extension (Armv7E-M: Cortex-M4, M7; Armv8.1-M: M55) the integer register
 * tiles of lower/templates_arm.c multiply-accumulate pairs of 16-bit
 * operands with SMLAD (<arm_acle.h>); the fp32 vector loops and tiles are
 * printed with the target's declared "lanes" intrinsic (targets/NAME.json:
 * NEON on AArch64, Helium/MVE on the Cortex-M55, each operation a C
 * template there). Every
 * intrinsic sits under the preprocessor test of the ACLE feature macro it
 * needs, next to the portable loop, so the C stays valid for any compiler.
 * Other targets (`c` included) get nothing from this file.
 */
#ifndef TVMCC_EMIT_ARM_H
#define TVMCC_EMIT_ARM_H

#include <stdio.h>

#include "../ir/target.h"
#include "../lower/te.h"
#include "emit_loopq.h"

/* Chooses the intrinsics for target t (none unless an Arm target) and
 * prints the headers they need, guarded. Call once per NAME.c, before any
 * kernel. */
void emit_arm_begin(Printer *pr, FILE *f, const Target *t);
/* Prints loop s with intrinsics (and its portable form under #else) at
 * indentation depth and returns 1, or prints nothing and returns 0 when the
 * target has no intrinsics for it or the loop does not qualify. */
int emit_arm_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit);

/* Prints local-buffer declaration s (ST_DECL) as vector variables when it
 * is a register tile all of whose accesses are whole vectors (and the
 * plain array under #else) and returns 1, else prints nothing, returns 0. */
int emit_arm_decl(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit);

#endif
