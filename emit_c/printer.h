/*
 * The state of printing one NAME.c, passed down to every printer (the
 * first argument of emit_stmt, emit_expr and the target printers of
 * emit_tile.c, emit_intrin.c, emit_arm.c, emit_ctile.c) instead of
 * file-scope variables: emit_c_file() makes one, zeroed, per NAME.c.
 */
#ifndef TVMCC_EMIT_PRINTER_H
#define TVMCC_EMIT_PRINTER_H

#include <stdio.h>

#include "../ir/target.h"
#include "../lower/te.h"

/* Local float32 buffers an Arm vector branch keeps as vector variables. */
#define MAX_REG_LOCALS 8

typedef struct Printer {
    /* chosen once per NAME.c (emit_c_file and the *_begin functions) */
    const TargetFamily *family; /* the target's family (ir/family.c): its print_stmt
                                 * prints loops and declarations with intrinsics */
    int vec_lanes;              /* float32 lanes of x86 intrinsic loops (emit_intrin.c), or 0 */
    int c_portable;             /* NAME.c is for the portable `c` target */
    const char *ctile_upper;    /* on `c`: NAME upper-cased, prefix of the tile macros
                                 * (emit_ctile.c), when a kernel has a tile; else NULL */
    const char *noinline_upper; /* NAME, when kernels are printed NAME_NOINLINE */
    const char *expf;           /* function printed for float32 exp and sigmoid instead
                                 * of expf (the `c` target's inline NAME_expf), or NULL */
    const Target *tile_target;  /* the target whose tile intrinsics emit_tile.c prints */
    int arm_dsp;                /* emit_arm.c: SMLAD pair loops */
    const LaneIntrin *arm_vec;  /* emit_arm.c: the declared "lanes" intrinsic, or NULL */
    int a64_dot;                /* emit_a64q.c: AArch64 NEON int8 nests (the "dot" knob) */
    int a64_in_else;            /* emit_a64q.c: printing the portable branch of one */
    /* per kernel */
    const char *idx_type;       /* C type of loop variables: int32_t, or int64_t for
                                 * loops or buffers of 2^30 elements or more */
    int kernel_tiled;           /* the kernel has a packed tile (emit_ctile.c) */
    /* while a loop nest is printed */
    int in_tile;                /* the body of a FOR_TENSORIZE loop, on `c` */
    const Stmt *offset_row;     /* the row loop of a tile printed through a local copy */
    const Stmt *tile_fallback;  /* the loop whose portable form emit_tile.c prints */
    const Stmt *arm_fallback;   /* the same for emit_arm.c */
    int reg_locals[MAX_REG_LOCALS], n_reg_locals; /* emit_arm.c's vector variables */
    int intrin_lanes;           /* emit_intrin.c: lanes of the loop being printed */
    int intrin_single;          /* its body is one store */
    /* FOR_TENSORIZE nests printed so far that no printer matched (printed
     * as scalar loops), and the depth of matched tiles' portable `#else`
     * branches being printed (emit_c.c's emit_portable: no misses there) */
    int tensorize_missed, in_portable;
} Printer;

/* How a printer prints a statement (emit_c.c's emit_stmt). */
typedef void (*EmitStmtFn)(Printer *pr, FILE *f, const Kernel *k, const Stmt *s, int depth);

#endif
