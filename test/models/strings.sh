#!/usr/bin/env bash
# String tensors and StringNormalizer (test/models/strings.py). Skips, with
# the reason, when onnx is not importable. Last line: "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
if ! "$PYTHON" -c 'import onnx' 2>/dev/null; then
    echo "SKIP strings: onnx not importable by $PYTHON"
    echo "0 passed, 0 failed"
    exit 0
fi
exec "$PYTHON" "$here/strings.py" "$@"
