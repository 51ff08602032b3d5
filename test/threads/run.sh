#!/bin/sh
# Two threads (issue 19): the emitted C built with -fopenmp and run with
# OMP_NUM_THREADS=2 (and 3, more threads than iterations of some loops)
# must give the same bytes as the same C built without OpenMP, on x86 conv
# and matmul shapes of the bench models, covering the parallel loops of
# lower/tpl_threads.c:
#   par/MODEL      the kernel has the expected `omp parallel for` pragmas: the
#                  large input copies before the tiles have their own
#                  parallel loop (resnet18-like 3x3 convs, the 7x7 first
#                  conv's row copy, a RegNet-style group-16 conv; copies
#                  of 128K elements and more; the 14x14 1x1 convs over 576
#                  and 768 channels and the stride-2 1x1 conv, whose rows
#                  of 28 take tiles of 6 and 5, read their input in place), odd loops fused (3 channel
#                  blocks x 28 row groups) and small kernels none
#   ref/MODEL      the 1-thread output against a float64 numpy reference
#                  (a GlobalAveragePool's plane sums included)
#                  (rtol 1e-4, atol 1e-4 of the output's scale)
#   dyn/MODEL      every `omp parallel for` of model.c has schedule(dynamic),
#                  in chunks of consecutive iterations at most a sixteenth
#                  of its loop (lower/tpl_threads.c: the last chunk is what
#                  the other thread waits for)
#   chunk/MODEL    a kernel whose iterations are little work each hands
#                  them out in chunks (RegNet's first 1x1 conv, 32 channels
#                  at 112 x 112: 5018 iterations of 320 multiply-adds ran
#                  slower on two threads than on one, one at a time)
#   omp/MODEL/N    the -fopenmp build at OMP_NUM_THREADS=N (2, 3) equals
#                  the 1-thread build byte for byte (a copy racing its
#                  tiles, or iterations split across threads that overlap,
#                  show up here)
# Needs python3 with onnx and numpy and a C compiler with OpenMP; a host
# without AVX2+FMA compiles only (SKIP). Ends with "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
CC=${CC:-cc}
T=x86-64-avx2
work=$root/build/threads
rm -rf "$work" && mkdir -p "$work"
. "$root/test/hostcpu.sh"
pass=0 failed=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$pass passed, $failed failed"; [ $failed = 0 ]; exit $?; }
# name C Co H W groups k stride pad post pragmas (post: relu, add, none; pragmas:
# `omp parallel for` lines expected in the kernel; gemm (k 0): C = K, Co = N, H = W = 1;
# k -1: GlobalAveragePool (the plane sums of tpl_sum.c) and a 1x1 conv to Co)
cat > "$work/cases.txt" <<'CASES'
r18_3x3        64  64 56 56  1 3 1 1 relu 2
r18_3x3_odd    64  48 56 56  1 3 1 1 add  2
r18_down       64 128 56 56  1 1 2 0 none 1
first_7x7_s2    3  64 224 224 1 7 2 3 relu 2
pos_1x1_14    768 160 14 14  1 1 1 0 none 1
mb2_1x1_14    576  96 14 14  1 1 1 0 none 1
mb2_dw_112     32  32 112 112 32 3 1 1 relu 1
regnet_gw16    64  64 56 56  4 3 1 1 relu 2
small_1x1      16  16  8  8  1 1 1 0 relu 0
regnet_1x1_112 32  32 112 112 1 1 1 0 relu 1
gemm_fc      2048 1024 1 1   1 0 0 0 none 1
gap_56        144  16 56 56  1 -1 0 0 none 1
CASES
if ! /usr/bin/python3 - "$work" "$root/test/models" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from convref import conv_ref
def conv64(x, w, b, g, s, p):
    return conv_ref(x, w, b, g, s, p)
rng = np.random.default_rng(1902)
names = []
for line in open(f"{out}/cases.txt"):
    f = line.split()
    name = f[0]
    C, Co, H, W, g, k, s, p = map(int, f[1:9])
    post = f[9]
    b = (rng.standard_normal(Co) * 0.1).astype(np.float32)
    if k < 0:  # GlobalAveragePool, then a 1x1 conv (a kernel of its own, as in a squeeze-excitation)
        w = (rng.standard_normal((Co, C, 1, 1)) / np.sqrt(C)).astype(np.float32)
        x = rng.standard_normal((1, C, H, W)).astype(np.float32)
        m = x.astype(np.float64).mean(axis=(2, 3), keepdims=True)
        y = conv64(m, w.astype(np.float64), b.astype(np.float64), 1, 1, 0)
        nodes = [helper.make_node("GlobalAveragePool", ["x"], ["m"], name="gap")]
        node = helper.make_node("Conv", ["m", "w", "b"], ["c"], name="conv")
    elif k == 0:  # Gemm: x[1, C] times w[C, Co] plus b
        w = (rng.standard_normal((C, Co)) / np.sqrt(C)).astype(np.float32)
        x = rng.standard_normal((1, C)).astype(np.float32)
        y = x.astype(np.float64) @ w.astype(np.float64) + b
        node = helper.make_node("Gemm", ["x", "w", "b"], ["c"], name="fc")
    else:
        w = (rng.standard_normal((Co, C // g, k, k)) / np.sqrt(C // g * k * k)).astype(np.float32)
        x = rng.standard_normal((1, C, H, W)).astype(np.float32)
        y = conv64(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), g, s, p)
        node = helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", group=g, kernel_shape=[k, k],
                                strides=[s, s], pads=[p, p, p, p])
    nodes = (nodes if k < 0 else []) + [node]
    gin = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    x.tofile(f"{out}/{name}.in0.bin")
    last = "c"
    if post == "add":
        r = rng.standard_normal(y.shape).astype(np.float32)
        gin.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, list(y.shape)))
        nodes.append(helper.make_node("Add", ["c", "r"], ["a"], name="add"))
        r.tofile(f"{out}/{name}.in1.bin")
        y = y + r
        last = "a"
    if post == "relu":
        nodes.append(helper.make_node("Relu", [last], ["y"], name="relu"))
        y = np.maximum(y, 0)
    else:
        nodes.append(helper.make_node("Identity", [last], ["y"], name="id"))
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    graph = helper.make_graph(nodes, name, gin, [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
                              inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{out}/{name}.onnx")
    y.astype(np.float32).tofile(f"{out}/{name}.ref.bin")
    names.append(name)
PY
then
    bad models "cannot build the test models (python3-onnx, numpy missing?)"
    finish
fi
if ! echo 'int main(void){return 0;}' > "$work/omp.c" || ! $CC -fopenmp "$work/omp.c" -o "$work/omp" 2> /dev/null; then
    echo "SKIP omp: $CC has no -fopenmp"
    finish
fi
runs=1
{ [ "$(uname -m)" = x86_64 ] && host_has avx2 && host_has fma; } || runs=0
while read -r name C Co H W g k s p post want; do
    o=$work/$name
    if ! "$TVMCC" "$work/$name.onnx" -t $T --name model -o "$o" > "$o.log" 2>&1; then
        bad "$name" "tvmcc failed: $(tail -n 1 "$o.log")"
        continue
    fi
    # in the conv's or gemm's kernel (k0; the output's layout transform
    # is a kernel of its own)
    n=$(awk '/^static void k/ { k = ($3 ~ /^k0_/) } k && /#pragma omp parallel for/ { n++ } END { print n + 0 }' \
        "$o/model.c")
    [ "$n" = "$want" ] && ok || bad "par/$name" "$n parallel loops in its kernel, expected $want"
    # every parallel loop hands its iterations out dynamically (a thread
    # slowed by another job takes fewer)
    nd=$(grep -c '#pragma omp parallel for schedule(dynamic\(, [1-9][0-9]*\)\{0,1\})$' "$o/model.c")
    na=$(grep -c '#pragma omp parallel for' "$o/model.c")
    [ "$nd" = "$na" ] && ok || bad "dyn/$name" "$nd of $na parallel loops with schedule(dynamic)"
    # each chunked loop: pragma, #endif, then `for (... < N; ...)`
    coarse=$(awk '/#pragma omp parallel for schedule\(dynamic, / { c = $0; sub(/.*, /, "", c); sub(/\).*/, "", c); next }
        c && /for \(/ { n = $0; sub(/.*< /, "", n); sub(/;.*/, "", n); if (n / c < 16) bad++; c = 0 }
        END { print bad + 0 }' "$o/model.c")
    [ "$coarse" = 0 ] && ok || bad "dyn/$name" "$coarse parallel loops in fewer than 16 chunks"
    if [ "$name" = regnet_1x1_112 ]; then
        grep -q '#pragma omp parallel for schedule(dynamic, [1-9]' "$o/model.c" && ok ||
            bad "chunk/$name" "its parallel loop hands out one iteration at a time"
    fi
    if [ $runs = 0 ]; then
        echo "SKIP $name: the host cannot run $T code"
        continue
    fi
    ins=$work/$name.in0.bin
    [ -f "$work/$name.in1.bin" ] && ins="$ins $work/$name.in1.bin"
    flags=$(sed -n 's/^MODEL_CFLAGS := -I[^ ]* //p' "$o/model.mk")
    # shellcheck disable=SC2086
    if ! $CC -I"$o" -std=c99 -O2 $flags "$o"/*.c "$root/bench/timer.c" -lm -o "$o/timer1" 2> "$o/cc1.log" ||
        ! $CC -I"$o" -std=c99 -O2 $flags -fopenmp "$o"/*.c "$root/bench/timer.c" -lm -o "$o/timer2" 2> "$o/cc2.log" ||
        ! "$o/timer1" $ins -w 0 -n 1 -o "$o/out1.bin" > /dev/null 2>&1; then
        bad "$name" "build or run failed ($o/cc1.log, $o/cc2.log)"
        continue
    fi
    if /usr/bin/python3 -c '
import sys, numpy as np
a = np.fromfile(sys.argv[1], np.float32); b = np.fromfile(sys.argv[2], np.float32)
ok = a.size == b.size and a.size > 0 and np.allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(b).max())))
sys.exit(0 if ok else 1)
' "$o/out1.bin" "$work/$name.ref.bin"; then ok; else bad "ref/$name" "1-thread output differs from the reference"; fi
    for nt in 2 3; do
        # shellcheck disable=SC2086
        if ! OMP_NUM_THREADS=$nt "$o/timer2" $ins -w 1 -n 3 -o "$o/out$nt.bin" > /dev/null 2>&1; then
            bad "omp/$name/$nt" "the -fopenmp build failed to run"
        elif cmp -s "$o/out1.bin" "$o/out$nt.bin"; then
            ok
        else
            bad "omp/$name/$nt" "OMP_NUM_THREADS=$nt output differs from the 1-thread build"
        fi
    done
done < "$work/cases.txt"
# the portable target's matrix-vector product keeps the packed tile (its
# sums in the naive order: the c target is the reference), not the x86
# targets' reassociated plane sums
# (a classifier's Gemm: weights [N, K], transB = 1, K contiguous in both
# operands, the shape the plane sums take)
if /usr/bin/python3 - "$work/gemm_tb.onnx" <<'PY' &&
import sys, numpy as np
from onnx import TensorProto, helper, numpy_helper, save
w = np.random.default_rng(5).standard_normal((1000, 512)).astype(np.float32)
g = helper.make_graph([helper.make_node("Gemm", ["x", "w"], ["y"], transB=1, name="fc")], "fc",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 512])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1000])],
                      [numpy_helper.from_array(w, "w")])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
    "$TVMCC" "$work/gemm_tb.onnx" -t c --name model -o "$work/gemm_tb.c" > "$work/gemm_tb.c.log" 2>&1; then
    grep -q "packed_k0_gemm'" "$work/gemm_tb.c/model.c" && ok ||
        bad "c/gemm_tb" "the c target's Gemm did not take the packed tile ($work/gemm_tb.c/model.c)"
else
    bad "c/gemm_tb" "model or tvmcc -t c failed: $(tail -n 1 "$work/gemm_tb.c.log")"
fi
finish
