/*
 * Target descriptions. Each target is one JSON file in targets/ (embedded in
 * the binary at build time, see scripts/embedtool.c). A file may be an alias
 * ({"alias": "cortex-m4"}). Fields used so far: isa, vector_bits, fpu,
 * alignment, preferred_layout, cflags (for NAME.mk), cc (suggested compiler),
 * vector_registers, l1_bytes, l2_bytes, intrinsics (names, e.g. ["fma_tile"]).
 */
#ifndef TVMCC_TARGET_H
#define TVMCC_TARGET_H

#include "arena.h"

typedef struct Target {
    const char *name;             /* canonical name, e.g. "cortex-m4" */
    const char *isa;              /* "c", "x86-64", "armv7e-m", "aarch64"... */
    const char *cflags;           /* flags NAME.mk passes to the compiler */
    const char *cc;               /* suggested compiler command */
    const char *preferred_layout; /* "NCHW", "NHWC", "NCHWc" */
    int vector_bits;              /* SIMD width, 0 if none */
    int has_fpu;                  /* single-precision FPU */
    int alignment;                /* arena alignment in bytes */
    int vector_registers;         /* SIMD registers (0: unknown) */
    int64_t l1_bytes;             /* per-core L1 data cache (0: unknown) */
    int64_t l2_bytes;             /* per-core L2 cache (0: unknown) */
    int fma_tile;                 /* declares the `fma_tile` intrinsic: a
                                     broadcast-FMA register tile printed with
                                     <immintrin.h> (emit_c/emit_intrin.c) */
} Target;

/* Load target `name`; on failure returns NULL and writes a message naming the
 * known targets into *err (arena string). */
const Target *target_load(Arena *a, const char *name, const char **err);
/* Space-separated list of known target names, sorted. */
const char *target_names(Arena *a);

#endif
