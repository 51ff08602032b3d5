#!/usr/bin/env bash
# How much operator fusion can save on a model, measured: the most that
# fusing can gain is the time of the kernels it removes.
#
#   bench/fusion_bound.sh MODEL [TARGET]     (default target x86-64-avx512)
#
# MODEL is a name in build/bench (resnet18, mobilenet_v2, ...; `make bench`
# or bench/run.sh exports them). The script compiles the model twice, by
# default and with --no-fuse, and builds the --no-fuse C with inlining off
# so that every kernel is its own function. `perf record` on it gives each
# kernel's share of the run time. The fused build's NAME.json lists the
# ONNX nodes of every kernel: every node after the first of a kernel had a
# kernel of its own in the --no-fuse build, and fusion removes that kernel.
# If those kernels' share is S, no fused build can be faster than the
# unfused one by more than 1 / (1 - S). Both builds are then timed
# interleaved (bench/timer.c, inlining on as usual) for the measured ratio.
#
# Needs perf (the linux-perf package). Prints one line per removed kernel
# kind and a summary; work files in build/bench/fusion/MODEL.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
model=${1:?usage: bench/fusion_bound.sh MODEL [TARGET]}
target=${2:-x86-64-avx512}
onnx=build/bench/$model.onnx
input=build/bench/$model.input.bin
[ -f "$onnx" ] && [ -f "$input" ] || { echo "fusion_bound: $onnx or $input missing (run bench/run.sh --quick $model first)" >&2; exit 1; }
command -v perf >/dev/null || { echo "fusion_bound: perf not found (apt-get install linux-perf)" >&2; exit 1; }
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
work=build/bench/fusion/$model
rm -rf "$work" && mkdir -p "$work"
for v in fused nofuse; do
    flags=""
    [ $v = nofuse ] && flags=--no-fuse
    ./tvmcc "$onnx" -t "$target" $flags -o "$work/$v" --name model >/dev/null
    cflags=$(sed -n 's/^MODEL_CFLAGS := //p' "$work/$v/model.mk" | sed "s|\$(MODEL_DIR)|$work/$v|g")
    # shellcheck disable=SC2086
    $CC $cflags -O3 -march=native "$work/$v"/*.c bench/timer.c -lm -o "$work/$v.timer"
done
# shellcheck disable=SC2086
$CC $cflags -O3 -march=native -fno-inline-functions -fno-inline-small-functions \
    -fno-inline-functions-called-once "$work/nofuse"/*.c bench/timer.c -lm -o "$work/nofuse-noinline.timer"
perf record -q -o "$work/perf.data" "$work/nofuse-noinline.timer" "$input" -w 1 -n 30 >/dev/null 2>&1
perf report -i "$work/perf.data" --stdio --sort symbol 2>/dev/null > "$work/perf.txt"
# interleaved timing of the two ordinary builds
: > "$work/fused.ms"; : > "$work/nofuse.ms"
for _ in 1 2 3 4 5; do
    for v in fused nofuse; do
        "$work/$v.timer" "$input" -w 1 -n 10 | grep -v '^#' >> "$work/$v.ms"
    done
done
exec "$PYTHON" - "$work" "$model" "$target" <<'EOF'
import json, re, statistics, sys
work, model, target = sys.argv[1:4]
share = {}
for line in open(work + "/perf.txt"):
    m = re.match(r"\s*([0-9.]+)%\s+\[\.\]\s+(k[0-9]+_[a-z0-9_]+)", line)
    if m:
        share[m.group(2)] = share.get(m.group(2), 0.0) + float(m.group(1)) / 100
fused = json.load(open(work + "/fused/model.json"))["kernels"]
nofuse = json.load(open(work + "/nofuse/model.json"))["kernels"]
kernel_of = {}
for k in nofuse:
    for n in k["nodes"]:
        kernel_of[n["name"]] = k["name"]
removed, by_op = 0.0, {}
for k in fused:
    for n in k["nodes"][1:]:
        s = share.get(kernel_of.get(n["name"], ""), 0.0)
        removed += s
        by_op[n["op"]] = by_op.get(n["op"], 0.0) + s
for op, s in sorted(by_op.items(), key=lambda x: -x[1]):
    print("  %-24s %5.1f%% of the unfused run time" % (op, 100 * s))
med = {v: statistics.median(float(x) for x in open("%s/%s.ms" % (work, v)) if x.strip())
       for v in ("fused", "nofuse")}
print("%s (%s): kernels that fusion removes take %.1f%% of the unfused run; "
      "bound on unfused/fused %.2f; measured unfused %.2f ms / fused %.2f ms = %.2f"
      % (model, target, 100 * removed, 1 / (1 - removed), med["nofuse"], med["fused"],
         med["nofuse"] / med["fused"]))
EOF
