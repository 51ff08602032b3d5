#!/usr/bin/python3
"""Writes test models for the packed and 8-bit element types (ONNX 1.20's
int4/uint4/int2/uint2, float8, float4e2m1) moving through data-movement
operators, as a conformance suite: OUTDIR/test_*/model.onnx and
test_data_set_0/{input,output}_*.pb, read by test/conformance/run.sh.

Usage: make_models.py OUTDIR. Debian's onnx predates these types: tensors are
built as raw TensorProto messages with the type numbers, the packing (first
element in the low bits) is written out here from ONNX's IR text.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

INT4, UINT2, INT2, F8E4M3FN, F8E5M2 = 22, 25, 26, 17, 19


def raw(name, dt, dims, data):
    t = TensorProto()
    t.name, t.data_type, t.raw_data = name, dt, bytes(data)
    t.dims.extend(dims)
    return t


def pack(vals, bits):
    per = 8 // bits
    out = bytearray((len(vals) + per - 1) // per)
    for i, v in enumerate(vals):
        out[i // per] |= (int(v) & ((1 << bits) - 1)) << ((i % per) * bits)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "build/types/data/types"
    rng = np.random.default_rng(1)

    def case(name, nodes, ins, outs, inits=(), opset=21):
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        g = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info(n, dt, dims) for n, dt, dims, _ in ins],
                              [helper.make_tensor_value_info(n, dt, dims) for n, dt, dims, _ in outs],
                              list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 10
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(m.SerializeToString())
        for kind, vals in (("input", ins), ("output", outs)):
            for k, (n, dt, dims, data) in enumerate(vals):
                with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
                    f.write(raw(n, dt, dims, data).SerializeToString())

    x = rng.integers(-8, 8, (3, 5))
    case("test_int4_transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
         [("x", INT4, [3, 5], pack(x.flatten(), 4))], [("y", INT4, [5, 3], pack(x.T.flatten(), 4))])
    # two transposes with a packed intermediate, odd element count
    x = rng.integers(-2, 2, (3, 7))
    case("test_int2_transpose_twice",
         [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
          helper.make_node("Neg", ["e"], ["f"]),
          helper.make_node("Transpose", ["t"], ["y"], perm=[1, 0])],
         [("x", INT2, [3, 7], pack(x.flatten(), 2)), ("e", TensorProto.FLOAT, [1], np.ones(1, np.float32).tobytes())],
         [("y", INT2, [3, 7], pack(x.flatten(), 2)), ("f", TensorProto.FLOAT, [1], (-np.ones(1, np.float32)).tobytes())])
    u = rng.integers(0, 4, (2, 3))
    c = rng.integers(0, 4, (1, 3))
    case("test_uint2_concat_reshape",
         [helper.make_node("Concat", ["u", "c"], ["t"], axis=0),
          helper.make_node("Reshape", ["t", "s"], ["y"])],
         [("u", UINT2, [2, 3], pack(u.flatten(), 2))],
         [("y", UINT2, [9], pack(np.concatenate([u, c]).flatten(), 2))],
         [raw("c", UINT2, [1, 3], pack(c.flatten(), 2)),
          numpy_helper.from_array(np.array([9], dtype=np.int64), "s")])
    # every float8 pattern, NaNs included, moved unchanged
    b = np.arange(256, dtype=np.uint8).reshape(16, 16)
    case("test_f8e4m3fn_transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
         [("x", F8E4M3FN, [16, 16], b.flatten())], [("y", F8E4M3FN, [16, 16], b.T.flatten())])
    idx = np.array([3, 0, 255, 124, 126], dtype=np.int64)
    bb = np.arange(256, dtype=np.uint8)
    case("test_f8e5m2_gather", [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
         [("x", F8E5M2, [256], bb)], [("y", F8E5M2, [5], bb[idx])],
         [numpy_helper.from_array(idx, "i")])
    # a packed Constant folded at compile time
    v = rng.integers(-8, 8, (7,))
    case("test_int4_constant_cast",
         [helper.make_node("Constant", [], ["k"], value=raw("kv", INT4, [7], pack(v, 4))),
          helper.make_node("Cast", ["k"], ["y"], to=TensorProto.FLOAT)],
         [], [("y", TensorProto.FLOAT, [7], v.astype(np.float32).tobytes())])
    w = rng.integers(-8, 8, (9,))
    case("test_int4_slice", [helper.make_node("Slice", ["x", "st", "en"], ["y"])],
         [("x", INT4, [9], pack(w, 4))], [("y", INT4, [5], pack(w[2:7], 4))],
         [numpy_helper.from_array(np.array([2], dtype=np.int64), "st"),
          numpy_helper.from_array(np.array([7], dtype=np.int64), "en")])

    # Cast to float8e8m0 (24) with each round_mode and saturate, expected
    # codes from the exponent field as ONNX's reference defines them
    xs = np.array([0.0, 0.124, 0.25, 0.75, 1.1, 1.5, 3.0, 2.0 ** 127 * 1.6, 2.0 ** 127 * 1.2,
                   1e-39, np.inf, np.nan], dtype=np.float32)

    def e8m0(x, mode, sat):
        bits = int(np.array([x], np.float32).view(np.uint32)[0])
        e = (bits >> 23) & 0xFF
        if e == 0xFF:
            return 0xFF if mode != "up" or not sat else 0xFE  # spec table: inf -> max
        if mode == "nearest":
            up = bool(bits & 0x400000) and (bool(bits & 0x3FFFFF) or e > 0)
        elif mode == "up":  # (below 2^-126: up to 2^-127 is code 0, as the spec's rounding up)
            up = bool(bits & 0x7FFFFF) if e else (bits & 0x7FFFFF) > 0x400000
        else:
            up = False
        if up and e == 0xFE and sat:
            up = False
        return e + up

    for mode in ("down", "nearest", "up"):
        for sat in (1, 0):
            if mode == "up" and sat:
                continue  # the suite's test_cast_e8m0_* cover it
            want = [e8m0(x, mode, sat) for x in xs]
            if mode == "up" and not sat:
                want[10] = 0xFF
            case("test_cast_e8m0_%s_sat%d" % (mode, sat),
                 [helper.make_node("Cast", ["x"], ["y"], to=24, round_mode=mode, saturate=sat)],
                 [("x", TensorProto.FLOAT, [len(xs)], xs.tobytes())],
                 [("y", 24, [len(xs)], bytes(want))], opset=25)


if __name__ == "__main__":
    main()
