#!/usr/bin/env bash
# AArch64 int8 kernels (issue 16): the suite's int8 models built three ways,
# outputs compared byte for byte (test/qdq/a64_compare.py): the -t aarch64
# C with -march=armv8.2-a+dotprod (SDOT) and for plain Armv8.0 (SMULL +
# SADALP), both under qemu-aarch64, and the host's -t c build.
#
#   test/qdq/a64_compare.sh [--filter RE] [-j N]
#
# Models as test/qdq/run.sh makes them (build/qdq/models); work files in
# build/qdq/a64cmp. SKIPs, with the reason, when onnx/numpy, the cross
# compiler or qemu-aarch64 is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}

. "$root/test/models/needs.sh"
needs_onnx_ort qdq
work="$root/build/qdq"
if [ ! -x "$TVMCC" ]; then
    echo "FAIL qdq a64 compare: $TVMCC not built"
    echo "0 passed, 1 failed"
    exit 1
fi
mkdir -p "$work" && cp "$TVMCC" "$work/tvmcc-a64cmp.bin" ||
    { echo "FAIL qdq a64 compare: cannot copy $TVMCC"; echo "0 passed, 1 failed"; exit 1; }
if ! "$PYTHON" "$here/gen_models.py" "$work/models" > "$work/gen-a64cmp.log" 2>&1; then
    echo "FAIL qdq a64 compare: gen_models.py: $(grep -v '^wrote' "$work/gen-a64cmp.log" | tail -1)"
    echo "0 passed, 1 failed"
    exit 1
fi
exec "$PYTHON" "$here/a64_compare.py" --tvmcc "$work/tvmcc-a64cmp.bin" --models "$work/models" \
    --work "$work/a64cmp" "$@"
