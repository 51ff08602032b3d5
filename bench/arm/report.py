#!/usr/bin/env python3
"""Turns bench/arm/run.sh's measurements into bench/arm/results.md.

    report.py RESULTS.tsv RUNTIME_SIZE.txt BASELINE_FLAGS NOTES.txt [CHECK.txt [ABOUT.txt]] > results.md

RESULTS.tsv, one line per model and variant, tab-separated: model, variant,
"calib_ticks calib_insns", "status ticks", "n sum y0 y1 y2 y3",
"text data bss" (of model.o + model_weights.o + tvmrt.o), NAME.json path,
m4est output of the real build, m4cycles log, m4est output of the
per-kernel ("profile") build, the ONNX model; "-" where there is none.
NOTES.txt: "KEY<TAB>reason" lines, things run.sh skipped. CHECK.txt: the
output of bench/arm/m4est/check.sh. ABOUT.txt: "what<TAB>version" lines.

The estimators' outputs hold counter snapshots taken on entry of the marker
functions of bench_main.c, which bracket, in order: the calibration loop,
nothing (the markers' own cost) and model_run. A region's cost is the
difference of its two snapshots; model_run's is its region minus the empty
one.
"""
import json
import re
import sys

VARIANT_LABEL = {"tvmcc": "fp32", "baseline": "fp32 baseline", "int8": "int8 QDQ"}


def fmt_int(n):
    return "{:,}".format(int(round(n)))


def ratio(a, b, f="%.2f"):
    return f % (a / b) if a is not None and b else "-"


def sub(a, b):
    return [x - y for x, y in zip(a, b)]


class Est:
    """An m4est output: the class names, the whole-run counters and the
    hits ((mark name, counters) in order)."""

    def __init__(self, path):
        self.classes, self.total, self.hits, self.dropped = [], None, [], 0
        for line in open(path):
            f = line.split()
            if not f:
                continue
            if f[0] == "classes":
                self.classes = f[1:]
            elif f[0] == "total":
                self.total = [int(v) for v in f[1:]]
            elif f[0] == "hit":
                self.hits.append((f[1], [int(v) for v in f[2:]]))
            elif f[0] == "dropped":
                self.dropped = int(f[1])

    def regions(self):
        """Counters of each begin..end marker region, and the hits inside."""
        out, start, inner = [], None, []
        for name, v in self.hits:
            if name == "bench_mark_begin":
                start, inner = v, []
            elif name == "bench_mark_end" and start is not None:
                out.append((sub(v, start), start, v, inner))
                start = None
            elif start is not None:
                inner.append((name, v))
        return out

    def model_run(self):
        """(insns, cycles, per-class counters) of model_run, or None."""
        r = self.regions()
        if len(r) < 3:
            return None
        return sub(r[2][0], r[1][0])

    def kernels(self):
        """[(kernel, counters)] of model_run, from the marks on kernel
        entries; consecutive hits of one kernel (a clone's suffix cut)
        are one."""
        r = self.regions()
        if len(r) < 3:
            return []
        _, start, end, inner = r[2]
        seq = []
        for name, v in inner:
            k = name.split(".")[0]
            if not seq or seq[-1][0] != k:
                seq.append((k, v))
        out = []
        for i, (k, v) in enumerate(seq):
            nxt = seq[i + 1][1] if i + 1 < len(seq) else end
            out.append((k, sub(nxt, v)))
        return out


def m4cycles_run(path):
    """model_run's (insns, cycles) from a log of m4cycles with marks on
    bench_mark_begin and bench_mark_end (hits alternate begin, end)."""
    hits = []
    for line in open(path):
        m = re.search(r"hit (\d+) at insns=(\d+) cycles=(\d+)", line)
        if m:
            hits.append((int(m.group(2)), int(m.group(3))))
    if len(hits) < 6:
        return None
    return (hits[5][0] - hits[4][0] - (hits[3][0] - hits[2][0]),
            hits[5][1] - hits[4][1] - (hits[3][1] - hits[2][1]))


def int8_bytes(onnx_path):
    """Weight elements x 1 + bias elements x 4 of a QDQ model: initializers
    read by DequantizeLinear as its input 0, int32 ones being biases."""
    import onnx
    from onnx import TensorProto
    g = onnx.load(onnx_path).graph
    inits = {i.name: i for i in g.initializer}
    seen, w, b = set(), 0, 0
    for n in g.node:
        if n.op_type != "DequantizeLinear" or n.input[0] not in inits or n.input[0] in seen:
            continue
        seen.add(n.input[0])
        t = inits[n.input[0]]
        size = 1
        for d in t.dims:
            size *= d
        if t.data_type == TensorProto.INT32:
            b += size
        else:
            w += size
    return w, b


def main():
    tsv, rt_size, baseline, notes_path = sys.argv[1:5]
    check_path = sys.argv[5] if len(sys.argv) > 5 else None
    about = []
    if len(sys.argv) > 6:
        try:
            about = [l.rstrip("\n").split("\t", 1) for l in open(sys.argv[6]) if "\t" in l]
        except OSError:
            pass
    rows, order = {}, []
    for line in open(tsv):
        f = line.rstrip("\n").split("\t")
        cal_t, cal_i = map(int, f[2].split())
        status, ticks = map(int, f[3].split())
        out = f[4].split()
        text, data, bss = map(int, f[5].split())
        meta = json.load(open(f[6]))
        macs = sum(k.get("macs", 0) for k in meta["kernels"])
        r = dict(model=f[0], var=f[1], status=status, insns=ticks * cal_i / cal_t, macs=macs,
                 flash=text + data, ram=data + bss, arena=meta["workspace_bytes"],
                 weights=meta["weights_bytes"], meta=meta, y=[float(v) for v in out[2:]],
                 per_tick=cal_i / cal_t, est=None, calib=None, m4c=None, prof=None, onnx=f[10])
        if f[7] != "-":
            e = Est(f[7])
            r["est"] = e.model_run()
            regions = e.regions()
            if regions:
                r["calib"] = regions[0][0][:2]
            r["classes"] = e.classes
        if f[8] != "-":
            r["m4c"] = m4cycles_run(f[8])
        if f[9] != "-":
            p = Est(f[9])
            r["prof"] = (p.model_run(), p.kernels())
        rows[(f[0], f[1])] = r
        if f[0] not in order:
            order.append(f[0])
    notes = []
    try:
        notes = [l.rstrip("\n").split("\t", 1) for l in open(notes_path) if l.strip()]
    except OSError:
        pass
    note = {k: v for k, v in notes}

    def cycles(r):
        return r["est"][1] if r and r["est"] else None

    p = print
    any_row = next(iter(rows.values()), None)
    p("# bench/arm: MLPerf-Tiny-style models on Cortex-M4 (qemu mps2-an386)")
    p()
    p("Generated by `make bench-arm` (bench/arm/run.sh); do not edit by hand.")
    p("Models: bench/arm/gen_models.py (MLPerf Tiny v1.0 shapes, random weights,")
    p("fixed seed) and their int8 versions from `tvmcc quantize --calib random:8` (QDQ:")
    p("per-channel symmetric int8 weights, int32 biases, int8 activations calibrated")
    p("on 8 random inputs with its defaults (mse ranges, equalization, bias")
    p("correction); a Relu after a quantized op folded into its QuantizeLinear, as")
    p("onnxruntime's quantize_static writes it; QUANTIZE_FLAGS adds options). Each")
    p("is compiled with `tvmcc -t cortex-m4` (\"fp32\", \"int8 QDQ\"); the")
    p("fp32 model also with `tvmcc -t cortex-m4 %s` (\"fp32 baseline\"). Built with the" % baseline)
    p("flags NAME.mk gives (`-O2 -ffp-contract=fast -mcpu=cortex-m4 -mfloat-abi=hard")
    p("-mfpu=fpv4-sp-d16`) and run once on `qemu-system-arm -M mps2-an386 -icount shift=0`.")
    p()
    p("- instructions: SysTick ticks around `model_run`, times the instructions per")
    p("  tick of a calibration loop (%.1f; qemu has no DWT cycle counter, CYCCNT" %
      (any_row["per_tick"] if any_row else 0))
    p("  reads 0).")
    p("- est. cycles: estimated Cortex-M4 core cycles of `model_run` by **m4est**")
    p("  (bench/arm/m4est, a QEMU TCG plugin: a fixed cost per executed instruction")
    p("  from the Cortex-M4 TRM's timing tables, zero wait states, every branch 2")
    p("  cycles, VFMA 3; see bench/arm/README.md). An estimate, not a measurement:")
    p("  flash wait states, pipeline stalls and taken/not-taken branches are not modelled.")
    p("- MACs: sum of `kernels[].macs` in NAME.json; CPI = cycles / instructions.")
    p("- flash: text + data of model.o, model_weights.o and tvmrt.o (text includes")
    p("  .rodata, i.e. the weights); RAM: data + bss of the same objects (bss holds")
    p("  the static arena). Caller's input/output buffers, stack and libc excluded.")
    for k, v in notes:
        p("- skipped or failed (%s): %s" % (k, v))
    if about:
        p("- run with: " + "; ".join("%s: %s" % (k, v) for k, v in about) + ".")
    p()
    p("| model | variant | MACs | kernels | instructions | est. cycles | cycles/MAC | MACs/insn | CPI | vs baseline (insns) | flash B | weights B | RAM B | arena B |")
    p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m in order:
        base = rows.get((m, "baseline"))
        for var in ("tvmcc", "baseline", "int8"):
            r = rows.get((m, var))
            if not r:
                continue
            c = cycles(r)
            p("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m, VARIANT_LABEL[var], fmt_int(r["macs"]), len(r["meta"]["kernels"]),
                fmt_int(r["insns"]), fmt_int(c) if c is not None else "-",
                ratio(c, r["macs"]), ratio(r["macs"], r["insns"], "%.3f"), ratio(c, r["insns"]),
                ratio(base["insns"], r["insns"], "%.2fx") if base and var != "int8" else "-",
                fmt_int(r["flash"]), fmt_int(r["weights"]), fmt_int(r["ram"]), fmt_int(r["arena"])))
    p()

    # ---- int8 against fp32
    pairs = [(m, rows[(m, "tvmcc")], rows[(m, "int8")]) for m in order
             if (m, "tvmcc") in rows and (m, "int8") in rows]
    if pairs:
        p("## int8 against fp32")
        p()
        p("int8 bytes of the model: weight elements x 1 + bias elements x 4, counted over")
        p("the QDQ model's initializers that DequantizeLinear reads (int8 weights, int32")
        p("biases; scales and zero points not counted). Weights in flash: `weights_bytes`")
        p("of the int8 build's NAME.json. Workspace: `workspace_bytes` (the arena).")
        p()
        p("| model | fp32 est. cycles | int8 est. cycles | int8 / fp32 cycles | fp32 insns | int8 insns | int8 cycles/MAC | fp32 flash B | int8 flash B | fp32 workspace B | int8 workspace B | int8 / fp32 workspace | int8 weights in flash B | int8 bytes of the model | weights in flash / int8 bytes |")
        p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for m, a, b in pairs:
            w, bias = int8_bytes(b["onnx"])
            ib = w + 4 * bias
            ca, cb = cycles(a), cycles(b)
            p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s w + 4 x %s b) | %s |" % (
                m, fmt_int(ca) if ca else "-", fmt_int(cb) if cb else "-", ratio(cb, ca),
                fmt_int(a["insns"]), fmt_int(b["insns"]), ratio(cb, b["macs"]),
                fmt_int(a["flash"]), fmt_int(b["flash"]), fmt_int(a["arena"]), fmt_int(b["arena"]),
                ratio(b["arena"], a["arena"]), fmt_int(b["weights"]), fmt_int(ib), fmt_int(w),
                fmt_int(bias), ratio(b["weights"], ib)))
        p()

    # ---- outputs
    p("## Outputs")
    p()
    p("Largest relative difference over the first four output values against the")
    p("fp32 build (the baseline computes the same function; int8 adds quantization")
    p("error), and model_run's status:")
    p()
    for m in order:
        a = rows.get((m, "tvmcc"))
        if not a:
            continue
        parts = []
        for var in ("baseline", "int8"):
            b = rows.get((m, var))
            if b:
                d = max(abs(x - y) / max(abs(x), abs(y), 1e-30) for x, y in zip(a["y"], b["y"]))
                parts.append("%s %.2e" % (VARIANT_LABEL[var], d))
        p("- %s: %s; status %s" % (m, ", ".join(parts) or "-", " / ".join(
            str(rows[(m, v)]["status"]) for v in ("tvmcc", "baseline", "int8") if (m, v) in rows)))
    p()

    # ---- cross-check
    p("## Cycle estimators: m4est against m4cycles")
    p()
    if "m4cycles" in note:
        p("Cross-check %s." % note["m4cycles"])
    else:
        p("m4cycles (../shared/tools/m4cycles, an independent TCG plugin with the same")
        p("method, outside this repository) ran every build with marks on the same two")
        p("marker functions; its defaults (branch 2, VFMA 3) are m4est's. m4est counts")
        p("instructions exactly; SysTick has a resolution of %d." % round(any_row["per_tick"] if any_row else 0))
    p()
    p("| model | variant | instructions (SysTick) | instructions (m4est) | instructions (m4cycles) | cycles (m4est) | cycles (m4cycles) | (m4est - m4cycles) / m4cycles |")
    p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for m in order:
        for var in ("tvmcc", "baseline", "int8"):
            r = rows.get((m, var))
            if not r:
                continue
            e, c = r["est"], r["m4c"]
            p("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                m, VARIANT_LABEL[var], fmt_int(r["insns"]), fmt_int(e[0]) if e else "-",
                fmt_int(c[0]) if c else "-", fmt_int(e[1]) if e else "-",
                fmt_int(c[1]) if c else "-",
                "%+.3f%%" % (100.0 * (e[1] - c[1]) / c[1]) if e and c and c[1] else "-"))
    cal = [r["calib"] for r in rows.values() if r["calib"]]
    if cal:
        p()
        p("Sanity check, the calibration loop (4,000,000 x `subs` + `bne`, i.e. 8,000,000")
        p("instructions and 12,000,000 cycles, plus the markers): m4est counted %s" %
          ", ".join(sorted({"%s instructions / %s cycles" % (fmt_int(c[0]), fmt_int(c[1])) for c in cal})) + ".")
    try:
        lines = [l.rstrip() for l in open(check_path) if l.strip()] if check_path else []
    except OSError:
        lines = []
    if lines:
        p()
        p("bench/arm/m4est/check.sh (assembly loops of known cost; the default costs and")
        p("`branch=3,fmac=2`):")
        p()
        p("```")
        for l in lines:
            p(l)
        p("```")
    p()

    # ---- cycles by instruction class
    p("## Where the cycles go")
    p()
    p("Share of model_run's estimated cycles by instruction class (m4est's classes:")
    p("alu = data processing and moves, imul = integer multiplies and DSP MACs,")
    p("ld/st = LDR/STR, ldm/stm = LDM/STM/PUSH/POP/LDRD/STRD, br = branches,")
    p("fp = FPU arithmetic and moves, fmac = VFMA/VMLA, fdiv = VDIV/VSQRT, vld/vst =")
    p("VLDR/VLDM/VPOP and VSTR/VSTM/VPUSH).")
    p()
    cls = next((r["classes"] for r in rows.values() if r.get("classes")), [])
    if cls:
        p("| model | variant | " + " | ".join(cls) + " |")
        p("| --- | --- |" + " ---: |" * len(cls))
        for m in order:
            for var in ("tvmcc", "baseline", "int8"):
                r = rows.get((m, var))
                if not r or not r["est"]:
                    continue
                e = r["est"]
                p("| %s | %s | %s |" % (m, VARIANT_LABEL[var], " | ".join(
                    "%.1f%%" % (100.0 * e[3 + 2 * k] / e[1]) if e[1] else "-" for k in range(len(cls)))))
    p()

    # ---- per kernel
    p("## Per kernel")
    p()
    p("From a second build of the same C with `-fno-inline -fno-ipa-icf` added (every")
    p("kernel a function of its own; the real build inlines kernels into model_run")
    p("and folds identical ones), with m4est marks on every kernel's entry. A kernel's")
    p("figures run from its entry to the next kernel's (its call's share of model_run")
    p("included). insns/MAC and cycles/MAC only for kernels with MACs; `MAC-class`")
    p("is the share of the kernel's cycles in multiply-accumulate instructions")
    p("(fmac + imul), `loads` the share in loads (ld + ldm + vld).")
    for var in ("int8", "tvmcc"):
        for m in order:
            r = rows.get((m, var))
            if not r or not r["prof"] or not r["prof"][0]:
                continue
            total, kern = r["prof"]
            p()
            p("### %s, %s" % (m, VARIANT_LABEL[var]))
            p()
            c = cycles(r)
            p("Profile build: %s instructions, %s cycles for model_run (real build: %s, %s)." % (
                fmt_int(total[0]), fmt_int(total[1]), fmt_int(r["est"][0]) if r["est"] else "-",
                fmt_int(c) if c else "-"))
            p()
            p("| kernel | ops | MACs | instructions | est. cycles | insns/MAC | cycles/MAC | MAC-class | loads |")
            p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            info = {k["name"]: k for k in r["meta"]["kernels"]}
            fm = cls.index("fmac") if "fmac" in cls else None
            im = cls.index("imul") if "imul" in cls else None
            lds = [cls.index(c) for c in ("ld", "ldm", "vld") if c in cls]
            for name, v in kern:
                k = info.get(name, {})
                ops = []
                for n in k.get("nodes", []):
                    if n["op"] not in ops:
                        ops.append(n["op"])
                macs = k.get("macs", 0)
                mac_cyc = sum(v[3 + 2 * i] for i in (fm, im) if i is not None)
                ld_cyc = sum(v[3 + 2 * i] for i in lds)
                p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    name, "+".join(ops), fmt_int(macs), fmt_int(v[0]), fmt_int(v[1]),
                    ratio(v[0], macs) if macs else "-", ratio(v[1], macs) if macs else "-",
                    "%.0f%%" % (100.0 * mac_cyc / v[1]) if v[1] else "-",
                    "%.0f%%" % (100.0 * ld_cyc / v[1]) if v[1] else "-"))
    p()

    p("## Runtime flash (tvmrt.c, -Os, Cortex-M4)")
    p()
    p("| build | text | data | bss |")
    p("| --- | ---: | ---: | ---: |")
    try:
        for line in list(open(rt_size))[1:]:
            t, d, b = line.split()[:3]
            name = line.split()[-1].rsplit("/", 1)[-1]
            label = "TVMRT_NO_MESSAGES" if "nomsg" in name else "default"
            p("| %s | %s | %s | %s |" % (label, t, d, b))
    except OSError:
        p("| (not measured) | | | |")
    p()
    p("The rest of the per-model overhead is `model_run` itself (argument checks,")
    p("workspace alignment, kernel calls): about 100 bytes at -Os, see bench/arm/README.md.")


if __name__ == "__main__":
    main()
