/*
 * Element type queries, all generated from the DTYPE_TABLE rows of dtype.h so
 * that adding a type is one row there. Unknown codes (strings, complex,
 * anything a file may carry) answer 0 / NULL rather than failing: callers
 * report them as model errors.
 */
#include "dtype.h"

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
