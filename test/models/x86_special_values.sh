#!/usr/bin/env bash
# Special float values (NaN, infinities, signed zeros, exp overflow) through
# the x86 vector printer, AVX-512 and AVX2 (test/models/x86_special_values.py). Skips, with
# the reason, when onnx is not importable. Last line: "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP x86_special_values: onnx or numpy not importable by $PYTHON"
    echo "0 passed, 0 failed"
    exit 0
fi
exec "$PYTHON" "$here/x86_special_values.py" "$@"
