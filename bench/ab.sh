#!/bin/sh
# Two builds of one model timed in one process, run by run alternately
# (bench/ab.c): for changes whose effect is smaller than this host's
# slow phases, which a comparison of separate processes cannot cancel.
#
#   bench/ab.sh MODEL.onnx INPUT.bin RUNS
#
# Side a: $A_TVMCC (default ./tvmcc) -t $A_TARGET $A_FLAGS; side b:
# $B_TVMCC, $B_TARGET, $B_FLAGS (targets default x86-64-avx2, names or
# target files). Both sides' C is built with $CC and side a's target
# cflags plus -march=native, and run pinned to cpu 0 (taskset, when
# present). THREADS=N (N > 1): built with -fopenmp and run with
# OMP_NUM_THREADS=N on any cpu instead. Prints
# bench/ab.c's line: both sides' minimum, median and mean in ms, b / a,
# and whether the outputs differ.
# Example (does a change of mine help?):
#   A_TVMCC=/tmp/tvmcc.old bench/ab.sh build/bench/resnet18.onnx \
#       build/bench/resnet18.input.bin 60
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# = 3 ] || { echo "usage: bench/ab.sh MODEL.onnx INPUT.bin RUNS" >&2; exit 2; }
model=$1 input=$2 runs=$3
A_TVMCC=${A_TVMCC:-$root/tvmcc} B_TVMCC=${B_TVMCC:-$root/tvmcc}
A_TARGET=${A_TARGET:-x86-64-avx2} B_TARGET=${B_TARGET:-x86-64-avx2}
CC=${CC:-cc}
THREADS=${THREADS:-1}
case $THREADS in ''|*[!0-9]*|0) echo "ab: THREADS must be a positive number" >&2; exit 2 ;; esac
omp=""
[ "$THREADS" -gt 1 ] && omp=-fopenmp
work=$(mktemp -d "${TMPDIR:-/tmp}/tvmcc-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086 # the flags are words
"$A_TVMCC" "$model" -t "$A_TARGET" -o "$work/a" --name a ${A_FLAGS:-} > "$work/a.log" 2>&1 ||
    { echo "ab: side a: $(head -n 1 "$work/a.log")" >&2; exit 1; }
# shellcheck disable=SC2086
"$B_TVMCC" "$model" -t "$B_TARGET" -o "$work/b" --name b ${B_FLAGS:-} > "$work/b.log" 2>&1 ||
    { echo "ab: side b: $(head -n 1 "$work/b.log")" >&2; exit 1; }
cflags=$(sed -n 's/^A_CFLAGS := //p' "$work/a/a.mk" | sed "s|\$(A_DIR)|$work/a|g")
# one runtime for both (the same tvmrt.c)
# shellcheck disable=SC2086
$CC $cflags -O3 -march=native $omp -I"$work/b" "$work/a/a.c" "$work/a/a_weights.c" "$work/a/tvmrt.c" \
    "$work/b/b.c" "$work/b/b_weights.c" "$root/bench/ab.c" -lm -o "$work/ab"
if [ "$THREADS" -gt 1 ]; then
    OMP_NUM_THREADS=$THREADS "$work/ab" "$input" "$runs"
elif command -v taskset > /dev/null 2>&1; then
    taskset -c 0 "$work/ab" "$input" "$runs"
else
    "$work/ab" "$input" "$runs"
fi
