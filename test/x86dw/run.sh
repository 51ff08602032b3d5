#!/usr/bin/env bash
# The x86 int8 kernels' printed code (emit_c/emit_qtile.c, emit_intrin.c's
# 8-bit stores) against the portable `c` target, byte for byte: the models
# of test/x86dw/gen.py (depthwise convs, 1x1 convs with a residual Add, a
# QuantizeLinear of special values) compiled with -t c and with
# -t x86-64-avx2 / x86-64-avx512, each built twice (with the target's own
# flags, and with -march=native added, which turns on VNNI and VBMI where the
# host has them; -Wall -Wextra -Wshadow -Werror), run on the same input: every output byte must be the
# same. Each x86 build must also contain the vector form the model is for
# (the depthwise row, the interleaved copy, the 8-bit quantizing store), so
# a template that stops being taken fails here.
#
#   test/x86dw/run.sh
#
# Skips (with the reason) without python3's onnx/numpy, and each x86 target
# the CPU cannot run. Prints PASS/FAIL per model and build, then
# "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
work="$root/build/x86dw"
passed=0 failed=0
if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP x86dw: onnx/numpy not importable by $PYTHON"
    echo "0 passed, 0 failed"
    exit 0
fi
if [ ! -x "$TVMCC" ]; then
    echo "FAIL x86dw: $TVMCC not built"
    echo "0 passed, 1 failed"
    exit 1
fi
rm -rf "$work" && mkdir -p "$work/models" || exit 1
if ! "$PYTHON" "$here/gen.py" "$work/models" > "$work/gen.log" 2>&1; then
    echo "FAIL x86dw: gen.py: $(tail -1 "$work/gen.log")"
    echo "0 passed, 1 failed"
    exit 1
fi
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { case " ${flags#*:} " in *" $1 "*) return 0 ;; esac; return 1; }
targets=""
if has avx2 && has fma; then targets="x86-64-avx2"; else echo "SKIP x86dw x86-64-avx2: the CPU has no AVX2/FMA"; fi
if has avx512f && has avx512bw && has avx512vl && has avx512dq; then
    targets="$targets x86-64-avx512"
else
    echo "SKIP x86dw x86-64-avx512: the CPU has no AVX-512 F/BW/VL/DQ"
fi

# the x86 builds: warnings the printed code must not raise (test/qdq's and
# qdq-build's flags)
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

for m in "$work"/models/*.onnx; do
    name=$(basename "$m" .onnx)
    in="$work/models/$name.in.bin"
    ref="$work/$name/c"
    mkdir -p "$ref"
    if ! "$TVMCC" "$m" -t c -o "$ref" --name model > "$ref/tvmcc.log" 2>&1 || ! build "$ref" -O2 ||
        ! "$ref/timer" "$in" -w 0 -n 1 -o "$ref/out.bin" > /dev/null 2>&1; then
        echo "FAIL $name c: $(tail -1 "$ref/tvmcc.log" "$ref/cc.log" 2>/dev/null | tail -1)"
        failed=$((failed + 1))
        continue
    fi
    case $name in
        dw_*) want="depthwise row" ;;
        pw_add_c6_*) want="int8 dot tile" ;;
        pw_*) want="channel rows of" ;;
        quant_*) want="qf = " ;;
    esac
    for t in $targets; do
        d="$work/$name/$t"
        mkdir -p "$d"
        if ! "$TVMCC" "$m" -t "$t" -o "$d" --name model > "$d/tvmcc.log" 2>&1; then
            echo "FAIL $name $t: $(tail -1 "$d/tvmcc.log")"
            failed=$((failed + 1))
            continue
        fi
        if ! grep -q "$want" "$d/model.c" || grep -q "matches no printer" "$d/tvmcc.log"; then
            echo "FAIL $name $t: the x86 form ('$want') is not in model.c, or a tensorized nest was printed as loops"
            failed=$((failed + 1))
        fi
        for how in own native; do
            if [ $how = own ]; then build "$d" -O2 $strict; else build "$d" -O2 -march=native $strict; fi || {
                echo "FAIL $name $t $how: build: $(head -1 "$d/cc.log")"
                failed=$((failed + 1))
                continue
            }
            if "$d/timer" "$in" -w 0 -n 1 -o "$d/out_$how.bin" > /dev/null 2>&1 &&
                cmp -s "$ref/out.bin" "$d/out_$how.bin"; then
                echo "PASS $name $t $how"
                passed=$((passed + 1))
            else
                echo "FAIL $name $t $how: output differs from the c target's"
                failed=$((failed + 1))
            fi
        done
    done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
