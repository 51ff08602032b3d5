/*
 * Element types. The enum values are ONNX's TensorProto.DataType numbers so
 * that the frontend can store them unchanged. DTYPE rows:
 *
 *   DTYPE(ID, onnx_number, json_name, c_storage_type, bytes, c_compute_type)
 *
 * float16 and bfloat16 are stored as their 16-bit patterns and computed in
 * float; so are the 8-bit floats (float8e4m3fn, float8e4m3fnuz, float8e5m2,
 * float8e5m2fnuz, float8e8m0: one byte each). The sub-byte types (uint4,
 * int4, float4e2m1: two per byte; uint2, int2: four per byte; the first
 * element in the least significant bits, as ONNX's TensorProto stores them)
 * stay packed in weights, the arena and the caller's buffers; `bytes` is 1
 * for them (an upper bound per element: dtype_nbytes gives a tensor's exact
 * size) and they are computed in float (float4e2m1), int8_t or uint8_t. bool is stored as one byte holding 0 or 1. A string element is a
 * pointer to a NUL-terminated UTF-8 string (tvmrt_string, a typedef of
 * const char * in tvmrt.h); 8 bytes are planned for it (at
 * least a pointer on every target). Strings are accepted only where
 * infer_graph allows them (StringNormalizer's input and output).
 */
#ifndef TVMCC_DTYPE_H
#define TVMCC_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#define DTYPE_TABLE(DTYPE)                                               \
    DTYPE(FLOAT32, 1, "float32", "float", 4, "float")                    \
    DTYPE(UINT8, 2, "uint8", "uint8_t", 1, "uint8_t")                    \
    DTYPE(INT8, 3, "int8", "int8_t", 1, "int8_t")                        \
    DTYPE(UINT16, 4, "uint16", "uint16_t", 2, "uint16_t")                \
    DTYPE(INT16, 5, "int16", "int16_t", 2, "int16_t")                    \
    DTYPE(INT32, 6, "int32", "int32_t", 4, "int32_t")                    \
    DTYPE(INT64, 7, "int64", "int64_t", 8, "int64_t")                    \
    DTYPE(BOOL, 9, "bool", "uint8_t", 1, "uint8_t")                      \
    DTYPE(FLOAT16, 10, "float16", "uint16_t", 2, "float")                \
    DTYPE(FLOAT64, 11, "float64", "double", 8, "double")                 \
    DTYPE(UINT32, 12, "uint32", "uint32_t", 4, "uint32_t")               \
    DTYPE(UINT64, 13, "uint64", "uint64_t", 8, "uint64_t")               \
    DTYPE(BFLOAT16, 16, "bfloat16", "uint16_t", 2, "float")              \
    DTYPE(FLOAT8E4M3FN, 17, "float8e4m3fn", "uint8_t", 1, "float")       \
    DTYPE(FLOAT8E4M3FNUZ, 18, "float8e4m3fnuz", "uint8_t", 1, "float")   \
    DTYPE(FLOAT8E5M2, 19, "float8e5m2", "uint8_t", 1, "float")           \
    DTYPE(FLOAT8E5M2FNUZ, 20, "float8e5m2fnuz", "uint8_t", 1, "float")   \
    DTYPE(UINT4, 21, "uint4", "uint8_t", 1, "uint8_t")                   \
    DTYPE(INT4, 22, "int4", "uint8_t", 1, "int8_t")                      \
    DTYPE(FLOAT4E2M1, 23, "float4e2m1", "uint8_t", 1, "float")           \
    DTYPE(FLOAT8E8M0, 24, "float8e8m0", "uint8_t", 1, "float")           \
    DTYPE(UINT2, 25, "uint2", "uint8_t", 1, "uint8_t")                   \
    DTYPE(INT2, 26, "int2", "uint8_t", 1, "int8_t")                      \
    DTYPE(STRING, 8, "string", "tvmrt_string", 8, "tvmrt_string")

typedef enum DType {
    DT_UNDEF = 0,
#define DTYPE_ENUM(id, num, json, ctype, bytes, cctype) DT_##id = num,
    DTYPE_TABLE(DTYPE_ENUM)
#undef DTYPE_ENUM
} DType;

/* 0 for unsupported types (complex, undefined). */
size_t dtype_size(DType t);
/* Bits per element: 2 or 4 for the packed types, 8 * dtype_size otherwise. */
int dtype_bits(DType t);
/* 1 for the packed sub-byte types (uint4, int4, float4e2m1, uint2, int2). */
int dtype_is_packed(DType t);
/* Exact bytes of n elements of t (packed types rounded up to a byte). */
int64_t dtype_nbytes(DType t, int64_t n);
/* "float32"...; "unsupported(N)" style names are not returned: NULL if unknown. */
const char *dtype_name(DType t);
const char *dtype_ctype(DType t);         /* storage type in C */
const char *dtype_compute_ctype(DType t); /* type arithmetic is done in */
int dtype_is_float(DType t);              /* float16/bfloat16/32/64 */
int dtype_is_signed_int(DType t);
int dtype_is_unsigned_int(DType t);       /* bool counts as unsigned */
/* The type used for arithmetic on loaded values (float16 -> float32). */
DType dtype_compute(DType t);

/* 1 if v truncated toward zero is a value of integer type t (0 for NaN,
 * infinities and out-of-range values): the check a float attribute passes
 * before it becomes an integer constant. */
int dtype_double_fits(DType t, double v);

/* 16-bit float formats <-> float: exact widening; narrowing rounds to
 * nearest even and keeps infinities and NaN. The compiler's one copy (the
 * emitted code has its own in runtime_min/tvmrt.h; a unit test checks that
 * both agree on every half value). */
#include <stdint.h>
float dtype_f16_to_f32(uint16_t h);

/* Float to integer type `to` as the emitted code converts (the runtime's
 * tvmrt_f64_to_i32/_i64/_u64): truncated toward zero when it fits, NaN -> 0,
 * out-of-range values saturate, through int32 for the types narrower than
 * 32 bits and int64 for uint32. The result is not yet wrapped to `to`: a
 * uint64 comes back as its two's-complement int64 bits. */
int64_t dtype_float_to_int(DType to, double x);
float dtype_bf16_to_f32(uint16_t h);
uint16_t dtype_f32_to_f16(float f);
uint16_t dtype_f32_to_bf16(float f);

/* The 8-bit and 4-bit float formats <-> float (runtime twins in tvmrt.h,
 * checked against each other on every pattern by the unit test).
 * dtype_f8_to_f32(t, b) decodes the bit pattern b of format t (one of the
 * four float8 types, float8e8m0 or float4e2m1) exactly. dtype_f32_to_f8
 * encodes with the conversion a store does: round to nearest even and,
 * without saturation, overflow to infinity (float8e5m2) or NaN (the fn/fnuz
 * types), as ONNX's Cast with saturate=0; saturation (Cast's default) is a
 * clamp to +-dtype_f8_max(t) in front of it. float4e2m1 has no NaN or
 * infinity and always saturates (NaN becomes 0x8, as ONNX's test data);
 * float8e8m0 rounds up and saturates (Cast's defaults, round_mode "up"). */
float dtype_f8_to_f32(DType t, unsigned b);
/* Element i of a buffer of float type t (float32/64, float16, bfloat16 or
 * an 8-bit float format) as double. */
double dtype_float_at(DType t, const void *p, int64_t i);
/* Whether got matches expected within atol + rtol * |expected| (NaN
 * matches NaN, an infinity only the same infinity); *err gets |got -
 * expected|, 0 for matching NaNs or infinities, INFINITY for others. */
int dtype_close(double expected, double got, double rtol, double atol, double *err);
unsigned dtype_f32_to_f8(DType t, float f);
double dtype_f8_max(DType t); /* largest finite value */
/* Cast to float8e8m0 with the other rounding modes, as ONNX's reference
 * (onnx.numpy_helper.to_float8e8m0) computes them on the float's exponent
 * field: mode 0 down (the exponent as it is), 1 nearest (up when the guard
 * bit is set and any lower bit or the exponent is nonzero), 2 nearest
 * without saturation, 3 up without saturation (up when any fraction bit is
 * set; below 2^-126, as the saturating store: values up to 2^-127 give
 * code 0); saturation keeps 0xfe, without it 0xfe rounds to 0xff (NaN); NaN and
 * infinity give NaN. Returns the value as float (2^(code - 127), code 0 as
 * 2^-127), which the store's conversion (up, saturating) keeps exactly. */
float dtype_e8m0_round(float f, int mode);
/* Element i of packed data p of type t, sign-extended for int4/int2 (the
 * float4e2m1 code for that type), and its store. */
int dtype_packed_get(DType t, const void *p, int64_t i);
void dtype_packed_set(DType t, void *p, int64_t i, int v);

#endif
