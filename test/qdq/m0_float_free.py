#!/usr/bin/python3
"""No float arithmetic in the integer kernels on Cortex-M0 (issue 16).

    m0_float_free.py --tvmcc PATH --models DIR --work DIR [-v]

Compiles int8 and uint8 QDQ models with `tvmcc -t cortex-m0`: dscnn.s8,
dscnn.u8, resnet8.s8, resnet8.u8, small_cnn.s8/u8 of the QDQ suite (DIR, as
test/qdq/run.sh writes it) and small per-operator models written here
(an integer Add, Mul, AveragePool, GlobalAveragePool, MaxPool, Concat
with a rescale, Sigmoid table, MatMul and Gemm between a QuantizeLinear and
a 1x1 Conv, so that the operator's kernel reads and writes integers),
builds model.c and tvmrt.c with the flags NAME.mk gives plus -fno-inline
(every kernel stays a function `kN_op`) and -ffunction-sections, and reads
the objects with arm-none-eabi-objdump -dr: the functions each function
calls (relocations and direct `bl`), transitively. An integer kernel (a
kernel of NAME.json none of whose nodes is a QuantizeLinear,
DequantizeLinear or Softmax: those run after the quantize pass on
integers) must reach no soft-float or soft-double routine (__aeabi_f*,
__aeabi_d*, __aeabi_[u]i2f/l2f/..., the libgcc __addsf3 family, float
libm functions) and no 64-bit division (__aeabi_ldivmod, __aeabi_uldivmod,
__divdi3, ...). A model with no integer kernel fails (nothing checked).

Self-test (every run, counted as one case): the same check applied to the
QuantizeLinear kernel of conv3x3.s8 (float scale arithmetic) must find a
soft-float call; if it finds none, the checker is broken and this fails.

Prints PASS/FAIL per model, SKIP when arm-none-eabi-gcc/objdump is missing,
and last "N passed, N failed".
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SUITE = ["dscnn.s8", "dscnn.u8", "resnet8.s8", "resnet8.u8", "small_cnn.s8", "small_cnn.u8"]
FLOAT_OPS = {"QuantizeLinear", "DequantizeLinear", "Softmax"}
FORBIDDEN = re.compile(
    r"^(__aeabi_(f|d)\w*"                      # __aeabi_fadd, __aeabi_dmul, __aeabi_f2iz, ...
    r"|__aeabi_(u?i|u?l)2(f|d)"                # __aeabi_i2f, __aeabi_ul2d, ...
    r"|__aeabi_u?ldivmod"                      # 64-bit division
    r"|__(add|sub|mul|div|neg)[sdt]f3"         # libgcc soft float
    r"|__(fix|fixuns)[sdt]f[sdt]i|__float(un)?[sdt]i[sdt]f"
    r"|__(eq|ne|lt|le|gt|ge|un|cmp)[sdt]f2|__extendsfdf2|__truncdfsf2"
    r"|__(u)?(div|mod)di3|__udivmoddi4"
    r"|(floor|ceil|round|nearbyint|rint|lrint|lround|exp|log|sqrt|pow|tanh|fmax|fmin|fmod|fabs)f?"
    r")$")


def qdq(nodes, inits, x, name, scale, zp, qtype):
    """x -> QuantizeLinear -> DequantizeLinear; returns the DQ output."""
    s, z = name + "_s", name + "_z"
    inits.append(numpy_helper.from_array(np.array(scale, np.float32), s))
    inits.append(numpy_helper.from_array(np.array(zp, qtype), z))
    nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [name + "_q"]))
    nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s, z], [name + "_dq"]))
    return name + "_dq"


def const_dq(inits, nodes, name, w, scale):
    """A constant int8 tensor w read through a DequantizeLinear (per tensor)."""
    inits.append(numpy_helper.from_array(w.astype(np.int8), name + "_q"))
    inits.append(numpy_helper.from_array(np.array(scale, np.float32), name + "_s"))
    inits.append(numpy_helper.from_array(np.array(0, np.int8), name + "_z"))
    nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"],
                                  [name + "_dq"]))
    return name + "_dq"


def op_model(op, qtype, path):
    """input(s) -> Q/DQ -> 1x1 Conv -> Q/DQ -> OP -> Q/DQ -> 1x1 Conv -> Q/DQ -> output."""
    rng = np.random.default_rng(16)
    nodes, inits = [], []
    zp = 3 if qtype == np.int8 else 130
    C = 8
    shape = [1, C, 6, 6]
    def head(x, name, scale, z):
        """x -> Q/DQ -> 1x1 Conv -> Q/DQ: the operator's input comes from an
        integer kernel, not from the float QuantizeLinear (an elementwise
        operator fuses into its producer)."""
        xq = qdq(nodes, inits, x, name + "_in", 0.05, zp, qtype)
        w = const_dq(inits, nodes, name + "_w", rng.integers(-100, 100, (C, C, 1, 1)), 0.01)
        nodes.append(helper.make_node("Conv", [xq, w], [name + "_conv"]))
        return qdq(nodes, inits, name + "_conv", name, scale, z, qtype)

    a = head("x", "a", 0.05, zp)
    b = head("x2", "b", 0.03, zp - 1) if op in ("Add", "Mul", "Concat") else None
    if op in ("MatMul", "Gemm"):
        # [1, C, 6, 6] -> Flatten [1, 288] -> OP -> Reshape back
        nodes.append(helper.make_node("Flatten", [a], ["flat"], axis=1))
        fq = qdq(nodes, inits, "flat", "f", 0.05, zp, qtype)
        w = const_dq(inits, nodes, "w_mm", rng.integers(-100, 100, (C * 36, C * 36)), 0.004)
        nodes.append(helper.make_node(op, [fq, w], ["op_out"]))
        y = qdq(nodes, inits, "op_out", "op_out", 0.1, zp, qtype)
        inits.append(numpy_helper.from_array(np.array(shape, np.int64), "shp"))
        nodes.append(helper.make_node("Reshape", [y, "shp"], ["op_r"]))
        yq = qdq(nodes, inits, "op_r", "r", 0.1, zp, qtype)
        out_c = C
    else:
        attrs = {}
        if op == "AveragePool":
            attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}
        elif op == "MaxPool":
            attrs = {"kernel_shape": [2, 2], "strides": [1, 1], "pads": [0, 0, 1, 1]}
        elif op == "Concat":
            attrs = {"axis": 1}
        ins = [a] if b is None else [a, b]
        nodes.append(helper.make_node(op, ins, ["op_out"], **attrs))
        out_c = 2 * C if op == "Concat" else C
        # MaxPool: the input's scale and zero point, so it runs on the integers
        yq = qdq(nodes, inits, "op_out", "op_out", 0.07 if op != "MaxPool" else 0.05,
                 zp if op != "Sigmoid" else (-128 if qtype == np.int8 else 0), qtype)
    w = const_dq(inits, nodes, "w_c", rng.integers(-100, 100, (C, out_c, 1, 1)), 0.01)
    nodes.append(helper.make_node("Conv", [yq, w], ["conv"]))
    yq = qdq(nodes, inits, "conv", "conv", 0.2, zp, qtype)
    nodes.append(helper.make_node("Identity", [yq], ["y"]))
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)]
    if b is not None:
        ins.append(helper.make_tensor_value_info("x2", TensorProto.FLOAT, shape))
    g = helper.make_graph(nodes, "m0_" + op, ins,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


OPS = ["Add", "Mul", "AveragePool", "GlobalAveragePool", "MaxPool", "Concat", "Sigmoid",
       "MatMul", "Gemm"]


def run(cmd, cwd=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd)
    return p.returncode == 0, p.stdout.decode("utf-8", "replace")


def model_cflags(out):
    """MODEL_CFLAGS of NAME.mk, with $(MODEL_DIR) replaced."""
    flags = []
    with open(os.path.join(out, "model.mk")) as f:
        for line in f:
            m = re.match(r"MODEL_CFLAGS\s*(:=|\+=)\s*(.*)", line)
            if m and "$(MODEL_WEIGHTS_SECTION)" not in line and "$(MODEL_ARENA_SECTION)" not in line:
                flags += m.group(2).replace("$(MODEL_DIR)", out).split()
    return flags


def call_graph(objs):
    """{function: set of called symbols} from objdump -dr of the objects."""
    calls, cur = {}, None
    for obj in objs:
        ok, text = run(["arm-none-eabi-objdump", "-dr", obj])
        if not ok:
            raise RuntimeError("objdump %s: %s" % (obj, text.strip()[:200]))
        for line in text.splitlines():
            m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
            if m:  # k1_conv.constprop.0, .isra.0, .part.0: parts of k1_conv
                cur = m.group(1).split(".")[0]
                calls.setdefault(cur, set())
                continue
            if cur is None:
                continue
            m = re.search(r"R_ARM_(THM_CALL|THM_JUMP\d+|CALL|JUMP24|THM_PC22)\s+(\S+)", line)
            if m:
                calls[cur].add(re.sub(r"[+-]0x[0-9a-f]+$", "", m.group(2)).split(".")[0])
                continue
            m = re.search(r"\s(bl|blx|b\.w|b)\s+[0-9a-f]+ <([^+>]+)(\+0x[0-9a-f]+)?>", line)
            if m and m.group(2).split(".")[0] != cur:
                calls[cur].add(m.group(2).split(".")[0])
    return calls


def float_calls(fn, calls):
    """The forbidden symbols fn reaches, with the path to the first one."""
    seen, stack, found = {fn}, [(fn, [fn])], []
    while stack:
        f, path = stack.pop()
        for c in sorted(calls.get(f, ())):
            if FORBIDDEN.match(c):
                found.append(" -> ".join(path + [c]))
            elif c not in seen:
                seen.add(c)
                stack.append((c, path + [c]))
    return found


def check(tvmcc, onnx_path, w, selftest=False):
    """None when every integer kernel is float-free, else the failure.
    selftest: check the QuantizeLinear kernels instead and return their
    float calls (a list) or the failure (a string)."""
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    out = os.path.join(w, "out")
    ok, text = run([tvmcc, onnx_path, "-t", "cortex-m0", "-o", out, "--name", "model"])
    if not ok:
        return "compile: " + text.strip().splitlines()[-1][:200] if text.strip() else "compile"
    flags = model_cflags(out)
    if "-mcpu=cortex-m0" not in flags or "-mfloat-abi=soft" not in flags:
        return "model.mk: MODEL_CFLAGS without -mcpu=cortex-m0 -mfloat-abi=soft: %s" % flags
    objs = []
    for src in ("model.c", "tvmrt.c"):
        obj = os.path.join(w, src[:-2] + ".o")
        ok, text = run(["arm-none-eabi-gcc"] + flags + ["-fno-inline", "-fno-ipa-icf", "-ffunction-sections", "-c",
                                                        os.path.join(out, src), "-o", obj])
        if not ok:
            return "cc %s: %s" % (src, text.strip()[:200])
        objs.append(obj)
    calls = call_graph(objs)
    with open(os.path.join(out, "model.json")) as f:
        kernels = json.load(f)["kernels"]
    checked, bad, qkern, names = 0, [], [], []
    for k in kernels:
        ops = {n["op"] for n in k["nodes"]}
        if k["name"] not in calls:
            if selftest or not (ops & FLOAT_OPS):
                return "kernel %s not found as a function in model.o" % k["name"]
            continue
        if selftest:
            if "QuantizeLinear" in ops:
                qkern.append((k["name"], float_calls(k["name"], calls)))
            continue
        if ops & FLOAT_OPS:
            continue
        checked += 1
        names.append(k["name"])
        found = float_calls(k["name"], calls)
        if found:
            bad.append("%s (%s): %s" % (k["name"], "+".join(sorted(ops)), found[0]))
    if selftest:
        return qkern or "no QuantizeLinear kernel"
    if bad:
        return "%d of %d integer kernels call float/64-bit division routines: %s" % (
            len(bad), checked, "; ".join(bad[:3]))
    if checked == 0:
        return "no integer kernel in NAME.json (nothing checked)"
    return (checked, len(kernels), " ".join(names))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    tvmcc = os.path.abspath(args.tvmcc)
    missing = [t for t in ("arm-none-eabi-gcc", "arm-none-eabi-objdump") if not shutil.which(t)]
    if missing:
        print("SKIP m0-float-free: %s not installed (scripts/deps.sh test)" % ", ".join(missing))
        print("0 passed, 0 failed")
        return 0
    os.makedirs(args.work, exist_ok=True)
    cases = [(n, os.path.join(args.models, n + ".onnx")) for n in SUITE]
    for op in OPS:
        for tag, qt in (("s8", np.int8), ("u8", np.uint8)):
            p = os.path.join(args.work, "op_%s.%s.onnx" % (op.lower(), tag))
            op_model(op, qt, p)
            cases.append(("op_%s.%s" % (op.lower(), tag), p))
    passed = failed = 0
    # self-test: the checker must see the float arithmetic of a QuantizeLinear kernel
    res = check(tvmcc, os.path.join(args.models, "conv3x3.s8.onnx"),
                os.path.join(args.work, "selftest"), selftest=True)
    if isinstance(res, str):
        print("FAIL m0-float-free selftest: %s" % res)
        failed += 1
    elif all(found for _, found in res):
        print("PASS m0-float-free selftest: the QuantizeLinear kernel is flagged (%s)" %
              "; ".join("%s: %s" % (k, f[0]) for k, f in res))
        passed += 1
    else:
        print("FAIL m0-float-free selftest: no soft-float call found in the QuantizeLinear "
              "kernel(s) %s: the checker misses them" % [k for k, f in res if not f])
        failed += 1
    for name, path in cases:
        if not os.path.exists(path):
            print("FAIL m0-float-free %s: %s missing (test/qdq/run.sh writes it)" % (name, path))
            failed += 1
            continue
        res = check(tvmcc, path, os.path.join(args.work, name))
        if isinstance(res, tuple):
            print("PASS m0-float-free %s: %d integer kernels of %d float-free (%s)" % ((name,) + res))
            passed += 1
            shutil.rmtree(os.path.join(args.work, name), ignore_errors=True)
        else:
            print("FAIL m0-float-free %s: %s" % (name, res))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
