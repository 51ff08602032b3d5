/*
 * Writes NAME_weights.c: every constant a kernel reads (or a graph output
 * that is constant) as a `const` object with its exact bit pattern.
 *
 * Small constants (up to SMALL_BYTES) are arrays of integers, readable in
 * the file: floating types are a union of the bits as hex integers and the
 * typed view `.v`, so the value is exact and reading it through the union
 * is well defined C99; integer types are plain arrays of decimal values.
 *
 * Large constants are a union of rows of bytes, each row a string literal
 * of ROW_BYTES bytes (within C99's 4095-character limit for one literal),
 * and the typed view `.v`. A compiler reads a string literal an order of
 * magnitude faster than an initializer list of integers (resnet18: about 6 s
 * instead of 55 s with gcc -O2), and the bytes are still exact. The bytes
 * are the tensor in little-endian order, so NAME_weights.c refuses to
 * compile for a big-endian target.
 *
 * Names are NAME_w<N>, N the value's index in the graph, so several models
 * link together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

#define SMALL_BYTES 4096
#define ROW_BYTES 1024

const char *emit_const_name(const Program *p, int32_t vi)
{
    return arena_printf(p->g->arena, "%s_w%d", p->name, (int)vi);
}

static int64_t const_bytes(const Value *v)
{
    return value_numel(v) * (int64_t)dtype_size(v->dtype);
}

static int is_rows(const Value *v)
{
    return const_bytes(v) > SMALL_BYTES;
}

static int is_union(const Value *v)
{
    return is_rows(v) || v->dtype == DT_FLOAT32 || v->dtype == DT_FLOAT64;
}

const char *emit_const_decl(const Program *p, int32_t vi)
{
    const Value *v = &p->g->values[vi];
    const char *name = emit_const_name(p, vi);
    int64_t n = value_numel(v), alloc_n = n ? n : 1;
    Arena *a = p->g->arena;
    if (is_rows(v))
        return arena_printf(a, "const union %s_u { unsigned char rows[%lld][%d]; %s v[%lld]; } %s",
                            name, (long long)((const_bytes(v) + ROW_BYTES - 1) / ROW_BYTES),
                            ROW_BYTES, emit_ctype(v->dtype), (long long)alloc_n, name);
    if (is_union(v))
        return arena_printf(a, "const union %s_u { %s bits[%lld]; %s v[%lld]; } %s", name,
                            dtype_size(v->dtype) == 8 ? "uint64_t" : "uint32_t",
                            (long long)alloc_n, emit_ctype(v->dtype), (long long)alloc_n, name);
    return arena_printf(a, "const %s %s[%lld]", emit_ctype(v->dtype), name, (long long)alloc_n);
}

const char *emit_const_ref(const Program *p, int32_t vi)
{
    const char *name = emit_const_name(p, vi);
    return is_union(&p->g->values[vi]) ? arena_printf(p->g->arena, "%s.v", name) : name;
}

/* One row as a string literal: printable bytes as themselves, the rest as
 * three-digit octal escapes (which cannot run into a following digit). */
static void write_row(FILE *f, const unsigned char *b, size_t n)
{
    static const char digits[] = "01234567";
    char buf[ROW_BYTES * 4 + 4];
    size_t i, j = 0;
    buf[j++] = '"';
    for (i = 0; i < n; i++) {
        unsigned c = b[i];
        if (c >= 32 && c < 127 && c != '\\' && c != '"' && c != '?') {
            buf[j++] = (char)c;
        } else {
            buf[j++] = '\\';
            buf[j++] = digits[(c >> 6) & 7];
            buf[j++] = digits[(c >> 3) & 7];
            buf[j++] = digits[c & 7];
        }
    }
    buf[j++] = '"';
    fwrite(buf, 1, j, f);
}

static void write_values(FILE *f, const Value *v, int64_t n)
{
    const unsigned char *d = v->data;
    int64_t i;
    size_t es = dtype_size(v->dtype);
    for (i = 0; i < n; i++) {
        const unsigned char *e = d + (size_t)i * es;
        if (i % 8 == 0)
            fputs(i ? ",\n    " : "    ", f);
        else
            fputs(", ", f);
        switch (v->dtype) {
        case DT_FLOAT32:
        case DT_UINT32: {
            uint32_t x;
            memcpy(&x, e, 4);
            fprintf(f, "0x%08lxu", (unsigned long)x);
            break;
        }
        case DT_FLOAT64:
        case DT_UINT64: {
            uint64_t x;
            memcpy(&x, e, 8);
            fprintf(f, "UINT64_C(0x%016llx)", (unsigned long long)x);
            break;
        }
        case DT_FLOAT16:
        case DT_BFLOAT16:
        case DT_UINT16: {
            uint16_t x;
            memcpy(&x, e, 2);
            fprintf(f, "0x%04x", (unsigned)x);
            break;
        }
        case DT_INT16: {
            int16_t x;
            memcpy(&x, e, 2);
            fprintf(f, "%d", (int)x);
            break;
        }
        case DT_INT32: {
            int32_t x;
            memcpy(&x, e, 4);
            if (x == INT32_MIN)
                fprintf(f, "INT32_MIN");
            else
                fprintf(f, "%ld", (long)x);
            break;
        }
        case DT_INT64: {
            int64_t x;
            memcpy(&x, e, 8);
            if (x == INT64_MIN)
                fprintf(f, "INT64_MIN");
            else
                fprintf(f, "INT64_C(%lld)", (long long)x);
            break;
        }
        case DT_INT8:
            fprintf(f, "%d", (int)(int8_t)*e);
            break;
        case DT_UINT8:
        case DT_BOOL:
            fprintf(f, "%u", (unsigned)*e);
            break;
        default:
            die("constant of type %d cannot be emitted", (int)v->dtype);
        }
    }
    if (n == 0)
        fputs("    0", f);
    fputs("\n", f);
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
            sum += const_bytes(&g->values[vi]);
    free(used);
    return sum;
}

int emit_weights(Program *p, FILE *f, Diag *d)
{
    const Graph *g = p->g;
    char *used = calloc((size_t)g->n_values + 1, 1);
    int32_t vi;
    (void)d;
    if (!used)
        die("out of memory");
    emit_mark_used_consts(p, used);
    fprintf(f, "/* %s_weights.c: constants of %s, generated by tvmcc %s. Do not edit. */\n",
            p->name, emit_safe(g->arena, p->model_base), p->version);
    fprintf(f, "#include <stdint.h>\n\n");
    fprintf(f, "/* Large constants are stored as little-endian bytes. */\n"
               "#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)\n"
               "#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
               "#error \"%s_weights.c holds little-endian data; big-endian targets are not supported\"\n"
               "#endif\n#endif\n\n", p->name);
    {
        const char *U = emit_upper(g->arena, p->name);
        fprintf(f, "/* Optional placement: -D%s_WEIGHTS_SECTION=.name puts every constant of\n"
                   " * this model into that linker section (NAME.mk: %s_WEIGHTS_SECTION). */\n"
                   "#ifdef %s_WEIGHTS_SECTION\n"
                   "#define %s_WSTR_(s) #s\n#define %s_WSTR(s) %s_WSTR_(s)\n"
                   "#define %s_WEIGHTS_PLACE __attribute__((section(%s_WSTR(%s_WEIGHTS_SECTION))))\n"
                   "#else\n#define %s_WEIGHTS_PLACE\n#endif\n\n",
                U, U, U, U, U, U, U, U, U, U);
    }
    p->weights_bytes = 0;
    for (vi = 0; vi < g->n_values; vi++) {
        const Value *v = &g->values[vi];
        int64_t n;
        int k;
        if (!used[vi])
            continue;
        n = value_numel(v);
        p->weights_bytes += n * (int64_t)dtype_size(v->dtype);
        fprintf(f, "/* '%s' %s[", emit_safe(g->arena, v->name), dtype_name(v->dtype));
        for (k = 0; k < v->rank; k++)
            fprintf(f, "%s%lld", k ? "," : "", (long long)v->dims[k]);
        fprintf(f, "] */\n");
        if (is_rows(v)) {
            int64_t off, total = const_bytes(v);
            fprintf(f, "%s %s_WEIGHTS_PLACE = {{\n", emit_const_decl(p, vi),
                    emit_upper(g->arena, p->name));
            for (off = 0; off < total; off += ROW_BYTES) {
                write_row(f, (const unsigned char *)v->data + off,
                          (size_t)(total - off < ROW_BYTES ? total - off : ROW_BYTES));
                fputs(off + ROW_BYTES < total ? ",\n" : "\n", f);
            }
            fprintf(f, "}};\n\n");
        } else {
            fprintf(f, "%s %s_WEIGHTS_PLACE = {%s\n", emit_const_decl(p, vi),
                    emit_upper(g->arena, p->name), is_union(v) ? "{" : "");
            write_values(f, v, n);
            fprintf(f, "}%s;\n\n", is_union(v) ? "}" : "");
        }
    }
    if (p->weights_bytes == 0 && !memchr(used, 1, (size_t)g->n_values))
        fprintf(f, "/* no constants; this keeps the translation unit non-empty */\n"
                   "extern const int %s_weights_none;\nconst int %s_weights_none = 0;\n",
                p->name, p->name);
    free(used);
    return 0;
}
