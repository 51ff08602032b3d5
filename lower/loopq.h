/*
 * Queries on loop IR and tensor expressions, and the substitutions built
 * on them: the one copy that the schedule primitives (sched.c), the naive
 * schedule (schedule.c), the templates (templates.c, templates_arm.c,
 * tpl_*.c) and the emitter's intrinsic printers (emit_c/emit_loopq.h)
 * share. Queries never allocate; substitutions allocate from L->arena and
 * never modify their input.
 */
#ifndef TVMCC_LOOPQ_H
#define TVMCC_LOOPQ_H

#include "te.h"

/* ---- uses ---- */

/* Whether e refers to loop variable var. */
int lq_uses_var(const Expr *e, int var);
/* Whether e loads buffer buf; how many loads of it e holds. */
int lq_loads(const Expr *e, int buf);
int lq_count_loads(const Expr *e, int buf);
/* Whether an expression of s (index, value, condition, at any depth)
 * loads buf; how many loads of it s holds. */
int lq_stmt_loads(const Stmt *s, int buf);
int lq_stmt_count_loads(const Stmt *s, int buf);
/* Whether s loads, stores or declares buf. */
int lq_stmt_uses_buf(const Stmt *s, int buf);
/* Whether s stores buf; *idx (when idx is not NULL) is the index of the
 * first such store. */
int lq_stored_at(const Stmt *s, int buf, const Expr **idx);
/* Whether e loads a buffer that body stores. */
int lq_loads_stored(const Stmt *body, const Expr *e);
/* Whether s holds a loop. */
int lq_has_loop(const Stmt *s);
/* Structural equality of two expressions. */
int lq_same_expr(const Expr *a, const Expr *b);
/* An upper bound of |e| for an integer expression, from its constants,
 * types and + - * (the range of its type where nothing better is known;
 * UINT64_MAX for a float or uint64). */
uint64_t lq_mag(const Expr *e);

/* ---- affine index expressions ---- */

/* Coefficient of var in an affine int64 index (sums, differences and
 * products by constants around its uses); 0 with *ok cleared when the
 * index is not affine in var. */
int64_t lq_coef(const Expr *e, int var, int *ok);
/* Whether idx moves by exactly 1 when var does. */
int lq_unit_stride(const Expr *idx, int var);

#define LQ_MAX_TERMS 24

/* c0 + sum coef[i] * var[i], no zero coefficient, each var once. */
typedef struct LqAffine {
    int n;
    int var[LQ_MAX_TERMS];
    int64_t coef[LQ_MAX_TERMS];
    int64_t c0;
} LqAffine;

/* Whether e is affine in loop variables (an int64 expression of constants
 * and variables under +, - and products by constant subexpressions; terms
 * and constants within 2^40); *out is its form when it is. */
int lq_affine(const Expr *e, LqAffine *out);
/* a += coef * var; nonzero when a has no room for another term. */
int lq_aff_add(LqAffine *a, int var, int64_t coef);
/* Coefficient of var in a (0 when absent). */
int64_t lq_aff_coef(const LqAffine *a, int var);
/* Whether only the listed variables (n of them) occur in a. */
int lq_aff_only(const LqAffine *a, const int *vars, int n);
/* Whether a and b are the same form. */
int lq_same_affine(const LqAffine *a, const LqAffine *b);
/* a as an index expression (terms in a's order). */
Expr *lq_aff_expr(Lower *L, const LqAffine *a);

/* ---- substitution ---- */

/* Copy of e with every variable v that map[v] names (map: one slot per
 * variable id, NULL: kept; map itself may be NULL) replaced by map[v] and,
 * when acc is not NULL, every EX_ACC by acc. Nodes are copied as they are
 * (no folding); the per-dimension indices of loads are substituted too. */
Expr *lq_subst(Lower *L, const Expr *e, Expr *const *map, Expr *acc);
/* Copy of e with variable var replaced by r (var < 0: a copy of the nodes
 * that hold variables). Index arithmetic is rebuilt through ex_binary, so
 * it folds, and a select on a constant keeps its arm. */
Expr *lq_subst_var(Lower *L, const Expr *e, int var, Expr *r);

/* How lq_stmt_rewrite rewrites each expression of a statement tree. */
typedef Expr *(*LqRewrite)(Lower *L, const Expr *e, void *ctx);
/* Deep copy of s with fn applied to every index, value and condition
 * (loops keep their variables). */
Stmt *lq_stmt_rewrite(Lower *L, const Stmt *s, LqRewrite fn, void *ctx);
/* lq_stmt_rewrite with lq_subst(map) and with lq_subst_var(var, r). */
Stmt *lq_stmt_subst(Lower *L, const Stmt *s, Expr *const *map);
Stmt *lq_stmt_subst_var(Lower *L, const Stmt *s, int var, Expr *r);

#endif
