/*
 * The guarded form shared by the printers of target intrinsics
 * (emit_intrin.c for x86, emit_arm.c for Arm). Their queries on loop IR
 * (variable uses, affine coefficients, structural equality, stores) are
 * lower/loopq.c's.
 */
#include "emit_loopq.h"

void lq_print_else(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth, EmitStmtFn emit, const Stmt **fallback)
{
    const Stmt *prev = *fallback;
    fprintf(f, "#else\n");
    *fallback = s;
    emit(pr, f, k, s, depth);
    *fallback = prev;
    fprintf(f, "#endif\n");
}
