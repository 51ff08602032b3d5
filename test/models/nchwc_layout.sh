#!/usr/bin/env bash
# Blocked channels on the x86 targets end to end, against the c target
# (test/models/nchwc_layout.py). Skips, with the reason, when onnx or numpy
# is not importable. Last line: "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP nchwc_layout: onnx or numpy not importable by $PYTHON"
    echo "0 passed, 0 failed"
    exit 0
fi
exec "$PYTHON" "$here/nchwc_layout.py" "$@"
