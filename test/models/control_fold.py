#!/usr/bin/python3
"""Shape-dependent control flow and --input-value, checked against onnxruntime.

    control_fold.py [--tvmcc PATH] [--work DIR] [--targets host,cortex-m4,aarch64]
                    [-k SUBSTRING]

The model (built with onnx.helper, the pattern of PyTorch's exports of
models such as silero VAD) has:

  - an If whose condition is Equal(Gather(Shape(x), 0), 1), the exporter's
    rendering of `if x.size(0) == 1:`, with a second such If nested in its
    then branch; the untaken branches hold a Conv whose rank-3 weight does
    not fit the rank-4 input, so they cannot be inferred: both Ifs must fold
    before inference sees them;
  - an If on a value computed at run time (the sign of a mean), whose
    branches are compiled both and selected with Where; its then branch
    nests one more shape If, which folds;
  - an If on Equal(sr, 16000), sr being a graph input (the sample rate):
    run time by default, folded with --input-value sr=16000 (or 8000), when
    sr also leaves the generated API (model.h, model.json).

Each case is compiled for each target, built with test/driver.c (host cc;
arm-none-eabi-gcc for Cortex-M4, run under qemu-system-arm -M mps2-an386
with semihosting; aarch64-linux-gnu-gcc -static, run under qemu-aarch64),
run on random input and compared with onnxruntime-node fed the same input
(sr included): max|diff| <= 1e-3 * max|reference|. The graph dumped after
the passes must hold no node from an untaken branch, and a Where exactly
where a condition is only known at run time.

Prints PASS/FAIL per case and target and, last, "N passed, N failed";
exits 1 when one failed. Work files: build/control_fold/CASE.TARGET/.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
from caserun import run, run_cases
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

F = TensorProto.FLOAT
I64 = TensorProto.INT64
ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
CC_WARN = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Wconversion", "-Wsign-conversion",
           "-Wdouble-promotion", "-Wshadow", "-Wvla", "-Werror"]


def const(name, array):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(array), name))


def shape_cond(prefix, x, axis, want):
    """Nodes computing Equal(Gather(Shape(x), axis), want) into prefix+'cond'."""
    return [
        helper.make_node("Shape", [x], [prefix + "shape"], name=prefix + "Shape"),
        const(prefix + "axis", np.array(axis, dtype=np.int64)),
        helper.make_node("Gather", [prefix + "shape", prefix + "axis"], [prefix + "dim"],
                         name=prefix + "Gather", axis=0),
        const(prefix + "want", np.array(want, dtype=np.int64)),
        helper.make_node("Equal", [prefix + "dim", prefix + "want"], [prefix + "cond"],
                         name=prefix + "Equal"),
    ]


def bad_conv(prefix, x, out):
    """A branch body that cannot be inferred for a rank-4 x: a rank-3 weight."""
    w = np.full((4, 2, 3), 0.5, dtype=np.float32)
    return helper.make_graph(
        [const(prefix + "w", w),
         helper.make_node("Conv", [x, prefix + "w"], [out], name=prefix + "Conv")],
        prefix + "graph", [], [helper.make_tensor_value_info(out, F, None)])


def model():
    rs = np.random.RandomState(7)
    w1 = (rs.standard_normal((4, 2, 3, 3)) * 0.3).astype(np.float32)
    b1 = (rs.standard_normal(4) * 0.1).astype(np.float32)
    w2 = (rs.standard_normal((4, 4, 1, 1)) * 0.3).astype(np.float32)
    # inner If (in the outer then branch): x.size(1) == 2 -> a 3x3 Conv
    inner_then = helper.make_graph(
        [const("it/w", w1), const("it/b", b1),
         helper.make_node("Conv", ["x", "it/w", "it/b"], ["it/y"], name="it/Conv",
                          pads=[1, 1, 1, 1])],
        "inner_then", [], [helper.make_tensor_value_info("it/y", F, None)])
    inner = helper.make_node("If", ["ot/cond"], ["ot/y"], name="If_inner",
                             then_branch=inner_then,
                             else_branch=bad_conv("untaken/inner_else/", "x", "ie/y"))
    outer_then = helper.make_graph(
        shape_cond("ot/", "x", 1, 2) + [inner], "outer_then", [],
        [helper.make_tensor_value_info("ot/y", F, None)])
    outer = helper.make_node("If", ["cond0"], ["y"], name="If_outer", then_branch=outer_then,
                             else_branch=bad_conv("untaken/outer_else/", "x", "oe/y"))
    # run-time If: mean(y) > 0 ? Relu(Conv1x1(y)) : -y; its then branch holds
    # one more shape If (y.size(1) == 4)
    rt_then_inner = helper.make_node(
        "If", ["rt/cond"], ["rt/y"], name="If_rt_shape",
        then_branch=helper.make_graph(
            [const("rti/w", w2),
             helper.make_node("Conv", ["y", "rti/w"], ["rti/c"], name="rti/Conv"),
             helper.make_node("Relu", ["rti/c"], ["rti/y"], name="rti/Relu")],
            "rt_inner_then", [], [helper.make_tensor_value_info("rti/y", F, None)]),
        else_branch=bad_conv("untaken/rt_else/", "y", "rte/y"))
    rt_then = helper.make_graph(shape_cond("rt/", "y", 1, 4) + [rt_then_inner], "rt_then", [],
                                [helper.make_tensor_value_info("rt/y", F, None)])
    rt_else = helper.make_graph([helper.make_node("Neg", ["y"], ["re/y"], name="re/Neg")],
                                "rt_else", [], [helper.make_tensor_value_info("re/y", F, None)])
    # sample-rate If: sr == 16000 ? z * 2 : z + 1
    sr_then = helper.make_graph(
        [const("st/k", np.array(2.0, dtype=np.float32)),
         helper.make_node("Mul", ["z", "st/k"], ["st/y"], name="sr16k/Mul")],
        "sr_then", [], [helper.make_tensor_value_info("st/y", F, None)])
    sr_else = helper.make_graph(
        [const("se/k", np.array(1.0, dtype=np.float32)),
         helper.make_node("Add", ["z", "se/k"], ["se/y"], name="sr8k/Add")],
        "sr_else", [], [helper.make_tensor_value_info("se/y", F, None)])
    nodes = shape_cond("", "x", 0, 1)[:-1] + [
        helper.make_node("Equal", ["dim", "want"], ["cond0"], name="Equal_0"),
        outer,
        helper.make_node("ReduceMean", ["y"], ["mean"], name="ReduceMean", keepdims=0),
        const("zero", np.array(0.0, dtype=np.float32)),
        helper.make_node("Greater", ["mean", "zero"], ["pos"], name="Greater"),
        helper.make_node("If", ["pos"], ["z"], name="If_runtime", then_branch=rt_then,
                         else_branch=rt_else),
        const("sr16k", np.array(16000, dtype=np.int64)),
        helper.make_node("Equal", ["sr", "sr16k"], ["is16k"], name="Equal_sr"),
        helper.make_node("If", ["is16k"], ["out"], name="If_sr", then_branch=sr_then,
                         else_branch=sr_else),
    ]
    g = helper.make_graph(nodes, "control_fold",
                          [helper.make_tensor_value_info("x", F, None),
                           helper.make_tensor_value_info("sr", I64, [])],
                          [helper.make_tensor_value_info("out", F, [1, 4, 6, 6])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    # no onnx.checker: it wants a shape on every graph input
    return m


class Case:
    def __init__(self, name, sr, bind, seed, wheres):
        self.name, self.sr, self.bind, self.seed, self.wheres = name, sr, bind, seed, wheres


# wheres: Where nodes expected after the passes (If_runtime's, and If_sr's
# unless sr is bound). Seed 1 gives a negative mean (If_runtime's else
# branch), seed 4 a positive one (then branch).
CASES = [
    Case("runtime_neg_sr16000", 16000, None, 1, 2),
    Case("runtime_pos_sr8000", 8000, None, 4, 2),
    Case("bound_sr16000", 16000, "16000", 1, 1),
    Case("bound_sr8000", 8000, "8000", 4, 1),
]


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no message)"




def feeds(case):
    rs = np.random.RandomState(case.seed)
    x = rs.standard_normal((1, 2, 6, 6)).astype(np.float32)
    if case.seed == 4:
        x = x - 1.5  # a positive mean after the first Conv for this seed
    return x, np.array(case.sr, dtype=np.int64)


def check(case, target, args, model_path):
    w = os.path.join(args.work, "%s.%s" % (case.name, target))
    subprocess.run(["rm", "-rf", w])
    os.makedirs(w)
    out = os.path.join(w, "out")
    cmd = [args.tvmcc, model_path, "-o", out, "--name", "model", "--dump-ir",
           "--input-shape", "x=1,2,6,6"]
    if target != "host":
        cmd += ["-t", target]
    if case.bind:
        cmd += ["--input-value", "sr=" + case.bind]
    ok, text = run(cmd, os.path.join(w, "compile.log"), 120)
    if not ok:
        return "compile: " + first_line(text)
    if "untaken" in text:
        return "a node or constant of an untaken branch is left: " + \
            first_line("\n".join(ln for ln in text.splitlines() if "untaken" in ln))
    wheres = len(re.findall(r"^n\d+ Where ", text, re.M))
    if wheres != case.wheres:
        return "%d Where nodes after the passes, want %d" % (wheres, case.wheres)
    with open(os.path.join(out, "model.h")) as f:
        header = f.read()
    with open(os.path.join(out, "model.json")) as f:
        meta = json.load(f)
    n_in = 1 if case.bind else 2
    if not re.search(r"#define MODEL_NUM_INPUTS +%d\b" % n_in, header):
        return "model.h does not define MODEL_NUM_INPUTS %d" % n_in
    names = [i["name"] for i in meta["inputs"]]
    if names != (["x"] if case.bind else ["x", "sr"]):
        return "model.json inputs are %s" % names

    x, sr = feeds(case)
    in_files = [os.path.join(w, "x.bin")]
    x.tofile(in_files[0])
    sr_file = os.path.join(w, "sr.bin")
    sr.tofile(sr_file)
    if not case.bind:
        in_files.append(sr_file)
    srcs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
    driver_c = os.path.join(ROOT, "test", "driver.c")
    rel_in = [os.path.relpath(p, w) for p in in_files]
    if target == "host":
        ok, text = run([args.cc] + CC_WARN + ["-O1", "-I", out] + srcs + [driver_c, "-lm", "-o",
                       os.path.join(w, "driver")], os.path.join(w, "cc.log"), 120)
        run_cmd = ["./driver"] + rel_in + ["-o", "y.bin"]
    elif target == "aarch64":
        ok, text = run(["aarch64-linux-gnu-gcc"] + CC_WARN + ["-O1", "-static", "-I", out] + srcs +
                       [driver_c, "-lm", "-o", os.path.join(w, "driver")],
                       os.path.join(w, "cc.log"), 120)
        run_cmd = ["qemu-aarch64", "./driver"] + rel_in + ["-o", "y.bin"]
    else:
        startup = os.path.join(w, "startup.o")
        ok, text = run(["arm-none-eabi-gcc"] + ARM_FLAGS + ["-std=c99", "-O1", "-c",
                       os.path.join(ROOT, "test", "arm", "startup.c"), "-o", startup],
                       os.path.join(w, "startup.log"), 120)
        if ok:
            ok, text = run(["arm-none-eabi-gcc"] + ARM_FLAGS + CC_WARN + ["-O1", "-I", out] +
                           srcs + [driver_c, startup, "--specs=rdimon.specs", "-nostartfiles",
                                   "-T", os.path.join(ROOT, "test", "arm", "mps2-an386.ld"),
                                   "-lm", "-o", os.path.join(w, "driver.elf")],
                           os.path.join(w, "cc.log"), 120)
        sh = ",".join(["enable=on,target=native,arg=driver"] +
                      ["arg=" + a for a in rel_in + ["-o", "y.bin"]])
        run_cmd = ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none",
                   "-semihosting-config", sh, "-kernel", "driver.elf"]
    if not ok:
        lines = [ln for ln in text.splitlines() if "error" in ln]
        return "cc: " + (lines[0] if lines else first_line(text))
    ok, text = run(run_cmd, os.path.join(w, "run.log"), 120, cwd=w)
    if not ok:
        return "run: " + first_line(text)
    ref = os.path.join(w, "ref.bin")
    ok, text = run(["node", os.path.join(HERE, "run_ort.js"), model_path,
                    "%s:float32:1,2,6,6" % in_files[0], "%s:int64:" % sr_file, "-o", ref],
                   os.path.join(w, "ort.log"), 120)
    if not ok:
        return "onnxruntime: " + first_line(text)
    r = np.fromfile(ref, dtype=np.float32).astype(np.float64)
    o = np.fromfile(os.path.join(w, "y.bin"), dtype=np.float32).astype(np.float64)
    if r.size != o.size or r.size != 4 * 36:
        return "%d output values, reference has %d" % (o.size, r.size)
    if not np.all(np.isfinite(o)):
        return "non-finite output"
    err, scale = np.abs(o - r).max(), np.abs(r).max()
    if err > 1e-3 * scale:
        return "max|diff| %.3g > 1e-3 * max|ref| %.3g" % (err, scale)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", default=os.environ.get("TVMCC", os.path.join(ROOT, "tvmcc")))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "control_fold"))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--targets", default="host,cortex-m4,aarch64")
    ap.add_argument("-k", default="", help="run only cases whose name contains this")
    args = ap.parse_args()
    args.tvmcc = os.path.abspath(args.tvmcc)
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    model_path = os.path.join(args.work, "control_fold.onnx")
    onnx.save(model(), model_path)
    items = [(c, t) for c in CASES if args.k in c.name for t in args.targets.split(",")]
    return run_cases(items, lambda it: check(it[0], it[1], args, model_path),
                     lambda it: "%s %s%s" % (it[0].name, it[1],
                                             " --input-value sr=" + it[0].bind
                                             if it[0].bind else ""))


if __name__ == "__main__":
    sys.exit(main())
