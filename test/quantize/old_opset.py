#!/usr/bin/python3
"""Float models at opsets below 13, for test/quantize/run.sh: tvmcc quantize
writes them at opset 13, with the attributes that became inputs (Clip 11,
Slice 10, Pad 11, Squeeze/Unsqueeze/Split/ReduceSum 13) as constant inputs.

    old_opset.py OUT_DIR

Writes OUT_DIR/opset9.onnx (Conv, Clip with min/max attributes, Pad and
Slice with attributes, a division by a constant, Unsqueeze/Squeeze with
axes attributes, Softmax over the last axis) and OUT_DIR/opset11.onnx
(Split and ReduceSum with attributes, Clip with inputs, Concat, Max with a
scalar constant, which becomes Clip), and OUT_DIR/hardswish.onnx (opset 13:
x * Clip(x + 3, 0, 6) / 6 between two convs, which becomes HardSwish) and
OUT_DIR/affine.onnx (a depthwise Conv followed by Mul and Add by per-channel
constants, folded into the Conv) and OUT_DIR/clip_offset.onnx (a Conv
followed by Clip(0.5, 6): the QuantizeLinear's range, widened to hold 0,
would not clamp below 0.5, so the Clip stays a node) and
OUT_DIR/dead_channel.onnx (a Conv with an output channel of near-zero
weights and a bias of 3: its int32 bias must not saturate) and
OUT_DIR/convtranspose.onnx (a ConvTranspose with a bias, and a grouped one
without, between quantized Convs: computed in float, with weights that
onnxruntime would quantize itself if they were left float).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def init(name, a):
    return numpy_helper.from_array(np.asarray(a, np.float32), name)


def opset9(rng):
    w = rng.normal(0, 0.3, (8, 3, 3, 3))
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c"], ["r"], min=0.0, max=6.0),
        helper.make_node("Pad", ["r"], ["p"], pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.0),
        helper.make_node("Slice", ["p"], ["s"], starts=[1, 1], ends=[9, 9], axes=[2, 3]),
        helper.make_node("Div", ["s", "six"], ["d"]),
        helper.make_node("GlobalAveragePool", ["d"], ["g"]),
        helper.make_node("Squeeze", ["g"], ["q"], axes=[2, 3]),
        helper.make_node("Unsqueeze", ["q"], ["u"], axes=[1]),
        helper.make_node("Squeeze", ["u"], ["v"], axes=[1]),
        helper.make_node("Softmax", ["v"], ["y"], axis=1),
    ]
    g = helper.make_graph(nodes, "opset9", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", F, [1, 8])],
                          [init("w", w), init("b", rng.normal(0, 0.1, 8)), init("six", 6.0)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 4
    return m


def opset11(rng):
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c", "lo", "hi"], ["r"]),
        helper.make_node("Split", ["r"], ["a", "b"], axis=1, split=[3, 5]),
        helper.make_node("ReduceSum", ["a"], ["sa"], axes=[1], keepdims=1),
        helper.make_node("Concat", ["sa", "b"], ["cat"], axis=1),
        helper.make_node("Max", ["cat", "floor"], ["y"]),
    ]
    g = helper.make_graph(nodes, "opset11", [helper.make_tensor_value_info("x", F, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", F, [1, 6, 6, 6])],
                          [init("w", rng.normal(0, 0.3, (8, 4, 3, 3))), init("lo", -1.0),
                           init("hi", 1.5), init("floor", [-0.5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 6
    return m


def hardswish(rng):
    """x * Clip(x + 3, 0, 6) / 6 between two convs, as PaddleOCR's exports
    write hard-swish (tvmcc quantize makes it one HardSwish, opset 14)."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "three"], ["a"]),
        helper.make_node("Clip", ["a", "zero", "six"], ["r"]),
        helper.make_node("Mul", ["c", "r"], ["m"]),
        helper.make_node("Div", ["m", "six"], ["h"]),
        helper.make_node("Conv", ["h", "w2"], ["y"]),
    ]
    g = helper.make_graph(nodes, "hardswish",
                          [helper.make_tensor_value_info("x", F, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 6, 6])],
                          [init("w", rng.normal(0, 1.0, (8, 4, 3, 3))),
                           init("w2", rng.normal(0, 0.3, (4, 8, 1, 1))), init("three", 3.0),
                           init("zero", 0.0), init("six", 6.0)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def affine(rng):
    """BatchNormalization written as Mul and Add by per-channel constants
    after a Conv (PaddlePaddle's exporter): tvmcc quantize folds both into
    the Conv's weights and bias."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], group=4),
        helper.make_node("Mul", ["c", "gamma"], ["m"]),
        helper.make_node("Add", ["m", "beta"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["y"]),
    ]
    g = helper.make_graph(nodes, "affine", [helper.make_tensor_value_info("x", F, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 6, 6])],
                          [init("w", rng.normal(0, 1.0, (4, 1, 3, 3))),
                           init("gamma", rng.uniform(0.01, 5.0, (1, 4, 1, 1))),
                           init("beta", rng.normal(0, 1.0, (4, 1, 1))),
                           init("w2", rng.normal(0, 0.3, (4, 4, 1, 1)))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def clip_offset(rng):
    """Conv -> Clip(0.5, 6) -> Conv: a clamp whose range does not hold 0
    cannot be folded into the QuantizeLinear after the first Conv."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c", "lo", "hi"], ["k"]),
        helper.make_node("Conv", ["k", "w2"], ["y"]),
    ]
    g = helper.make_graph(nodes, "clip_offset",
                          [helper.make_tensor_value_info("x", F, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 6, 6])],
                          [init("w", rng.normal(0, 0.5, (4, 4, 3, 3))), init("lo", 0.5),
                           init("hi", 6.0), init("w2", rng.normal(0, 0.3, (4, 4, 1, 1)))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def dead_channel(rng):
    """Conv whose channel 2 has weights of 1e-9 and a bias of 3: at scale
    x_scale * w_scale the int32 bias would be about 1e13."""
    w = rng.normal(0, 0.5, (4, 4, 3, 3))
    w[2] = 1e-9
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "dead_channel",
                          [helper.make_tensor_value_info("x", F, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 6, 6])],
                          [init("w", w), init("b", [0.1, -0.2, 3.0, 0.5])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def convtranspose(rng):
    """Conv -> Relu -> ConvTranspose (bias) -> Conv -> ConvTranspose (2
    groups) -> Conv: tvmcc quantize has no integer ConvTranspose, so both
    stay float between Q/DQ pairs; onnxruntime would quantize their float
    weights per tensor to int8 (its WeightBiasQuantization) unless they
    are written quantized."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("ConvTranspose", ["r", "wt", "bt"], ["t"], strides=[2, 2],
                         kernel_shape=[2, 2]),
        helper.make_node("Conv", ["t", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("ConvTranspose", ["c2", "wt2"], ["t2"], strides=[2, 2],
                         kernel_shape=[2, 2], group=2),
        helper.make_node("Conv", ["t2", "w3"], ["y"]),
    ]
    # weights of very different sizes per output channel: one scale for all
    # of them (onnxruntime's own quantization) would lose the small ones
    wt = rng.normal(0, 0.5, (8, 6, 2, 2)) * np.array([1, 0.02, 1, 0.05, 1, 1])[None, :, None, None]
    g = helper.make_graph(nodes, "convtranspose",
                          [helper.make_tensor_value_info("x", F, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 24, 24])],
                          [init("w", rng.normal(0, 0.5, (8, 4, 3, 3))), init("wt", wt),
                           init("bt", rng.normal(0, 0.5, 6)),
                           init("w2", rng.normal(0, 0.3, (4, 6, 3, 3))),
                           init("wt2", rng.normal(0, 0.5, (4, 2, 2, 2))),
                           init("w3", rng.normal(0, 0.3, (4, 4, 1, 1)))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    for name, fn in (("opset9", opset9), ("opset11", opset11), ("hardswish", hardswish),
                     ("affine", affine), ("clip_offset", clip_offset),
                     ("dead_channel", dead_channel), ("convtranspose", convtranspose)):
        m = fn(rng)
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
