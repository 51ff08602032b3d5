#!/usr/bin/env bash
# The QDQ suite (issue 16): quantized models generated on this machine
# (test/qdq/gen_models.py, quantized by test/qdq/quantize.py with
# calibration in onnxruntime-node), compiled with tvmcc for each target,
# run on inputs from the calibration range and compared with
# onnxruntime-node on the same QDQ model: within 1 LSB of the output's
# quantization scale everywhere and the same quantized level on at least 99%
# of the elements (test/qdq/run.py).
#
#   test/qdq/run.sh [--targets host,cortex-m4,cortex-m0,aarch64] [--filter RE] [-j N]
#                   [--torchvision] [--all]
#
# --targets: host (default; the default target c), x86-64*, cortex-m4,
# cortex-m7, cortex-m0 (qemu-system-arm), aarch64 (qemu-aarch64). The
# qemu targets run a sample (run.py ARM_SAMPLE) unless --all.
# --filter RE keeps the models (NAME.VARIANT) matching the regex.
# --torchvision adds resnet18 and mobilenet_v2 (exported here with torch;
# slow). Models go to build/qdq/models (regenerated when the scripts change),
# work files to build/qdq/work. TVMCC overrides ./tvmcc.
# Skips, with the reason, when onnx/numpy or onnxruntime-node is missing.
# Prints PASS/FAIL per model and target and, last, "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}

. "$root/test/models/needs.sh"
needs_onnx_ort qdq
gen_args=()
for a in "$@"; do [ "$a" = --torchvision ] && gen_args+=(--torchvision); done
work="$root/build/qdq"
if [ ! -x "$TVMCC" ]; then
    echo "FAIL qdq: $TVMCC not built"
    echo "0 passed, 1 failed"
    exit 1
fi
mkdir -p "$work" && cp "$TVMCC" "$work/tvmcc.bin" ||
    { echo "FAIL qdq: cannot copy $TVMCC"; echo "0 passed, 1 failed"; exit 1; }
start=$(date +%s)
if ! "$PYTHON" "$here/gen_models.py" "$work/models" "${gen_args[@]}" > "$work/gen.log" 2>&1; then
    echo "FAIL qdq: gen_models.py: $(grep -v '^wrote' "$work/gen.log" | tail -1)"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "qdq: $(tail -1 "$work/gen.log") ($(( $(date +%s) - start )) s)"
exec "$PYTHON" "$here/run.py" --tvmcc "$work/tvmcc.bin" --models "$work/models" \
    --work "$work/work" "$@"
