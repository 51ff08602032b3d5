#!/usr/bin/env python3
"""Transformer blocks end to end (issue 17): models built here with
onnx.helper, compiled by tvmcc for the host, run through test/driver.c and
compared with onnxruntime-node on the same inputs; then compiled for
Cortex-M4 and AArch64, whose C must build warning-free with the target's
compiler.

  gpt18          opset 18: LayerNormalization, multi-head attention written
                 out (MatMul, Transpose, Softmax, a causal mask), and Gelu as
                 its erf formula in ordinary operators
  gpt20          the same at opset 20 with the Gelu operator (tanh form)
  llama23        opset 23: RMSNormalization, RotaryEmbedding (3-D, position
                 ids) and a causal grouped-query Attention (3-D, 4 query heads
                 over 2 key/value heads), a SiLU-gated MLP
  llama24_cache  opset 24: 4-D Attention over a key/value cache (past_key /
                 past_value in, present_key / present_value out, a bool
                 mask), RotaryEmbedding interleaved on 4-D heads, Swish

Prints PASS/FAIL per model and target check and, last, "N passed, N failed".
"""
import argparse
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "test", "models"))
from caserun import run_cases, run  # noqa: E402

F = TensorProto.FLOAT
STRICT = ["-Wall", "-Wextra", "-Werror", "-pedantic", "-Wconversion", "-Wsign-conversion",
          "-Wdouble-promotion", "-Wshadow", "-Wvla"]
# the targets whose build is checked (name, compiler)
TARGETS = [("cortex-m4", "arm-none-eabi-gcc"), ("aarch64", "aarch64-linux-gnu-gcc")]


class Builder:
    """Nodes and initializers of one graph, with fresh names."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def const(self, arr, base="c"):
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def weight(self, *shape, scale=None):
        s = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        return self.const((self.rng.randn(*shape) * s).astype(np.float32), "w")

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def linear(self, x, d_in, d_out, bias=True):
        y = self.op("MatMul", [x, self.weight(d_in, d_out)])
        if bias:
            y = self.op("Add", [y, self.const((self.rng.randn(d_out) * 0.1).astype(np.float32))])
        return y

    def model(self, inputs, outputs, opset):
        g = helper.make_graph(self.nodes, "block", inputs, outputs, initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m


def gpt(opset, B=2, S=16, D=64, H=4):
    """Pre-norm GPT block; Gelu as ops before opset 20, the operator from 20."""
    b = Builder(18 + opset)
    hd = D // H
    x = "x"

    def ln(v):
        g = b.const((1 + 0.1 * b.rng.randn(D)).astype(np.float32))
        beta = b.const((0.1 * b.rng.randn(D)).astype(np.float32))
        return b.op("LayerNormalization", [v, g, beta], axis=-1, epsilon=1e-5)

    def heads(v, perm):
        r = b.op("Reshape", [v, b.const(np.array([B, S, H, hd], np.int64))])
        return b.op("Transpose", [r], perm=perm)

    h = ln(x)
    q = heads(b.linear(h, D, D), [0, 2, 1, 3])
    k = heads(b.linear(h, D, D), [0, 2, 3, 1])
    v = heads(b.linear(h, D, D), [0, 2, 1, 3])
    s = b.op("Mul", [b.op("MatMul", [q, k]), b.const(np.float32(1 / np.sqrt(hd)))])
    mask = np.triu(np.full((S, S), -1e9, np.float32), 1)
    p = b.op("Softmax", [b.op("Add", [s, b.const(mask)])], axis=-1)
    a = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    a = b.op("Reshape", [a, b.const(np.array([B, S, D], np.int64))])
    h1 = b.op("Add", [x, b.linear(a, D, D)])
    f = b.linear(ln(h1), D, 4 * D)
    if opset >= 20:
        f = b.op("Gelu", [f], approximate="tanh")
    else:  # 0.5 x (1 + erf(x / sqrt 2))
        e = b.op("Erf", [b.op("Div", [f, b.const(np.float32(np.sqrt(2)))])])
        f = b.op("Mul", [b.op("Mul", [f, b.op("Add", [e, b.const(np.float32(1))])]),
                         b.const(np.float32(0.5))])
    y = b.op("Add", [h1, b.linear(f, 4 * D, D)])
    b.nodes[-1].output[0] = "y"
    m = b.model([helper.make_tensor_value_info("x", F, [B, S, D])],
                [helper.make_tensor_value_info("y", F, [B, S, D])], opset)
    feeds = [b.rng.randn(B, S, D).astype(np.float32)]
    return m, feeds


def rope_cache(b, maxpos, half):
    inv = 1.0 / (10000 ** (np.arange(half) / half))
    ang = np.arange(maxpos)[:, None] * inv[None, :]
    return b.const(np.cos(ang).astype(np.float32)), b.const(np.sin(ang).astype(np.float32))


def llama23(B=2, S=16, D=64, HQ=4, HKV=2, FF=128):
    b = Builder(23)
    hd = D // HQ
    cos, sin = rope_cache(b, S + 16, hd // 2)

    def rms(v):
        w = b.const((1 + 0.1 * b.rng.randn(D)).astype(np.float32))
        return b.op("RMSNormalization", [v, w], axis=-1, epsilon=1e-5)

    h = rms("x")
    q = b.op("RotaryEmbedding", [b.linear(h, D, HQ * hd, False), cos, sin, "pos"], num_heads=HQ)
    k = b.op("RotaryEmbedding", [b.linear(h, D, HKV * hd, False), cos, sin, "pos"],
             num_heads=HKV)
    v = b.linear(h, D, HKV * hd, False)
    a = b.op("Attention", [q, k, v], q_num_heads=HQ, kv_num_heads=HKV, is_causal=1)
    h1 = b.op("Add", ["x", b.linear(a, HQ * hd, D, False)])
    n2 = rms(h1)
    gate = b.linear(n2, D, FF, False)
    act = b.op("Mul", [gate, b.op("Sigmoid", [gate])])
    m = b.op("Mul", [act, b.linear(n2, D, FF, False)])
    b.op("Add", [h1, b.linear(m, FF, D, False)])
    b.nodes[-1].output[0] = "y"
    model = b.model([helper.make_tensor_value_info("x", F, [B, S, D]),
                     helper.make_tensor_value_info("pos", TensorProto.INT64, [B, S])],
                    [helper.make_tensor_value_info("y", F, [B, S, D])], 23)
    pos = np.stack([np.arange(S), np.arange(S) + 3]).astype(np.int64)[:B]
    return model, [b.rng.randn(B, S, D).astype(np.float32), pos]


def llama24_cache(B=1, S=4, P=12, D=64, HQ=4, HKV=2, FF=128):
    b = Builder(24)
    hd = D // HQ
    T = P + S
    cos, sin = rope_cache(b, 32, hd // 2)

    def heads(v, n):
        r = b.op("Reshape", [v, b.const(np.array([B, S, n, hd], np.int64))])
        return b.op("Transpose", [r], perm=[0, 2, 1, 3])

    h = b.op("RMSNormalization", ["x", b.const(np.ones(D, np.float32))], epsilon=1e-6)
    q = b.op("RotaryEmbedding", [heads(b.linear(h, D, HQ * hd, False), HQ), cos, sin, "pos"],
             interleaved=1)
    k = b.op("RotaryEmbedding", [heads(b.linear(h, D, HKV * hd, False), HKV), cos, sin, "pos"],
             interleaved=1)
    v = heads(b.linear(h, D, HKV * hd, False), HKV)
    a, pk, pv = b.op("Attention", [q, k, v, "mask", "past_k", "past_v"], n_out=3)
    b.nodes[-1].output[1] = "present_k"
    b.nodes[-1].output[2] = "present_v"
    a = b.op("Reshape", [b.op("Transpose", [a], perm=[0, 2, 1, 3]),
                         b.const(np.array([B, S, D], np.int64))])
    h1 = b.op("Add", ["x", b.linear(a, D, D, False)])
    f = b.op("Swish", [b.linear(h1, D, FF)], alpha=1.5)
    b.op("Add", [h1, b.linear(f, FF, D)])
    b.nodes[-1].output[0] = "y"
    vi = helper.make_tensor_value_info
    model = b.model([vi("x", F, [B, S, D]), vi("pos", TensorProto.INT64, [B, S]),
                     vi("mask", TensorProto.BOOL, [B, 1, S, T]),
                     vi("past_k", F, [B, HKV, P, hd]), vi("past_v", F, [B, HKV, P, hd])],
                    [vi("y", F, [B, S, D]), vi("present_k", F, [B, HKV, T, hd]),
                     vi("present_v", F, [B, HKV, T, hd])], 24)
    pos = (np.arange(S) + P).astype(np.int64)[None, :].repeat(B, 0)
    mask = np.tril(np.ones((S, T), bool), P)[None, None].repeat(B, 0)
    mask[:, :, :, 2] = False  # one cached key masked out everywhere
    feeds = [b.rng.randn(B, S, D).astype(np.float32), pos, mask,
             b.rng.randn(B, HKV, P, hd).astype(np.float32),
             b.rng.randn(B, HKV, P, hd).astype(np.float32)]
    return model, feeds


MODELS = [("gpt18", lambda: gpt(18)), ("gpt20", lambda: gpt(20)), ("llama23", llama23),
          ("llama24_cache", llama24_cache)]
DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64",
          np.dtype(bool): "bool"}


def build(args, name):
    w = os.path.join(args.work, name)
    os.makedirs(w, exist_ok=True)
    path = os.path.join(w, "model.onnx")
    m, feeds = dict(MODELS)[name]()
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    ins = []
    for i, a in enumerate(feeds):
        fn = os.path.join(w, "in%d.bin" % i)
        a.tofile(fn)
        ins.append((fn, DTYPES[a.dtype], a.shape))
    outs = [(o.name, [d.dim_value for d in o.type.tensor_type.shape.dim]) for o in m.graph.output]
    return w, path, ins, outs


def cflags(out):
    mk = open(os.path.join(out, "model.mk")).read()
    line = [x for x in mk.splitlines() if x.startswith("MODEL_CFLAGS := ")][0]
    return line.split(":= ", 1)[1].replace("$(MODEL_DIR)", out).split()


def check_host(args, name):
    w, path, ins, outs = build(args, name)
    out = os.path.join(w, "host")
    subprocess.run(["rm", "-rf", out])
    ok, text = run([args.tvmcc, path, "-o", out, "--name", "model"], os.path.join(w, "tvmcc.log"),
                   300)
    if not ok:
        return "tvmcc: " + text.strip().splitlines()[-1]
    exe = os.path.join(w, "driver")
    srcs = [os.path.join(out, f) for f in ("model.c", "model_weights.c", "tvmrt.c")]
    ok, text = run([args.cc] + cflags(out) + STRICT + srcs +
                   [os.path.join(ROOT, "test", "driver.c"), "-o", exe, "-lm"],
                   os.path.join(w, "cc.log"), 300)
    if not ok:
        return "cc: " + text.strip().splitlines()[0]
    got = [os.path.join(w, "out%d.bin" % i) for i in range(len(outs))]
    ok, text = run([exe] + [i[0] for i in ins] + ["-o"] + got, os.path.join(w, "run.log"), 120)
    if not ok:
        return "run: " + text.strip()
    ref = [os.path.join(w, "ref%d.bin" % i) for i in range(len(outs))]
    specs = ["%s:%s:%s" % (f, t, ",".join(str(d) for d in s)) for f, t, s in ins]
    ok, text = run(["node", os.path.join(ROOT, "test", "models", "run_ort.js"), path] + specs +
                   ["-o"] + ref, os.path.join(w, "ort.log"), 300)
    if not ok:
        return "onnxruntime: " + text.strip()
    for (oname, _), g, r in zip(outs, got, ref):
        a, e = np.fromfile(g, np.float32), np.fromfile(r, np.float32)
        if a.shape != e.shape:
            return "%s: %d values, onnxruntime %d" % (oname, a.size, e.size)
        err = np.abs(a - e) / (1e-3 + np.abs(e))
        if not np.all(np.isfinite(a)) or err.max() > 2e-3:
            i = int(np.nanargmax(err)) if np.all(np.isfinite(a)) else int(np.argmin(np.isfinite(a)))
            return "%s[%d] = %g, onnxruntime %g" % (oname, i, a[i], e[i])
    return None


def check_target(args, name, target, cc):
    w, path, _, _ = build(args, name)
    out = os.path.join(w, target)
    subprocess.run(["rm", "-rf", out])
    ok, text = run([args.tvmcc, path, "-t", target, "-o", out, "--name", "model"],
                   os.path.join(w, target + ".log"), 300)
    if not ok:
        return "tvmcc: " + text.strip().splitlines()[-1]
    for src in ("model.c", "model_weights.c"):
        ok, text = run([cc] + cflags(out) + STRICT +
                       ["-c", os.path.join(out, src), "-o", os.path.join(out, src + ".o")],
                       os.path.join(w, target + "_cc.log"), 300)
        if not ok:
            return "%s %s: %s" % (cc, src, text.strip().splitlines()[0])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", default=os.path.join(ROOT, "tvmcc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "transformer"))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = ap.parse_args()
    items = [(n, None, None) for n, _ in MODELS]
    for t, cc in TARGETS:
        have = subprocess.run(["sh", "-c", "command -v " + cc], capture_output=True).returncode == 0
        items += [(n, t, cc) for n, _ in MODELS] if have else []
        if not have:
            print("SKIP transformer %s: %s not installed" % (t, cc))

    def check(item):
        n, t, cc = item
        return check_host(args, n) if t is None else check_target(args, n, t, cc)

    return run_cases(items, check,
                     lambda i: "transformer %s %s" % (i[0], i[1] or "host (onnxruntime)"))


if __name__ == "__main__":
    sys.exit(main())
