/*
 * Knobs of the packed-panel template: workload keys, legality, the knob
 * space, features for the tuner's cost model, and the override table that
 * --tuning-log (and tvmcc tune's candidates) fill. See knobs.h.
 */
#include "knobs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The fma_tile intrinsic (emit_intrin.c) keeps at most 28 rows and takes
 * tiles of one or two vectors per row. */
#define MAX_P 28
/* Stack bytes a matmul's group of accumulator tiles may take. */
#define MAX_ACC_BYTES ((int64_t)128 << 10)

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int knobs_regs(const Target *t)
{
    if (t->vector_registers > 0)
        return t->vector_registers;
    return t->vector_bits >= 512 ? 32 : 16;
}

/* Most vectors per tile row: the target's declared tile (its v axis), 2
 * when the space does not say, never more than 4. */
int knobs_vmax(const TileSpace *sp)
{
    return sp->vmax <= 0 ? 2 : sp->vmax > 4 ? 4 : sp->vmax;
}

int knobs_legal(const TileSpace *sp, const TileKnobs *kn, const char **why)
{
    int64_t VL = (int64_t)kn->V * sp->lanes;
    if (sp->shape == TS_GENERIC) {
        /* rows of one vector (or, unrolled, of lanes scalars) each */
        if (kn->V != 1 || kn->G != 0 || kn->kc != 0)
            return *why = "the generic tile takes P (rows) only: V = 1, G = kc = 0", 0;
        if (kn->P < 1 || kn->P > 16 || (int64_t)kn->P > sp->rows)
            return *why = "P must be in 1..16 and at most the rows of the workload", 0;
        if (kn->P + 3 > sp->regs)
            return *why = "P row accumulators and 3 operands exceed the vector registers", 0;
        return 1;
    }
    if (kn->V < 1 || kn->V > knobs_vmax(sp))
        return *why = knobs_vmax(sp) == 2 ? "V must be 1 or 2" : "V must be in 1..4", 0;
    if (kn->P < 1 || kn->P > MAX_P)
        return *why = "P must be in 1..28", 0;
    if ((int64_t)kn->P > sp->rows)
        return *why = "P exceeds the rows of the workload", 0;
    if (kn->P * kn->V + kn->V + 2 > sp->regs)
        return *why = "P*V accumulators and V operands exceed the vector registers", 0;
    if ((sp->shape == TS_CONV || sp->shape == TS_MATMUL) && kn->P > sp->lanes)
        return *why = "P exceeds one vector of rows (the epilogue stores a tile column as one vector)", 0;
    if ((sp->shape == TS_CONV || sp->shape == TS_MATMUL) && cdiv(sp->cols, VL) * VL > 2 * sp->cols)
        return *why = "V vectors would more than double the packed weights", 0;
    if ((sp->shape == TS_CONV_NCHWC || sp->shape == TS_CONV_NCHWC_G) && sp->cols % sp->lanes != 0)
        return *why = "the output channels must be whole blocks", 0;
    if (sp->shape == TS_CONV_NCHWC_G && sp->cols % VL != 0)
        return *why = "V blocks must divide a group's output channels (a grouped conv's tiles are whole)", 0;
    if (sp->shape != TS_MATMUL) {
        if (kn->G != 0 || kn->kc != 0)
            return *why = "G and kc apply to matmul workloads only", 0;
        return 1;
    }
    if (kn->G < 1 || kn->G > cdiv(sp->rows, kn->P))
        return *why = "G must be in 1..ceil(rows/P)", 0;
    if (kn->kc < 1 || kn->kc > sp->K || sp->K % kn->kc != 0)
        return *why = "kc must divide K", 0;
    if (kn->kc < sp->K && (kn->kc < 16 || kn->G >= cdiv(sp->rows, kn->P) || kn->G * kn->P * VL * 4 > MAX_ACC_BYTES))
        return *why = "kc < K needs kc >= 16, G < ceil(rows/P) and G*P*V*lanes*4 <= 131072 accumulator bytes", 0;
    return 1;
}

int knobs_enumerate(const TileSpace *sp, TileKnobs *out, int max)
{
    static const int64_t kcs[] = {64, 96, 128, 192, 256, 384, 512};
    int n = 0, P, V;
    const char *why;
    for (V = 1; V <= knobs_vmax(sp); V++)
        for (P = 1; P <= MAX_P && !(sp->shape == TS_GENERIC && V > 1); P++) {
            TileKnobs k;
            int64_t T, G;
            size_t i;
            memset(&k, 0, sizeof k);
            k.P = P;
            k.V = V;
            if (sp->shape != TS_MATMUL) {
                if (knobs_legal(sp, &k, &why) && n < max)
                    out[n++] = k;
                continue;
            }
            T = cdiv(sp->rows, P);
            for (G = 1;; G = G * 2 < T ? G * 2 : T) {
                k.G = G;
                k.kc = sp->K;
                if (knobs_legal(sp, &k, &why) && n < max)
                    out[n++] = k;
                for (i = 0; i < sizeof kcs / sizeof kcs[0]; i++) {
                    k.kc = kcs[i];
                    if (kcs[i] < sp->K && knobs_legal(sp, &k, &why) && n < max)
                        out[n++] = k;
                }
                if (G >= T)
                    break;
            }
        }
    return n;
}

static double lg(double x) { return log(x > 1e-30 ? x : 1e-30) / log(2.0); }

int knobs_features(const TileSpace *sp, const TileKnobs *kn, double *f)
{
    double P = kn->P, V = kn->V, VL = V * sp->lanes;
    double rows = (double)sp->rows, cols = (double)sp->cols, K = (double)sp->K;
    double l1 = (double)(sp->l1_bytes > 0 ? sp->l1_bytes : 32768);
    double l2 = (double)(sp->l2_bytes > 0 ? sp->l2_bytes : 1 << 20);
    double kc = kn->kc > 0 ? (double)kn->kc : K, G = kn->G > 0 ? (double)kn->G : 1;
    double tiles = ceil(rows / P) * ceil(cols / VL);
    int i = 0;
    f[i++] = P;
    f[i++] = V;
    f[i++] = (P * V + V) / sp->regs;                 /* register use */
    f[i++] = rows / (ceil(rows / P) * P);            /* row utilization */
    f[i++] = cols / (ceil(cols / VL) * VL);          /* column utilization */
    f[i++] = lg(tiles);
    f[i++] = (P + V) / (P * V);                      /* operand loads per FMA */
    f[i++] = lg(kc * (P + VL) * 4 / l1);             /* tile's operands vs L1 */
    f[i++] = lg(K * (P * G + VL) * 4 / l2);          /* panels vs L2 */
    f[i++] = lg(G);
    f[i++] = lg(K / kc);
    f[i++] = lg((double)(sp->macs > 0 ? sp->macs : 1));
    f[i++] = 1.0 / P;
    f[i++] = 1.0 / V;
    f[i++] = lg(tiles * K * (P + VL) * 4 / l2);      /* bytes streamed per pass vs L2 */
    f[i++] = P * V >= sp->regs / 2 ? 1.0 : 0.0;      /* register pressure */
    return i;
}

void knobs_choose(Lower *L, const Target *t, const char *op, const char *desc, const TileSpace *sp,
                  TileKnobs *kn)
{
    KnobInfo *ki = arena_alloc(L->arena, sizeof *ki);
    const KnobTable *tab = L->g->settings.knobs;
    int i;
    if (!ki)
        die("compile arena exhausted");
    ki->key = arena_printf(L->arena, "%s:%s:float32:%s", op, desc, t->name);
    ki->op = op;
    ki->space = *sp;
    ki->dflt = *kn;
    for (i = 0; tab && i < tab->n; i++) {
        const char *why = NULL;
        if (strcmp(tab->entries[i].key, ki->key) != 0)
            continue;
        if (knobs_legal(sp, &tab->entries[i].knobs, &why)) {
            *kn = tab->entries[i].knobs;
            ki->from_log = tab->source != NULL;
        } else if (tab->source) {
            fprintf(stderr, "tvmcc: warning: %s: knobs for workload %s are not legal (%s); using the defaults\n",
                    tab->source, ki->key, why);
        }
        break;
    }
    ki->used = *kn;
    L->k->knobs = ki;
}
