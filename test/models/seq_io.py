#!/usr/bin/python3
"""Sequence and optional graph inputs and outputs (issue 17), end to end.

Each case builds a model with onnx.helper, compiles it with tvmcc and the
options of docs/user-guide.md (Sequences and optionals), builds the emitted
C with test/driver.c on the host (the conformance warning flags), runs it
and compares every output buffer with numpy. The cases cover what the ONNX
test suite does not: elements of different shapes, SequenceInsert at a
run-time position (a stacked sequence split into output buffers after
inference), SplitToSequence with a constant split, an absent and a present
optional input folded through OptionalHasElement into an If, and NAME.json's
tags.

    test/models/seq_io.py --tvmcc TVMCC --work DIR [-k SUBSTRING]

Prints PASS/FAIL per case and, last, "N passed, N failed".
"""
import argparse
import json
import os
import sys

import numpy as np
from caserun import run, run_cases
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CC_WARN = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Wconversion", "-Wsign-conversion",
           "-Wdouble-promotion", "-Wshadow", "-Wvla", "-Werror"]
F = TensorProto.FLOAT


def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.save(m, path)


def seq_vi(name, shape):
    return helper.make_tensor_sequence_value_info(name, F, shape)


def opt_vi(name, shape):
    return helper.make_value_info(name, helper.make_optional_type_proto(
        helper.make_tensor_type_proto(F, shape)))


def cases():
    """(name, graph, tvmcc options, [input arrays], [expected output arrays],
    {json key checks})"""
    rng = np.random.RandomState(17)
    out = []
    # elements of different shapes, concatenated; the sequence itself out
    a, b, c = (rng.rand(2, n).astype(np.float32) for n in (3, 1, 4))
    g = helper.make_graph(
        [helper.make_node("ConcatFromSequence", ["xs"], ["cat"], name="cat", axis=1),
         helper.make_node("Identity", ["xs"], ["ys"], name="pass_on")],
        "g", [seq_vi("xs", [2, "W"])], [helper.make_tensor_value_info("cat", F, None),
                                        seq_vi("ys", None)])
    out.append(("concat_mixed", g, ["--sequence-length", "xs=3", "--input-shape", "xs[0]=2,3",
                                    "--input-shape", "xs[1]=2,1", "--input-shape", "xs[2]=2,4"],
                [a, b, c], [np.concatenate([a, b, c], axis=1), a, b, c],
                {"inputs": ["xs[0]", "xs[1]", "xs[2]"],
                 "outputs": ["cat", "ys[0]", "ys[1]", "ys[2]"]}))
    # SequenceInsert at a run-time position: a stacked sequence output
    x0, x1, t = (rng.rand(3).astype(np.float32) for _ in range(3))
    g = helper.make_graph(
        [helper.make_node("SequenceInsert", ["xs", "t", "pos"], ["ys"], name="ins")], "g",
        [seq_vi("xs", [3]), helper.make_tensor_value_info("t", F, [3]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, [])], [seq_vi("ys", None)])
    for p in (0, 1, 2, -2):
        lst = [x0, x1]
        lst.insert(p if p >= 0 else p + 2, t)
        out.append(("insert_runtime_pos%d" % p, g, ["--sequence-length", "xs=2"],
                    [x0, x1, t, np.array(p, np.int64)], lst,
                    {"outputs": ["ys[0]", "ys[1]", "ys[2]"]}))
    # SplitToSequence with a constant split: a sequence output
    d = rng.rand(2, 5).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("SplitToSequence", ["d", "sp"], ["parts"], name="split", axis=1)],
        "g", [helper.make_tensor_value_info("d", F, [2, 5])], [seq_vi("parts", None)],
        [numpy_helper.from_array(np.array([2, 3], np.int64), "sp")])
    out.append(("split_const", g, [], [d], [d[:, :2], d[:, 2:]], {}))
    # an optional input decides an If at compile time
    then_g = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["o"], ["got"], name="get"),
         helper.make_node("Add", ["got", "x"], ["r_then"], name="add")], "then", [],
        [helper.make_tensor_value_info("r_then", F, [4])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["r_else"], name="neg")], "else", [],
        [helper.make_tensor_value_info("r_else", F, [4])])
    g = helper.make_graph(
        [helper.make_node("OptionalHasElement", ["o"], ["has"], name="has"),
         helper.make_node("If", ["has"], ["y"], name="if_has", then_branch=then_g,
                          else_branch=else_g)], "g",
        [helper.make_tensor_value_info("x", F, [4]), opt_vi("o", [4])],
        [helper.make_tensor_value_info("y", F, [4])])
    x, o = rng.rand(4).astype(np.float32), rng.rand(4).astype(np.float32)
    out.append(("optional_present", g, [], [x, o], [x + o], {"inputs": ["x", "o"]}))
    out.append(("optional_absent", g, ["--optional-absent", "o"], [x], [-x],
                {"inputs": ["x"], "absent_inputs": ["o"]}))
    return out


def check(case, args):
    name, graph, opts, ins, exps, keys = case
    w = os.path.join(args.work, name)
    os.makedirs(w, exist_ok=True)
    model = os.path.join(w, "model.onnx")
    save(graph, model)
    outdir = os.path.join(w, "out")
    ok, text = run([args.tvmcc, model, "-o", outdir] + opts, os.path.join(w, "compile.log"), 60)
    if not ok:
        return "compile: " + text
    with open(os.path.join(outdir, "model.json")) as f:
        meta = json.load(f)
    for key, want in keys.items():
        got = meta.get(key)
        if key in ("inputs", "outputs"):
            got = [e["name"] for e in got]
        if got != want:
            return "model.json %s: %s, want %s" % (key, got, want)
    srcs = [os.path.join(outdir, f) for f in sorted(os.listdir(outdir)) if f.endswith(".c")]
    ok, text = run([args.cc] + CC_WARN + ["-O1", "-I", outdir] + srcs +
                   [os.path.join(ROOT, "test", "driver.c"), "-lm", "-o",
                    os.path.join(w, "driver")], os.path.join(w, "cc.log"), 120)
    if not ok:
        return "cc: " + text
    in_files, out_files = [], []
    for k, a in enumerate(ins):
        in_files.append(os.path.join(w, "in%d.bin" % k))
        a.tofile(in_files[-1])
    for k in range(len(exps)):
        out_files.append(os.path.join(w, "out%d.bin" % k))
    ok, text = run([os.path.join(w, "driver")] + in_files + ["-o"] + out_files,
                   os.path.join(w, "run.log"), 60)
    if not ok:
        return "run: " + text
    for k, e in enumerate(exps):
        got = np.fromfile(out_files[k], dtype=e.dtype)
        if got.size != e.size or not np.allclose(got, e.reshape(-1), rtol=1e-5, atol=1e-6):
            return "output %d: %s, want %s" % (k, got.tolist(), e.reshape(-1).tolist())
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tvmcc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cc", default=os.environ.get("CC_HOST", "cc"))
    ap.add_argument("-k", default="")
    args = ap.parse_args()
    items = [c for c in cases() if args.k in c[0]]
    return run_cases(items, lambda c: check(c, args), lambda c: "seq_io " + c[0])


if __name__ == "__main__":
    sys.exit(main())
