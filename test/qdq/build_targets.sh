#!/usr/bin/env bash
# Build-only check of the integer code on every target: a sample of the qdq
# suite's int8 and uint8 models (below) compiled by tvmcc for each target and
# model.c built with the
# target's own compiler and NAME.mk's flags under
#   -Wall -Wextra -Werror -pedantic -Wconversion -Wsign-conversion
# The targets no test here runs (Cortex-M7, Cortex-M55 whose Helium qemu 7.2
# does not have, aarch64-dotprod, x86-64-avx512 on a host without AVX-512)
# are checked this way at least.
#
#   test/qdq/build_targets.sh [--models DIR] [--tvmcc PATH] [--targets T1,T2,...]
#
# One PASS/FAIL line per target (FAIL names the model and the first error),
# SKIP for a target whose compiler is not installed, and "N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
models=$root/build/qdq/models
tvmcc=${TVMCC:-$root/tvmcc}
targets="c,x86-64,x86-64-avx2,x86-64-avx512,cortex-m0,cortex-m4,cortex-m7,cortex-m55,aarch64,aarch64-dotprod"
while [ $# -gt 0 ]; do
    case $1 in
        --models) models=${2:?}; shift ;;
        --tvmcc) tvmcc=${2:?}; shift ;;
        --targets) targets=${2:?}; shift ;;
        *) echo "usage: test/qdq/build_targets.sh [--models DIR] [--tvmcc PATH] [--targets LIST]" >&2; exit 2 ;;
    esac
    shift
done
work=$root/build/qdq/build_targets
mkdir -p "$work"
passed=0 failed=0
# a sample that takes every integer form (dense, strided, depthwise and 1x1
# convs, Gemm, MatMul, Add, Concat with rescales, a table, the Relu kept and
# folded, int8 and uint8; about 10 s a target)
set -- $(cd "$models" 2>/dev/null && ls conv3x3.s8.onnx conv3x3.u8.onnx conv_stride2.s8.onnx \
         conv_dw.s8.onnx conv_dw.u8.onnx gemm.s8.onnx matmul.u8.onnx add_branches.s8.onnx \
         concat.u8.onnx sigmoid.s8.onnx small_cnn.fuse.onnx dscnn.s8.onnx conv_odd.s8.onnx \
         conv_first3.u8.onnx 2>/dev/null)
if [ $# -eq 0 ]; then
    echo "SKIP qdq build_targets: no generated models in $models (test/qdq/run.sh makes them)"
    echo "0 passed, 0 failed"
    exit 0
fi
# build_target T MODEL...: writes $work/T.result, one line: PASS, FAIL or SKIP
build_target() {
    local t=$1 cc bad="" n=0 f m d flags tile
    shift
    cc=$(sed -n 's/.*"cc": *"\([^"]*\)".*/\1/p' "$root/targets/$t.json" | head -1)
    if ! command -v "${cc:-cc}" > /dev/null 2>&1; then
        echo "SKIP qdq build $t: compiler '${cc:-cc}' not installed" > "$work/$t.result"
        return
    fi
    for f in "$@"; do
        m=${f%.onnx}
        d=$work/$t/$m
        rm -rf "$d"
        if ! "$tvmcc" "$models/$f" -t "$t" -o "$d" --name model > "$work/$t.log" 2>&1; then
            bad="$m: tvmcc: $(head -1 "$work/$t.log")"
            break
        fi
        flags=$(sed -n 's/^MODEL_CFLAGS := //p' "$d/model.mk" | sed "s|\$(MODEL_DIR)|$d|")
        # shellcheck disable=SC2086
        if ! "${cc:-cc}" $flags -Wall -Wextra -Werror -pedantic -Wconversion -Wsign-conversion \
                -c "$d/model.c" -o "$d/model.o" > "$d/cc.log" 2>&1; then
            bad="$m: $(grep -m1 -E 'error' "$d/cc.log")"
            break
        fi
        n=$((n + 1))
    done
    # the DSP cores: conv_odd's first conv is the 2 x 3 SMLAD tile (Cortex-M55:
    # its Helium form) with the
    # word-wise im2col, conv_first3's the tile with the single-value one
    # (lower/tpl_qconv_m4.c), requantizations ending in SSAT with the shift
    # (emit_expr.c requant_asr; an Add's too, on the product's high word:
    # tpl_qconv_m4.c m4q_requant_narrow), conv_dw's depthwise rows with the plane
    # widened two columns per store and the rows' words carried; a change
    # that loses them fails here
    case $t in cortex-m4|cortex-m7|cortex-m55)
        if [ -z "$bad" ] && [ -f "$work/$t/conv_odd.s8/model.c" ]; then
            # (cortex-m55 keeps NCHW for integer convs: no contiguous channels)
            # (the Cortex-M55 the Helium form: VMLADAVA.S8)
            tile='tvmcc_m4q_2x3(b'
            [ "$t" = cortex-m55 ] && tile='Helium: VMLADAVA.S8'
            if ! grep -q "$tile" "$work/$t/conv_odd.s8/model.c" ||
               { [ "$t" != cortex-m55 ] && ! grep -q 'four bytes: one load, SXTB16' "$work/$t/conv_odd.s8/model.c"; }; then
                bad="conv_odd.s8: no 2 x 3 tile ($tile) or word-wise im2col in model.c"
            elif ! grep -q "$tile" "$work/$t/conv_first3.u8/model.c"; then
                bad="conv_first3.u8: no 2 x 3 tile ($tile) in model.c"
            elif ! grep -q 'tvmcc_ssat_asr(' "$work/$t/conv_odd.s8/model.c"; then
                bad="conv_odd.s8: the requantization's shift is not in the SSAT (tvmcc_ssat_asr)"
            elif ! grep -q 'tvmcc_ssat_asr(.*, 1, 8)' "$work/$t/add_branches.s8/model.c"; then
                bad="add_branches.s8: the Add's requantization is not on the product's high word (m4q_requant_narrow)"
            elif [ "$t" != cortex-m55 ] && { ! grep -q 'two columns per word' "$work/$t/conv_dw.s8/model.c" ||
                    ! grep -q 'm4_q0 = m4_p;' "$work/$t/conv_dw.s8/model.c"; }; then
                bad="conv_dw.s8: no paired plane widening or carried row words in the depthwise rows"
            fi
        fi ;;
    esac
    if [ -z "$bad" ]; then
        echo "PASS qdq build $t: $n models warning-free"
    else
        echo "FAIL qdq build $t: $bad"
    fi > "$work/$t.result"
}
# the targets side by side, as many at a time as there are CPUs
# (test/jobpool.sh), reported in the listed order
. "$root/test/jobpool.sh"
for t in ${targets//,/ }; do
    rm -f "$work/$t.result"
    pool_run build_target "$t" "$@"
done
pool_wait
for t in ${targets//,/ }; do
    if [ ! -s "$work/$t.result" ]; then
        echo "FAIL qdq build $t: no result (the job did not finish)"
        failed=$((failed + 1))
        continue
    fi
    cat "$work/$t.result"
    case $(cut -c1-4 "$work/$t.result") in
        PASS) passed=$((passed + 1)) ;;
        FAIL) failed=$((failed + 1)) ;;
    esac
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
