#!/usr/bin/env bash
# The x86 max-pool template (lower/tpl_pool.c through tpl_dwconv.c's row
# tiles) against the portable `c` target, which keeps the generic
# schedule, byte for byte: the MaxPool models of test/pool/gen.py (3x3
# stride 2 with and without padding, ceil_mode, stride 1 and 3, 2x2, 5x5,
# asymmetric pads, a batch of two, planes narrower than a vector, a fused
# Relu; a dilated window and a pool with Indices; the blocked layout) on
# inputs holding NaNs of several payloads, +-inf, +-0 and ties, and on
# inputs without NaN (the template's faster path), compiled with -t x86-64-avx2 and
# x86-64-avx512 (each where the host runs it: test/hostcpu.sh), built with
# -Wall -Wextra -Wshadow -Werror. Each x86 build must contain the
# template's row tiles, vector maxima and no scalar tvmrt_maxf, so a template that
# stops being taken fails here; the models listed in `generic` below must
# not (they are the generic schedule's). AVX2 builds must hold no masked
# store (_mm256_maskstore_ps): a partial vector is stored lane group by lane
# group (tvmcc_store8_n), and some of the pools must do so.
#
#   test/pool/run.sh
#
# Skips (with the reason) without python3's onnx/numpy, and each x86 target
# the CPU cannot run. Prints PASS/FAIL per model and target, then
# "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
work="$root/build/pool"
passed=0 failed=0 partial=0
. "$root/test/hostcpu.sh"
if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP pool: onnx/numpy not importable by $PYTHON"
    echo "0 passed, 0 failed"
    exit 0
fi
if [ ! -x "$TVMCC" ]; then
    echo "FAIL pool: $TVMCC not built"
    echo "0 passed, 1 failed"
    exit 1
fi
rm -rf "$work" && mkdir -p "$work/models" || exit 1
if ! "$PYTHON" "$here/gen.py" "$work/models" > "$work/gen.log" 2>&1; then
    echo "FAIL pool: gen.py: $(tail -1 "$work/gen.log")"
    echo "0 passed, 1 failed"
    exit 1
fi
targets=""
if host_has avx2 && host_has fma; then targets="x86-64-avx2"; else echo "SKIP pool x86-64-avx2: the CPU has no AVX2/FMA"; fi
if host_has avx512f && host_has avx512bw && host_has avx512vl && host_has avx512dq; then
    targets="$targets x86-64-avx512"
else
    echo "SKIP pool x86-64-avx512: the CPU has no AVX-512 F/BW/VL/DQ"
fi
# models the template leaves to the generic schedule: Indices is a second stage
generic=" k3s2_indices "
strict="-Wall -Wextra -Wshadow -Werror"

# build DIR [EXTRA CFLAGS]: the compiled model with bench/timer.c
build() {
    local d=$1 cf
    shift
    cf=$(sed -n 's|^MODEL_CFLAGS := ||p' "$d/model.mk" | sed "s|\$(MODEL_DIR)|$d|")
    # shellcheck disable=SC2086
    $CC $cf "$@" "$d/model.c" "$d/model_weights.c" "$d/tvmrt.c" "$root/bench/timer.c" -lm -o "$d/timer" \
        > "$d/cc.log" 2>&1
}

# run DIR NAME [fast]: the build's outputs for input NAME.in.bin (with
# fast: NAME.fast.in.bin, no NaN) into DIR/out.bin and DIR/out1.bin (a
# pool's Indices, a blocked model's Relu of the pool; else empty), with
# the suffix .fast
run() {
    local d=$1 name=$2 sfx=${3:+.$3} in
    in="$work/models/$name$sfx.in.bin"
    case $name in
        *_indices) "$d/timer" "$in" -w 0 -n 1 -o "$d/out$sfx.bin" "$d/out1$sfx.bin" ;;
        blk_*) "$d/timer" "$in" "$work/models/$name.in2.bin" -w 0 -n 1 -o "$d/out$sfx.bin" "$d/out1$sfx.bin" ;;
        *) "$d/timer" "$in" -w 0 -n 1 -o "$d/out$sfx.bin" && : > "$d/out1$sfx.bin" ;;
    esac > /dev/null 2>&1
}

# same DIR: the outputs of DIR's build equal the c target's, both inputs
same() {
    local d=$1 f
    for f in out out1 out.fast out1.fast; do
        cmp -s "$ref/$f.bin" "$d/$f.bin" || return 1
    done
}

for m in "$work"/models/*.onnx; do
    name=$(basename "$m" .onnx)
    ref="$work/$name/c"
    mkdir -p "$ref"
    if ! "$TVMCC" "$m" -t c -o "$ref" --name model > "$ref/tvmcc.log" 2>&1 || ! build "$ref" -O2 ||
        ! run "$ref" "$name" || ! run "$ref" "$name" fast; then
        echo "FAIL $name c: $(tail -1 "$ref/tvmcc.log" "$ref/cc.log" 2>/dev/null | tail -1)"
        failed=$((failed + 1))
        continue
    fi
    for t in $targets; do
        d="$work/$name/$t"
        mkdir -p "$d"
        if ! "$TVMCC" "$m" -t "$t" -o "$d" --name model > "$d/tvmcc.log" 2>&1; then
            echo "FAIL $name $t: $(tail -1 "$d/tvmcc.log")"
            failed=$((failed + 1))
            continue
        fi
        # the template's form in the pool's kernel: vector maxima (AVX2's
        # blend, AVX-512's masked max), the NaN test of the copy (a sum
        # compared with itself) before tiles of plain vector maxima, no
        # scalar tvmrt_maxf, and the loop over the tiles
        # of a row (qt in tpl_dwconv.c's row tiles, ot in the blocked
        # pool's, with its bands of rows rt: names the generic schedule
        # does not give)
        case $name in
            blk_*) loop="int32_t rt[0-9]* = 0" ;;
            *) loop="int32_t qt[0-9]* = 0" ;;
        esac
        awk '/^static void k[0-9]+_maxpool\(/,/^}/' "$d/model.c" > "$d/pool.c"
        if grep -q "_mm256_blendv_ps\|_mm512_mask_max_ps" "$d/pool.c" && ! grep -q "tvmrt_maxf" "$d/pool.c" &&
            grep -q "$loop" "$d/pool.c" && grep -q "if ((b[0-9]*\[0\] != b[0-9]*\[0\]))" "$d/pool.c" &&
            grep -q "_mm[0-9]*_storeu_ps([^;]*, _mm[0-9]*_max_ps(" "$d/pool.c"; then
            used=1
        else
            used=0
        fi
        case $generic in
            *" $name "*) want=0 ;;
            *) want=1 ;;
        esac
        # AVX-512 keeps the generic schedule for strides above 1 and rows
        # shorter than half a vector (lower/tpl_pool.c)
        case $t:$name in
            x86-64-avx512:*s2*|x86-64-avx512:*s3*|x86-64-avx512:*narrow*) want=0 ;;
        esac
        if [ $used != $want ]; then
            echo "FAIL $name $t: the max-pool template was $([ $want = 1 ] && echo "not ")taken"
            failed=$((failed + 1))
            continue
        fi
        # AVX2 stores a partial vector by plain stores of its leading lanes
        # (emit_intrin.c's tvmcc_store8_n), never vmaskmovps (microcoded on
        # AMD: the padded copies ran 2-3x slower)
        if [ "$t" = x86-64-avx2 ]; then
            if grep -q "_mm256_maskstore_ps" "$d/model.c"; then
                echo "FAIL $name $t: a masked store (_mm256_maskstore_ps) in model.c"
                failed=$((failed + 1))
                continue
            fi
            grep -q "tvmcc_store8_n(&" "$d/pool.c" && partial=$((partial + 1))
        fi
        if ! build "$d" -O2 $strict; then
            echo "FAIL $name $t: build: $(head -1 "$d/cc.log")"
            failed=$((failed + 1))
            continue
        fi
        if run "$d" "$name" && run "$d" "$name" fast && same "$d"; then
            echo "PASS $name $t"
            passed=$((passed + 1))
        else
            echo "FAIL $name $t: output differs from the c target's"
            failed=$((failed + 1))
        fi
    done
done
case " $targets " in
    *" x86-64-avx2 "*)
        if [ "$partial" -gt 0 ]; then
            echo "PASS partial vectors: $partial AVX2 pools store some by tvmcc_store8_n"
            passed=$((passed + 1))
        else
            echo "FAIL partial vectors: no AVX2 pool stores a partial vector (tvmcc_store8_n): the check above tested nothing"
            failed=$((failed + 1))
        fi
        ;;
esac
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
