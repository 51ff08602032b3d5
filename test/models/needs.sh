# Sourced by the model test scripts that build models with onnx.helper and
# compare with onnxruntime-node. Expects $root and $PYTHON.
# needs_onnx_ort SUITE: when onnx/numpy are not importable by $PYTHON or
# onnxruntime-node is not installed in build/node, prints "SKIP SUITE: why"
# and "0 passed, 0 failed" and exits 0 (test/run_all.sh lists the SKIP).
needs_onnx_ort() {
    local why=""
    if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
        why="onnx/numpy not importable by $PYTHON"
    elif [ ! -d "$root/build/node/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
        why="onnxruntime-node not installed (scripts/deps.sh test)"
    fi
    [ -z "$why" ] && return 0
    echo "SKIP $1: $why"
    echo "0 passed, 0 failed"
    exit 0
}

# run_py_suite SUITE [ARGS...]: runs test/models/SUITE.py with a private
# copy of $TVMCC (so that rebuilding tvmcc during the run is harmless) in
# build/SUITE; a tvmcc not built is one failure.
run_py_suite() {
    local suite=$1 work="$root/build/$1"
    shift
    if [ ! -x "$TVMCC" ]; then
        echo "FAIL $suite: $TVMCC not built"
        echo "0 passed, 1 failed"
        exit 1
    fi
    mkdir -p "$work" && cp "$TVMCC" "$work/tvmcc.bin" ||
        { echo "FAIL $suite: cannot copy $TVMCC"; echo "0 passed, 1 failed"; exit 1; }
    exec "$PYTHON" "$root/test/models/$suite.py" --tvmcc "$work/tvmcc.bin" --work "$work" "$@"
}
