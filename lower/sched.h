/*
 * Schedule primitives: transformations of a kernel's loop IR (k->body, as
 * built by schedule_naive) that reorder work without changing what is
 * computed. Each primitive names loops by their variable id (every axis of
 * every stage has its own id, so a var names one loop nest position), checks
 * its preconditions, and on refusal leaves the IR untouched, writes the
 * reason into s->err and returns nonzero.
 *
 * Results stay bit-identical except where a reduction's order changes, which
 * only reorder() of reduce loops does (float reassociation). cache_write keeps
 * every output point's reduction order exactly.
 *
 * Annotations (unroll, vectorize, parallel) apply to every loop over the
 * variable: cache_write distributes the tile loops over the init, update and
 * write-back phases, so one tile var then names up to three sibling loops.
 */
#ifndef TVMCC_SCHED_H
#define TVMCC_SCHED_H

#include "te.h"
#include "../ir/target.h"

typedef struct Sched {
    Lower *L;          /* kernel being scheduled and the arena */
    Stmt **scope;      /* NULL, or the slot of the subtree in which split,
                          reorder, fuse, parallel and cache_write look for
                          their loops (copies made by partition share loop
                          variables; the scope picks one copy) */
    int64_t pad_inner; /* > 1: cache_write rounds the innermost tile extent
                          up to a multiple of this in the local array, so
                          each row of the tile starts a whole vector */
    int at_local;      /* compute_at refuses a region that does not fit a
                          local array (it would stay in the workspace) */
    int at_once;       /* compute_at refuses when the regions of all the
                          iterations of the loop and the loops around it
                          cover more than the temp (points recomputed) */
    char err[200];     /* why the last primitive refused */
} Sched;

void sched_init(Sched *s, Lower *L);

/* for v in 0..N -> for vo in 0..ceil(N/f): for vi in 0..f: body[v := vo*f+vi].
 * When f does not divide N the body is guarded by `vo*f+vi < N`. */
int sched_split(Sched *s, int var, int64_t factor, int *outer, int *inner);
/* Permutes a perfectly nested band: the listed loops must be exactly the
 * loops of one chain for a: for b: ... (each the only statement of the
 * previous, or of a guard `if` without else between them, as split leaves),
 * given in the new order outermost first. Guards move under the innermost
 * band loop (they depend only on loops around them, so they test the same
 * thing there). Refuses when the band both reads and writes one tensor (a
 * possible carried dependence). */
int sched_reorder(Sched *s, int n, const int *vars);
/* for a in 0..A: for b in 0..B: body -> for f in 0..A*B: body[a := f/B, b := f%B] */
int sched_fuse(Sched *s, int outer, int inner, int *fused);
/* The same when every index uses outer and inner as one contiguous range
 * (coef(outer) == B * coef(inner) in every load and store, no other use):
 * body[a := 0, b := f], no division; else refuses. */
int sched_fuse_flat(Sched *s, int outer, int inner, int *fused);
/* Replaces every loop over var (extent <= 256) by copies of its body. */
int sched_unroll(Sched *s, int var);
/* Marks every loop over var, which must be innermost, FOR_VECTORIZE. */
int sched_vectorize(Sched *s, int var);
/* Marks the loop over var FOR_PARALLEL: its iterations must store to
 * tensor positions that depend on var and read no tensor they write. */
int sched_parallel(Sched *s, int var);
/* Register tile: the listed loops form a perfect band directly around a
 * reduction's scalar accumulator (ST_DECL, optionally under split's guard).
 * The accumulator becomes a local array over the tile, and the tile loops
 * move inside each phase (init, update under the reduce loops, write-back),
 * so the reduce loops run outside the tile. */
int sched_cache_write(Sched *s, int n, const int *tile_vars);
/* Inlines stage `stage` (RED_NONE, default row-major output index, writing
 * a BUF_TEMP) into the later stages' bodies before scheduling, and drops it. */
int sched_compute_inline(Sched *s, int stage);

/* Moves the nest of stage `stage` (a producer writing a BUF_TEMP that later
 * nests read) to the top of the body of the loop over var in a later nest,
 * where it computes only the region of the temp that one iteration of that
 * loop reads: the reads under the loop must have offsets affine in the
 * loops, splitting into in-range indices of the stage's axes, with the same
 * terms over the loop and the loops around it in every read (bound
 * inference, see sched.c). The temp shrinks to the region, indexed relative
 * to its start: a local array (BUF_LOCAL, declared in the loop's body, so
 * private to each iteration of a parallel loop) of up to 256 elements of a
 * compute type, else a smaller temp in the workspace. The original temp
 * becomes BUF_UNUSED. Refuses when the stage's nest is no longer the chain
 * of its axis loops (a reduction whose points would be computed in parts),
 * it reads its own output or another stage writes the temp, some read of
 * the temp lies outside the loop, a nest it moves past writes what it
 * reads, or a workspace region would be shared by a parallel loop. */
int sched_compute_at(Sched *s, int stage, int var);
/* Copies the region of buffer `buf` (read, never written by the kernel)
 * that the nest under the loop over var reads in one iteration into a new
 * buffer of `scope` (BUF_LOCAL: a local array of up to 256 elements declared
 * in the loop's body; BUF_TEMP: workspace scratch, not under a parallel
 * loop) at the top of the loop's body, and redirects those reads to it. The
 * region is bounded per dimension of the buffer's graph value (as for
 * compute_at), else over flat offsets. */
int sched_cache_read(Sched *s, int buf, int var, BufScope scope);

/* Splits every loop over var into border ranges and an interior range in
 * which the bounds tests (selects, clamps, guards) that depend on var are
 * decided, then simplifies. The interior is found from the first loop over
 * var; refuses when no test depends on var or a border exceeds max_border. */
int sched_partition(Sched *s, int var, int max_border);
/* sched_partition that also reports the loop variables of the pieces in
 * order (the first piece keeps var when it starts at 0): at most 3. */
int sched_partition_pieces(Sched *s, int var, int max_border, int *pieces, int *n_pieces);
/* Drops the bounds tests that the loop ranges decide (kernel-wide). */
void sched_simplify(Sched *s);

/* Slot holding the first loop over var under *root (depth first), or NULL. */
Stmt **sched_find_loop(Stmt **root, int var);
/* Extent of the first loop over var, or -1. */
int64_t sched_extent(const Stmt *root, int var);

/* Schedule templates: runs the target family's schedule hook (ir/family.c:
 * template_generic in templates.c, template_arm in templates_arm.c), which
 * picks primitives per stage structure with the target's knobs. A NULL
 * target keeps the naive schedule. */
void template_apply(Lower *L, const Target *t);
/* The packed-panel template for float32 Conv / MatMul / Gemm with constant
 * weights on x86 AVX2/AVX-512 (tpl_packed.c): replaces the kernel's loop
 * nest and returns 0, or returns 1 and leaves it untouched. */
int template_packed(Lower *L, const Target *t);
/* The Winograd transforms' nests (lower/tpl_winograd.c); 0 when taken. */
int tpl_winograd(Lower *L, const Target *t);
/* After template_generic's schedule on x86 (tpl_threads.c): a kernel of
 * little work (elementwise, pooling, layout transforms) runs serially even
 * when built with OpenMP. */
void template_serial_small(Lower *L, const Target *t);
/* After every template (tpl_threads.c): each parallel loop hands its
 * iterations out in chunks of enough work (Stmt.chunk). */
void tpl_parallel_chunks(Lower *L);

#endif
