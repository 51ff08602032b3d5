#!/bin/sh
# Grouped convolutions (1 < groups < channels) through the packed-panel
# template (lower/tpl_conv.c: per-group tiles, weights packed per group):
#   MODEL/TARGET   each model below compiled with -t TARGET (x86-64-avx2,
#                  x86-64-avx512 and the portable c), run through
#                  bench/timer.c, and compared with a float64 numpy
#                  reference of the ONNX Conv (rtol 1e-4, atol 1e-4 of the
#                  output's scale)
#   tiled/MODEL/TARGET  the models whose groups have at least 8 output
#                  channels take the template (a tensorized reduce loop in
#                  --dump-loops); the others (group widths 3 and 4) keep
#                  the generic schedule, also checked
#   pblock/MODEL/TARGET  the g1_1x1_* models (group 1: 1x1 convs whose
#                  input planes exceed half the target's L2) run their
#                  channel blocks inside blocks of positions (a `qb` loop in
#                  --dump-loops; g1_1x1_pb_odd's last block is partial with
#                  x86-64-avx2, and not blocked with x86-64-avx512)
#   rows/MODEL/TARGET  the rows_* models (group 1, 1 to 4 input channels,
#                  NCHW output: first convs) take the row tile on the x86
#                  targets (vectors along an output row, reduce loops rc,
#                  rh, rw: `tensorized for rc` and `for rh` in --dump-loops)
#   dw_*           depthwise convs (groups = channels) whose row count is
#                  not a multiple of the depthwise tile's rows (4 x 2 or
#                  8 x 1 vectors with x86-64-avx2), strides 1 and 2; their
#                  channels (12, 4) not a multiple of 8, so that they stay
#                  NCHW with x86-64-avx2 too
#   pf/MODEL/TARGET  a packed-weight tile's prefetch into L1 (`prefetch
#                  +N` on its `tensorized for rr` loop in --dump-loops,
#                  32 steps ahead): none with x86-64-avx2 (its
#                  no_tile_prefetch knob), on every such tile with
#                  x86-64-avx512
#   oddv/g1_1x1_odd116/x86-64-avx2  116 output channels (15 vectors, an
#                  odd count) still take two-vector tiles (NCHW)
#   dwb/MODEL/TARGET  the dwb_* models (depthwise, channels a multiple of
#                  8) run blocked with x86-64-avx2 (its dw_nchwc knob):
#                  the blocked tile's unrolled vector updates
#                  (acc[p*8 + v] += w[..v] * x[..v]) in --dump-loops
#   subs/chain_gw16_s2/TARGET  the chain's 1x1 stride-2 projection of a
#                   blocked input runs over a subsampled copy of it
#   blocked/MODEL/TARGET  the chain_* models (RegNet-style blocks: 1x1 conv,
#                  Relu, grouped 3x3 conv, Relu, 1x1 conv, residual Add,
#                  Relu) run their grouped conv in blocked channels
#                  (tvmcc.layout NCHW8c / NCHW16c after the layout pass,
#                  reading the blocked output of the 1x1 conv before it)
#                  where its group width is a multiple of the block (gw 8
#                  with 16-float blocks stays NCHW, and so the graph);
#                  a group width of 4 (ResNeXt) stays NCHW but the 1x1
#                  convs around it take blocked channels
# Models (batch, channels in -> out, plane, groups, kernel, stride, pad,
# dilation, then fused ops): groups 2 to 16, group widths 3, 4, 8, 16,
# strides 1 and 2, padding and none, 1x1, 3x3 and 5x5, Relu and Add fused;
# chains: channels, plane, groups, stride.
# A target the host cannot run (AVX2+FMA, AVX-512F; test/hostcpu.sh) is
# compiled only and its runs are listed as skipped.
# `-t native` (ir/hostcpu.c):
#   native/host     NAME.json's target is the embedded target this host's
#                   /proc/cpuinfo flags (or TVMCC_TEST_CPU_FLAGS) give, with
#                   "target_requested": "native"; -v names it
#   native/hook/F   under TVMCC_TEST_CPU_FLAGS=F (avx512f+bw+vl+dq, avx2+fma,
#                   avx2 without fma, sse2 only) the target named is the
#                   one F gives (x86-64 hosts only)
#   nocopy/CASE     a 1x1 conv over a 28x28 plane takes tiles of 5 or 6
#                   positions with AVX2 and no padded copy: the last tile
#                   starts at 784 - P, overlapping the one before it
#   kblock/CASE     a 1x1 conv of 512 (256) input channels over a 28x28
#                   (56x56) plane, weights past the L1 budget (conv_l1_pct
#                   of x86-64-avx2.json), blocks its input channels
#                   over chunks of the flattened plane (AVX2: for rcb, the
#                   chunk's tiles clamped to the last one); 464 channels
#                   over 7x7 in blocks of 116 (1x1 windows block from 64
#                   steps)
#   tile7/CASE      a 7-wide output row takes one 7 x 1-vector tile with
#                   AVX2 (not two of 5 x 2 vectors), 7 rows with AVX-512
#   native/isa_mask on an AVX-512 host with cpuid_fault, under
#                   LD_PRELOAD=bench/isa_mask.c's library (AVX-512 hidden
#                   from cpuid) the target named is x86-64-avx2
# Ends with "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
CC=${CC:-cc}
work=$root/build/grouped
rm -rf "$work" && mkdir -p "$work"
. "$root/test/hostcpu.sh"
pass=0 failed=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$pass passed, $failed failed"; [ $failed = 0 ]; exit $?; }
# name N C Co H W groups k stride pad dilation bias post  (post: relu, add, addrelu, none)
cat > "$work/cases.txt" <<'CASES'
g2_3x3_relu     1 32 32 14 14  2 3 1 1 1 1 relu
g4_3x3_s2       1 64 64 15 13  4 3 2 1 1 1 relu
gw8_3x3_add     1 64 64 10 10  8 3 1 1 1 1 addrelu
gw16_regnet     1 48 48 28 28  3 3 1 1 1 1 relu
gw16_s2_add     1 96 96 14 14  6 3 2 1 1 0 add
gw3_3x3         1 12 12  9  9  4 3 1 1 1 1 relu
gw4_3x3         1 64 64 10 10 16 3 1 1 1 1 relu
g2_1x1_flat     1 32 64  7  7  2 1 1 0 1 1 relu
g4_1x1_s2       1 64 32 12 12  4 1 2 0 1 1 none
g2_5x5_nopad    1 16 24 11 11  2 5 1 0 1 0 none
g4_mult_batch2  2 16 32  8  8  4 3 1 1 1 1 relu
gw16_dil2       1 32 32 12 12  2 3 1 2 2 1 add
g1_1x1_pblock   1 160 36 30 29 1 1 1 0 1 1 relu
g1_1x1_pb_odd   1 96 20 27 27  1 1 1 0 1 0 add
rows_3c_s2      1 3 20 33 35   1 3 2 1 1 1 relu
rows_1c_5x5_d2  1 1 12 20 40   1 5 1 2 2 0 add
rows_4c_7x7_s2  2 4 36 30 38   1 7 2 3 1 1 none
dw_s1_rows      1 12 12 29 40 12 3 1 1 1 1 relu
dw_s2_rows      1 4 4 31 50    4 3 2 1 1 0 add
dwb_s1          1 16 16 29 40 16 3 1 1 1 1 relu
dwb_s2_5x5      2 24 24 31 23 24 5 2 2 1 0 add
dwb_d2          1 8 8 13 9     8 3 1 2 2 1 none
g1_7wide_v1     1 32 48 7 7    1 3 1 1 1 1 relu
g1_7wide_s2     1 16 32 13 14  1 3 2 1 1 0 add
g1_1x1_nocopy   1 96 32 28 28  1 1 1 0 1 1 relu
g1_1x1_kblock   1 512 32 28 28 1 1 1 0 1 1 addrelu
g1_1x1_kb256    1 256 32 56 56 1 1 1 0 1 1 relu
g1_1x1_kb464    1 464 64 7 7   1 1 1 0 1 1 relu
g1_1x1_odd116   1 116 116 7 7  1 1 1 0 1 1 relu
CASES
cat > "$work/chains.txt" <<'CASES'
chain_gw16_s1   64 14  4 1
chain_gw16_s2   32 16  2 2
chain_gw8_s1    32 12  4 1
chain_gw4_s1    32 10  8 1
CASES
if ! /usr/bin/python3 - "$work" "$root/test/models" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from convref import conv_ref
rng = np.random.default_rng(19)
names = []
for line in open(f"{out}/chains.txt"):
    name, C, H, g, s = line.split()
    C, H, g, s = int(C), int(H), int(g), int(s)
    def wb(co, ci, k):
        return ((rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32),
                (rng.standard_normal(co) * 0.1).astype(np.float32))
    w1, b1 = wb(C, C, 1)
    w2, b2 = wb(C, C // g, 3)
    w3, b3 = wb(C, C, 1)
    x = rng.standard_normal((1, C, H, H)).astype(np.float32)
    f64 = lambda a: a.astype(np.float64)
    a = np.maximum(conv_ref(f64(x), f64(w1), f64(b1), 1, 1, 0, 1), 0)
    a = np.maximum(conv_ref(a, f64(w2), f64(b2), g, s, 1, 1), 0)
    y = conv_ref(a, f64(w3), f64(b3), 1, 1, 0, 1)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="a"),
             helper.make_node("Relu", ["c1"], ["r1"], name="ra"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="b", group=g, kernel_shape=[3, 3],
                              strides=[s, s], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="rb"),
             helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="c")]
    extra = []
    if s == 1:
        nodes.append(helper.make_node("Add", ["c3", "x"], ["s"], name="add"))
        y = y + f64(x)
        last = "s"
    else:
        # a ResNet-style projection: 1x1 stride-s conv of the (blocked)
        # first conv's output, added
        w4, b4 = wb(C, C, 1)
        r1 = np.maximum(conv_ref(f64(x), f64(w1), f64(b1), 1, 1, 0, 1), 0)
        y = y + conv_ref(r1, f64(w4), f64(b4), 1, s, 0, 1)
        nodes.append(helper.make_node("Conv", ["r1", "w4", "b4"], ["c4"], name="proj", strides=[s, s]))
        nodes.append(helper.make_node("Add", ["c3", "c4"], ["s"], name="add"))
        extra = [("w4", w4), ("b4", b4)]
        last = "s"
    nodes.append(helper.make_node("Relu", [last], ["y"], name="relu"))
    y = np.maximum(y, 0)
    inits = [numpy_helper.from_array(v, n) for n, v in
             (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2), ("w3", w3), ("b3", b3))] + \
        [numpy_helper.from_array(v, n) for n, v in extra]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{out}/{name}.onnx")
    x.tofile(f"{out}/{name}.in0.bin")
    y.astype(np.float32).tofile(f"{out}/{name}.ref.bin")
    names.append(name)
for line in open(f"{out}/cases.txt"):
    f = line.split()
    name = f[0]
    N, C, Co, H, W, g, k, s, p, d, hasb = map(int, f[1:12])
    post = f[12]
    w = (rng.standard_normal((Co, C // g, k, k)) / np.sqrt(C // g * k * k)).astype(np.float32)
    b = rng.standard_normal(Co).astype(np.float32) if hasb else None
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    ins = ["x", "w"]
    if hasb:
        inits.append(numpy_helper.from_array(b, "b"))
        ins.append("b")
    nodes = [helper.make_node("Conv", ins, ["c"], name="conv", group=g, kernel_shape=[k, k], strides=[s, s],
                              pads=[p, p, p, p], dilations=[d, d])]
    y = conv_ref(x.astype(np.float64), w.astype(np.float64), None if b is None else b.astype(np.float64), g, s, p, d)
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
PY
then
    bad models "cannot build the test models (python3-onnx, numpy missing?)"
    finish
fi
runs() { # target: whether this host runs its code
    case $1 in
    x86-64-avx2) [ "$(uname -m)" = x86_64 ] && host_has avx2 && host_has fma ;;
    x86-64-avx512) [ "$(uname -m)" = x86_64 ] && host_has avx512f && host_has avx512bw && host_has avx512vl &&
        host_has avx512dq ;;
    *) return 0 ;;
    esac
}
while read -r name; do
    for t in x86-64-avx2 x86-64-avx512 c; do
        o=$work/$name.$t
        if ! "$TVMCC" "$work/$name.onnx" -t $t --name model -o "$o" > "$o.log" 2>&1 ||
            ! "$TVMCC" "$work/$name.onnx" -t $t --dump-loops > "$o.loops" 2>&1; then
            bad "$name/$t" "tvmcc failed: $(tail -n 1 "$o.log")"
            continue
        fi
        # the template's tile: a tensorized reduce loop; group widths 3
        # and 4 (gw3_*, gw4_*) are refused by it (under 8 channels)
        case $name in
        gw3_* | gw4_*) grep -q 'tensorized for' "$o.loops" && bad "tiled/$name/$t" "group width 3 tiled" || ok ;;
        dwb_*) [ $t != x86-64-avx2 ] && ! grep -q 'tensorized for' "$o.loops" && bad "tiled/$name/$t" "no packed tile in $o.loops" || ok ;;
        *) grep -q 'tensorized for' "$o.loops" && ok || bad "tiled/$name/$t" "no packed tile in $o.loops" ;;
        esac
        # the packed weights' L1 prefetch by the target's knob (not the
        # input rows' of the position tiles, `tensorized for rc`)
        # (checked where the kernel has such tiles at all)
        nt=$(grep -cE 'tensorized for rr[0-9]+ in ' "$o.loops")
        pf=$(grep -cE 'tensorized for rr[0-9]+ in [0-9.]+ prefetch \+' "$o.loops")
        [ "$nt" = 0 ] || case $t in
        x86-64-avx2) [ "$pf" = 0 ] && ok || bad "pf/$name/$t" "$pf of $nt weight tiles prefetch into L1 (no_tile_prefetch)" ;;
        x86-64-avx512) [ "$pf" = "$nt" ] && ok || bad "pf/$name/$t" "$pf of $nt weight tiles prefetch into L1" ;;
        esac
        case $name/$t in
        dwb_*/x86-64-avx2)
            n=$(grep -cE '^ +b[0-9]+\[\(?[0-9]* ?\+? ?vi[0-9]+\)?\] = \(b[0-9]+\[\(?[0-9]* ?\+? ?vi[0-9]+\)?\] \+ \(b[0-9]+\[' "$o.loops")
            [ "$n" -ge 2 ] && ok || bad "dwb/$name/$t" "no blocked depthwise tile in $o.loops ($n vector updates)" ;;
        g1_1x1_pblock/* | g1_1x1_pb_odd/x86-64-avx2)
            grep -q 'for qb' "$o.loops" && ok || bad "pblock/$name/$t" "no position blocks (qb) in $o.loops" ;;
        g1_1x1_pb_odd/x86-64-avx512)
            grep -q 'for qb' "$o.loops" && bad "pblock/$name/$t" "position blocks on a plane that fits" || ok ;;
        g1_7wide_*/x86-64-avx2)
            # a 7-wide output row: one tile of 7 x 1 vector, not two of
            # 5 x 2 (10 positions for 7; lower/tpl_packed.c plan_cost)
            grep -q 'fma_tile 7x8' "$o/model.c" && ! grep -q 'fma_tile [0-9]*x16' "$o/model.c" && ok ||
                bad "tile7/$name/$t" "no 7x8 tile (or a 2-vector one) in $o/model.c" ;;
        g1_1x1_nocopy/x86-64-avx2)
            # 784 positions in tiles of 5 or 6 (no divisor), no padded
            # copy of the input: the last tile starts at 784 - P
            grep -q 'fma_tile [56]x16' "$o/model.c" && grep -q ' < 77[89] ? ' "$o/model.c" &&
                ! grep -q 'float32\[[0-9]*\] temp' "$o.loops" && ok ||
                bad "nocopy/$name/$t" "not 5- or 6-row tiles without a copy ($o/model.c, $o.loops)" ;;
        g1_1x1_kblock/x86-64-avx2 | g1_1x1_kb256/x86-64-avx2)
            # 512 (256) channels x 16 lanes of weights, 32 (16) KiB, past
            # the L1 budget (x86-64-avx2's conv_l1_pct 37: 12 KiB): input
            # channel blocks (rcb) over chunks (og) of the plane, the last
            # chunk's tiles clamped, no copy
            grep -q 'for rcb' "$o.loops" && grep -q '_og[0-9]\|for og' "$o.loops" &&
                grep -q ' < \(77[89]\|313[01]\) ? ' "$o/model.c" &&
                ! grep -q 'float32\[[0-9]*\] temp' "$o.loops" && ok ||
                bad "kblock/$name/$t" "no channel blocks over chunks of the plane ($o/model.c, $o.loops)" ;;
        g1_1x1_kb464/x86-64-avx2)
            # 464 channels (29.7 KiB of weights per channel block) in
            # blocks of 116: 116 steps, enough for a 1x1 window
            # (CONV_BLOCK_MIN_STEPS_1X1 64, lower/tpl_conv.c)
            grep -q 'for rcb' "$o.loops" && ok || bad "kblock/$name/$t" "no channel blocks (rcb) in $o.loops" ;;
        g1_1x1_odd116/x86-64-avx2)
            # 116 channels, 15 vectors of 8 (NCHW): two-vector tiles, the
            # last pair half padding (lower/tpl_packed.c tpl_plan_tile),
            # not 7 x 1 vector
            grep -q 'fma_tile [0-9]*x16' "$o/model.c" && ! grep -q 'fma_tile [0-9]*x8(' "$o/model.c" && ok ||
                bad "oddv/$name/$t" "no two-vector tile for 15 vectors in $o/model.c" ;;
        g1_7wide_*/x86-64-avx512)
            grep -q 'fma_tile 7x' "$o/model.c" && ok || bad "tile7/$name/$t" "no 7-row tile in $o/model.c" ;;
        rows_*/x86-64-*)
            grep -q 'tensorized for rc' "$o.loops" && grep -q 'for rh' "$o.loops" && ok ||
                bad "rows/$name/$t" "no row tile in $o.loops" ;;
        esac
        if ! runs $t; then
            echo "SKIP $name/$t: the host cannot run $t code"
            continue
        fi
        ins=$work/$name.in0.bin
        [ -f "$work/$name.in1.bin" ] && ins="$ins $work/$name.in1.bin"
        flags=-march=native
        [ $t = c ] || flags=$(sed -n 's/^MODEL_CFLAGS := -I[^ ]* //p' "$o/model.mk")
        # shellcheck disable=SC2086
        if ! $CC -I"$o" -std=c99 -O2 $flags "$o"/*.c "$root/bench/timer.c" -lm -o "$o/timer" 2> "$o/cc.log" ||
            ! "$o/timer" $ins -w 0 -n 1 -o "$o/out.bin" > /dev/null 2>&1; then
            bad "$name/$t" "build or run failed ($o/cc.log)"
            continue
        fi
        if /usr/bin/python3 -c '
import sys, numpy as np
a = np.fromfile(sys.argv[1], np.float32); b = np.fromfile(sys.argv[2], np.float32)
ok = a.size == b.size and a.size > 0 and np.allclose(a, b, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(b).max())))
sys.exit(0 if ok else 1)
' "$o/out.bin" "$work/$name.ref.bin"; then ok; else bad "$name/$t" "outputs differ from the reference"; fi
    done
done < "$work/models.txt"
# grouped convs of the chains in blocked channels
for name in chain_gw16_s1 chain_gw16_s2 chain_gw8_s1; do
    for t in x86-64-avx2 x86-64-avx512; do
        want=1
        [ $t = x86-64-avx512 ] && [ $name = chain_gw8_s1 ] && want=0
        n=$("$TVMCC" "$work/$name.onnx" -t $t --dump-ir=layout 2>&1 | grep -c "group=[0-9]*.*tvmcc.layout=\"NCHW[0-9]*c\"")
        [ "$n" = $want ] && ok || bad "blocked/$name/$t" "$n grouped convs in blocked channels, expected $want"
    done
done
# chain_gw16_s2's projection, a 1x1 stride-2 conv of a blocked input: over
# a subsampled copy (whole vectors, the il loop of lower/tpl_nchwc.c's
# subsample_copy) as a flattened 8x8 plane in 2-vector tiles (not rows of 8
# positions); its results are checked with the chain's above
for t in x86-64-avx2 x86-64-avx512; do
    l=$work/chain_gw16_s2.$t.loops
    if [ -f "$l" ] && awk '/^kernel .*Conv .proj./{p=1; next} /^kernel/{p=0} p' "$l" | grep -q 'vectorized for il[0-9]* in' &&
        grep -q 'fma_tile [0-9]*x\(16\|32\)' "$work/chain_gw16_s2.$t/model.c"; then
        ok
    else
        bad "subs/chain_gw16_s2/$t" "the strided 1x1 conv 'proj' has no subsampled copy ($l)"
    fi
done
# a ResNeXt-style block (group width 4, no blocked form): the grouped conv
# stays NCHW while the graph's 1x1 convs take blocked channels
for t in x86-64-avx2 x86-64-avx512; do
    ir=$("$TVMCC" "$work/chain_gw4_s1.onnx" -t $t --dump-ir=layout 2>&1)
    ng=$(printf '%s\n' "$ir" | grep -c "group=[0-9]*.*tvmcc.layout=\"NCHW[0-9]*c\"")
    nb=$(printf '%s\n' "$ir" | grep "Conv" | grep -v "group=" | grep -c "tvmcc.layout=\"NCHW[0-9]*c\"")
    [ "$ng" = 0 ] && [ "$nb" = 2 ] && ok ||
        bad "blocked/chain_gw4_s1/$t" "$ng grouped and $nb group-1 convs blocked, expected 0 and 2"
done
# -t native
expect_native() { # the target test/hostcpu.sh's flags give on an x86-64 host
    if host_has avx512f && host_has avx512bw && host_has avx512vl && host_has avx512dq; then echo x86-64-avx512
    elif host_has avx2 && host_has fma; then echo x86-64-avx2
    else echo x86-64
    fi
}
native_json() { # NAME.json of g2_3x3_relu compiled with -t native (extra env in $@)
    rm -rf "$work/native"
    env "$@" "$TVMCC" "$work/g2_3x3_relu.onnx" -t native -v -o "$work/native" > "$work/native.log" 2>&1 &&
        /usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["target"] if j.get("target_requested") == "native" else "no-target_requested")
' "$work/native/model.json"
}
if [ "$(uname -m)" = x86_64 ]; then
    want=$(expect_native)
    got=$(native_json X=1)
    if [ "$got" = "$want" ] && grep -q "^tvmcc: target native: $want " "$work/native.log"; then
        ok
    else
        bad native/host "NAME.json names '$got', expected $want (or -v did not name it: $work/native.log)"
    fi
    for f in "avx512f avx512bw avx512vl avx512dq avx2 fma:x86-64-avx512" "avx512f avx2 fma:x86-64-avx2" \
        "avx2 fma:x86-64-avx2" "avx2:x86-64" "sse2:x86-64"; do
        got=$(native_json TVMCC_TEST_CPU_FLAGS="${f%%:*}")
        [ "$got" = "${f#*:}" ] && ok || bad "native/hook/${f%%:*}" "NAME.json names '$got', expected ${f#*:}"
    done
    # the cpuid of an AVX2-only host: bench/isa_mask.c hides AVX-512 by
    # CPUID faulting (how bench/run.sh runs onnxruntime with ORT_ISA=avx2)
    if [ -z "${TVMCC_TEST_CPU_FLAGS+set}" ] && host_has avx512f && host_has cpuid_fault; then
        if $CC -std=c99 -O2 -shared -fPIC "$root/bench/isa_mask.c" -o "$work/isa_mask.so" -ldl \
                > "$work/isa_mask.log" 2>&1; then
            got=$(native_json LD_PRELOAD="$work/isa_mask.so")
            [ "$got" = x86-64-avx2 ] && ok ||
                bad native/isa_mask "with AVX-512 hidden (bench/isa_mask.c) NAME.json names '$got', expected x86-64-avx2"
        else
            bad native/isa_mask "cannot build bench/isa_mask.c: $(head -1 "$work/isa_mask.log")"
        fi
    else
        echo "SKIP native/isa_mask: needs a host with avx512f and cpuid_fault (and no TVMCC_TEST_CPU_FLAGS)"
    fi
else
    got=$(native_json X=1)
    case $got in
    c | aarch64 | aarch64-dotprod) ok ;;
    *) bad native/host "NAME.json names '$got' on $(uname -m)" ;;
    esac
    echo "SKIP native/hook: the x86 flag lists are checked on x86-64 hosts"
fi
# bench/kernel_minima.sh's parts: bench/kernel_minima.h times every kernel
# NAME.json lists (one "INDEX MICROSECONDS" line each, all > 0), and
# bench/kernel_minima.py matches an onnxruntime node to the kernel holding
# the ONNX node of that name (a made-up profile: one node, 1000 us)
o=$work/g2_3x3_relu.c
if [ ! -f "$o/model.json" ]; then
    bad minima/hooks "no $o/model.json"
elif ! $CC -I"$o" -std=c99 -O2 -include "$root/bench/kernel_minima.h" "$o"/*.c "$root/bench/timer.c" -lm \
        -o "$o/timer_km" 2> "$o/km.log" ||
    ! KERNEL_MINIMA_OUT=$o/km.txt "$o/timer_km" "$work/g2_3x3_relu.in0.bin" -w 1 -n 3 > /dev/null 2>&1; then
    bad minima/hooks "build or run with bench/kernel_minima.h failed ($o/km.log)"
else
    nk=$(/usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["kernels"]))' "$o/model.json")
    nl=$(awk '$2 > 0' "$o/km.txt" | wc -l)
    [ "$nk" -gt 0 ] && [ "$nk" = "$nl" ] && ok || bad minima/hooks "$nl timed kernels in $o/km.txt, NAME.json lists $nk"
    /usr/bin/python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
json.dump([{"name": k["nodes"][0]["name"] + "_output_0_nchwc", "op": "Conv", "us": 1000.0},
           {"name": "ReorderOutput", "op": "ReorderOutput", "us": 500.0}], open(sys.argv[2], "w"))
' "$o/model.json" "$o/ort.json"
    k0=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernels"][0]["name"])' "$o/model.json")
    if /usr/bin/python3 "$root/bench/kernel_minima.py" "$o/model.json" "$o/ort.json" "$o/km.txt" > "$o/km.report" &&
        grep -q 'onnxruntime 1.500 ms (of which unmatched 0.500)' "$o/km.report" &&
        grep -q "^$k0 .* onnxruntime  *1000.0 " "$o/km.report"; then
        ok
    else
        bad minima/report "bench/kernel_minima.py did not match the node to $k0 ($o/km.report)"
    fi
fi
# THREADS=N builds tvmcc's side with -fopenmp and runs both at N threads;
# anything but a positive number is refused before any work
if msg=$(THREADS=two "$root/bench/kernel_minima.sh" g2_3x3_relu x86-64-avx2 2>&1); then
    bad minima/threads "THREADS=two accepted"
else
    case $msg in *"THREADS must be a positive number"*) ok ;; *) bad minima/threads "THREADS=two: $msg" ;; esac
fi
finish
