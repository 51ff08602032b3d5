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

#endif
