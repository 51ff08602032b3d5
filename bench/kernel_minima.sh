#!/usr/bin/env bash
# Where a model's time goes against onnxruntime, kernel by kernel, robust to
# a noisy shared host: per-kernel minima instead of whole-model medians.
#
#   bench/kernel_minima.sh MODEL [TARGET] [RUNS]   (default target: that of
#                                                   bench/run.sh; RUNS 30)
#
# MODEL is a name in build/bench (bench/run.sh exports it). tvmcc's output
# is built with bench/timer.c and bench/kernel_minima.h force-included (the
# TVMCC_KERNEL_BEGIN/END hooks of NAME.c: each kernel's shortest time) and
# run three times RUNS times (TVMCC=path: another tvmcc binary); onnxruntime runs RUNS times with its profiler
# (bench/ort_node_minima.js: each node's shortest kernel time). With
# TARGET=x86-64-avx2 on an AVX-512 host onnxruntime runs under
# bench/isa_mask.c's library, as in bench/run.sh. bench/kernel_minima.py
# prints the sums of minima, their ratio and the kernels that lose most.
# The sum of minima is a floor no single run reaches (each kernel's best
# moment), on both sides alike. THREADS=N (default 1): tvmcc's C built with
# -fopenmp and run with OMP_NUM_THREADS=N, onnxruntime with
# intraOpNumThreads=N. Work files in build/bench/minima/MODEL.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
model=${1:?usage: bench/kernel_minima.sh MODEL [TARGET] [RUNS]}
if grep -qw avx512f /proc/cpuinfo; then target=${2:-x86-64-avx512}; else target=${2:-x86-64-avx2}; fi
runs=${3:-30}
threads=${THREADS:-1}
case $threads in ''|*[!0-9]*|0) echo "kernel_minima: THREADS must be a positive number" >&2; exit 2 ;; esac
omp=""
[ "$threads" -gt 1 ] && omp=-fopenmp
onnx=build/bench/$model.onnx
input=build/bench/$model.input.bin
shape=build/bench/$model.shape
[ -f "$onnx" ] && [ -f "$input" ] || { echo "kernel_minima: $onnx or $input missing (run bench/run.sh --quick $model first)" >&2; exit 1; }
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
work=build/bench/minima/$model
rm -rf "$work" && mkdir -p "$work"
"${TVMCC:-./tvmcc}" "$onnx" -t "$target" -o "$work/out" --name model >/dev/null
cflags=$(sed -n 's/^MODEL_CFLAGS := //p' "$work/out/model.mk" | sed "s|\$(MODEL_DIR)|$work/out|g")
# shellcheck disable=SC2086
$CC $cflags -O3 -march=native $omp -include bench/kernel_minima.h "$work/out"/*.c bench/timer.c -lm -o "$work/timer"
for i in 1 2 3; do
    OMP_NUM_THREADS=$threads KERNEL_MINIMA_OUT=$work/tvm$i.txt "$work/timer" "$input" -w 2 -n "$runs" >/dev/null
done
preload=""
if [ "$target" = x86-64-avx2 ] && grep -qw avx512f /proc/cpuinfo; then
    $CC -std=c99 -O2 -shared -fPIC bench/isa_mask.c -o "$work/isa_mask.so" -ldl
    preload=$work/isa_mask.so
fi
dims=$(cat "$shape" 2>/dev/null || echo 1,3,224,224)
ORT_THREADS=$threads LD_PRELOAD=$preload node bench/ort_node_minima.js "$onnx" "$input" --shape "$dims" "$runs" "$work/ort.json"
"$PYTHON" bench/kernel_minima.py "$work/out/model.json" "$work/ort.json" "$work"/tvm[123].txt
