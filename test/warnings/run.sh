#!/usr/bin/env bash
# Emitted-C hygiene: the runtime and the C that tvmcc emits must compile
# without a single warning under
#   -std=c99 -Wall -Wextra -pedantic -Wconversion -Wsign-conversion
#   -Wdouble-promotion -Wshadow -Wvla -Werror
# (test/conformance/run.sh's CC_WARN) with gcc, clang and arm-none-eabi-gcc.
#
#   test/warnings/run.sh [--work DIR] [--sample N] [-j N]
#
# Checks, each one counted as a test:
#   runtime/CC/FLAGS   runtime_min/tvmrt.c (and so tvmrt.h) compiled with gcc
#                      and clang at -O2, and with arm-none-eabi-gcc at -Os for
#                      Cortex-M4 (hard float), Cortex-M0 (soft float) and
#                      Cortex-M7 (double-precision FPU)
#   clang/SUITE/TEST   every model a host conformance run compiled (DIR/host,
#                      default build/conformance: run test/conformance/run.sh
#                      first), NAME.c and NAME_weights.c checked with clang
#                      -fsyntax-only. gcc already builds each of them with the
#                      same flags in the conformance run itself.
#   m0-Os/SUITE/TEST   one model in N (--sample, default 8, chosen by a
#                      checksum of the name) of the same outputs (target c)
#                      compiled with arm-none-eabi-gcc -mcpu=cortex-m0 -Os:
#                      the portable C on a soft-float core, at the size
#                      optimisation firmware uses.
#   ub/NAME            the models of test/warnings/ub_models.py (integer
#                      overflow, INT_MIN / -1, NaN and out-of-range float to
#                      integer casts...) compiled by tvmcc ($TVMCC), built
#                      with clang -fsanitize=undefined,float-cast-overflow
#                      and run with test/driver.c: no sanitizer report.
# A missing compiler or a missing conformance run is a failure, not a skip.
# The last line is "N passed, N failed"; exit 1 when anything failed.
set -u
export LC_ALL=C
root=$(cd "$(dirname "$0")/../.." && pwd)
# --- the emitted C of a conformance run
# One output directory: "run.sh --worker DIR ID SAMPLED" prints PASS/FAIL lines.
worker() {
    local d=$1 id=$2 sampled=$3 log
    log=$(mktemp)
    clang $CC_WARN -fsyntax-only -I "$d" "$d/model.c" "$d/model_weights.c" > "$log" 2>&1 ||
        [ -s "$log" ] || echo "clang failed" > "$log"
    if [ -s "$log" ]; then
        printf 'FAIL clang/%s: %s\n' "$id" "$(grep -m1 -E 'error|warning' "$log" || head -1 "$log")"
    else
        printf 'PASS clang/%s\n' "$id"
    fi
    if [ "$sampled" = 1 ]; then
        arm-none-eabi-gcc $M0_FLAGS $CC_WARN -Os -c -I "$d" "$d/model.c" -o /dev/null > "$log" 2>&1 &&
            arm-none-eabi-gcc $M0_FLAGS $CC_WARN -Os -c -I "$d" "$d/model_weights.c" -o /dev/null \
                >> "$log" 2>&1 || [ -s "$log" ] || echo "arm-none-eabi-gcc failed" > "$log"
        if [ -s "$log" ]; then
            printf 'FAIL m0-Os/%s: %s\n' "$id" "$(grep -m1 -E 'error|warning' "$log" || head -1 "$log")"
        else
            printf 'PASS m0-Os/%s\n' "$id"
        fi
    fi
    rm -f "$log"
}
if [ "${1:-}" = --worker ]; then
    worker "$2" "$3" "$4"
    exit 0
fi

work=$root/build/conformance sample=8 jobs=2
while [ $# -gt 0 ]; do
    case $1 in
        --work) work=${2:?}; shift ;;
        --sample) sample=${2:?}; shift ;;
        -j) jobs=${2:?}; shift ;;
        -j*) jobs=${1#-j} ;;
        *) echo "usage: test/warnings/run.sh [--work DIR] [--sample N] [-j N]" >&2; exit 2 ;;
    esac
    shift
done

# Kept equal to CC_WARN in test/conformance/run.sh.
export CC_WARN="-std=c99 -Wall -Wextra -pedantic -Wconversion -Wsign-conversion -Wdouble-promotion -Wshadow -Wvla -Werror"
export M0_FLAGS="-mcpu=cortex-m0 -mthumb -mfloat-abi=soft"
out=$root/build/warnings
rm -rf "$out" && mkdir -p "$out"
results=$out/results.txt
: > "$results"

# record NAME LOG: a pass when LOG is empty, else a failure with its first line.
record() {
    if [ -s "$2" ]; then
        printf 'FAIL %s: %s\n' "$1" "$(grep -m1 -E 'error|warning' "$2" || head -1 "$2")" >> "$results"
    else
        printf 'PASS %s\n' "$1" >> "$results"
    fi
}

# --- the runtime
check_runtime() {
    local name=$1 log="$out/runtime.log"
    shift
    if ! command -v "$1" >/dev/null 2>&1; then
        printf 'FAIL runtime/%s: %s not installed\n' "$name" "$1" >> "$results"
        return
    fi
    "$@" $CC_WARN -c "$root/runtime_min/tvmrt.c" -o "$out/tvmrt.o" > "$log" 2>&1 ||
        [ -s "$log" ] || echo "compiler failed" > "$log"
    record "runtime/$name" "$log"
}
check_runtime gcc-O2 gcc -O2
check_runtime clang-O2 clang -O2
check_runtime m4-Os arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Os
check_runtime m0-Os arm-none-eabi-gcc $M0_FLAGS -Os
check_runtime m7-Os arm-none-eabi-gcc -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16 -Os

list=$out/outputs.txt
if [ -d "$work/host" ]; then
    for d in "$work"/host/*/*/out; do
        [ -f "$d/model.c" ] || continue
        id=${d%/out}
        id=${id#"$work/host/"}
        s=0
        [ $(( $(printf '%s' "$id" | cksum | cut -d' ' -f1) % sample )) = 0 ] && s=1
        printf '%s %s %s\n' "$d" "$id" "$s"
    done > "$list"
else
    : > "$list"
fi
if [ ! -s "$list" ]; then
    printf 'FAIL outputs: no compiled models in %s/host (run test/conformance/run.sh first)\n' \
        "$work" >> "$results"
else
    for t in clang arm-none-eabi-gcc; do
        command -v $t >/dev/null 2>&1 ||
            printf 'FAIL outputs: %s not installed\n' "$t" >> "$results"
    done
    if command -v clang >/dev/null 2>&1 && command -v arm-none-eabi-gcc >/dev/null 2>&1; then
        echo "warnings: runtime, clang on $(wc -l < "$list") models, arm-none-eabi-gcc -Os (M0) on" \
            "$(awk '$3 == 1' "$list" | wc -l) of them, -j $jobs"
        xargs -P "$jobs" -L 1 "$0" --worker < "$list" >> "$results"
    fi
fi

# --- undefined behaviour: edge-value models under clang's UBSan
ubdir=$out/ub
tvmcc=${TVMCC:-$root/tvmcc}
UBSAN="-fsanitize=undefined,float-cast-overflow,integer-divide-by-zero -fno-sanitize-recover=all"
if ! /usr/bin/python3 "$root/test/warnings/ub_models.py" "$ubdir" > "$out/ub_models.log" 2>&1; then
    printf 'FAIL ub: cannot build the models: %s\n' "$(tail -1 "$out/ub_models.log")" >> "$results"
else
    echo "warnings: $(ls "$ubdir" | wc -l) edge-value models under clang $UBSAN"
    for d in "$ubdir"/*/; do
        d=${d%/}
        n=${d##*/}
        log=$d/log
        if ! "$tvmcc" "$d/model.onnx" -o "$d/out" > "$log" 2>&1; then
            printf 'FAIL ub/%s: tvmcc: %s\n' "$n" "$(head -1 "$log")" >> "$results"
        elif ! clang -std=c99 -O1 $UBSAN -I "$d/out" "$d"/out/*.c "$root/test/driver.c" -lm \
                -o "$d/driver" > "$log" 2>&1; then
            printf 'FAIL ub/%s: clang: %s\n' "$n" "$(grep -m1 error "$log")" >> "$results"
        elif ! (cd "$d" && ./driver in_*.bin -o out.bin) > "$log" 2>&1; then
            printf 'FAIL ub/%s: %s\n' "$n" "$(grep -m1 'runtime error' "$log" || head -1 "$log")" \
                >> "$results"
        else
            printf 'PASS ub/%s\n' "$n" >> "$results"
        fi
    done
fi

grep '^FAIL' "$results" | head -20
awk '$1 == "PASS" { p++ } $1 == "FAIL" { f++ } END { printf "%d passed, %d failed\n", p, f }' "$results"
! grep -q '^FAIL' "$results"
