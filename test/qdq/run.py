#!/usr/bin/python3
"""The QDQ suite: generated quantized models, tvmcc against onnxruntime.

    run.py --tvmcc PATH --models DIR --work DIR [--targets host,cortex-m4,...]
           [--filter RE] [-j N] [--torchvision] [-v]

For every model of test/qdq/gen_models.py (DIR/NAME.VARIANT.onnx with its
NAME.VARIANT.json) and every target it runs on:

  1. draws the inputs from the calibration's distribution (fixed seed per
     model) and runs onnxruntime-node on them (test/models/run_ort.js, once
     per model: the reference of every target);
  2. compiles the model with tvmcc (`-t TARGET`; none for host), builds it
     with test/driver.c and runs it: host with cc; cortex-m4 and cortex-m7
     (hard float) and cortex-m0 (soft float, the AN385's Cortex-M3 runs it)
     with arm-none-eabi-gcc under qemu-system-arm with semihosting, as
     test/conformance/run.sh does; aarch64 with aarch64-linux-gnu-gcc -static
     under qemu-aarch64;
  3. compares each output in units of the scale of the last
     QuantizeLinear before it (the scale of the DequantizeLinear that
     writes it): PASS when every element is within 1 LSB
     (|diff| <= 1.0001 * scale; an int8/uint8 output: |diff| <= 1) and at
     least 99% of the elements are on the same quantized level
     (|diff| <= 0.001 * scale; integers equal). An output with no such
     scale is compared with |diff| <= 1e-3 * max|reference|.

Host runs every model; the other targets a sample (ARM_SAMPLE below).

Then (with host among the targets, unless --no-bitexact) the bit-exactness
of the integer kernels across targets, see bitexact() below: each
int8/uint8 QDQ model (variants s8, u8, pt, fuse) is also built from
`-t cortex-m4` on the host (`cortex-m4@host`, the portable branches of the
DSP code), from `-t cortex-m55` (`cortex-m55@host`, the portable form of the
Helium tile) and with x86-64-avx2 / x86-64-avx512 when the CPU has them
(reported against onnxruntime like the others); one line `NAME bitexact`
then requires the outputs of all of these and of every target that ran the
model (cortex-m4 under qemu: the SMLAD/SXTB16 branches) to be equal byte
for byte.
test/qdq/expected_failures.txt lists `NAME.VARIANT TARGET reason` (TARGET
may be `*`): such a failure is reported but does not fail the run.
Prints one PASS/FAIL line per model and target with the largest error in
LSB and the share of exact elements, SKIP lines for targets whose tools
are missing, and last "N passed, N failed". Work files:
WORK/NAME.VARIANT/ (inputs, reference) and WORK/NAME.VARIANT/TARGET/.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import zlib

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
from caserun import host_cpu_flags, run  # noqa: E402  (test/models/caserun.py)
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_models  # noqa: E402
from quantize import draw  # noqa: E402

CC_WARN = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Wconversion", "-Wsign-conversion",
           "-Wdouble-promotion", "-Wshadow", "-Wvla", "-Werror"]
ARM = {  # target: (gcc flags, qemu machine, linker script)
    "cortex-m4": (["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                  "mps2-an386", "mps2-an386.ld"),
    "cortex-m7": (["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
                  "mps2-an500", "mps2-an500.ld"),
    "cortex-m0": (["-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"],
                  "mps2-an385", "mps2-an386.ld"),
}
HOST_TARGETS = {"host", "c", "x86-64", "x86-64-avx2", "x86-64-avx512"}
# What the qemu targets run: a sample of the small models and dscnn, resnet8.
ARM_SAMPLE = ["conv3x3.s8", "conv_odd.s8", "conv_odd.u8", "conv_first3.s8", "conv_first3.u8", "conv_stride2.s8", "conv_dw.s8", "conv1x1.pt", "conv_relu.s8",
              "conv_clip6.fuse", "gemm.s8", "gemm_notrans.pt", "matmul.s8", "add_branches.s8",
              "mul.s8", "avgpool.s8", "gap.s8", "maxpool.s8", "concat.s8", "reshape_chain.s8",
              "sigmoid.s8", "hardswish.s8", "softmax.s8", "gather_embedding.s8", "split.s8",
              "resize_nearest.s8", "small_cnn.s8", "small_cnn.u8", "small_cnn.fuse",
              "dscnn.s8", "dscnn.fuse", "resnet8.s8", "resnet8.u8"]
EXTRA = {"cortex-m4": ["mobilenet.s8"], "aarch64": ["mobilenet.s8", "autoencoder.s8"]}
TOOLS = {"aarch64": ["aarch64-linux-gnu-gcc", "qemu-aarch64"]}
for _t in ARM:
    TOOLS[_t] = ["arm-none-eabi-gcc", "qemu-system-arm"]
DTYPES = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "int8": np.int8,
          "uint8": np.uint8, "int16": np.int16, "bool": np.bool_}
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64"}


def first_line(text, prefer="error"):
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if prefer in ln.lower():
            return ln[:200]
    return lines[0][:200] if lines else "(no message)"




class Model:
    def __init__(self, name, models_dir, work):
        self.name = name
        self.path = os.path.join(models_dir, name + ".onnx")
        with open(os.path.join(models_dir, name + ".json")) as f:
            self.meta = json.load(f)
        self.work = os.path.join(work, name)
        self.ref_error = None
        self.lock = threading.Lock()
        self.unfused = None
        self.in_files = []
        self.outputs = []   # [(name, dtype, scale or None)]
        self.ran = {}       # target: its output files, when its run exited 0
        self.planned = set()  # the (model, target) pairs of this run

    def prepare(self):
        """Inputs, reference outputs and the scale of every output."""
        os.makedirs(self.work, exist_ok=True)
        m = onnx.load(self.path)
        inits = {t.name: t for t in m.graph.initializer}
        prod = {o: n for n in m.graph.node for o in n.output}
        for o in m.graph.output:
            dtype = ONNX_DTYPES.get(o.type.tensor_type.elem_type, "float32")
            scale = None
            n = prod.get(o.name)
            if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in inits:
                s = numpy_helper.to_array(inits[n.input[1]])
                if s.size == 1:
                    scale = float(s.reshape(-1)[0])
            self.outputs.append((o.name, dtype, scale))
        rng = np.random.default_rng(zlib.crc32(self.name.encode()) + 1000)
        specs = []
        for k, spec in enumerate(self.meta["inputs"]):
            f = os.path.join(self.work, "in_%d.bin" % k)
            draw(spec, rng, 1).tofile(f)
            self.in_files.append(f)
            specs.append("%s:%s:%s" % (f, spec["dtype"], ",".join(str(d) for d in spec["shape"])))
        self.specs = specs
        refs = [os.path.join(self.work, "ref_%d.bin" % k) for k in range(len(self.outputs))]
        ok, text = run(["node", os.path.join(ROOT, "test", "models", "run_ort.js"), self.path] +
                       specs + ["-o"] + refs, os.path.join(self.work, "ort.log"), 300)
        if not ok:
            self.ref_error = "onnxruntime: " + first_line(text)


def unfused_reference(model):
    """The reference of onnxruntime without graph optimizations (the QDQ
    model computed as written, in float), once per model; None when it
    does not run."""
    with model.lock:
        if model.unfused is None:
            refs = [os.path.join(model.work, "ref_unfused_%d.bin" % k)
                    for k in range(len(model.outputs))]
            ok, _ = run(["node", os.path.join(HERE, "ort_run.js"), "disabled", model.path] +
                        model.specs + ["-o"] + refs, os.path.join(model.work, "ort_unfused.log"),
                        300)
            model.unfused = refs if ok else []
        return model.unfused or None


# the share of elements that must be on the same level (--min-exact)
MIN_EXACT = [99.0]


def compare(model, out_files, prefix="ref_"):
    """(failure or None, max LSB, % exact) over all outputs."""
    worst, exact, total, why = 0.0, 0, 0, None
    for k, (name, dtype, scale) in enumerate(model.outputs):
        r = np.fromfile(os.path.join(model.work, "%s%d.bin" % (prefix, k)),
                        DTYPES[dtype]).astype(np.float64)
        o = np.fromfile(out_files[k], DTYPES[dtype]).astype(np.float64)
        if r.size != o.size:
            return "output %s: %d values, reference has %d" % (name, o.size, r.size), 0, 0
        if not np.all(np.isfinite(o)):
            return "output %s: non-finite values" % name, 0, 0
        d = np.abs(o - r)
        if dtype != "float32":
            lsb, same = d, d == 0
        elif scale is not None:
            lsb, same = d / scale, d <= 1e-3 * scale
        else:
            tol = 1e-3 * max(np.abs(r).max(), 1e-30)
            lsb, same = d / tol, d <= tol
        m = float(lsb.max()) if lsb.size else 0.0
        if m > 1.0001 and why is None:
            i = int(np.argmax(lsb))
            why = "output %s: %.2f LSB at element %d (got %.6g, onnxruntime %.6g)" % (
                name, m, i, o[i], r[i])
        worst = max(worst, m)
        exact += int(same.sum())
        total += r.size
    pct = 100.0 * exact / total if total else 100.0
    if why is None and pct < MIN_EXACT[0]:
        why = "only %.2f%% of the elements exact (< %g%%)" % (pct, MIN_EXACT[0])
    return why, worst, pct


def build_and_run(model, target, args):
    w = os.path.join(model.work, target)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    out = os.path.join(w, "out")
    cmd = [args.tvmcc, model.path, "-o", out, "--name", "model"]
    if target != "host":
        cmd += ["-t", target.split("@")[0]]
    ok, text = run(cmd, os.path.join(w, "compile.log"), 180)
    if not ok:
        return "compile: " + first_line(text)
    srcs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".c"))
    driver_c = os.path.join(ROOT, "test", "driver.c")
    rel_in = [os.path.relpath(p, w) for p in model.in_files]
    outs = ["y_%d.bin" % k for k in range(len(model.outputs))]
    if target in HOST_TARGETS or target.endswith("@host"):
        cc = [args.cc] + (["-march=native"] if target.startswith("x86-64-") else [])
        ok, text = run(cc + CC_WARN + ["-O1", "-I", out] + srcs + [driver_c, "-lm", "-o", "driver"],
                       os.path.join(w, "cc.log"), 300, cwd=w)
        run_cmd, timeout = ["./driver"] + rel_in + ["-o"] + outs, 120
    elif target == "aarch64":
        ok, text = run(["aarch64-linux-gnu-gcc"] + CC_WARN + ["-O1", "-static", "-I", out] + srcs +
                       [driver_c, "-lm", "-o", "driver"], os.path.join(w, "cc.log"), 300, cwd=w)
        run_cmd, timeout = ["qemu-aarch64", "./driver"] + rel_in + ["-o"] + outs, 300
    else:
        flags, machine, ld = ARM[target]
        ok, text = run(["arm-none-eabi-gcc"] + flags + CC_WARN + ["-O1", "-I", out] + srcs +
                       [driver_c, args.startup[target], "--specs=rdimon.specs", "-nostartfiles",
                        "-T", os.path.join(ROOT, "test", "arm", ld), "-lm", "-o", "driver.elf"],
                       os.path.join(w, "cc.log"), 300, cwd=w)
        sh = ",".join(["enable=on,target=native,arg=driver"] +
                      ["arg=" + a for a in rel_in + ["-o"] + outs])
        run_cmd = ["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none",
                   "-semihosting-config", sh, "-kernel", "driver.elf"]
        timeout = 600
    if not ok:
        return "cc: " + first_line(text)
    ok, text = run(run_cmd, os.path.join(w, "run.log"), timeout, cwd=w)
    if not ok:
        return "run: " + first_line(text)
    with model.lock:
        model.ran[target] = [os.path.join(w, o) for o in outs]
    why, worst, pct = compare(model, [os.path.join(w, o) for o in outs])
    stats = "max %.2f LSB, %.2f%% exact" % (worst, pct)
    if why is None:
        for f in ("driver", "driver.elf"):
            if os.path.exists(os.path.join(w, f)):
                os.remove(os.path.join(w, f))
        return ("ok", stats)
    # Diagnosis: the same comparison with onnxruntime computing the QDQ
    # model unfused (float operators between DequantizeLinear and
    # QuantizeLinear), which is what the float path of tvmcc does.
    note = ""
    if unfused_reference(model):
        why2, worst2, pct2 = compare(model, [os.path.join(w, o) for o in outs], "ref_unfused_")
        note = "; against onnxruntime without graph optimizations: %s%.2f LSB, %.2f%% exact" % (
            "within the rule, " if why2 is None else "", worst2, pct2)
        if why2 is None and not ORT_INT8_EXACT[0]:
            # onnxruntime's fused int8 kernels on a host without VNNI (AVX2
            # only: u8 x s8 pairs summed in 16 bits, vpmaddubsw, which
            # saturates) are no reference; the QDQ model as written is
            return ("ok", "%s; onnxruntime optimized: %s, no VNNI on this host%s" % (stats, why, note))
    return "%s (%s%s)" % (why, stats, note)


# whether onnxruntime's optimized int8 kernels compute exact sums on this
# host (x86 with AVX-512 VNNI or AVX-VNNI, or not x86); main() sets it
ORT_INT8_EXACT = [True]


BITEXACT_VARIANTS = {"s8", "u8", "pt", "fuse"}   # int8/uint8 QDQ, quantized by tvmcc's pass
X86_FLAGS = {"x86-64-avx2": {"avx2", "fma"},
             "x86-64-avx512": {"avx512f", "avx512bw", "avx512vl", "avx512dq", "fma"}}




def bitexact(args, targets, names, models, one, counts, expected):
    """The integer kernels of every target compute the same integers: for
    each int8/uint8 QDQ model (BITEXACT_VARIANTS), the outputs of the host
    build of the default target c, of the host build of -t cortex-m4's C
    (`cortex-m4@host`: the portable #else branches of the DSP code), of
    -t cortex-m55's (`cortex-m55@host`: the portable form of the Helium
    tile, whose int8 columns take uint8 data less 128), of
    x86-64-avx2 and x86-64-avx512 where the host runs them, and of every
    target this run ran the model on (cortex-m4 under qemu: the SMLAD and
    SXTB16 branches; aarch64, ...) must be equal byte for byte. Independent
    of the 1-LSB rule against onnxruntime: any difference fails. The extra
    builds are reported like the others (against onnxruntime) first."""
    flags = host_cpu_flags()
    extra = ["cortex-m4@host", "cortex-m55@host"]
    for t, need in sorted(X86_FLAGS.items()):
        if need <= flags:
            extra.append(t)
        else:
            print("SKIP qdq bitexact %s: the host CPU lacks %s" %
                  (t, " ".join(sorted(need - flags))), flush=True)
    bx = [n for n in names if n.rsplit(".", 1)[1] in BITEXACT_VARIANTS]
    for n in bx:
        if n not in models:
            models[n] = Model(n, args.models, args.work)
            models[n].prepare()
    items = [(n, t) for n in bx for t in extra if t not in targets]
    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
        list(pool.map(one, items))
    for n in bx:
        m = models[n]
        ran = dict(m.ran)
        order = ["host"] + sorted(t for t in ran if t != "host")
        order = [t for t in order if t in ran]
        missing = [t for t in ["host"] + extra + [t for t in targets if t != "host"]
                   if t not in ran and (t in extra or t == "host" or (n, t) in m.planned)]
        why = None
        if len(order) < 2:
            why = "fewer than two targets ran (%s): nothing to compare" % (", ".join(order) or "none")
        else:
            base = order[0]
            for t in order[1:]:
                for k, (oname, dtype, _) in enumerate(m.outputs):
                    a = np.fromfile(ran[base][k], np.uint8)
                    b = np.fromfile(ran[t][k], np.uint8)
                    if a.size != b.size or not np.array_equal(a, b):
                        va = np.fromfile(ran[base][k], DTYPES[dtype])
                        vb = np.fromfile(ran[t][k], DTYPES[dtype])
                        if va.size != vb.size:
                            d = "%d values, %s has %d" % (vb.size, base, va.size)
                        else:
                            i = np.flatnonzero(va.view(np.uint8).reshape(va.size, -1) !=
                                               vb.view(np.uint8).reshape(vb.size, -1))
                            j = int(i[0]) // max(1, va.dtype.itemsize)
                            nd = int(np.sum(va != vb)) if dtype != "float32" else int(
                                np.sum(va.view(np.uint32) != vb.view(np.uint32)))
                            d = "%d of %d elements differ, first at %d: %.9g against %s's %.9g" % (
                                nd, va.size, j, vb[j], base, va[j])
                        why = "output %s of %s differs from %s: %s" % (oname, t, base, d)
                        break
                if why:
                    break
        note = (" (did not run: %s)" % ", ".join(missing)) if missing else ""
        if why is None:
            counts["pass"] += 1
            print("PASS %s bitexact: %s equal byte for byte%s" % (n, " = ".join(order), note),
                  flush=True)
        else:
            exp = expected.get((n, "bitexact"))
            if exp is not None:
                counts["xfail"] += 1
                print("FAIL %s bitexact: %s%s [expected: %s]" % (n, why, note, exp), flush=True)
            else:
                counts["fail"] += 1
                print("FAIL %s bitexact: %s%s" % (n, why, note), flush=True)


def load_expected():
    exp = {}
    path = os.path.join(HERE, "expected_failures.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    parts = line.split(None, 2)
                    exp[(parts[0], parts[1] if len(parts) > 1 else "*")] = \
                        parts[2] if len(parts) > 2 else ""
    return exp


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvmcc", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--targets", default="host")
    ap.add_argument("--filter", default="")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--cc", default=os.environ.get("CC_HOST", "gcc"))
    ap.add_argument("--torchvision", action="store_true")
    ap.add_argument("--no-bitexact", dest="bitexact", action="store_false",
                    help="skip the comparison of the targets' integers (bitexact below)")
    ap.add_argument("--all", action="store_true",
                    help="run every model on every target, not the sample")
    ap.add_argument("--scan", action="store_true",
                    help="the models are every NAME.VARIANT.onnx with its .json in --models "
                    "(test/quantize/run.sh), not gen_models.py's plan")
    ap.add_argument("--min-exact", type=float, default=99.0,
                    help="percent of the elements that must be on the same level (99)")
    ap.add_argument("--sample", default=None,
                    help="with --scan: the models (regex) the targets other than host run")
    args = ap.parse_args()
    MIN_EXACT[0] = args.min_exact
    args.tvmcc = os.path.abspath(args.tvmcc)
    args.work = os.path.abspath(args.work)
    if args.scan:
        names = sorted(f[:-5] for f in os.listdir(args.models)
                       if f.endswith(".onnx") and
                       os.path.exists(os.path.join(args.models, f[:-5] + ".json")))
    else:
        names = ["%s.%s" % it for it in gen_models.plan(args.torchvision)]
    names = [n for n in names if re.search(args.filter, n)]
    targets = [t for t in args.targets.split(",") if t]
    items, skipped = [], []
    args.startup = {}
    for t in targets:
        missing = [tool for tool in TOOLS.get(t, []) if shutil.which(tool) is None]
        if t not in HOST_TARGETS and t not in TOOLS:
            print("run.py: unknown target %s" % t, file=sys.stderr)
            return 2
        if missing:
            skipped.append("SKIP qdq %s: %s not installed (scripts/deps.sh test)" %
                           (t, ", ".join(missing)))
            continue
        if t in ARM:
            os.makedirs(args.work, exist_ok=True)
            obj = os.path.join(args.work, "startup-%s.o" % t)
            ok, text = run(["arm-none-eabi-gcc"] + ARM[t][0] +
                           ["-std=c99", "-O1", "-c", os.path.join(ROOT, "test", "arm", "startup.c"),
                            "-o", obj], obj + ".log", 120)
            if not ok:
                skipped.append("SKIP qdq %s: startup.c does not build: %s" % (t, first_line(text)))
                continue
            args.startup[t] = obj
        for n in names:
            sampled = re.search(args.sample, n) if args.scan and args.sample else \
                n in ARM_SAMPLE or n in EXTRA.get(t, [])
            if t == "host" or args.all or sampled:
                items.append((n, t))
    planned = set(items)
    flags = host_cpu_flags()
    if "avx2" in flags and not flags & {"avx512_vnni", "avx_vnni"}:
        ORT_INT8_EXACT[0] = False
        skipped.append("SKIP qdq onnxruntime-optimized reference: this x86 host has no VNNI, where "
                       "onnxruntime's int8 kernels sum u8 x s8 pairs in 16 bits (saturating); an output "
                       "that misses it passes only within the rule against onnxruntime without graph "
                       "optimizations (the QDQ model as written)")
    for s in skipped:
        print(s, flush=True)
    models = {n: Model(n, args.models, args.work) for n in sorted({n for n, _ in items})}
    for m in models.values():
        m.planned = planned
    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
        list(pool.map(lambda m: m.prepare(), models.values()))
    expected = load_expected()
    lock = threading.Lock()
    counts = {"pass": 0, "fail": 0, "xfail": 0}

    def one(item):
        name, target = item
        model = models[name]
        try:
            res = model.ref_error or build_and_run(model, target, args)
        except Exception as e:  # a broken case is a failure, not a crash
            res = "%s: %s" % (type(e).__name__, e)
        with lock:
            if isinstance(res, tuple):
                counts["pass"] += 1
                print("PASS %s %s: %s" % (name, target, res[1]), flush=True)
            else:
                why = expected.get((name, target), expected.get(
                    (name, target.split("@")[0]), expected.get((name, "*"))))
                if why is not None:
                    counts["xfail"] += 1
                    print("FAIL %s %s: %s [expected: %s]" % (name, target, res, why), flush=True)
                else:
                    counts["fail"] += 1
                    print("FAIL %s %s: %s" % (name, target, res), flush=True)

    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
        list(pool.map(one, items))
    if args.bitexact and "host" in targets:
        bitexact(args, targets, names, models, one, counts, expected)
    if counts["xfail"]:
        print("%d expected failures (test/qdq/expected_failures.txt), %d unexpected" %
              (counts["xfail"], counts["fail"]))
    print("%d passed, %d failed" % (counts["pass"], counts["fail"] + counts["xfail"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
