/*
 * The int8 dot-product tile of the x86 targets (emit_qtile.c), printed
 * with VNNI's vpdpbusd (or an exact vpmaddwd form without VNNI) for the
 * FOR_TENSORIZE nests that lower/tpl_qconv.c builds.
 */
#ifndef TVMCC_EMIT_QTILE_H
#define TVMCC_EMIT_QTILE_H

#include <stdio.h>

#include "../lower/loopq.h"
#include "printer.h"

/* Prints loop as the int8 dot tile and returns 1, or prints nothing and
 * returns 0 when it does not match (pr->vec_lanes: 16 AVX-512, 8 AVX2). */
int emit_qtile_loop(Printer *pr, FILE *f, const Kernel *k, const Stmt *loop, int depth);

#endif
