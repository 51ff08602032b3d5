#!/usr/bin/env bash
# Sequence and optional graph inputs and outputs (issue 17): models built
# with onnx.helper, compiled with --sequence-length / --input-shape 'x[K]=...'
# / --optional-absent, run on the host with test/driver.c and compared with
# numpy; NAME.json's buffer names and absent_inputs checked. See
# test/models/seq_io.py.
#
#   test/models/seq_io.sh [-k SUBSTRING]
#
# Skips, with the reason, when onnx/numpy is missing.
# Prints PASS/FAIL per case and, last, "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}

. "$here/needs.sh"
if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP seq_io: onnx/numpy not importable by $PYTHON"
    echo "0 passed, 0 failed"
    exit 0
fi
run_py_suite seq_io "$@"
