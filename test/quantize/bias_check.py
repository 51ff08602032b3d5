#!/usr/bin/python3
"""Checks tvmcc quantize's bias correction (test/quantize/run.sh).

    bias_check.py make DIR          writes DIR/bias.onnx (a 1x1 Conv and a Gemm)
                                    and DIR/calib (inputs with channel means far
                                    from 0)
    bias_check.py check DIR ON.onnx OFF.onnx

The weights' rounding shifts each output channel's mean by
sum_k (Wq - W)[c, k] * E[x_k]; bias correction subtracts that shift. With
the float inputs of the calibration set, the mean error of each layer's
output (dequantized weights and bias against float ones) must be about 0
with the correction (below 2% of the error without it, in total) and not
without it.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def make(d):
    rng = np.random.default_rng(11)
    w1 = rng.normal(0, 0.2, (16, 8, 1, 1)).astype(np.float32)
    b1 = rng.normal(0, 0.1, 16).astype(np.float32)
    w2 = rng.normal(0, 0.1, (16 * 4 * 4, 10)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c"]),
             helper.make_node("Flatten", ["c"], ["f"]),
             helper.make_node("Gemm", ["f", "w2"], ["y"])]
    g = helper.make_graph(nodes, "bias", [helper.make_tensor_value_info("x", F, [1, 8, 4, 4])],
                          [helper.make_tensor_value_info("y", F, [1, 10])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                           numpy_helper.from_array(w2, "w2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(d, "bias.onnx"))
    means = rng.uniform(0.5, 3.0, (1, 8, 1, 1))
    for k in range(16):
        x = (means + rng.normal(0, 0.5, (1, 8, 4, 4))).astype(np.float32)
        os.makedirs(os.path.join(d, "calib", "s%02d" % k), exist_ok=True)
        with open(os.path.join(d, "calib", "s%02d" % k, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())


def inits(m):
    return {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}


def dequantized(m, op_type):
    """(weights, bias) the node of op_type reads, through its DequantizeLinear."""
    ini = inits(m)
    prod = {o: n for n in m.graph.node for o in n.output}
    node = next(n for n in m.graph.node if n.op_type == op_type)

    def value(name):
        if name in ini:
            return ini[name].astype(np.float64)
        dq = prod[name]
        q = ini[dq.input[0]].astype(np.float64)
        s = ini[dq.input[1]].astype(np.float64)
        z = ini[dq.input[2]].astype(np.float64)
        axis = next((a.i for a in dq.attribute if a.name == "axis"), 1)
        if s.ndim == 1 and q.ndim > 1:
            shape = [1] * q.ndim
            shape[axis] = -1
            s, z = s.reshape(shape), z.reshape(shape)
        return (q - z) * s
    b = value(node.input[2]) if len(node.input) > 2 and node.input[2] else 0.0
    return value(node.input[1]), b


def mean_errors(float_m, q_m, xs):
    w1, b1 = dequantized(float_m, "Conv")
    v1, c1 = dequantized(q_m, "Conv")
    w2, b2 = dequantized(float_m, "Gemm")
    v2, c2 = dequantized(q_m, "Gemm")
    e1 = np.zeros(16)
    e2 = np.zeros(10)
    for x in xs:
        xf = x.reshape(8, 16).astype(np.float64)           # channels x positions
        y = w1.reshape(16, 8) @ xf + np.reshape(b1, (16, 1))
        yq = v1.reshape(16, 8) @ xf + np.reshape(c1, (16, 1))
        e1 += (yq - y).mean(axis=1)
        f = y.reshape(1, -1)
        e2 += (f @ v2 + c2 - (f @ w2 + b2)).ravel()
    return np.abs(e1 / len(xs)).sum(), np.abs(e2 / len(xs)).sum()


def check(d, on, off):
    fm = onnx.load(os.path.join(d, "bias.onnx"))
    xs = []
    for s in sorted(os.listdir(os.path.join(d, "calib"))):
        t = onnx.TensorProto()
        with open(os.path.join(d, "calib", s, "input_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        xs.append(numpy_helper.to_array(t))
    a = mean_errors(fm, onnx.load(on), xs)
    b = mean_errors(fm, onnx.load(off), xs)
    print("mean error per layer: with correction conv %.3g gemm %.3g, without conv %.3g gemm %.3g"
          % (a[0], a[1], b[0], b[1]))
    ok = all(x < 0.02 * y and y > 1e-4 for x, y in zip(a, b))
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "make":
        os.makedirs(sys.argv[2], exist_ok=True)
        make(sys.argv[2])
        sys.exit(0)
    sys.exit(check(*sys.argv[2:5]))
