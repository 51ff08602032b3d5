#!/usr/bin/env python3
"""String tensors and StringNormalizer beyond the backend suite: ASCII case
mapping that keeps other bytes, case-insensitive stopwords, the run-time
statuses (a count that differs from the declared output shape, strings
longer than the --string-bytes pool) and the compile-time refusals (no
declared shape with stopwords, a string reaching another operator).

Each case builds a model with onnx.helper, compiles it with tvmcc, builds
the C with test/driver.c and runs it on NUL-separated strings. Prints
PASS/FAIL per case and, last, "N passed, N failed"."""
import argparse
import os
import subprocess
import sys

from onnx import TensorProto, helper
from caserun import run_cases

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
S = TensorProto.STRING
TVMRT_ERR_SHAPE = 0x202
TVMRT_ERR_STRING_POOL = 0x203


def model(x_dims, y_dims, **attrs):
    node = helper.make_node("StringNormalizer", ["x"], ["y"], name="norm", **attrs)
    g = helper.make_graph([node], "strings", [helper.make_tensor_value_info("x", S, x_dims)],
                          [helper.make_tensor_value_info("y", S, y_dims)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def add_strings():
    node = helper.make_node("Add", ["x", "x"], ["y"], name="add_strings")
    g = helper.make_graph([node], "strings", [helper.make_tensor_value_info("x", S, [2])],
                          [helper.make_tensor_value_info("y", S, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def passthrough():
    g = helper.make_graph([], "strings", [helper.make_tensor_value_info("x", S, [2])],
                          [helper.make_tensor_value_info("x", S, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def one_node(node, opset):
    g = helper.make_graph([node], "strings", [helper.make_tensor_value_info("x", S, [3])],
                          [helper.make_tensor_value_info("y", S, [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid("ai.onnx.ml", 2)])
    m.ir_version = 8
    return m


CONCAT = one_node(helper.make_node("StringConcat", ["x", "x"], ["y"], name="concat"), 20)
LABELS = one_node(helper.make_node("LabelEncoder", ["x"], ["y"], name="labels",
                                   domain="ai.onnx.ml", keys_strings=["b", "a", "\u00e9"],
                                   values_strings=["B", "A", "E"], default_string="?"), 13)


# name, model, tvmcc flags, input strings, then either the expected output
# strings, ("status", code) or ("compile", words the error must contain)
CASES = [
    ("upper_keeps_utf8", model([3], [3], case_change_action="UPPER"), [],
     [b"caf\xc3\xa9", b"Zebra-9", b""], [b"CAF\xc3\xa9", b"ZEBRA-9", b""]),
    ("lower_insensitive_stopwords",
     model([5], [2], case_change_action="LOWER", stopwords=["THE", "a"]), [],
     [b"The", b"Quick", b"A", b"fox", b"the"], [b"quick", b"fox"]),
    ("sensitive_stopwords_2d",
     model([1, 4], [1, 3], is_case_sensitive=1, stopwords=["x"]), [],
     [b"x", b"X", b"y", b"xx"], [b"X", b"y", b"xx"]),
    ("all_removed_gives_empty", model([3], [1], stopwords=["a"]), [],
     [b"a", b"A", b"a"], [b""]),
    ("count_differs_from_declared", model([3], [2], stopwords=["a"]), [],
     [b"x", b"b", b"c"], ("status", TVMRT_ERR_SHAPE)),
    ("pool_too_small", model([2], [2], case_change_action="UPPER"), ["--string-bytes", "4"],
     [b"abcdef", b"g"], ("status", TVMRT_ERR_STRING_POOL)),
    ("pool_just_fits", model([2], [2], case_change_action="UPPER"), ["--string-bytes", "4"],
     [b"abcd", b"fg"], [b"ABCD", b"FG"]),
    ("concat_self", CONCAT, [], [b"ab", b"", b"\xc3\xa9"], [b"abab", b"", b"\xc3\xa9\xc3\xa9"]),
    ("concat_pool_too_small", CONCAT, ["--string-bytes", "2"], [b"ab", b"", b"c"],
     ("status", TVMRT_ERR_STRING_POOL)),
    ("label_strings", LABELS, [], [b"a", b"zz", b"\xc3\xa9"], [b"A", b"?", b"E"]),
    ("no_declared_shape", model([3], ["n"], stopwords=["a"]), [],
     [], ("compile", ["norm", "strings left"])),
    ("string_into_add", add_strings(), [], [], ("compile", ["add_strings", "string tensor"])),
    ("string_passthrough", passthrough(), [], [], ("compile", ["'x'", "not written by"])),
]


def run_case(name, m, flags, strings, want, args):
    w = os.path.join(args.work, name)
    os.makedirs(w, exist_ok=True)
    path = os.path.join(w, "model.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    out = os.path.join(w, "out")
    subprocess.run(["rm", "-rf", out])
    p = subprocess.run([args.tvmcc, path, "-o", out] + flags, capture_output=True, text=True)
    if isinstance(want, tuple) and want[0] == "compile":
        if p.returncode != 1:
            return "compile exit %d, want 1" % p.returncode
        if os.path.exists(out):
            return "output directory left behind"
        missing = [word for word in want[1] if word not in p.stderr]
        return "message lacks %s: %s" % (missing, p.stderr.strip()) if missing else None
    if p.returncode != 0:
        return "compile: " + p.stderr.strip()
    srcs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
    exe = os.path.join(w, "driver")
    p = subprocess.run([args.cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1",
                        "-I", out] + srcs + [os.path.join(ROOT, "test", "driver.c"), "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return "cc: " + p.stderr.strip().splitlines()[0]
    inp, outp = os.path.join(w, "in.bin"), os.path.join(w, "out.bin")
    with open(inp, "wb") as f:
        f.write(b"".join(s + b"\0" for s in strings))
    p = subprocess.run([exe, inp, "-o", outp], capture_output=True, text=True, timeout=60)
    if isinstance(want, tuple):
        tag = "status %d" % want[1]
        if p.returncode == 0 or tag not in p.stderr:
            return "run: want %s, got exit %d: %s" % (tag, p.returncode, p.stderr.strip())
        return None
    if p.returncode != 0:
        return "run: " + p.stderr.strip()
    got = open(outp, "rb").read()
    exp = b"".join(s + b"\0" for s in want)
    return None if got == exp else "output %r, want %r" % (got, exp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", default=os.path.join(ROOT, "tvmcc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "strings"))
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = ap.parse_args()
    return run_cases(CASES, lambda c: run_case(*c, args), lambda c: c[0])


if __name__ == "__main__":
    sys.exit(main())
