#!/usr/bin/env bash
# `make example-arm`: builds and runs this example end to end.
#   1. gen_model.py writes build/example-arm/model.onnx and expected.txt;
#   2. tvmcc -t arm compiles it into build/example-arm/out;
#   3. the firmware is built with the Makefile and with CMake (toolchain file
#      for arm-none-eabi-gcc, model.cmake from tvmcc);
#   4. each firmware runs under qemu-system-arm -M mps2-an386 -semihosting and
#      its printed y[i] must match expected.txt (|d| <= 1e-5 + 1e-4 |y|).
# Last line: "N passed, N failed"; exit 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${EXAMPLE_WORK:-$root/build/example-arm}
tvmcc=${TVMCC:-$root/tvmcc}
python=${PYTHON:-/usr/bin/python3}
pass=0 fail=0

ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

# check NAME LOG: qemu's output in LOG against expected.txt.
check() {
    local got
    got=$(sed -n 's/^y\[[0-9]*\] = //p' "$2")
    if [ "$(printf '%s\n' "$got" | grep -c .)" != 10 ]; then
        bad "$1" "expected 10 values, see $2"
    elif paste -d' ' "$work/expected.txt" <(printf '%s\n' "$got") |
        awk '{ d = $1 - $2; if (d < 0) d = -d; a = $1 < 0 ? -$1 : $1
               if (d > 1e-5 + 1e-4 * a) { print "  y[" NR-1 "]: expected " $1 ", got " $2; bad = 1 } }
             END { exit bad }'; then
        ok "$1"
    else
        bad "$1" "output differs from expected.txt"
    fi
}

run_qemu() {
    timeout -k 5 60 qemu-system-arm -M mps2-an386 -nographic -monitor none \
        -semihosting-config enable=on,target=native -kernel "$1"
}

rm -rf "$work" && mkdir -p "$work"
if ! "$python" "$here/gen_model.py" "$work" > "$work/gen.log" 2>&1; then
    bad gen_model "$(tail -1 "$work/gen.log")"
    echo "$pass passed, $fail failed"; exit 1
fi
if ! "$tvmcc" "$work/model.onnx" -t arm -o "$work/out" > "$work/tvmcc.log" 2>&1; then
    bad tvmcc "$(head -1 "$work/tvmcc.log")"
    echo "$pass passed, $fail failed"; exit 1
fi

# make
if make -C "$here" OUT="$work/out" BUILD="$work/build-make" > "$work/make.log" 2>&1; then
    grep -A1 'text' "$work/make.log" | sed 's/^/  /'
    run_qemu "$work/build-make/firmware.elf" > "$work/run-make.log" 2>&1
    rc=$?
    if [ $rc = 0 ]; then check make "$work/run-make.log"; else bad make "qemu exit $rc"; fi
else
    bad make "build failed, see $work/make.log"
fi

# CMake
if command -v cmake > /dev/null 2>&1; then
    if cmake -S "$here" -B "$work/build-cmake" -DCMAKE_TOOLCHAIN_FILE="$here/toolchain-arm-none-eabi.cmake" \
            -DTVMCC_OUT="$work/out" > "$work/cmake.log" 2>&1 &&
        cmake --build "$work/build-cmake" >> "$work/cmake.log" 2>&1; then
        run_qemu "$work/build-cmake/firmware.elf" > "$work/run-cmake.log" 2>&1
        rc=$?
        if [ $rc = 0 ]; then check cmake "$work/run-cmake.log"; else bad cmake "qemu exit $rc"; fi
    else
        bad cmake "build failed, see $work/cmake.log"
    fi
else
    echo "SKIP cmake: not installed"
fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
