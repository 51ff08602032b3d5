#!/usr/bin/env python3
"""Special float values through the x86 vector printer (emit_intrin.c):
Relu, Clip, Max and Min keep tvmrt_maxf/minf's rule (a NaN first operand
is kept, a NaN second operand wins, max(-0, +0) is +0), and the sigmoid
(AVX-512: a reciprocal estimate refined by one Newton step; AVX2:
tvmcc_sigmoid8, a degree-5 polynomial and a division) stays within 1e-6
of the exact value, gives 0 where 1 + exp(-x) overflows and propagates
NaN.

Each case builds a one-node model with onnx.helper on a [1, 37] input (two
whole 16-lane vectors and a masked tail; four 8-lane vectors and a 5-lane
tail, stored by tvmcc_store8_n), compiles it with tvmcc -t x86-64-avx512
and -t x86-64-avx2, builds it with test/driver.c and -march=native and
compares with the scalar rule computed here. On a host without the
target's instructions each case is still compiled (tvmcc, then cc with the
target's own flags and -Wall -Wextra -Werror) and its run is reported as
skipped.
Prints PASS/FAIL per case and, last, "N passed, N failed"."""
import argparse
import math
import os
import struct
import subprocess
import sys

from onnx import TensorProto, helper, numpy_helper
import numpy as np
from caserun import Skipped, host_cpu_flags, run_cases

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
F = TensorProto.FLOAT
N = 37
NAN = float("nan")
# target, its instruction-set flags (targets/*.json), the CPU flags that run
# it, the prefix of its vectors, and its sigmoid helper
TARGETS = [("x86-64-avx512", ["-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq", "-mfma"], ["avx512f"],
            "_mm512_", "tvmcc_sigmoid16("),
           ("x86-64-avx2", ["-mavx2", "-mfma"], ["avx2", "fma"], "_mm256_", "tvmcc_sigmoid8(")]
INF = float("inf")

# NaN, infinities, signed zeros, values where exp overflows or underflows
SPECIAL = [NAN, -NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 6.0, 6.5, -88.0, -87.0, -100.0, 100.0, 88.5,
           -89.5, 1e-30, -1e-30, 3.0, 0.5]


def inputs():
    rs = np.random.RandomState(7)
    x = np.array(SPECIAL + list(rs.standard_normal(N - len(SPECIAL)) * 8), dtype=np.float32)
    return x.reshape(1, N)


def model(op, extra_inputs=(), **attrs):
    names = ["x"] + [name for name, _ in extra_inputs]
    inits = [numpy_helper.from_array(np.array(v, dtype=np.float32), name) for name, v in extra_inputs]
    node = helper.make_node(op, names, ["y"], name="n0", **attrs)
    g = helper.make_graph([node], "special", [helper.make_tensor_value_info("x", F, [1, N])],
                          [helper.make_tensor_value_info("y", F, [1, N])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def swish():
    n0 = helper.make_node("Sigmoid", ["x"], ["s"], name="sig")
    n1 = helper.make_node("Mul", ["x", "s"], ["y"], name="mul")
    g = helper.make_graph([n0, n1], "special", [helper.make_tensor_value_info("x", F, [1, N])],
                          [helper.make_tensor_value_info("y", F, [1, N])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def maxf(a, b):
    return a if (a > b or a != a) else b


def minf(a, b):
    return a if (a < b or a != a) else b


def sigmoid(a):
    if a != a:
        return NAN
    e = math.exp(-a) if -a < 88.72 else INF
    return 1.0 / (1.0 + e)


# name, model, scalar rule, exact (bits, NaN-ness and the sign of zero) or
# a tolerance (rtol, atol)
CASES = [
    ("relu", model("Relu"), lambda a: maxf(a, 0.0), None),
    ("clip_0_6", model("Clip", [("lo", 0.0), ("hi", 6.0)]), lambda a: minf(maxf(a, 0.0), 6.0), None),
    ("clip_nan_bound", model("Clip", [("lo", NAN), ("hi", 6.0)]), lambda a: minf(maxf(a, NAN), 6.0), None),
    ("max_const", model("Max", [("c", [-0.0] * N)]), lambda a: maxf(a, -0.0), None),
    ("min_const", model("Min", [("c", [0.0] * N)]), lambda a: minf(a, 0.0), None),
    ("sigmoid", model("Sigmoid"), sigmoid, (1e-6, 1e-37)),
    ("swish", swish(), lambda a: a * sigmoid(a), (1e-6, 1e-37)),
]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def compare(got, x, rule, tol):
    for i, (g, a) in enumerate(zip(got, x)):
        try:
            want = f32(rule(float(a)))
        except (OverflowError, ValueError):
            want = NAN
        if want != want or g != g:
            if (want != want) != (g != g):
                return "element %d (x=%r): got %r, want %r" % (i, a, g, want)
            continue
        if tol is not None and g == want:
            continue
        if tol is None:
            if struct.pack("<f", g) != struct.pack("<f", want):
                return "element %d (x=%r): got %r, want %r (bitwise)" % (i, a, g, want)
        elif not (abs(g - want) <= tol[1] + tol[0] * abs(want)):
            return "element %d (x=%r): got %r, want %r" % (i, a, g, want)
    return None


def run_case(case, target, args):
    name, m, rule, tol = case
    tname, tflags, need, prefix, sig = target
    w = os.path.join(args.work, name + "-" + tname)
    os.makedirs(w, exist_ok=True)
    path = os.path.join(w, "model.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    out = os.path.join(w, "out")
    subprocess.run(["rm", "-rf", out])
    p = subprocess.run([args.tvmcc, path, "-o", out, "-t", tname], capture_output=True, text=True)
    if p.returncode != 0:
        return "compile: " + p.stderr.strip()
    src = open(os.path.join(out, "model.c")).read()
    if prefix not in src:
        return "no %s vector code was printed" % tname
    if "sigmoid" in name or "swish" in name:
        if sig + "_mm" not in src:
            return "the sigmoid is not %s...) in model.c" % sig
    elif "_mm256_maskstore_ps" in src:
        return "a masked store (_mm256_maskstore_ps) in model.c"
    srcs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
    exe = os.path.join(w, "driver")
    if not all(f in args.cpu for f in need):
        for s in srcs:
            p = subprocess.run([args.cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c",
                                "-o", os.path.join(w, "obj.o"), "-I", out] + tflags + [s],
                               capture_output=True, text=True)
            if p.returncode != 0:
                return "cc: " + (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
        return Skipped("run: the host has no %s (compiled warning-free only)" % "/".join(need))
    p = subprocess.run([args.cc, "-std=c99", "-O2", "-march=native", "-I", out] + srcs +
                       [os.path.join(ROOT, "test", "driver.c"), "-lm", "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return "cc: " + p.stderr.strip().splitlines()[0]
    x = inputs()
    inp, outp = os.path.join(w, "in.bin"), os.path.join(w, "out.bin")
    x.tofile(inp)
    p = subprocess.run([exe, inp, "-o", outp], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return "run: " + p.stderr.strip()
    got = np.fromfile(outp, dtype=np.float32)
    return compare([float(v) for v in got], [float(v) for v in x.ravel()], rule, tol)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", default=os.path.join(ROOT, "tvmcc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "x86_special_values"))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = ap.parse_args()
    args.cpu = host_cpu_flags()
    items = [(c, t) for t in TARGETS for c in CASES]
    return run_cases(items, lambda it: run_case(it[0], it[1], args), lambda it: "%s -t %s" % (it[0][0], it[1][0]))


if __name__ == "__main__":
    sys.exit(main())
