/*
 * Static memory planning: place tensors with known live ranges into one
 * arena. See plan_memory.c for the algorithm.
 */
#ifndef TVMCC_PLAN_H
#define TVMCC_PLAN_H

#include <stdint.h>

typedef struct PlanItem {
    int64_t bytes;   /* size of the tensor */
    int first, last; /* live from kernel `first` to kernel `last`, inclusive */
    int64_t offset;  /* result: byte offset in the arena */
} PlanItem;

typedef struct PlanResult {
    int64_t arena_bytes;       /* size of the arena, a multiple of align */
    int64_t lower_bound_bytes; /* max over kernels of the live bytes */
} PlanResult;

/* Places every item; returns nonzero on arithmetic overflow. */
int plan_memory(PlanItem *items, int n, int64_t align, PlanResult *res);

#endif
