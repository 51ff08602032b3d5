#!/usr/bin/python3
"""Writes bench/results.md from the raw times bench/run.sh collected.

    report.py RAWDIR OUT.md

RAWDIR holds meta.txt and one folder per model with, per configuration ID,
ID.txt (one timed run per line in ms, '#' lines are comments), ID.cmd (the
commands), ID.skip or ID.fail (why there are no times) and ID.relerr.
Also prints the main table to stdout.
"""
import math
import os
import statistics
import sys

GEMM = "gemm1024"
GEMM_FLOP = 2.0 * 1024 ** 3


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def times(rdir, cid):
    vals = []
    for line in read(os.path.join(rdir, cid + ".txt")).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            vals.append(float(line))
    return vals


def round_fractions(rdir, cid):
    """Median over rounds of (GEMM GFLOP/s of the round's median time) /
    (the peak measured just before that round's run), and the number of
    rounds; None without per-round peaks. Rounds are the '#'-separated
    blocks of CID.txt, in the order of CID.peak's lines."""
    peaks = [float(x) for x in read(os.path.join(rdir, cid + ".peak")).split()]
    rounds, cur = [], []
    for line in read(os.path.join(rdir, cid + ".txt")).splitlines():
        line = line.strip()
        if line.startswith("#"):
            if cur:
                rounds.append(cur)
            cur = []
        elif line:
            cur.append(float(line))
    if cur:
        rounds.append(cur)
    fr = [GEMM_FLOP / (statistics.median(r) * 1e-3) * 1e-9 / p for r, p in zip(rounds, peaks) if r and p > 0]
    if not fr or len(rounds) != len(peaks):
        return None
    return statistics.median(fr), len(fr)


def fmt_ms(v):
    if v is None:
        return "-"
    return "%.1f" % v if v >= 100 else "%.2f" % v if v >= 1 else "%.3f" % v


def fmt_ratio(v):
    return "-" if v is None else "%.2f" % v


def geomean(vals):
    vals = [v for v in vals if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def main(raw, out):
    meta = {}
    for line in read(os.path.join(raw, "meta.txt")).splitlines():
        k, _, v = line.partition("=")
        meta[k] = v
    models = meta.get("models", "").split()
    target = meta.get("target", "?")
    threads = meta.get("threads", "1 2").split()
    variants = [v.split("=", 1) for v in meta.get("variants", "").split() if "=" in v]
    variant_models = meta.get("variant_models", "").split()

    med, count, note, relerr = {}, {}, {}, {}
    for m in models:
        rdir = os.path.join(raw, m)
        for cid in ["ort-1t", "tvm-1t", "c-1t", "ort-2t", "tvm-2t"] + ["var-" + n for n, _ in variants]:
            t = times(rdir, cid)
            med[m, cid] = statistics.median(t) if t else None
            count[m, cid] = len(t)
            why = read(os.path.join(rdir, cid + ".skip")) or read(os.path.join(rdir, cid + ".fail"))
            if why:
                note[m, cid] = why
            relerr[m, cid] = read(os.path.join(rdir, cid + ".relerr"), "-")

    def ratio(m, a, b):
        x, y = med.get((m, a)), med.get((m, b))
        return x / y if x and y else None

    # the _bn exports repeat a CNN with its BatchNormalization nodes kept:
    # they are there for the fused-vs-unfused variants, not the means
    cnns = [m for m in models if m != GEMM and not m.endswith("_bn") and not m.endswith("_int8")]
    L = []
    L.append("# tvmcc benchmark results")
    L.append("")
    L.append("Written by `bench/run.sh` (`make bench`); every figure below comes from one run "
             "of it. Latency is the median of all timed runs in ms (lower is better); a ratio "
             "is tvmcc's median / onnxruntime's median (below 1.0: tvmcc is faster).")
    L.append("")
    L.append("| | |")
    L.append("| --- | --- |")
    L.append("| date | %s |" % meta.get("date", "?"))
    L.append("| machine | %s (%s), %s logical CPUs, %s; load average at start %s |"
             % (meta.get("cpu", "?"), meta.get("cpuid", "?"), meta.get("ncpu", "?"),
                meta.get("isa", "").strip(), meta.get("loadavg", "?")))
    L.append("| tvmcc | %s, target `%s` (and `c`) |" % (meta.get("tvmcc", "?"), target))
    L.append("| C compiler | %s |" % meta.get("cc", "?"))
    L.append("| onnxruntime | onnxruntime-node %s on node %s, graphOptimizationLevel `all`, "
             "sequential, interOpNumThreads 1%s |" % (meta.get("ort", "?"), meta.get("node", "?"),
                 "; **AVX-512 hidden** (ORT_ISA=avx2: CPUID faulting, `bench/isa_mask.c`), so it "
                 "runs the kernels an AVX2-only host gets" if meta.get("ort_isa") == "avx2" else ""))
    L.append("| method | %s interleaved rounds; per round every configuration is one process: "
             "up to %s warm-up runs (at most %s ms), then timed runs until %s ms are spent "
             "(at most %s, at least 1); configuration order rotates each round%s |"
             % (meta.get("rounds"), meta.get("warmups"), int(meta.get("budget", "0")) // 2,
                meta.get("budget"), meta.get("maxruns"),
                "; `--quick`" if meta.get("quick") == "1" else ""))
    p1 = meta.get("peak1", "").split()
    p2 = meta.get("peak2", "").split()
    peak1 = float(p1[0]) if p1 else None
    peak2 = float(p2[0]) if p2 else None
    L.append("| FMA peak (measured, `bench/peak.c`, %s) | 1 thread %s GFLOP/s%s |"
             % (p1[1] if len(p1) > 1 else "?", p1[0] if p1 else "?",
                ", 2 threads %s GFLOP/s" % p2[0] if p2 else ""))
    L[-1] = L[-1][:-2] + " (larger of the measurements at start and end: %s) |" % meta.get("peak_runs", "?")
    L.append("")
    L.append("Reproduce: `make bench` (full) or `bench/run.sh --quick [MODEL...]`; "
             "this run: `%s`%s. Raw per-run times: `build/bench/raw/`."
             % (("bench/run.sh " + meta.get("args", "")).strip(), " with TARGET=%s%s%s%s" % (target,
                 " MARCH=%s" % meta["march"] if meta.get("march", "-march=native") != "-march=native" else "",
                 " ORT_ISA=%s" % meta["ort_isa"] if meta.get("ort_isa", "host") != "host" else "",
                 " OMP_WAIT=%s" % meta["omp_wait"] if meta.get("omp_wait") else "")))
    L.append("")

    # Main table, one thread.
    if "1" in threads:
        L.append("## One thread")
        L.append("")
        L.append("| model | onnxruntime ms | tvmcc `%s` ms | ratio | tvmcc `c` -O3 %s ms "
                 "| ratio | max rel. error `%s` / `c` |" % (target, meta.get("march", "-march=native"), target))
        L.append("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for m in models:
            L.append("| %s | %s | %s | %s | %s | %s | %s / %s |" % (
                m, fmt_ms(med[m, "ort-1t"]), fmt_ms(med[m, "tvm-1t"]),
                fmt_ratio(ratio(m, "tvm-1t", "ort-1t")), fmt_ms(med[m, "c-1t"]),
                fmt_ratio(ratio(m, "c-1t", "ort-1t")), relerr[m, "tvm-1t"], relerr[m, "c-1t"]))
        g1 = geomean([ratio(m, "tvm-1t", "ort-1t") for m in cnns])
        gc = geomean([ratio(m, "c-1t", "ort-1t") for m in cnns])
        L.append("| **geometric mean** (CNNs) | | | **%s** | | **%s** | |" % (fmt_ratio(g1), fmt_ratio(gc)))
        L.append("")

    if "2" in threads:
        L.append("## Two threads")
        L.append("")
        L.append("onnxruntime with intraOpNumThreads=2; tvmcc's `%s` C built with -fopenmp and run "
                 "with OMP_NUM_THREADS=2%s (it is only faster where the emitted C has `#pragma omp`)."
                 % (target, " OMP_WAIT_POLICY=" + meta["omp_wait"] if meta.get("omp_wait") else ""))
        L.append("")
        L.append("| model | onnxruntime ms | tvmcc ms | ratio | `omp parallel` / `omp simd` pragmas in model.c |")
        L.append("| --- | ---: | ---: | ---: | ---: |")
        for m in models:
            L.append("| %s | %s | %s | %s | %s |" % (
                m, fmt_ms(med[m, "ort-2t"]), fmt_ms(med[m, "tvm-2t"]),
                fmt_ratio(ratio(m, "tvm-2t", "ort-2t")),
                read(os.path.join(raw, m, "omp-pragmas"), "-")))
        g2 = geomean([ratio(m, "tvm-2t", "ort-2t") for m in cnns])
        L.append("| **geometric mean** (CNNs) | | | **%s** | |" % fmt_ratio(g2))
        L.append("")

    if GEMM in models:
        L.append("## GEMM 1024 x 1024 x 1024 (MatMul, constant B)")
        L.append("")
        L.append("GFLOP/s = 2 * 1024^3 / median time; % of peak against the FMA peak measured "
                 "above for the same number of threads. Per round: each round's median GFLOP/s "
                 "against the peak measured just before that run (`bench/peak.c`, 0.1 s), the "
                 "median over the rounds (the host's speed changes in phases of seconds).")
        L.append("")
        L.append("| configuration | median ms | GFLOP/s | % of FMA peak | per round: % of the peak next to it |")
        L.append("| --- | ---: | ---: | ---: | ---: |")
        rows = [("onnxruntime, 1 thread", "ort-1t", peak1), ("tvmcc `%s`, 1 thread" % target, "tvm-1t", peak1),
                ("tvmcc `c` -O3 %s, 1 thread" % meta.get("march", "-march=native"), "c-1t", peak1),
                ("onnxruntime, 2 threads", "ort-2t", peak2), ("tvmcc `%s`, 2 threads" % target, "tvm-2t", peak2)]
        for label, cid, peak in rows:
            v = med.get((GEMM, cid))
            if v is None and (GEMM, cid) not in note:
                continue
            gf = GEMM_FLOP / (v * 1e-3) * 1e-9 if v else None
            pr = round_fractions(os.path.join(raw, GEMM), cid)
            L.append("| %s | %s | %s | %s | %s |" % (
                label, fmt_ms(v), "-" if gf is None else "%.1f" % gf,
                "-" if gf is None or not peak else "%.1f%%" % (100.0 * gf / peak),
                "-" if pr is None else "%.1f%% (%d rounds)" % (100.0 * pr[0], pr[1])))
        L.append("")

    vrows = [(m, n, f) for m in models if m in variant_models for n, f in variants]
    if vrows:
        L.append("## tvmcc variants (same target `%s`, same run, one thread)" % target)
        L.append("")
        L.append("ratio = variant / default; above 1.0 the default (e.g. fused) build is that many "
                 "times faster.")
        L.append("")
        L.append("| model | variant | tvmcc flags | default ms | variant ms | variant / default |")
        L.append("| --- | --- | --- | ---: | ---: | ---: |")
        for m, n, f in vrows:
            cid = "var-" + n
            L.append("| %s | %s | `%s` | %s | %s | %s |" % (
                m, n, f, fmt_ms(med[m, "tvm-1t"]),
                fmt_ms(med[m, cid]) if (m, cid) not in note else "skipped",
                fmt_ratio(ratio(m, cid, "tvm-1t"))))
        L.append("")

    bounds = []
    for m in models:
        try:
            with open(os.path.join(raw, "fusion_bound.%s.txt" % m)) as f:
                bounds.append((m, f.read().rstrip()))
        except OSError:
            pass
    if bounds:
        L.append("## What fusion can save at most (`bench/fusion_bound.sh MODEL %s`)" % target)
        L.append("")
        L.append("The --no-fuse build with inlining off, under `perf record`: the share of its run "
                 "time spent in the kernels that fusion removes (every ONNX node after the first "
                 "of a fused kernel). Removing them entirely cannot make the run faster than "
                 "1 / (1 - share). The measured ratio times the two ordinary builds interleaved.")
        L.append("")
        L.append("```")
        for m, b in bounds:
            L.extend(b.splitlines())
        L.append("```")
        L.append("")

    notes = sorted(note.items())
    if notes:
        L.append("## Skipped or failed")
        L.append("")
        for (m, cid), why in notes:
            L.append("- %s, %s: %s" % (m, cid, why.replace("\n", " ")))
        L.append("")

    L.append("## Runs per configuration and commands")
    L.append("")
    L.append("| model | configuration | timed runs | command |")
    L.append("| --- | --- | ---: | --- |")
    for m in models:
        for cid in ["ort-1t", "tvm-1t", "c-1t", "ort-2t", "tvm-2t"] + ["var-" + n for n, _ in variants]:
            cmd = read(os.path.join(raw, m, cid + ".cmd"))
            if cmd:
                L.append("| %s | %s | %d | %s |" % (m, cid, count[m, cid],
                                                   "<br>".join("`%s`" % c for c in cmd.splitlines())))
    L.append("")

    text = "\n".join(L)
    with open(out, "w") as f:
        f.write(text)
    start = text.find("## One thread")
    print(text[start:text.find("## Runs per configuration")] if start >= 0 else text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
