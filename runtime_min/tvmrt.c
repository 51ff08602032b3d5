/*
 * tvmrt: status messages and the string operators. Everything else of the
 * runtime is in tvmrt.h as static inline functions so that kernels inline
 * it.
 */
#include "tvmrt.h"

const char *tvmrt_status_message(int status)
{
#ifdef TVMRT_NO_MESSAGES
    (void)status;
    return "";
#else
    switch (status) {
    case TVMRT_OK:
        return "ok";
    case TVMRT_ERR_NULL_INPUT:
        return "an input pointer is NULL";
    case TVMRT_ERR_NULL_OUTPUT:
        return "an output pointer is NULL";
    case TVMRT_ERR_MISALIGNED:
        return "workspace is not aligned to TVMRT_WORKSPACE_ALIGN bytes";
    case TVMRT_ERR_INDEX:
        return "a data-dependent index is out of range";
    case TVMRT_ERR_SHAPE:
        return "a data-dependent element count differs from the compiled output shape";
    case TVMRT_ERR_STRING_POOL:
        return "output strings do not fit the compiled character pool (--string-bytes)";
    default:
        return "unknown status";
    }
#endif
}

static char tvmrt_ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static char tvmrt_ascii_upper(char c)
{
    return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
}

static int tvmrt_string_equal(const char *a, const char *b, int case_sensitive)
{
    for (; *a && *b; a++, b++)
        if (case_sensitive ? *a != *b : tvmrt_ascii_lower(*a) != tvmrt_ascii_lower(*b))
            return 0;
    return *a == *b;
}

int tvmrt_string_normalize(const tvmrt_string *in, int32_t n_in, tvmrt_string *out,
                           int32_t n_out, char *pool, int32_t pool_bytes,
                           const char *const *stop, int32_t n_stop, int case_action,
                           int case_sensitive)
{
    int32_t i, j, kept = 0, used = 0;
    for (i = 0; i < n_in; i++) {
        int is_stop = 0;
        if (!in[i])
            return TVMRT_ERR_NULL_INPUT;
        for (j = 0; j < n_stop && !is_stop; j++)
            is_stop = tvmrt_string_equal(in[i], stop[j], case_sensitive);
        if (is_stop)
            continue;
        if (kept == n_out)
            return TVMRT_ERR_SHAPE;
        if (case_action == 0) {
            out[kept] = in[i];
        } else {
            const char *c = in[i];
            out[kept] = pool + used;
            do {
                if (used == pool_bytes)
                    return TVMRT_ERR_STRING_POOL;
                pool[used++] = case_action == 1 ? tvmrt_ascii_lower(*c) : tvmrt_ascii_upper(*c);
            } while (*c++);
        }
        kept++;
    }
    if (kept == 0 && n_out == 1) {
        out[0] = "";
        return TVMRT_OK;
    }
    return kept == n_out ? TVMRT_OK : TVMRT_ERR_SHAPE;
}
