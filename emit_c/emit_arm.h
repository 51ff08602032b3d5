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
 * The families without these hooks (portable `c`, x86) get nothing from
 * this file.
 */
#ifndef TVMCC_EMIT_ARM_H
#define TVMCC_EMIT_ARM_H

#include <stdio.h>

#include "../ir/target.h"
#include "../lower/te.h"
#include "emit_loopq.h"

/* The hooks of the arm and generic families (declared in ir/target.h,
 * listed in ir/family.c): emit_arm_begin(pr, f, t) chooses the intrinsics for
 * target t (SMLAD when its "dsp" knob is 1, its "lanes" declaration) and
 * prints the headers they need, guarded; call once per NAME.c, before any
 * kernel. emit_arm_stmt(pr, f, k, s,
 * depth, emit) prints loop s with
 * intrinsics (and its portable form under #else), or local-buffer
 * declaration s as vector variables when it is a register tile all of
 * whose accesses are whole vectors (the plain array under #else), at
 * indentation depth and returns 1; else prints nothing and returns 0. */

#endif
