#!/usr/bin/env python3
"""QDQ models for test/x86dw/run.sh: depthwise convs (3x3 and 5x5, strides 1
and 2, with and without padding, channel counts and widths around the
vector widths, int8 and uint8 activations, per-channel weights, with and
without a Relu6 between Q/DQ pairs), 1x1 convs with a residual Add (channel
counts multiples of 4 and not), and a QuantizeLinear of inputs holding NaN,
infinities, out-of-range values and halves. Each model NAME.onnx comes with
NAME.in.bin (the float input's bytes).

    gen.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


class G:
    def __init__(self, name, seed):
        self.name, self.rng = name, np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, a):
        self.n += 1
        name = "c%d" % self.n
        self.inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def op(self, op, ins, **attrs):
        self.n += 1
        out = "%s_%d" % (op.lower(), self.n)
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def qdq(self, x, scale, zp, u8, last=False):
        """x quantized and dequantized; last: only quantized (the 8-bit
        graph output)"""
        z = self.const(np.asarray(zp, np.uint8 if u8 else np.int8))
        s = self.const(np.float32(scale))
        q = self.op("QuantizeLinear", [x, s, z])
        return q if last else self.op("DequantizeLinear", [q, s, z])

    def conv(self, x, sx, cin, cout, k, stride, pad, group):
        """Conv on a DQ'd input of scale sx: per-channel int8 weights, int32 bias."""
        wf = self.rng.normal(0, 0.5, (cout, cin // group, k, k)).astype(np.float32)
        sw = (np.abs(wf).reshape(cout, -1).max(1) / 127).astype(np.float32)
        wq = np.clip(np.round(wf / sw[:, None, None, None]), -127, 127).astype(np.int8)
        w = self.op("DequantizeLinear", [self.const(wq), self.const(sw), self.const(np.zeros(cout, np.int8))],
                    axis=0)
        bs = (sx * sw).astype(np.float32)
        bq = self.rng.integers(-3000, 3000, cout).astype(np.int32)
        b = self.op("DequantizeLinear", [self.const(bq), self.const(bs), self.const(np.zeros(cout, np.int32))],
                    axis=0)
        return self.op("Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                       group=group)

    def save(self, out, shape, oshape, xin, odir, u8):
        ins = [helper.make_tensor_value_info("x", F, shape)]
        outs = [helper.make_tensor_value_info(out, TensorProto.UINT8 if u8 else TensorProto.INT8, oshape)]
        g = helper.make_graph(self.nodes, self.name, ins, outs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(odir, self.name + ".onnx"))
        xin.astype(np.float32).tofile(os.path.join(odir, self.name + ".in.bin"))


def dw_model(odir, name, seed, c, h, w, k, s, pad, u8, relu6):
    g = G(name, seed)
    zx = 120 if u8 else -5
    sx = 0.05
    x = g.qdq("x", sx, zx, u8)
    y = g.conv(x, sx, c, c, k, s, pad, c)
    y = g.qdq(y, 0.08, 128 if u8 else 3, u8, not relu6)
    if relu6:
        y = g.op("Clip", [y, g.const(np.float32(0)), g.const(np.float32(6))])
        y = g.qdq(y, 6 / 255.0, 0 if u8 else -128, u8, True)
    xin = g.rng.uniform(-6, 6, (1, c, h, w))
    g.save(y, [1, c, h, w], [1, c, (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1], xin, odir, u8)


def pw_model(odir, name, seed, c, h, w, u8):
    g = G(name, seed)
    sx = 0.04
    x = g.qdq("x", 0.05, 128 if u8 else 0, u8)
    # a 3x3 conv first: the 1x1 conv reads an 8-bit tensor of the arena
    x = g.qdq(g.conv(x, 0.05, c, c, 3, 1, 1, 1), sx, 128 if u8 else 0, u8)
    y = g.conv(x, sx, c, c, 1, 1, 0, 1)
    y = g.qdq(y, 0.07, 128 if u8 else 1, u8)
    y = g.qdq(g.op("Add", [y, x]), 0.1, 128 if u8 else -2, u8, True)
    xin = g.rng.uniform(-5, 5, (1, c, h, w))
    g.save(y, [1, c, h, w], [1, c, h, w], xin, odir, u8)


def quant_model(odir, name, u8):
    g = G(name, 3)
    y = g.qdq("x", 0.5, 7 if u8 else -3, u8, True)
    xin = g.rng.uniform(-80, 80, (1, 3, 16, 16)).astype(np.float32)
    special = [np.nan, np.inf, -np.inf, 3e9, -3e9, 1e30, -1e30, 2.25, 2.75, -2.25, -2.75, 0.25, -0.25,
               63.25, 63.75, -64.25, -64.75, 2147483648.0, -2147483648.0, 4294967296.0, -0.0]
    flat = xin.reshape(-1)
    flat[:len(special)] = special
    flat[100:100 + len(special)] = special
    g.save(y, [1, 3, 16, 16], [1, 3, 16, 16], xin, odir, u8)


def main():
    odir = sys.argv[1]
    os.makedirs(odir, exist_ok=True)
    n = 0
    cases = [
        # c, h, w, k, s, pad
        (5, 9, 7, 3, 1, 1), (17, 14, 14, 3, 1, 1), (3, 20, 19, 3, 2, 1), (7, 16, 33, 3, 1, 0),
        (6, 15, 45, 5, 2, 2), (9, 11, 23, 5, 1, 2), (4, 12, 40, 3, 2, 0), (2, 8, 70, 5, 1, 0),
        (11, 7, 16, 3, 2, 1), (2, 10, 17, 5, 2, 1),
    ]
    for i, (c, h, w, k, s, pad) in enumerate(cases):
        u8 = i % 3 == 2
        dw_model(odir, "dw_c%d_%dx%d_k%d_s%d_p%d_%s%s" % (c, h, w, k, s, pad, "u8" if u8 else "s8",
                                                        "_relu6" if i % 2 else ""),
                 100 + i, c, h, w, k, s, pad, u8, i % 2 == 1)
        n += 1
    for i, (c, h, w, u8) in enumerate([(8, 7, 9, False), (12, 10, 10, True), (20, 5, 13, False),
                                       (6, 9, 9, False)]):
        pw_model(odir, "pw_add_c%d_%dx%d_%s" % (c, h, w, "u8" if u8 else "s8"), 200 + i, c, h, w, u8)
        n += 1
    quant_model(odir, "quant_special_s8", False)
    quant_model(odir, "quant_special_u8", True)
    print("wrote %d models" % (n + 2))


if __name__ == "__main__":
    main()
