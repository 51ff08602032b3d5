#!/usr/bin/env python3
"""Blocked channels (NCHW16c on x86-64-avx512, NCHW8c on x86-64-avx2;
passes/layout.c) end to end: small CNN graphs built with onnx.helper are
compiled for each x86 target and for the portable `c` target (which keeps
NCHW), run through test/driver.c on the same random input and compared
(rtol 1e-4). The x86 graph after the layout pass (--dump-ir=layout) must
have as many blocked nodes (tvmcc.layout="NCHW<b>c") as the case says: the
layout really was used, and an ineligible conv (channels not a multiple of
the block, a grouped conv in the graph) really was left alone. NAME.json's
inputs and outputs must be the same on both targets (ONNX layout at the
API). On a host without AVX-512F (AVX2) the cases of that target are
checked up to the C: the layout dump, and the emitted C compiled with the
target's own cflags and -Wall -Wextra -Werror; their runs are reported as
skipped.
Prints PASS/FAIL per case and target and, last, "N passed, N failed"."""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from caserun import Skipped, host_cpu_flags, run_cases

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
F = TensorProto.FLOAT


def const(rng, name, shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)


def graph(name, nodes, x_shape, y_shape, inits):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, x_shape)],
                          [helper.make_tensor_value_info("y", F, y_shape)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def resblock():
    """conv -> relu -> conv -> residual add -> relu -> max pool -> 1x1 conv
    -> per-channel Mul and Add constants -> global average pool (of the
    blocked tensor, into [N,C/b,1,1,b]: a Reshape after it)."""
    r = np.random.default_rng(11)
    inits = [const(r, "w1", (32, 16, 3, 3)), const(r, "b1", (32,)), const(r, "w2", (32, 32, 3, 3)),
             const(r, "w3", (48, 32, 1, 1)), const(r, "s", (48, 1, 1)), const(r, "t", (1, 48, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2", "r1"], ["a"]),
             helper.make_node("Relu", ["a"], ["r2"]),
             helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p", "w3"], ["c3"]),
             helper.make_node("Mul", ["c3", "s"], ["m"]),
             helper.make_node("Add", ["m", "t"], ["q"]),
             helper.make_node("GlobalAveragePool", ["q"], ["y"])]
    return graph("resblock", nodes, [1, 16, 15, 15], [1, 48, 1, 1], inits)


def fire():
    """batch 2: a stride-2 conv from 3 channels, two expand convs
    concatenated along the channels, a strided unpadded 3x3 conv after
    (a 6x7 output plane: with 16-channel blocks fewer positions than
    NCHWC_MIN_POSITIONS (passes/layout.c), so it stays NCHW and reads the
    concatenation through a transform; with 8-channel blocks it is
    blocked)."""
    r = np.random.default_rng(12)
    inits = [const(r, "w0", (16, 3, 3, 3)), const(r, "e1", (16, 16, 1, 1)), const(r, "e3", (32, 16, 3, 3)),
             const(r, "w4", (16, 48, 3, 3)), const(r, "b4", (16,))]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], strides=[2, 2]),
             helper.make_node("Relu", ["c0"], ["r0"]),
             helper.make_node("Conv", ["r0", "e1"], ["x1"]),
             helper.make_node("Conv", ["r0", "e3"], ["x3"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["x1", "x3"], ["cat"], axis=1),
             helper.make_node("Relu", ["cat"], ["rc"]),
             helper.make_node("Conv", ["rc", "w4", "b4"], ["y"], strides=[2, 2])]
    return graph("fire", nodes, [2, 3, 29, 31], [2, 16, 6, 7], inits)


def mixed():
    """a conv with 12 output channels (never blocked), then a conv to 32
    (blocked, NCHW input), a dilated conv with auto_pad SAME_UPPER on the
    blocked tensor (the template refuses a column dilation: the generic
    schedule) and a Clip."""
    r = np.random.default_rng(13)
    inits = [const(r, "w1", (12, 3, 3, 3)), const(r, "w2", (32, 12, 3, 3)), const(r, "w3", (32, 32, 3, 3)),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(0.5, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["c2", "w3"], ["c3"], auto_pad="SAME_UPPER", dilations=[2, 2]),
             helper.make_node("Clip", ["c3", "lo", "hi"], ["y"])]
    return graph("mixed", nodes, [1, 3, 11, 20], [1, 32, 11, 20], inits)


def grouped():
    """a depthwise conv between two 1x1 convs: with x86-64-avx2 (its
    dw_nchwc knob) all three blocked, the depthwise conv's lanes channels;
    with x86-64-avx512 (no dw_nchwc) blocking would not pay and nothing is
    blocked (passes/layout.c blocking_pays)."""
    r = np.random.default_rng(14)
    inits = [const(r, "w1", (32, 16, 1, 1)), const(r, "wd", (32, 1, 3, 3)), const(r, "w2", (32, 32, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"]),
             helper.make_node("Conv", ["c1", "wd"], ["d"], group=32, pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["d", "w2"], ["y"])]
    return graph("grouped", nodes, [1, 16, 9, 9], [1, 32, 9, 9], inits)


def clip(inp, out):
    return helper.make_node("Clip", [inp, "lo", "hi"], [out])


def invres():
    """mobilenet_v2's inverted residuals, batch 2 on a 13x11 plane: a
    stride-2 3x3 conv from 3 channels, a depthwise 3x3 on its blocked
    output, 1x1 convs, a residual add, an expansion and a stride-2
    depthwise 3x3 (odd plane: the last tile partial), a 5x5 depthwise conv
    with dilation 2 and asymmetric pads, Clip(0, 6) epilogues, global
    average pool. All convs blocked with x86-64-avx2."""
    r = np.random.default_rng(15)
    inits = [const(r, "w0", (16, 3, 3, 3)), const(r, "d1", (16, 1, 3, 3)), const(r, "db1", (16,)),
             const(r, "p1", (16, 16, 1, 1)), const(r, "e2", (48, 16, 1, 1)), const(r, "d2", (48, 1, 3, 3)),
             const(r, "db2", (48,)), const(r, "p2", (24, 48, 1, 1)), const(r, "d3", (24, 1, 5, 5)),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], strides=[2, 2], pads=[1, 1, 1, 1]),
             clip("c0", "r0"),
             helper.make_node("Conv", ["r0", "d1", "db1"], ["c1"], group=16, pads=[1, 1, 1, 1]),
             clip("c1", "r1"),
             helper.make_node("Conv", ["r1", "p1"], ["c2"]),
             helper.make_node("Add", ["c2", "r0"], ["a"]),
             helper.make_node("Conv", ["a", "e2"], ["c3"]),
             clip("c3", "r3"),
             helper.make_node("Conv", ["r3", "d2", "db2"], ["c4"], group=48, strides=[2, 2], pads=[1, 1, 1, 1]),
             clip("c4", "r4"),
             helper.make_node("Conv", ["r4", "p2"], ["c5"]),
             helper.make_node("Conv", ["c5", "d3"], ["c6"], group=24, dilations=[2, 2], pads=[4, 3, 2, 4]),
             helper.make_node("GlobalAveragePool", ["c6"], ["y"])]
    return graph("invres", nodes, [2, 3, 25, 21], [2, 24, 1, 1], inits)


def se():
    """efficientnet_b0's squeeze-and-excitation with SiLU (x * Sigmoid(x)):
    a 1x1 expansion, a depthwise 3x3, global average pool, a 1x1 conv to 6
    channels (not a multiple of the block: NCHW), SiLU, a 1x1 conv back to
    32, Sigmoid, the scale multiplied into the blocked feature map
    (broadcast [N,C,1,1] against [N,C,H,W]), a 1x1 projection."""
    r = np.random.default_rng(16)
    inits = [const(r, "e", (32, 16, 1, 1)), const(r, "d", (32, 1, 3, 3)), const(r, "db", (32,)),
             const(r, "s1", (6, 32, 1, 1)), const(r, "s1b", (6,)), const(r, "s2", (32, 6, 1, 1)),
             const(r, "s2b", (32,)), const(r, "pj", (16, 32, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "e"], ["c0"]),
             helper.make_node("Sigmoid", ["c0"], ["g0"]),
             helper.make_node("Mul", ["c0", "g0"], ["h0"]),
             helper.make_node("Conv", ["h0", "d", "db"], ["c1"], group=32, pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c1"], ["g1"]),
             helper.make_node("Mul", ["c1", "g1"], ["h1"]),
             helper.make_node("GlobalAveragePool", ["h1"], ["p"]),
             helper.make_node("Conv", ["p", "s1", "s1b"], ["q1"]),
             helper.make_node("Sigmoid", ["q1"], ["g2"]),
             helper.make_node("Mul", ["q1", "g2"], ["h2"]),
             helper.make_node("Conv", ["h2", "s2", "s2b"], ["q2"]),
             helper.make_node("Sigmoid", ["q2"], ["sc"]),
             helper.make_node("Mul", ["h1", "sc"], ["m"]),
             helper.make_node("Conv", ["m", "pj"], ["y"])]
    return graph("se", nodes, [1, 16, 14, 14], [1, 16, 14, 14], inits)


def gmp():
    """batch 2: a conv to 32 channels, Relu, GlobalMaxPool of the blocked
    tensor (into [N,C/b,1,1,b], a Reshape after it), a per-channel Mul."""
    r = np.random.default_rng(17)
    inits = [const(r, "w", (32, 8, 3, 3)), const(r, "s", (1, 32, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalMaxPool", ["r"], ["g"]),
             helper.make_node("Mul", ["g", "s"], ["y"])]
    return graph("gmp", nodes, [2, 8, 9, 10], [2, 32, 1, 1], inits)


def ragged():
    """a 1x1 conv to 72 channels (9 blocks of 8) over a 12x12 plane, bias,
    Relu and a per-channel Add: with x86-64-avx2 two-block tiles whose last
    is ragged (lower/tpl_nchwc.c ragged_tile), its missing block's stores
    guarded."""
    r = np.random.default_rng(19)
    inits = [const(r, "w1", (32, 16, 3, 3)), const(r, "w2", (72, 32, 1, 1)), const(r, "b2", (72,)),
             const(r, "t", (1, 72, 1, 1))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Add", ["r2", "t"], ["y"])]
    return graph("ragged", nodes, [1, 16, 12, 12], [1, 72, 12, 12], inits)


def short():
    """batch 2: a 3x3 conv over rows of 28 (16 to 16 channels, bias), a
    residual Add of its input and Relu: with x86-64-avx2 tiles of 6
    positions, the row's last two tiles one shorter (lower/tpl_nchwc.c:
    3 x 6 + 2 x 5 = 28, no padded positions), the epilogue skipping a short
    tile's last slot."""
    r = np.random.default_rng(23)
    inits = [const(r, "w1", (16, 16, 3, 3)), const(r, "b1", (16,))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c1", "x"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    return graph("short", nodes, [2, 16, 28, 28], [2, 16, 28, 28], inits)


# name, model, blocked nodes expected with x86-64-avx512 and with
# x86-64-avx2 (counted by their tvmcc.layout attribute: convs and pools),
# and optionally a pattern the x86-64-avx2 loops (--dump-loops) must hold
CASES = [("resblock", resblock, (5, 5)), ("fire", fire, (3, 4)), ("mixed", mixed, (2, 2)),
         ("grouped", grouped, (0, 3)), ("invres", invres, (0, 8)), ("se", se, (0, 5)), ("gmp", gmp, (2, 2)),
         ("ragged", ragged, (1, 2), r"if \(\(\(cb[0-9]+ \* 2\) \+ vo[0-9]+\) < 9\):"),
         ("short", short, (1, 1), r"if \(ot[0-9]+ < 3\):(.|\n)*for p[0-9]+ in 0\.\.5:(.|\n)*"
                                   r"if \(\(ot[0-9]+ < 3\) \|\| \(p[0-9]+ < 5\)\):")]
TARGETS = [("x86-64-avx512", "avx512f", "NCHW16c"), ("x86-64-avx2", "avx2", "NCHW8c")]


def build(args, w, path, target, x):
    out = os.path.join(w, "out-" + target)
    subprocess.run(["rm", "-rf", out])
    p = subprocess.run([args.tvmcc, path, "-o", out, "-t", target], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("compile -t %s: %s" % (target, p.stderr.strip()))
    srcs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
    exe = os.path.join(w, "driver-" + target)
    p = subprocess.run([args.cc, "-std=c99", "-O2", "-march=native", "-I", out] + srcs +
                       [os.path.join(ROOT, "test", "driver.c"), "-lm", "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("cc -t %s: %s" % (target, p.stderr.strip().splitlines()[0]))
    inp, outp = os.path.join(w, "in.bin"), os.path.join(w, "out-%s.bin" % target)
    x.tofile(inp)
    p = subprocess.run([exe, inp, "-o", outp], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("run -t %s: %s" % (target, p.stderr.strip()))
    with open(os.path.join(out, "model.json")) as f:
        api = json.load(f)
    return np.fromfile(outp, dtype=np.float32), (api["inputs"], api["outputs"])


def check(item, args):
    (name, make, wants, *loops), (target, flag, layout) = item
    want = wants[0] if layout == "NCHW16c" else wants[1]
    w = os.path.join(args.work, name)
    os.makedirs(w, exist_ok=True)
    path = os.path.join(w, "model.onnx")
    m = make()
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    p = subprocess.run([args.tvmcc, path, "-t", target, "--dump-ir=layout"], capture_output=True, text=True)
    if p.returncode != 0:
        return "dump: " + p.stderr.strip()
    got = p.stdout.count('tvmcc.layout="%s"' % layout)
    if got != want:
        return "%d nodes in %s after the layout pass, want %d" % (got, layout, want)
    if loops and layout == "NCHW8c":
        p = subprocess.run([args.tvmcc, path, "-t", target, "--dump-loops"], capture_output=True, text=True)
        if p.returncode != 0 or not re.search(loops[0], p.stdout):
            return "no %r in --dump-loops" % loops[0]
    if not args.runnable[target]:
        out = os.path.join(w, "out-" + target)
        subprocess.run(["rm", "-rf", out])
        p = subprocess.run([args.tvmcc, path, "-o", out, "-t", target], capture_output=True, text=True)
        if p.returncode != 0:
            return "compile -t %s: %s" % (target, p.stderr.strip())
        with open(os.path.join(ROOT, "targets", target + ".json")) as f:
            cflags = json.load(f)["cflags"].split()
        for s in sorted(f for f in os.listdir(out) if f.endswith(".c")):
            p = subprocess.run([args.cc] + cflags + ["-Wall", "-Wextra", "-pedantic", "-Werror", "-c", "-I", out,
                                "-o", os.path.join(w, "obj.o"), os.path.join(out, s)], capture_output=True, text=True)
            if p.returncode != 0:
                return "cc -t %s: %s" % (target, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0])
        return Skipped("run: the host has no %s (layout and warning-free C checked)" % flag)
    dims = m.graph.input[0].type.tensor_type.shape.dim
    x = np.random.default_rng(5).standard_normal([d.dim_value for d in dims]).astype(np.float32)
    ref, api_ref = build(args, w, path, "c", x)
    out, api = build(args, w, path, target, x)
    if api != api_ref:
        return "NAME.json inputs/outputs differ from the c target's: %r vs %r" % (api, api_ref)
    if out.shape != ref.shape:
        return "output of %d elements, want %d" % (out.size, ref.size)
    err = np.abs(out - ref) / np.maximum(np.abs(ref), 1.0)
    if not np.all(err <= 1e-4):
        i = int(np.argmax(err))
        return "element %d: %r vs the c target's %r" % (i, float(out[i]), float(ref[i]))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tvmcc", default=os.environ.get("TVMCC", os.path.join(ROOT, "tvmcc")))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "nchwc_layout"))
    args = ap.parse_args()
    flags = host_cpu_flags()
    args.runnable = {t[0]: t[1] in flags for t in TARGETS}
    items = []
    for t in TARGETS:
        items += [(c, t) for c in CASES]
    return run_cases(items, lambda it: check(it, args), lambda it: "%s -t %s" % (it[0][0], it[1][0]))


if __name__ == "__main__":
    sys.exit(main())
