/*
 * tvmrt: the static runtime copied next to every model tvmcc emits.
 *
 * It holds what generated kernels share: status codes, the configuration
 * limits, and the conversions between float and the 16-bit float formats
 * (float16, bfloat16) that models store. It never allocates, prints or
 * exits, keeps no state, and is safe to use from several threads.
 *
 * Status codes are built from a category and a number, so a caller can test
 * the category alone (TVMRT_STATUS_CATEGORY(s) == TVMRT_CAT_ARG).
 */
#ifndef TVMRT_H
#define TVMRT_H

#include <stdint.h>
#include <string.h>

#define TVMRT_VERSION "0.1.0"

#define TVMRT_CAT_ARG 0x100     /* bad argument from the caller */
#define TVMRT_CAT_RUNTIME 0x200 /* condition found while running the model */
#define TVMRT_STATUS_CATEGORY(s) ((s) & 0xff00)

#define TVMRT_OK 0
#define TVMRT_ERR_NULL_INPUT (TVMRT_CAT_ARG | 1)     /* inputs or an input is NULL */
#define TVMRT_ERR_NULL_OUTPUT (TVMRT_CAT_ARG | 2)    /* outputs or an output is NULL */
#define TVMRT_ERR_MISALIGNED (TVMRT_CAT_ARG | 3)     /* workspace not aligned */
#define TVMRT_ERR_INDEX (TVMRT_CAT_RUNTIME | 1)      /* data-dependent index out of range */
#define TVMRT_ERR_SHAPE (TVMRT_CAT_RUNTIME | 2)      /* data-dependent count differs from the
                                                        compiled output shape */
#define TVMRT_ERR_STRING_POOL (TVMRT_CAT_RUNTIME | 3) /* strings longer than the compiled
                                                         character pool (--string-bytes) */

/* Alignment the caller's workspace must have. */
#define TVMRT_WORKSPACE_ALIGN 64

/* An element of a string tensor: a NUL-terminated UTF-8 string. */
typedef const char *tvmrt_string;

/* Message for a status code; compiled to "" when TVMRT_NO_MESSAGES is set
 * (saves flash on small devices). */
const char *tvmrt_status_message(int status);

/* IEEE half <-> float, round to nearest even, NaN and infinities kept. */
static inline float tvmrt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (exp == 0x1fu) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {
        /* subnormal half: normalise into a float */
        uint32_t e = 113u;
        while ((man & 0x400u) == 0) {
            man <<= 1;
            e--;
        }
        bits = sign | (e << 23) | ((man & 0x3ffu) << 13);
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t tvmrt_f32_to_f16(float f)
{
    uint32_t x, sign, man, q, rem, half;
    int32_t exp;
    memcpy(&x, &f, sizeof x);
    sign = (x >> 16) & 0x8000u;
    exp = (int32_t)((x >> 23) & 0xffu);
    man = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
    exp = exp - 127 + 15;
    if (exp >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        uint32_t shift;
        if (exp < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        shift = (uint32_t)(14 - exp);
        q = man >> shift;
        rem = man & ((1u << shift) - 1u);
        half = 1u << (shift - 1u);
    } else {
        q = ((uint32_t)exp << 10) | (man >> 13);
        rem = man & 0x1fffu;
        half = 0x1000u;
    }
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

static inline float tvmrt_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t tvmrt_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* Float min/max that propagate NaN, like numpy's minimum/maximum:
 * (a < b || a != a) ? a : b. Written as two selects, not one condition
 * with ||: gcc turns the || into two branches, which mispredict on data
 * of either sign (a Relu epilogue: squeezenet1_1's first conv took 3x
 * its cycles on the `c` target), while each select here compiles to a
 * compare and blend or a conditional move. */
static inline float tvmrt_minf(float a, float b)
{
    float m = a < b ? a : b;
    return a != a ? a : m;
}
static inline float tvmrt_maxf(float a, float b)
{
    float m = a > b ? a : b;
    return a != a ? a : m;
}
static inline double tvmrt_mind(double a, double b)
{
    double m = a < b ? a : b;
    return a != a ? a : m;
}
static inline double tvmrt_maxd(double a, double b)
{
    double m = a > b ? a : b;
    return a != a ? a : m;
}

/* Integer division rounding toward negative infinity (b != 0). The one
 * quotient that overflows, INT64_MIN / -1, wraps to INT64_MIN. */
static inline int64_t tvmrt_floordiv(int64_t a, int64_t b)
{
    int64_t q;
    if (b == -1)
        return (int64_t)(0u - (uint64_t)a);
    q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Signed division and remainder truncating toward zero (b != 0) without
 * C's undefined case: INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1 is 0. */
static inline int32_t tvmrt_div_i32(int32_t a, int32_t b)
{
    return b == -1 ? (int32_t)(0u - (uint32_t)a) : a / b;
}
static inline int64_t tvmrt_div_i64(int64_t a, int64_t b)
{
    return b == -1 ? (int64_t)(0u - (uint64_t)a) : a / b;
}
static inline int32_t tvmrt_mod_i32(int32_t a, int32_t b) { return b == -1 ? 0 : a % b; }
static inline int64_t tvmrt_mod_i64(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

/* Float to integer conversions defined for every input (C leaves NaN and
 * out-of-range values undefined): the value truncated toward zero when it
 * fits, NaN -> 0, and out-of-range values saturate to the type's limits.
 * Narrower integer types convert through int32_t (int8, uint8, int16,
 * uint16) or int64_t (uint32) and then wrap, as a cast through int does on
 * common hardware. */
#define TVMRT_FLOAT_TO_INT(NAME, FT, IT, LO, HI, MIN, MAX)             \
    static inline IT NAME(FT x)                                          \
    {                                                                    \
        if (x >= (LO) && x < (HI))                                       \
            return (IT)x;                                                \
        return x > (FT)0 ? (MAX) : x < (FT)0 ? (MIN) : (IT)0;            \
    }
TVMRT_FLOAT_TO_INT(tvmrt_f32_to_i32, float, int32_t, -2147483648.0f, 2147483648.0f, INT32_MIN, INT32_MAX)
TVMRT_FLOAT_TO_INT(tvmrt_f32_to_i64, float, int64_t, -9223372036854775808.0f, 9223372036854775808.0f,
                   INT64_MIN, INT64_MAX)
TVMRT_FLOAT_TO_INT(tvmrt_f64_to_i32, double, int32_t, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX)
TVMRT_FLOAT_TO_INT(tvmrt_f64_to_i64, double, int64_t, -9223372036854775808.0, 9223372036854775808.0,
                   INT64_MIN, INT64_MAX)
#undef TVMRT_FLOAT_TO_INT

/* To uint64: values in [2^63, 2^64) convert directly, larger ones saturate,
 * the rest go through int64_t (negative values wrap). */
static inline uint64_t tvmrt_f32_to_u64(float x)
{
    if (x >= 9223372036854775808.0f)
        return x < 18446744073709551616.0f ? (uint64_t)x : UINT64_MAX;
    return (uint64_t)tvmrt_f32_to_i64(x);
}
static inline uint64_t tvmrt_f64_to_u64(double x)
{
    if (x >= 9223372036854775808.0)
        return x < 18446744073709551616.0 ? (uint64_t)x : UINT64_MAX;
    return (uint64_t)tvmrt_f64_to_i64(x);
}

/* The 8-bit floats (float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz,
 * float8e8m0) and float4e2m1 <-> float. Decoding is exact. Encoding rounds to
 * nearest even; out of range it gives infinity (e5m2) or NaN (the fn/fnuz
 * formats): ONNX's Cast with saturate=0. The saturating Cast clamps to the
 * largest finite value before it. float4e2m1 always saturates (NaN -> 0x8);
 * float8e8m0 rounds up and saturates (Cast's round_mode "up"). The fnuz
 * formats have no negative zero and one NaN, 0x80. The compiler has its own
 * copy (ir/dtype.c); a unit test compares both on every bit pattern. */
static inline float tvmrt_bits_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* A small float of eb exponent and mb mantissa bits, bias `bias`, sign at
 * bit eb + mb (no special values: the callers handle NaN and infinity). */
static inline float tvmrt_small_to_f32(uint32_t b, uint32_t eb, uint32_t mb, uint32_t bias)
{
    uint32_t sign = (b >> (eb + mb)) & 1u, e = (b >> mb) & ((1u << eb) - 1u), m = b & ((1u << mb) - 1u);
    uint32_t bits;
    if (e == 0) {
        /* m * 2^(1 - bias - mb), exact in float */
        float v = (float)m * tvmrt_bits_f32((128u - bias - mb) << 23);
        return sign ? -v : v;
    }
    bits = (sign << 31) | ((e + 127u - bias) << 23) | (m << (23u - mb));
    return tvmrt_bits_f32(bits);
}

/* Round |x| (bits without the sign, finite) to the format; returns the
 * magnitude code, possibly above the largest finite code (overflow). */
static inline uint32_t tvmrt_small_round(uint32_t ax, uint32_t mb, uint32_t bias)
{
    int32_t e = (int32_t)(ax >> 23) - 127 + (int32_t)bias;
    uint32_t man = ax & 0x7fffffu, q, rem, half;
    if (e >= 1) {
        q = ((uint32_t)e << mb) | (man >> (23u - mb));
        rem = man & ((1u << (23u - mb)) - 1u);
        half = 1u << (22u - mb);
    } else {
        uint32_t sh = (uint32_t)(24 - (int32_t)mb - e);
        if (sh > 24u || ax == 0)
            return 0;
        man |= 0x800000u;
        q = man >> sh;
        rem = man & ((1u << sh) - 1u);
        half = 1u << (sh - 1u);
    }
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return q;
}

static inline float tvmrt_f8e4m3fn_to_f32(uint8_t b)
{
    if ((b & 0x7fu) == 0x7fu)
        return tvmrt_bits_f32(((uint32_t)(b >> 7) << 31) | 0x7fc00000u);
    return tvmrt_small_to_f32(b, 4u, 3u, 7u);
}
static inline float tvmrt_f8e4m3fnuz_to_f32(uint8_t b)
{
    return b == 0x80u ? tvmrt_bits_f32(0xffc00000u) : tvmrt_small_to_f32(b, 4u, 3u, 8u);
}
static inline float tvmrt_f8e5m2_to_f32(uint8_t b)
{
    if ((b & 0x7cu) == 0x7cu)
        return tvmrt_bits_f32(((uint32_t)(b >> 7) << 31) | 0x7f800000u | ((uint32_t)(b & 3u) << 21));
    return tvmrt_small_to_f32(b, 5u, 2u, 15u);
}
static inline float tvmrt_f8e5m2fnuz_to_f32(uint8_t b)
{
    return b == 0x80u ? tvmrt_bits_f32(0xffc00000u) : tvmrt_small_to_f32(b, 5u, 2u, 16u);
}
static inline float tvmrt_f8e8m0_to_f32(uint8_t b)
{
    if (b == 0xffu)
        return tvmrt_bits_f32(0x7fc00000u);
    return tvmrt_bits_f32(b ? (uint32_t)b << 23 : 0x00400000u);
}
static inline float tvmrt_f4e2m1_to_f32(uint8_t b)
{
    return tvmrt_small_to_f32(b & 0xfu, 2u, 1u, 1u);
}

static inline uint8_t tvmrt_f32_to_f8e4m3fn(float f)
{
    uint32_t x, s, q;
    memcpy(&x, &f, sizeof x);
    s = (x >> 24) & 0x80u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u)
        return (uint8_t)(s | 0x7fu); /* NaN; infinity without saturation */
    q = tvmrt_small_round(x, 3u, 7u);
    return (uint8_t)(s | (q > 0x7eu ? 0x7fu : q));
}
static inline uint8_t tvmrt_f32_to_f8e4m3fnuz(float f)
{
    uint32_t x, s, q;
    memcpy(&x, &f, sizeof x);
    s = (x >> 24) & 0x80u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u)
        return 0x80u;
    q = tvmrt_small_round(x, 3u, 8u);
    return (uint8_t)(q > 0x7fu ? 0x80u : q == 0 ? 0u : s | q);
}
static inline uint8_t tvmrt_f32_to_f8e5m2(float f)
{
    uint32_t x, s, q;
    memcpy(&x, &f, sizeof x);
    s = (x >> 24) & 0x80u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u)
        return (uint8_t)(s | 0x7cu | ((x >> 21) & 3u ? (x >> 21) & 3u : 2u));
    if (x == 0x7f800000u)
        return (uint8_t)(s | 0x7cu);
    q = tvmrt_small_round(x, 2u, 15u);
    return (uint8_t)(s | (q > 0x7bu ? 0x7cu : q));
}
static inline uint8_t tvmrt_f32_to_f8e5m2fnuz(float f)
{
    uint32_t x, s, q;
    memcpy(&x, &f, sizeof x);
    s = (x >> 24) & 0x80u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u)
        return 0x80u;
    q = tvmrt_small_round(x, 2u, 16u);
    return (uint8_t)(q > 0x7fu ? 0x80u : q == 0 ? 0u : s | q);
}
static inline uint8_t tvmrt_f32_to_f8e8m0(float f)
{
    uint32_t x, e;
    memcpy(&x, &f, sizeof x);
    x &= 0x7fffffffu; /* negative input is undefined in ONNX: its magnitude */
    if (x > 0x7f800000u)
        return 0xffu;
    e = x >> 23;
    if (e == 0)
        return (uint8_t)(x > 0x400000u ? 1u : 0u); /* rounded up to 2^-126 or 2^-127 */
    if (x & 0x7fffffu)
        e++;
    return (uint8_t)(e > 0xfeu ? 0xfeu : e);
}
static inline uint8_t tvmrt_f32_to_f4e2m1(float f)
{
    uint32_t x, s, q;
    memcpy(&x, &f, sizeof x);
    s = (x >> 28) & 0x8u;
    x &= 0x7fffffffu;
    if (x > 0x7f800000u)
        return 0x8u;
    q = x == 0x7f800000u ? 7u : tvmrt_small_round(x, 1u, 1u);
    return (uint8_t)(s | (q > 7u ? 7u : q));
}

/* Cast to float8e8m0 with round_mode down (mode 0), nearest (1; 2 without
 * saturation) or up without saturation (3), as ONNX's reference computes
 * them on the exponent field; the result is the e8m0 value as a float,
 * which tvmrt_f32_to_f8e8m0 then encodes exactly. NaN and infinity give
 * NaN; without saturation 0xfe rounding up gives NaN (0xff). */
static inline float tvmrt_e8m0_round(float f, int mode)
{
    uint32_t x, e, up = 0;
    memcpy(&x, &f, sizeof x);
    e = (x >> 23) & 0xffu;
    if (e == 0xffu)
        return tvmrt_f8e8m0_to_f32(0xffu);
    if (mode == 1 || mode == 2)
        up = (x & 0x400000u) != 0 && ((x & 0x3fffffu) != 0 || e > 0) ? 1u : 0u;
    else if (mode == 3) /* as tvmrt_f32_to_f8e8m0 below 2^-126 */
        up = (e ? (x & 0x7fffffu) != 0 : (x & 0x7fffffu) > 0x400000u) ? 1u : 0u;
    if (up && e == 0xfeu && mode == 1)
        up = 0;
    return tvmrt_f8e8m0_to_f32((uint8_t)(e + up));
}

/* Packed 4-bit and 2-bit elements: element i of p, the first element of a
 * byte in its least significant bits. Loads sign-extend int4/int2; stores
 * keep the low bits of v (integers wrap) and leave the byte's other
 * elements unchanged. */
static inline uint8_t tvmrt_ld_u4(const uint8_t *p, int64_t i)
{
    return (uint8_t)(((uint32_t)p[i >> 1] >> ((uint32_t)(i & 1) * 4u)) & 0xfu);
}
static inline int8_t tvmrt_ld_i4(const uint8_t *p, int64_t i)
{
    return (int8_t)((int32_t)tvmrt_ld_u4(p, i) - (int32_t)((tvmrt_ld_u4(p, i) & 8u) << 1));
}
static inline float tvmrt_ld_f4e2m1(const uint8_t *p, int64_t i)
{
    return tvmrt_f4e2m1_to_f32(tvmrt_ld_u4(p, i));
}
static inline uint8_t tvmrt_ld_u2(const uint8_t *p, int64_t i)
{
    return (uint8_t)(((uint32_t)p[i >> 2] >> ((uint32_t)(i & 3) * 2u)) & 3u);
}
static inline int8_t tvmrt_ld_i2(const uint8_t *p, int64_t i)
{
    return (int8_t)((int32_t)tvmrt_ld_u2(p, i) - (int32_t)((tvmrt_ld_u2(p, i) & 2u) << 1));
}
static inline void tvmrt_st_u4(uint8_t *p, int64_t i, uint32_t v)
{
    uint32_t sh = (uint32_t)(i & 1) * 4u;
    p[i >> 1] = (uint8_t)(((uint32_t)p[i >> 1] & ~(0xfu << sh)) | ((v & 0xfu) << sh));
}
static inline void tvmrt_st_i4(uint8_t *p, int64_t i, int32_t v)
{
    tvmrt_st_u4(p, i, (uint32_t)v);
}
static inline void tvmrt_st_f4e2m1(uint8_t *p, int64_t i, float v)
{
    tvmrt_st_u4(p, i, tvmrt_f32_to_f4e2m1(v));
}
static inline void tvmrt_st_u2(uint8_t *p, int64_t i, uint32_t v)
{
    uint32_t sh = (uint32_t)(i & 3) * 2u;
    p[i >> 2] = (uint8_t)(((uint32_t)p[i >> 2] & ~(3u << sh)) | ((v & 3u) << sh));
}
static inline void tvmrt_st_i2(uint8_t *p, int64_t i, int32_t v)
{
    tvmrt_st_u2(p, i, (uint32_t)v);
}

/* StringNormalizer: copies the strings of in[0..n_in) that are not among
 * stop[0..n_stop) (compared exactly, or ASCII-case-insensitively when
 * case_sensitive is 0) to out[0..n_out), or one "" when none is left.
 * case_action 0 keeps the strings (out points at the input strings),
 * 1 lowers and 2 uppers ASCII letters into pool (pool_bytes bytes; out
 * points into it). Returns TVMRT_ERR_SHAPE when the number of strings left
 * is not n_out, TVMRT_ERR_STRING_POOL when they do not fit the pool,
 * TVMRT_ERR_NULL_INPUT for a NULL input string. */
int tvmrt_string_normalize(const tvmrt_string *in, int32_t n_in, tvmrt_string *out,
                           int32_t n_out, char *pool, int32_t pool_bytes,
                           const char *const *stop, int32_t n_stop, int case_action,
                           int case_sensitive);

/* The other string operators. Strings they make are written into pool
 * (pool_bytes bytes, --string-bytes per output string) and the outputs
 * point there; TVMRT_ERR_STRING_POOL when they do not fit,
 * TVMRT_ERR_NULL_INPUT for a NULL input string. A broadcasting operator
 * takes shape = {rank, dims of the result, strides of a, strides of b}.
 * Numeric buffers are void * in the tensor's element type. */
/* StringConcat: out[i] = a[.] followed by b[.] (n results). */
int tvmrt_string_concat(const tvmrt_string *a, const tvmrt_string *b, tvmrt_string *out,
                        int32_t n, const int32_t *shape, char *pool, int32_t pool_bytes);
/* Equal on strings: out (bool) = the byte strings are the same. */
int tvmrt_string_eq(const tvmrt_string *a, const tvmrt_string *b, void *out, int32_t n,
                    const int32_t *shape);
/* StringSplit: splits each in[i] at delim[0] (NULL: at runs of ASCII
 * whitespace, ignoring leading and trailing ones, as Python's str.split)
 * at most maxsplit times (-1: no limit) into out[i*width ...], padded with
 * "", and counts[i] (int64) = the number of parts. TVMRT_ERR_SHAPE when the
 * largest count is not width. */
int tvmrt_string_split(const tvmrt_string *in, int32_t n_in, tvmrt_string *out, int32_t width,
                       void *counts, const char *const *delim, int32_t maxsplit, char *pool,
                       int32_t pool_bytes);
/* RegexFullMatch: out (bool) = the whole of in[i] matches the pattern that
 * prog holds (compiled by tvmcc, frontend/regex.h); scratch holds
 * 5 * prog[0] + 1 int32_t. Linear in the input: no backtracking. */
int tvmrt_regex_full_match(const tvmrt_string *in, int32_t n, void *out, const int32_t *prog,
                           void *scratch);
/* Cast from a number type (ONNX dtype code: float, double, (u)int8..64)
 * to strings, as numpy prints them (shortest round-trip form for floats),
 * and back (strtof/strtod/strtoll: "NaN", "INF", "+INF", "-INF" read as
 * such; an unreadable string gives 0). */
int tvmrt_cast_to_string(const void *in, int dtype, tvmrt_string *out, int32_t n, char *pool,
                         int32_t pool_bytes);
int tvmrt_cast_from_string(const tvmrt_string *in, void *out, int dtype, int32_t n);
/* LabelEncoder: finds each in[i] among the n_keys sorted keys (skeys when
 * strings, else keys of type key_dtype, NaN last) by binary search and
 * writes the value at its position, or at n_keys (the default) when it is
 * absent: svalues[.] when strings, else value_bytes bytes of values. */
int tvmrt_label_encode(const void *in, int32_t n, int key_dtype, const void *keys,
                       const char *const *skeys, int32_t n_keys, void *out, const void *values,
                       const char *const *svalues, int32_t value_bytes);

/* Operators whose output count depends on the data (NonZero, Unique): the
 * count k is the compiled one; TVMRT_ERR_SHAPE when the data give another.
 * x is of ONNX type dtype (float, double, (u)int8..32, int64, bool). */
/* NonZero: out (int64 [rank, k]) = the coordinates of the non-zero
 * elements of x (n elements, dims = {rank, dims...}), in row-major order. */
int tvmrt_nonzero(const void *x, int dtype, int32_t n, const int32_t *dims, void *out, int32_t k);
/* Unique over the len slices of x viewed as [outer, len, inner]: y gets
 * the k distinct slices ([outer, k, inner]), ascending (sorted) or in the
 * order of their first occurrence, indices (int64 [k]) their first
 * positions, inverse (int64 [len]) each slice's position in y, counts
 * (int64 [k]) their numbers; indices, inverse and counts may be NULL.
 * scratch holds 3 * len int32_t. A stable merge sort: O(len log len)
 * slice comparisons. */
int tvmrt_unique(const void *x, int dtype, int32_t outer, int32_t len, int32_t inner, int sorted,
                 int32_t k, void *y, void *indices, void *inverse, void *counts, void *scratch);

#endif
