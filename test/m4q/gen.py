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


def main():
    odir = sys.argv[1]
    rng = np.random.default_rng(7)
    shape = [1, 3, 8, 8]
    for name, scale, zp, u8 in [("quant_s8", 0.5, -3, False), ("quant_u8", 0.5, 7, True),
                                ("quant_s8_scale3", 3.0, 5, False)]:
        d = os.path.join(odir, name)
        os.makedirs(os.path.join(d, "data_0"), exist_ok=True)
        model(os.path.join(d, "model.onnx"), scale, zp, u8, shape)
        x = rng.uniform(-300, 300, shape).astype(np.float32)
        flat = x.reshape(-1)
        flat[:len(SPECIAL)] = SPECIAL
        # ties of x / scale: k + 0.5 for a range of k
        flat[64:128] = ((np.arange(64) - 32) + 0.5) * scale
        y = expected(x, scale, zp, u8)
        with open(os.path.join(d, "data_0", "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        with open(os.path.join(d, "data_0", "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, "y").SerializeToString())
    print("wrote 3 models")


if __name__ == "__main__":
    main()
