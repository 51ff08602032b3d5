/*
 * Limits on what a model file may ask of the frontend. A model is untrusted
 * input: each limit turns a request that would exhaust memory, time or the
 * stack into an error naming the node and field. They are far above what
 * real models need (the largest torchvision models stay well within them)
 * and are checked where the frontend reads the corresponding field:
 * onnx_tensor.c (protobuf, tensors, external data) and onnx_load.c (graph,
 * attributes). The rank limit is TVMCC_MAX_RANK in ir/graph.h, since the
 * Value struct stores dims inline.
 */
#ifndef TVMCC_ONNX_LIMITS_H
#define TVMCC_ONNX_LIMITS_H

#include <stdint.h>

/* Nesting of protobuf messages (model -> graph -> node -> attribute ->
 * graph ... and nested TypeProtos), checked before protobuf-c recurses. */
#define ONNX_MAX_PROTO_DEPTH 160
/* Newest default-domain (ai.onnx) opset accepted. Operators whose
 * semantics changed in later opsets would otherwise be compiled with the
 * old meaning; raise this after checking the operator changes. */
#define ONNX_MAX_OPSET 25
/* Nesting of subgraph attributes (If/Loop/Scan bodies). */
#define ONNX_MAX_SUBGRAPH_DEPTH 32
/* Elements in one tensor, declared or stored (2^31: every index fits in a
 * signed 32-bit int on the smallest targets' arithmetic too). */
#define ONNX_MAX_TENSOR_ELEMS ((int64_t)1 << 31)
/* Bytes of all initializers and tensor attributes of one model together. */
#define ONNX_MAX_CONSTANT_BYTES ((int64_t)2 << 30)
/* Nodes and values (names) in one graph, subgraphs counted separately. */
#define ONNX_MAX_NODES 1000000
#define ONNX_MAX_VALUES 4000000
/* Inputs or outputs of one node, and attributes of one node. */
#define ONNX_MAX_NODE_IO 65536
#define ONNX_MAX_ATTRS 1024
/* Elements of one list attribute (ints, floats, strings, tensors). */
#define ONNX_MAX_ATTR_ELEMS 1000000

/* Constants computed at compile time that are larger than their inputs
 * (ConstantOfShape, Range, Expand, Tile... of constant inputs) are folded
 * only up to this size; bigger ones are computed at run time, so that a
 * tiny model cannot make the compiler allocate without bound or put
 * megabytes of generated data into a device's flash. */
#define FOLD_EXPAND_LIMIT_BYTES ((int64_t)1 << 20)

#endif
