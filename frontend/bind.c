/*
 * Binding graph-input shapes from the command line (--input-shape) and the
 * check that every graph input ends up with a static shape. tvmcc plans
 * memory at compile time, so symbolic dimensions ("batch") must be fixed
 * before inference; the error for a dynamic input suggests a ready-made
 * option with the declared dims and 1 for each symbolic one.
 *
 * --input-value binds a graph input to constant values instead: it becomes
 * an initializer-like constant, leaves the graph inputs (and so the
 * generated API), and inference folds what depends on it, If conditions
 * included (frontend/control.c).
 */
#include "onnx.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"

/* "a, b, c" listing the graph inputs, for "no such input" errors. */
static const char *input_names(Graph *g)
{
    const char *s = "";
    int32_t i;
    for (i = 0; i < g->n_inputs && s; i++)
        s = arena_printf(g->arena, "%s%s'%s'", s, i ? ", " : "", g->values[g->inputs[i]].name);
    return s ? s : "?";
}

int onnx_bind_input_shape(Graph *g, const char *spec, Diag *d)
{
    const char *eq = spec ? strrchr(spec, '=') : NULL;
    const char *p;
    char *name;
    int64_t dims[TVMCC_MAX_RANK], numel = 1;
    int rank = 0, i;
    int32_t vi;
    Value *v;
    if (!eq || eq == spec)
        return diag_error(d, NULL, "--input-shape", "'%s' is not of the form NAME=D0,D1,...",
                          spec ? spec : "");
    name = arena_strndup(g->arena, spec, (size_t)(eq - spec));
    if (!name)
        return diag_error(d, NULL, "--input-shape", "out of memory");
    p = eq + 1;
    while (*p) {
        char *end;
        long long x;
        errno = 0;
        x = strtoll(p, &end, 10);
        if (end == p || errno || x < 0 || (*end && *end != ','))
            return diag_error(d, NULL, "--input-shape",
                              "'%s': dimensions must be non-negative integers separated by commas",
                              spec);
        if (rank == TVMCC_MAX_RANK)
            return diag_error(d, NULL, "--input-shape", "'%s': more than %d dimensions", spec,
                              TVMCC_MAX_RANK);
        if (ck_mul(numel, (int64_t)x, &numel) || numel > ONNX_MAX_TENSOR_ELEMS)
            return diag_error(d, NULL, "--input-shape",
                              "'%s': more than %lld elements (the limit per tensor)", spec,
                              (long long)ONNX_MAX_TENSOR_ELEMS);
        dims[rank++] = (int64_t)x;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return diag_error(d, NULL, "--input-shape", "'%s': trailing comma", spec);
    }
    vi = graph_find_value(g, name);
    if (vi < 0 && strchr(name, '[')) {
        /* an element of a sequence input: NAME[K] (frontend/seq_io.c) */
        const char *br = strchr(name, '[');
        char *base = arena_strndup(g->arena, name, (size_t)(br - name));
        int32_t bi = base ? graph_find_value(g, base) : -1;
        int32_t count = 0;
        for (i = 0; bi >= 0 && g->in_tags && i < g->n_inputs; i++)
            count += g->in_tags[i].seq && !strcmp(g->in_tags[i].seq, base);
        if (bi >= 0 && (g->values[bi].io_kind & IO_SEQUENCE) && !g->values[bi].absent)
            return diag_error(d, NULL, "--input-shape", "'%s': sequence input '%s' has %d "
                              "element%s (--sequence-length %s=%d); elements are %s[0] to "
                              "%s[%d]", spec, base, (int)count, count == 1 ? "" : "s", base,
                              (int)count, base, base, (int)count - 1);
    }
    if (vi >= 0 && g->values[vi].io_kind & IO_SEQUENCE)
        return diag_error(d, NULL, "--input-shape", "'%s' is a sequence input; shape its "
                          "elements with --input-shape '%s[K]=D0,D1,...'", name, name);
    if (vi < 0 || g->values[vi].input_index < 0) {
        if (vi >= 0 && g->values[vi].is_initializer)
            return diag_error(d, NULL, "--input-shape",
                              "'%s' is an initializer (a constant), not a graph input", name);
        return diag_error(d, NULL, "--input-shape", "the model has no graph input '%s' (inputs: %s)",
                          name, input_names(g));
    }
    v = &g->values[vi];
    if (v->rank >= 0 && v->rank != rank)
        return diag_error(d, NULL, "--input-shape",
                          "input '%s' has rank %d in the model, but %d dimensions were given", name,
                          v->rank, rank);
    for (i = 0; v->rank >= 0 && i < rank; i++)
        if (v->dims[i] >= 0 && v->dims[i] != dims[i])
            return diag_error(d, NULL, "--input-shape",
                              "dimension %d of input '%s' is %lld in the model, not %lld", i, name,
                              (long long)v->dims[i], (long long)dims[i]);
    v->rank = rank;
    for (i = 0; i < TVMCC_MAX_RANK; i++) {
        v->dims[i] = i < rank ? dims[i] : -1;
        v->dim_param[i] = NULL;
    }
    return 0;
}

int onnx_check_inputs_static(Graph *g, Diag *d)
{
    int32_t k;
    int bad = 0;
    for (k = 0; k < g->n_inputs; k++) {
        Value *v = &g->values[g->inputs[k]];
        const char *which = "", *suggest = "", *q;
        int i, ndyn = 0;
        if (v->dtype == DT_UNDEF) {
            diag_error(d, NULL, NULL, "input '%s' has no element type in the model", v->name);
            bad++;
            continue;
        }
        /* an element of a sequence input, "x[0]", is quoted for the shell */
        q = strchr(v->name, '[') ? "'" : "";
        if (v->rank < 0) {
            diag_error(d, NULL, NULL, "input '%s' has unknown rank; bind it with --input-shape "
                       "%s%s=D0,D1,...%s", v->name, q, v->name, q);
            bad++;
            continue;
        }
        for (i = 0; i < v->rank; i++) {
            suggest = arena_printf(g->arena, "%s%s%lld", suggest ? suggest : "", i ? "," : "",
                                   v->dims[i] >= 0 ? (long long)v->dims[i] : 1LL);
            if (v->dims[i] >= 0)
                continue;
            if (v->dim_param[i])
                which = arena_printf(g->arena, "%s%s%d ('%s')", which ? which : "",
                                     ndyn ? ", " : "", i, v->dim_param[i]);
            else
                which = arena_printf(g->arena, "%s%s%d", which ? which : "", ndyn ? ", " : "", i);
            ndyn++;
        }
        if (ndyn) {
            diag_error(d, NULL, NULL, "input '%s' has dynamic dimension%s %s; bind it with "
                       "--input-shape %s%s=%s%s", v->name, ndyn > 1 ? "s" : "",
                       which ? which : "?", q, v->name, suggest ? suggest : "?", q);
            bad++;
        }
    }
    return bad;
}

/* Parses one element of --input-value for dtype t into dst. Returns 0, or 1
 * when the text is not a value of t, 2 when it is out of t's range. */
static int parse_element(DType t, const char *s, void *dst)
{
    char *end;
    errno = 0;
    if (t == DT_BOOL) {
        uint8_t b;
        if (!strcmp(s, "true") || !strcmp(s, "1"))
            b = 1;
        else if (!strcmp(s, "false") || !strcmp(s, "0"))
            b = 0;
        else
            return 1;
        memcpy(dst, &b, 1);
        return 0;
    }
    if (dtype_is_float(t)) {
        double x = strtod(s, &end);
        if (end == s || *end)
            return 1;
        if (errno == ERANGE && fabs(x) > 1.0)
            return 2;
        if (dtype_bits(t) <= 8) { /* float8, float4e2m1: the bit pattern */
            unsigned char b;
            if (isfinite(x) && fabs(x) > dtype_f8_max(t))
                return 2;
            b = (unsigned char)dtype_f32_to_f8(t, (float)x);
            memcpy(dst, &b, 1);
            return 0;
        }
        if (t == DT_FLOAT64) {
            memcpy(dst, &x, sizeof x);
            return 0;
        }
        if (isfinite(x) && fabs(x) > (t == DT_FLOAT16 ? 65504.0 : (double)FLT_MAX))
            return 2;
        if (t == DT_FLOAT32) {
            float f = (float)x;
            memcpy(dst, &f, sizeof f);
        } else {
            uint16_t h = t == DT_FLOAT16 ? dtype_f32_to_f16((float)x) : dtype_f32_to_bf16((float)x);
            memcpy(dst, &h, sizeof h);
        }
        return 0;
    }
    if (dtype_is_unsigned_int(t)) {
        unsigned long long x, max = t == DT_UINT8 ? 0xffULL : t == DT_UINT16 ? 0xffffULL
                                    : t == DT_UINT4 ? 15ULL : t == DT_UINT2 ? 3ULL
                                    : t == DT_UINT32 ? 0xffffffffULL : ~0ULL;
        const char *p = s;
        while (*p == ' ')
            p++;
        x = strtoull(s, &end, 10);
        if (*p == '-' && end != s && !*end) /* strtoull wraps a negative number around */
            return 2;
        if (end == s || *end)
            return 1;
        if (errno == ERANGE || x > max)
            return 2;
        switch (t) {
        case DT_UINT8: case DT_UINT4: case DT_UINT2: { uint8_t v = (uint8_t)x; memcpy(dst, &v, sizeof v); break; }
        case DT_UINT16: { uint16_t v = (uint16_t)x; memcpy(dst, &v, sizeof v); break; }
        case DT_UINT32: { uint32_t v = (uint32_t)x; memcpy(dst, &v, sizeof v); break; }
        default: { uint64_t v = (uint64_t)x; memcpy(dst, &v, sizeof v); break; }
        }
        return 0;
    }
    if (dtype_is_signed_int(t)) {
        long long x = strtoll(s, &end, 10), lo, hi;
        if (end == s || *end)
            return 1;
        lo = t == DT_INT8 ? -128 : t == DT_INT16 ? -32768 : t == DT_INT32 ? -2147483647LL - 1
             : t == DT_INT4 ? -8 : t == DT_INT2 ? -2 : LLONG_MIN;
        hi = t == DT_INT8 ? 127 : t == DT_INT16 ? 32767 : t == DT_INT32 ? 2147483647LL
             : t == DT_INT4 ? 7 : t == DT_INT2 ? 1 : LLONG_MAX;
        if (errno == ERANGE || x < lo || x > hi)
            return 2;
        switch (t) {
        case DT_INT8: case DT_INT4: case DT_INT2: { int8_t v = (int8_t)x; memcpy(dst, &v, sizeof v); break; }
        case DT_INT16: { int16_t v = (int16_t)x; memcpy(dst, &v, sizeof v); break; }
        case DT_INT32: { int32_t v = (int32_t)x; memcpy(dst, &v, sizeof v); break; }
        default: { int64_t v = (int64_t)x; memcpy(dst, &v, sizeof v); break; }
        }
        return 0;
    }
    return 1;
}

int onnx_bind_input_values(Graph *g, const char *const *specs, int n_specs, Diag *d)
{
    int s;
    for (s = 0; s < n_specs; s++) {
        const char *spec = specs[s], *eq = strchr(spec, '='), *p;
        char *name, *item;
        int32_t vi, k;
        int64_t numel, count = 0;
        size_t esz;
        uint8_t *data;
        Value *v;
        int j;
        if (!eq || eq == spec)
            return diag_error(d, NULL, "--input-value", "'%s' is not of the form "
                              "NAME=V0,V1,...", spec);
        name = arena_strndup(g->arena, spec, (size_t)(eq - spec));
        if (!name)
            return diag_error(d, NULL, "--input-value", "out of memory");
        for (j = 0; j < s; j++) {
            const char *e = strchr(specs[j], '=');
            if (e && (size_t)(e - specs[j]) == strlen(name) && !strncmp(specs[j], name, strlen(name)))
                return diag_error(d, NULL, "--input-value", "input '%s' is given twice", name);
        }
        vi = graph_find_value(g, name);
        if (vi < 0 || g->values[vi].input_index < 0) {
            if (vi >= 0 && g->values[vi].is_initializer)
                return diag_error(d, NULL, "--input-value",
                                  "'%s' is an initializer (a constant), not a graph input", name);
            return diag_error(d, NULL, "--input-value",
                              "the model has no graph input '%s' (inputs: %s)", name,
                              input_names(g));
        }
        v = &g->values[vi];
        esz = dtype_size(v->dtype);
        if (v->dtype == DT_STRING || !esz || !dtype_name(v->dtype))
            return diag_error(d, NULL, "--input-value", "input '%s' is of type %s; only numeric "
                              "and bool inputs can be bound to values", name,
                              v->dtype == DT_UNDEF ? "undefined"
                              : dtype_name(v->dtype) ? dtype_name(v->dtype) : "unsupported");
        if (v->rank < 0 || (numel = value_numel(v)) < 0)
            return diag_error(d, NULL, "--input-value", "input '%s' has a dynamic shape; bind "
                              "it with --input-shape first", name);
        data = arena_alloc(g->arena, (size_t)numel * esz + 1);
        item = arena_alloc(g->arena, strlen(eq) + 1);
        if (!data || !item)
            return diag_error(d, NULL, "--input-value", "out of memory");
        /* every comma separates two values (an empty item is an error);
         * nothing after '=' is zero values */
        for (p = eq[1] ? eq + 1 : NULL; p;) {
            const char *c = strchr(p, ',');
            size_t len = c ? (size_t)(c - p) : strlen(p);
            int rc;
            memcpy(item, p, len);
            item[len] = 0;
            if (count < numel) {
                rc = parse_element(v->dtype, item, data + (size_t)count * esz);
                if (rc == 1)
                    return diag_error(d, NULL, "--input-value", "input '%s': value %lld '%s' is "
                                      "not a%s %s", name, (long long)count, item,
                                      v->dtype == DT_INT8 || v->dtype == DT_INT16 ||
                                      v->dtype == DT_INT32 || v->dtype == DT_INT64 ? "n" : "",
                                      dtype_name(v->dtype));
                if (rc == 2)
                    return diag_error(d, NULL, "--input-value", "input '%s': value %lld '%s' is "
                                      "out of range for %s", name, (long long)count, item,
                                      dtype_name(v->dtype));
            }
            count++;
            p = c ? c + 1 : NULL;
        }
        if (count == numel && dtype_is_packed(v->dtype)) {
            /* parsed one byte per element (a float4e2m1 code, an int8 or
             * uint8 value): pack them in place, front to back */
            for (count = 0; count < numel; count++) {
                int e = v->dtype == DT_INT4 || v->dtype == DT_INT2 ? (int)(int8_t)data[count]
                                                                  : (int)data[count];
                if (count % (8 / dtype_bits(v->dtype)) == 0) /* a fresh byte (its own value read) */
                    data[count / (8 / dtype_bits(v->dtype))] = 0;
                dtype_packed_set(v->dtype, data, count, e);
            }
            memset(data + dtype_nbytes(v->dtype, numel), 0, (size_t)(numel - dtype_nbytes(v->dtype, numel)));
        }
        if (count != numel) {
            char shape[TVMCC_MAX_RANK * 24 + 4];
            size_t at = 0;
            shape[at++] = '[';
            for (j = 0; j < v->rank; j++)
                at += (size_t)snprintf(shape + at, sizeof shape - at, j ? ",%lld" : "%lld",
                                       (long long)v->dims[j]);
            snprintf(shape + at, sizeof shape - at, "]");
            return diag_error(d, NULL, "--input-value", "input '%s' has %lld element%s (shape "
                              "%s), but %lld value%s given", name, (long long)numel,
                              numel == 1 ? "" : "s", shape, (long long)count,
                              count == 1 ? " was" : "s were");
        }
        /* the input becomes a constant, like an initializer: it leaves the
         * graph inputs, and the others move up */
        v->data = data;
        v->is_initializer = 1;
        v->declared = 0;
        if (g->in_tags && g->in_tags[v->input_index].seq)
            return diag_error(d, NULL, "--input-value", "'%s' is an element of sequence input "
                              "'%s'; --input-value binds tensor inputs only", name,
                              g->in_tags[v->input_index].seq);
        for (k = v->input_index; k + 1 < g->n_inputs; k++) {
            g->inputs[k] = g->inputs[k + 1];
            if (g->in_tags)
                g->in_tags[k] = g->in_tags[k + 1];
            g->values[g->inputs[k]].input_index = k;
        }
        g->n_inputs--;
        v->input_index = -1;
    }
    return 0;
}
