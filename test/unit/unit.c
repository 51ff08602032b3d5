/*
 * Unit tests for the pieces that are easiest to check in isolation: checked
 * arithmetic, the memory planner (placements never overlap while live, a
 * chain reaches its lower bound), the 16-bit float conversions (the runtime
 * used by emitted code and the interpreter used by folding must agree on
 * all 65536 half values), and the expression builders' folding.
 * Prints one line per failed check and ends with "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/arena.h"
#include "../../ir/dtype.h"
#include "../../lower/eval.h"
#include "../../lower/te.h"
#include "../../passes/plan.h"
#include "../../runtime_min/tvmrt.h"

static int passed, failed;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            passed++;                                                                \
        } else {                                                                     \
            failed++;                                                                \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                   \
        }                                                                            \
    } while (0)

static void test_checked_arith(void)
{
    int64_t r = 0;
    CHECK(ck_mul(INT64_MAX, 2, &r) == 1);
    CHECK(ck_mul(-INT64_MAX, 2, &r) == 1);
    CHECK(ck_mul(1 << 20, 1 << 20, &r) == 0 && r == (int64_t)1 << 40);
    CHECK(ck_mul((int64_t)1 << 32, (int64_t)1 << 31, &r) == 1);
    CHECK(ck_add(INT64_MAX, 1, &r) == 1);
    CHECK(ck_add(INT64_MIN, -1, &r) == 1);
    CHECK(ck_add(5, -7, &r) == 0 && r == -2);
}

/* Placed items that are live at the same time must not share bytes. */
static int plan_is_valid(const PlanItem *it, int n, int64_t arena)
{
    int i, j;
    for (i = 0; i < n; i++) {
        if (it[i].offset < 0 || it[i].offset + it[i].bytes > arena)
            return 0;
        for (j = i + 1; j < n; j++) {
            int live = it[i].first <= it[j].last && it[j].first <= it[i].last;
            int overlap = it[i].offset < it[j].offset + it[j].bytes &&
                          it[j].offset < it[i].offset + it[i].bytes;
            if (live && overlap && it[i].bytes && it[j].bytes)
                return 0;
        }
    }
    return 1;
}

static void test_plan(void)
{
    PlanItem chain[6];
    PlanResult res;
    int i, trial;
    /* a chain: tensor i is written by kernel i and read by kernel i+1 */
    for (i = 0; i < 6; i++) {
        chain[i].bytes = 1024 * (i % 3 + 1);
        chain[i].first = i;
        chain[i].last = i + 1;
    }
    CHECK(plan_memory(chain, 6, 64, &res) == 0);
    CHECK(plan_is_valid(chain, 6, res.arena_bytes));
    CHECK(res.lower_bound_bytes == 5120);
    CHECK(res.arena_bytes == res.lower_bound_bytes);
    /* random live ranges: always valid, never below the lower bound */
    srand(7);
    for (trial = 0; trial < 200; trial++) {
        PlanItem it[24];
        int n = 1 + rand() % 24;
        for (i = 0; i < n; i++) {
            it[i].bytes = 64 * (1 + rand() % 50);
            it[i].first = rand() % 20;
            it[i].last = it[i].first + rand() % 6;
        }
        CHECK(plan_memory(it, n, 64, &res) == 0);
        CHECK(plan_is_valid(it, n, res.arena_bytes));
        CHECK(res.arena_bytes >= res.lower_bound_bytes);
    }
}

static void test_half(void)
{
    unsigned h;
    int mism = 0, rt_mism = 0;
    for (h = 0; h < 65536; h++) {
        float a = tvmrt_f16_to_f32((uint16_t)h), b = dtype_f16_to_f32((uint16_t)h);
        if (!(a == b || (isnan(a) && isnan(b))))
            mism++;
        /* every half survives a round trip, NaN payloads aside */
        if (!isnan(a) && tvmrt_f32_to_f16(a) != h)
            rt_mism++;
    }
    CHECK(mism == 0);
    CHECK(rt_mism == 0);
    /* rounding: agree with the interpreter on many floats */
    mism = 0;
    for (h = 0; h < 200000; h++) {
        float f = ldexpf((float)(h % 4099) - 2049.0f, (int)(h % 40) - 30) * 1.0001f;
        if (tvmrt_f32_to_f16(f) != dtype_f32_to_f16(f) || tvmrt_f32_to_bf16(f) != dtype_f32_to_bf16(f))
            mism++;
    }
    CHECK(mism == 0);
    CHECK(tvmrt_f32_to_f16(65520.0f) == 0x7c00); /* rounds up to infinity */
    CHECK(tvmrt_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(tvmrt_f32_to_f16(5.9604645e-08f) == 0x0001); /* smallest subnormal */
    CHECK(tvmrt_f32_to_bf16(1.0f) == 0x3f80);
}

static void test_builders(void)
{
    Arena a;
    Kernel k;
    Lower L;
    IterVar iv;
    Expr *e;
    arena_init(&a, 0);
    memset(&k, 0, sizeof k);
    L.g = NULL;
    L.d = NULL;
    L.arena = &a;
    L.k = &k;
    iv = lower_itervar(&L, "i", 8);
    e = ex_add(&L, ex_mul(&L, ex_int(&L, 3), ex_int(&L, 4)), ex_int(&L, 0));
    CHECK(e->kind == EX_INT && e->ival == 12);
    e = ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 1));
    CHECK(e->kind == EX_VAR);
    e = ex_add(&L, ex_int(&L, 0), ex_var(&L, &iv));
    CHECK(e->kind == EX_VAR);
    e = ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 0));
    CHECK(e->kind == EX_INT && e->ival == 0);
    e = ex_and(&L, ex_const_int(&L, DT_BOOL, 1), ex_lt(&L, ex_var(&L, &iv), ex_int(&L, 4)));
    CHECK(e->kind == EX_BINARY && e->op == BIN_LT);
    arena_free(&a);
}

int main(void)
{
    test_checked_arith();
    test_plan();
    test_half();
    test_builders();
    printf("unit: %d passed, %d failed\n", passed, failed);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
