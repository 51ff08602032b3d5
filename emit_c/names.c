/*
 * Names and forms of what the emitted files contain (names.h). The
 * constants' form (readable array, union with the typed view, rows of
 * string literals) is decided here once, since NAME.c declares each
 * constant with the same text that NAME_weights.c defines it with.
 */
#include "names.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *emit_safe(Arena *a, const char *s)
{
    size_t n = strlen(s), i, j = 0;
    char *out = arena_alloc(a, 2 * n + 1);
    if (!out)
        die("compile arena exhausted");
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[j++] = (c >= 32 && c < 127) ? (char)c : '?';
        if (c == '*' && s[i + 1] == '/')
            out[j++] = ' ';
    }
    out[j] = 0;
    return out;
}

const char *emit_ctype(DType t)
{
    return dtype_ctype(t);
}

/* The runtime's name for an 8-bit float format (tvmrt_f32_to_<name>,
 * tvmrt_<name>_to_f32) or a packed type (tvmrt_ld_<name>, tvmrt_st_<name>);
 * NULL for the other types. */
const char *emit_small_name(DType t)
{
    switch (t) {
    case DT_FLOAT8E4M3FN: return "f8e4m3fn";
    case DT_FLOAT8E4M3FNUZ: return "f8e4m3fnuz";
    case DT_FLOAT8E5M2: return "f8e5m2";
    case DT_FLOAT8E5M2FNUZ: return "f8e5m2fnuz";
    case DT_FLOAT8E8M0: return "f8e8m0";
    case DT_UINT4: return "u4";
    case DT_INT4: return "i4";
    case DT_FLOAT4E2M1: return "f4e2m1";
    case DT_UINT2: return "u2";
    case DT_INT2: return "i2";
    default: return NULL;
    }
}

const char *emit_compute_ctype(DType t)
{
    if (t == DT_BOOL)
        return "int";
    return dtype_compute_ctype(t);
}

const char *emit_upper(Arena *a, const char *s)
{
    char *u = arena_strdup(a, s);
    char *c;
    for (c = u; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    return u;
}

const char *emit_const_name(const Program *p, int32_t vi)
{
    return arena_printf(p->g->arena, "%s_w%d", p->name, (int)vi);
}

int64_t emit_const_bytes(const Value *v)
{
    return dtype_nbytes(v->dtype, value_numel(v));
}

int emit_const_is_rows(const Value *v)
{
    return emit_const_bytes(v) > EMIT_SMALL_BYTES;
}

int emit_const_is_union(const Value *v)
{
    return emit_const_is_rows(v) || v->dtype == DT_FLOAT32 || v->dtype == DT_FLOAT64;
}

const char *emit_const_decl(const Program *p, int32_t vi)
{
    const Value *v = &p->g->values[vi];
    const char *name = emit_const_name(p, vi);
    int64_t n = dtype_nbytes(v->dtype, value_numel(v)) / (int64_t)dtype_size(v->dtype), alloc_n = n ? n : 1;
    Arena *a = p->g->arena;
    if (emit_const_is_rows(v))
        return arena_printf(a, "const union %s_u { unsigned char rows[%lld][%d]; %s v[%lld]; } %s",
                            name, (long long)((emit_const_bytes(v) + EMIT_ROW_BYTES - 1) / EMIT_ROW_BYTES),
                            EMIT_ROW_BYTES, emit_ctype(v->dtype), (long long)alloc_n, name);
    if (emit_const_is_union(v))
        return arena_printf(a, "const union %s_u { %s bits[%lld]; %s v[%lld]; } %s", name,
                            dtype_size(v->dtype) == 8 ? "uint64_t" : "uint32_t",
                            (long long)alloc_n, emit_ctype(v->dtype), (long long)alloc_n, name);
    return arena_printf(a, "const %s %s[%lld]", emit_ctype(v->dtype), name, (long long)alloc_n);
}

const char *emit_const_ref(const Program *p, int32_t vi)
{
    const char *name = emit_const_name(p, vi);
    return emit_const_is_union(&p->g->values[vi]) ? arena_printf(p->g->arena, "%s.v", name) : name;
}

/* Marks in used[] every value emitted as a constant: read by a kernel, or
 * a graph output that is constant. */
void emit_mark_used_consts(const Program *p, char *used)
{
    const Graph *g = p->g;
    int ki, bi, j;
    for (ki = 0; ki < p->n_kernels; ki++) {
        const Kernel *k = p->kernels[ki];
        if (!k)
            continue;
        for (bi = 0; bi < k->n_bufs; bi++)
            if (k->bufs[bi].scope == BUF_CONST)
                used[k->bufs[bi].value] = 1;
    }
    for (j = 0; j < g->n_outputs; j++)
        if (g->values[g->outputs[j]].data)
            used[g->outputs[j]] = 1;
}

int64_t emit_weights_bytes(const Program *p)
{
    const Graph *g = p->g;
    char *used = calloc((size_t)g->n_values + 1, 1);
    int64_t sum = 0;
    int32_t vi;
    if (!used)
        die("out of memory");
    emit_mark_used_consts(p, used);
    for (vi = 0; vi < g->n_values; vi++)
        if (used[vi])
            sum += emit_const_bytes(&g->values[vi]);
    free(used);
    return sum;
}
