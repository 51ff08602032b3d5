#!/usr/bin/env bash
# Real architectures: export torchvision resnet18, mobilenet_v2,
# squeezenet1_1, shufflenet_v2_x1_0 and efficientnet_b0 (random init, fixed
# seed, opset 13, 1x3x224x224) and a transformer encoder block
# (transformer_block: LayerNormalization, MatMul, Softmax, Erf-GELU; opset 17,
# dynamic batch axis, bound here with --input-shape input=2,16,64) to
# build/models/, compile each with tvmcc, run the C through test/driver.c and
# compare with onnxruntime-node: max|diff| <= 1e-3 * max|reference|. For the
# dynamic-batch transformer_block the graph after the passes (--dump-ir) must
# also have no Shape, ConstantOfShape, Concat, Unsqueeze or Cast node left:
# the exporter's shape computations must fold once the batch is bound.
#
#   test/models/check_torchvision.sh [NAME...]
#       (default: all six, in the order above)
#
# Skips, with the reason, when torch/torchvision or onnxruntime-node is
# missing. Prints PASS/FAIL/SKIP per model and, last, "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
dir="$root/build/models"
names=${*:-resnet18 mobilenet_v2 squeezenet1_1 shufflenet_v2_x1_0 efficientnet_b0 transformer_block}
pass=0 failed=0

finish() {
    echo "torchvision: $pass passed, $failed failed"
    echo "$pass passed, $failed failed"
    [ $failed = 0 ]
    exit
}

if ! "$PYTHON" -c 'import torch, torchvision' 2>/dev/null; then
    echo "SKIP torchvision: torch/torchvision not importable by $PYTHON"
    finish
fi
if [ ! -d "$root/build/node/node_modules/onnxruntime-node" ] || ! command -v node >/dev/null; then
    echo "SKIP torchvision: onnxruntime-node not installed (scripts/deps.sh test)"
    finish
fi
if [ ! -x "$TVMCC" ]; then
    echo "FAIL torchvision: $TVMCC not built"
    failed=1
    finish
fi

mkdir -p "$dir"
# A private copy, so that rebuilding tvmcc during the run is harmless.
if ! cp "$TVMCC" "$dir/tvmcc.bin"; then
    echo "FAIL torchvision: cannot copy $TVMCC"
    failed=1
    finish
fi
TVMCC="$dir/tvmcc.bin"
if ! "$PYTHON" "$here/check_torchvision.py" export "$dir" $names > "$dir/export.log" 2>&1; then
    echo "FAIL torchvision: export failed: $(grep -m1 -i error "$dir/export.log")"
    failed=1
    finish
fi

for n in $names; do
    w="$dir/$n"
    rm -rf "$w" && mkdir -p "$w"
    why=""
    shape=$(cat "$dir/$n.shape")
    if ! timeout 300 "$TVMCC" "$dir/$n.onnx" --input-shape "input=$shape" -o "$w/out" --name model \
            --dump-ir > "$w/ir.txt" 2> "$w/compile.log"; then
        why="compile: $(head -1 "$w/compile.log")"
    elif [ "$n" = transformer_block ] && left=$(grep -E -o \
            "^n[0-9]+ (Shape|ConstantOfShape|Concat|Unsqueeze|Cast) '[^']*'" "$w/ir.txt" \
            | head -3 | tr '\n' ' ') && [ -n "$left" ]; then
        why="shape computation not folded: $left(see $w/ir.txt)"
    elif ! $CC -std=c99 -O2 -I "$w/out" "$w"/out/*.c "$root/test/driver.c" -lm -o "$w/driver" \
            > "$w/cc.log" 2>&1; then
        why="cc: $(grep -m1 error "$w/cc.log")"
    elif ! timeout 600 "$w/driver" "$dir/$n.input.bin" -o "$w/output.bin" > "$w/run.log" 2>&1; then
        why="run: $(head -1 "$w/run.log")"
    elif ! timeout 300 node "$here/run_ort.js" "$dir/$n.onnx" "$dir/$n.input.bin:float32:$shape" \
            -o "$w/ref.bin" > "$w/ort.log" 2>&1; then
        why="onnxruntime: $(head -1 "$w/ort.log")"
    else
        cmp=$("$PYTHON" "$here/check_torchvision.py" compare "$w/ref.bin" "$w/output.bin")
        [ $? = 0 ] || why="mismatch: $cmp"
    fi
    if [ -z "$why" ]; then
        echo "PASS $n ($cmp)"
        pass=$((pass + 1))
    else
        echo "FAIL $n: $why"
        failed=$((failed + 1))
    fi
done
finish
