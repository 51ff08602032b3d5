#!/usr/bin/python3
"""Small float models for the cross-layer equalization test
(test/unit/equalize_test.c, quant/equalize.c).

    make_cle_models.py OUTDIR

Each model has layer pairs whose per-channel weight ranges are made
deliberately unbalanced: some output channels of layer 1 (and their bias)
are multiplied by a large factor and the matching input channels of layer 2
divided by it. Through a Relu, LeakyRelu or PRelu that leaves the function
as it was, so equalization must undo it without changing the outputs.
The test knows each model's expected pair count and layer-1 names.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(18)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def rand(*shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def save(path, nodes, inits, inputs, outputs):
    """Writes the model; the outputs' shapes are ONNX's inferred ones."""
    g = helper.make_graph(
        nodes, os.path.basename(path)[:-5],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs], [], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    shapes = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
    m.graph.output.extend(shapes[n] for n in outputs)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def unbalance_conv(w1, b1, w2, group2, chans, f):
    """Channel c of layer 1 times f, layer 2's input channel c over f."""
    icpg = w2.shape[1]
    ocpg = w2.shape[0] // group2
    for c in chans:
        w1[c] *= f
        if b1 is not None:
            b1[c] *= f
        g = c // icpg
        w2[g * ocpg:(g + 1) * ocpg, c % icpg] /= f


def conv_chain(d):
    # Conv 3->8 -> Relu -> AveragePool -> depthwise 8 -> Relu -> Conv 1x1 8->4
    w1, b1 = rand(8, 3, 3, 3), rand(8)
    w2, b2 = rand(8, 1, 3, 3), rand(8)
    w3, b3 = rand(4, 8, 1, 1), rand(4)
    unbalance_conv(w1, b1, w2, 8, [1, 5], 100.0)
    unbalance_conv(w2, b2, w3, 1, [2, 6], 0.02)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="c1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r0"], name="r1"),
        helper.make_node("AveragePool", ["r0"], ["r1"], name="ap", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="dw", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="r2"),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["y"], name="c3"),
    ]
    inits = [const(n, a) for n, a in
             [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2), ("w3", w3), ("b3", b3)]]
    save(os.path.join(d, "cle_conv_chain.onnx"), nodes, inits, [("x", [1, 3, 10, 10])], ["y"])


def groups(d):
    # Conv 4->6 -> PRelu (scalar) -> MaxPool -> Conv 6->12 group 6 (depthwise, multiplier 2)
    # -> LeakyRelu -> Conv 12->4 group 2, stride 2 -> PRelu (per channel) -> Conv 4->2
    w1 = rand(6, 4, 1, 1)
    w2, b2 = rand(12, 1, 3, 3), rand(12)
    w3, b3 = rand(4, 6, 3, 3), rand(4)
    w4 = rand(2, 4, 1, 1)
    unbalance_conv(w1, None, w2, 6, [0, 4], 100.0)
    unbalance_conv(w2, b2, w3, 2, [3, 7, 10], 80.0)
    unbalance_conv(w3, b3, w4, 1, [1], 0.01)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="g1"),
        helper.make_node("PRelu", ["c1", "s1"], ["p0"], name="p1"),
        helper.make_node("MaxPool", ["p0"], ["p1"], name="mp", kernel_shape=[2, 2], pads=[0, 0, 1, 1]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="g2", group=6, pads=[1, 1, 1, 1]),
        helper.make_node("LeakyRelu", ["c2"], ["l2"], name="l2", alpha=0.2),
        helper.make_node("Conv", ["l2", "w3", "b3"], ["c3"], name="g3", group=2, strides=[2, 2]),
        helper.make_node("PRelu", ["c3", "s3"], ["p3"], name="p3"),
        helper.make_node("Conv", ["p3", "w4"], ["y"], name="g4"),
    ]
    inits = [const(n, a) for n, a in
             [("w1", w1), ("s1", [0.1]), ("w2", w2), ("b2", b2), ("w3", w3), ("b3", b3),
              ("s3", rand(4, 1, 1) * 0.5), ("w4", w4)]]
    save(os.path.join(d, "cle_groups.onnx"), nodes, inits, [("x", [1, 4, 9, 9])], ["y"])


def gemm(d):
    # Gemm (transA, transB) -> Relu -> Gemm (C a scalar) -> LeakyRelu
    # -> MatMul + Add -> Relu -> MatMul; layer 1 of the first pair has a
    # channel of zeros (its scale must stay 1)
    w1, b1 = rand(32, 16), rand(32)           # transB: [N, K]
    w2 = rand(32, 24)                          # [K, N]
    w3, b3 = rand(24, 8), rand(8)
    w4 = rand(8, 5)
    w1[3] = 0
    for c, f in [(2, 100.0), (9, 0.01), (20, 300.0)]:
        w1[c] *= f
        b1[c] *= f
        w2[c] /= f
    for c, f in [(1, 100.0), (17, 0.02)]:
        w2[:, c] *= f
        w3[c] /= f
    for c, f in [(4, 50.0)]:
        w3[:, c] *= f
        b3[c] *= f
        w4[c] /= f
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1", transA=1, transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="a1"),
        helper.make_node("Gemm", ["a1", "w2", "b2"], ["h2"], name="fc2", alpha=0.5, beta=2.0),
        helper.make_node("LeakyRelu", ["h2"], ["a2"], name="a2", alpha=0.05),
        helper.make_node("MatMul", ["a2", "w3"], ["m3"], name="mm3"),
        helper.make_node("Add", ["b3", "m3"], ["h3"], name="add3"),
        helper.make_node("Relu", ["h3"], ["a3"], name="a3"),
        helper.make_node("MatMul", ["a3", "w4"], ["y"], name="mm4"),
    ]
    inits = [const(n, a) for n, a in
             [("w1", w1), ("b1", b1), ("w2", w2), ("b2", [0.3]), ("w3", w3), ("b3", b3), ("w4", w4)]]
    save(os.path.join(d, "cle_gemm.onnx"), nodes, inits, [("x", [16, 3])], ["y"])


def matmul3d(d):
    # MatMul on a 3-D input, a [1, 1, N] bias, Relu, MatMul
    w1, b1, w2 = rand(8, 16), rand(1, 1, 16), rand(16, 4)
    for c, f in [(0, 100.0), (11, 0.01)]:
        w1[:, c] *= f
        b1[..., c] *= f
        w2[c] /= f
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"], name="mm1"),
        helper.make_node("Add", ["m1", "b1"], ["h1"], name="add1"),
        helper.make_node("Relu", ["h1"], ["a1"], name="a1"),
        helper.make_node("MatMul", ["a1", "w2"], ["y"], name="mm2"),
    ]
    inits = [const(n, a) for n, a in [("w1", w1), ("b1", b1), ("w2", w2)]]
    save(os.path.join(d, "cle_matmul3d.onnx"), nodes, inits, [("x", [2, 3, 8])], ["y"])


def conv1d(d):
    # 1-D convs (checked by test/quantize/cle_models.sh, which compiles it)
    w1, b1, w2 = rand(6, 4, 3), rand(6), rand(6, 2, 1)
    unbalance_conv(w1, b1, w2, 3, [1, 4], 100.0)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="k1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="r1"),
        helper.make_node("Conv", ["r1", "w2"], ["y"], name="k2", group=3),
    ]
    inits = [const(n, a) for n, a in [("w1", w1), ("b1", b1), ("w2", w2)]]
    save(os.path.join(d, "cle_conv1d.onnx"), nodes, inits, [("x", [2, 4, 12])], ["y"])


def blocked(d):
    # pairs that must be skipped: behind Clip, behind Sigmoid, an
    # intermediate that is also a graph output, one read by two convs
    ws = [rand(6, 3, 3, 3), rand(6, 6, 1, 1), rand(6, 6, 3, 3), rand(6, 6, 1, 1),
          rand(6, 6, 1, 1), rand(6, 6, 1, 1)]
    ws[0][2] *= 100.0
    ws[1][:, 2] /= 100.0
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], name="k0"),
        helper.make_node("Clip", ["c0", "lo", "hi"], ["q0"], name="clip0"),
        helper.make_node("Conv", ["q0", "w1"], ["c1"], name="k1"),
        helper.make_node("Sigmoid", ["c1"], ["q1"], name="sig1"),
        helper.make_node("Conv", ["q1", "w2"], ["c2"], name="k2"),
        helper.make_node("Relu", ["c2"], ["q2"], name="relu2"),
        helper.make_node("Conv", ["q2", "w3"], ["c3"], name="k3"),
        helper.make_node("Relu", ["c3"], ["q3"], name="relu3"),
        helper.make_node("Conv", ["q3", "w4"], ["y1"], name="k4"),
        helper.make_node("Conv", ["q3", "w5"], ["y2"], name="k5"),
    ]
    inits = [const("w%d" % i, w) for i, w in enumerate(ws)] + [const("lo", 0.0), const("hi", 6.0)]
    save(os.path.join(d, "cle_blocked.onnx"), nodes, inits, [("x", [1, 3, 7, 7])], ["y1", "y2", "q2"])


def shared(d):
    # s1 -> Relu -> s2 where s1's weight and bias are also read by s3; and
    # t1 -> Relu -> t2 reading one weight (with transB on both, layer 1's
    # rows face layer 2's columns)
    w, b, w2, b2, v = rand(16, 16), rand(16), rand(16, 8), rand(8), rand(16, 16)
    w[5] *= 100.0
    b[5] *= 100.0
    w2[5] /= 100.0
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="s1", transB=1),
        helper.make_node("Relu", ["h"], ["a"], name="a"),
        helper.make_node("Gemm", ["a", "w2", "b2"], ["y"], name="s2"),
        helper.make_node("Gemm", ["x", "w", "b"], ["z"], name="s3", transB=1),
        helper.make_node("Gemm", ["x", "v"], ["p"], name="t1", transB=1),
        helper.make_node("Relu", ["p"], ["q"], name="q"),
        helper.make_node("Gemm", ["q", "v"], ["u"], name="t2", transB=1),
    ]
    inits = [const(n, a) for n, a in [("w", w), ("b", b), ("w2", w2), ("b2", b2), ("v", v)]]
    save(os.path.join(d, "cle_shared.onnx"), nodes, inits, [("x", [4, 16])], ["y", "z", "u"])


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "build/cle"
    os.makedirs(d, exist_ok=True)
    for f in (conv_chain, groups, gemm, matmul3d, conv1d, blocked, shared):
        f(d)


if __name__ == "__main__":
    main()
