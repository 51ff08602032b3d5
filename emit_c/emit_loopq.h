/* The guarded-form helper shared by the intrinsic printers (emit_loopq.c),
 * and the loop-IR queries they use (lower/loopq.h). */
#ifndef TVMCC_EMIT_LOOPQ_H
#define TVMCC_EMIT_LOOPQ_H

#include <stdio.h>

#include "../lower/loopq.h"
#include "printer.h"

/* The portable branch after an intrinsic form printed under `#if GUARD`:
 * prints "#else", s again through emit with *fallback set to s while it
 * prints (the calling printer declines s then, so the branch is the plain
 * C), and "#endif". */
void lq_print_else(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit, const Stmt **fallback);

#endif
