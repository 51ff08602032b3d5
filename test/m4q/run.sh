#!/usr/bin/env bash
# The Cortex-M form of a float QuantizeLinear to 8 bits (x * (1 / scale)
# to 16.16 fixed point, SSAT/USAT, the division form VDIV / VCVTR / QADD
# where the result is in doubt: emit_c/emit_arm.c m4_quant_fixed) against
# the definition on special inputs (test/m4q/gen.py: NaN, infinities,
# values past int32, ties of x / scale and their ulp neighbours for
# scales that are no power of two, scales without a normal reciprocal),
# with `tvmcc verify` on the host (-t c) and on -t cortex-m4 under
# qemu-system-arm; also that the cortex-m4 C has that form.
# Prints PASS/FAIL/SKIP lines and "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
work="$root/build/m4q"
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP m4q: onnx/numpy not importable by $PYTHON"
    echo "0 passed, 0 failed"
    exit 0
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
if ! "$PYTHON" "$here/gen.py" "$work" > "$work/gen.log" 2>&1; then
    echo "FAIL m4q: gen.py: $(tail -1 "$work/gen.log")"
    echo "0 passed, 1 failed"
    exit 1
fi
targets="c"
if command -v arm-none-eabi-gcc > /dev/null && command -v qemu-system-arm > /dev/null; then
    targets="c cortex-m4"
else
    echo "SKIP m4q cortex-m4: arm-none-eabi-gcc or qemu-system-arm missing"
fi
for d in "$work"/*/; do
    m=$(basename "$d")
    for t in $targets; do
        if "$TVMCC" verify "$d/model.onnx" --data "$d/data_0" -t "$t" > "$d/$t.log" 2>&1; then
            pass "m4q $m $t"
        else
            fail "m4q $m $t: $(grep -m1 -iE 'fail|error|mismatch' "$d/$t.log")"
        fi
    done
    # the form the cortex-m4 C must hold: the fixed-point one unless the
    # case names another (per-channel scales: the division, VCVTR)
    form="vcvt.s32.f32 %0, %0, #16"
    [ -f "$d/form" ] && form=$(cat "$d/form")
    if "$TVMCC" "$d/model.onnx" -t cortex-m4 -o "$d/m4" > "$d/m4.log" 2>&1 &&
        grep -qF "$form" "$d/m4/model.c"; then
        pass "m4q $m cortex-m4 C has the form $form"
    else
        fail "m4q $m cortex-m4 C has no $form"
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
