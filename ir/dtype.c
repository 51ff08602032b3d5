/*
 * Element type queries, all generated from the DTYPE_TABLE rows of dtype.h so
 * that adding a type is one row there. Unknown codes (strings, complex,
 * anything a file may carry) answer 0 / NULL rather than failing: callers
 * report them as model errors.
 */
#include "dtype.h"

#include <math.h>
#include <string.h>

#include <stddef.h>

size_t dtype_size(DType t)
{
    switch (t) {
#define DTYPE_SIZE(id, num, json, ctype, bytes, cctype) case DT_##id: return bytes;
        DTYPE_TABLE(DTYPE_SIZE)
#undef DTYPE_SIZE
    default:
        return 0;
    }
}

const char *dtype_name(DType t)
{
    switch (t) {
#define DTYPE_NAME(id, num, json, ctype, bytes, cctype) case DT_##id: return json;
        DTYPE_TABLE(DTYPE_NAME)
#undef DTYPE_NAME
    default:
        return NULL;
    }
}

const char *dtype_ctype(DType t)
{
    switch (t) {
#define DTYPE_CTYPE(id, num, json, ctype, bytes, cctype) case DT_##id: return ctype;
        DTYPE_TABLE(DTYPE_CTYPE)
#undef DTYPE_CTYPE
    default:
        return NULL;
    }
}

const char *dtype_compute_ctype(DType t)
{
    switch (t) {
#define DTYPE_CCTYPE(id, num, json, ctype, bytes, cctype) case DT_##id: return cctype;
        DTYPE_TABLE(DTYPE_CCTYPE)
#undef DTYPE_CCTYPE
    default:
        return NULL;
    }
}

int dtype_is_float(DType t)
{
    return t == DT_FLOAT32 || t == DT_FLOAT64 || t == DT_FLOAT16 || t == DT_BFLOAT16;
}

int dtype_is_signed_int(DType t)
{
    return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_INT64;
}

int dtype_is_unsigned_int(DType t)
{
    return t == DT_UINT8 || t == DT_UINT16 || t == DT_UINT32 || t == DT_UINT64 || t == DT_BOOL;
}

DType dtype_compute(DType t)
{
    if (t == DT_FLOAT16 || t == DT_BFLOAT16)
        return DT_FLOAT32;
    return t;
}

int dtype_double_fits(DType t, double v)
{
    double lo, hi; /* exclusive bounds of the values that truncate into t */
    switch (t) {
    case DT_BOOL: lo = -1.0; hi = 2.0; break;
    case DT_INT8: lo = -129.0; hi = 128.0; break;
    case DT_UINT8: lo = -1.0; hi = 256.0; break;
    case DT_INT16: lo = -32769.0; hi = 32768.0; break;
    case DT_UINT16: lo = -1.0; hi = 65536.0; break;
    case DT_INT32: lo = -2147483649.0; hi = 2147483648.0; break;
    case DT_UINT32: lo = -1.0; hi = 4294967296.0; break;
    /* -2^63 - 1 is not a double: -2^63 itself is the lowest that fits */
    case DT_INT64: return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    case DT_UINT64: lo = -1.0; hi = 18446744073709551616.0; break;
    default:
        return dtype_is_float(t) ? 1 : 0;
    }
    return v > lo && v < hi;
}

static int64_t sat_i64(double x)
{
    if (x >= -9223372036854775808.0 && x < 9223372036854775808.0)
        return (int64_t)x;
    return x > 0 ? INT64_MAX : x < 0 ? INT64_MIN : 0;
}

int64_t dtype_float_to_int(DType to, double x)
{
    uint64_t u;
    int64_t r;
    switch (to) {
    case DT_INT64:
    case DT_UINT32:
        return sat_i64(x);
    case DT_UINT64:
        if (!(x >= 9223372036854775808.0))
            return sat_i64(x);
        u = x < 18446744073709551616.0 ? (uint64_t)x : UINT64_MAX;
        memcpy(&r, &u, sizeof r);
        return r;
    default:
        if (x >= -2147483648.0 && x < 2147483648.0)
            return (int64_t)x;
        return x > 0 ? INT32_MAX : x < 0 ? INT32_MIN : 0;
    }
}

float dtype_f16_to_f32(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
    float out;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return s ? -v : v;
    }
    if (e == 31)
        bits = s | 0x7f800000u | (m << 13);
    else
        bits = s | ((e + 112) << 23) | (m << 13);
    memcpy(&out, &bits, 4);
    return out;
}

uint16_t dtype_f32_to_f16(float f)
{
    uint32_t x, s, e, m;
    memcpy(&x, &f, 4);
    s = (x >> 16) & 0x8000u;
    e = (x >> 23) & 0xff;
    m = x & 0x7fffff;
    if (e == 0xff)
        return (uint16_t)(s | 0x7c00u | (m ? 0x200u | (m >> 13) : 0));
    {
        int ee = (int)e - 127 + 15;
        if (ee >= 31)
            return (uint16_t)(s | 0x7c00u);
        if (ee <= 0) {
            uint32_t mm, r, half, q;
            int sh;
            if (ee < -10)
                return (uint16_t)s;
            mm = m | 0x800000u;
            sh = 14 - ee;
            q = mm >> sh;
            r = mm & ((1u << sh) - 1);
            half = 1u << (sh - 1);
            if (r > half || (r == half && (q & 1)))
                q++;
            return (uint16_t)(s | q);
        }
        {
            uint32_t q = ((uint32_t)ee << 10) | (m >> 13), r = m & 0x1fff;
            if (r > 0x1000 || (r == 0x1000 && (q & 1)))
                q++;
            return (uint16_t)(s | q);
        }
    }
}

float dtype_bf16_to_f32(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

uint16_t dtype_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}
