/*
 * tensortool: a small helper for the conformance tests, working on the ONNX
 * test suite's serialized TensorProto files (input_*.pb, output_*.pb).
 *
 *   tensortool info FILE.pb                 name, dtype and shape
 *   tensortool raw FILE.pb OUT.bin          the dense storage bytes (what a
 *                                           compiled model reads or writes)
 *   tensortool cmp EXPECTED.pb ACTUAL.bin [--rtol R] [--atol A]
 *   tensortool hasseq MODEL.onnx            exit 0 when a graph input or output
 *                                           is a sequence or an optional
 *   tensortool seqbind MODEL.onnx SETDIR    the tvmcc options for SETDIR's
 *                                           sequence and optional inputs, one
 *                                           word a line (--sequence-length
 *                                           x=L, --input-shape 'x[K]=...',
 *                                           --optional-absent x)
 *   tensortool seqsplit MODEL.onnx in|out K FILE.pb BASE
 *                                           the tensors in FILE.pb (graph
 *                                           input or output K, a TensorProto,
 *                                           SequenceProto or OptionalProto by
 *                                           the model's declared type) as
 *                                           TensorProto files BASE.pb (a
 *                                           tensor) or BASE_0.pb, BASE_1.pb...
 *                                           (the elements of a sequence), none
 *                                           for an absent optional; prints
 *                                           their paths, one a line, in the
 *                                           order of the compiled model's
 *                                           buffers (docs/user-guide.md)
 *
 * cmp treats floats as equal when |actual - expected| <= atol + rtol*|expected|
 * (defaults 1e-3 and 1e-5), NaN equals NaN, and infinities must match
 * exactly; float16 and bfloat16 are converted to float first. Integers and
 * bool must match exactly, and so must the 8-bit floats and the packed 4-bit
 * and 2-bit types, bit for bit (but any NaN equals any NaN). String tensors are written by raw as their
 * strings, each followed by a NUL byte (what test/driver.c reads and
 * writes for a string input or output), and cmp compares those bytes.
 * It prints "ok", or the first mismatches with the largest error. Exit status: 0 equal, 1 different, 2 unreadable input or bad
 * usage.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../frontend/onnx.h"
#include "onnx.pb-c.h"

#define SHOW_MISMATCHES 5

static void usage(void)
{
    fprintf(stderr, "usage: tensortool info FILE.pb\n"
                    "       tensortool raw FILE.pb OUT.bin\n"
                    "       tensortool cmp EXPECTED.pb ACTUAL.bin [--rtol R] [--atol A]\n"
                    "       tensortool hasseq MODEL.onnx\n"
                    "       tensortool seqbind MODEL.onnx SETDIR\n"
                    "       tensortool seqsplit MODEL.onnx in|out K FILE.pb BASE\n");
    exit(2);
}

/* Element i of an integer or bool buffer; unsigned 64-bit kept apart. */
static void int_text(DType dt, const unsigned char *p, int64_t i, char *buf, size_t cap)
{
    size_t sz = dtype_size(dt);
    int64_t s = 0;
    uint64_t u = 0;
    switch (dt) {
    case DT_INT8: { int8_t v; memcpy(&v, p + i, 1); s = v; break; }
    case DT_INT16: { int16_t v; memcpy(&v, p + i * 2, 2); s = v; break; }
    case DT_INT32: { int32_t v; memcpy(&v, p + i * 4, 4); s = v; break; }
    case DT_INT64: memcpy(&s, p + i * 8, 8); break;
    case DT_UINT8: case DT_BOOL: { uint8_t v; memcpy(&v, p + i, 1); u = v; break; }
    case DT_UINT16: { uint16_t v; memcpy(&v, p + i * 2, 2); u = v; break; }
    case DT_UINT32: { uint32_t v; memcpy(&v, p + i * 4, 4); u = v; break; }
    default: memcpy(&u, p + i * (int64_t)sz, 8); break;
    }
    if (dtype_is_signed_int(dt))
        snprintf(buf, cap, "%lld", (long long)s);
    else
        snprintf(buf, cap, "%llu", (unsigned long long)u);
}

static int load(Arena *a, const char *path, Tensor *t, const char **name)
{
    Diag d;
    diag_init(&d, path);
    return onnx_read_tensor_file(a, path, t, name, &d);
}

static size_t tensor_bytes(const Tensor *t)
{
    return (size_t)dtype_nbytes(t->dtype, t->numel);
}

/* The 8-bit floats and the packed types: element i's bit pattern. */
static unsigned small_bits(DType dt, const unsigned char *p, int64_t i)
{
    if (dtype_is_packed(dt))
        return (unsigned)dtype_packed_get(dt, p, i) & ((1u << dtype_bits(dt)) - 1);
    return p[i];
}

static int is_small(DType dt)
{
    return dtype_bits(dt) < 16 && (dtype_is_packed(dt) || dtype_is_float(dt));
}

static int cmd_info(const char *path)
{
    Arena a;
    Tensor t;
    const char *name;
    int i;
    arena_init(&a, 0);
    if (load(&a, path, &t, &name))
        return 2;
    printf("%s %s [", name[0] ? name : "-", dtype_name(t.dtype));
    for (i = 0; i < t.rank; i++)
        printf(i ? ",%lld" : "%lld", (long long)t.dims[i]);
    printf("]\n");
    arena_free(&a);
    return 0;
}

static int cmd_raw(const char *path, const char *out)
{
    Arena a;
    Tensor t;
    FILE *f;
    size_t n, count;
    char *strings;
    int st = onnx_read_string_tensor(path, &strings, &n, &count);
    if (st == 1) {
        f = fopen(out, "wb");
        st = !f || (n && fwrite(strings, 1, n, f) != n);
        if ((f && fclose(f) != 0) || st) {
            fprintf(stderr, "tensortool: cannot write '%s': %s\n", out, strerror(errno));
            free(strings);
            return 2;
        }
        free(strings);
        return 0;
    }
    arena_init(&a, 0);
    if (load(&a, path, &t, NULL))
        return 2;
    n = tensor_bytes(&t);
    f = fopen(out, "wb");
    if (!f || fwrite(t.data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "tensortool: cannot write '%s': %s\n", out, strerror(errno));
        return 2;
    }
    arena_free(&a);
    return 0;
}

/* Reads a whole file into malloc'd memory. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    if (!f)
        return NULL;
    for (;;) {
        size_t got;
        if (n == cap) {
            unsigned char *nb;
            cap = cap ? cap * 2 : 65536;
            nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

static int cmd_cmp(const char *exp_path, const char *act_path, double rtol, double atol)
{
    Arena a;
    Tensor t;
    unsigned char *act;
    const unsigned char *e;
    size_t len, need;
    int64_t i, bad = 0, worst_i = -1;
    double worst = 0;
    char *strings;
    size_t slen, count;
    act = slurp(act_path, &len);
    if (!act) {
        fprintf(stderr, "tensortool: cannot read '%s'\n", act_path);
        return 2;
    }
    if (onnx_read_string_tensor(exp_path, &strings, &slen, &count) == 1) {
        int same = slen == len && memcmp(strings, act, len) == 0;
        if (!same)
            printf("strings differ: expected %zu strings in %zu bytes, got %zu bytes\n", count,
                   slen, len);
        else
            printf("ok\n");
        free(strings);
        free(act);
        return same ? 0 : 1;
    }
    arena_init(&a, 0);
    if (load(&a, exp_path, &t, NULL)) {
        free(act);
        return 2;
    }
    need = tensor_bytes(&t);
    if (len != need) {
        printf("size mismatch: expected %zu bytes (%lld x %s), got %zu\n", need,
               (long long)t.numel, dtype_name(t.dtype), len);
        free(act);
        return 1;
    }
    e = t.data;
    for (i = 0; i < t.numel; i++) {
        if (is_small(t.dtype)) {
            /* bit-exact; NaN equals NaN (any NaN pattern of the format) */
            unsigned bx = small_bits(t.dtype, e, i), by = small_bits(t.dtype, act, i);
            int ok = bx == by;
            if (!ok && dtype_is_float(t.dtype) && t.dtype != DT_FLOAT4E2M1)
                ok = isnan(dtype_f8_to_f32(t.dtype, bx)) && isnan(dtype_f8_to_f32(t.dtype, by));
            if (!ok && worst_i < 0)
                worst_i = i;
            if (!ok && bad++ < SHOW_MISMATCHES) {
                if (dtype_is_float(t.dtype))
                    printf("mismatch at %lld: expected 0x%02x (%.9g), got 0x%02x (%.9g)\n", (long long)i,
                           bx, (double)dtype_f8_to_f32(t.dtype, bx), by, (double)dtype_f8_to_f32(t.dtype, by));
                else
                    printf("mismatch at %lld: expected %d, got %d\n", (long long)i,
                           dtype_packed_get(t.dtype, e, i), dtype_packed_get(t.dtype, act, i));
            }
        } else if (dtype_is_float(t.dtype)) {
            double x = dtype_float_at(t.dtype, e, i), y = dtype_float_at(t.dtype, act, i), err;
            int ok = dtype_close(x, y, rtol, atol, &err);
            if (err > worst || (worst_i < 0 && !ok)) {
                worst = err;
                worst_i = i;
            }
            if (!ok && bad++ < SHOW_MISMATCHES)
                printf("mismatch at %lld: expected %.9g, got %.9g\n", (long long)i, x, y);
        } else {
            size_t sz = dtype_size(t.dtype);
            if (memcmp(e + (size_t)i * sz, act + (size_t)i * sz, sz) != 0) {
                char sx[32], sy[32];
                if (worst_i < 0)
                    worst_i = i;
                int_text(t.dtype, e, i, sx, sizeof sx);
                int_text(t.dtype, act, i, sy, sizeof sy);
                if (bad++ < SHOW_MISMATCHES)
                    printf("mismatch at %lld: expected %s, got %s\n", (long long)i, sx, sy);
            }
        }
    }
    free(act);
    if (bad) {
        if (dtype_is_float(t.dtype) && !is_small(t.dtype))
            printf("%lld of %lld elements differ; max error %.9g at %lld (rtol %g, atol %g)\n",
                   (long long)bad, (long long)t.numel, worst, (long long)worst_i, rtol, atol);
        else
            printf("%lld of %lld elements differ\n", (long long)bad, (long long)t.numel);
        arena_free(&a);
        return 1;
    }
    printf("ok\n");
    arena_free(&a);
    return 0;
}

/* ---- sequences and optionals (SequenceProto, OptionalProto) ---------- */

typedef OnnxSpan Span;

#define SEQ_MAX 4096

/* The declared kind of graph input (in = 1) or output K; -1 after
 * reporting. */
static int io_kind(const Onnx__ModelProto *m, int in, long k, const char **name)
{
    int kind = onnx_io_kind(m, in, k, name);
    if (kind < 0)
        fprintf(stderr, "tensortool: the model has no graph %s %ld\n", in ? "input" : "output", k);
    return kind;
}

/* onnx_data_elements, reporting a malformed file; 0 or 2. */
static int elements(Span data, int kind, Span *el, int *count, int *absent, const char *path)
{
    if (onnx_data_elements(data, kind, el, SEQ_MAX, count, absent) == 0)
        return 0;
    fprintf(stderr, "tensortool: %s: not a valid %s\n", path,
            (kind & 2) ? "OptionalProto" : "SequenceProto");
    return 2;
}

static Onnx__ModelProto *load_model(const char *path)
{
    Diag d;
    diag_init(&d, path);
    return onnx_unpack_file(path, 1, &d);
}

static int cmd_hasseq(const char *model)
{
    Onnx__ModelProto *m = load_model(model);
    size_t i;
    int any = 0;
    if (!m || !m->graph)
        return 2;
    for (i = 0; i < m->graph->n_input; i++)
        any |= m->graph->input[i]->type &&
               m->graph->input[i]->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    for (i = 0; i < m->graph->n_output; i++)
        any |= m->graph->output[i]->type &&
               m->graph->output[i]->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    onnx_free_message(m);
    return any ? 0 : 1;
}

/* Prints the dims of a TensorProto's bytes as "D0,D1,...". */
static int print_dims(Span t)
{
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, t.n, t.p);
    size_t i;
    if (!tp)
        return 2;
    for (i = 0; i < tp->n_dims; i++)
        printf(i ? ",%lld" : "%lld", (long long)tp->dims[i]);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return 0;
}

static int cmd_seqbind(const char *model, const char *set)
{
    Onnx__ModelProto *m = load_model(model);
    static Span el[SEQ_MAX];
    long k;
    int rc = 0;
    if (!m || !m->graph)
        return 2;
    for (k = 0; rc == 0; k++) {
        char path[4096];
        const char *name = NULL;
        unsigned char *buf;
        size_t len;
        Span data;
        int kind, count, absent, j;
        snprintf(path, sizeof path, "%s/input_%ld.pb", set, k);
        buf = slurp(path, &len);
        if (!buf)
            break;
        kind = io_kind(m, 1, k, &name);
        data.p = buf;
        data.n = len;
        if (kind < 0 || (kind > 0 && elements(data, kind, el, &count, &absent, path))) {
            free(buf);
            rc = 2;
            break;
        }
        if (kind == 0) {
            free(buf);
            continue;
        }
        if (absent) {
            printf("--optional-absent\n%s\n", name);
        } else if (kind & 1) {
            printf("--sequence-length\n%s=%d\n", name, count);
            for (j = 0; j < count && rc == 0; j++) {
                printf("--input-shape\n%s[%d]=", name, j);
                rc = print_dims(el[j]);
                printf("\n");
            }
        } else {
            printf("--input-shape\n%s=", name);
            rc = print_dims(el[0]);
            printf("\n");
        }
        free(buf);
    }
    onnx_free_message(m);
    return rc;
}

static int write_file(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "tensortool: cannot write '%s': %s\n", path, strerror(errno));
        return 2;
    }
    return 0;
}

static int cmd_seqsplit(const char *model, const char *dir, const char *kstr, const char *file,
                        const char *base)
{
    Onnx__ModelProto *m;
    static Span el[SEQ_MAX];
    const char *name = NULL;
    unsigned char *buf;
    size_t len;
    Span data;
    char *end;
    long k = strtol(kstr, &end, 10);
    int kind, count, absent, j, rc = 0;
    if (*end || end == kstr || k < 0 || (strcmp(dir, "in") && strcmp(dir, "out")))
        usage();
    m = load_model(model);
    if (!m)
        return 2;
    kind = io_kind(m, !strcmp(dir, "in"), k, &name);
    onnx_free_message(m);
    if (kind < 0)
        return 2;
    buf = slurp(file, &len);
    if (!buf) {
        fprintf(stderr, "tensortool: cannot read '%s'\n", file);
        return 2;
    }
    data.p = buf;
    data.n = len;
    rc = elements(data, kind, el, &count, &absent, file);
    for (j = 0; rc == 0 && !absent && j < count; j++) {
        char path[4096];
        if (kind & 1)
            snprintf(path, sizeof path, "%s_%d.pb", base, j);
        else
            snprintf(path, sizeof path, "%s.pb", base);
        rc = write_file(path, el[j].p, el[j].n);
        if (rc == 0)
            printf("%s\n", path);
    }
    free(buf);
    return rc;
}

/* Parses a tolerance value; exits with usage on junk. */
static double tolerance(const char *s)
{
    char *end;
    double x;
    errno = 0;
    x = strtod(s, &end);
    if (end == s || *end || errno || !(x >= 0))
        usage();
    return x;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "info") == 0)
        return cmd_info(argv[2]);
    if (argc == 4 && strcmp(argv[1], "raw") == 0)
        return cmd_raw(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "hasseq") == 0)
        return cmd_hasseq(argv[2]);
    if (argc == 4 && strcmp(argv[1], "seqbind") == 0)
        return cmd_seqbind(argv[2], argv[3]);
    if (argc == 7 && strcmp(argv[1], "seqsplit") == 0)
        return cmd_seqsplit(argv[2], argv[3], argv[4], argv[5], argv[6]);
    if (argc >= 4 && strcmp(argv[1], "cmp") == 0) {
        double rtol = 1e-3, atol = 1e-5;
        int i;
        for (i = 4; i < argc; i++) {
            if (i + 1 < argc && strcmp(argv[i], "--rtol") == 0)
                rtol = tolerance(argv[++i]);
            else if (i + 1 < argc && strcmp(argv[i], "--atol") == 0)
                atol = tolerance(argv[++i]);
            else
                usage();
        }
        return cmd_cmp(argv[2], argv[3], rtol, atol);
    }
    usage();
    return 2;
}
