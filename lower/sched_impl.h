/*
 * What the files of the schedule primitives share (sched.c, sched_bound.c);
 * nothing else includes it.
 */
#ifndef TVMCC_SCHED_IMPL_H
#define TVMCC_SCHED_IMPL_H

#include "sched.h"

/* Known range of a loop variable or index expression. */
typedef struct Range {
    int known;
    int64_t lo, hi; /* inclusive */
} Range;

/* Writes the reason a primitive refuses (printf-style) into s->err;
 * returns 1. */
int sched_refuse(Sched *s, const char *fmt, ...);
/* The known range [lo, hi]. */
Range sched_range(int64_t lo, int64_t hi);
/* A range per loop variable of the kernel, all unknown. */
Range *sched_var_ranges(Lower *L);
/* Copy of s with buffer `from` (loads and stores) replaced by `to` at idx. */
Stmt *sched_rebuf(Lower *L, const Stmt *s, int from, int to, Expr *idx);

#endif
