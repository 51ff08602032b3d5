#!/usr/bin/python3
"""Writes the malformed-input corpus that test/malformed/run.sh feeds to tvmcc.

Usage: make_corpus.py OUTDIR

Every case is a model file OUTDIR/NAME.onnx (some with external-data files
or symlinks beside it, in OUTDIR/ext/) that tvmcc must reject with exit 1
and a one-line message. The cases come from valid models built with
onnx.helper, broken in one way each, and from raw protobuf bytes written by
hand where onnx.helper cannot express the damage (truncations, bit flips,
bad varints, nesting deeper than Python's recursion limit). Everything is
deterministic: the random cases use a fixed seed, so a failure reproduces
from the case name alone. Regression cases from fuzzing are at the end.
"""
import os
import random
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def model(nodes, inputs, outputs, inits=(), opset=OPSET, name="m"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, dtype=TensorProto.FLOAT, shape=(1, 4)):
    return helper.make_tensor_value_info(name, dtype, None if shape is None else list(shape))


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu0")], [vi("x")], [vi("y")])


def conv_model():
    """A small valid CNN with weights: the base of truncations and bit flips."""
    rng = np.random.RandomState(1)
    w = numpy_helper.from_array(rng.rand(4, 1, 3, 3).astype(np.float32), "conv_w")
    b = numpy_helper.from_array(rng.rand(4).astype(np.float32), "conv_b")
    g = numpy_helper.from_array(rng.rand(36, 3).astype(np.float32), "fc_w")
    shape = numpy_helper.from_array(np.array([1, 36], dtype=np.int64), "flat_shape")
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu0"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool0", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "flat_shape"], ["f"], name="flat0"),
        helper.make_node("MatMul", ["f", "fc_w"], ["y"], name="fc0"),
    ]
    return model(nodes, [vi("x", shape=(1, 1, 6, 6))], [vi("y", shape=(1, 3))], [w, b, g, shape])


# ---- raw protobuf helpers ----

def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_int(num, v):
    return varint(num << 3) + varint(v)


def walk(buf, start, end, depth, out):
    """Collects (position, depth) of every length varint of a length-delimited
    field that parses as a nested message, to aim bit flips at structure."""
    pos = start
    while pos < end:
        tag = 0
        shift = 0
        while True:
            if pos >= end or shift > 63:
                return
            b = buf[pos]
            pos += 1
            tag |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        wt = tag & 7
        if wt == 0:
            while pos < end and buf[pos] & 0x80:
                pos += 1
            pos += 1
        elif wt == 1:
            pos += 8
        elif wt == 5:
            pos += 4
        elif wt == 2:
            lpos = pos
            n = 0
            shift = 0
            while True:
                if pos >= end:
                    return
                b = buf[pos]
                pos += 1
                n |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            out.append((lpos, depth))
            walk(buf, pos, min(pos + n, end), depth + 1, out)
            pos += n
        else:
            return


def parses(data):
    try:
        onnx.ModelProto.FromString(data)
        return True
    except Exception:
        return False


def wrap(core, layers):
    """Applies layers, innermost first, each (field, prefix): the message so
    far becomes prefix + field `field` holding it. Lengths are computed first
    and the bytes joined once, so deep nesting costs linear time."""
    lengths = [len(core)]
    for num, prefix in layers:
        lengths.append(len(prefix) + len(varint(num << 3 | 2)) + len(varint(lengths[-1])) + lengths[-1])
    parts = []
    for i in range(len(layers) - 1, -1, -1):
        num, prefix = layers[i]
        parts.append(prefix + varint(num << 3 | 2) + varint(lengths[i]))
    parts.append(core)
    return b"".join(parts)


def nested_graph_bytes(levels):
    """ModelProto whose graph holds an If node whose then_branch holds an If
    node ... `levels` deep, as raw bytes (onnx.helper would hit Python's
    recursion limit)."""
    graph = field_bytes(1, field_bytes(4, b"Relu") + field_bytes(1, b"x") + field_bytes(2, b"y"))
    level = [(6, field_bytes(1, b"then_branch") + field_int(20, 5)),
             (5, field_bytes(1, b"c") + field_bytes(2, b"y") + field_bytes(4, b"If")),
             (1, b"")]
    graph = wrap(graph, level * levels)
    return field_int(1, 8) + field_bytes(7, graph) + field_bytes(8, field_int(2, OPSET))


def nested_type_bytes(levels):
    """A graph input whose type is a sequence of sequence of ... `levels` deep."""
    t = field_bytes(1, field_int(1, 1))  # tensor_type { elem_type: FLOAT }
    # TypeProto { sequence_type (4): Sequence { elem_type (1): TypeProto ... } }
    t = wrap(t, [(1, b""), (4, b"")] * levels)
    inp = field_bytes(1, b"x") + field_bytes(2, t)
    graph = field_bytes(11, inp)
    return field_int(1, 8) + field_bytes(7, graph) + field_bytes(8, field_int(2, OPSET))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/malformed"
    ext = os.path.join(out, "ext")
    os.makedirs(ext, exist_ok=True)
    count = [0]

    def save_bytes(name, data, where=out):
        with open(os.path.join(where, name + ".onnx"), "wb") as f:
            f.write(data)
        count[0] += 1

    def save(name, m, where=out):
        save_bytes(name, m.SerializeToString(), where)

    def const(name, arr):
        return numpy_helper.from_array(np.asarray(arr), name)

    f32 = TensorProto.FLOAT
    i64 = TensorProto.INT64

    # ---- raw bytes ----
    save_bytes("raw_empty", b"")
    save_bytes("raw_random", bytes(random.Random(6).getrandbits(8) for _ in range(1024)))
    save_bytes("raw_all_ff", b"\xff" * 64)
    save_bytes("raw_long_varint", b"\x08" + b"\xff" * 11)
    save_bytes("raw_huge_length", varint(7 << 3 | 2) + varint(1 << 62) + b"\x00" * 8)
    save_bytes("raw_group_wiretype", varint(7 << 3 | 3) + b"\x00" * 8)
    save_bytes("raw_field_zero", b"\x02\x00")
    save_bytes("raw_text", b"ir_version: 8\ngraph { node { op_type: 'Relu' } }\n")
    save_bytes("nested_graphs_deep", nested_graph_bytes(20000))
    save_bytes("nested_graphs_40", nested_graph_bytes(40))
    save_bytes("nested_types_deep", nested_type_bytes(50000))

    # ---- truncations of a valid model, inside its graph ----
    base = conv_model().SerializeToString()
    gstart = 2  # after ir_version; field 7 (graph) comes next
    assert base[gstart] == 0x3A
    span = len(base) - gstart
    for k in range(16):
        cut = gstart + 2 + (span - 4) * k // 15
        save_bytes("trunc_%04d" % cut, base[:cut])

    # ---- bit flips in length prefixes (kept only when the result is not a
    # valid protobuf, so every case is malformed by construction) ----
    spots = []
    walk(base, 0, len(base), 0, spots)
    rng = random.Random(66)
    made = 0
    tries = 0
    while made < 14 and tries < 5000:
        tries += 1
        pos, _ = rng.choice(spots)
        bit = rng.randrange(7)
        data = bytearray(base)
        data[pos] ^= 1 << bit
        data = bytes(data)
        if parses(data):
            continue
        save_bytes("flip_%04d_%d" % (pos, bit), data)
        made += 1

    # ---- tensors: lengths, dims, dtypes ----
    def init_case(name, tensor, shape=(1, 4)):
        """Adds `tensor` as the second input of Add."""
        save(name, model([helper.make_node("Add", ["x", tensor.name], ["y"], name="add0")],
                         [vi("x", shape=shape)], [vi("y", shape=shape)], [tensor]))

    t = const("w_short", np.ones((1, 4), np.float32))
    t.raw_data = t.raw_data[:-3]
    init_case("raw_data_short", t)
    t = const("w_long", np.ones((1, 4), np.float32))
    t.raw_data = t.raw_data + b"\0" * 4
    init_case("raw_data_long", t)
    t = helper.make_tensor("w_typed", f32, [1, 4], [1.0, 2.0, 3.0, 4.0])
    del t.float_data[-1]
    init_case("typed_count_wrong", t)
    t = helper.make_tensor("w_field", f32, [1, 4], [1.0, 2.0, 3.0, 4.0])
    del t.float_data[:]
    t.int64_data.extend([1, 2, 3, 4])
    init_case("typed_wrong_field", t)
    t = helper.make_tensor("w_negdim", f32, [1, 4], [0.0] * 4)
    t.dims[1] = -4
    init_case("init_negative_dim", t)
    t = helper.make_tensor("w_overflow", f32, [1, 4], [0.0] * 4)
    t.dims[:] = [1 << 40, 1 << 40]
    init_case("init_dims_overflow", t)
    t = helper.make_tensor("w_huge", f32, [1, 4], [0.0] * 4)
    t.dims[:] = [1 << 20, 1 << 20]
    t.ClearField("float_data")
    t.raw_data = b"\0" * 16
    init_case("init_dims_huge", t)
    t = helper.make_tensor("w_zero", f32, [0], [])
    t.raw_data = b"\0" * 16
    init_case("init_zero_size_with_data", t)
    t = helper.make_tensor("w_dtype", f32, [1, 4], [0.0] * 4)
    t.data_type = 99
    init_case("init_unknown_dtype", t)
    t = helper.make_tensor("w_undef", f32, [1, 4], [0.0] * 4)
    t.data_type = 0
    init_case("init_undefined_dtype", t)
    init_case("init_string", helper.make_tensor("w_str", TensorProto.STRING, [1, 4], [b"a"] * 4))
    t = helper.make_tensor("w_rank9", f32, [1] * 9, [0.0])
    init_case("init_rank_9", t)
    t = helper.make_tensor("w_seg", f32, [1, 4], [0.0] * 4)
    t.segment.begin = 0
    t.segment.end = 4
    init_case("init_segment", t)
    t = helper.make_tensor("", f32, [1, 4], [0.0] * 4)
    save("init_no_name", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                               [vi("x")], [vi("y")], [t]))
    a = const("w_dup", np.ones((1, 4), np.float32))
    save("init_duplicate", model([helper.make_node("Add", ["x", "w_dup"], ["y"], name="add0")],
                                 [vi("x")], [vi("y")], [a, a]))

    # ---- declared types of graph inputs ----
    save("input_negative_dim", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                     [vi("x", shape=(1, -4))], [vi("y")]))
    save("input_dims_overflow", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                      [vi("x", shape=(1 << 62, 4))], [vi("y")]))
    save("input_dims_huge", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                  [vi("x", shape=(1 << 20, 1 << 20))], [vi("y", shape=(1 << 20, 1 << 20))]))
    save("input_rank_9", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                               [vi("x", shape=[1] * 9)], [vi("y", shape=None)]))
    save("input_unknown_dtype", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                      [vi("x", dtype=99)], [vi("y")]))
    m = relu_model()
    m.graph.input[0].type.ClearField("tensor_type")
    save("input_no_type", m)
    m = relu_model()
    m.graph.input[0].type.CopyFrom(helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(f32, [1, 4])))
    save("input_sequence_type", m)
    m = relu_model()
    m.graph.input.extend([vi("x")])
    save("input_duplicate", m)

    # ---- graph structure ----
    save("cycle", model([helper.make_node("Relu", ["b"], ["a"], name="relu_a"),
                         helper.make_node("Add", ["x", "a"], ["b"], name="add_b"),
                         helper.make_node("Relu", ["b"], ["y"], name="relu_y")],
                        [vi("x")], [vi("y")]))
    save("self_loop", model([helper.make_node("Add", ["x", "s"], ["s"], name="add_self"),
                             helper.make_node("Relu", ["s"], ["y"], name="relu0")],
                            [vi("x")], [vi("y")]))
    save("dangling_input", model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add0")],
                                 [vi("x")], [vi("y")]))
    save("dangling_output", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                  [vi("x")], [vi("y_missing")]))
    save("duplicate_output", model([helper.make_node("Relu", ["x"], ["y"], name="relu0"),
                                    helper.make_node("Sigmoid", ["x"], ["y"], name="sig0")],
                                   [vi("x")], [vi("y")]))
    save("output_shadows_input", model([helper.make_node("Relu", ["x"], ["x"], name="relu0")],
                                       [vi("x")], [vi("x")]))
    m = relu_model()
    m.ClearField("graph")
    save("no_graph", m)
    save("name_with_newline", model([helper.make_node("Add", ["x", "no\nwhere"], ["y"], name="add\n0")],
                                    [vi("x")], [vi("y")]))
    save("dangling_many", model([helper.make_node("Concat", ["x"] + ["gone%d" % i for i in range(3000)],
                                                  ["y"], name="cat_many", axis=0)],
                                [vi("x")], [vi("y", shape=None)]))
    # 50000 distinct unknown operators: listing them all took quadratic time
    save("unknown_ops_many", model([helper.make_node("Op%d" % i, ["x"], ["y%d" % i], name="n%d" % i)
                                    for i in range(50000)], [vi("x")], [vi("y0", shape=None)]))
    save("empty_op_type", model([helper.make_node("", ["x"], ["y"], name="blank0")], [vi("x")], [vi("y")]))
    save("unknown_domain", model([helper.make_node("Relu", ["x"], ["y"], name="relu0", domain="com.example")],
                                 [vi("x")], [vi("y")]))
    save("too_many_inputs", model([helper.make_node("Relu", ["x", "x"], ["y"], name="relu2")],
                                  [vi("x")], [vi("y")]))
    save("opset_huge", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                             [vi("x")], [vi("y")], opset=100000))
    save("opset_zero", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                             [vi("x")], [vi("y")], opset=0))
    save("opset_negative", model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                                 [vi("x")], [vi("y")], opset=-3))
    big = [helper.make_node("Relu", ["x"], ["y"], name="relu0")]
    big[0].attribute.extend(helper.make_attribute("junk%d" % i, i) for i in range(5000))
    save("attrs_too_many", model(big, [vi("x")], [vi("y")]))
    save("attr_list_huge", model([helper.make_node("Transpose", ["x"], ["y"], name="tr0",
                                                   perm=list(range(1, 1200001)))],
                                 [vi("x")], [vi("y")]))

    # ---- attributes ----
    save("attr_missing_cast_to", model([helper.make_node("Cast", ["x"], ["y"], name="cast0")],
                                       [vi("x")], [vi("y")]))
    save("attr_missing_concat_axis", model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat0")],
                                           [vi("x")], [vi("y", shape=(2, 4))]))
    save("attr_wrong_type_cast_to", model([helper.make_node("Cast", ["x"], ["y"], name="cast0", to=1.5)],
                                          [vi("x")], [vi("y")]))
    save("attr_wrong_type_perm", model([helper.make_node("Transpose", ["x"], ["y"], name="tr0", perm=1)],
                                       [vi("x")], [vi("y", shape=(4, 1))]))
    save("attr_wrong_type_axis", model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat0", axis="one")],
                                       [vi("x")], [vi("y", shape=(2, 4))]))
    save("attr_cast_to_unknown", model([helper.make_node("Cast", ["x"], ["y"], name="cast0", to=99)],
                                       [vi("x")], [vi("y")]))
    save("attr_axis_out_of_range", model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat0", axis=100)],
                                         [vi("x")], [vi("y", shape=(2, 4))]))
    save("attr_softmax_axis", model([helper.make_node("Softmax", ["x"], ["y"], name="sm0", axis=-100)],
                                    [vi("x")], [vi("y")]))
    save("attr_perm_duplicate", model([helper.make_node("Transpose", ["x"], ["y"], name="tr0", perm=[0, 0])],
                                      [vi("x")], [vi("y")]))
    save("attr_perm_out_of_range", model([helper.make_node("Transpose", ["x"], ["y"], name="tr0",
                                                           perm=[1, 1 << 40])],
                                         [vi("x")], [vi("y")]))
    save("attr_string_with_nul", model([helper.make_node("Einsum", ["x"], ["y"], name="einsum0",
                                                         equation=b"ij\x00->ji")],
                                       [vi("x")], [vi("y", shape=None)]))
    save("attr_graph_empty", model([helper.make_node("If", ["c"], ["y"], name="if0",
                                                     then_branch=helper.make_graph([], "e", [], []),
                                                     else_branch=helper.make_graph([], "e", [], []))],
                                   [vi("c", TensorProto.BOOL, (1,))], [vi("y")]))
    cnode = helper.make_node("Constant", [], ["c"], name="const0",
                             value=helper.make_tensor("cv", f32, [1, 4], [0.0] * 4))
    cnode.attribute[0].t.ClearField("float_data")
    cnode.attribute[0].t.raw_data = b"\0" * 3
    save("constant_raw_data_short", model([cnode, helper.make_node("Add", ["x", "c"], ["y"], name="add0")],
                                          [vi("x")], [vi("y")]))
    save("constant_no_value", model([helper.make_node("Constant", [], ["c"], name="const0"),
                                     helper.make_node("Add", ["x", "c"], ["y"], name="add0")],
                                    [vi("x")], [vi("y")]))
    conv = lambda name, **kw: model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name=name, **kw)],
        [vi("x", shape=(1, 1, 4, 4))], [vi("y", shape=(1, 1, 4, 4))],
        [const("w", np.ones((1, 1, 3, 3), np.float32))])
    save("conv_stride_zero", conv("conv_s0", strides=[0, 0]))
    save("conv_dilation_zero", conv("conv_d0", dilations=[0, 0]))
    save("conv_negative_pads", conv("conv_np", pads=[-9, -9, -9, -9]))
    save("conv_huge_pads", conv("conv_hp", pads=[1 << 62, 1 << 62, 1 << 62, 1 << 62]))
    save("conv_group_zero", conv("conv_g0", group=0))
    save("pool_kernel_zero", model([helper.make_node("MaxPool", ["x"], ["y"], name="pool0", kernel_shape=[0, 0])],
                                   [vi("x", shape=(1, 1, 4, 4))], [vi("y", shape=(1, 1, 4, 4))]))

    # ---- shapes and folding budgets ----
    save("constantofshape_huge", model(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos0"),
         helper.make_node("Add", ["x", "c"], ["y"], name="add0")],
        [vi("x")], [vi("y")], [const("s", np.array([1 << 15, 1 << 15, 1 << 10], np.int64))]))
    save("constantofshape_overflow", model(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos0"),
         helper.make_node("Add", ["x", "c"], ["y"], name="add0")],
        [vi("x")], [vi("y")], [const("s", np.array([1 << 40, 1 << 40], np.int64))]))
    save("constantofshape_negative", model(
        [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos0"),
         helper.make_node("Add", ["x", "c"], ["y"], name="add0")],
        [vi("x")], [vi("y")], [const("s", np.array([-1, 4], np.int64))]))
    save("reshape_huge", model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0")],
                               [vi("x")], [vi("y")], [const("s", np.array([1 << 40, 1 << 30], np.int64))]))
    save("reshape_two_minus_one", model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs0")],
                                        [vi("x")], [vi("y")], [const("s", np.array([-1, -1], np.int64))]))
    save("expand_huge", model([helper.make_node("Expand", ["x", "s"], ["y"], name="ex0")],
                              [vi("x")], [vi("y", shape=None)], [const("s", np.array([1 << 20, 1 << 20, 4], np.int64))]))
    save("tile_huge", model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile0")],
                            [vi("x")], [vi("y")], [const("r", np.array([1 << 31, 1 << 31], np.int64))]))
    save("range_huge", model(
        [helper.make_node("Range", ["a", "b", "c"], ["r"], name="range0"),
         helper.make_node("Relu", ["x"], ["y"], name="relu0")],
        [vi("x")], [vi("y"), vi("r", i64, (1,))],
        [const("a", np.array(0, np.int64)), const("b", np.array(1 << 60, np.int64)),
         const("c", np.array(1, np.int64))]))
    save("gather_index_out_of_range", model(
        [helper.make_node("Gather", ["d", "i"], ["g"], name="gather0"),
         helper.make_node("Add", ["x", "g"], ["y"], name="add0")],
        [vi("x")], [vi("y")],
        [const("d", np.ones((1, 4), np.float32)), const("i", np.array([0, 100], np.int64))]))
    save("slice_huge_step", model(
        [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice0")],
        [vi("x")], [vi("y")],
        [const("s", np.array([0], np.int64)), const("e", np.array([4], np.int64)),
         const("a", np.array([1], np.int64)), const("st", np.array([0], np.int64))]))
    save("split_sizes_wrong", model(
        [helper.make_node("Split", ["x", "sp"], ["y", "z"], name="split0", axis=1)],
        [vi("x")], [vi("y", shape=(1, 2)), vi("z", shape=(1, 2))],
        [const("sp", np.array([3, 3], np.int64))]))

    # ---- external data (models in OUTDIR/ext, secrets outside it) ----
    with open(os.path.join(out, "secret.bin"), "wb") as f:
        f.write(b"\0" * 64)
    with open(os.path.join(ext, "weights.bin"), "wb") as f:
        f.write(b"\0" * 16)
    link = os.path.join(ext, "link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("../secret.bin", link)
    os.makedirs(os.path.join(ext, "sub"), exist_ok=True)

    def ext_case(name, **kv):
        t = helper.make_tensor("w_ext", f32, [1, 4], [0.0] * 4)
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in kv.items():
            e = t.external_data.add()
            e.key = k
            e.value = str(v)
        save(name, model([helper.make_node("Add", ["x", "w_ext"], ["y"], name="add0")],
                         [vi("x")], [vi("y")], [t]), ext)

    ext_case("ext_dotdot", location="../secret.bin")
    ext_case("ext_dotdot_deep", location="sub/../../secret.bin")
    ext_case("ext_absolute", location=os.path.abspath(os.path.join(out, "secret.bin")))
    ext_case("ext_etc_passwd", location="/etc/passwd")
    ext_case("ext_symlink_out", location="link.bin")
    ext_case("ext_missing", location="nothere.bin")
    ext_case("ext_no_location")
    ext_case("ext_past_end", location="weights.bin", offset=8)
    ext_case("ext_offset_huge", location="weights.bin", offset=1 << 62)
    ext_case("ext_offset_negative", location="weights.bin", offset=-8)
    ext_case("ext_offset_garbage", location="weights.bin", offset="12abc")
    ext_case("ext_length_mismatch", location="weights.bin", length=12)
    ext_case("ext_directory", location=".")

    # ---- regressions found by fuzzing (test/fuzz) ----
    # fuzz_compile: an Einsum equation with a broken ellipsis and a comma in
    # the output passed inference and hit an internal error in lowering
    save("fuzz_einsum_bad_equation", model(
        [helper.make_node("Einsum", ["x"], ["y"], name="einsum0", equation="...ii ->..,i")],
        [vi("x", shape=(3, 5, 5))], [vi("y", shape=(3, 5))], opset=12))
    # fuzz_compile: bytes outside a-z/A-Z in an Einsum equation indexed a
    # 64-entry table in lowering out of bounds (UBSan)
    for i, eq in enumerate([b".iaa \x02)\xc0\xff\xffi", b"\xcd1.ai 0\xfe\xff\xff\xffn"]):
        save("fuzz_einsum_non_letter_%d" % i, model(
            [helper.make_node("Einsum", ["x"], ["y"], name="einsum0", equation=eq)],
            [vi("x", TensorProto.DOUBLE, (3, 1, 5))], [vi("y", TensorProto.DOUBLE, None)], opset=12))

    # fuzz_compile: OneHot with a run-time depth takes the declared output
    # shape, here of the wrong rank; lowering then built a NULL expression
    save("fuzz_onehot_declared_rank", model(
        [helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], name="onehot0", axis=-2)],
        [vi("indices", shape=(2, 2)), vi("depth", shape=()), vi("values", shape=(2,))],
        [vi("y", shape=(10, 2))], opset=11))

    # fuzz_compile: HannWindow with a run-time size and a declared output of
    # rank 0; the window's lowering indexed an axis that does not exist
    save("fuzz_window_declared_rank0", model(
        [helper.make_node("HannWindow", ["x"], ["y"], name="hann0")],
        [vi("x", dtype=TensorProto.INT32, shape=())],
        [vi("y", shape=())], opset=17))

    # fuzz_compile: Expand with a run-time shape takes the declared output
    # shape; one of lower rank than the input hit an internal error
    save("fuzz_expand_declared_rank", model(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="expand0")],
        [vi("x", shape=(1, 3, 1)), vi("shape", TensorProto.INT64, (3,))],
        [vi("y", shape=(3, 3))], opset=13))

    # fuzz_compile: a Shrink on int32 with bias -7.8e33 converted the bias
    # to an integer constant out of range in lowering (UBSan:
    # float-cast-overflow); float attributes that become integer constants
    # are now range-checked at inference, NaN included
    i32 = TensorProto.INT32
    save("fuzz_shrink_int_bias_range", model(
        [helper.make_node("Shrink", ["x"], ["y"], name="shrink0", bias=-7.8e33)],
        [vi("x", i32)], [vi("y", i32)]))
    save("shrink_int_lambd_nan", model(
        [helper.make_node("Shrink", ["x"], ["y"], name="shrink0", lambd=float("nan"))],
        [vi("x", TensorProto.INT8)], [vi("y", TensorProto.INT8)]))
    save("clip_int_attr_range", model(
        [helper.make_node("Clip", ["x"], ["y"], name="clip0", min=-1e30, max=float("inf"))],
        [vi("x", i32)], [vi("y", i32)], opset=6))
    save("gemm_int_alpha_range", model(
        [helper.make_node("Gemm", ["a", "b"], ["y"], name="gemm0", alpha=1e20)],
        [vi("a", i32, (2, 2)), vi("b", i32, (2, 2))], [vi("y", i32, (2, 2))]))
    save("pad_int_value_nan", model(
        [helper.make_node("Pad", ["x"], ["y"], name="pad0", pads=[0, 1, 0, 1], value=float("nan"))],
        [vi("x", i64)], [vi("y", i64, (1, 6))], opset=2))

    # fuzz_compile (through the pipeline, -t x86-64-avx512): a Concat of
    # two [2, 0] tensors is a kernel of no stages, on which the row
    # compute_at of lower/templates.c formed &stages[-1] (UBSan: offset
    # applied to a null pointer). A valid model: ok_ cases must compile.
    for t in ("c", "x86-64-avx512"):
        save("ok_concat_empty_" + t.replace("-", "_"), model(
            [helper.make_node("Concat", ["a", "a"], ["y"], name="concat0", axis=-1)],
            [vi("a", shape=(2, 0))], [vi("y", shape=(2, 0))]))

    print("%d cases in %s" % (count[0], out))


if __name__ == "__main__":
    main()
