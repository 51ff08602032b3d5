/*
 * Loop-IR interpreter (eval.c), used by constant folding so that folded
 * values come from the same kernel definitions the emitted C implements.
 */
#ifndef TVMCC_EVAL_H
#define TVMCC_EVAL_H

#include "te.h"

/* Runs k->body. bufs[i] points at the storage of buffer i for every buffer
 * that is not BUF_LOCAL (temps included, sized numel * dtype_size).
 * Returns nonzero if a load or store went out of bounds. */
int lower_eval(const Kernel *k, void **bufs);


#endif
