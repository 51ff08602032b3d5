/*
 * Greedy static memory planning.
 *
 * 1. Every tensor that lives in the arena has a live range over the kernel
 *    order [first, last]. Two tensors conflict when their ranges overlap.
 * 2. Tensors are placed largest first (ties: earlier first, then by input
 *    order, so the result is deterministic).
 * 3. For each tensor, the already placed tensors that conflict with it
 *    define occupied intervals of the arena; the tensor goes into the
 *    smallest gap that fits it (best fit), or above the highest occupied
 *    byte when no gap does.
 * 4. The arena size is the highest end; the lower bound reported beside it
 *    is the largest sum of live bytes at any kernel, which no placement can
 *    beat.
 * 5. Largest-first is not optimal (a chain of sizes 1,2,3,1,2,3 KiB needs
 *    6 KiB that way, 5 KiB at best), so a bounded local search swaps pairs
 *    in the order and keeps swaps that do not grow the arena, stopping at
 *    the lower bound. The seed is fixed, so the plan is deterministic.
 * Offsets are aligned to `align`.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/arena.h"

static const PlanItem *sort_base;

static int by_size_desc(const void *pa, const void *pb)
{
    const PlanItem *a = &sort_base[*(const int *)pa], *b = &sort_base[*(const int *)pb];
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return *(const int *)pa - *(const int *)pb;
}

static int by_offset(const void *pa, const void *pb)
{
    const PlanItem *a = &sort_base[*(const int *)pa], *b = &sort_base[*(const int *)pb];
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    return *(const int *)pa - *(const int *)pb;
}

static int64_t align_up(int64_t v, int64_t a)
{
    return (v + a - 1) / a * a;
}

/* Places items in the given order (best fit among the gaps left by already
 * placed, conflicting items); returns the arena size. */
static int64_t place(PlanItem *items, const int *order, int n, int64_t align, int *placed, int *conf)
{
    int i, j, n_placed = 0;
    int64_t top = 0;
    for (i = 0; i < n; i++) {
        PlanItem *it = &items[order[i]];
        int n_conf = 0;
        int64_t best = -1, best_gap = INT64_MAX, cursor = 0, size = align_up(it->bytes, align);
        for (j = 0; j < n_placed; j++) {
            const PlanItem *p = &items[placed[j]];
            if (p->first <= it->last && it->first <= p->last)
                conf[n_conf++] = placed[j];
        }
        qsort(conf, (size_t)n_conf, sizeof *conf, by_offset);
        for (j = 0; j < n_conf; j++) {
            const PlanItem *p = &items[conf[j]];
            if (p->offset > cursor && p->offset - cursor >= size && p->offset - cursor < best_gap) {
                best = cursor;
                best_gap = p->offset - cursor;
            }
            if (p->offset + align_up(p->bytes, align) > cursor)
                cursor = p->offset + align_up(p->bytes, align);
        }
        it->offset = best >= 0 ? best : cursor;
        if (it->offset + size > top)
            top = it->offset + size;
        placed[n_placed++] = order[i];
    }
    return top;
}

/* Deterministic pseudo-random numbers for the order search. */
static uint32_t next_rand(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

int plan_memory(PlanItem *items, int n, int64_t align, PlanResult *res)
{
    int *order, *best_order, *placed, *conf, i, j, iter, iters, last_kernel = 0;
    int64_t lb = 0, best, top;
    uint32_t seed = 12345u;
    if (align < 1)
        align = 1;
    res->arena_bytes = 0;
    res->lower_bound_bytes = 0;
    if (n == 0)
        return 0;
    order = malloc((size_t)n * sizeof *order);
    best_order = malloc((size_t)n * sizeof *best_order);
    placed = malloc((size_t)n * sizeof *placed);
    conf = malloc((size_t)n * sizeof *conf);
    if (!order || !best_order || !placed || !conf)
        die("out of memory in the memory planner");
    for (i = 0; i < n; i++) {
        order[i] = i;
        if (items[i].bytes < 0 || items[i].bytes > INT64_MAX / 4)
            goto overflow;
        if (items[i].last > last_kernel)
            last_kernel = items[i].last;
    }
    for (i = 0; i <= last_kernel; i++) {
        int64_t live = 0;
        for (j = 0; j < n; j++)
            if (items[j].first <= i && i <= items[j].last)
                live += items[j].bytes;
        if (live > lb)
            lb = live;
    }
    sort_base = items;
    qsort(order, (size_t)n, sizeof *order, by_size_desc);
    best = place(items, order, n, align, placed, conf);
    memcpy(best_order, order, (size_t)n * sizeof *order);
    /* Largest-first is good but not optimal; a bounded local search over
     * the order (swap two items, keep the swap if the arena does not grow)
     * closes most of the rest. Deterministic: fixed seed. */
    iters = n < 2 ? 0 : n > 400 ? 200 : 2000;
    for (iter = 0; iter < iters && best > align_up(lb, align); iter++) {
        int a = (int)(next_rand(&seed) % (uint32_t)n), b = (int)(next_rand(&seed) % (uint32_t)n), t;
        t = order[a];
        order[a] = order[b];
        order[b] = t;
        top = place(items, order, n, align, placed, conf);
        if (top <= best) {
            best = top;
            memcpy(best_order, order, (size_t)n * sizeof *order);
        } else {
            memcpy(order, best_order, (size_t)n * sizeof *order);
        }
    }
    place(items, best_order, n, align, placed, conf);
    free(order);
    free(best_order);
    free(placed);
    free(conf);
    res->arena_bytes = best;
    res->lower_bound_bytes = lb;
    return 0;
overflow:
    free(order);
    free(best_order);
    free(placed);
    free(conf);
    return 1;
}
