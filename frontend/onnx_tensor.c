/*
 * Tensor decoding for the ONNX frontend, and the bounded protobuf reader.
 *
 * A TensorProto may carry its elements in one of several places: raw_data
 * (little-endian bytes), a typed repeated field (float_data, int32_data,
 * int64_data, double_data, uint64_data; int32_data also carries the narrow
 * integer types, bool and the 16-bit float bit patterns), or an external file
 * next to the model. Whatever the source, the result is a dense buffer in the
 * arena in tvmcc's storage format (dtype.h) whose element count has been
 * checked against the dims.
 *
 * External data is only read from regular files inside the model's directory
 * (after resolving "..", and symlinks with realpath), so a model cannot make
 * the compiler read arbitrary files.
 *
 * protobuf-c allocates through a ProtobufCAllocator that counts bytes against
 * a budget, so a hostile length prefix fails cleanly instead of exhausting
 * memory; before that, a walk over the wire format (wire_scan) bounds the
 * nesting depth, since protobuf-c recurses without limit. A tensor's data is
 * allocated only after its source (raw_data, typed field or external file)
 * has been checked against the dims, and within the limits of limits.h.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "onnx.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "limits.h"
#include "onnx.pb-c.h"

/* ---- bounded allocator for protobuf-c ---- */

typedef struct Budget {
    size_t cap;      /* bytes protobuf-c may hold at once */
    size_t used;
    int exceeded;    /* set when an allocation was refused */
} Budget;

static Budget budget = {(size_t)4 << 30, 0, 0};

#define HDR 16 /* keeps the size of each block, preserves 16-byte alignment */

static void *budget_alloc(void *ud, size_t size)
{
    Budget *b = ud;
    unsigned char *p;
    if (size > b->cap - b->used || size > SIZE_MAX - HDR) {
        b->exceeded = 1;
        return NULL;
    }
    p = malloc(size + HDR);
    if (!p) {
        b->exceeded = 1;
        return NULL;
    }
    memcpy(p, &size, sizeof size);
    b->used += size;
    return p + HDR;
}

static void budget_free(void *ud, void *ptr)
{
    Budget *b = ud;
    unsigned char *p = ptr;
    size_t size;
    if (!p)
        return;
    p -= HDR;
    memcpy(&size, p, sizeof size);
    b->used -= size;
    free(p);
}

static ProtobufCAllocator allocator = {budget_alloc, budget_free, &budget};

void onnx_set_parse_budget(size_t bytes)
{
    budget.cap = bytes;
}

/* ---- nesting check before protobuf-c sees the bytes ----
 *
 * protobuf-c unpacks nested messages by recursion with no depth limit, so a
 * small file of deeply nested subgraphs (or sequence types) would overflow
 * the stack. wire_scan walks the wire format with the generated descriptors
 * and refuses more than ONNX_MAX_PROTO_DEPTH levels of nested messages, and
 * anything that is not well-formed protobuf (bad varints, lengths past the
 * end, groups). */

static int read_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    int shift;
    for (shift = 0; shift < 70; shift += 7) {
        uint8_t b;
        if (*pos >= len)
            return 1;
        b = p[(*pos)++];
        if (shift == 63 && (b & 0x7e))
            return 1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return 1;
}

/* 0: fine, 1: nested too deep, 2: malformed. */
static int wire_scan(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *desc,
                     int depth)
{
    size_t pos = 0;
    while (pos < len) {
        uint64_t tag, x;
        const ProtobufCFieldDescriptor *fd;
        if (read_varint(p, len, &pos, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
            return 2;
        switch (tag & 7) {
        case 0:
            if (read_varint(p, len, &pos, &x))
                return 2;
            break;
        case 1:
            if (len - pos < 8)
                return 2;
            pos += 8;
            break;
        case 5:
            if (len - pos < 4)
                return 2;
            pos += 4;
            break;
        case 2:
            if (read_varint(p, len, &pos, &x) || x > len - pos)
                return 2;
            fd = desc ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3)) : NULL;
            if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                int rc;
                if (depth + 1 > ONNX_MAX_PROTO_DEPTH)
                    return 1;
                rc = wire_scan(p + pos, (size_t)x, fd->descriptor, depth + 1);
                if (rc)
                    return rc;
            }
            pos += (size_t)x;
            break;
        default:
            return 2; /* groups (3, 4) and reserved wire types */
        }
    }
    return 0;
}

static int wire_check(const void *data, size_t len, const ProtobufCMessageDescriptor *desc,
                      Diag *d)
{
    int rc = wire_scan(data, len, desc, 0);
    if (rc == 1)
        return diag_error(d, NULL, NULL, "protobuf messages are nested more than %d deep",
                          ONNX_MAX_PROTO_DEPTH);
    if (rc == 2)
        return diag_error(d, NULL, NULL, "not %s (malformed protobuf)",
                          desc == &onnx__model_proto__descriptor ? "an ONNX model"
                                                                 : "a serialized ONNX tensor");
    return 0;
}

void *onnx_unpack_file(const char *path, int model, Diag *d)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    unsigned char *buf;
    size_t len;
    void *msg;
    if (!f) {
        diag_error(d, NULL, NULL, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        diag_error(d, NULL, NULL, "'%s' is not a regular file", path);
        fclose(f);
        return NULL;
    }
    if ((uint64_t)st.st_size > budget.cap || (uint64_t)st.st_size > SIZE_MAX - 1) {
        diag_error(d, NULL, NULL, "'%s' is %lld bytes, more than the parse limit of %zu bytes",
                   path, (long long)st.st_size, budget.cap);
        fclose(f);
        return NULL;
    }
    len = (size_t)st.st_size;
    buf = malloc(len ? len : 1);
    if (!buf)
        die("out of memory reading %zu bytes", len);
    if (fread(buf, 1, len, f) != len) {
        diag_error(d, NULL, NULL, "cannot read '%s'", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    msg = onnx_unpack_buffer(buf, len, model, d);
    free(buf);
    return msg;
}

void *onnx_unpack_buffer(const void *data, size_t len, int model, Diag *d)
{
    void *msg;
    if (len > budget.cap) {
        diag_error(d, NULL, NULL, "the input is %zu bytes, more than the parse limit of %zu bytes",
                   len, budget.cap);
        return NULL;
    }
    if (wire_check(data, len, model ? &onnx__model_proto__descriptor
                                      : &onnx__tensor_proto__descriptor, d))
        return NULL;
    budget.exceeded = 0;
    if (model)
        msg = onnx__model_proto__unpack(&allocator, len, data);
    else
        msg = onnx__tensor_proto__unpack(&allocator, len, data);
    if (!msg) {
        if (budget.exceeded)
            diag_error(d, NULL, NULL, "parsing needs more than the limit of %zu bytes", budget.cap);
        else if (model)
            diag_error(d, NULL, NULL, "not an ONNX model (protobuf parse failed)");
        else
            diag_error(d, NULL, NULL, "not a serialized ONNX tensor (protobuf parse failed)");
    }
    return msg;
}

void onnx_free_message(void *msg)
{
    if (msg)
        protobuf_c_message_free_unpacked(msg, &allocator);
}

/* ---- element sources ---- */

static int host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Copies n little-endian elements of `size` bytes into host order. */
static void copy_le(void *dst, const void *src, int64_t n, size_t size)
{
    if (host_little_endian() || size == 1) {
        memcpy(dst, src, (size_t)n * size);
    } else {
        const unsigned char *s = src;
        unsigned char *o = dst;
        int64_t i;
        size_t k;
        for (i = 0; i < n; i++)
            for (k = 0; k < size; k++)
                o[i * (int64_t)size + (int64_t)k] = s[i * (int64_t)size + (int64_t)(size - 1 - k)];
    }
}

/* Name of the typed field that holds elements of dt. */
static const char *typed_field(DType dt)
{
    switch (dt) {
    case DT_FLOAT32: return "float_data";
    case DT_INT64: return "int64_data";
    case DT_FLOAT64: return "double_data";
    case DT_UINT32: case DT_UINT64: return "uint64_data";
    default: return "int32_data";
    }
}

/* Reads the external data of tp (bytes long) into *dst, allocated from a
 * only once the location, offset and length have been checked against the
 * file, so a lying header cannot make the compiler allocate. */
static int read_external(Arena *a, const Onnx__TensorProto *tp, const char *dir, void **dst,
                         int64_t bytes, size_t elem, Diag *d, const Node *n, const char *field)
{
    const char *loc = NULL;
    int64_t offset = 0, length = -1;
    size_t i;
    char *joined, *real_dir = NULL, *real_file = NULL;
    FILE *f = NULL;
    struct stat st;
    int rc = 1;
    for (i = 0; i < tp->n_external_data; i++) {
        const char *k = tp->external_data[i]->key ? tp->external_data[i]->key : "";
        const char *v = tp->external_data[i]->value ? tp->external_data[i]->value : "";
        char *end;
        if (strcmp(k, "location") == 0) {
            loc = v;
        } else if (strcmp(k, "offset") == 0 || strcmp(k, "length") == 0) {
            long long x;
            errno = 0;
            x = strtoll(v, &end, 10);
            if (errno || end == v || *end || x < 0)
                return diag_error(d, n, field, "external data %s '%s' is not a valid byte count",
                                  k, v);
            if (k[0] == 'o')
                offset = x;
            else
                length = x;
        }
    }
    if (!loc || !loc[0])
        return diag_error(d, n, field, "external data has no location");
    if (!dir)
        return diag_error(d, n, field, "external data is not allowed here");
    if (loc[0] == '/')
        return diag_error(d, n, field, "external data location '%s' must be relative to the model",
                          loc);
    if (length >= 0 && length != bytes)
        return diag_error(d, n, field, "external data length %lld does not match the %lld bytes "
                          "the dims need", (long long)length, (long long)bytes);
    joined = malloc(strlen(dir) + strlen(loc) + 2);
    if (!joined)
        die("out of memory");
    sprintf(joined, "%s/%s", dir, loc);
    real_dir = realpath(dir, NULL);
    real_file = realpath(joined, NULL);
    if (!real_dir || !real_file) {
        diag_error(d, n, field, "external data file '%s' not found", loc);
        goto out;
    }
    {
        size_t ld = strlen(real_dir);
        int root = ld == 1 && real_dir[0] == '/';
        if (strncmp(real_file, real_dir, ld) != 0 || (!root && real_file[ld] != '/')) {
            diag_error(d, n, field, "external data location '%s' leaves the model's directory",
                       loc);
            goto out;
        }
    }
    f = fopen(real_file, "rb");
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        diag_error(d, n, field, "external data file '%s' is not a readable regular file", loc);
        goto out;
    }
    if (offset > (int64_t)st.st_size || bytes > (int64_t)st.st_size - offset) {
        diag_error(d, n, field, "external data '%s': offset %lld + %lld bytes is past the end of "
                   "the file (%lld bytes)", loc, (long long)offset, (long long)bytes,
                   (long long)st.st_size);
        goto out;
    }
    *dst = arena_alloc(a, bytes ? (size_t)bytes : 1);
    if (!*dst) {
        diag_error(d, n, field, "tensor of %lld bytes exceeds the compiler's memory budget",
                   (long long)bytes);
        goto out;
    }
    if (fseeko(f, (off_t)offset, SEEK_SET) != 0) {
        diag_error(d, n, field, "external data '%s': cannot seek to %lld", loc, (long long)offset);
        goto out;
    }
    if (host_little_endian() || elem == 1) {
        if (fread(*dst, 1, (size_t)bytes, f) != (size_t)bytes) {
            diag_error(d, n, field, "external data '%s': short read", loc);
            goto out;
        }
    } else {
        void *tmp = malloc((size_t)bytes + 1);
        if (!tmp)
            die("out of memory");
        if (fread(tmp, 1, (size_t)bytes, f) != (size_t)bytes) {
            free(tmp);
            diag_error(d, n, field, "external data '%s': short read", loc);
            goto out;
        }
        copy_le(*dst, tmp, bytes / (int64_t)elem, elem);
        free(tmp);
    }
    rc = 0;
out:
    if (f)
        fclose(f);
    free(joined);
    free(real_dir);
    free(real_file);
    return rc;
}

/* Number of elements in the typed field that dt is stored in. */
static size_t typed_count(const Onnx__TensorProto *tp, DType dt)
{
    switch (dt) {
    case DT_FLOAT32: return tp->n_float_data;
    case DT_INT64: return tp->n_int64_data;
    case DT_FLOAT64: return tp->n_double_data;
    case DT_UINT32: case DT_UINT64: return tp->n_uint64_data;
    default: return tp->n_int32_data;
    }
}

static void copy_typed(const Onnx__TensorProto *tp, DType dt, void *dst, int64_t n)
{
    int64_t i;
    switch (dt) {
    case DT_FLOAT32: memcpy(dst, tp->float_data, (size_t)n * 4); break;
    case DT_INT64: memcpy(dst, tp->int64_data, (size_t)n * 8); break;
    case DT_FLOAT64: memcpy(dst, tp->double_data, (size_t)n * 8); break;
    case DT_UINT64: memcpy(dst, tp->uint64_data, (size_t)n * 8); break;
    case DT_UINT32:
        for (i = 0; i < n; i++)
            ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
        break;
    case DT_INT32: memcpy(dst, tp->int32_data, (size_t)n * 4); break;
    case DT_INT16: case DT_UINT16: case DT_FLOAT16: case DT_BFLOAT16:
        for (i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = (uint16_t)(uint32_t)tp->int32_data[i];
        break;
    case DT_BOOL:
        for (i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
        break;
    case DT_INT8: case DT_UINT8: case DT_FLOAT8E4M3FN: case DT_FLOAT8E4M3FNUZ: case DT_FLOAT8E5M2:
    case DT_FLOAT8E5M2FNUZ: case DT_FLOAT8E8M0:
        for (i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = (uint8_t)(uint32_t)tp->int32_data[i];
        break;
    default:
        die("copy_typed: dtype %d", (int)dt);
    }
}

/* Sum of all typed-field lengths (to notice data in the wrong field). */
static size_t any_typed(const Onnx__TensorProto *tp)
{
    return tp->n_float_data + tp->n_int32_data + tp->n_int64_data + tp->n_double_data +
           tp->n_uint64_data;
}

/* A packed type (uint4, int4, float4e2m1: two per byte; uint2, int2: four
 * per byte, the first element in the low bits): raw_data and external data
 * hold the packed bytes, int32_data one packed byte per entry. The data
 * stays packed; numel bytes are allocated (dtype_size is 1 for these types,
 * so code that copies numel * dtype_size bytes stays in bounds). */
static int decode_packed(Arena *a, const Onnx__TensorProto *tp, const char *dir, Tensor *out,
                         DType dt, Diag *d, const Node *n, const char *field)
{
    int64_t bytes = dtype_nbytes(dt, out->numel), i;
    unsigned char *buf;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        void *ext = NULL;
        if (read_external(a, tp, dir, &ext, bytes, 1, d, n, field))
            return 1;
        buf = arena_alloc(a, out->numel > bytes ? (size_t)out->numel : (size_t)bytes + 1);
        if (!buf)
            return diag_error(d, n, field, "tensor of %lld bytes exceeds the compiler's memory budget",
                              (long long)out->numel);
        memset(buf, 0, out->numel > bytes ? (size_t)out->numel : (size_t)bytes + 1);
        if (bytes)
            memcpy(buf, ext, (size_t)bytes);
        out->data = buf;
        return 0;
    }
    if (tp->has_raw_data) {
        if ((uint64_t)tp->raw_data.len != (uint64_t)bytes)
            return diag_error(d, n, field, "raw_data has %zu bytes, but %s dims need %lld",
                              tp->raw_data.len, dtype_name(dt), (long long)bytes);
    } else if ((int64_t)tp->n_int32_data != bytes) {
        if (tp->n_int32_data == 0 && any_typed(tp) != 0)
            return diag_error(d, n, field, "%s tensor keeps its data in the wrong field (expected %s)",
                              dtype_name(dt), typed_field(dt));
        return diag_error(d, n, field, "int32_data has %zu entries, but %lld packed %s elements need %lld",
                          tp->n_int32_data, (long long)out->numel, dtype_name(dt), (long long)bytes);
    }
    buf = arena_alloc(a, out->numel > bytes ? (size_t)out->numel : (size_t)bytes + 1);
    if (!buf)
        return diag_error(d, n, field, "tensor of %lld bytes exceeds the compiler's memory budget",
                          (long long)out->numel);
    memset(buf, 0, out->numel > bytes ? (size_t)out->numel : (size_t)bytes + 1);
    if (tp->has_raw_data) {
        if (bytes)
            memcpy(buf, tp->raw_data.data, (size_t)bytes);
    } else {
        for (i = 0; i < bytes; i++)
            buf[i] = (unsigned char)(uint32_t)tp->int32_data[i];
    }
    out->data = buf;
    return 0;
}

int onnx_tensor_decode(Arena *a, const void *tensor_proto, const char *dir, Tensor *out,
                       Diag *d, const Node *n, const char *field)
{
    const Onnx__TensorProto *tp = tensor_proto;
    DType dt;
    size_t esize, i;
    int64_t numel = 1, bytes;
    memset(out, 0, sizeof *out);
    if (!tp)
        return diag_error(d, n, field, "tensor is missing");
    dt = tp->has_data_type ? (DType)tp->data_type : DT_UNDEF;
    if (dt == DT_STRING)
        return diag_error(d, n, field, "string tensors are not supported");
    esize = dtype_size(dt);
    if (!esize)
        return diag_error(d, n, field, "element type %d is not supported", (int)tp->data_type);
    if (tp->n_dims > TVMCC_MAX_RANK)
        return diag_error(d, n, field, "rank %zu exceeds the limit of %d", tp->n_dims,
                          TVMCC_MAX_RANK);
    if (tp->segment)
        return diag_error(d, n, field, "segmented tensors are not supported");
    out->dtype = dt;
    out->rank = (int)tp->n_dims;
    for (i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0)
            return diag_error(d, n, field, "dimension %zu is negative (%lld)", i,
                              (long long)tp->dims[i]);
        if (ck_mul(numel, tp->dims[i], &numel))
            return diag_error(d, n, field, "element count overflows 64 bits");
        out->dims[i] = tp->dims[i];
    }
    if (numel > ONNX_MAX_TENSOR_ELEMS)
        return diag_error(d, n, field, "tensor of %lld elements exceeds the limit of %lld",
                          (long long)numel, (long long)ONNX_MAX_TENSOR_ELEMS);
    if (ck_mul(numel, (int64_t)esize, &bytes) || (uint64_t)bytes >= SIZE_MAX / 2)
        return diag_error(d, n, field, "byte size overflows");
    out->numel = numel;
    if (dtype_is_packed(dt))
        return decode_packed(a, tp, dir, out, dt, d, n, field);
    /* Every source is checked against the dims before anything is
     * allocated: the dims alone must never decide an allocation. */
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return read_external(a, tp, dir, &out->data, bytes, esize, d, n, field);
    if (tp->has_raw_data) {
        if ((uint64_t)tp->raw_data.len != (uint64_t)bytes)
            return diag_error(d, n, field, "raw_data has %zu bytes, but %s dims need %lld",
                              tp->raw_data.len, dtype_name(dt), (long long)bytes);
    } else if ((int64_t)typed_count(tp, dt) != numel) {
        if (typed_count(tp, dt) == 0 && any_typed(tp) != 0)
            return diag_error(d, n, field, "%s tensor keeps its data in the wrong field (expected %s)",
                              dtype_name(dt), typed_field(dt));
        return diag_error(d, n, field, "%s has %zu elements, but the dims need %lld",
                          typed_field(dt), typed_count(tp, dt), (long long)numel);
    }
    out->data = arena_alloc(a, bytes ? (size_t)bytes : 1);
    if (!out->data)
        return diag_error(d, n, field, "tensor of %lld bytes exceeds the compiler's memory budget",
                          (long long)bytes);
    if (tp->has_raw_data) {
        if (bytes)
            copy_le(out->data, tp->raw_data.data, numel, esize);
    } else if (numel) {
        copy_typed(tp, dt, out->data, numel);
    }
    return 0;
}

int onnx_read_tensor_file(Arena *a, const char *path, Tensor *out, const char **name, Diag *d)
{
    Onnx__TensorProto *tp = onnx_unpack_file(path, 0, d);
    const char *slash;
    char *dir;
    int rc;
    if (!tp)
        return 1;
    slash = strrchr(path, '/');
    dir = slash ? arena_strndup(a, path, (size_t)(slash - path)) : arena_strdup(a, ".");
    if (dir && slash == path)
        dir = arena_strdup(a, "/");
    rc = onnx_tensor_decode(a, tp, dir, out, d, NULL, NULL);
    if (name)
        *name = arena_strdup(a, tp->name ? tp->name : "");
    onnx_free_message(tp);
    return rc;
}

int onnx_read_string_tensor(const char *path, char **buf, size_t *len, size_t *count)
{
    Diag d;
    Onnx__TensorProto *tp;
    size_t i, n = 0;
    diag_init(&d, path);
    tp = onnx_unpack_file(path, 0, &d);
    if (!tp)
        return -1;
    if (!tp->has_data_type || tp->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__STRING) {
        onnx_free_message(tp);
        return 0;
    }
    for (i = 0; i < tp->n_string_data; i++)
        n += tp->string_data[i].len + 1;
    *buf = malloc(n + 1);
    if (!*buf) {
        onnx_free_message(tp);
        return -1;
    }
    n = 0;
    for (i = 0; i < tp->n_string_data; i++) {
        if (tp->string_data[i].len)
            memcpy(*buf + n, tp->string_data[i].data, tp->string_data[i].len);
        n += tp->string_data[i].len;
        (*buf)[n++] = '\0';
    }
    *len = n;
    *count = tp->n_string_data;
    onnx_free_message(tp);
    return 1;
}
