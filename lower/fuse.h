/*
 * Fusion inside a kernel (fuse.c): removes the buffers between the stages
 * of a fused group by inlining producers into consumers.
 */
#ifndef TVMCC_FUSE_H
#define TVMCC_FUSE_H

#include "te.h"

/* nodes: the group's members; values they produce and only they consume are
 * internal and are inlined where the stage shapes allow. */
void fuse_inline(Lower *L, const int32_t *nodes, int n_nodes);

/* In-place candidates: returns 1 and the buffer indexes when the kernel is
 * one injective stage that reads input buffer *in only at the position it
 * writes in output buffer *out (same size), so *out may reuse *in's memory
 * if *in is not needed afterwards. */
int fuse_inplace_pair(const Kernel *k, int *in, int *out);

/* 1 when the kernel is one injective stage that reads every input at its
 * own output position, up to numpy broadcasting (the elementwise ops): such
 * an op commutes with any permutation of the axes applied to all its
 * operands, which the layout pass relies on. */
int fuse_is_elementwise(const Kernel *k);

#endif
