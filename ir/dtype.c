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

int dtype_bits(DType t)
{
    switch (t) {
    case DT_UINT4: case DT_INT4: case DT_FLOAT4E2M1: return 4;
    case DT_UINT2: case DT_INT2: return 2;
    default: return (int)dtype_size(t) * 8;
    }
}

int dtype_is_packed(DType t)
{
    int b = dtype_bits(t);
    return b > 0 && b < 8;
}

int64_t dtype_nbytes(DType t, int64_t n)
{
    int b = dtype_bits(t);
    if (b >= 8 || b == 0)
        return n * (int64_t)dtype_size(t);
    return (n * b + 7) / 8;
}

static int is_small_float(DType t)
{
    return t == DT_FLOAT8E4M3FN || t == DT_FLOAT8E4M3FNUZ || t == DT_FLOAT8E5M2 ||
           t == DT_FLOAT8E5M2FNUZ || t == DT_FLOAT8E8M0 || t == DT_FLOAT4E2M1;
}

int dtype_is_float(DType t)
{
    return t == DT_FLOAT32 || t == DT_FLOAT64 || t == DT_FLOAT16 || t == DT_BFLOAT16 ||
           is_small_float(t);
}

int dtype_is_signed_int(DType t)
{
    return t == DT_INT8 || t == DT_INT16 || t == DT_INT32 || t == DT_INT64 || t == DT_INT4 ||
           t == DT_INT2;
}

int dtype_is_unsigned_int(DType t)
{
    return t == DT_UINT8 || t == DT_UINT16 || t == DT_UINT32 || t == DT_UINT64 || t == DT_BOOL ||
           t == DT_UINT4 || t == DT_UINT2;
}

DType dtype_compute(DType t)
{
    if (t == DT_FLOAT16 || t == DT_BFLOAT16 || is_small_float(t))
        return DT_FLOAT32;
    if (t == DT_INT4 || t == DT_INT2)
        return DT_INT8;
    if (t == DT_UINT4 || t == DT_UINT2)
        return DT_UINT8;
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

/* The small float formats as (exponent bits, mantissa bits, bias). */
static void small_float_format(DType t, int *eb, int *mb, int *bias)
{
    switch (t) {
    case DT_FLOAT8E4M3FN: *eb = 4; *mb = 3; *bias = 7; break;
    case DT_FLOAT8E4M3FNUZ: *eb = 4; *mb = 3; *bias = 8; break;
    case DT_FLOAT8E5M2: *eb = 5; *mb = 2; *bias = 15; break;
    case DT_FLOAT8E5M2FNUZ: *eb = 5; *mb = 2; *bias = 16; break;
    default: *eb = 2; *mb = 1; *bias = 1; break; /* float4e2m1 */
    }
}

static float bits_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

float dtype_f8_to_f32(DType t, unsigned b)
{
    int eb, mb, bias;
    unsigned sbit, e, m;
    float v;
    if (t == DT_FLOAT8E8M0) {
        b &= 0xff;
        if (b == 0xff)
            return bits_f32(0x7fc00000u);
        return b ? bits_f32((uint32_t)b << 23) : bits_f32(0x00400000u);
    }
    small_float_format(t, &eb, &mb, &bias);
    b &= (1u << (1 + eb + mb)) - 1;
    sbit = b >> (eb + mb);
    e = (b >> mb) & ((1u << eb) - 1);
    m = b & ((1u << mb) - 1);
    if ((t == DT_FLOAT8E4M3FNUZ || t == DT_FLOAT8E5M2FNUZ) && b == 0x80)
        return bits_f32(0xffc00000u);
    if (t == DT_FLOAT8E4M3FN && e == 15 && m == 7)
        return bits_f32((sbit ? 0x80000000u : 0) | 0x7fc00000u);
    if (t == DT_FLOAT8E5M2 && e == 31)
        return bits_f32((sbit ? 0x80000000u : 0) | 0x7f800000u | (m << 21));
    if (e == 0)
        v = ldexpf((float)m, 1 - bias - mb);
    else
        v = ldexpf((float)(m | (1u << mb)), (int)e - bias - mb);
    return sbit ? -v : v;
}

double dtype_f8_max(DType t)
{
    switch (t) {
    case DT_FLOAT8E4M3FN: return 448.0;
    case DT_FLOAT8E4M3FNUZ: return 240.0;
    case DT_FLOAT8E5M2: case DT_FLOAT8E5M2FNUZ: return 57344.0;
    case DT_FLOAT4E2M1: return 6.0;
    case DT_FLOAT8E8M0: return ldexp(1.0, 127);
    default: return 0.0;
    }
}

static unsigned f32_to_e8m0(float f)
{
    uint32_t x, e, m;
    memcpy(&x, &f, 4);
    x &= 0x7fffffffu; /* negative values are undefined in ONNX: their magnitude */
    if (x > 0x7f800000u)
        return 0xff;
    if (x == 0x7f800000u)
        return 0xfe;
    e = x >> 23;
    m = x & 0x7fffffu;
    if (e == 0) /* 2^-127 is the subnormal 0x400000; rounding up */
        return m > 0x400000u ? 1u : 0u;
    if (m)
        e++;
    return e > 0xfe ? 0xfe : e;
}

unsigned dtype_f32_to_f8(DType t, float f)
{
    int eb, mb, bias, ex, fnuz, maxcode;
    uint32_t x, sbit, man, q, rem, half;
    if (t == DT_FLOAT8E8M0)
        return f32_to_e8m0(f);
    small_float_format(t, &eb, &mb, &bias);
    fnuz = t == DT_FLOAT8E4M3FNUZ || t == DT_FLOAT8E5M2FNUZ;
    maxcode = t == DT_FLOAT8E4M3FN ? 0x7e : t == DT_FLOAT8E5M2 ? 0x7b : t == DT_FLOAT4E2M1 ? 0x7 : 0x7f;
    memcpy(&x, &f, 4);
    sbit = (x >> 31) << (eb + mb);
    ex = (int)((x >> 23) & 0xff);
    man = x & 0x7fffffu;
    if (ex == 0xff && man) { /* NaN */
        switch (t) {
        case DT_FLOAT8E4M3FN: return sbit | 0x7f;
        case DT_FLOAT8E5M2: return sbit | 0x7c | ((man >> 21) ? man >> 21 : 2u);
        case DT_FLOAT4E2M1: return 0x8;
        default: return 0x80;
        }
    }
    if (ex == 0xff) { /* infinity */
        switch (t) {
        case DT_FLOAT8E5M2: return sbit | 0x7c;
        case DT_FLOAT4E2M1: return sbit | 0x7;
        case DT_FLOAT8E4M3FN: return sbit | 0x7f;
        default: return 0x80;
        }
    }
    ex = ex - 127 + bias;
    if (ex >= 1) {
        q = ((uint32_t)ex << mb) | (man >> (23 - mb));
        rem = man & ((1u << (23 - mb)) - 1);
        half = 1u << (22 - mb);
    } else {
        int sh = 23 - mb + 1 - ex;
        if (sh > 24 || (x & 0x7fffffffu) == 0)
            q = rem = 0, half = 1;
        else {
            uint32_t mm = man | 0x800000u;
            q = mm >> sh;
            rem = mm & ((1u << sh) - 1);
            half = 1u << (sh - 1);
        }
    }
    if (rem > half || (rem == half && (q & 1)))
        q++;
    if (q > (uint32_t)maxcode) {
        switch (t) {
        case DT_FLOAT8E5M2: return sbit | 0x7c;
        case DT_FLOAT4E2M1: return sbit | 0x7;
        case DT_FLOAT8E4M3FN: return sbit | 0x7f;
        default: return 0x80;
        }
    }
    if (q == 0 && fnuz)
        return 0;
    return sbit | q;
}

int dtype_packed_get(DType t, const void *p, int64_t i)
{
    int b = dtype_bits(t), per = 8 / b;
    unsigned byte = ((const unsigned char *)p)[i / per];
    unsigned v = (byte >> ((int)(i % per) * b)) & ((1u << b) - 1);
    if ((t == DT_INT4 || t == DT_INT2) && (v >> (b - 1)))
        return (int)v - (1 << b);
    return (int)v;
}

void dtype_packed_set(DType t, void *p, int64_t i, int v)
{
    int b = dtype_bits(t), per = 8 / b, sh = (int)(i % per) * b;
    unsigned char *q = (unsigned char *)p + i / per;
    unsigned mask = ((1u << b) - 1) << sh;
    *q = (unsigned char)((*q & ~mask) | (((unsigned)v << sh) & mask));
}

float dtype_e8m0_round(float f, int mode)
{
    uint32_t x, e, up = 0;
    memcpy(&x, &f, 4);
    e = (x >> 23) & 0xff;
    if (e == 0xff)
        return dtype_f8_to_f32(DT_FLOAT8E8M0, 0xff);
    if (mode == 1 || mode == 2)
        up = (x & 0x400000u) && ((x & 0x3fffffu) || e > 0);
    else if (mode == 3) /* as the store: 2^-127 (code 0) is the subnormal 0x400000 */
        up = e ? (x & 0x7fffffu) != 0 : (x & 0x7fffffu) > 0x400000u;
    if (up && e == 0xfe && mode == 1)
        up = 0;
    return dtype_f8_to_f32(DT_FLOAT8E8M0, e + up);
}

double dtype_float_at(DType t, const void *p, int64_t i)
{
    const unsigned char *b = p;
    uint16_t h;
    float f;
    double x;
    switch (t) {
    case DT_FLOAT32: memcpy(&f, b + i * 4, 4); return f;
    case DT_FLOAT64: memcpy(&x, b + i * 8, 8); return x;
    case DT_FLOAT16: memcpy(&h, b + i * 2, 2); return dtype_f16_to_f32(h);
    case DT_BFLOAT16: memcpy(&h, b + i * 2, 2); return dtype_bf16_to_f32(h);
    default: return dtype_f8_to_f32(t, b[i]);
    }
}

int dtype_close(double expected, double got, double rtol, double atol, double *err)
{
    double x = expected, y = got;
    int ok;
    if (isnan(x) || isnan(y))
        ok = isnan(x) && isnan(y);
    else if (isinf(x) || isinf(y))
        ok = x == y;
    else
        ok = fabs(y - x) <= atol + rtol * fabs(x);
    *err = (isnan(x) || isnan(y) || isinf(x) || isinf(y)) ? (ok ? 0 : INFINITY) : fabs(y - x);
    return ok;
}
