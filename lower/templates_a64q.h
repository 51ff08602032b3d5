/*
 * AArch64 NEON kernels for 8-bit integer sums of products (the int32
 * contractions of lower/op_quant.c: NHWC convs, depthwise convs, Gemm):
 * which tile lower/templates_arm.c gives such a stage when the target's
 * "dot" knob is set. emit_c/emit_a64q.c prints the loops. See
 * templates_a64q.c.
 */
#ifndef TVMCC_TEMPLATES_A64Q_H
#define TVMCC_TEMPLATES_A64Q_H

#include "te.h"

typedef struct A64qPlan {
    int dot;       /* the innermost reduce axis walks both operands with unit
                      stride: kept whole and innermost (SDOT along it) */
    int lane;      /* the vector axis walks an operand with unit stride (the
                      channels of a depthwise conv): lanes of 8 or 16 */
    int64_t acc;   /* accumulators of the register tile (rows x lanes) */
    int64_t lanes; /* the tile's extent along the vector axis */
} A64qPlan;

/* Whether stage c is an int32 sum of products of two 8-bit operands (at
 * most one of them uint8) that one of the two NEON forms takes; fills *p. */
int a64q_plan(const Lower *L, const Compute *c, A64qPlan *p);

#endif
