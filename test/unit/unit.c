/*
 * Unit tests for the pieces that are easiest to check in isolation: checked
 * arithmetic, the memory planner (placements never overlap while live, a
 * chain reaches its lower bound), the 16-bit float conversions (the runtime
 * used by emitted code and the interpreter used by folding must agree on
 * all 65536 half values; the float-to-integer conversions of constants
 * agree with the runtime's on edge values), the expression builders'
 * folding, and the
 * target files' intrinsic declarations (ir/target.c: the shipped ones
 * parse, and every kind of bad declaration is refused naming the field),
 * and the tuner's pieces: knob legality and enumeration, and the cost model
 * learning a synthetic cost function (its ranking of held-out points
 * correlates with the truth).
 * Prints one line per failed check and ends with "N passed, N failed".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/arena.h"
#include "../../ir/dtype.h"
#include "../../frontend/regex.h"
#include "../../ir/target.h"
#include "../../lower/costmodel.h"
#include "../../frontend/infer.h"
#include "../../lower/eval.h"
#include "../../lower/knobs.h"
#include "../../lower/loopq.h"
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

/* The 8-bit and 4-bit float formats against a reference written from the
 * spec's formulas alone: a pattern's value is (-1)^s 2^(e-bias) (1 + m/2^M)
 * (2^(1-bias) m/2^M when e = 0), and a float converts to the nearest
 * representable value, ties to the even code, with one more code past the
 * largest finite value standing for overflow. Checked on every pattern and
 * on every float16 value, every midpoint and its neighbours, and random
 * floats; the runtime (tvmrt.h) and the compiler (ir/dtype.c) must give the
 * same bits. */
typedef struct RefFmt {
    DType t;
    int eb, mb, bias;
    unsigned maxcode; /* largest finite magnitude code */
} RefFmt;

static const RefFmt ref_fmts[] = {
    {DT_FLOAT8E4M3FN, 4, 3, 7, 0x7e},   {DT_FLOAT8E4M3FNUZ, 4, 3, 8, 0x7f},
    {DT_FLOAT8E5M2, 5, 2, 15, 0x7b},    {DT_FLOAT8E5M2FNUZ, 5, 2, 16, 0x7f},
    {DT_FLOAT4E2M1, 2, 1, 1, 0x7},
};

static double ref_mag(const RefFmt *r, unsigned c)
{
    unsigned e = c >> r->mb, m = c & ((1u << r->mb) - 1);
    if (e == 0)
        return pow(2.0, 1 - r->bias) * m / pow(2.0, r->mb);
    return pow(2.0, (int)e - r->bias) * (1.0 + m / pow(2.0, r->mb));
}

static double ref_decode(const RefFmt *r, unsigned b)
{
    unsigned sbit = 1u << (r->eb + r->mb), c = b & (sbit - 1);
    int fnuz = r->t == DT_FLOAT8E4M3FNUZ || r->t == DT_FLOAT8E5M2FNUZ;
    if (fnuz && b == 0x80)
        return NAN;
    if (r->t == DT_FLOAT8E4M3FN && c == 0x7f)
        return NAN;
    if (r->t == DT_FLOAT8E5M2 && c >= 0x7c)
        return c == 0x7c ? ((b & sbit) ? -INFINITY : INFINITY) : NAN;
    return (b & sbit) ? -ref_mag(r, c) : ref_mag(r, c);
}

static unsigned ref_encode(const RefFmt *r, double x, int sat)
{
    unsigned sbit = 1u << (r->eb + r->mb), c, best = 0, over = r->maxcode + 1;
    int fnuz = r->t == DT_FLOAT8E4M3FNUZ || r->t == DT_FLOAT8E5M2FNUZ, neg = signbit(x) != 0;
    double a = fabs(x), bestd = INFINITY, top = ref_mag(r, r->maxcode);
    double over_v = 2 * top - ref_mag(r, r->maxcode - 1);
    if (r->t == DT_FLOAT4E2M1)
        sat = 1;
    if (isnan(x))
        return r->t == DT_FLOAT4E2M1 ? 0x8 : fnuz ? 0x80 : r->t == DT_FLOAT8E5M2 ? (neg ? sbit : 0) | 0x7e :
               (neg ? sbit : 0) | 0x7f;
    if (a >= over_v) { /* infinity too; (far above, the differences round equal) */
        best = over;
    } else {
        for (c = 0; c <= over; c++) {
            double v = c == over ? over_v : ref_mag(r, c), dd = fabs(a - v);
            if (dd < bestd || (dd == bestd && (c & 1) == 0)) {
                bestd = dd;
                best = c;
            }
        }
    }
    if (best == over) {
        if (sat)
            best = r->maxcode;
        else if (r->t == DT_FLOAT8E5M2)
            return (neg ? sbit : 0) | 0x7c;
        else
            return fnuz ? 0x80 : (neg ? sbit : 0) | 0x7f;
    }
    if (best == 0 && fnuz)
        return 0;
    return (neg ? sbit : 0) | best;
}

static unsigned rt_encode(DType t, float f)
{
    switch (t) {
    case DT_FLOAT8E4M3FN: return tvmrt_f32_to_f8e4m3fn(f);
    case DT_FLOAT8E4M3FNUZ: return tvmrt_f32_to_f8e4m3fnuz(f);
    case DT_FLOAT8E5M2: return tvmrt_f32_to_f8e5m2(f);
    case DT_FLOAT8E5M2FNUZ: return tvmrt_f32_to_f8e5m2fnuz(f);
    case DT_FLOAT8E8M0: return tvmrt_f32_to_f8e8m0(f);
    default: return tvmrt_f32_to_f4e2m1(f);
    }
}

static float rt_decode(DType t, unsigned b)
{
    switch (t) {
    case DT_FLOAT8E4M3FN: return tvmrt_f8e4m3fn_to_f32((uint8_t)b);
    case DT_FLOAT8E4M3FNUZ: return tvmrt_f8e4m3fnuz_to_f32((uint8_t)b);
    case DT_FLOAT8E5M2: return tvmrt_f8e5m2_to_f32((uint8_t)b);
    case DT_FLOAT8E5M2FNUZ: return tvmrt_f8e5m2fnuz_to_f32((uint8_t)b);
    case DT_FLOAT8E8M0: return tvmrt_f8e8m0_to_f32((uint8_t)b);
    default: return tvmrt_f4e2m1_to_f32((uint8_t)b);
    }
}

static int same_float(double a, double b)
{
    return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* One float through the three encoders, saturating (the clamp of
 * lower_f8_saturate in front of the store's conversion) and not. */
static int check_encode(const RefFmt *r, float f)
{
    int bad = 0;
    float m = (float)dtype_f8_max(r->t), cl = f > m ? m : f < -m ? -m : f;
    unsigned want = ref_encode(r, f, 0), wsat = ref_encode(r, f, 1);
    if (isnan(f) && r->t == DT_FLOAT8E5M2) { /* any NaN of the input's sign (payloads are kept) */
        unsigned x = dtype_f32_to_f8(r->t, f), y = rt_encode(r->t, f);
        return !isnan(ref_decode(r, x)) || x != y || (x & 0x80) != (want & 0x80);
    }
    bad += dtype_f32_to_f8(r->t, f) != want;
    bad += rt_encode(r->t, f) != want;
    bad += dtype_f32_to_f8(r->t, cl) != wsat;
    bad += rt_encode(r->t, cl) != wsat;
    if (bad && getenv("UNIT_DEBUG"))
        printf("%d %.9g (%a): want %02x sat %02x; got %02x %02x sat %02x %02x\n", (int)r->t, (double)f, (double)f,
               want, wsat, dtype_f32_to_f8(r->t, f), rt_encode(r->t, f), dtype_f32_to_f8(r->t, cl), rt_encode(r->t, cl));
    return bad;
}

static void test_small_floats(void)
{
    size_t k;
    unsigned b, h;
    for (k = 0; k < sizeof ref_fmts / sizeof *ref_fmts; k++) {
        const RefFmt *r = &ref_fmts[k];
        unsigned n = 1u << (1 + r->eb + r->mb);
        int dec_bad = 0, enc_bad = 0, rt_bad = 0;
        for (b = 0; b < n; b++) {
            double want = ref_decode(r, b);
            float a = dtype_f8_to_f32(r->t, b), c = rt_decode(r->t, b);
            dec_bad += !same_float(a, want) || !same_float(c, want);
            /* every non-NaN pattern survives the round trip */
            if (!isnan(want) && (dtype_f32_to_f8(r->t, a) != b || rt_encode(r->t, a) != b))
                rt_bad++;
            /* the midpoint to the next pattern and its neighbours */
            if (!isnan(want) && !isinf(want) && (b & ((n >> 1) - 1)) < r->maxcode) {
                double mid = (want + ref_decode(r, b + 1)) / 2;
                float fm = (float)mid;
                enc_bad += check_encode(r, fm);
                enc_bad += check_encode(r, nextafterf(fm, INFINITY));
                enc_bad += check_encode(r, nextafterf(fm, -INFINITY));
            }
        }
        for (h = 0; h < 65536; h++)
            enc_bad += check_encode(r, dtype_f16_to_f32((uint16_t)h));
        srand(7);
        for (h = 0; h < 100000; h++) {
            uint32_t bits = ((uint32_t)rand() << 16) ^ (uint32_t)rand();
            float f;
            memcpy(&f, &bits, 4);
            if (!isnan(f))
                enc_bad += check_encode(r, f);
        }
        enc_bad += check_encode(r, INFINITY) + check_encode(r, -INFINITY) + check_encode(r, NAN) +
                   check_encode(r, -NAN) + check_encode(r, 0.0f) + check_encode(r, -0.0f);
        CHECK(dec_bad == 0);
        CHECK(rt_bad == 0);
        CHECK(enc_bad == 0);
    }
    /* float8e8m0: 2^(b - 127), 0xff NaN; encoding rounds up to a power of two
     * and saturates */
    {
        int bad = 0;
        for (b = 0; b < 256; b++) {
            double want = b == 255 ? NAN : pow(2.0, (int)b - 127);
            bad += !same_float(dtype_f8_to_f32(DT_FLOAT8E8M0, b), want);
            bad += !same_float(rt_decode(DT_FLOAT8E8M0, b), want);
            if (b < 255)
                bad += dtype_f32_to_f8(DT_FLOAT8E8M0, (float)want) != b ||
                       rt_encode(DT_FLOAT8E8M0, (float)want) != b;
        }
        for (h = 0; h < 100000; h++) {
            uint32_t bits = (((uint32_t)rand() << 16) ^ (uint32_t)rand()) & 0x7fffffffu;
            float f;
            unsigned want;
            memcpy(&f, &bits, 4);
            if (isnan(f))
                want = 0xff;
            else if (f > ldexpf(1.0f, 127))
                want = 0xfe;
            else
                for (want = 0; ldexp(1.0, (int)want - 127) < (double)f; want++)
                    ;
            bad += dtype_f32_to_f8(DT_FLOAT8E8M0, f) != want || rt_encode(DT_FLOAT8E8M0, f) != want;
        }
        CHECK(bad == 0);
    }
    /* float8e8m0's other round modes (Cast round_mode down / nearest, and
     * without saturation): the runtime and the compiler agree everywhere,
     * and on normal floats x = m 2^k (1 <= m < 2) they give 2^k (down),
     * 2^(k+1) when m >= 1.5 else 2^k (nearest), 2^(k+1) when m > 1 (up);
     * past 2^127 saturation keeps 2^127, without it the result is NaN */
    {
        int bad = 0, mode;
        for (h = 0; h < 300000; h++) {
            uint32_t bits = ((uint32_t)rand() << 16) ^ (uint32_t)rand();
            float f;
            if (h < 65536)
                f = dtype_f16_to_f32((uint16_t)h);
            else
                memcpy(&f, &bits, 4);
            for (mode = 0; mode < 4; mode++) {
                float a = dtype_e8m0_round(f, mode), rb = tvmrt_e8m0_round(f, mode);
                bad += !same_float(a, rb);
                if (isnormal(f) && !isnan(a)) {
                    int ke;
                    double m = 2 * frexp(fabs((double)f), &ke), want;
                    ke--;
                    want = ldexp(1.0, ke);
                    if ((mode == 1 || mode == 2) ? m >= 1.5 : mode == 3 ? m > 1 : 0)
                        want *= 2;
                    if (want > ldexp(1.0, 127))
                        want = mode == 1 ? ldexp(1.0, 127) : NAN;
                    bad += !same_float(a, want);
                } else if (isnormal(f)) {
                    bad += !(mode != 0 && mode != 1 && fabs(f) > ldexpf(1.0f, 127));
                }
            }
        }
        CHECK(bad == 0);
    }
}

/* Packed 4-bit and 2-bit elements: the runtime's and the compiler's loads
 * and stores agree with the layout ONNX specifies (element i of a byte at
 * bits (i % per) * bits, little end first), on all bytes and positions. */
static void test_packed(void)
{
    static const DType ts[] = {DT_UINT4, DT_INT4, DT_UINT2, DT_INT2, DT_FLOAT4E2M1};
    size_t k;
    int bad = 0;
    for (k = 0; k < sizeof ts / sizeof *ts; k++) {
        DType t = ts[k];
        int bits = t == DT_UINT2 || t == DT_INT2 ? 2 : 4, per = 8 / bits, i;
        unsigned byte, v;
        for (byte = 0; byte < 256; byte++) {
            for (i = 0; i < per; i++) {
                uint8_t buf[3] = {0x5a, (uint8_t)byte, 0xa5}, b2[3], b3[3];
                unsigned field = (byte >> (i * bits)) & ((1u << bits) - 1);
                int want = (t == DT_INT4 || t == DT_INT2) && field >= (1u << (bits - 1)) ?
                           (int)field - (1 << bits) : (int)field;
                int64_t idx = per + i;
                int rt;
                switch (t) {
                case DT_UINT4: rt = tvmrt_ld_u4(buf, idx); break;
                case DT_INT4: rt = tvmrt_ld_i4(buf, idx); break;
                case DT_UINT2: rt = tvmrt_ld_u2(buf, idx); break;
                case DT_INT2: rt = tvmrt_ld_i2(buf, idx); break;
                default: rt = (int)tvmrt_f32_to_f4e2m1(tvmrt_ld_f4e2m1(buf, idx)); break;
                }
                bad += rt != want && t != DT_FLOAT4E2M1;
                bad += t == DT_FLOAT4E2M1 && rt != (int)field;
                bad += dtype_packed_get(t, buf, idx) != want;
                for (v = 0; v < (1u << bits); v++) {
                    memcpy(b2, buf, 3);
                    memcpy(b3, buf, 3);
                    switch (t) {
                    case DT_UINT4: tvmrt_st_u4(b2, idx, v + 16u); break; /* high bits dropped */
                    case DT_INT4: tvmrt_st_i4(b2, idx, (int32_t)v - 32); break;
                    case DT_UINT2: tvmrt_st_u2(b2, idx, v + 4u); break;
                    case DT_INT2: tvmrt_st_i2(b2, idx, (int32_t)v - 8); break;
                    default: tvmrt_st_f4e2m1(b2, idx, tvmrt_f4e2m1_to_f32((uint8_t)v)); break;
                    }
                    dtype_packed_set(t, b3, idx, (int)v);
                    bad += b2[0] != 0x5a || b2[2] != 0xa5 || b3[0] != 0x5a || b3[2] != 0xa5;
                    bad += b2[1] != (uint8_t)((byte & ~(((1u << bits) - 1) << (i * bits))) | (v << (i * bits)));
                    bad += b3[1] != b2[1];
                }
            }
        }
    }
    CHECK(bad == 0);
    CHECK(dtype_nbytes(DT_INT4, 25) == 13 && dtype_nbytes(DT_UINT2, 7) == 2 &&
          dtype_nbytes(DT_FLOAT8E4M3FN, 7) == 7);
}

/* dtype_float_to_int (lowering's and folding's float constants to integer
 * types) converts as the emitted code does through the runtime helpers;
 * dtype_double_fits accepts exactly the values that truncate into a type. */
static void test_float_to_int(void)
{
    static const double xs[] = {
        0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 127.9, 128.0, -129.0, 255.5, 65535.0, 2147483647.0,
        2147483647.5, 2147483648.0, -2147483648.0, -2147483648.9, -2147483649.0, 3e9, -3e9,
        4294967296.0, 9223372036854774784.0, 9223372036854775808.0, -9223372036854775808.0,
        -9223372036854777856.0, 18446744073709549568.0, 18446744073709551616.0, 1e30, -1e30,
        -7.8e33, HUGE_VAL, -HUGE_VAL, NAN,
    };
    size_t i;
    int mism = 0;
    for (i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        double x = xs[i];
        uint64_t u = tvmrt_f64_to_u64(x), du;
        int64_t r = dtype_float_to_int(DT_UINT64, x);
        memcpy(&du, &r, sizeof du);
        mism += dtype_float_to_int(DT_INT32, x) != tvmrt_f64_to_i32(x);
        mism += dtype_float_to_int(DT_INT8, x) != tvmrt_f64_to_i32(x);
        mism += dtype_float_to_int(DT_UINT16, x) != tvmrt_f64_to_i32(x);
        mism += dtype_float_to_int(DT_INT64, x) != tvmrt_f64_to_i64(x);
        mism += dtype_float_to_int(DT_UINT32, x) != tvmrt_f64_to_i64(x);
        mism += du != u;
        if (mism)
            printf("float_to_int: %d mismatches at %g\n", mism, x);
        CHECK(mism == 0);
        mism = 0;
        CHECK(dtype_double_fits(DT_FLOAT32, x));
        CHECK(!dtype_double_fits(DT_INT64, x) ==
              !(x >= -9223372036854775808.0 && x < 9223372036854775808.0));
    }
    CHECK(dtype_float_to_int(DT_INT32, NAN) == 0);
    CHECK(dtype_float_to_int(DT_INT32, -7.8e33) == INT32_MIN);
    CHECK(dtype_float_to_int(DT_INT64, 1e30) == INT64_MAX);
    CHECK(dtype_float_to_int(DT_UINT64, 1e30) == -1);
    CHECK(dtype_float_to_int(DT_UINT64, -1.0) == -1); /* through int64, then wraps */
    CHECK(dtype_float_to_int(DT_INT8, -1.9) == -1);
    CHECK(dtype_double_fits(DT_INT8, 127.9) && !dtype_double_fits(DT_INT8, 128.0));
    CHECK(dtype_double_fits(DT_INT8, -128.9) && !dtype_double_fits(DT_INT8, -129.0));
    CHECK(dtype_double_fits(DT_UINT8, -0.5) && !dtype_double_fits(DT_UINT8, -1.0));
    CHECK(dtype_double_fits(DT_UINT8, 255.5) && !dtype_double_fits(DT_UINT8, 256.0));
    CHECK(dtype_double_fits(DT_INT32, -2147483648.9) && !dtype_double_fits(DT_INT32, 2147483648.0));
    CHECK(dtype_double_fits(DT_UINT64, 18446744073709549568.0));
    CHECK(!dtype_double_fits(DT_UINT64, 18446744073709551616.0));
    CHECK(!dtype_double_fits(DT_INT32, NAN) && !dtype_double_fits(DT_INT64, -HUGE_VAL));
    CHECK(!dtype_double_fits(DT_STRING, 0.0));
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
    /* constant div, mod (C's truncation) and comparisons */
    e = ex_binary(&L, BIN_DIV, ex_int(&L, -7), ex_int(&L, 2));
    CHECK(e->kind == EX_INT && e->ival == -3);
    e = ex_binary(&L, BIN_MOD, ex_int(&L, -7), ex_int(&L, 2));
    CHECK(e->kind == EX_INT && e->ival == -1);
    e = ex_binary(&L, BIN_DIV, ex_int(&L, 7), ex_int(&L, 0));
    CHECK(e->kind == EX_BINARY); /* left to run time */
    e = ex_binary(&L, BIN_EQ, ex_int(&L, 1), ex_int(&L, 0));
    CHECK(e->kind == EX_INT && e->dtype == DT_BOOL && e->ival == 0);
    e = ex_binary(&L, BIN_GE, ex_int(&L, 3), ex_int(&L, 3));
    CHECK(e->kind == EX_INT && e->dtype == DT_BOOL && e->ival == 1);
    /* (v*m + c) % m and / m, 0 <= c < m (the Winograd output tiles) */
    e = ex_binary(&L, BIN_MOD, ex_add(&L, ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 2)), ex_int(&L, 1)), ex_int(&L, 2));
    CHECK(e->kind == EX_INT && e->ival == 1);
    e = ex_binary(&L, BIN_DIV, ex_add(&L, ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 2)), ex_int(&L, 1)), ex_int(&L, 2));
    CHECK(e->kind == EX_VAR && e->var == iv.var);
    e = ex_binary(&L, BIN_MOD, ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 4)), ex_int(&L, 4));
    CHECK(e->kind == EX_INT && e->ival == 0);
    /* not that form: c >= m, a coefficient other than m, a negative c */
    e = ex_binary(&L, BIN_MOD, ex_add(&L, ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 2)), ex_int(&L, 2)), ex_int(&L, 2));
    CHECK(e->kind == EX_BINARY);
    e = ex_binary(&L, BIN_DIV, ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 4)), ex_int(&L, 2));
    CHECK(e->kind == EX_BINARY);
    e = ex_binary(&L, BIN_MOD, ex_add(&L, ex_mul(&L, ex_var(&L, &iv), ex_int(&L, 2)), ex_int(&L, -1)), ex_int(&L, 2));
    CHECK(e->kind == EX_BINARY);
    /* lq_subst_var refolds a comparison whose sides become constants */
    e = ex_binary(&L, BIN_EQ, ex_binary(&L, BIN_MOD, ex_var(&L, &iv), ex_int(&L, 2)), ex_int(&L, 0));
    CHECK(e->kind == EX_BINARY);
    e = lq_subst_var(&L, e, iv.var, ex_int(&L, 5));
    CHECK(e->kind == EX_INT && e->ival == 0);
    arena_free(&a);
}

/* The shape checks of tvmcc's Winograd operators (frontend/infer_winograd.c),
 * which only passes/winograd.c makes. */
static void test_winograd_infer(void)
{
    Arena a;
    Graph *g;
    Diag d;
    ConvWindow win;
    int32_t x, ni, no, v[16], y, i;
    arena_init(&a, 0);
    g = graph_new(&a, "winograd");
    diag_init(&d, "winograd.onnx");
    d.quiet = 1;
    x = graph_add_value(g, "x");
    g->values[x].dtype = DT_FLOAT32;
    g->values[x].rank = 5;
    g->values[x].dims[0] = 2;
    g->values[x].dims[1] = 4;
    g->values[x].dims[2] = 13;
    g->values[x].dims[3] = 11;
    g->values[x].dims[4] = 8;
    memset(&win, 0, sizeof win);
    win.nsp = 2;
    win.out[0] = 13; /* pads 0 and 2: 13 + 2 - 2 */
    win.out[1] = 11;
    ni = graph_add_node(g, OP_WinogradInput, "in", 1, 16);
    node_set_params(g, &g->nodes[ni], PARAMS_WINDOW, &win, sizeof win);
    g->nodes[ni].in[0] = x;
    for (i = 0; i < 16; i++) {
        v[i] = graph_add_value(g, "v");
        g->nodes[ni].out[i] = v[i];
        g->values[v[i]].producer = ni;
    }
    CHECK(infer_WinogradInput(g, &g->nodes[ni], &d) == 0);
    /* 2 images of 7 x 6 tiles, 32 channels */
    CHECK(g->values[v[15]].rank == 2 && g->values[v[15]].dims[0] == 84 && g->values[v[15]].dims[1] == 32);
    y = graph_add_value(g, "y");
    g->values[y].dtype = DT_FLOAT32;
    g->values[y].rank = 5;
    g->values[y].dims[0] = 2;
    g->values[y].dims[1] = 4;
    g->values[y].dims[2] = 13;
    g->values[y].dims[3] = 11;
    g->values[y].dims[4] = 8;
    no = graph_add_node(g, OP_WinogradOutput, "out", 16, 1);
    for (i = 0; i < 16; i++)
        g->nodes[no].in[i] = v[i]; /* [84, 32]: 32 output channels */
    g->nodes[no].out[0] = y;
    CHECK(infer_WinogradOutput(g, &g->nodes[no], &d) == 0 && d.errors == 0);
    g->values[y].dims[2] = 15; /* 8 tile rows: 96 tiles */
    CHECK(infer_WinogradOutput(g, &g->nodes[no], &d) != 0 && d.errors == 1);
    g->values[y].dims[2] = 13;
    g->nodes[no].in[7] = x; /* not [T, K] */
    CHECK(infer_WinogradOutput(g, &g->nodes[no], &d) != 0 && d.errors == 2);
    arena_free(&a);
}

/* A good tile declaration for an 8-lane target of the generic family;
 * the refusal cases below each change one piece of it (first occurrence
 * of `from` -> `to`). */
static const char tile_base[] =
    "{\"isa\": \"generic\", \"vector_bits\": 256, \"intrinsics\": {\"t\": {"
    "\"kind\": \"tile\", \"compute\": \"acc[p,v] = acc[p,v] + a[p] * b[p,v]\","
    "\"axes\": {\"p\": {\"min\": 1, \"max\": 8}, \"v\": {\"min\": 8, \"max\": 16, \"multiple_of\": 8}},"
    "\"lanes\": 8, \"vector_type\": \"v4\", \"header\": [\"#include <v4.h>\"],"
    "\"c\": {\"load\": \"v4_ld($ptr)\", \"store\": \"v4_st($ptr, $x)\", \"broadcast\": \"v4_dup($x)\","
    "\"fma\": \"v4_fma($acc, $a, $b)\"}}}}";

/* Parses tile_base with one substitution; returns the error (NULL when
 * it parsed). */
static const char *tile_variant(Arena *a, const char *from, const char *to, const Target **out)
{
    const char *err = NULL, *at = strstr(tile_base, from);
    char *json;
    const Target *t;
    if (!at)
        return "(test bug: substring not found)";
    json = arena_printf(a, "%.*s%s%s", (int)(at - tile_base), tile_base, to, at + strlen(from));
    t = target_parse(a, "test/toy.json", "toy", json, strlen(json), &err);
    if (out)
        *out = t;
    return t ? NULL : err;
}

/* The refusal names the file and the field (and says why: `why`). */
static int refused(Arena *a, const char *from, const char *to, const char *field, const char *why)
{
    const char *err = tile_variant(a, from, to, NULL);
    int ok = err && strstr(err, "test/toy.json") && strstr(err, field) && strstr(err, why);
    if (!ok)
        printf("  refusal of %s -> %s: got \"%s\"\n", from, to, err ? err : "(accepted)");
    return ok;
}

static void test_target_decls(void)
{
    Arena a;
    const Target *t;
    const char *err = NULL, *names, *p;
    char name[64];
    arena_init(&a, 0);
    /* every shipped target loads; the x86 AVX ones declare fma_tile */
    names = target_names(&a);
    for (p = names; *p;) {
        size_t n = strcspn(p, " ");
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        t = target_load(&a, name, &err);
        CHECK(t != NULL);
        if (t && (!strcmp(name, "x86-64-avx512") || !strcmp(name, "x86-64-avx2")))
            CHECK(t->n_tiles == 1 && t->fma_tile && !strcmp(t->tiles[0].name, "fma_tile") &&
                  t->tiles[0].lanes == t->vector_bits / 32);
        else if (t)
            CHECK(t->n_tiles == 0 && !t->fma_tile);
        /* AArch64 and the M55 declare their lane-wise vectors: NEON with a
         * divide, MVE without */
        if (t && (!strcmp(name, "aarch64") || !strcmp(name, "aarch64-dotprod")))
            CHECK(t->lane_ops && !strcmp(t->lane_ops->name, "NEON") && t->lane_ops->lanes == 4 &&
                  t->lane_ops->tpl[LT_DIV] && t->lane_ops->tpl[LT_FMA_SCALAR] && t->knobs.dot == 1);
        else if (t && !strcmp(name, "cortex-m55"))
            CHECK(t->lane_ops && !strcmp(t->lane_ops->name, "MVE") && !t->lane_ops->tpl[LT_DIV]);
        else if (t)
            CHECK(!t->lane_ops);
        p += n;
        while (*p == ' ')
            p++;
    }
    CHECK(!target_load(&a, "no-such-target", &err) && strstr(err, "unknown target"));
    CHECK(!target_known("no-such-target") && target_known("c"));

    /* the base parses into the pattern the matcher walks */
    CHECK(tile_variant(&a, "\"t\"", "\"t\"", &t) == NULL);
    if (t) {
        const TileIntrin *ti = &t->tiles[0];
        CHECK(t->n_tiles == 1 && ti->lanes == 8 && ti->reduce_loops == 3 && !strcmp(ti->ctype, "float"));
        CHECK(!strcmp(ti->axes[0].name, "p") && !strcmp(ti->axes[1].name, "v") && ti->axes[1].multiple == 8);
        CHECK(!strcmp(ti->role_name[TILE_ACC], "acc") && !strcmp(ti->role_name[TILE_BCAST], "a") &&
              !strcmp(ti->role_name[TILE_VEC], "b"));
        CHECK(ti->value->kind == TPAT_ADD && ti->value->a->role == TILE_ACC && ti->value->b->kind == TPAT_MUL &&
              ti->value->b->a->axes == 1u && ti->value->b->b->axes == 3u);
        CHECK(!strcmp(ti->header, "#include <v4.h>") && !ti->guard && !*ti->loop_prefix);
    }
    /* the other order of the sum, parentheses, an operand on no axis */
    {
        const char *e = tile_variant(&a, "\"kind\": \"tile\", \"compute\": \"acc[p,v] = acc[p,v] + a[p] * b[p,v]\"",
                                     "\"kind\": \"tile\", \"compute\": \"acc[p,v] = (a[] * b[v]) + acc[p,v]\"", &t);
        CHECK(e == NULL && t && t->tiles[0].value->a->kind == TPAT_MUL && t->tiles[0].value->b->role == TILE_ACC &&
              t->tiles[0].value->a->a->axes == 0u && t->tiles[0].value->a->b->axes == 2u);
    }

    /* refusals, each naming the field: the declaration with FROM replaced
     * by TO is refused with a message naming FIELD and saying WHY */
    {
        static const struct { const char *from, *to, *field, *why; } bad[] = {
            {"\"t\": {", "\"t\": {\"vectortype\": 1, ", "intrinsics.t.vectortype", "unknown field"},
            {"\"kind\": \"tile\"", "\"kind\": \"mesh\"", "intrinsics.t.kind", "must be"},
            {"\"compute\": \"acc[p,v] = acc[p,v] + a[p] * b[p,v]\",", "", "intrinsics.t.compute", "missing"},
            {"a[p] * b[p,v]", "a[p] *", "intrinsics.t.compute", "expected a name"},
            {"a[p] * b[p,v]", "a[p * b[p,v]", "intrinsics.t.compute", "expected ']'"},
            {"acc[p,v] = acc", "acc[p,v] acc", "intrinsics.t.compute", "expected '='"},
            {"a[p] * b[p,v]", "a[p] * b[p,v] )", "intrinsics.t.compute", "unexpected text"},
            {"a[p] * b[p,v]", "a[q] * b[p,v]", "intrinsics.t.compute", "unknown axis"},
            {"a[p] * b[p,v]", "a[p,v] * b[p,v]", "intrinsics.t.compute", "exactly one operand"},
            {"a[p] * b[p,v]", "a[p] * acc[p,v]", "intrinsics.t.compute", "distinct names"},
            {"acc[p,v] + a[p] * b[p,v]", "a[p] * b[p,v]", "intrinsics.t.compute", "not a sum"},
            {"acc[p,v] + a[p]", "acc[p] + a[p]", "intrinsics.t.compute", "accumulator"},
            {"acc[p,v] =", "acc[p] =", "intrinsics.t.compute", "two axes"},
            {"\"lanes\": 8", "\"lanes\": 4", "intrinsics.t.lanes", "vector_bits"},
            {"\"lanes\": 8,", "", "intrinsics.t.lanes", "missing"},
            {"\"multiple_of\": 8", "\"multiple_of\": 4", "intrinsics.t.axes.v.multiple_of", "multiple of lanes"},
            {"\"p\": {\"min\": 1, \"max\": 8}, ", "", "intrinsics.t.axes.p", "missing"},
            {"\"max\": 8}", "\"max\": 0}", "intrinsics.t.axes.p.max", "integer"},
            {"\"axes\": {", "\"axes\": {\"q\": {}, ", "intrinsics.t.axes.q", "not an axis"},
            {"\"vector_type\": \"v4\",", "", "intrinsics.t.vector_type", "missing"},
            {"v4_ld($ptr)", "v4_ld($pointer)", "intrinsics.t.c.load", "unknown placeholder '$pointer'"},
            {"v4_st($ptr, $x)", "v4_st($ptr)", "intrinsics.t.c.store", "$x is missing"},
            {"v4_dup($x)", "v4_dup($ x)", "intrinsics.t.c.broadcast", "'$' not followed"},
            {"v4_fma($acc, $a, $b)", "v4_fma($acc, $a, $w)", "intrinsics.t.c.fma", "unknown placeholder '$w'"},
            {",\"fma\": \"v4_fma($acc, $a, $b)\"", "", "intrinsics.t.c.fma", "missing"},
            {"\"broadcast\"", "\"zero\": \"v4_zero()\", \"broadcast\"", "intrinsics.t.c.zero", "unknown template"},
            {"\"header\": [\"#include <v4.h>\"]", "\"header\": 3", "intrinsics.t.header", "string"},
            {"\"header\"", "\"guard\": \"\", \"header\"", "intrinsics.t.guard", "preprocessor"},
            {"\"intrinsics\": {\"t\": {", "\"intrinsics\": [\"fma_tile\"], \"x\": {\"t\": {", "intrinsics", "must be an object"},
            {"{\"isa\"", "{\"isa\": }", "test/toy.json", "not valid JSON"},
        };
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
            CHECK(refused(&a, bad[i].from, bad[i].to, bad[i].field, bad[i].why));
    }

    /* lane-wise declarations ("kind": "lanes") */
    {
        static const char lanes_ok[] =
            "{\"isa\": \"aarch64\", \"vector_bits\": 128, \"schedule\": {\"acc\": 16, \"vec\": 4},"
            "\"intrinsics\": {\"L\": {\"kind\": \"lanes\", \"lanes\": 4,"
            "\"vector_type\": \"v4\", \"guard\": \"defined(V4)\", \"c\": {\"load\": \"ld($ptr)\","
            "\"store\": \"st($ptr, $x)\", \"broadcast\": \"dup($x)\", \"add\": \"add($a, $b)\","
            "\"sub\": \"sub($a, $b)\", \"mul\": \"mul($a, $b)\", \"min\": \"mn($a, $b)\","
            "\"max\": \"mx($a, $b)\", \"fma_scalar\": \"fman($acc, $a, $x)\"}}}}";
        struct { const char *from, *to, *field, *why; } bad[] = {
            {"\"guard\": \"defined(V4)\", ", "", "intrinsics.L.guard", "missing"},
            {"\"min\": \"mn($a, $b)\",", "", "intrinsics.L.c.min", "missing"},
            {"\"add\": \"add($a, $b)\"", "\"add\": \"add($a, $c)\"", "intrinsics.L.c.add", "unknown placeholder"},
            {"\"fma_scalar\": \"fman($acc, $a, $x)\"", "\"fma_scalar\": \"fman($acc, $a, $b)\"",
             "intrinsics.L.c.fma_scalar", "unknown placeholder '$b'"},
            {"\"load\"", "\"rsqrt\": \"r($a)\", \"load\"", "intrinsics.L.c.rsqrt", "unknown template"},
            {"\"lanes\": 4", "\"lanes\": 8", "intrinsics.L.lanes", "vector_bits"},
            {"\"kind\": \"lanes\"", "\"kind\": \"lane\"", "intrinsics.L.kind", "must be"},
            {"}}}}", "}}, \"M\": {\"kind\": \"lanes\"}}}", "intrinsics.M", "a second"},
        };
        const char *e = NULL;
        size_t i;
        t = target_parse(&a, "test/toy.json", "toy", lanes_ok, strlen(lanes_ok), &e);
        CHECK(t && t->lane_ops && t->lane_ops->lanes == 4 && !t->lane_ops->tpl[LT_DIV] &&
              !t->lane_ops->tpl[LT_FMA] && t->lane_ops->tpl[LT_FMA_SCALAR] && t->n_tiles == 0 && !t->fma_tile);
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            const char *at = strstr(lanes_ok, bad[i].from);
            char *json = at ? arena_printf(&a, "%.*s%s%s", (int)(at - lanes_ok), lanes_ok, bad[i].to,
                                           at + strlen(bad[i].from)) : NULL;
            e = NULL;
            t = json ? target_parse(&a, "test/toy.json", "toy", json, strlen(json), &e) : NULL;
            CHECK(json && !t && e && strstr(e, "test/toy.json") && strstr(e, bad[i].field) && strstr(e, bad[i].why));
            if (t || !e || !strstr(e, bad[i].field) || !strstr(e, bad[i].why))
                printf("  lanes refusal %d: got \"%s\"\n", (int)i, e ? e : "(accepted)");
        }
    }
    /* families (ir/family.c) and the "schedule" knobs: an unknown isa, an
     * intrinsic no family prints, a knob the target's templates do not
     * read or out of range: each refused naming the field */
    {
#define LANES_DECL "\"intrinsics\": {\"V\": {\"kind\": \"lanes\", \"lanes\": 4, \"vector_type\": \"v4\"," \
                   "\"guard\": \"defined(V4)\", \"c\": {\"load\": \"ld($ptr)\", \"store\": \"st($ptr, $x)\"," \
                   "\"broadcast\": \"dup($x)\", \"add\": \"add($a, $b)\", \"sub\": \"sub($a, $b)\"," \
                   "\"mul\": \"mul($a, $b)\", \"min\": \"mn($a, $b)\", \"max\": \"mx($a, $b)\"}}}"
        struct { const char *json, *field, *why; } fam[] = {
            /* the RISC-V vector target of issue 15, JSON only */
            {"{\"isa\": \"riscv64-v\", \"vector_bits\": 128, " LANES_DECL "}", "isa", "unknown ISA \"riscv64-v\""},
            {"{\"isa\": 64, \"vector_bits\": 128}", "isa", "must be a string"},
            {"{\"isa\": \"generic\", \"vector_bits\": 128, " LANES_DECL "}", "intrinsics.V.kind",
             "needs a \"tile\" intrinsic too"},
            {"{\"isa\": \"x86-64\", \"vector_bits\": 128, " LANES_DECL "}", "intrinsics.V.kind",
             "prints no \"lanes\""},
            {"{\"isa\": \"c\", \"vector_bits\": 128, " LANES_DECL "}", "intrinsics.V.kind", "prints no \"lanes\""},
            {"{\"isa\": \"aarch64\", \"fpu\": 0, \"vector_bits\": 128, " LANES_DECL "}", "fpu", "fpu must be 1"},
            {"{\"isa\": \"aarch64\", \"vector_bits\": 128, \"schedule\": {\"acc\": 16}, " LANES_DECL "}",
             "schedule.vec", "vec must equal"},
            {"{\"isa\": \"aarch64\", \"vector_bits\": 128, " LANES_DECL "}", "schedule.acc", "missing"},
            {"{\"isa\": \"armv7e-m\", \"schedule\": {\"acc\": 12, \"rows\": 4}}", "schedule.rows",
             "not read by this target"},
            {"{\"isa\": \"armv6-m\", \"fpu\": 0, \"schedule\": {\"acc\": 12}}", "schedule.acc",
             "not read by this target"},
            {"{\"isa\": \"armv7e-m\", \"schedule\": {\"acc\": 12, \"int_acc\": 8}}", "schedule.int_acc",
             "only with dsp 1"},
            {"{\"isa\": \"armv7e-m\", \"schedule\": {\"acc\": 12, \"dsp\": 1, \"int_acc\": 8}}",
             "schedule.int_lanes", "missing"},
            {"{\"isa\": \"armv7e-m\", \"schedule\": {\"acc\": 12, \"vec\": 1}}", "schedule.vec", "must be 0"},
            {"{\"isa\": \"x86-64\", \"schedule\": {\"lanse\": 4}}", "schedule.lanse", "unknown knob"},
            {"{\"isa\": \"x86-64\", \"schedule\": {\"rows\": 0}}", "schedule.rows", "integer in 1..64"},
            {"{\"isa\": \"x86-64\", \"schedule\": [4]}", "schedule", "must be an object"},
            {"{\"isa\": \"aarch64\", \"fpu\": 0, \"vector_bits\": 256, \"intrinsics\": {\"T\": {\"kind\": \"tile\","
             "\"compute\": \"acc[p,v] = acc[p,v] + a[p] * b[p,v]\", \"axes\": {\"p\": {\"min\": 1, \"max\": 8},"
             "\"v\": {\"min\": 8, \"max\": 8, \"multiple_of\": 8}}, \"lanes\": 8, \"vector_type\": \"v8\", \"c\": {\"load\": \"ld($ptr)\","
             "\"store\": \"st($ptr, $x)\", \"broadcast\": \"dup($x)\", \"fma\": \"fma($acc, $a, $b)\"}}}}",
             "intrinsics.T.kind", "prints no \"tile\""},
            /* a tile on 128-bit vectors: the packed-panel template takes 256 bits or more */
            {"{\"isa\": \"x86-64\", \"vector_bits\": 128, \"intrinsics\": {\"T\": {\"kind\": \"tile\","
             "\"compute\": \"acc[p,v] = acc[p,v] + a[p] * b[p,v]\", \"axes\": {\"p\": {\"min\": 1, \"max\": 8},"
             "\"v\": {\"min\": 4, \"max\": 8, \"multiple_of\": 4}}, \"lanes\": 4, \"vector_type\": \"v4\","
             "\"c\": {\"load\": \"ld($ptr)\", \"store\": \"st($ptr, $x)\", \"broadcast\": \"dup($x)\","
             "\"fma\": \"fma($acc, $a, $b)\"}}}}",
             "vector_bits", "256-bit vectors or wider"},
        };
        const char *e;
        size_t i;
#undef LANES_DECL
        for (i = 0; i < sizeof fam / sizeof fam[0]; i++) {
            e = NULL;
            t = target_parse(&a, "test/toy.json", "toy", fam[i].json, strlen(fam[i].json), &e);
            CHECK(!t && e && strstr(e, "test/toy.json") && strstr(e, fam[i].field) && strstr(e, fam[i].why));
            if (t || !e || !strstr(e, fam[i].field) || !strstr(e, fam[i].why))
                printf("  family refusal %d: got \"%s\"\n", (int)i, e ? e : "(accepted)");
        }
        /* the shipped families and knobs */
        t = target_load(&a, "cortex-m0", &e);
        CHECK(t && !strcmp(t->family->name, "arm") && t->knobs.lanes == 2 && t->knobs.rows == 2 && !t->knobs.dsp);
        t = target_load(&a, "cortex-m55", &e);
        CHECK(t && !strcmp(t->family->name, "arm") && t->knobs.vec == 4 && t->knobs.acc == 16 && t->knobs.dsp &&
              t->knobs.int_acc == 8);
        t = target_load(&a, "x86-64-avx512", &e);
        CHECK(t && !strcmp(t->family->name, "x86") && t->knobs.rows == 8 && t->knobs.pad == 16 &&
              !t->knobs.part_vec && t->family->loop_lanes(t) == 16);
        t = target_load(&a, "c", &e);
        CHECK(t && t->family->portable && t->knobs.lanes == 8 && !t->family->print_stmt);
        /* defaults where the file has no "schedule" */
        {
            static const char x86[] = "{\"isa\": \"x86-64\", \"vector_bits\": 128}";
            t = target_parse(&a, "test/toy.json", "toy", x86, strlen(x86), &e);
        }
        CHECK(t && t->knobs.lanes == 4 && t->knobs.rows == 4 && t->knobs.unroll_vec == 16 && t->knobs.part_vec);
    }
    /* $$ is a literal dollar sign, not a placeholder */
    CHECK(tile_variant(&a, "v4_ld($ptr)", "v4_ld$$($ptr)", NULL) == NULL);
    arena_free(&a);
}

static TileSpace conv_space(void)
{
    TileSpace sp;
    memset(&sp, 0, sizeof sp);
    sp.shape = TS_CONV;
    sp.lanes = 16;
    sp.regs = 32;
    sp.rows = 56;
    sp.cols = 64;
    sp.K = 64 * 9;
    sp.macs = (int64_t)56 * 56 * 64 * 64 * 9;
    sp.l2_bytes = 1 << 20;
    return sp;
}

static void test_knobs(void)
{
    TileSpace sp = conv_space(), mm;
    TileKnobs k, all[4096];
    const char *why = NULL;
    int n, i, legal = 1, dup = 0;
    memset(&k, 0, sizeof k);
    k.P = 14;
    k.V = 2;
    CHECK(knobs_legal(&sp, &k, &why));
    k.V = 3;
    CHECK(!knobs_legal(&sp, &k, &why) && why && strstr(why, "V must"));
    k.V = 2;
    k.P = 15; /* 15*2 + 2 + 2 > 32 registers */
    CHECK(!knobs_legal(&sp, &k, &why) && strstr(why, "registers"));
    k.P = 4;
    k.G = 1; /* G is for matmuls */
    CHECK(!knobs_legal(&sp, &k, &why));
    n = knobs_enumerate(&sp, all, 4096);
    CHECK(n == 16 + 14); /* V=1: P 1..16 (one vector of rows); V=2: P 1..14 */
    for (i = 0; i < n; i++) {
        int j;
        legal &= knobs_legal(&sp, &all[i], &why);
        for (j = 0; j < i; j++)
            dup |= all[i].P == all[j].P && all[i].V == all[j].V;
    }
    CHECK(legal && !dup);
    {
        /* a target whose tile takes 4 vectors (x86-64-avx2: 16 registers,
         * 8 lanes): V up to 4 within the registers, never 5 */
        TileSpace s4 = sp;
        s4.vmax = 4;
        s4.regs = 16;
        s4.lanes = 8;
        memset(&k, 0, sizeof k);
        k.P = 2;
        k.V = 4; /* 8 + 4 + 2 = 14 registers */
        CHECK(knobs_legal(&s4, &k, &why));
        k.P = 3; /* 12 + 4 + 2 = 18 */
        CHECK(!knobs_legal(&s4, &k, &why) && strstr(why, "registers"));
        k.P = 1;
        k.V = 5;
        CHECK(!knobs_legal(&s4, &k, &why) && strstr(why, "1..4"));
        n = knobs_enumerate(&s4, all, 4096);
        /* V=1: P 1..8 (one vector of rows); V=2: P 1..6; V=3: P 1..3; V=4: P 1..2 */
        CHECK(n == 8 + 6 + 3 + 2);
    }
    mm = sp;
    mm.shape = TS_MATMUL;
    mm.rows = 1024;
    mm.cols = 1024;
    mm.K = 1024;
    memset(&k, 0, sizeof k);
    k.P = 8;
    k.V = 2;
    k.G = 16;
    k.kc = 256;
    CHECK(knobs_legal(&mm, &k, &why));
    k.kc = 300; /* not a divisor of K */
    CHECK(!knobs_legal(&mm, &k, &why));
    k.kc = 256;
    k.G = 128; /* = ceil(rows / P): blocking the reduction needs row groups */
    CHECK(!knobs_legal(&mm, &k, &why));
    n = knobs_enumerate(&mm, all, 4096);
    legal = 1;
    for (i = 0; i < n; i++)
        legal &= knobs_legal(&mm, &all[i], &why) && all[i].G >= 1 && all[i].kc >= 1;
    CHECK(n > 100 && legal);
}

/* A synthetic cost with the shape of the real one (tiles x reduction x a
 * per-tile efficiency that rewards register reuse until the registers
 * spill, and wasted partial tiles), not a function of the model's own
 * features. */
static double synth_cost(const TileSpace *sp, const TileKnobs *k)
{
    double VL = (double)k->V * sp->lanes, tiles = ceil((double)sp->rows / k->P) * ceil((double)sp->cols / VL);
    double per = (double)sp->K * (1.0 + 3.0 / k->P + 2.0 / k->V);
    if (k->P * k->V > 20)
        per *= 1.0 + 0.08 * (k->P * k->V - 20);
    return tiles * per;
}

static void test_cost_model(void)
{
    TileSpace sps[3];
    int s;
    sps[0] = conv_space();
    sps[1] = conv_space();
    sps[1].rows = 28;
    sps[1].cols = 128;
    sps[1].K = 128 * 9;
    sps[2] = conv_space();
    sps[2].shape = TS_CONV_POS;
    sps[2].rows = 256;
    sps[2].cols = 196;
    sps[2].K = 128;
    for (s = 0; s < 3; s++) {
        TileKnobs all[4096];
        double X[4096 * KNOB_FEATURES], y[4096], hp[4096], ht[4096];
        CostModel m;
        uint64_t r = 12345;
        int n = knobs_enumerate(&sps[s], all, 4096), i, nf = 0, ntr = 0, nho = 0;
        double rho, rho0;
        for (i = 0; i < n; i++) {
            double f[KNOB_FEATURES], t = synth_cost(&sps[s], &all[i]);
            nf = knobs_features(&sps[s], &all[i], f);
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            if (i % 3 == 0) { /* a third for training, with 5% noise */
                memcpy(&X[ntr * nf], f, sizeof f[0] * (size_t)nf);
                y[ntr++] = log(t * (1.0 + 0.05 * ((double)(r >> 40) / (double)(1 << 24) - 0.5)));
            } else {
                ht[nho++] = t; /* predictions below */
            }
        }
        cm_fit(&m, X, y, ntr, nf, 1.0);
        nho = 0;
        for (i = 0; i < n; i++) {
            double f[KNOB_FEATURES];
            if (i % 3 == 0)
                continue;
            knobs_features(&sps[s], &all[i], f);
            hp[nho++] = cm_predict(&m, f);
        }
        rho = cm_rank_corr(hp, ht, nho);
        /* an unfitted model ranks nothing */
        memset(&m, 0, sizeof m);
        for (i = 0; i < nho; i++)
            hp[i] = cm_predict(&m, X);
        rho0 = cm_rank_corr(hp, ht, nho);
        if (rho < 0.8 || getenv("UNIT_VERBOSE"))
            printf("cost model: space %d: held-out rank correlation %.3f (%d train, %d held out)\n", s, rho,
                   ntr, nho);
        CHECK(ntr >= 8 && nho >= 16);
        CHECK(rho >= 0.8);
        CHECK(rho0 == 0.0);
    }
}

/* RegexFullMatch: patterns compiled by frontend/regex.c and run by
 * tvmrt_regex_full_match (runtime_min/tvmrt.c). */
static int regex_run(const char *pattern, const char *text)
{
    int32_t *prog, *scratch;
    int n_prog, rc;
    char err[200];
    uint8_t y = 2;
    tvmrt_string in[1];
    if (regex_compile(pattern, &prog, &n_prog, err, sizeof err)) {
        printf("regex: '%s' refused: %s\n", pattern, err);
        return -1;
    }
    scratch = malloc((5 * (size_t)prog[0] + 1) * sizeof *scratch);
    in[0] = text;
    rc = tvmrt_regex_full_match(in, 1, &y, prog, scratch);
    free(scratch);
    free(prog);
    return rc ? -2 : y;
}

static void test_regex(void)
{
    static const struct { const char *pattern, *text; int match; } cases[] = {
        {"abc", "abc", 1}, {"abc", "abcd", 0}, {"abc", "xabc", 0}, {"abc", "ab", 0},
        {"", "", 1}, {"", "a", 0},
        {"a*", "", 1}, {"a*", "aaaa", 1}, {"a+", "", 0}, {"a+", "aa", 1},
        {"a?b", "b", 1}, {"a?b", "ab", 1}, {"a?b", "aab", 0},
        {"a{2,3}", "a", 0}, {"a{2,3}", "aa", 1}, {"a{2,3}", "aaa", 1}, {"a{2,3}", "aaaa", 0},
        {"a{2}", "aa", 1}, {"a{2}", "aaa", 0}, {"a{2,}", "aaaaa", 1}, {"a{2,}", "a", 0},
        {"(ab){0,2}c", "ababc", 1}, {"(ab){0,2}c", "abababc", 0}, {"(?:ab)+", "abab", 1},
        {"(cat|dog)s?", "dogs", 1}, {"(cat|dog)s?", "cat", 1}, {"(cat|dog)s?", "cow", 0},
        {"a|", "", 1}, {"a|", "a", 1}, {"a|b|c", "c", 1}, {"a|b|c", "bc", 0},
        {"[a-c]+", "abcab", 1}, {"[a-c]+", "abd", 0}, {"[^a-c]", "d", 1}, {"[^a-c]", "a", 0},
        {"[^a-c]", "\xc3\xa9", 1}, {"[a-c]", "\xc3\xa9", 0}, {"[]a]+", "]a", 1},
        {"[a-]+", "a-a", 1}, {"[\\d.]+", "3.14", 1}, {"[\\d.]+", "3,14", 0},
        {"\\d{3}-\\d{4}", "555-1234", 1}, {"\\d{3}-\\d{4}", "55-1234", 0},
        {"\\w+@\\w+\\.com", "joe@mail.com", 1}, {"\\w+@\\w+\\.com", "joe@mailxcom", 0},
        {"\\s", "\t", 1}, {"\\S", "\t", 0}, {"\\D\\W", "a-", 1}, {"\\D", "7", 0},
        {".", "\xc3\xa9", 1}, {"..", "\xc3\xa9", 0}, {".", "\n", 0}, {"\xe4\xb8\xad+", "\xe4\xb8\xad\xe4\xb8\xad", 1},
        {"\\bcat\\b", "cat", 1}, {"a\\bb", "ab", 0}, {"a\\Bb", "ab", 1}, {"a\\b-", "a-", 1},
        {"www\\.[\\w.-]+\\.\\bcom\\b", "www.google.com", 1},
        {"www\\.[\\w.-]+\\.\\bcom\\b", "www.bbc.co.uk", 0},
        {"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@gmail.com", 1},
        {"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", "account@hotmail.com", 0},
        {"(\\W|^)[\\w.\\-]{0,25}@(yahoo|gmail)\\.com(\\W|$)", " a@yahoo.com!", 1},
        {"^abc$", "abc", 1}, {"a^b", "ab", 0}, {"a$b", "ab", 0}, {"x*?y", "xxy", 1},
        {"(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac", 0}, {"(a|aa)+$", "aaaaaaaaaaaa", 1},
        {"\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\^\\$\\\\", ".*+?()[]{}|^$\\", 1},
        {"a\\tb", "a\tb", 1},
    };
    static const char *const refused[] = {
        "(?i)abc", "(?P<n>a)", "\\pL", "[[:alpha:]]", "a**", "a+*", "(abc", "abc)", "a{1001}",
        "[\xc3\xa9]", "\\1", "[b-a]", "*a", "a{2,1}", "a{", "[abc", "\\", "\\Q", "(a{1000}){1000}",
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = regex_run(cases[i].pattern, cases[i].text);
        if (got != cases[i].match)
            printf("regex: '%s' on '%s': got %d, expected %d\n", cases[i].pattern, cases[i].text,
                   got, cases[i].match);
        CHECK(got == cases[i].match);
    }
    for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int32_t *prog = NULL;
        int n_prog = 0;
        char err[200] = "";
        int rc = regex_compile(refused[i], &prog, &n_prog, err, sizeof err);
        if (!rc) {
            printf("regex: '%s' was accepted\n", refused[i]);
            free(prog);
        }
        CHECK(rc == 1 && err[0]);
    }
}

int main(void)
{
    test_checked_arith();
    test_plan();
    test_half();
    test_small_floats();
    test_packed();
    test_float_to_int();
    test_builders();
    test_winograd_infer();
    test_target_decls();
    test_knobs();
    test_cost_model();
    test_regex();
    printf("unit: %d passed, %d failed\n", passed, failed);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
