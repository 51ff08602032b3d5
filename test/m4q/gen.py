#!/usr/bin/env python3
"""QuantizeLinear of float32 to int8 and uint8 with special inputs (NaN,
infinities, values past the int32 range, ties at .5 and .25/.75, -0), as
data sets in the ONNX test layout with the expected outputs: round half to
even of x / scale in float32, plus the zero point, saturated to the 8-bit
range; NaN gives 0 (tvmcc's defined result for a NaN input, the portable
float-to-integer conversion's). test/m4q/run.sh runs them with
`tvmcc verify` on the host and on Cortex-M4 under qemu, whose C takes the
VCVTR / QADD / SSAT form (emit_c/emit_arm.c m4_quantize_loop).

    gen.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SPECIAL = [np.nan, np.inf, -np.inf, 3e9, -3e9, 1e30, -1e30, 2.25, 2.75, -2.25, -2.75, 0.25,
           -0.25, 63.25, 63.75, -64.25, -64.75, 2147483648.0, -2147483648.0, 4294967296.0,
           -0.0, 1.0, -1.0, 0.75, -0.75, 1.25, 254.5, 255.5, -127.5, -128.5]


def expected(x, scale, zp, u8):
    with np.errstate(over="ignore"):
        q = np.float32(x) / np.float32(scale)
    lo, hi = (0, 255) if u8 else (-128, 127)
    with np.errstate(invalid="ignore"):
        r = np.rint(q.astype(np.float64))  # half to even; q is a float32 value
        r = np.where(np.isnan(r), np.nan, np.clip(r + zp, lo, hi))
    out = np.where(np.isnan(r), 0, r).astype(np.int64)
    return out.astype(np.uint8 if u8 else np.int8)


def model(path, scale, zp, u8, shape):
    t = TensorProto.UINT8 if u8 else TensorProto.INT8
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")]
    inits = [numpy_helper.from_array(np.array(scale, np.float32), "s"),
             numpy_helper.from_array(np.array(zp, np.uint8 if u8 else np.int8), "z")]
    g = helper.make_graph(nodes, "quant", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", t, shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="tvmcc-test-m4q")
    onnx.save(m, path)


# Ties of x / scale for scales that are no power of two, with the zero
# points at the edges: a fast path that multiplies by 1 / scale without
# the exactness test of emit_c/emit_arm.c m4_quant_fixed rounds some of
# these the other way. (name, scale, zero point, uint8, shape: the last
# extent picks the group of 3, 2 or 1 elements.)
TIES = [("tie_s8_2over255_z0", np.float32(2.0) / np.float32(255.0), 0, False, [1, 1, 80, 75]),
        ("tie_s8_0p0078431377_zm1", 0.0078431377, -1, False, [1, 1, 120, 50]),
        ("tie_s8_third_z127", np.float32(1.0) / np.float32(3.0), 127, False, [1, 1, 113, 49]),
        ("tie_s8_0p1_zm128", 0.1, -128, False, [1, 3, 50, 39]),
        ("tie_u8_3em5_z128", 3e-5, 128, True, [1, 2, 60, 47]),
        ("tie_u8_0p1_z0", 0.1, 0, True, [1, 1, 100, 58]),
        ("tie_s8_0p0078225_zm1", 0.00783225, -1, False, [1, 3, 45, 42])]
# scales whose reciprocal is no normal float32: every element takes the
# division
EDGES = [("edge_s8_tiny_scale", 1e-38, -1, False, [1, 1, 8, 9]),
         ("edge_u8_huge_scale", 1e38, 3, True, [1, 1, 8, 9])]


def tie_inputs(scale, n, rng):
    """n float32 inputs: for k + 1/2, k in [-300, 300), the float32 nearest
    (k + 1/2) * scale and its four neighbours on each side (quotients at
    the tie and an ulp or more beside it), then random values of the
    quotient range, the special values first."""
    s = np.float32(scale)
    out = list(np.array(SPECIAL, np.float32))
    for k in range(-300, 300):
        with np.errstate(over="ignore"):
            x = np.float32((k + 0.5) * float(s))
        lo = hi = x
        near = [x]
        for _ in range(4):
            lo = np.nextafter(lo, np.float32(-np.inf))
            hi = np.nextafter(hi, np.float32(np.inf))
            near += [lo, hi]
        out += near
    out = np.array(out, np.float32)
    rest = (rng.uniform(-300, 300, max(0, n - len(out))) * float(s)).astype(np.float32)
    return np.concatenate([out, rest])[:n]


def write_case(odir, name, scale, zp, u8, shape, x):
    d = os.path.join(odir, name)
    os.makedirs(os.path.join(d, "data_0"), exist_ok=True)
    model(os.path.join(d, "model.onnx"), scale, zp, u8, shape)
    y = expected(x, scale, zp, u8)
    with open(os.path.join(d, "data_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "data_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.float32(x) / np.float32(scale)
        ties = int(np.sum(np.isfinite(q) & (q - np.floor(q) == 0.5)))
    print(f"{name}: {x.size} values, {ties} exact ties of x / scale")


def extra_cases(odir, rng):
    """A scale given at run time (a graph input: 1 / scale is taken once per
    call, the fixed-point form stays) and per-channel scales and zero
    points."""
    shape = [1, 3, 20, 21]
    s = np.float32(0.1)
    x = tie_inputs(s, int(np.prod(shape)), rng).reshape(shape)
    d = os.path.join(odir, "runtime_scale_s8")
    os.makedirs(os.path.join(d, "data_0"), exist_ok=True)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")]
    g = helper.make_graph(nodes, "quant", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
                                           helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, shape)],
                          [numpy_helper.from_array(np.array(-1, np.int8), "z")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="tvmcc-test-m4q"),
              os.path.join(d, "model.onnx"))
    for i, (name, v) in enumerate([("x", x), ("s", np.array(s, np.float32)), ("y", expected(x, s, -1, False))]):
        kind = "output_0" if name == "y" else f"input_{i}"
        with open(os.path.join(d, "data_0", kind + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, name).SerializeToString())
    with open(os.path.join(d, "form"), "w") as f:
        f.write("vcvt.s32.f32 %0, %0, #16\n")
    print(f"runtime_scale_s8: {x.size} values")

    # per-channel scales and zero points: on axis 1 1 / scale is taken
    # per channel, outside the nest of the fixed-point form; on the last
    # axis they change in the innermost loop: the division per element
    sc = np.array([0.1, 2.0 / 255.0, 1.0 / 3.0], np.float32)
    zp = np.array([-1, 127, -128], np.int8)
    for name, axis, shape, form in [("per_channel_s8", 1, [1, 3, 20, 21], "vcvt.s32.f32 %0, %0, #16"),
                                    ("per_channel_last_s8", 3, [1, 20, 21, 3], "vcvtr.s32.f32")]:
        d = os.path.join(odir, name)
        os.makedirs(os.path.join(d, "data_0"), exist_ok=True)
        nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q", axis=axis)]
        g = helper.make_graph(nodes, "quant", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, shape)],
                              [numpy_helper.from_array(sc, "s"), numpy_helper.from_array(zp, "z")])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                                    producer_name="tvmcc-test-m4q"), os.path.join(d, "model.onnx"))
        x = np.stack([tie_inputs(sc[c], 420, rng).reshape(20, 21) for c in range(3)])
        y = np.stack([expected(x[c], sc[c], int(zp[c]), False) for c in range(3)])
        if axis == 3:
            x, y = x.transpose(1, 2, 0), y.transpose(1, 2, 0)
        x, y = np.ascontiguousarray(x[None]), np.ascontiguousarray(y[None])
        with open(os.path.join(d, "data_0", "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        with open(os.path.join(d, "data_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, "y").SerializeToString())
        with open(os.path.join(d, "form"), "w") as f:
            f.write(form + "\n")
        print(f"{name}: {x.size} values")


def main():
    odir = sys.argv[1]
    rng = np.random.default_rng(7)
    shape = [1, 3, 8, 8]
    for name, scale, zp, u8 in [("quant_s8", 0.5, -3, False), ("quant_u8", 0.5, 7, True),
                                ("quant_s8_scale3", 3.0, 5, False)]:
        x = rng.uniform(-300, 300, shape).astype(np.float32)
        flat = x.reshape(-1)
        flat[:len(SPECIAL)] = SPECIAL
        # ties of x / scale: k + 0.5 for a range of k
        flat[64:128] = ((np.arange(64) - 32) + 0.5) * scale
        write_case(odir, name, scale, zp, u8, shape, x)
    for name, scale, zp, u8, shape in TIES + EDGES:
        x = tie_inputs(scale, int(np.prod(shape)), rng).reshape(shape)
        write_case(odir, name, scale, zp, u8, shape, x)
    extra_cases(odir, rng)
    print(f"wrote {6 + len(TIES) + len(EDGES)} models")


if __name__ == "__main__":
    main()
