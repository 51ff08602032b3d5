#!/usr/bin/python3
"""The float models of the QDQ suite and their quantized variants.

    gen_models.py OUT_DIR [--torchvision] [-k SUBSTRING] [--list] [--float-only]

Writes OUT_DIR/float/NAME.onnx (the float models) and, for every variant
of the suite, OUT_DIR/NAME.VARIANT.onnx (quantized by test/qdq/quantize.py)
with OUT_DIR/NAME.VARIANT.json: the inputs (name, dtype, shape, the
distribution and range the calibration drew them from; test/qdq/run.py
draws its inputs from the same) and the quantize.py arguments.

Float models: small per-operator models built with onnx.helper (below),
the bench/arm models (dscnn, mobilenet, resnet8, autoencoder, from
bench/arm/gen_models.py) and, with --torchvision, resnet18 and
mobilenet_v2 from torchvision (random weights, seed 0, exported at opset
13; large, for the x86 bench).

Variants (quantize.py options):
  s8    --activations int8 (per-channel weights): every model
  u8    --activations uint8: a subset
  pt    --per-tensor: a subset
  fuse  --fuse-relu: the models with a Relu or Clip after a conv/gemm/add
  qop   --format qoperator: the models whose operators have a QOperator form
  s16   --activations int16 (com.microsoft Q/DQ): two small models
"""
import argparse
import hashlib
import importlib.util
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import quantize  # noqa: E402

F = TensorProto.FLOAT


class G:
    """A graph under construction."""

    def __init__(self, name, seed=7, opset=13):
        self.name = name
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.n = 0
        self.ranges = {}

    def inp(self, name, shape, dtype=F, rng=None):
        self.inputs.append(helper.make_tensor_value_info(name, dtype, shape))
        if rng is not None:
            self.ranges[name] = rng
        return name

    def const(self, array, prefix="c"):
        self.n += 1
        name = "%s%d" % (prefix, self.n)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def w(self, shape, std):
        return self.const(self.rng.normal(0, std, shape).astype(np.float32), "w")

    def op(self, op, inputs, n_out=1, **attrs):
        self.n += 1
        outs = ["%s_%d" % (op.lower(), self.n) + ("" if n_out == 1 else "_%d" % k)
                for k in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name="%s_%d" % (op, self.n), **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k=3, stride=1, group=1, pad=None, bias=True, std=None):
        pad = (k - 1) // 2 if pad is None else pad
        std = std or (2.0 / (cin // group * k * k)) ** 0.5
        ins = [x, self.w((cout, cin // group, k, k), std)]
        if bias:
            ins.append(self.const(self.rng.normal(0, 0.1, cout).astype(np.float32), "b"))
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=group)

    def gemm(self, x, nin, nout, trans_b=True):
        shape = (nout, nin) if trans_b else (nin, nout)
        w = self.w(shape, (2.0 / nin) ** 0.5)
        b = self.const(self.rng.normal(0, 0.1, nout).astype(np.float32), "b")
        return self.op("Gemm", [x, w, b], transB=1 if trans_b else 0)

    def out(self, *names):
        self.outputs = list(names)

    def model(self):
        outs = [helper.make_tensor_value_info(o, F, None) for o in self.outputs]
        g = helper.make_graph(self.nodes, self.name, self.inputs, outs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="tvmcc-test-qdq")
        m.ir_version = 7
        m = onnx.shape_inference.infer_shapes(m)
        # the outputs with their inferred shapes
        vis = {v.name: v for v in m.graph.value_info}
        for o in m.graph.output:
            if o.name in vis:
                o.CopyFrom(vis[o.name])
        onnx.checker.check_model(m)
        return m


def i64(v):
    return np.asarray(v, np.int64)


# ------------------------------------------------------- per-operator models

def small_models():
    out = {}

    def add(g):
        out[g.name] = g

    g = G("conv3x3")
    g.out(g.conv(g.inp("x", [1, 8, 16, 16]), 8, 16))
    add(g)
    g = G("conv_stride2")
    g.out(g.conv(g.inp("x", [1, 8, 15, 15]), 8, 16, stride=2))
    add(g)
    g = G("conv_dw")
    g.out(g.conv(g.inp("x", [1, 16, 12, 12]), 16, 16, group=16))
    add(g)
    g = G("conv1x1")
    g.out(g.conv(g.inp("x", [1, 16, 8, 8]), 16, 32, k=1))
    add(g)
    # the Cortex-M DSP tile's edges (lower/tpl_qconv_m4.c): an odd channel
    # count (a half-empty last pair), an odd number of 4-point groups
    # (K = 12*9 = 108: 27 groups), 56 positions (a last tile of 2); and a
    # first conv of 3 channels (K = 27: single-value im2col, one zero point
    # of padding in the last group) with 40 output channels
    # (each followed by a 1x1 conv, so that its output stays int8 and the
    # kernel is the conv alone)
    g = G("conv_odd")
    g.out(g.conv(g.conv(g.inp("x", [1, 12, 7, 8]), 12, 35), 35, 8, k=1))
    add(g)
    g = G("conv_first3")
    g.out(g.conv(g.conv(g.inp("x", [1, 3, 11, 10]), 3, 40, stride=2), 40, 8, k=1))
    add(g)
    g = G("conv_relu")
    g.out(g.op("Relu", [g.conv(g.inp("x", [1, 8, 12, 12]), 8, 16)]))
    add(g)
    g = G("conv_clip6")
    c = g.conv(g.inp("x", [1, 8, 12, 12], rng=[-3, 3]), 8, 16)
    g.out(g.op("Clip", [c, g.const(np.float32(0)), g.const(np.float32(6))]))
    add(g)
    g = G("gemm")
    g.out(g.gemm(g.inp("x", [4, 64]), 64, 32))
    add(g)
    g = G("gemm_notrans")
    g.out(g.gemm(g.inp("x", [4, 48]), 48, 20, trans_b=False))
    add(g)
    g = G("gemm_relu")
    g.out(g.op("Relu", [g.gemm(g.inp("x", [2, 64]), 64, 32)]))
    add(g)
    g = G("matmul")
    g.out(g.op("MatMul", [g.inp("x", [2, 8, 32]), g.w((32, 24), 0.2)]))
    add(g)
    g = G("matmul_2act")
    g.out(g.op("MatMul", [g.inp("a", [2, 6, 16]), g.inp("b", [2, 16, 10], rng=[-2, 2])]))
    add(g)
    g = G("add_branches")
    x = g.inp("x", [1, 8, 10, 10])
    a = g.conv(x, 8, 8, std=0.1)
    b = g.conv(x, 8, 8, std=0.8)
    g.out(g.op("Add", [a, b]))
    add(g)
    g = G("add_relu")
    x = g.inp("x", [1, 8, 10, 10])
    g.out(g.op("Relu", [g.op("Add", [g.conv(x, 8, 8), g.inp("y", [1, 8, 10, 10], rng=[-2, 2])])]))
    add(g)
    g = G("mul")
    g.out(g.op("Mul", [g.inp("x", [1, 8, 8, 8]), g.inp("y", [1, 8, 8, 8], rng=[-4, 4])]))
    add(g)
    g = G("mul_const")
    g.out(g.op("Mul", [g.inp("x", [1, 8, 6, 6]),
                       g.const(np.linspace(-2, 3, 8, dtype=np.float32).reshape(1, 8, 1, 1))]))
    add(g)
    g = G("avgpool")
    g.out(g.op("AveragePool", [g.conv(g.inp("x", [1, 8, 16, 16]), 8, 8)], kernel_shape=[3, 3],
               strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0))
    add(g)
    g = G("gap")
    g.out(g.op("GlobalAveragePool", [g.conv(g.inp("x", [1, 8, 9, 9]), 8, 16)]))
    add(g)
    g = G("maxpool")
    g.out(g.op("MaxPool", [g.conv(g.inp("x", [1, 8, 16, 16]), 8, 8)], kernel_shape=[2, 2],
               strides=[2, 2]))
    add(g)
    g = G("concat")
    g.out(g.op("Concat", [g.inp("x", [1, 4, 6, 6]), g.inp("y", [1, 6, 6, 6], rng=[-3, 3]),
                          g.conv(g.inp("z", [1, 4, 6, 6]), 4, 4, std=1.5)], axis=1))
    add(g)
    g = G("reshape_chain")
    c = g.conv(g.inp("x", [1, 8, 4, 4]), 8, 8)
    r = g.op("Reshape", [c, g.const(i64([1, 8, 16]))])
    t = g.op("Transpose", [r], perm=[0, 2, 1])
    g.out(g.op("Reshape", [t, g.const(i64([1, 4, 4, 8]))]))
    add(g)
    g = G("flatten_gemm")
    c = g.conv(g.inp("x", [1, 4, 4, 4]), 4, 8)
    g.out(g.gemm(g.op("Flatten", [c], axis=1), 128, 10))
    add(g)
    g = G("squeeze_unsqueeze")
    c = g.conv(g.inp("x", [1, 8, 1, 6]), 8, 8)
    s = g.op("Squeeze", [c, g.const(i64([2]))])
    t = g.op("Transpose", [s], perm=[0, 2, 1])
    g.out(g.op("Unsqueeze", [t, g.const(i64([1]))]))
    add(g)
    for act, extra in [("Sigmoid", {}), ("Tanh", {}), ("HardSwish", {}),
                       ("LeakyRelu", {"alpha": 0.1})]:
        g = G(act.lower(), opset=14 if act == "HardSwish" else 13)
        g.out(g.op(act, [g.conv(g.inp("x", [1, 8, 8, 8], rng=[-2, 2]), 8, 8)], **extra))
        add(g)
    g = G("softmax")
    g.out(g.op("Softmax", [g.gemm(g.inp("x", [2, 32], rng=[-2, 2]), 32, 10)], axis=1))
    add(g)
    g = G("gather_embedding")
    emb = g.const(g.rng.normal(0, 0.5, (50, 16)).astype(np.float32), "emb")
    e = g.op("Gather", [emb, g.inp("ids", [1, 10], TensorProto.INT64)], axis=0)
    g.out(g.op("MatMul", [e, g.w((16, 8), 0.3)]))
    add(g)
    g = G("pad")
    c = g.conv(g.inp("x", [1, 4, 6, 6]), 4, 8)
    g.out(g.op("Pad", [c, g.const(i64([0, 0, 1, 2, 0, 0, 2, 1]))], mode="constant"))
    add(g)
    g = G("slice")
    c = g.conv(g.inp("x", [1, 8, 10, 10]), 8, 8)
    g.out(g.op("Slice", [c, g.const(i64([1, 2])), g.const(i64([7, 9])), g.const(i64([1, 3])),
                         g.const(i64([2, 2]))]))
    add(g)
    g = G("split")
    c = g.conv(g.inp("x", [1, 8, 6, 6]), 8, 12)
    a, b = g.op("Split", [c, g.const(i64([4, 8]))], n_out=2, axis=1)
    g.out(a, b)
    add(g)
    g = G("resize_nearest")
    c = g.conv(g.inp("x", [1, 4, 5, 5]), 4, 8)
    g.out(g.op("Resize", [c, "", g.const(np.asarray([1, 1, 2, 2], np.float32))],
               mode="nearest"))
    add(g)
    g = G("small_cnn")
    x = g.inp("x", [1, 3, 16, 16])
    x = g.op("Relu", [g.conv(x, 3, 8)])
    x = g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = g.op("Clip", [g.conv(x, 8, 16, stride=2), g.const(np.float32(0)), g.const(np.float32(6))])
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    g.out(g.op("Softmax", [g.gemm(x, 16, 10)], axis=1))
    add(g)
    return out


# ------------------------------------------------------------------ others

def arm_models():
    spec = importlib.util.spec_from_file_location(
        "bench_arm_gen_models", os.path.join(ROOT, "bench", "arm", "gen_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {name: getattr(mod, name) for name in ("dscnn", "mobilenet", "resnet8", "autoencoder")}


def torchvision_model(name, path):
    import torch
    import torchvision
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.zeros(1, 3, 224, 224)
    torch.onnx.export(net, x, path, opset_version=13, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)


SMALL_U8 = ["conv3x3", "conv_odd", "conv_first3", "conv_dw", "gemm", "matmul", "add_branches", "concat", "avgpool",
            "sigmoid", "softmax", "gather_embedding", "small_cnn"]
SMALL_PT = ["conv3x3", "conv_dw", "conv1x1", "gemm", "gemm_notrans", "matmul", "flatten_gemm"]
SMALL_FUSE = ["conv_relu", "conv_clip6", "gemm_relu", "add_relu", "small_cnn"]
SMALL_QOP = ["conv3x3", "gemm", "matmul", "add_branches", "mul", "avgpool", "gap", "concat",
             "sigmoid", "leakyrelu", "softmax", "maxpool", "reshape_chain", "small_cnn"]
VARIANTS = {
    "s8": [],
    "u8": ["--activations", "uint8"],
    "pt": ["--per-tensor"],
    "fuse": ["--fuse-relu"],
    "qop": ["--format", "qoperator"],
    "s16": ["--activations", "int16"],
}


def plan(torchvision):
    """[(float model name, variant)]"""
    small = list(small_models())
    arm = ["dscnn", "mobilenet", "resnet8", "autoencoder"]
    items = [(m, "s8") for m in small + arm]
    items += [(m, "u8") for m in SMALL_U8 + ["dscnn", "resnet8"]]
    items += [(m, "pt") for m in SMALL_PT + ["dscnn", "resnet8"]]
    items += [(m, "fuse") for m in SMALL_FUSE + ["dscnn", "resnet8", "mobilenet", "autoencoder"]]
    items += [(m, "qop") for m in SMALL_QOP + ["dscnn", "resnet8"]]
    items += [(m, "s16") for m in ["conv3x3", "gemm"]]
    if torchvision:
        for m in ["resnet18", "mobilenet_v2"]:
            items += [(m, "s8"), (m, "u8"), (m, "qop")]
    return items


def file_digest(*paths):
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--torchvision", action="store_true")
    ap.add_argument("-k", default="", help="only models whose NAME.VARIANT contains this")
    ap.add_argument("--list", action="store_true", help="print NAME.VARIANT of the plan")
    ap.add_argument("--float-only", action="store_true",
                    help="write the float models only (test/quantize/run.sh)")
    args = ap.parse_args()
    items = [it for it in plan(args.torchvision) if args.k in "%s.%s" % it]
    if args.list:
        for m, v in items:
            print("%s.%s" % (m, v))
        return 0
    fdir = os.path.join(args.out, "float")
    os.makedirs(fdir, exist_ok=True)
    small = small_models()
    arm = arm_models()
    tool = file_digest(__file__, quantize.__file__, os.path.join(HERE, "calib.js"),
                       os.path.join(ROOT, "bench", "arm", "gen_models.py"))
    written = 0
    for name in sorted({m for m, _ in items}):
        path = os.path.join(fdir, name + ".onnx")
        if name in small:
            onnx.save(small[name].model(), path)
        elif name in arm:
            onnx.save(arm[name](), path)
        elif not os.path.exists(path):
            torchvision_model(name, path)
    if args.float_only:
        print("%d float models in %s" % (len({m for m, _ in items}), fdir))
        return 0
    for m, v in items:
        base = os.path.join(args.out, "%s.%s" % (m, v))
        fpath = os.path.join(fdir, m + ".onnx")
        qargs = [fpath, base + ".onnx"] + VARIANTS[v] + ["--seed", "1"]
        ranges = small[m].ranges if m in small else {}
        for name, (lo, hi) in sorted(ranges.items()):
            qargs += ["--input-range", "%s=%g,%g" % (name, lo, hi)]
        stamp = tool + ":" + file_digest(fpath) + ":" + " ".join(qargs[2:])
        meta_path = base + ".json"
        if os.path.exists(meta_path) and os.path.exists(base + ".onnx"):
            with open(meta_path) as f:
                if json.load(f).get("stamp") == stamp:
                    continue
        specs = quantize.main(qargs)
        with open(meta_path, "w") as f:
            json.dump({"model": "%s.%s" % (m, v), "float": fpath, "args": qargs[2:],
                       "inputs": specs, "stamp": stamp}, f, indent=1, sort_keys=True)
            f.write("\n")
        written += 1
        print("wrote %s.%s" % (m, v), flush=True)
    print("%d models (%d written, the others up to date) in %s" % (len(items), written, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
