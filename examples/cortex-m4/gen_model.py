#!/usr/bin/env python3
"""Writes the example's model and the output it must print.

    gen_model.py OUT_DIR

OUT_DIR/model.onnx: a small classifier, x float32[1,1,8,8] -> Conv(4, 3x3,
pad 1) + bias -> Relu -> MaxPool 2x2 -> Flatten -> Gemm(64 -> 10) -> Softmax
-> y float32[1,10], with random weights from a fixed seed.
OUT_DIR/expected.txt: y for the fixed input main.c builds (x[i] =
((7*i) % 16) / 8 - 1), computed here with numpy, one value per line.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def fixed_input():
    i = np.arange(64)
    return (((7 * i) % 16) / 8.0 - 1.0).astype(np.float32).reshape(1, 1, 8, 8)


def reference(x, cw, cb, gw, gb):
    """The model's maths in plain numpy (float32 throughout)."""
    xp = np.pad(x[0, 0], 1)
    conv = np.zeros((4, 8, 8), np.float32)
    for o in range(4):
        for r in range(8):
            for c in range(8):
                conv[o, r, c] = np.sum(xp[r:r + 3, c:c + 3] * cw[o, 0]) + cb[o]
    act = np.maximum(conv, 0)
    pool = act.reshape(4, 4, 2, 4, 2).max(axis=(2, 4))
    logits = pool.reshape(1, 64) @ gw.T + gb
    e = np.exp(logits - logits.max())
    return (e / e.sum()).astype(np.float32)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240607)
    cw = rng.normal(0, 0.5, (4, 1, 3, 3)).astype(np.float32)
    cb = rng.normal(0, 0.1, (4,)).astype(np.float32)
    gw = rng.normal(0, 0.3, (10, 64)).astype(np.float32)
    gb = rng.normal(0, 0.1, (10,)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "gw", "gb"], ["g"], name="fc", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "example",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(cw, "cw"), numpy_helper.from_array(cb, "cb"),
         numpy_helper.from_array(gw, "gw"), numpy_helper.from_array(gb, "gb")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="tvmcc-example")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    y = reference(fixed_input(), cw, cb, gw, gb)
    with open(os.path.join(out, "expected.txt"), "w") as f:
        for v in y[0]:
            f.write("%.6f\n" % v)


if __name__ == "__main__":
    main()
