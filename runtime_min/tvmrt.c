/*
 * tvmrt: status messages and the string operators. Everything else of the
 * runtime is in tvmrt.h as static inline functions so that kernels inline
 * it.
 */
#include "tvmrt.h"

#include <stdio.h>
#include <stdlib.h>

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

/* The flat indexes into a and b of element i of a broadcast result.
 * shape: rank, the result's dims, a's strides, b's strides (0 along a
 * broadcast axis). */
static void tvmrt_bcast(const int32_t *shape, int32_t i, int32_t *ia, int32_t *ib)
{
    int32_t rank = shape[0], d, ra = 0, rb = 0;
    for (d = rank - 1; d >= 0; d--) {
        int32_t k = i % shape[1 + d];
        i /= shape[1 + d];
        ra += k * shape[1 + rank + d];
        rb += k * shape[1 + 2 * rank + d];
    }
    *ia = ra;
    *ib = rb;
}

/* Appends n bytes of s and a NUL to pool at *used; 1 if they do not fit. */
static int tvmrt_pool_put(char *pool, int32_t pool_bytes, int32_t *used, const char *s, size_t n)
{
    if ((size_t)(pool_bytes - *used) < n + 1)
        return 1;
    memcpy(pool + *used, s, n);
    pool[*used + (int32_t)n] = '\0';
    *used += (int32_t)n + 1;
    return 0;
}

int tvmrt_string_concat(const tvmrt_string *a, const tvmrt_string *b, tvmrt_string *out,
                        int32_t n, const int32_t *shape, char *pool, int32_t pool_bytes)
{
    int32_t i, ia, ib, used = 0;
    for (i = 0; i < n; i++) {
        size_t la, lb;
        tvmrt_bcast(shape, i, &ia, &ib);
        if (!a[ia] || !b[ib])
            return TVMRT_ERR_NULL_INPUT;
        la = strlen(a[ia]);
        lb = strlen(b[ib]);
        if ((size_t)(pool_bytes - used) < la + lb + 1)
            return TVMRT_ERR_STRING_POOL;
        out[i] = pool + used;
        memcpy(pool + used, a[ia], la);
        used += (int32_t)la;
        tvmrt_pool_put(pool, pool_bytes, &used, b[ib], lb);
    }
    return TVMRT_OK;
}

int tvmrt_string_eq(const tvmrt_string *a, const tvmrt_string *b, void *out, int32_t n,
                    const int32_t *shape)
{
    uint8_t *y = out;
    int32_t i, ia, ib;
    for (i = 0; i < n; i++) {
        tvmrt_bcast(shape, i, &ia, &ib);
        if (!a[ia] || !b[ib])
            return TVMRT_ERR_NULL_INPUT;
        y[i] = strcmp(a[ia], b[ib]) == 0;
    }
    return TVMRT_OK;
}

/* Python's str.isspace() for ASCII bytes */
static int tvmrt_is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

int tvmrt_string_split(const tvmrt_string *in, int32_t n_in, tvmrt_string *out, int32_t width,
                       void *counts, const char *const *delim, int32_t maxsplit, char *pool,
                       int32_t pool_bytes)
{
    int32_t i, used = 0, longest = 0;
    const char *sep = delim ? delim[0] : "";
    size_t dl = strlen(sep);
    for (i = 0; i < n_in; i++) {
        const char *s = in[i];
        int32_t k = 0, splits = 0;
        int64_t count;
        if (!s)
            return TVMRT_ERR_NULL_INPUT;
        for (;;) {
            const char *end;
            if (dl == 0) {
                while (tvmrt_is_space(*s))
                    s++;
                if (!*s)
                    break;
                end = s;
                if (maxsplit >= 0 && splits == maxsplit)
                    end = s + strlen(s);
                else
                    while (*end && !tvmrt_is_space(*end))
                        end++;
            } else {
                end = maxsplit >= 0 && splits == maxsplit ? NULL : strstr(s, sep);
                if (!end)
                    end = s + strlen(s);
            }
            if (k == width)
                return TVMRT_ERR_SHAPE;
            out[(int64_t)i * width + k] = pool + used;
            if (tvmrt_pool_put(pool, pool_bytes, &used, s, (size_t)(end - s)))
                return TVMRT_ERR_STRING_POOL;
            k++;
            if (dl != 0 && !*end)
                break;
            splits++;
            s = dl != 0 ? end + dl : end;
        }
        count = k;
        memcpy((char *)counts + (size_t)i * sizeof count, &count, sizeof count);
        if (k > longest)
            longest = k;
        for (; k < width; k++)
            out[(int64_t)i * width + k] = "";
    }
    return n_in > 0 && longest != width ? TVMRT_ERR_SHAPE : TVMRT_OK;
}

/* One UTF-8 code point at s (its byte length in *len); an invalid byte is
 * itself. */
static int32_t tvmrt_utf8(const char *s, int32_t *len)
{
    const unsigned char *c = (const unsigned char *)s;
    int32_t cp, n, i;
    if (c[0] < 0x80) {
        *len = 1;
        return c[0];
    }
    n = c[0] >= 0xf0 ? 4 : c[0] >= 0xe0 ? 3 : c[0] >= 0xc0 ? 2 : 1;
    cp = n == 4 ? c[0] & 7 : n == 3 ? c[0] & 15 : c[0] & 31;
    for (i = 1; i < n; i++) {
        if ((c[i] & 0xc0) != 0x80) {
            *len = 1;
            return c[0];
        }
        cp = (cp << 6) | (c[i] & 0x3f);
    }
    *len = n;
    return n == 1 ? (int32_t)c[0] : cp;
}

static int tvmrt_is_word(int32_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/* Adds instruction pc and what it reaches without consuming a character to
 * list, between code points prev and next (-1: the text's start or end). */
static void tvmrt_rx_add(const int32_t *prog, int32_t *list, int32_t *len, int32_t *mark,
                         int32_t gen, int32_t *stack, int32_t pc, int32_t prev, int32_t next)
{
    int32_t sp = 0;
    stack[sp++] = pc;
    while (sp > 0) {
        const int32_t *ins;
        int ok;
        pc = stack[--sp];
        if (mark[pc] == gen)
            continue;
        mark[pc] = gen;
        ins = prog + 2 + 3 * pc;
        switch (ins[0]) {
        case 4: /* SPLIT */
            stack[sp++] = ins[2];
            stack[sp++] = ins[1];
            break;
        case 5: /* JMP */
            stack[sp++] = ins[1];
            break;
        case 6: /* ASSERT */
            ok = ins[1] == 1   ? prev < 0
                 : ins[1] == 2 ? next < 0
                               : (tvmrt_is_word(prev) != tvmrt_is_word(next)) == (ins[1] == 3);
            if (ok)
                stack[sp++] = pc + 1;
            break;
        default:
            list[(*len)++] = pc;
            break;
        }
    }
}

int tvmrt_regex_full_match(const tvmrt_string *in, int32_t n, void *out, const int32_t *prog,
                           void *scratch)
{
    int32_t n_ins = prog[0], i, j;
    const int32_t *classes = prog + 2 + 3 * n_ins;
    int32_t *cur = scratch, *nxt = cur + n_ins, *mark = nxt + n_ins, *stack = mark + n_ins;
    uint8_t *y = out;
    for (i = 0; i < n; i++) {
        const char *s = in[i];
        int32_t n_cur = 0, gen = 0, prev = -1, c, clen = 0, next, next_len = 0, matched = 0;
        if (!s)
            return TVMRT_ERR_NULL_INPUT;
        for (j = 0; j < n_ins; j++)
            mark[j] = -1;
        c = *s ? tvmrt_utf8(s, &clen) : -1;
        tvmrt_rx_add(prog, cur, &n_cur, mark, gen, stack, 0, prev, c);
        while (c >= 0 && n_cur > 0) {
            int32_t n_nxt = 0, *t;
            s += clen;
            next = *s ? tvmrt_utf8(s, &next_len) : -1;
            gen++;
            for (j = 0; j < n_cur; j++) {
                const int32_t *ins = prog + 2 + 3 * cur[j];
                int ok;
                switch (ins[0]) {
                case 1: /* CHAR */
                    ok = c == ins[1];
                    break;
                case 2: /* ANY */
                    ok = c != '\n';
                    break;
                case 3: /* CLASS */
                    ok = c > 127 ? ins[2]
                                 : (classes[8 * ins[1] + (c >> 4)] >> (c & 15)) & 1;
                    break;
                default: /* MATCH before the end */
                    ok = 0;
                    break;
                }
                if (ok)
                    tvmrt_rx_add(prog, nxt, &n_nxt, mark, gen, stack, cur[j] + 1, c, next);
            }
            t = cur;
            cur = nxt;
            nxt = t;
            n_cur = n_nxt;
            prev = c;
            c = next;
            clen = next_len;
        }
        for (j = 0; j < n_cur && c < 0; j++)
            matched |= prog[2 + 3 * cur[j]] == 0;
        y[i] = (uint8_t)matched;
    }
    return TVMRT_OK;
}

/* x in the shortest form that reads back as the same float (is_float) or
 * double, laid out as numpy prints it: positional from 1e-4 to below 1e16
 * ("0.5", "100.0"), scientific otherwise ("1e-05", "1.5e+16"); "nan",
 * "inf", "-inf". */
static void tvmrt_format_real(char *buf, size_t cap, double x, int is_float)
{
    char e[40], digits[24];
    int p, exp, nd = 0, k;
    size_t o = 0;
    const char *c;
    if (x != x) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (x > 1.7976931348623157e308 || x < -1.7976931348623157e308) {
        snprintf(buf, cap, x > 0 ? "inf" : "-inf");
        return;
    }
    for (p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (is_float ? strtof(e, NULL) == (float)x : strtod(e, NULL) == x)
            break;
    }
    /* e is [-]d[.ddd]e(+|-)XX */
    c = e;
    if (*c == '-')
        buf[o++] = *c++;
    for (; *c != 'e'; c++)
        if (*c != '.')
            digits[nd++] = *c;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    exp = atoi(c + 1);
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            buf[o++] = '0';
            buf[o++] = '.';
            for (k = -1; k > exp; k--)
                buf[o++] = '0';
            for (k = 0; k < nd; k++)
                buf[o++] = digits[k];
        } else {
            for (k = 0; k <= exp; k++)
                buf[o++] = k < nd ? digits[k] : '0';
            buf[o++] = '.';
            if (nd <= exp + 1)
                buf[o++] = '0';
            for (k = exp + 1; k < nd; k++)
                buf[o++] = digits[k];
        }
        buf[o] = '\0';
    } else {
        buf[o++] = digits[0];
        if (nd > 1) {
            buf[o++] = '.';
            for (k = 1; k < nd; k++)
                buf[o++] = digits[k];
        }
        snprintf(buf + o, cap - o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
}

int tvmrt_cast_to_string(const void *in, int dtype, tvmrt_string *out, int32_t n, char *pool,
                         int32_t pool_bytes)
{
    int32_t i, used = 0;
    char buf[48];
    for (i = 0; i < n; i++) {
        switch (dtype) {
        case 1:
            tvmrt_format_real(buf, sizeof buf, (double)((const float *)in)[i], 1);
            break;
        case 11:
            tvmrt_format_real(buf, sizeof buf, ((const double *)in)[i], 0);
            break;
        case 2:
            snprintf(buf, sizeof buf, "%u", (unsigned)((const uint8_t *)in)[i]);
            break;
        case 3:
            snprintf(buf, sizeof buf, "%d", (int)((const int8_t *)in)[i]);
            break;
        case 4:
            snprintf(buf, sizeof buf, "%u", (unsigned)((const uint16_t *)in)[i]);
            break;
        case 5:
            snprintf(buf, sizeof buf, "%d", (int)((const int16_t *)in)[i]);
            break;
        case 6:
            snprintf(buf, sizeof buf, "%ld", (long)((const int32_t *)in)[i]);
            break;
        case 12:
            snprintf(buf, sizeof buf, "%lu", (unsigned long)((const uint32_t *)in)[i]);
            break;
        case 7:
            snprintf(buf, sizeof buf, "%lld", (long long)((const int64_t *)in)[i]);
            break;
        default: /* 13 */
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)((const uint64_t *)in)[i]);
            break;
        }
        out[i] = pool + used;
        if (tvmrt_pool_put(pool, pool_bytes, &used, buf, strlen(buf)))
            return TVMRT_ERR_STRING_POOL;
    }
    return TVMRT_OK;
}

int tvmrt_cast_from_string(const tvmrt_string *in, void *out, int dtype, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i++) {
        const char *s = in[i];
        if (!s)
            return TVMRT_ERR_NULL_INPUT;
        switch (dtype) {
        case 1:
            ((float *)out)[i] = strtof(s, NULL);
            break;
        case 11:
            ((double *)out)[i] = strtod(s, NULL);
            break;
        case 2:
            ((uint8_t *)out)[i] = (uint8_t)strtoul(s, NULL, 10);
            break;
        case 3:
            ((int8_t *)out)[i] = (int8_t)strtol(s, NULL, 10);
            break;
        case 4:
            ((uint16_t *)out)[i] = (uint16_t)strtoul(s, NULL, 10);
            break;
        case 5:
            ((int16_t *)out)[i] = (int16_t)strtol(s, NULL, 10);
            break;
        case 6:
            ((int32_t *)out)[i] = (int32_t)strtol(s, NULL, 10);
            break;
        case 12:
            ((uint32_t *)out)[i] = (uint32_t)strtoul(s, NULL, 10);
            break;
        case 7:
            ((int64_t *)out)[i] = (int64_t)strtoll(s, NULL, 10);
            break;
        default: /* 13 */
            ((uint64_t *)out)[i] = (uint64_t)strtoull(s, NULL, 10);
            break;
        }
    }
    return TVMRT_OK;
}

/* Element k of a numeric buffer of ONNX type dtype: integers in *iv
 * (returns 1), floats in *dv (returns 0). */
static int tvmrt_num(const void *p, int dtype, int32_t k, int64_t *iv, double *dv)
{
    switch (dtype) {
    case 1: *dv = (double)((const float *)p)[k]; return 0;
    case 11: *dv = ((const double *)p)[k]; return 0;
    case 7: *iv = ((const int64_t *)p)[k]; return 1;
    case 6: *iv = ((const int32_t *)p)[k]; return 1;
    case 12: *iv = ((const uint32_t *)p)[k]; return 1;
    case 5: *iv = ((const int16_t *)p)[k]; return 1;
    case 4: *iv = ((const uint16_t *)p)[k]; return 1;
    case 3: *iv = ((const int8_t *)p)[k]; return 1;
    default: *iv = ((const uint8_t *)p)[k]; return 1;
    }
}

int tvmrt_label_encode(const void *in, int32_t n, int key_dtype, const void *keys,
                       const char *const *skeys, int32_t n_keys, void *out, const void *values,
                       const char *const *svalues, int32_t value_bytes)
{
    int32_t i;
    for (i = 0; i < n; i++) {
        int32_t lo = 0, hi = n_keys, at = n_keys;
        int64_t xi = 0, ki = 0;
        double xd = 0, kd = 0;
        int is_int = 0;
        const char *xs = NULL;
        if (skeys) {
            xs = ((const tvmrt_string *)in)[i];
            if (!xs)
                return TVMRT_ERR_NULL_INPUT;
        } else {
            is_int = tvmrt_num(in, key_dtype, i, &xi, &xd);
        }
        if (!skeys && !is_int && xd != xd) {
            /* NaN sorts last among the keys */
            if (n_keys > 0 && (tvmrt_num(keys, key_dtype, n_keys - 1, &ki, &kd), kd != kd))
                at = n_keys - 1;
            lo = hi;
        }
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            int c;
            if (skeys) {
                c = strcmp(xs, skeys[mid]);
            } else {
                tvmrt_num(keys, key_dtype, mid, &ki, &kd);
                c = is_int ? (xi > ki) - (xi < ki) : kd != kd ? -1 : (xd > kd) - (xd < kd);
            }
            if (c == 0) {
                at = mid;
                break;
            }
            if (c < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (svalues)
            ((tvmrt_string *)out)[i] = svalues[at];
        else
            memcpy((char *)out + (size_t)i * (size_t)value_bytes,
                   (const char *)values + (size_t)at * (size_t)value_bytes, (size_t)value_bytes);
    }
    return TVMRT_OK;
}

/* Bytes of an element of ONNX type dtype (the types tvmrt_num reads). */
static size_t tvmrt_dtype_bytes(int dtype)
{
    switch (dtype) {
    case 11: case 7: return 8;
    case 1: case 6: case 12: return 4;
    case 5: case 4: return 2;
    default: return 1;
    }
}

static int tvmrt_is_nonzero(const void *x, int dtype, int32_t k)
{
    int64_t iv = 0;
    double dv = 0;
    return tvmrt_num(x, dtype, k, &iv, &dv) ? iv != 0 : dv != 0;
}

int tvmrt_nonzero(const void *x, int dtype, int32_t n, const int32_t *dims, void *out, int32_t k)
{
    int64_t *y = out;
    int32_t i, j = 0, count = 0, rank = dims[0], d;
    for (i = 0; i < n; i++)
        count += tvmrt_is_nonzero(x, dtype, i);
    if (count != k)
        return TVMRT_ERR_SHAPE;
    for (i = 0; i < n; i++) {
        int32_t rem = i;
        if (!tvmrt_is_nonzero(x, dtype, i))
            continue;
        for (d = rank - 1; d >= 0; d--) {
            y[(int64_t)d * k + j] = rem % dims[1 + d];
            rem /= dims[1 + d];
        }
        j++;
    }
    return TVMRT_OK;
}

/* -1, 0, 1 as slice a of x ([outer, len, inner]) sorts before, with or
 * after slice b (row-major order of its elements) */
static int tvmrt_slice_cmp(const void *x, int dtype, int32_t outer, int32_t len, int32_t inner,
                           int32_t a, int32_t b)
{
    int32_t o, m;
    for (o = 0; o < outer; o++)
        for (m = 0; m < inner; m++) {
            int32_t base = o * len * inner + m;
            int64_t ia = 0, ib = 0;
            double da = 0, db = 0;
            int c;
            if (tvmrt_num(x, dtype, base + a * inner, &ia, &da)) {
                tvmrt_num(x, dtype, base + b * inner, &ib, &db);
                c = (ia > ib) - (ia < ib);
            } else {
                tvmrt_num(x, dtype, base + b * inner, &ib, &db);
                c = (da > db) - (da < db);
            }
            if (c)
                return c;
        }
    return 0;
}

int tvmrt_unique(const void *x, int dtype, int32_t outer, int32_t len, int32_t inner, int sorted,
                 int32_t k, void *y, void *indices, void *inverse, void *counts, void *scratch)
{
    int32_t *order = scratch, *tmp = order + len, *grp = tmp + len;
    int32_t i, w, n_groups = 0, next = 0;
    size_t es = tvmrt_dtype_bytes(dtype);
    int64_t *ind = indices, *inv = inverse, *cnt = counts;
    /* stable bottom-up merge sort of the slice indexes */
    for (i = 0; i < len; i++)
        order[i] = i;
    for (w = 1; w < len; w *= 2) {
        int32_t lo, *t;
        for (lo = 0; lo < len; lo += 2 * w) {
            int32_t mid = lo + w < len ? lo + w : len, hi = lo + 2 * w < len ? lo + 2 * w : len;
            int32_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                tmp[o++] = tvmrt_slice_cmp(x, dtype, outer, len, inner, order[b], order[a]) < 0
                               ? order[b++] : order[a++];
            while (a < mid)
                tmp[o++] = order[a++];
            while (b < hi)
                tmp[o++] = order[b++];
        }
        t = order;
        order = tmp;
        tmp = t;
    }
    /* groups of equal slices, numbered in sorted order */
    for (i = 0; i < len; i++) {
        if (i > 0 && tvmrt_slice_cmp(x, dtype, outer, len, inner, order[i - 1], order[i]) != 0)
            n_groups++;
        grp[order[i]] = n_groups;
    }
    if (len > 0)
        n_groups++;
    if (n_groups != k)
        return TVMRT_ERR_SHAPE;
    /* tmp[g]: the output position of group g (sorted: g; else the order of
     * first occurrence) */
    for (i = 0; i < n_groups; i++)
        tmp[i] = sorted ? i : -1;
    for (i = 0; i < len; i++)
        if (tmp[grp[i]] < 0)
            tmp[grp[i]] = next++;
    for (i = 0; i < k && cnt; i++)
        cnt[i] = 0;
    for (i = 0; i < n_groups; i++)
        order[i] = -1; /* first occurrence of output position i not seen yet */
    for (i = 0; i < len; i++) {
        int32_t r = tmp[grp[i]], o;
        if (inv)
            inv[i] = r;
        if (cnt)
            cnt[r]++;
        if (order[r] >= 0)
            continue;
        order[r] = i;
        if (ind)
            ind[r] = i;
        for (o = 0; o < outer; o++)
            memcpy((char *)y + ((size_t)o * (size_t)k + (size_t)r) * (size_t)inner * es,
                   (const char *)x + ((size_t)o * (size_t)len + (size_t)i) * (size_t)inner * es,
                   (size_t)inner * es);
    }
    return TVMRT_OK;
}
