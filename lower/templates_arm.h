/*
 * Schedule templates for Arm microcontrollers with a scalar FPU (Cortex-M4,
 * Cortex-M7): register tiles sized to the FPU's register file. See
 * templates_arm.c.
 */
#ifndef TVMCC_TEMPLATES_ARM_H
#define TVMCC_TEMPLATES_ARM_H

#include "sched.h"

typedef struct ArmKnobs {
    int acc;        /* accumulators per register tile (FPv4/FPv5: 32 S
                       registers hold the tile next to its operands) */
    int lanes;      /* tile width along the vector (innermost output) axis
                       when there is a row axis too */
    int unroll_red; /* innermost reduce loops up to this extent are unrolled
                       (0: none) */
    int dsp;        /* integer sums of products get a reduce loop of two
                       iterations innermost (pairs for SMLAD, printed by
                       emit_c/emit_arm.c) and int_acc / int_lanes tiles */
    int int_acc;    /* accumulators per tile of an integer stage (they live
                       in the 13 core registers next to the packed operands) */
    int int_lanes;
    int vec;        /* > 0: float32 lanes of the target's vectors (NEON on
                       AArch64, MVE on Cortex-M55): the vector tile loop of
                       a float32 stage is split by exactly vec and marked
                       vectorized (emit_c/emit_arm.c prints it as vector
                       intrinsics); the tile is rows x vec, rows = acc / vec */
    int dot;        /* AArch64: 8-bit integer sums as NEON dot products
                       (lower/templates_a64q.c) */
    int mve;        /* Armv8.1-M with Helium: 8-bit integer sums as MVE
                       VMLADAVA (lower/tpl_qconv_m4.c's MVE form) */
} ArmKnobs;

/* (template_arm(L, t), the arm family's schedule hook, is declared in
 * ir/target.h: these templates with t's knobs when t has an FPU.) */
/* Schedules every stage of the kernel with knobs k (any values >= 1 are
 * legal; results equal the naive schedule's). */
void template_arm_apply(Lower *L, const ArmKnobs *k);

#endif
