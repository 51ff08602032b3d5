#!/usr/bin/env bash
# Shape-dependent control flow and --input-value (issue 14): a model with
# Ifs on Equal(Gather(Shape(x), k), c), nested, whose untaken branches
# cannot be inferred, a run-time If (compiled as Where) and an If on the
# sample-rate input sr, compiled with and without --input-value sr=...,
# run on the host, on Cortex-M4 (qemu-system-arm) and on AArch64
# (qemu-aarch64) and compared with onnxruntime-node. See
# test/models/control_fold.py.
#
#   test/models/control_fold.sh [--targets host,cortex-m4,aarch64] [-k SUBSTRING]
#
# Skips, with the reason, when onnx/numpy or onnxruntime-node is missing.
# Prints PASS/FAIL per case and target and, last, "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}

. "$here/needs.sh"
needs_onnx_ort control_fold
for t in arm-none-eabi-gcc qemu-system-arm aarch64-linux-gnu-gcc qemu-aarch64; do
    if ! command -v $t >/dev/null; then
        echo "FAIL control_fold: $t missing (scripts/deps.sh test)"
        echo "0 passed, 1 failed"
        exit 1
    fi
done
run_py_suite control_fold "$@"
