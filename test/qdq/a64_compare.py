#!/usr/bin/python3
"""AArch64 int8 kernels: the same outputs, byte for byte, three ways.

    a64_compare.py --tvmcc PATH --models DIR --work DIR [--filter RE] [-j N]

For each int8/uint8 model of the QDQ suite that the aarch64 target runs
(run.py's ARM_SAMPLE and EXTRA["aarch64"]), on inputs drawn as run.py draws
them:

  sdot   tvmcc -t aarch64, built with aarch64-linux-gnu-gcc
         -march=armv8.2-a+dotprod (the SDOT branch of tvmcc_sdot; the
         binary is checked to hold SDOT instructions when model.c calls
         tvmcc_sdot), run under qemu-aarch64;
  smlal  the same C built for plain Armv8.0 (SMULL + SADALP), run under
         qemu-aarch64;
  host   tvmcc -t c (the portable C, NCHW), built with the host cc.

All three use run.py's warning flags (-Werror) and -O1. PASS when the
output files of the three are identical, byte for byte. Prints SKIP with
the reason (and exits 0) when qemu-aarch64 or the cross compiler is
missing; last "N passed, N failed".
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import threading
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import json  # noqa: E402

import gen_models  # noqa: E402
from quantize import draw  # noqa: E402
from run import ARM_SAMPLE, CC_WARN, EXTRA, first_line, run  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402


def one(name, args):
    """None when the three agree, else the reason."""
    w = os.path.join(args.work, name)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    with open(os.path.join(args.models, name + ".json")) as f:
        meta = json.load(f)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1000)
    ins = []
    for k, spec in enumerate(meta["inputs"]):
        p = os.path.join(w, "in_%d.bin" % k)
        draw(spec, rng, 1).tofile(p)
        ins.append(os.path.basename(p))
    model = os.path.join(args.models, name + ".onnx")
    n_out = len(onnx.load(model).graph.output)
    driver = os.path.join(ROOT, "test", "driver.c")
    outs = {}
    for build, target in (("sdot", "aarch64"), ("smlal", "aarch64"), ("host", "c")):
        d = os.path.join(w, build)
        out = os.path.join(d, "out")
        os.makedirs(d)
        if build != "smlal":
            ok, text = run([args.tvmcc, model, "-o", out, "--name", "model", "-t", target],
                           os.path.join(d, "compile.log"), 180)
            if not ok:
                return "%s: compile: %s" % (build, first_line(text))
            src_dir = out
            if build == "sdot":
                a64_out = out
        else:
            src_dir = a64_out
        srcs = sorted(os.path.join(src_dir, f) for f in os.listdir(src_dir) if f.endswith(".c"))
        ys = ["y_%d.bin" % i for i in range(n_out)]
        rel = [os.path.relpath(os.path.join(w, i), d) for i in ins]
        if build == "host":
            cc = [args.cc]
            runner = ["./driver"]
        else:
            cc = ["aarch64-linux-gnu-gcc", "-static"] + (
                ["-march=armv8.2-a+dotprod"] if build == "sdot" else [])
            runner = ["qemu-aarch64", "./driver"]
        ok, text = run(cc + CC_WARN + ["-O1", "-I", src_dir] + srcs + [driver, "-lm", "-o", "driver"],
                       os.path.join(d, "cc.log"), 300, cwd=d)
        if not ok:
            return "%s: cc: %s" % (build, first_line(text))
        if build == "sdot" and "= tvmcc_sdot(n_a" in open(os.path.join(src_dir, "model.c")).read():
            dis = subprocess.run(["aarch64-linux-gnu-objdump", "-d", os.path.join(d, "driver")],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
            if not re.search(r"\tsdot\t", dis):
                return "sdot: model.c calls tvmcc_sdot but the binary has no SDOT"
        ok, text = run(runner + rel + ["-o"] + ys, os.path.join(d, "run.log"), 300, cwd=d)
        if not ok:
            return "%s: run: %s" % (build, first_line(text))
        outs[build] = [open(os.path.join(d, y), "rb").read() for y in ys]
    for build in ("smlal", "host"):
        if outs[build] != outs["sdot"]:
            return "outputs differ: sdot and %s" % build
    shutil.rmtree(w, ignore_errors=True)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--filter", default="")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--cc", default=os.environ.get("CC_HOST", "gcc"))
    args = ap.parse_args()
    args.tvmcc = os.path.abspath(args.tvmcc)
    args.work = os.path.abspath(args.work)
    missing = [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64", "aarch64-linux-gnu-objdump")
               if shutil.which(t) is None]
    if missing:
        print("SKIP qdq a64 compare: %s not installed (scripts/deps.sh test)" % ", ".join(missing))
        print("0 passed, 0 failed")
        return 0
    plan = ["%s.%s" % it for it in gen_models.plan(False)]
    names = [n for n in plan if (n in ARM_SAMPLE or n in EXTRA["aarch64"]) and
             re.search(r"\.(s8|u8|fuse|pt)$", n) and re.search(args.filter, n)]
    lock = threading.Lock()
    counts = [0, 0]

    def job(n):
        try:
            why = one(n, args)
        except Exception as e:  # a broken case is a failure, not a crash
            why = "%s: %s" % (type(e).__name__, e)
        with lock:
            counts[why is not None] += 1
            print("%s %s a64 compare%s" % ("FAIL" if why else "PASS", n, ": " + why if why else
                                           " (sdot = smlal = host -t c, byte for byte)"), flush=True)

    os.makedirs(args.work, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
        list(pool.map(job, names))
    print("%d passed, %d failed" % (counts[0], counts[1]))
    return 1 if counts[1] else 0


if __name__ == "__main__":
    sys.exit(main())
