/*
 * The target families: everything in which targets differ in code rather
 * than in numbers or declarations. A target file's "isa" picks its family
 * when the target is loaded (ir/target.c); from then on lower/ and emit_c/
 * ask the family (Target.family) and never look at the isa. This table is
 * the one place that compares isa strings.
 *
 *   portable  c            the generic templates with 8-float tiles kept
 *                          as loops, the packed-panel tiles printed as
 *                          plain C (emit_c/emit_ctile.c); tunable
 *   x86       x86-64       the generic templates; with 256- or 512-bit
 *                          vectors, vector loops of one vector printed as
 *                          <immintrin.h> intrinsics (emit_c/emit_intrin.c)
 *                          and declared tiles; tunable
 *   arm       armv6-m armv7e-m armv8.1-m aarch64
 *                          with an FPU, the Arm register-tile templates
 *                          (lower/templates_arm.c), SMLAD where the knobs
 *                          say dsp, the declared "lanes" vectors
 *                          (emit_c/emit_arm.c); without one, the generic
 *                          templates
 *   generic   generic      an ISA known only through its declarations:
 *                          the generic templates, declared tiles and
 *                          lanes (test/intrin/toyvec.json)
 *
 * Numbers (tile sizes, lanes, unrolling) are not here: they are the
 * "schedule" knobs of each target file. docs/adding-a-target.md says how
 * to add a family.
 */
#include "target.h"

#include <string.h>

/* ---- the "schedule" keys each template reads ---- */

static const char *const generic_keys[] = {"lanes",       "rows",     "unroll_vec",       "pad", "part_vec",
                                           "conv_l1_pct", "dw_nchwc", "no_tile_prefetch", "winograd", NULL};
static const char *const arm_keys[] = {"acc", "lanes", "vec", "unroll_red", "dsp", "int_acc", "int_lanes", NULL};
/* AArch64 adds "dot": its NEON int8 kernels (lower/templates_a64q.c) */
static const char *const a64_keys[] = {"acc", "lanes", "vec", "unroll_red", "dsp", "int_acc", "int_lanes", "dot", NULL};

static const char *const *keys_generic(const Target *t)
{
    return generic_keys;
}

static const char *const *keys_arm(const Target *t)
{
    if (!t->has_fpu)
        return generic_keys;
    return strcmp(t->isa, "aarch64") ? arm_keys : a64_keys;
}

/* ---- which declared intrinsics a family prints ---- */

/* The packed-panel template (lower/tpl_packed.c) builds tiles for 256-bit
 * vectors or wider only. */
static const char *tiles_unprinted(Arena *a, const Target *t, const char **field)
{
    if (t->n_tiles > 0 && t->vector_bits < 256) {
        *field = "vector_bits";
        return "the packed-panel template builds the tiles of a \"tile\" intrinsic for 256-bit vectors or wider";
    }
    return NULL;
}

static const char *lanes_refused(Arena *a, const Target *t, const char **field)
{
    if (t->lane_ops) {
        *field = arena_printf(a, "intrinsics.%s.kind", t->lane_ops->name);
        return "this family prints no \"lanes\" intrinsic (the families arm and generic do)";
    }
    return NULL;
}

static const char *unprinted_tiles_only(Arena *a, const Target *t, const char **field)
{
    const char *why = tiles_unprinted(a, t, field);
    return why ? why : lanes_refused(a, t, field);
}

/* The Arm templates never call the packed-panel template; their vector
 * tiles are loops of exactly `vec` lanes, which the lanes printer takes. */
static const char *unprinted_arm(Arena *a, const Target *t, const char **field)
{
    if (t->n_tiles > 0) {
        *field = arena_printf(a, "intrinsics.%s.kind", t->tiles[0].name);
        return "the arm family prints no \"tile\" intrinsic (its templates build no packed-panel tiles)";
    }
    if (t->lane_ops && !t->has_fpu) {
        *field = "fpu";
        return "a \"lanes\" intrinsic is printed in the vector tiles of the FPU templates: fpu must be 1";
    }
    if (t->lane_ops && t->knobs.vec != t->lane_ops->lanes) {
        *field = "schedule.vec";
        return "the \"lanes\" intrinsic is printed in vector tiles of exactly its lanes: vec must equal them";
    }
    return NULL;
}

/* The generic templates leave whole-vector loops for a "lanes" intrinsic
 * only in the packed-panel template's copies and epilogues. */
static const char *unprinted_generic(Arena *a, const Target *t, const char **field)
{
    const char *why = tiles_unprinted(a, t, field);
    if (why)
        return why;
    if (t->lane_ops && t->n_tiles == 0) {
        *field = arena_printf(a, "intrinsics.%s.kind", t->lane_ops->name);
        return "the generic family prints a \"lanes\" intrinsic only in the loops of the packed-panel "
               "template, which needs a \"tile\" intrinsic too";
    }
    return NULL;
}

/* ---- the table ---- */

static const char *const isas_portable[] = {"c", NULL};
static const char *const isas_x86[] = {"x86-64", NULL};
static const char *const isas_arm[] = {"armv6-m", "armv7e-m", "armv8.1-m", "aarch64", NULL};
static const char *const isas_generic[] = {"generic", NULL};

static const TargetFamily families[] = {
    {"portable", isas_portable, 1, 1, keys_generic, unprinted_tiles_only, template_generic, NULL, NULL,
     NULL},
    {"x86", isas_x86, 0, 1, keys_generic, unprinted_tiles_only, template_generic, emit_intrin_lanes,
     emit_intrin_begin, emit_intrin_stmt},
    {"arm", isas_arm, 0, 0, keys_arm, unprinted_arm, template_arm, NULL, emit_arm_begin, emit_arm_stmt},
    {"generic", isas_generic, 0, 0, keys_generic, unprinted_generic, template_generic, NULL,
     emit_arm_begin, emit_arm_stmt},
};

const TargetFamily *target_family(const char *isa)
{
    size_t i;
    int j;
    for (i = 0; i < sizeof families / sizeof families[0]; i++)
        for (j = 0; families[i].isas[j]; j++)
            if (!strcmp(families[i].isas[j], isa))
                return &families[i];
    return NULL;
}

const char *target_isas(Arena *a)
{
    const char *out = "";
    size_t i;
    int j;
    for (i = 0; i < sizeof families / sizeof families[0]; i++) {
        out = arena_printf(a, "%s%s%s:", out, i ? "; " : "", families[i].name);
        for (j = 0; families[i].isas[j]; j++)
            out = arena_printf(a, "%s %s", out, families[i].isas[j]);
    }
    return out;
}

void target_default_knobs(Target *t)
{
    TargetKnobs *k = &t->knobs;
    memset(k, 0, sizeof *k);
    k->lanes = t->vector_bits / 32 >= 4 ? t->vector_bits / 32 : 2;
    k->rows = k->lanes >= 4 ? 4 : 2;
    k->unroll_vec = 16;
    k->part_vec = 1;
}
