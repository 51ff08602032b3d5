#!/usr/bin/env bash
# Transformer blocks end to end (issue 17): GPT blocks at opsets 18 and 20
# and Llama-style blocks with Attention, RMSNormalization and
# RotaryEmbedding at opsets 23 and 24, built here with onnx.helper,
# compiled by tvmcc for the host and compared with onnxruntime-node, then
# built warning-free for Cortex-M4 and AArch64 (test/transformer/blocks.py).
# Skips, with the reason, when onnx/numpy or onnxruntime-node is missing.
# Last line: "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}

. "$root/test/models/needs.sh"
needs_onnx_ort transformer
work="$root/build/transformer"
if [ ! -x "$TVMCC" ]; then
    echo "FAIL transformer: $TVMCC not built"
    echo "0 passed, 1 failed"
    exit 1
fi
mkdir -p "$work" && cp "$TVMCC" "$work/tvmcc.bin" ||
    { echo "FAIL transformer: cannot copy $TVMCC"; echo "0 passed, 1 failed"; exit 1; }
exec "$PYTHON" "$here/blocks.py" --tvmcc "$work/tvmcc.bin" --work "$work" "$@"
