#!/bin/sh
# 3x3 convs as Winograd F(2x2, 3x3) (passes/winograd.c, lower/op_winograd.c):
#   MODEL/TARGET   each model below (a 1x1 conv, whose blocked output the 3x3
#                  conv reads, then the 3x3 conv and its fused ops) compiled
#                  with -t TARGET, run through bench/timer.c and compared
#                  with a float64 numpy reference (rtol 1e-4, atol 1e-4 of
#                  the output's scale); TARGET x86-64-avx2 (its winograd
#                  knob), x86-64-avx2 with the knob off (a target file),
#                  and the portable c
#   pass/MODEL     --dump-ir=winograd with x86-64-avx2: the w_* models'
#                  3x3 conv became WinogradInput, 16 MatMuls and
#                  WinogradOutput; the n_* models' did not (stride 2, 16
#                  input channels, 16 output channels, 9 tiles, dilation
#                  2, two groups); with the knob off, x86-64-avx512 and c
#                  none did
#   fused/MODEL    the conv's Relu (and residual Add) fuse into
#                  WinogradOutput's kernel; a transform back to NCHW does
#                  not (--dump-loops kernel headers)
#   noflag/MODEL   --no-winograd with x86-64-avx2: no conv rewritten
#   internal/OP   a file that names WinogradInput or WinogradOutput (in the
#                  default domain or "tvmcc") gets the unknown-operator
#                  error naming the node, exit status 1, no output written
#   real/resnet18  torchvision's resnet18 (build/models/resnet18.onnx, which
#                  the torchvision suite exports; skipped without it): its
#                  3x3 convs rewritten (13 WinogradInput), its output with
#                  x86-64-avx2 within 1e-4 of the largest from the output
#                  with the knob off
#   par/w_pad2_odd the 16 small products parallel (counted as one conv's)
#   rows/, inplace/w_56_relu  the products parallel over their row tiles,
#                  reading V in place (no row-panel copy)
#   vec/w_56_relu  lower/tpl_winograd.c's nests: WinogradInput's 16 stages
#                  in one vector loop of 8 lanes (one `vectorized for ...
#                  in 0..8`, 16 stores in it), WinogradOutput's four
#                  outputs of a tile in four such loops with no select
#                  left (the parity folded), the 16 products in the packed
#                  tile (tensorized for)
# Ends with "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
CC=${CC:-cc}
work=$root/build/winograd
rm -rf "$work" && mkdir -p "$work"
. "$root/test/hostcpu.sh"
pass=0 failed=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$pass passed, $failed failed"; [ $failed = 0 ]; exit $?; }
sed 's/"winograd": 1/"winograd": 0/' "$root/targets/x86-64-avx2.json" > "$work/avx2-off.json"
grep -q '"winograd": 0' "$work/avx2-off.json" || bad knob "x86-64-avx2.json has no \"winograd\": 1"
# name N C K H W pad_top pad_left pad_bottom pad_right stride dilation groups bias post
cat > "$work/cases.txt" <<'CASES'
w_56_relu     1 64 64 56 56 1 1 1 1 1 1 1 1 relu
w_odd_asym    2 32 40 13 11 0 1 2 1 1 1 1 0 none
w_res_add     1 32 32 16 16 1 1 1 1 1 1 1 1 addrelu
w_pad2_odd    1 48 32 15 17 2 2 2 2 1 1 1 1 relu
w_nopad       1 32 48 19 18 0 0 0 0 1 1 1 1 none
n_stride2     1 64 64 28 28 1 1 1 1 2 1 1 1 relu
n_c16         1 16 32 28 28 1 1 1 1 1 1 1 1 relu
n_k16         1 32 16 28 28 1 1 1 1 1 1 1 1 relu
n_tiles9      1 64 64 5 5   1 1 1 1 1 1 1 1 relu
w_7x7_add     1 64 64 7 7   1 1 1 1 1 1 1 1 addrelu
n_dil2        1 32 32 20 20 2 2 2 2 1 2 1 1 relu
n_group2      1 64 64 20 20 1 1 1 1 1 1 2 1 relu
CASES
if ! /usr/bin/python3 - "$work" "$root/test/models" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from convref import conv_ref
rng = np.random.default_rng(23)
names = []
for line in open(f"{out}/cases.txt"):
    f = line.split()
    name = f[0]
    N, C, K, H, W, pt, pl, pb, pr, s, d, g, hasb = map(int, f[1:14])
    post = f[14]
    f64 = lambda a: a.astype(np.float64)
    w0 = (rng.standard_normal((C, C, 1, 1)) / np.sqrt(C)).astype(np.float32)
    w = (rng.standard_normal((K, C // g, 3, 3)) / np.sqrt(C // g * 9)).astype(np.float32)
    b = rng.standard_normal(K).astype(np.float32) if hasb else None
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    h = conv_ref(f64(x), f64(w0), None, 1, 1, (0, 0, 0, 0), 1)
    y = conv_ref(h, f64(w), None if b is None else f64(b), g, s, (pt, pl, pb, pr), d)
    inits = [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w, "w")]
    ins = ["h", "w"]
    if hasb:
        inits.append(numpy_helper.from_array(b, "b"))
        ins.append("b")
    nodes = [helper.make_node("Conv", ["x", "w0"], ["h"], name="pre"),
             helper.make_node("Conv", ins, ["c"], name="conv", group=g, kernel_shape=[3, 3], strides=[s, s],
                              pads=[pt, pl, pb, pr], dilations=[d, d])]
    gin = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    x.tofile(f"{out}/{name}.in0.bin")
    last = "c"
    if post in ("add", "addrelu"):
        r = rng.standard_normal(y.shape).astype(np.float32)
        gin.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, list(y.shape)))
        nodes.append(helper.make_node("Add", ["c", "r"], ["a"], name="add"))
        r.tofile(f"{out}/{name}.in1.bin")
        y = y + r
        last = "a"
    if post in ("relu", "addrelu"):
        nodes.append(helper.make_node("Relu", [last], ["y"], name="relu"))
        y = np.maximum(y, 0)
    else:
        nodes.append(helper.make_node("Identity", [last], ["y"], name="id"))
    graph = helper.make_graph(nodes, name, gin, [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
                              inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{out}/{name}.onnx")
    y.astype(np.float32).tofile(f"{out}/{name}.ref.bin")
    names.append(name)
open(f"{out}/models.txt", "w").write("".join(n + "\n" for n in names))
# tvmcc's own operators, named by a file
for op, dom in (("WinogradInput", ""), ("WinogradOutput", "tvmcc")):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    node = helper.make_node(op, ["x"], ["y"], name="intruder", domain=dom)
    ops = [helper.make_opsetid("", 13)] + ([helper.make_opsetid(dom, 1)] if dom else [])
    onnx.save(helper.make_model(helper.make_graph([node], "internal", [x], [y]), opset_imports=ops),
              f"{out}/internal_{op}.onnx")
PY
then
    bad models "cannot build the test models (python3-onnx, numpy missing?)"
    finish
fi
for op in WinogradInput WinogradOutput; do
    "$TVMCC" "$work/internal_$op.onnx" -t x86-64-avx2 -o "$work/internal_$op.out" > "$work/internal_$op.log" 2>&1
    rc=$?
    if [ $rc = 1 ] && [ "$(wc -l < "$work/internal_$op.log")" = 1 ] && grep -q "intruder" "$work/internal_$op.log" &&
        grep -q "$op" "$work/internal_$op.log" && [ ! -e "$work/internal_$op.out" ]; then
        ok
    else
        bad "internal/$op" "exit $rc, message: $(head -c 300 "$work/internal_$op.log")"
    fi
done
avx2_runs() { [ "$(uname -m)" = x86_64 ] && host_has avx2 && host_has fma; }
while read -r name; do
    # the pass: which convs it rewrites, by target
    for t in x86-64-avx2 "$work/avx2-off.json" x86-64-avx512 c; do
        n=$("$TVMCC" "$work/$name.onnx" -t "$t" --dump-ir=winograd 2>&1 | grep -c '^n[0-9]* WinogradInput ')
        m=$("$TVMCC" "$work/$name.onnx" -t "$t" --dump-ir=winograd 2>&1 | grep -c "^n[0-9]* MatMul 'conv/winograd_mm")
        want=0
        case $name/$t in w_*/x86-64-avx2) want=1 ;; esac
        if [ "$t" = x86-64-avx2 ]; then
            nf=$("$TVMCC" "$work/$name.onnx" -t "$t" --no-winograd --dump-ir 2>&1 | grep -c ' Winograd')
            [ "$nf" = 0 ] && ok || bad "noflag/$name" "$nf Winograd nodes with --no-winograd"
        fi
        if [ "$n" = $want ] && [ "$m" = $((want * 16)) ]; then ok; else
            bad "pass/$name/$(basename "$t" .json)" "$n WinogradInput and $m MatMuls, expected $want and $((want * 16))"
        fi
    done
    for t in x86-64-avx2 "$work/avx2-off.json" c; do
        tn=$(basename "$t" .json)
        o=$work/$name.$tn
        if ! "$TVMCC" "$work/$name.onnx" -t "$t" --name model -o "$o" > "$o.log" 2>&1 ||
            ! "$TVMCC" "$work/$name.onnx" -t "$t" --dump-loops > "$o.loops" 2>&1; then
            bad "$name/$tn" "tvmcc failed: $(tail -n 1 "$o.log")"
            continue
        fi
        if [ "$tn" = x86-64-avx2 ] && [ "${name#w_}" != "$name" ]; then
            # fusion: the post ops into WinogradOutput, the transform back
            # to NCHW (the graph output) a kernel of its own
            hdr=$(grep '^kernel .*WinogradOutput' "$o.loops")
            case $name in
            *_add) want="WinogradOutput 'conv/winograd_out' (#1) + Add 'add' (#2) + Relu 'relu' (#3)" ;;
            *relu) want="WinogradOutput 'conv/winograd_out' (#1) + Relu 'relu' (#2)" ;;
            *) want="WinogradOutput 'conv/winograd_out' (#1)" ;;
            esac
            case $hdr in
            *"$want"*) case $hdr in *"to_nchw'"*) bad "fused/$name" "transform back fused: $hdr" ;; *) ok ;; esac ;;
            *) bad "fused/$name" "kernel header '$hdr', expected '$want'" ;;
            esac
        fi
        if [ "$name/$tn" = w_56_relu/x86-64-avx2 ]; then
            # the transforms in vectors of 8 lanes, the products in the
            # packed tile
            wi=$(awk '/^kernel .*WinogradInput/{p=1; next} /^kernel/{p=0} p' "$o.loops")
            wo=$(awk '/^kernel .*WinogradOutput/{p=1; next} /^kernel/{p=0} p' "$o.loops")
            ni=$(printf '%s\n' "$wi" | grep -c 'vectorized for [a-z0-9]* in 0\.\.8')
            si=$(printf '%s\n' "$wi" | sed -n '/vectorized for/,$p' | grep -c '^ *b[0-9]*\[.*\] = ')
            no=$(printf '%s\n' "$wo" | grep -c 'vectorized for [a-z0-9]* in 0\.\.8')
            so=$(printf '%s\n' "$wo" | grep -c 'select')
            nm=$(awk '/^kernel .*MatMul/{p=1; next} /^kernel/{p=0} p' "$o.loops" | grep -c 'tensorized for')
            [ "$ni" = 1 ] && [ "$si" = 16 ] && [ "$no" = 4 ] && [ "$so" = 0 ] && [ "$nm" -ge 16 ] && ok ||
                bad "vec/$name" "input: $ni vector loops, $si stores; output: $no vector loops, $so selects; $nm packed tiles ($o.loops)"
            # the products (784 x 64 x 64: 4 column panels) parallel over
            # their row tiles, not their column panels (tpl_matmul.c
            # MM_ROWS_PARALLEL_NCB): the loop after each MatMul's pragma
            pm=$(awk '/^static void k[0-9]*_matmul/ { k = 1 } /^static void k[0-9]*_winograd/ { k = 0 }
                k && /#pragma omp parallel for/ { getline; getline; if ($3 ~ /^mi[0-9]+$/) r++; else o++ }
                END { print r + 0, o + 0 }' "$o/model.c")
            [ "$pm" = "16 0" ] && ok ||
                bad "rows/$name" "the MatMuls' parallel loops over rows / others: $pm, expected 16 0 ($o/model.c)"
            # and their tiles read V in place (tpl_matmul.c
            # MM_UNPACKED_A_BYTES): no row-panel copy into a temp
            cp=$(awk '/^kernel .*MatMul/{p=1; next} /^kernel/{p=0} p' "$o.loops" | grep -c '^  buffer b[0-9]*: .* temp$')
            [ "$cp" = 0 ] && ok ||
                bad "inplace/$name" "$cp of the MatMuls copy their rows of V into a temp ($o.loops)"
        fi
        if [ "$name/$tn" = w_pad2_odd/x86-64-avx2 ]; then
            # 90 x 48 x 32 products (138 K multiply-adds each, under
            # tpl_threads.c's PARALLEL_MIN_MACS) count as their conv's 16
            # together: each has a parallel loop
            np=$(awk '/^kernel .*MatMul/{p=1; next} /^kernel/{p=0} p' "$o.loops" | grep -c '^ *parallel for')
            [ "$np" = 16 ] && ok ||
                bad "par/$name" "$np of the 16 products have a parallel loop, expected 16 ($o.loops)"
        fi
        if [ "$tn" != c ] && ! avx2_runs; then
            echo "SKIP $name/$tn: the host cannot run x86-64-avx2 code"
            continue
        fi
        ins=$work/$name.in0.bin
        [ -f "$work/$name.in1.bin" ] && ins="$ins $work/$name.in1.bin"
        flags=-march=native
        [ $tn = c ] || flags=$(sed -n 's/^MODEL_CFLAGS := -I[^ ]* //p' "$o/model.mk")
        # shellcheck disable=SC2086
        if ! $CC -I"$o" -std=c99 -O2 $flags "$o"/*.c "$root/bench/timer.c" -lm -o "$o/timer" 2> "$o/cc.log" ||
            ! "$o/timer" $ins -w 0 -n 1 -o "$o/out.bin" > /dev/null 2>&1; then
            bad "$name/$tn" "build or run failed ($o/cc.log)"
            continue
        fi
        if /usr/bin/python3 -c '
import sys, numpy as np
a = np.fromfile(sys.argv[1], np.float32); b = np.fromfile(sys.argv[2], np.float32)
ok = a.size == b.size and a.size > 0 and np.allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(b).max())))
sys.exit(0 if ok else 1)
' "$o/out.bin" "$work/$name.ref.bin"; then ok; else bad "$name/$tn" "outputs differ from the reference"; fi
    done
done < "$work/models.txt"
# a real network: resnet18 with and without the knob
rn=$root/build/models/resnet18.onnx
if [ ! -f "$rn" ]; then
    echo "SKIP real/resnet18: $rn missing (the torchvision suite exports it; needs python3-torchvision)"
elif ! avx2_runs; then
    echo "SKIP real/resnet18: the host cannot run x86-64-avx2 code"
else
    nw=$("$TVMCC" "$rn" -t x86-64-avx2 --dump-ir=winograd 2>&1 | grep -c '^n[0-9]* WinogradInput ')
    [ "$nw" = 13 ] && ok || bad "real/resnet18" "$nw convs rewritten, expected 13 (every 3x3 stride-1 conv)"
    /usr/bin/python3 -c 'import numpy as np, sys; np.random.default_rng(5).standard_normal(3 * 224 * 224).astype(np.float32).tofile(sys.argv[1])' "$work/rn.in.bin"
    for tn in x86-64-avx2 avx2-off; do
        t=x86-64-avx2
        [ $tn = avx2-off ] && t=$work/avx2-off.json
        o=$work/rn.$tn
        flags=$(sed -n 's/^MODEL_CFLAGS := -I[^ ]* //p' "$o/model.mk" 2> /dev/null)
        if ! "$TVMCC" "$rn" -t "$t" --name model -o "$o" > "$o.log" 2>&1; then
            bad "real/resnet18/$tn" "tvmcc failed: $(tail -n 1 "$o.log")"
            continue
        fi
        flags=$(sed -n 's/^MODEL_CFLAGS := -I[^ ]* //p' "$o/model.mk")
        # shellcheck disable=SC2086
        $CC -I"$o" -std=c99 -O2 $flags "$o"/*.c "$root/bench/timer.c" -lm -o "$o/timer" 2> "$o/cc.log" &&
            "$o/timer" "$work/rn.in.bin" -w 0 -n 1 -o "$o/out.bin" > /dev/null 2>&1 ||
            bad "real/resnet18/$tn" "build or run failed ($o/cc.log)"
    done
    if /usr/bin/python3 -c '
import sys, numpy as np
a = np.fromfile(sys.argv[1], np.float32); b = np.fromfile(sys.argv[2], np.float32)
ok = a.size == b.size == 1000 and np.abs(a - b).max() <= 1e-4 * np.abs(b).max()
sys.exit(0 if ok else 1)
' "$work/rn.x86-64-avx2/out.bin" "$work/rn.avx2-off/out.bin" 2> /dev/null; then ok; else
        bad "real/resnet18" "outputs with and without the knob differ by more than 1e-4 of the largest"
    fi
fi
finish
