#!/usr/bin/env python3
"""MLPerf-Tiny-style fp32 models for bench/arm, written with onnx.helper.

    gen_models.py OUT_DIR [NAME...]

Writes OUT_DIR/NAME.onnx for each NAME (default: all four). The
architectures follow the MLPerf Tiny v1.0 reference models; weights are
random (numpy seed 1234 per model), so only the shapes and the operator mix
matter. Batch normalisation is left out: the compiler folds it into the
preceding convolution, and random weights make it meaningless here.

  dscnn       keyword spotting, DS-CNN: input [1,1,49,10] (MFCC); conv 64
              10x4 stride 2; 4 x (depthwise 3x3 + pointwise 64); average
              pool; FC 12; softmax.
  mobilenet   visual wake words, MobileNetV1 alpha 0.25 at 96x96x3; 13
              depthwise separable blocks; average pool; FC 2; softmax.
  resnet8     image classification, ResNet-8 on 32x32x3: conv 16, three
              residual stages (16, 32/2, 64/2) with 1x1 projection
              shortcuts where the shape changes; average pool; FC 10.
  autoencoder anomaly detection, dense autoencoder: 640 -> 4 x 128 -> 8 ->
              4 x 128 -> 640, ReLU between layers.
  int8cnn     (not in the default set) an 8-bit quantized CNN for the
              integer kernels: input [1,16,32,32] float, QuantizeLinear to
              uint8; QLinearConv 16->32 3x3; QLinearConv 32->32 3x3 stride
              2; QLinearConv 32->64 1x1 (int8 weights, int32 bias);
              QLinearMatMul of the flattened 64x16x16 features by 16384x10
              (in 4 rows of 4096); DequantizeLinear to float.
  convint     (not in the default set) the integer contraction alone:
              input [1,32,32,32] float, QuantizeLinear to uint8,
              ConvInteger 32->32 3x3 (int8 weights), Cast to float.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    """Accumulates nodes and initializers of one graph."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, prefix):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    def const(self, shape, scale):
        n = self.name("w")
        self.inits.append(numpy_helper.from_array(
            self.rng.normal(0, scale, shape).astype(np.float32), n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower() + "_")
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1, relu=True, pad=None):
        kh, kw = (k, k) if isinstance(k, int) else k
        if pad is None:
            pad = [(kh - 1) // 2, (kw - 1) // 2, kh // 2, kw // 2]
        fan_in = cin // group * kh * kw
        w = self.const((cout, cin // group, kh, kw), (2.0 / fan_in) ** 0.5)
        b = self.const((cout,), 0.05)
        y = self.node("Conv", [x, w, b], kernel_shape=[kh, kw], strides=[stride, stride],
                      pads=pad, group=group)
        return self.node("Relu", [y]) if relu else y

    def dense(self, x, nin, nout, relu=True):
        w = self.const((nout, nin), (2.0 / nin) ** 0.5)
        b = self.const((nout,), 0.05)
        y = self.node("Gemm", [x, w, b], transB=1)
        return self.node("Relu", [y]) if relu else y

    def model(self, name, in_shape, x, y, out_shape):
        g = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, in_shape)],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="tvmcc-bench-arm")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def head(b, x, c, classes):
    """Global average pool, flatten, FC, softmax."""
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    x = b.dense(x, c, classes, relu=False)
    return b.node("Softmax", [x], axis=1)


def dscnn():
    b = Builder(1234)
    # 49x10 input, 10x4 kernel, stride 2, "same" padding -> 25x5x64.
    x = b.conv("input", 1, 64, (10, 4), stride=2, pad=[4, 1, 5, 2])
    for _ in range(4):
        x = b.conv(x, 64, 64, 3, group=64)
        x = b.conv(x, 64, 64, 1)
    return b.model("dscnn", [1, 1, 49, 10], "input", head(b, x, 64, 12), [1, 12])


def mobilenet():
    b = Builder(1234)
    x = b.conv("input", 3, 8, 3, stride=2, pad=[0, 0, 1, 1])
    cin = 8
    # (output channels, stride) of the 13 blocks at alpha 0.25.
    for cout, s in [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1),
                    (128, 1), (128, 1), (128, 1), (128, 1), (256, 2), (256, 1)]:
        pad = [0, 0, 1, 1] if s == 2 else [1, 1, 1, 1]
        x = b.conv(x, cin, cin, 3, stride=s, group=cin, pad=pad)
        x = b.conv(x, cin, cout, 1)
        cin = cout
    return b.model("mobilenet", [1, 3, 96, 96], "input", head(b, x, 256, 2), [1, 2])


def resnet8():
    b = Builder(1234)
    x = b.conv("input", 3, 16, 3)
    cin = 16
    for cout, s in [(16, 1), (32, 2), (64, 2)]:
        pad = [0, 0, 1, 1] if s == 2 else [1, 1, 1, 1]
        y = b.conv(x, cin, cout, 3, stride=s, pad=pad)
        y = b.conv(y, cout, cout, 3, relu=False)
        if s != 1 or cin != cout:
            x = b.conv(x, cin, cout, 1, stride=s, relu=False, pad=[0, 0, 0, 0])
        x = b.node("Relu", [b.node("Add", [x, y])])
        cin = cout
    return b.model("resnet8", [1, 3, 32, 32], "input", head(b, x, 64, 10), [1, 10])


def autoencoder():
    b = Builder(1234)
    x, n = "input", 640
    for width in [128, 128, 128, 128, 8, 128, 128, 128, 128]:
        x = b.dense(x, n, width)
        n = width
    y = b.dense(x, n, 640, relu=False)
    return b.model("autoencoder", [1, 640], "input", y, [1, 640])


def int8cnn():
    b = Builder(1234)

    def scalar(value, dtype):
        n = b.name("q")
        b.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), n))
        return n

    def tensor(array):
        n = b.name("q")
        b.inits.append(numpy_helper.from_array(array, n))
        return n

    def qconv(x, xs, cin, cout, k, stride):
        w = tensor(b.rng.integers(-127, 128, (cout, cin, k, k)).astype(np.int8))
        bias = tensor(b.rng.integers(-2000, 2000, (cout,)).astype(np.int32))
        # output scale: about the spread of a sum of cin*k*k random products
        ys = xs * 0.02 * 60.0 * (cin * k * k) ** 0.5 / 128.0
        y = b.node("QLinearConv", [x, scalar(xs, np.float32), scalar(128, np.uint8), w,
                                   scalar(0.02, np.float32), scalar(0, np.int8), scalar(ys, np.float32),
                                   scalar(128, np.uint8), bias],
                   kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4)
        return y, ys

    x = b.node("QuantizeLinear", ["input", scalar(1.0 / 100.0, np.float32), scalar(128, np.uint8)])
    x, s = qconv(x, 1.0 / 100.0, 16, 32, 3, 1)
    x, s = qconv(x, s, 32, 32, 3, 2)
    x, s = qconv(x, s, 32, 64, 1, 1)
    x = b.node("Reshape", [x, tensor(np.array([4, 4096], dtype=np.int64))])
    w = tensor(b.rng.integers(0, 256, (4096, 10)).astype(np.uint8))
    ys = s * 0.02 * 60.0 * 64.0 / 128.0
    y = b.node("QLinearMatMul", [x, scalar(s, np.float32), scalar(128, np.uint8), w,
                                 scalar(0.02, np.float32), scalar(128, np.uint8),
                                 scalar(ys, np.float32), scalar(128, np.uint8)])
    y = b.node("DequantizeLinear", [y, scalar(ys, np.float32), scalar(128, np.uint8)])
    return b.model("int8cnn", [1, 16, 32, 32], "input", y, [4, 10])


def convint():
    b = Builder(1234)
    zp = b.name("q")
    b.inits.append(numpy_helper.from_array(np.array(128, dtype=np.uint8), zp))
    sc = b.name("q")
    b.inits.append(numpy_helper.from_array(np.array(0.01, dtype=np.float32), sc))
    w = b.name("q")
    b.inits.append(numpy_helper.from_array(
        b.rng.integers(-127, 128, (32, 32, 3, 3)).astype(np.int8), w))
    x = b.node("QuantizeLinear", ["input", sc, zp])
    y = b.node("ConvInteger", [x, w, zp], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    y = b.node("Cast", [y], to=TensorProto.FLOAT)
    return b.model("convint", [1, 32, 32, 32], "input", y, [1, 32, 32, 32])


MODELS = {"dscnn": dscnn, "mobilenet": mobilenet, "resnet8": resnet8,
          "autoencoder": autoencoder, "int8cnn": int8cnn,
          "convint": convint}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or [m for m in MODELS if m not in ("int8cnn", "convint")]:
        onnx.save(MODELS[name](), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
