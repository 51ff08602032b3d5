/*
 * Test data of sequence and optional graph inputs and outputs: the kind a
 * graph declares for input or output K, and the element TensorProtos of a
 * SequenceProto or OptionalProto file (the ONNX test-data layout). Read by
 * test/tools/tensortool.c (seqbind, seqsplit) and tvmcc verify.
 *
 * protobuf-c's generated code has no SequenceProto or OptionalProto
 * (onnx-data.proto is not compiled in), so their few fields are walked by
 * hand: SequenceProto.tensor_values = 3, OptionalProto.tensor_value = 3,
 * OptionalProto.sequence_value = 5.
 */
#include "onnx.h"

#include <string.h>

#include "onnx.pb-c.h"

/* Reads a varint at *p (< end); 0 when malformed. */
static int varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    int sh = 0;
    *v = 0;
    while (*p < end && sh < 64) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80))
            return 1;
        sh += 7;
    }
    return 0;
}

/* The length-delimited occurrences of field `field` in msg (at most cap).
 * Returns the count, or -1 when msg is malformed. */
static int fields(OnnxSpan msg, unsigned field, OnnxSpan *out, int cap)
{
    const unsigned char *p = msg.p, *end = msg.p + msg.n;
    int n = 0;
    while (p < end) {
        uint64_t key, v;
        if (!varint(&p, end, &key))
            return -1;
        switch (key & 7) {
        case 0:
            if (!varint(&p, end, &v))
                return -1;
            break;
        case 1:
            if (end - p < 8)
                return -1;
            p += 8;
            break;
        case 5:
            if (end - p < 4)
                return -1;
            p += 4;
            break;
        case 2:
            if (!varint(&p, end, &v) || v > (uint64_t)(end - p))
                return -1;
            if ((key >> 3) == field && n < cap) {
                out[n].p = p;
                out[n].n = (size_t)v;
                n++;
            }
            p += v;
            break;
        default:
            return -1;
        }
    }
    return n;
}

int onnx_io_kind(const void *model, int in, long k, const char **name)
{
    const Onnx__ModelProto *m = model;
    const Onnx__GraphProto *g = m->graph;
    const Onnx__TypeProto *tp = NULL;
    size_t i, j;
    long seen = 0;
    int kind = 0;
    if (!g)
        return -1;
    for (i = 0; in && i < g->n_input; i++) {
        int init = 0;
        for (j = 0; j < g->n_initializer; j++)
            init |= g->initializer[j]->name && g->input[i]->name &&
                    !strcmp(g->initializer[j]->name, g->input[i]->name);
        if (!init && seen++ == k) {
            tp = g->input[i]->type;
            *name = g->input[i]->name;
        }
    }
    if (!in && k >= 0 && (size_t)k < g->n_output) {
        tp = g->output[k]->type;
        *name = g->output[k]->name;
    }
    if (!tp)
        return -1;
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type) {
        kind |= ONNX_DATA_OPTIONAL;
        tp = tp->optional_type->elem_type;
    }
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
        kind |= ONNX_DATA_SEQUENCE;
    return kind;
}

int onnx_data_elements(OnnxSpan data, int kind, OnnxSpan *el, int cap, int *count, int *absent)
{
    OnnxSpan sub[1];
    int n;
    *absent = 0;
    *count = 0;
    if (kind & ONNX_DATA_OPTIONAL) {
        n = fields(data, (kind & ONNX_DATA_SEQUENCE) ? 5 : 3, sub, 1);
        if (n < 0)
            return -1;
        if (n == 0) {
            *absent = 1;
            return 0;
        }
        data = sub[0];
    }
    if (kind & ONNX_DATA_SEQUENCE) {
        n = fields(data, 3, el, cap);
        if (n < 0)
            return -1;
        *count = n;
        return 0;
    }
    if (cap < 1)
        return -1;
    el[0] = data;
    *count = 1;
    return 0;
}
