/*
 * Knobs of the packed-panel template (tpl_packed.c) as data, and their
 * override per kernel workload (tvmcc tune writes a log of them; a later
 * compile with --tuning-log reads it). See docs/architecture.md (Tuning).
 *
 * The template derives default knobs from the target as it always did,
 * then calls knobs_choose() with the workload (op kind and shapes): that
 * records the workload key and knob space in the kernel and replaces the
 * defaults by the knobs of a matching entry of the graph's knob table (GraphSettings.knobs, ir/graph.h) when they
 * are legal for the workload.
 */
#ifndef TVMCC_KNOBS_H
#define TVMCC_KNOBS_H

#include "te.h"
#include "../ir/target.h"

/* Which tile of the template the knobs shape. */
typedef enum TileShape {
    TS_CONV = 1, /* conv: P output positions x V vectors of output channels */
    TS_CONV_POS, /* 1x1 conv over whole planes: P output channels x V vectors of positions */
    TS_DWCONV,   /* depthwise conv: P output rows x V vectors of columns */
    TS_MATMUL,   /* matmul / gemm: P rows x V vectors of columns, L2 groups, L1 blocks */
    TS_GENERIC,  /* generic register tile (templates.c): P = rows; V = 1 */
    TS_CONV_NCHWC, /* conv in blocked channels: P output positions x V whole channel blocks
                      (the last tile of a row may hold fewer blocks) */
    TS_CONV_NCHWC_G /* the same, grouped: V blocks divide a group's */
} TileShape;

typedef struct TileKnobs {
    int P;      /* tile rows (see TileShape) */
    int V;      /* vectors per tile row: 1 or 2 (the fma_tile intrinsic's forms) */
    int64_t G;  /* TS_MATMUL: row tiles per group kept in L2; 0 elsewhere */
    int64_t kc; /* TS_MATMUL: reduction block kept in L1 (K: no blocking); 0 elsewhere */
} TileKnobs;

/* The workload (what a key names) and what legality depends on. */
typedef struct TileSpace {
    TileShape shape;
    int lanes;       /* floats per vector */
    int regs;        /* vector registers */
    int64_t rows;    /* extent tiled by P */
    int64_t cols;    /* extent tiled by V vectors */
    int64_t K;       /* reduction length per output */
    int64_t macs;    /* multiply-accumulates of the kernel */
    int64_t l1_bytes, l2_bytes; /* of the target (defaults when unknown) */
    int vmax;        /* most vectors per tile row the target's tile takes (0: 2) */
} TileSpace;

/* What knobs_choose() leaves in the kernel (Kernel.knobs). */
typedef struct KnobInfo {
    const char *key;   /* workload key: "conv2d:n1,c64,...:float32:TARGET" */
    const char *op;    /* "conv2d", "conv2d_1x1", "dwconv2d", "matmul" */
    TileSpace space;
    TileKnobs dflt;    /* from the target */
    TileKnobs used;    /* what the template applied */
    int from_log;      /* used came from a tuning log */
} KnobInfo;

/* Knob overrides by workload key. */
typedef struct KnobEntry {
    const char *key;
    TileKnobs knobs;
} KnobEntry;

typedef struct KnobTable {
    const char *source;  /* file name, for warnings; NULL: the tuner's candidate */
    int n;
    const KnobEntry *entries;
} KnobTable;

/* Called by the template once its defaults are known: records the workload
 * (key built from op and the shape description `desc`) in L->k and returns
 * the knobs to use in *kn (defaults on entry). */
void knobs_choose(Lower *L, const Target *t, const char *op, const char *desc, const TileSpace *sp,
                  TileKnobs *kn);

/* 1 if kn is legal for the workload; else 0 with a reason in *why. */
int knobs_vmax(const TileSpace *sp);
int knobs_legal(const TileSpace *sp, const TileKnobs *kn, const char **why);

/* Every legal knob setting of the workload (at most max), in a fixed order;
 * returns the count. */
int knobs_enumerate(const TileSpace *sp, TileKnobs *out, int max);

/* Features for the cost model (knobs, tile utilization, working set per
 * cache level, registers, work). Returns the count (<= KNOB_FEATURES). */
#define KNOB_FEATURES 16
int knobs_features(const TileSpace *sp, const TileKnobs *kn, double *f);

/* Vector registers of the target (32 with AVX-512, 16 otherwise when the
 * description does not say). */
int knobs_regs(const Target *t);

#endif
