#!/usr/bin/env bash
# Tensorize follows the target's declaration: test/intrin/toyvec.json (a
# test target, not shipped) declares a tile intrinsic `toy_tile` for a
# made-up 8-lane ISA whose vectors are structs of floats and whose C
# templates are plain C99 expressions. Checks, with `-t` given that file:
#   - conv (dense, strided, depthwise) and matmul (Linear, Gemm, MatMul)
#     models from the ONNX suites compile, build and match the reference
#     outputs (test/conformance/run.sh), with the tile under its guard and
#     again with -DTOYVEC_PORTABLE (the scalar nest under #else);
#   - the models known to tensorize do print toy_tile, from its templates,
#     and two print lane-wise loops from its "lanes" declaration toy_lanes;
#   - a copy that allows at most 2 rows gets only tiles of 1 or 2 rows (the
#     larger ones left as loops, with a warning naming the kernel), and
#     one whose vector operand may not vary with the rows no tile for the
#     depthwise conv (whose input vectors move with the row), with the same
#     results (the matcher reads the declared extents and axes);
#   - the shipped x86 targets turn off GCC predictive commoning (a guarded
#     pragma before the first kernel of a conv model), and so a 3x3 stride-2
#     conv keeps a full-size tile (more than 9 rows of 32);
#   - an AVX-512 elementwise loop over 2x27x27 floats takes 92 vectors of 16
#     lanes (the last masked), not 162 of 9;
#   - an AVX-512 MatMul (50x64x96, constant B) accumulates in the output: a
#     13-row and an 11-row tile, starting from zero in registers, two
#     reduction steps per iteration, no local accumulator array; its results
#     (when the CPU has AVX-512) match numpy;
#   - bad declarations exit 1 naming the file and the field, as do an
#     unknown isa and a declared intrinsic that the target's family prints
#     nowhere (the JSON-only RISC-V vector target of issue 15).
# (The parser's refusals are unit-tested in test/unit/unit.c.)
# Prints one line per check and "N passed, N failed"; exit 1 on a failure.
#
#   test/intrin/run.sh          (TVMCC overrides the compiler)
set -u
. "$(cd "$(dirname "$0")/.." && pwd)/hostcpu.sh"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tvmcc=${TVMCC:-$root/tvmcc}
work=${INTRIN_WORK:-$root/build/intrin}
toy=$here/toyvec.json
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# Tests that tensorize with toy_tile (each also in the filter below).
tiled="pytorch-converted/test_Conv2d pytorch-converted/test_Conv2d_strided
pytorch-converted/test_Conv2d_depthwise_padded pytorch-converted/test_Linear
pytorch-operator/test_operator_conv"
filter='/(test_Conv2d|test_Conv2d_strided|test_Conv2d_depthwise_padded|test_Linear|test_operator_conv|test_gemm_default_no_bias|test_matmul_2d)$'

# conformance LABEL TARGET_FILE [CC]: the filtered tests with that target
conformance() {
    local label=$1 target=$2 cc=${3:-}
    local log="$work/$label.log"
    env TVMCC="$tvmcc" TVMCC_FLAGS="-t $target" CONFORMANCE_WORK="$work/$label" ${cc:+CC_HOST="$cc"} \
        "$root/test/conformance/run.sh" --suite all --filter "$filter" -j 2 > "$log" 2>&1
    local rc=$? last
    last=$(tail -n 1 "$log")
    if [ $rc = 0 ] && [ "$last" = "7 passed, 0 failed" ]; then
        ok "$label: $last"
    else
        bad "$label: $last (see $log)"
    fi
}

conformance toy "$toy"
for t in $tiled; do
    c="$work/toy/host/$t/out/model.c"
    if grep -q 'toy_tile [0-9]*x[0-9]*: accumulators in registers' "$c" 2>/dev/null &&
        grep -q 'c0_0 = (toyv8){{c0_0.l\[0\] + a.l\[0\] \* w0.l\[0\]' "$c" &&
        grep -q '^#if !defined(TOYVEC_PORTABLE)$' "$c"; then
        ok "toy: $t printed toy_tile from the templates"
    else
        bad "toy: $t has no toy_tile printed from the templates"
    fi
done
# the lane-wise declaration (toy_lanes: helper functions from its header)
for t in pytorch-converted/test_Conv2d_depthwise_padded pytorch-operator/test_operator_conv; do
    c="$work/toy/host/$t/out/model.c"
    if grep -q 'lane 0 of a toyv8 (toy_lanes)' "$c" 2>/dev/null && grep -q 'toyv_st(&b[0-9]*\[' "$c"; then
        ok "toy: $t printed toy_lanes vector loops from the templates"
    else
        bad "toy: $t has no toy_lanes vector loop"
    fi
done
conformance toy-portable "$toy" "gcc -DTOYVEC_PORTABLE"

# at most 2 rows: only 1- and 2-row tiles, same results
sed 's/"max": 28/"max": 2/' "$toy" > "$work/toy2.json"
conformance toy-2rows "$work/toy2.json"
# (lower/tpl_packed.c sizes the tiles; the matcher takes those it allows)
small=0 big=0
for t in $tiled; do
    c="$work/toy-2rows/host/$t/out/model.c"
    small=$((small + $(grep -c 'toy_tile [12]x' "$c" 2>/dev/null)))
    big=$((big + $(grep -c 'toy_tile \([3-9]\|[1-9][0-9]\)x' "$c" 2>/dev/null)))
done
if [ "$small" -gt 0 ] && [ "$big" = 0 ] && grep -q 'toy_tile 4x' "$work/toy/host/pytorch-converted/test_Conv2d/out/model.c"; then
    ok "toy-2rows: $small tiles of at most 2 rows, the 4-row tiles left as loops"
else
    bad "toy-2rows: $small tiles of at most 2 rows, $big larger"
fi
# a tensorized nest that no printer matches is warned about (one line naming
# its kernel), never silently scalar; the full toy target has no such nest
log2="$work/toy-2rows/host/pytorch-converted/test_Conv2d/compile.log"
if grep -q "warning: .*kernel k[0-9]*_[a-z0-9_]*: [0-9]* loop nests* marked for tensorize match.* no printer of target 'toy2'; printed as scalar loops" "$log2" 2>/dev/null &&
    ! grep -q 'marked for tensorize' "$work/toy/host/pytorch-converted/test_Conv2d/compile.log"; then
    ok "toy-2rows: the 4-row tiles left as loops are warned about, naming the kernel"
else
    bad "toy-2rows: no tensorize-miss warning in $log2 (or one with the full toy target)"
fi

# the vector operand declared invariant in the rows (y[col]): the dense
# conv's tile (weight vectors the same for every row) is still taken, the
# depthwise conv's (its input vectors move with the output row) is not
sed 's/y\[row,col\]/y[col]/' "$toy" > "$work/toyinv.json"
conformance toy-invariant "$work/toyinv.json"
d="$work/toy-invariant/host/pytorch-converted"
if grep -q 'toy_tile' "$d/test_Conv2d/out/model.c" 2>/dev/null &&
    ! grep -q 'toy_tile' "$d/test_Conv2d_depthwise_padded/out/model.c"; then
    ok "toy-invariant: dense conv tiled, depthwise conv (row-moving vectors) not"
else
    bad "toy-invariant: the declared axes of y were not honoured"
fi

# The shipped x86 tile declarations' header turns off GCC's predictive
# commoning for the whole file, ahead of the first kernel: it otherwise
# carries the broadcasts that neighbouring window columns share in
# registers across a conv tile's reduce loop and the tile spills.
conv=${TESTDATA:-/usr/share/libonnx-testdata/data}/pytorch-converted/test_Conv2d/model.onnx
for t in x86-64-avx512 x86-64-avx2; do
    "$tvmcc" "$conv" -t $t -o "$work/pc-$t" > "$work/pc-$t.log" 2>&1
    c="$work/pc-$t/model.c"
    first=$(grep -n -m1 '^static void k' "$c" 2>/dev/null | cut -d: -f1)
    line=$(grep -n -m1 '^#pragma GCC optimize("no-predictive-commoning")$' "$c" 2>/dev/null | cut -d: -f1)
    if [ -n "$first" ] && [ -n "$line" ] && [ "$line" -lt "$first" ] &&
        [ "$(sed -n "$((line - 1))p" "$c")" = '#if defined(__GNUC__) && !defined(__clang__)' ]; then
        ok "$t: predictive commoning off (GCC only) before the first kernel"
    else
        bad "$t: no guarded '#pragma GCC optimize(\"no-predictive-commoning\")' before the kernels of $c"
    fi
done

# ... and so a strided conv whose windows overlap (3x3, stride 2) keeps a
# full-size tile: more than the (32 - 2 - 2) / 3 = 9 rows that the cap for
# compilers that carry one broadcast per row (strided_rows) would leave.
PYTHON=${PYTHON:-/usr/bin/python3}
if "$PYTHON" -c 'import onnx' 2>/dev/null; then
    "$PYTHON" - "$work/s2conv.onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
w = numpy_helper.from_array(np.ones((32, 3, 3, 3), np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[2, 2], pads=[1, 1, 1, 1])],
                      "s2conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 32, 32])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
    "$tvmcc" "$work/s2conv.onnx" -t x86-64-avx512 -o "$work/s2conv" > "$work/s2conv.log" 2>&1
    rows=$(grep -o -m1 'fma_tile [0-9]*x32' "$work/s2conv/model.c" 2>/dev/null | sed 's/fma_tile \([0-9]*\)x32/\1/')
    if [ -n "$rows" ] && [ "$rows" -gt 9 ]; then
        ok "x86-64-avx512: 3x3 stride-2 conv keeps a ${rows}x32 tile (no row cap)"
    else
        bad "x86-64-avx512: 3x3 stride-2 conv tile '${rows}' (expected more than 9 rows of 32; $work/s2conv)"
    fi
    # an elementwise op over 2 planes of 27x27: 92 vectors of 16 lanes, the
    # last masked, not 162 of 9 (a divisor of 1458 near 16)
    "$PYTHON" - "$work/relu729.onnx" <<'PY'
import sys
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu729",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 27, 27])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 27, 27])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
    "$tvmcc" "$work/relu729.onnx" -t x86-64-avx512 -o "$work/relu729" > "$work/relu729.log" 2>&1
    if grep -q '< 92; ' "$work/relu729/model.c" 2>/dev/null && grep -q 'vn = vg < 16 ? vg : 16;' "$work/relu729/model.c"; then
        ok "x86-64-avx512: 2x27x27 elementwise in 92 vectors of 16 lanes, the last masked"
    else
        bad "x86-64-avx512: 2x27x27 elementwise not cut into 92 masked vectors of 16 ($work/relu729)"
    fi
    # a MatMul with a constant B whose columns are whole tiles (50 x 64 x
    # 96): its tiles accumulate in the output (no local accumulator
    # array), 50 = 3 x 13 + 11 rows as a 13-row tile and an 11-row one,
    # both starting from zero in registers with the reduction two steps
    # per iteration; then built and run, the output matches numpy
    "$PYTHON" - "$work/mm" <<'PY'
import os, sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(5)
b = rng.standard_normal((64, 96)).astype(np.float32)
x = rng.standard_normal((50, 64)).astype(np.float32)
g = helper.make_graph([helper.make_node("MatMul", ["x", "b"], ["y"], name="mm")], "mm",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [50, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [50, 96])],
                      [numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(d + "/mm.onnx", "wb").write(m.SerializeToString())
x.tofile(d + "/x.bin")
(x.astype(np.float64) @ b.astype(np.float64)).astype(np.float32).tofile(d + "/ref.bin")
PY
    "$tvmcc" "$work/mm/mm.onnx" -t x86-64-avx512 --name model -o "$work/mm/out" > "$work/mm/tvmcc.log" 2>&1
    c="$work/mm/out/model.c"
    if grep -q 'fma_tile 13x32' "$c" 2>/dev/null && grep -q 'fma_tile 11x32' "$c" &&
        [ "$(grep -c '_mm512_set1_ps(0.0f);' "$c")" = $(((13 + 11) * 2)) ] &&
        [ "$(grep -c ' = _mm512_fmadd_ps(a, w' "$c")" = $(((13 + 11) * 2)) ] &&
        grep -q 'for (int32_t ru[0-9]* = 0; ru[0-9]* < 2; ru[0-9]*++)' "$c" &&
        ! grep -q '^ *float b[0-9]*\[[0-9]*\];' "$c"; then
        ok "x86-64-avx512: 50x64x96 MatMul tiles accumulate in the output (13 and 11 rows, from zero)"
    else
        bad "x86-64-avx512: 50x64x96 MatMul tiles not accumulated in the output as expected ($c)"
    fi
    if ! host_has avx512f; then
        echo "SKIP x86-64-avx512: 50x64x96 MatMul run against numpy: the host has no AVX-512F (its tiles are checked above)"
    else
        if cc -std=c99 -O2 -mavx512f -mfma -I"$work/mm/out" "$work/mm/out"/*.c "$root/bench/timer.c" -lm \
            -o "$work/mm/timer" > "$work/mm/cc.log" 2>&1 &&
            "$work/mm/timer" "$work/mm/x.bin" -w 0 -n 1 -o "$work/mm/y.bin" > /dev/null &&
            "$PYTHON" -c 'import sys, numpy as np
y = np.fromfile(sys.argv[1], np.float32); r = np.fromfile(sys.argv[2], np.float32)
sys.exit(not (y.shape == r.shape and np.all(np.abs(y - r) <= 1e-4 * np.maximum(np.abs(r), 1))))' \
                "$work/mm/y.bin" "$work/mm/ref.bin"; then
            ok "x86-64-avx512: 50x64x96 MatMul in the output matches numpy"
        else
            bad "x86-64-avx512: 50x64x96 MatMul in the output: build, run or results wrong ($work/mm)"
        fi
    fi
    # a 13x32 tile over 13x13 planes, 3 input-channel blocks (squeezenet1_1's
    # 48-to-192 expand conv): with gcc's default allocation regions one
    # weight vector lived in a stack slot, read back by 13 FMAs per step;
    # the AVX-512 header's ira-region=all keeps every operand in a register
    "$PYTHON" - "$work/spill.onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(7)
w = numpy_helper.from_array(rng.standard_normal((192, 48, 3, 3)).astype(np.float32), "w")
bias = numpy_helper.from_array(rng.standard_normal(192).astype(np.float32), "b")
g = helper.make_graph([helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                       helper.make_node("Relu", ["c"], ["y"], name="relu")],
                      "spill", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 48, 13, 13])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 192, 13, 13])], [w, bias])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
    march=-march=native
    host_has avx512f || march="-mavx512f -mfma"
    if "$tvmcc" "$work/spill.onnx" -t x86-64-avx512 --name model -o "$work/spill" > "$work/spill.log" 2>&1 &&
        grep -q 'fma_tile 13x32' "$work/spill/model.c" &&
        cc -std=c99 -O3 $march -c "$work/spill/model.c" -o "$work/spill/model.o" > "$work/spill/cc.log" 2>&1 &&
        objdump -d "$work/spill/model.o" > "$work/spill/model.s" 2>&1 &&
        [ "$(grep -c vfmadd "$work/spill/model.s")" -ge 26 ] &&
        ! grep -q 'vfmadd[0-9a-z]*ps .*(%r[sb]p)' "$work/spill/model.s"; then
        ok "x86-64-avx512: 13x32 conv tile on 13x13 planes compiles with no FMA operand from the stack"
    else
        bad "x86-64-avx512: 13x32 conv tile on 13x13 planes: FMA operands spilled to the stack (or no 13x32 tile; $work/spill)"
    fi
    # a 3x3 stride-2 max pool with padding over NCHW planes (24 channels
    # stay NCHW): each window column's 14 outputs read every other input
    # through two masked loads and a permute, the padding's lane mask spread
    # onto the loads' even elements, not a gather (the results are checked
    # by conformance tests such as test_maxpool_2d_ceil)
    "$PYTHON" - "$work/pool2.onnx" <<'PY'
import sys
from onnx import TensorProto, helper
g = helper.make_graph([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2],
                                        pads=[1, 1, 1, 1])], "pool2",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24, 112, 112])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 56, 56])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
    if "$tvmcc" "$work/pool2.onnx" -t x86-64-avx512 -o "$work/pool2" > "$work/pool2.log" 2>&1 &&
        grep -q 'tvmcc_even16((unsigned)' "$work/pool2/model.c" && ! grep -q 'i32gather' "$work/pool2/model.c"; then
        ok "x86-64-avx512: padded stride-2 max pool reads by masked loads and a permute, no gather"
    else
        bad "x86-64-avx512: padded stride-2 max pool: gathers or no lane-mask spread ($work/pool2)"
    fi
    # weights more than twice the target's L2 (256 to 512 channels, 3x3:
    # 4.7 MB; x86-64-avx512 says 1 MB of L2) are also prefetched into L2
    # one reduce block ahead; the 48-to-192 conv above (330 KB) is not
    "$PYTHON" - "$work/bigw.onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
w = numpy_helper.from_array(np.full((512, 256, 3, 3), 0.01, np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])],
                      "bigw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 7, 7])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 512, 7, 7])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
    if "$tvmcc" "$work/bigw.onnx" -t x86-64-avx512 --dump-loops -o "$work/bigw" > "$work/bigw.loops" 2>&1 &&
        grep -q 'tensorized for .* prefetch +[0-9]* prefetch-l2 +[0-9]*:' "$work/bigw.loops" &&
        grep -q '__builtin_prefetch(tb + [0-9]*, 0, 2);' "$work/bigw/model.c" &&
        ! grep -q ', 0, 2);' "$work/spill/model.c"; then
        ok "x86-64-avx512: a conv with 4.7 MB of weights prefetches the next reduce block into L2, a 330 KB one does not"
    else
        bad "x86-64-avx512: L2 prefetch of large conv weights missing, or present for small ones ($work/bigw)"
    fi
    # a blocked 1x1 conv to one 16-channel block over 55x55 (3025 = 121 x 25
    # positions): tiles of 25 rows, more than a vector's lanes, since the
    # blocked epilogue stores whole vectors; over 13x13 (169 positions, no
    # such divisor up to 28) it keeps 13
    for hw in 55 13; do
        "$PYTHON" - "$work/pw$hw.onnx" "$hw" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
hw = int(sys.argv[2])
w = numpy_helper.from_array(np.full((16, 128, 1, 1), 0.01, np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], "pw",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128, hw, hw])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, hw, hw])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
open(sys.argv[1], "wb").write(m.SerializeToString())
PY
        "$tvmcc" "$work/pw$hw.onnx" -t x86-64-avx512 -o "$work/pw$hw" > "$work/pw$hw.log" 2>&1
    done
    if grep -q 'fma_tile 25x16' "$work/pw55/model.c" 2>/dev/null && grep -q 'fma_tile 13x16' "$work/pw13/model.c" 2>/dev/null; then
        ok "x86-64-avx512: blocked 1x1 conv to 16 channels: 25-row tiles over 55x55, 13 over 13x13"
    else
        bad "x86-64-avx512: blocked 1x1 conv to 16 channels: unexpected tile rows ($work/pw55, $work/pw13)"
    fi
else
    bad "stride-2 conv tile: onnx not importable by $PYTHON"
fi

# bad declarations: exit 1, the file and the field named
model=${TESTDATA:-/usr/share/libonnx-testdata/data}/node/test_matmul_2d/model.onnx
refuse() { # refuse NAME SED FIELD
    local f="$work/bad-$1.json"
    sed "$2" "$toy" > "$f"
    "$tvmcc" "$model" -t "$f" -o "$work/bad-out" > "$work/bad-$1.log" 2>&1
    local rc=$?
    if [ $rc = 1 ] && grep -q "target file $f: $3" "$work/bad-$1.log"; then
        ok "refuses $1 (exit 1): $(head -1 "$work/bad-$1.log" | cut -c1-120)"
    else
        bad "refuses $1: exit $rc, $(head -1 "$work/bad-$1.log")"
    fi
}
refuse placeholder 's/(\$ptr)\[0\]/($pointer)[0]/' 'intrinsics.toy_tile.c.load: unknown placeholder'
refuse compute 's/x\[row\] \* y/x[row] * * y/' 'intrinsics.toy_tile.compute: expected a name'
refuse template 's/"fma": /"fmadd": /' 'intrinsics.toy_tile.c.fmadd: unknown template'
refuse lanes-guard '/"guard": "!defined(TOYVEC_PORTABLE)",$/d' 'intrinsics.toy_lanes.guard: missing'
refuse lanes 's/"lanes": 8/"lanes": 4/' 'intrinsics.toy_tile.lanes'
# families (ir/family.c): an unknown isa; a "lanes" intrinsic the family
# prints nowhere (x86 prints its vector loops with emit_intrin.c)
refuse isa 's/"isa": "generic"/"isa": "riscv64-v"/' 'isa: unknown ISA "riscv64-v"'
refuse x86-lanes 's/"isa": "generic"/"isa": "x86-64"/' 'intrinsics.toy_lanes.kind: this family prints no "lanes"'
refuse knob 's/"cflags": /"schedule": {"acc": 12}, "cflags": /' 'schedule.acc: not read by this target'
# the JSON-only RISC-V vector target of issue 15 (docs/adding-a-target.md's
# fields, a valid "lanes" intrinsic): refused at its isa, and as isa
# "generic", at the intrinsic that family would print nowhere (the generic
# templates leave whole-vector loops only around a declared tile)
rv="$work/riscv64-v.json"
cat > "$rv" <<'JSON'
{
  "isa": "riscv64-v",
  "vector_bits": 128,
  "intrinsics": {
    "rvv": {
      "kind": "lanes", "lanes": 4, "vector_type": "vfloat32m1_t",
      "header": "#include <riscv_vector.h>", "guard": "defined(__riscv_v_intrinsic)",
      "c": {"load": "__riscv_vle32_v_f32m1($ptr, 4)", "store": "__riscv_vse32_v_f32m1($ptr, $x, 4)",
            "broadcast": "__riscv_vfmv_v_f_f32m1($x, 4)", "add": "__riscv_vfadd_vv_f32m1($a, $b, 4)",
            "sub": "__riscv_vfsub_vv_f32m1($a, $b, 4)", "mul": "__riscv_vfmul_vv_f32m1($a, $b, 4)",
            "min": "__riscv_vfmin_vv_f32m1($a, $b, 4)", "max": "__riscv_vfmax_vv_f32m1($a, $b, 4)"}
    }
  }
}
JSON
for isa in riscv64-v generic; do
    f="$work/rv-$isa.json"
    sed "s/\"riscv64-v\"/\"$isa\"/" "$rv" > "$f"
    "$tvmcc" "$model" -t "$f" -o "$work/bad-out" > "$work/rv-$isa.log" 2>&1
    rc=$?
    if [ $isa = riscv64-v ]; then want="target file $f: isa: unknown ISA"; else want="target file $f: intrinsics.rvv.kind: "; fi
    if [ $rc = 1 ] && [ "$(wc -l < "$work/rv-$isa.log")" = 1 ] && grep -q "$want" "$work/rv-$isa.log"; then
        ok "refuses the RISC-V vector target as isa $isa (exit 1): $(cut -c1-120 "$work/rv-$isa.log")"
    else
        bad "RISC-V vector target as isa $isa: exit $rc, $(head -1 "$work/rv-$isa.log")"
    fi
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
