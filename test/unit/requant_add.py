#!/usr/bin/python3
"""The requantization of the integer Add and Mul (ir/params.h QK_ADD,
QK_MUL), checked exhaustively on the compiled C against an exact
derivation.

    test/unit/requant_add.py [--tvmcc PATH] [--work DIR] [--cc CC]

One QDQ model of BRANCHES independent branches
    a, b int8/uint8 [65536] -> DequantizeLinear -> Add | Mul ->
    QuantizeLinear -> int8/uint8 [65536]
whose inputs are every pair (a, b) of the type, with input and output
scales that make the multipliers sa/sy, sb/sy (Add) or sa*sb/sy (Mul)
span 1e-4 .. 1e7: shifts from 49 down to 7. Compiled for the c target
and for cortex-m4 (built here with the host compiler: the portable
branches of the Cortex-M C, whose Add / Mul requantization
lower/tpl_qconv_m4.c m4q_requant_narrow rewrites on a product's high word
and emit_expr.c prints as tvmcc_ssat_asr), both run on the host.

Checks, PASS/FAIL per branch and build:
  exact/BRANCH/TARGET: every output equals, bit for bit,
      clamp(floor((va*M1 + vb*M2 + 2^(s-1)) / 2^s) + zy, type range)
      (Mul: va*vb*M), va = a - za, vb = b - zb, computed here with Python
      integers from M and s derived as passes/quant_util.c fixed_point
      does (the largest s <= 62 with every m * 2^s < 2^31 - 1, M the
      rounded m * 2^s, m the double quotient of the float32 scales);
  forms/TARGET: the requantization took each form the branches are built
      to reach: on c, int32 add and clamp (lower/op_quant.c requant_int)
      but for the shift-7 Add, whose sum's bound passes 2^(s+30) and keeps
      the int64 ones; on cortex-m4 the same, the int32 ones on a product's
      high word ending in SSAT with the shift (tvmcc_ssat_asr; an Add's
      shift 1).
Last line: "N passed, N failed". SKIP (0 passed, 0 failed) without
numpy/onnx.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from fractions import Fraction

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    print("SKIP requant_add: %s (scripts/deps.sh test)" % e)
    print("0 passed, 0 failed")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 65536

# (name, op, type, sa, za, sb, zb, sy, zy)
BRANCHES = [
    ("add_s8", "Add", "s8", 0.02, 0, 0.013, 0, 0.0287, -3),
    ("add_u8", "Add", "u8", 0.05, 128, 0.004, 7, 0.021, 131),
    ("add_wide", "Add", "s8", 0.9, -5, 0.001, 17, 0.0475, 0),
    ("add_tiny", "Add", "u8", 3e-5, 250, 0.3, 3, 0.29, 0),
    ("add_large", "Add", "s8", 0.37, 0, 0.05, -128, 0.01, 127),
    ("add_huge", "Add", "s8", 10.0, 0, 1e-6, 0, 1e-6, 0),
    ("mul_s8", "Mul", "s8", 0.02, 1, 0.03, -2, 0.015, 0),
    ("mul_u8", "Mul", "u8", 0.01, 100, 0.01, 27, 3e-3, 11),
    ("mul_tiny", "Mul", "s8", 1e-4, 0, 1e-3, 0, 0.05, -100),
]


def f32(x):
    return float(np.float32(x))


def fixed_point(ms):
    """(mult list, shift) as passes/quant_util.c fixed_point."""
    mx = max(ms)
    s = 62
    while s > 1 and mx * 2.0 ** s >= 2147483647.0:
        s -= 1
    return [int((Fraction(m) * (1 << s) + Fraction(1, 2)) // 1) for m in ms], s


class Branch:
    def __init__(self, k, spec):
        (self.name, self.op, t, sa, self.za, sb, self.zb, sy, self.zy) = spec
        self.k = k
        self.sa, self.sb, self.sy = f32(sa), f32(sb), f32(sy)
        self.u8 = t == "u8"
        self.npt = np.uint8 if self.u8 else np.int8
        self.tp = TensorProto.UINT8 if self.u8 else TensorProto.INT8
        self.lo, self.hi = (0, 255) if self.u8 else (-128, 127)
        i = np.arange(N)
        self.a = (i // 256 + self.lo).astype(self.npt)
        self.b = (i % 256 + self.lo).astype(self.npt)
        if self.op == "Add":
            self.mult, self.shift = fixed_point([self.sa / self.sy, self.sb / self.sy])
        else:
            self.mult, self.shift = fixed_point([self.sa * self.sb / self.sy])

    def nodes(self):
        k = self.k
        c = lambda name, v, t: numpy_helper.from_array(np.array(v, dtype=t), "%s_%d" % (name, k))
        inits = [c("sa", self.sa, np.float32), c("za", self.za, self.npt),
                 c("sb", self.sb, np.float32), c("zb", self.zb, self.npt),
                 c("sy", self.sy, np.float32), c("zy", self.zy, self.npt)]
        n = lambda *a, **kw: helper.make_node(*a, **kw)
        nodes = [n("DequantizeLinear", ["a_%d" % k, "sa_%d" % k, "za_%d" % k], ["fa_%d" % k]),
                 n("DequantizeLinear", ["b_%d" % k, "sb_%d" % k, "zb_%d" % k], ["fb_%d" % k]),
                 n(self.op, ["fa_%d" % k, "fb_%d" % k], ["fy_%d" % k]),
                 n("QuantizeLinear", ["fy_%d" % k, "sy_%d" % k, "zy_%d" % k], ["y_%d" % k])]
        vi = [helper.make_tensor_value_info("a_%d" % k, self.tp, [N]),
              helper.make_tensor_value_info("b_%d" % k, self.tp, [N])]
        vo = helper.make_tensor_value_info("y_%d" % k, self.tp, [N])
        return nodes, inits, vi, vo

    def expected(self):
        va = [int(v) - self.za for v in self.a]
        vb = [int(v) - self.zb for v in self.b]
        s, r = self.shift, 1 << (self.shift - 1)
        if self.op == "Add":
            m1, m2 = self.mult
            p = [x * m1 + y * m2 for x, y in zip(va, vb)]
        else:
            p = [x * y * self.mult[0] for x, y in zip(va, vb)]
        return np.array([min(max(((v + r) >> s) + self.zy, self.lo), self.hi) for v in p], dtype=np.int64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", default=os.path.join(ROOT, "tvmcc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "requant_add"))
    ap.add_argument("--cc", default=os.environ.get("CC_HOST", "gcc"))
    args = ap.parse_args()
    passed = failed = 0

    def report(ok, what):
        nonlocal passed, failed
        print("%s requant_add %s" % ("PASS" if ok else "FAIL", what), flush=True)
        if ok:
            passed += 1
        else:
            failed += 1

    branches = [Branch(k, spec) for k, spec in enumerate(BRANCHES)]
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    nodes, inits, vins, vouts = [], [], [], []
    for b in branches:
        n, i, vi, vo = b.nodes()
        nodes += n
        inits += i
        vins += vi
        vouts.append(vo)
    g = helper.make_graph(nodes, "requant_add", vins, vouts, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    path = os.path.join(args.work, "requant_add.onnx")
    onnx.save(model, path)
    ins = []
    for b in branches:
        for name, v in (("a", b.a), ("b", b.b)):
            ins.append("%s_%d.bin" % (name, b.k))
            v.tofile(os.path.join(args.work, ins[-1]))
    want = {b.k: b.expected() for b in branches}

    def run(cmd):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=args.work)
        return p.returncode == 0, p.stdout.decode("utf-8", "replace").strip()

    for target in ("c", "cortex-m4"):
        out = os.path.join(args.work, target)
        ok, text = run([args.tvmcc, path, "-t", target, "-o", out, "--name", "model"])
        if ok:
            srcs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
            ok, text = run([args.cc, "-std=c99", "-O1", "-I", out] + srcs +
                           [os.path.join(ROOT, "test", "driver.c"), "-lm", "-o", "driver_" + target])
        outs = ["y_%d_%s.bin" % (b.k, target) for b in branches]
        if ok:
            ok, text = run(["./driver_" + target] + ins + ["-o"] + outs)
        if not ok:
            report(False, "%s: build/run: %s" % (target, (text.splitlines() or ["?"])[-1][:300]))
            continue
        with open(os.path.join(out, "model.c")) as f:
            src = f.read()
        n_float = src.count("float *restrict") + src.count("const float *")
        report(n_float == 0, "%s: integer-only: model.c has no float buffer (%d found)" % (target, n_float))
        for b in branches:
            y = np.fromfile(os.path.join(args.work, outs[b.k]), b.npt).astype(np.int64)
            bad = np.flatnonzero(y != want[b.k])
            what = "exact/%s/%s: shift %d, mult %s, zy %d, %d pairs" % (
                b.name, target, b.shift, b.mult, b.zy, N)
            if len(bad):
                i = bad[0]
                what += ": %d differ, first a %d b %d: got %d, expected %d" % (
                    len(bad), b.a[i], b.b[i], y[i], want[b.k][i])
            report(len(bad) == 0, what)
        # the forms the branches are built to reach, kernel by kernel (one
        # per branch, in order)
        kern = re.findall(r"static MODEL_NOINLINE void k\d+_(?:add|mul)\(.*?\n}\n", src, re.S)
        if len(kern) != len(branches):
            report(False, "forms/%s: %d kernels for %d branches" % (target, len(kern), len(branches)))
            continue
        wrong = []
        for b, text in zip(branches, kern):
            wide = b.shift <= 8  # |sum| may pass 2^(s+30): the int64 clamp
            if target == "cortex-m4":
                hw = "sat_asr(" in text
                if b.op == "Add" and not wide:
                    ok = ", 1, 8)" in text
                else:
                    ok = hw != wide
            else:
                ok = ("+ (uint64_t)(INT64_C(" in text) == wide
            if not ok:
                wrong.append(b.name)
        report(not wrong, "forms/%s: %s" % (
            target, "the high-word form (SSAT with the shift) but for the shift-7 Add, whose int64 clamp "
            "stays" if target == "cortex-m4" else "int32 clamps but for the shift-7 Add's int64 one") +
            (": wrong in %s" % ", ".join(wrong) if wrong else ""))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
