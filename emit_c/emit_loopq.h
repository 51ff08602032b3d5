/* Queries on loop IR, and the guarded-form helper, shared by the intrinsic
 * printers (emit_loopq.c). */
#ifndef TVMCC_EMIT_LOOPQ_H
#define TVMCC_EMIT_LOOPQ_H

#include <stdio.h>

#include "../lower/te.h"
#include "printer.h"

/* Whether e refers to loop variable var. */
int lq_uses_var(const Expr *e, int var);
/* Coefficient of var in an affine int64 index; 0 with *ok cleared when the
 * index is not affine in var. */
int64_t lq_coef(const Expr *e, int var, int *ok);
/* Whether idx moves by exactly 1 when var does. */
int lq_unit_stride(const Expr *idx, int var);
/* Structural equality of two expressions. */
int lq_same_expr(const Expr *a, const Expr *b);
/* Whether s stores buf; *idx is the index of the first such store. */
int lq_stored_at(const Stmt *s, int buf, const Expr **idx);
/* Whether e loads a buffer that body stores. */
int lq_loads_stored(const Stmt *body, const Expr *e);

/* The portable branch after an intrinsic form printed under `#if GUARD`:
 * prints "#else", s again through emit with *fallback set to s while it
 * prints (the calling printer declines s then, so the branch is the plain
 * C), and "#endif". */
void lq_print_else(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit, const Stmt **fallback);

#endif
