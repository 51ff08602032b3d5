#!/usr/bin/python3
"""The demo model: a small CNN built with onnx.helper, and its check.

    make_demo.py OUTDIR
        writes OUTDIR/model.onnx, input.bin and expected.bin (float32, dense)
    make_demo.py --check EXPECTED.bin ACTUAL.bin
        prints the output values and the largest absolute error; exit 1 if
        any element is off by more than 1e-4 + 1e-3 * |expected|

Graph (opset 13): x[1,1,8,8] -> Conv(4 filters 3x3, pad 1, bias) -> Relu
-> MaxPool(2x2, stride 2) -> Flatten -> Gemm(64 -> 10, transB) -> Softmax.
Weights and input come from a fixed seed; the expected output is computed
here with numpy, so no ONNX runtime is needed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv2d(x, w, b):
    """NCHW convolution, stride 1, zero padding 1."""
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd), dtype=np.float64)
    for i in range(h):
        for j in range(wd):
            patch = xp[:, :, i:i + k, j:j + k]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, -1, 1, 1)


def reference(x, cw, cb, gw, gb):
    y = np.maximum(conv2d(x.astype(np.float64), cw, cb), 0.0)
    n, c, h, w = y.shape
    y = y.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    y = y.reshape(n, -1) @ gw.astype(np.float64).T + gb
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def build(out):
    rng = np.random.default_rng(20181008)
    cw = (rng.standard_normal((4, 1, 3, 3)) * 0.5).astype(np.float32)
    cb = (rng.standard_normal(4) * 0.1).astype(np.float32)
    gw = (rng.standard_normal((10, 64)) * 0.2).astype(np.float32)
    gb = (rng.standard_normal(10) * 0.1).astype(np.float32)
    x = rng.standard_normal((1, 1, 8, 8)).astype(np.float32)

    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["g"], name="fc", transB=1),
        helper.make_node("Softmax", ["g"], ["y"], name="softmax", axis=1),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in
             ((cw, "conv_w"), (cb, "conv_b"), (gw, "fc_w"), (gb, "fc_b"))]
    graph = helper.make_graph(
        nodes, "demo_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="tvmcc-demo")
    model.ir_version = 8
    onnx.checker.check_model(model)

    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    x.tofile(os.path.join(out, "input.bin"))
    reference(x, cw, cb, gw, gb).tofile(os.path.join(out, "expected.bin"))


def check(expected_path, actual_path):
    want = np.fromfile(expected_path, dtype=np.float32)
    got = np.fromfile(actual_path, dtype=np.float32)
    if got.shape != want.shape:
        print("demo: output has %d values, expected %d" % (got.size, want.size))
        return 1
    print("output: " + " ".join("%.6f" % v for v in got))
    err = np.abs(got.astype(np.float64) - want)
    if not np.all(err <= 1e-4 + 1e-3 * np.abs(want)):
        print("expect: " + " ".join("%.6f" % v for v in want))
        print("demo: FAIL: output differs from the expected values (max abs error %.3g)" % err.max())
        return 1
    print("demo: output matches the expected values (max abs error %.3g)" % err.max())
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.stderr.write(__doc__)
        sys.exit(2)
    build(sys.argv[1])
