#!/usr/bin/env bash
# Exporter patterns and opset differences (issue 3): small onnx.helper models
# of the shape computations PyTorch's exporter writes (Shape -> Gather ->
# Unsqueeze -> Concat -> Reshape, ConstantOfShape, Expand of computed shapes,
# Slice with computed starts/ends, Clip with min/max inputs, Resize with
# computed sizes/scales; symbolic batch bound with --input-shape) and of
# operators whose attributes moved to inputs between opsets 7 and 17, and
# Shrink on integer inputs. Each is
# compiled with tvmcc, run through test/driver.c and compared with
# onnxruntime-node (max|diff| <= 1e-3 * max|reference|; integers exactly);
# the shape computations must not be left in the graph after the passes.
# See test/models/exporter_patterns.py.
#
#   test/models/exporter_patterns.sh [-k SUBSTRING]
#
# Skips, with the reason, when onnx/numpy or onnxruntime-node is missing.
# Prints PASS/FAIL per case and, last, "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}

. "$here/needs.sh"
needs_onnx_ort exporter_patterns
run_py_suite exporter_patterns "$@"
