#!/usr/bin/env bash
# Checks that the Arm intrinsic paths of emit_c/emit_arm.c are taken where
# they should be, that the code they print compiles warning-free with the
# target's compiler (-std=c99 -Wall -Wextra -pedantic -Werror, NAME.mk's
# flags) into the instructions they are for, and that no other target gets
# any of them.
#
#   test/arm/intrin_check.sh        (TVMCC, PYTHON override)
#
# Models: the ONNX suite's integer contractions (MatMulInteger, ConvInteger,
# QLinearMatMul) and bench/arm's convint and resnet8.
#   cortex-m4, cortex-m7  __smlad in the C, smlad in the object
#   aarch64               vfmaq_n_f32 and float32x4_t tiles in the C,
#                         fmla on .4s vectors in the object
#   cortex-m55            vfmaq_n_f32 (<arm_mve.h>) and __smlad in the C,
#                         vfma.f32 on q registers and smlad in the assembly
#   c, x86-64-avx2, cortex-m0   none of arm_acle.h / arm_neon.h / arm_mve.h
# Prints one line per check and "N passed, N failed"; exits 1 on a failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tvmcc=${TVMCC:-$root/tvmcc}
python=${PYTHON:-/usr/bin/python3}
data=${TESTDATA:-/usr/share/libonnx-testdata/data}/node
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

check() { # check NAME COMMAND...: one result line
    local name=$1
    shift
    if "$@" > "$work/last.log" 2>&1; then
        pass=$((pass + 1)); echo "ok   $name"
    else
        fail=$((fail + 1)); echo "FAIL $name: $(head -3 "$work/last.log" | tr '\n' ' ')"
    fi
}

"$python" "$root/bench/arm/gen_models.py" "$work" convint resnet8 > /dev/null ||
    { echo "FAIL gen_models.py"; echo "0 passed, 1 failed"; exit 1; }

# compile MODEL TARGET: tvmcc into $work/TARGET-MODEL; prints the directory
compile() {
    local d="$work/$2-$(basename "$(dirname "$1")" .onnx)-$(basename "$1" .onnx)"
    "$tvmcc" "$1" -t "$2" -o "$d" --name model > "$d.log" 2>&1 || { cat "$d.log"; return 1; }
    echo "$d"
}

# cc DIR CC [-S]: compiles DIR/model.c with NAME.mk's flags, -Werror
cc_model() {
    local d=$1 cc=$2 out=model.o mode=-c
    [ "${3:-}" = -S ] && { out=model.s; mode=-S; }
    local flags
    flags=$(sed -n 's/^MODEL_CFLAGS := //p' "$d/model.mk" | sed "s|\$(MODEL_DIR)|$d|")
    $cc $flags -Wall -Wextra -pedantic -Werror $mode "$d/model.c" -o "$d/$out"
}

dsp_case() { # dsp_case TARGET MODEL
    local d
    d=$(compile "$2" "$1") || return 1
    grep -q '__smlad(' "$d/model.c" || { echo "no __smlad in model.c"; return 1; }
    cc_model "$d" arm-none-eabi-gcc || return 1
    arm-none-eabi-objdump -d "$d/model.o" | grep -q 'smlad' || { echo "no smlad instruction"; return 1; }
}

neon_case() { # neon_case MODEL
    local d
    d=$(compile "$1" aarch64) || return 1
    grep -q 'vfmaq_n_f32(' "$d/model.c" || { echo "no vfmaq_n_f32"; return 1; }
    grep -q 'float32x4_t b' "$d/model.c" || { echo "no float32x4_t register tile"; return 1; }
    cc_model "$d" aarch64-linux-gnu-gcc || return 1
    aarch64-linux-gnu-objdump -d "$d/model.o" | grep -Eq 'fmla\s+v[0-9]+\.4s' ||
        { echo "no fmla on .4s"; return 1; }
}

mve_case() { # mve_case MODEL PATTERN ASM_PATTERN
    local d
    d=$(compile "$1" cortex-m55) || return 1
    grep -q "$2" "$d/model.c" || { echo "no $2 in model.c"; return 1; }
    cc_model "$d" arm-none-eabi-gcc -S || return 1
    grep -Eq "$3" "$d/model.s" || { echo "no $3 in the assembly"; return 1; }
}

none_case() { # none_case TARGET MODEL
    local d
    d=$(compile "$2" "$1") || return 1
    ! grep -Eq 'arm_acle|arm_neon|arm_mve|__smlad|vfmaq|float32x4_t' "$d/model.c"
}

for t in cortex-m4 cortex-m7; do
    for m in test_matmulinteger test_convinteger_with_padding test_qlinearmatmul_2D; do
        check "$t $m: SMLAD" dsp_case "$t" "$data/$m/model.onnx"
    done
    check "$t convint: SMLAD" dsp_case "$t" "$work/convint.onnx"
done
check "aarch64 resnet8: NEON" neon_case "$work/resnet8.onnx"
check "cortex-m55 resnet8: MVE" mve_case "$work/resnet8.onnx" 'vfmaq_n_f32(' 'vfma\.f32\s+q[0-7]'
check "cortex-m55 convint: SMLAD" mve_case "$work/convint.onnx" '__smlad(' 'smlad'
for t in c x86-64-avx2 cortex-m0; do
    check "$t resnet8: no Arm intrinsics" none_case "$t" "$work/resnet8.onnx"
    check "$t convint: no Arm intrinsics" none_case "$t" "$work/convint.onnx"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
