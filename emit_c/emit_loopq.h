/* Queries on loop IR shared by the intrinsic printers (emit_loopq.c). */
#ifndef TVMCC_EMIT_LOOPQ_H
#define TVMCC_EMIT_LOOPQ_H

#include "../lower/te.h"

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

#endif
