#!/usr/bin/env python3
"""MaxPool models for test/pool/run.sh: 2-D float32 MaxPool in NCHW of the
shapes the x86 max-pool template (lower/tpl_pool.c) takes and of some it
leaves to the generic schedule: 3x3 stride 2 with and without padding,
ceil_mode, stride 1, 2x2 stride 2, a 5x5 window, asymmetric pads, a batch
of two, planes narrower than a vector, a dilated window, a fused Relu
after the pool and a pool with Indices. Each input holds NaN of several
payloads and both signs, -inf, +inf, +0 and -0 and repeated values (ties),
so that the results are only byte-identical when the reduction keeps
tvmrt_maxf's rule and the order of the window; a second input
NAME.fast.in.bin has no NaN and no +inf (the template's faster path). The blk_* models put a
conv before the pool so that the x86 targets lay it out in channel blocks.
Each model NAME.onnx comes with NAME.in.bin (the input's bytes; the blk_*
models also NAME.in2.bin, their second input).

    gen.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def special_input(shape, seed, nan=True):
    """Values in steps of 0.5 (many ties), +0 and -0, and about 2% each of
    +inf, -inf and NaNs with distinct payloads and signs; without nan, no
    NaN and no +inf (the template's path for data without NaN, which
    +inf next to the -inf padding would also leave)."""
    rng = np.random.default_rng(seed)
    x = (rng.integers(-6, 7, shape) * 0.5).astype(np.float32)
    bits = x.view(np.uint32)
    u = rng.random(shape)
    bits[u < 0.10] = 0x80000000  # -0
    bits[(u >= 0.10) & (u < 0.15)] = 0  # +0
    x[(u >= 0.15) & (u < 0.17)] = np.inf if nan else 7.0
    x[(u >= 0.17) & (u < 0.19)] = -np.inf
    where = (u >= 0.19) & (u < 0.21)
    payload = rng.integers(1, 1 << 22, shape).astype(np.uint32)
    sign = rng.integers(0, 2, shape).astype(np.uint32) << 31
    if nan:
        bits[where] = (0x7fc00000 | payload | sign)[where]
    # a plane of -inf only: windows that see nothing else
    if shape[1] > 1:
        x[0, 1] = -np.inf
    return x


def model(outdir, name, shape, seed=1, relu=False, indices=False, **attrs):
    n, c, h, w = shape
    outs = ["y", "idx"] if indices else ["y"]
    nodes = [helper.make_node("MaxPool", ["x"], ["p" if relu else "y"] + outs[1:], name="pool", **attrs)]
    if relu:
        nodes.append(helper.make_node("Relu", ["p"], ["y"], name="relu"))
    outputs = [helper.make_tensor_value_info("y", F, None)]
    if indices:
        outputs.append(helper.make_tensor_value_info("idx", TensorProto.INT64, None))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, list(shape))], outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(outdir, name + ".onnx"))
    special_input(shape, seed).tofile(os.path.join(outdir, name + ".in.bin"))
    special_input(shape, seed, nan=False).tofile(os.path.join(outdir, name + ".fast.in.bin"))


def model_blocked(outdir, name, shape, seed=1, **attrs):
    """x * Conv(z, 0, 1) then MaxPool: the conv (of the second input z,
    all ones, zero weights and a bias of one: exactly 1) makes the x86
    targets block the graph (NCHW8c / NCHW16c, passes/layout.c), so the
    pool takes the blocked template; x times 1 keeps every bit of x. The
    pool's output is both an output and a Relu's input, so no layout
    transform joins the pool's kernel as a second stage."""
    n, c, h, w = shape
    W = numpy_helper.from_array(np.zeros((c, c, 1, 1), np.float32), "w")
    B = numpy_helper.from_array(np.ones(c, np.float32), "b")
    nodes = [helper.make_node("Conv", ["z", "w", "b"], ["one"], name="conv", kernel_shape=[1, 1]),

             helper.make_node("Mul", ["x", "one"], ["xb"], name="mul"),
             helper.make_node("MaxPool", ["xb"], ["y"], name="pool", **attrs),
             helper.make_node("Relu", ["y"], ["y2"], name="relu")]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, list(shape)),
                                        helper.make_tensor_value_info("z", F, list(shape))],
                          [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("y2", F, None)],
                          [W, B])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(outdir, name + ".onnx"))
    special_input(shape, seed).tofile(os.path.join(outdir, name + ".in.bin"))
    special_input(shape, seed, nan=False).tofile(os.path.join(outdir, name + ".fast.in.bin"))
    np.ones(shape, np.float32).tofile(os.path.join(outdir, name + ".in2.bin"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # shufflenet_v2 / resnext50's first pool, smaller
    model(out, "k3s2p1", (1, 5, 38, 38), 1, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    model(out, "k3s2p1_odd", (1, 3, 37, 41), 2, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    # squeezenet1_1's: no padding, ceil_mode
    model(out, "k3s2_ceil", (1, 4, 29, 29), 3, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    model(out, "k3s2_ceil_even", (1, 4, 28, 30), 4, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    model(out, "k3s1p1_batch2", (2, 3, 19, 21), 5, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    model(out, "k2s2", (1, 3, 16, 16), 6, kernel_shape=[2, 2], strides=[2, 2])
    model(out, "k2s2_odd_ceil", (2, 2, 15, 17), 7, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    model(out, "k2s1", (1, 3, 12, 26), 8, kernel_shape=[2, 2], strides=[1, 1])
    model(out, "k5s1p2", (1, 2, 20, 23), 9, kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    model(out, "k3s2_asym", (1, 3, 22, 27), 10, kernel_shape=[3, 3], strides=[2, 2], pads=[0, 1, 2, 0])
    model(out, "k3s2p1_narrow", (1, 6, 7, 7), 11, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    model(out, "k3s1p1_narrow", (2, 4, 5, 6), 12, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    model(out, "k3s3", (1, 2, 25, 31), 13, kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1])
    model(out, "k3s2p1_relu", (1, 3, 30, 30), 14, relu=True, kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1])
    model(out, "k3s1_dil2", (1, 3, 20, 20), 15, kernel_shape=[3, 3], strides=[1, 1], dilations=[2, 2],
          pads=[2, 2, 2, 2])
    model(out, "k3s2_indices", (1, 3, 20, 20), 16, indices=True, kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1])
    model(out, "k3s2p1_wide", (1, 2, 9, 230), 17, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    # blocked layout: resnet18's pool, squeezenet1_1's, googlenet's 3x3 stride 1
    model_blocked(out, "blk_k3s2p1", (1, 32, 30, 30), 18, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    model_blocked(out, "blk_k3s2_ceil", (2, 16, 27, 27), 19, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    model_blocked(out, "blk_k3s1p1", (1, 16, 13, 13), 20, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    model_blocked(out, "blk_k2s2", (1, 16, 11, 9), 21, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    model_blocked(out, "blk_k3s2_asym_tall", (1, 16, 61, 7), 22, kernel_shape=[3, 3], strides=[2, 2],
                  pads=[2, 0, 1, 1])


if __name__ == "__main__":
    main()
