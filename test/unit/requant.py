#!/usr/bin/python3
"""The fixed-point requantization of the integer kernels (ir/params.h,
QuantParams), checked on the compiled C against an exact derivation.

    test/unit/requant.py [--tvmcc PATH] [--work DIR] [--cc CC]

One QDQ model, compiled once with tvmcc (target c) and run once on the
host: BRANCHES independent branches, each
    input int8/uint8 [1, C*L, H, W] -> DequantizeLinear -> Conv 1x1
    (per-channel int8 weights, int32 bias) -> [Relu | Clip] ->
    QuantizeLinear -> output int8/uint8 [1, C, H, W]
whose weights are block-diagonal (output channel c reads input channels
c*L .. c*L+L-1 with weights 1, 127, ..., 127), so the inputs written here
steer every int32 sum acc = bias[c] + sum (x - zx) * w onto a chosen value
in [-2^24, 2^24]: around (level / m) for the output levels near the
clamp range, many on rounding ties. The real multipliers m[c] = sx *
sw[c] / sy span 2^-20 .. 0.9 across the branches (each branch within a
factor 2, one within a factor 256, two with an output scale that is not a
power of two); output zero points, types and Relu/Clip bounds differ per
branch. About 330 000 (acc, m, zy, lo, hi) cases.

Checks, each one PASS/FAIL line:
  exact/BRANCH: every output equals, bit for bit,
        clamp(floor((acc * mult + 2^(shift-1)) / 2^shift) + zy, lo, hi)
     computed here with Python integers, mult = round(m * 2^shift) and
     shift the largest <= 62 with every mult[c] of the branch < 2^31
     (derived here from m as exact fractions, not with the compiler's code);
  real: against float64 rounding of the real value acc * m (half up,
     clamped): |difference| <= 1 everywhere and equal in >= 99.9%;
  sensitive/RULE: the same inputs under another rounding rule (half to
     even, half away from zero, truncation) or a shift 8 or 16 bits smaller
     would not have matched: the data has ties, so the exact check can fail
     (1 to 7 bits less of shift give the same integers on these inputs:
     the multipliers are float32 values, exact in 24 bits);
  derivation/BRANCH: the multipliers tvmcc wrote (NAME.qmultN in
     model_weights.c) are the ones derived here and the derived shift
     appears in model.c: any change of the shift rule shows here.
Last line: "N passed, N failed". SKIP (0 passed, 0 failed) without numpy/onnx.
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
    print("SKIP requant: %s (scripts/deps.sh test)" % e)
    print("0 passed, 0 failed")
    sys.exit(0)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
C, L, H, W = 32, 64, 32, 32
P = H * W
CAP = 127 * 128 * (L - 1) + 128      # how far the inputs move acc from bias
ACC_MAX = 1 << 24
SX = 2.0 ** -4

# name, input type, zx, output type, zy, activation (None, "relu", (cmin, cmax)
# in output levels), lowest m, spread of m (factor), output scale
BRANCHES = [
    ("m2e-20", np.int8, 0, np.int8, 0, None, 2.0 ** -20, 1.9, 2.0 ** -3),
    ("m2e-17", np.int8, -7, np.int8, 11, None, 2.0 ** -17, 1.9, 2.0 ** -2),
    ("m2e-14", np.uint8, 128, np.uint8, 128, None, 2.0 ** -14, 1.9, 2.0 ** -5),
    ("m2e-11", np.int8, 3, np.int8, -20, "relu", 2.0 ** -11, 1.9, 2.0 ** -1),
    ("m2e-9", np.uint8, 100, np.uint8, 37, (-30, 90), 2.0 ** -9, 1.9, 2.0 ** -4),
    ("m2e-7", np.int8, 0, np.int8, -128, None, 2.0 ** -7, 1.9, 2.0 ** -6),
    ("m2e-5", np.int8, 12, np.uint8, 0, "relu", 2.0 ** -5, 1.9, 2.0 ** -2),
    ("m2e-3", np.uint8, 0, np.int8, 5, (-60, 40), 2.0 ** -3, 1.9, 2.0 ** -3),
    ("m2e-1", np.int8, -1, np.int8, 2, None, 2.0 ** -1, 1.8, 2.0 ** -7),
    ("wide", np.int8, 0, np.int8, 0, None, 2.0 ** -16, 256.0, 2.0 ** -3),
    ("sy0.0371", np.int8, 9, np.int8, -3, None, 2.0 ** -12, 1.9, 0.0371),
    ("sy0.73", np.uint8, 120, np.uint8, 140, (-100, 100), 2.0 ** -4, 1.9, 0.73),
]
TYPE_RANGE = {np.int8: (-128, 127), np.uint8: (0, 255)}


def f32(x):
    return float(np.float32(x))


def derive(ms):
    """(mult list, shift) for the real multipliers ms (Python floats, exact
    as fractions): shift the largest <= 62 with every round(m * 2^shift)
    < 2^31, round half up."""
    fr = [Fraction(m) for m in ms]
    for s in range(62, 0, -1):
        mult = [int((f * (1 << s) + Fraction(1, 2)) // 1) for f in fr]
        if max(mult) < (1 << 31):
            return mult, s
    raise ValueError("no shift for %r" % ms)


class Branch:
    def __init__(self, k, spec, rng):
        (self.name, self.xt, self.zx, self.yt, self.zy, self.act, base, spread,
         self.sy) = spec
        self.k = k
        self.sy = f32(self.sy)              # the model holds it as float32
        if self.sy == 2.0 ** round(np.log2(self.sy)):
            # m float32; sw = m * sy / sx exact
            m = [f32(base * spread ** rng.random()) for _ in range(C)]
            m[0] = base                      # a power of two: many ties
            m[1] = f32(base * 1.5)           # 3 * 2^-k: ties too
            self.sw = [f32(v * self.sy / SX) for v in m]
        else:
            self.sw = [f32(base * spread ** rng.random() * self.sy / SX) for _ in range(C)]
        # the real multiplier the way ir/params.h defines it: sx * sw / sy in double
        self.m = [SX * sw / self.sy for sw in self.sw]
        self.mult, self.shift = derive(self.m)
        tlo, thi = TYPE_RANGE[self.yt]
        self.lo, self.hi = tlo, thi
        if self.act == "relu":
            self.lo = max(tlo, self.zy)
        elif self.act is not None:
            self.lo = max(tlo, self.zy + self.act[0])
            self.hi = min(thi, self.zy + self.act[1])
        self.make_inputs(rng)

    def make_inputs(self, rng):
        vmin, vmax = TYPE_RANGE[self.xt][0] - self.zx, TYPE_RANGE[self.xt][1] - self.zx
        x = np.zeros((C, L, P), np.int64)          # x - zx
        self.bias = np.zeros(C, np.int64)
        for c in range(C):
            m = self.m[c]
            # target output levels (before the zero point) around the clamp range
            lv = rng.uniform(self.lo - self.zy - 6, self.hi - self.zy + 6, P)
            tgt = np.round(lv / m)
            # a third of them on a tie: (j + 1/2) / m where that is an integer
            q = 1.0 / m
            if q == int(q) and int(q) % 2 == 0:
                ties = (np.floor(lv[: P // 3]) + 0.5) * q
                tgt[: P // 3] = ties
            tgt = np.clip(tgt, -ACC_MAX, ACC_MAX).astype(np.int64)
            b = int(np.clip(np.median(tgt), -(ACC_MAX - CAP), ACC_MAX - CAP))
            self.bias[c] = b
            r = tgt - b
            t1 = np.clip(np.round(r / 127.0).astype(np.int64), (L - 1) * vmin, (L - 1) * vmax)
            each, extra = t1 // (L - 1), t1 % (L - 1)
            for j in range(1, L):
                x[c, j] = np.clip(each + (j - 1 < extra), vmin, vmax)
            x[c, 0] = np.clip(r - 127 * x[c, 1:].sum(axis=0), vmin, vmax)
        self.xc = x
        self.acc = self.bias[:, None] + x[:, 0] + 127 * x[:, 1:].sum(axis=1)   # [C, P]
        assert np.abs(self.acc).max() <= ACC_MAX
        self.x = (x + self.zx).astype(self.xt).reshape(1, C * L, H, W)

    def nodes(self):
        k, n, inits = self.k, [], []
        s = "b%d_" % k
        ttype = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}
        w = np.zeros((C, C * L, 1, 1), np.int8)
        for c in range(C):
            w[c, c * L, 0, 0] = 1
            w[c, c * L + 1:(c + 1) * L, 0, 0] = 127
        inits += [numpy_helper.from_array(np.array(SX, np.float32), s + "sx"),
                  numpy_helper.from_array(np.array(self.zx, self.xt), s + "zx"),
                  numpy_helper.from_array(w, s + "w"),
                  numpy_helper.from_array(np.array(self.sw, np.float32), s + "sw"),
                  numpy_helper.from_array(np.zeros(C, np.int8), s + "zw"),
                  numpy_helper.from_array(self.bias.astype(np.int32), s + "b"),
                  numpy_helper.from_array(np.array([f32(SX * v) for v in self.sw], np.float32),
                                          s + "sb"),
                  numpy_helper.from_array(np.zeros(C, np.int32), s + "zb"),
                  numpy_helper.from_array(np.array(self.sy, np.float32), s + "sy"),
                  numpy_helper.from_array(np.array(self.zy, self.yt), s + "zy")]
        n.append(helper.make_node("DequantizeLinear", [s + "x", s + "sx", s + "zx"], [s + "xf"]))
        n.append(helper.make_node("DequantizeLinear", [s + "w", s + "sw", s + "zw"], [s + "wf"],
                                  axis=0))
        n.append(helper.make_node("DequantizeLinear", [s + "b", s + "sb", s + "zb"], [s + "bf"],
                                  axis=0))
        n.append(helper.make_node("Conv", [s + "xf", s + "wf", s + "bf"], [s + "conv"],
                                  name=s + "conv"))
        y = s + "conv"
        if self.act == "relu":
            n.append(helper.make_node("Relu", [y], [s + "act"]))
            y = s + "act"
        elif self.act is not None:
            sy32 = np.float32(self.sy)
            inits += [numpy_helper.from_array(np.array(self.act[0] * sy32, np.float32), s + "cmin"),
                      numpy_helper.from_array(np.array(self.act[1] * sy32, np.float32), s + "cmax")]
            n.append(helper.make_node("Clip", [y, s + "cmin", s + "cmax"], [s + "act"]))
            y = s + "act"
        n.append(helper.make_node("QuantizeLinear", [y, s + "sy", s + "zy"], [s + "y"]))
        vin = helper.make_tensor_value_info(s + "x", ttype[self.xt], [1, C * L, H, W])
        vout = helper.make_tensor_value_info(s + "y", ttype[self.yt], [1, C, H, W])
        return n, inits, vin, vout

    def expected(self, mult=None, shift=None, rule="half_up"):
        """The integers of ir/params.h's rule (or another rounding rule)."""
        mult = np.array(self.mult if mult is None else mult, np.int64)[:, None]
        s = self.shift if shift is None else shift
        p = self.acc * mult                                     # < 2^55: exact in int64
        if rule == "half_up":
            v = (p + (1 << (s - 1))) >> s                       # >> is floor on int64
        elif rule == "trunc":
            v = np.where(p >= 0, p >> s, -((-p) >> s))
        else:
            fl = p >> s
            rem = p - (fl << s)
            half = 1 << (s - 1)
            up = rem > half
            if rule == "half_even":
                up |= (rem == half) & (fl % 2 == 1)
            else:  # half_away
                up |= (rem == half) & (p > 0)
            v = fl + up
        return np.clip(v + self.zy, self.lo, self.hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", default=os.path.join(ROOT, "tvmcc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "requant"))
    ap.add_argument("--cc", default=os.environ.get("CC_HOST", "gcc"))
    args = ap.parse_args()
    passed = failed = 0

    def report(ok, what):
        nonlocal passed, failed
        print("%s requant %s" % ("PASS" if ok else "FAIL", what), flush=True)
        if ok:
            passed += 1
        else:
            failed += 1

    rng = np.random.default_rng(16)
    branches = [Branch(k, spec, rng) for k, spec in enumerate(BRANCHES)]
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    nodes, inits, vins, vouts = [], [], [], []
    for b in branches:
        n, i, vi, vo = b.nodes()
        nodes += n
        inits += i
        vins.append(vi)
        vouts.append(vo)
    g = helper.make_graph(nodes, "requant", vins, vouts, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    path = os.path.join(args.work, "requant.onnx")
    onnx.save(model, path)
    out = os.path.join(args.work, "out")

    def run(cmd):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=args.work)
        return p.returncode == 0, p.stdout.decode("utf-8", "replace").strip()

    ok, text = run([args.tvmcc, path, "-o", out, "--name", "model", "--report"])
    if ok:
        with open(os.path.join(args.work, "report.txt"), "w") as f:
            f.write(text)
        srcs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
        ok, text = run([args.cc, "-std=c99", "-O1", "-I", out] + srcs +
                       [os.path.join(ROOT, "test", "driver.c"), "-lm", "-o", "driver"])
    ins, outs = [], []
    if ok:
        for b in branches:
            ins.append("in_%d.bin" % b.k)
            b.x.tofile(os.path.join(args.work, ins[-1]))
            outs.append("y_%d.bin" % b.k)
        ok, text = run(["./driver"] + ins + ["-o"] + outs)
    if not ok:
        report(False, "build/run: %s" % (text.splitlines() or ["?"])[-1][:300])
        print("%d passed, %d failed" % (passed, failed))
        return 1
    # the pass must have made every branch an integer sum (no float Conv left)
    with open(os.path.join(out, "model.c")) as f:
        src = f.read()
    n_float = src.count("float *restrict") + src.count("const float *")
    report(n_float == 0, "integer-only: model.c has no float buffer (%d found)" % n_float)

    got = {}
    total = equal_real = 0
    worst_real = 0
    for b in branches:
        y = np.fromfile(os.path.join(args.work, "y_%d.bin" % b.k), b.yt).astype(np.int64)
        y = y.reshape(C, P)
        got[b.k] = y
        exp = b.expected()
        bad = np.argwhere(y != exp)
        n_tie = 0
        for c in range(C):
            p = b.acc[c] * b.mult[c]
            n_tie += int(np.sum((p & ((1 << b.shift) - 1)) == (1 << (b.shift - 1))))
        inside = int(np.sum((exp > b.lo) & (exp < b.hi)))
        what = "exact/%s: shift %d, m %.3g..%.3g, zy %d, clamp [%d, %d], acc %d..%d, %d ties, %d of %d inside the clamp" % (
            b.name, b.shift, min(b.m), max(b.m), b.zy, b.lo, b.hi, b.acc.min(), b.acc.max(),
            n_tie, inside, y.size)
        if len(bad):
            c, p = bad[0]
            what += ": %d differ, first channel %d acc %d: got %d, expected %d" % (
                len(bad), c, b.acc[c, p], y[c, p], exp[c, p])
        report(len(bad) == 0, what)
        # float64 reference of the real value (half up)
        mr = np.array([float(Fraction(SX) * Fraction(f32(sw)) / Fraction(b.sy)) for sw in b.sw])
        real = np.clip(np.floor(b.acc * mr[:, None] + 0.5) + b.zy, b.lo, b.hi)
        d = np.abs(y - real)
        worst_real = max(worst_real, int(d.max()))
        equal_real += int(np.sum(d == 0))
        total += y.size
    pct = 100.0 * equal_real / total
    report(worst_real <= 1 and pct >= 99.9,
           "real: %d cases, max |result - float64 rounding| %d, %.4f%% equal (>= 99.9%%)" %
           (total, worst_real, pct))
    # the exact check can fail: other rules give other integers on these data
    for rule in ("half_even", "half_away", "trunc"):
        n = sum(int(np.sum(b.expected(rule=rule) != got[b.k])) for b in branches)
        report(n > 0, "sensitive/%s: %d cases would differ under %s" % (rule, n, rule))
    # a shift 8 or 16 smaller (multipliers below 2^23, Q15) changes outputs;
    # 1 to 7 bits less give the same integers on these data (the float32
    # multipliers have 24 significant bits), hence the next check
    for k in (8, 16):
        n = 0
        for b in branches:
            mult = [int((Fraction(m) * (1 << (b.shift - k)) + Fraction(1, 2)) // 1) for m in b.m]
            n += int(np.sum(b.expected(mult=mult, shift=b.shift - k) != got[b.k]))
        report(n > 0, "sensitive/shift-%d: %d cases would differ with %d bits less of shift" %
               (k, n, k))
    # the emitted multipliers (NAME.qmultN in model_weights.c) and shifts
    with open(os.path.join(out, "model_weights.c")) as f:
        wsrc = f.read()
    arrays = {m.group(1): [int(v) for v in m.group(2).replace(",", " ").split()]
              for m in re.finditer(r"/\* '(b\d+)_conv\.qmult\d+' int32\[\d+\] \*/\n"
                                   r"const int32_t \w+\[\d+\][^{]*= \{([^}]*)\}", wsrc)}
    shifts = set(int(v) for v in re.findall(r"UINT64_C\((\d+)\) >= 64", src))
    for b in branches:
        emitted = arrays.get("b%d" % b.k)
        ok = emitted == b.mult and b.shift in shifts
        report(ok, "derivation/%s: emitted multipliers %s the derived ones (shift %d %s)" % (
            b.name, "equal" if emitted == b.mult else
            "missing, not" if emitted is None else "differ from (first %d against %d)" % next(
                (e, d) for e, d in zip(emitted, b.mult) if e != d) if len(emitted) == len(b.mult)
            else "differ in count from", b.shift,
            "in model.c" if b.shift in shifts else "not in model.c: %s" % sorted(shifts)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
