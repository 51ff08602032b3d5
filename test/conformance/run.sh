#!/usr/bin/env bash
# ONNX backend conformance: compile every test model with tvmcc, build the
# emitted C with test/driver.c, run it on each test_data_set_* and compare the
# outputs with tensortool (rtol 1e-3, atol 1e-5).
#
#   test/conformance/run.sh [--arm | --cpu m4|m7|m0|m55 | --aarch64]
#                           [--suite node|pytorch-converted|pytorch-operator|simple|all|onnx-1.20.1]
#                           [--filter REGEX] [--sample N] [-j N] [--update-expected] [-v]
#                           [--build-only] [--new-only]
#
# Host mode builds with gcc ($CC_WARN: -std=c99 -Wall -Wextra -pedantic
# -Wconversion -Wsign-conversion -Wdouble-promotion -Wshadow -Wvla -Werror,
# -O1) and, for every 10th test, also checks the C with clang (same flags;
# test/warnings/run.sh checks every test with clang). --arm cross-compiles with
# arm-none-eabi-gcc for Cortex-M4 and runs under qemu -M mps2-an386 (default
# suites: pytorch-converted, pytorch-operator, simple).
#
# Other Arm cores (same default suites; tvmcc is given -t TARGET):
#   --cpu m4    the same as --arm
#   --cpu m7    -t cortex-m7, -mcpu=cortex-m7 -mfpu=fpv5-d16, qemu -M mps2-an500
#               (test/arm/mps2-an500.ld: PSRAM is at 0x60000000 on that board)
#   --cpu m0    -t cortex-m0, -mcpu=cortex-m0 -mfloat-abi=soft (Armv6-M), run on
#               qemu -M mps2-an385: qemu has no Cortex-M0 board with enough memory,
#               and the AN385's Cortex-M3 executes every Armv6-M instruction
#   --cpu m55   -t cortex-m55, -mcpu=cortex-m55 (Helium): BUILD ONLY, a test
#               passes when it compiles and links; nothing runs
#   --aarch64   -t aarch64, aarch64-linux-gnu-gcc -static, run under qemu-aarch64
# --build-only (host mode) stops after building the driver: a test passes when
# tvmcc compiles it and $CC_HOST builds it warning-free (for a target whose
# code this CPU cannot run, e.g. x86-64-avx512 on an AVX2-only host).
# --new-only leaves out the onnx-1.20.1 tests that are byte-identical
# (model.onnx and every data set) to the same test in Debian's node suite,
# for a host run made beside a host run of suite node with the same options.
# --sample N keeps one test in N (chosen by a checksum of its name), for the
# slow soft-float M0 runs.
#
# A test fails at one stage: compile (tvmcc), cc, clang, data (tensortool raw),
# run (driver) or mismatch (tensortool cmp). Failures listed in
# expected_failures.txt (arm: also expected_failures_arm.txt; the other
# modes: also expected_failures_arm.txt for the Cortex-M ones, and
# expected_failures_MODE.txt) are expected;
# any other failure makes the script exit 1. The last line is always
# "N passed, N failed". Work dirs: build/conformance/MODE/SUITE/TEST with MODE
# host, arm, arm-m7, arm-m0, arm-m55 or aarch64; all results:
# build/conformance/MODE/results.txt.
#
# Suite onnx-1.20.1 is the ONNX 1.20.1 node suite (1,653 tests, opsets up to
# 25), read in place from $ONNX_1201_DIR/node (default: ../shared/onnx-1.20.1
# beside the repository; never copied in). It is not part of "all"; where the
# directory is absent the run prints a SKIP line and "0 passed, 0 failed".
# Its host failures are listed in expected_failures_onnx-1.20.1.txt (and
# --update-expected rewrites that file for a host run of this suite alone).
#
# Environment overrides: TVMCC, ONNX_1201_DIR, TVMCC_FLAGS (extra tvmcc options, e.g. -O0), TENSORTOOL, CC_HOST, TESTDATA, QEMU_TIMEOUT,
# CONFORMANCE_WORK (work root instead of build/conformance; concurrent runs
# with the same root wait for each other).
set -u
export LC_ALL=C  # plain ASCII quotes in compiler messages; stable sort order

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# The directory holding a suite's test directories.
suite_dir() {
    case $1 in
        onnx-1.20.1) printf '%s/node' "$ONNX_1201_DIR" ;;
        *) printf '%s/%s' "$TESTDATA" "$1" ;;
    esac
}

# ---------------------------------------------------------------- worker --
# One test, run by xargs in parallel: "run.sh --worker suite/test".
# Writes one line "suite/test<TAB>pass|fail<TAB>stage: first error line".
first_line() {
    # First non-empty line of a file, preferring one that says "error".
    local f=$1 line
    line=$(grep -m1 -i 'error' "$f" 2>/dev/null)
    [ -n "$line" ] || line=$(grep -m1 -v '^[[:space:]]*$' "$f" 2>/dev/null)
    [ -n "$line" ] || line="(no message)"
    printf '%s' "$line" | tr '\t\r' '  ' | cut -c1-200
}

# rt_object COMPILER FLAGS...: prints the object of out/tvmrt.c built by
# "COMPILER FLAGS... -c". Every output of a run carries the same runtime
# (it depends on no model), and compiling it is about 60% of a test's cc
# stage: the object is built once per distinct (command, tvmrt.c, tvmrt.h)
# into $WORKROOT/.objcache, which each run starts empty. The warnings it
# would raise fail the first test that builds it (and test/warnings/run.sh
# compiles every output's tvmrt.c under clang).
rt_object() {
    local key obj
    key=$({ printf '%s\n' "$*"; cat out/tvmrt.c out/tvmrt.h; } | sha1sum | cut -c1-20)
    obj="$WORKROOT/.objcache/$key.o"
    if [ ! -f "$obj" ]; then
        "$@" -c out/tvmrt.c -o "$obj.$BASHPID" >>cc.log 2>&1 || { rm -f "$obj.$BASHPID"; return 1; }
        mv -f "$obj.$BASHPID" "$obj"
    fi
    printf '%s' "$obj"
}

worker() {
    local id=$1 suite=${1%%/*} name=${1#*/}
    local src="$(suite_dir "$suite")/$name" w="$WORKROOT/$suite/$name"
    local res="$WORKROOT/.results/${suite}__$name"
    local rc k set n_in n_out args

    # Records a failure at stage $1 with message $2 (test paths shortened).
    fail() { printf '%s\tfail\t%s: %s\n' "$id" "$1" "${2//$src\//}" > "$res"; exit 0; }

    rm -rf "$w" && mkdir -p "$w" || fail setup "cannot create $w"
    cd "$w" || fail setup "cannot enter $w"

    # Symbolic input dimensions are bound from the first data set's inputs,
    # as a user binds them with --input-shape.
    local shape_args=() pb info
    for pb in "$src"/test_data_set_0/input_*.pb; do
        [ -f "$pb" ] || continue
        info=$("$TENSORTOOL" info "$pb" 2>/dev/null) || continue
        set -- $info
        [ $# -eq 3 ] && [ "$1" != "-" ] && [ "$3" != "[]" ] || continue
        shape_args+=(--input-shape "$1=$(printf '%s' "$3" | tr -d '[]')")
    done
    # Sequence and optional graph inputs and outputs (SequenceProto and
    # OptionalProto .pb files): the lengths, element shapes and absent
    # optionals of the first data set become tvmcc options, and each file is
    # split into one TensorProto per element buffer (tensortool seqbind,
    # seqsplit; docs/user-guide.md).
    local seqio=0 seqopts part parts bin
    if "$TENSORTOOL" hasseq "$src/model.onnx" 2>/dev/null; then
        seqio=1
        seqopts=$("$TENSORTOOL" seqbind "$src/model.onnx" "$src/test_data_set_0" 2>data.log) ||
            fail data "test_data_set_0: $(first_line data.log)"
        while IFS= read -r part; do
            [ -n "$part" ] && shape_args+=("$part")
        done <<< "$seqopts"
    fi
    timeout -k 5 60 "$TVMCC" "$src/model.onnx" -o out --name model "${shape_args[@]}" $TARGET_FLAG ${TVMCC_FLAGS:-} >compile.log 2>&1
    rc=$?
    [ $rc = 124 ] && fail compile "timeout after 60 s"
    [ $rc = 0 ] || fail compile "$(first_line compile.log)"
    # the emitted C but the runtime (built once: rt_object)
    local srcs=() rt f
    : > cc.log
    for f in out/*.c; do
        [ "$f" = out/tvmrt.c ] || srcs+=("$f")
    done

    if [ "$MODE" != host ] && [ "$MODE" != aarch64 ]; then
        rt=$(rt_object arm-none-eabi-gcc $ARM_FLAGS $CC_WARN -O1 -I out) ||
            fail cc "$(first_line cc.log)"
        arm-none-eabi-gcc $ARM_FLAGS $CC_WARN -O1 -I out \
            "${srcs[@]}" "$root/test/driver.c" "$rt" "$ARM_STARTUP" --specs=rdimon.specs -nostartfiles \
            -T "$ARM_LD" -lm -o driver.elf >>cc.log 2>&1 ||
            fail cc "$(first_line cc.log)"
        if [ -z "$QEMU_MACHINE" ]; then
            # Build-only core (M55): linking is the test.
            printf '%s\tpass\t\n' "$id" > "$res"
            rm -f driver.elf
            exit 0
        fi
    elif [ "$MODE" = aarch64 ]; then
        rt=$(rt_object aarch64-linux-gnu-gcc $CC_WARN -O1 -static -I out) ||
            fail cc "$(first_line cc.log)"
        aarch64-linux-gnu-gcc $CC_WARN -O1 -static -I out "${srcs[@]}" \
            "$root/test/driver.c" "$rt" -lm -o driver >>cc.log 2>&1 || fail cc "$(first_line cc.log)"
    else
        rt=$(rt_object $CC_HOST $CC_WARN -O1 -I out) || fail cc "$(first_line cc.log)"
        $CC_HOST $CC_WARN -O1 -I out "${srcs[@]}" \
            "$root/test/driver.c" "$rt" -lm -o driver >>cc.log 2>&1 || fail cc "$(first_line cc.log)"
        if [ "$BUILD_ONLY" = 1 ]; then
            printf '%s\tpass\t\n' "$id" > "$res"
            rm -f driver
            exit 0
        fi
        if [ -n "$CLANG" ] && [ $(( $(printf '%s' "$id" | cksum | cut -d' ' -f1) % 10 )) = 0 ]; then
            for f in out/*.c "$root/test/driver.c"; do
                $CLANG $CC_WARN -fsyntax-only -I out "$f" \
                    >>clang.log 2>&1 || fail clang "$(first_line clang.log)"
            done
        fi
    fi

    for set in "$src"/test_data_set_*; do
        [ -d "$set" ] || continue
        set=${set##*/}
        mkdir -p "$set"
        args=()
        k=0
        while [ -f "$src/$set/input_$k.pb" ]; do
            if [ $seqio = 1 ]; then
                parts=$("$TENSORTOOL" seqsplit "$src/model.onnx" in $k "$src/$set/input_$k.pb" \
                    "$set/in_$k" 2>data.log) || fail data "$set/input_$k.pb: $(first_line data.log)"
            else
                parts="$src/$set/input_$k.pb"
            fi
            for part in $parts; do
                bin="$set/in_$k.bin"
                [ $seqio = 1 ] && bin="${part%.pb}.bin"
                "$TENSORTOOL" raw "$part" "$bin" >data.log 2>&1 ||
                    fail data "$set/input_$k.pb: $(first_line data.log)"
                args+=("$bin")
            done
            k=$((k + 1))
        done
        args+=(-o)
        n_out=0
        local exp_pb=() out_bin=() out_k=()
        while [ -f "$src/$set/output_$n_out.pb" ]; do
            if [ $seqio = 1 ]; then
                parts=$("$TENSORTOOL" seqsplit "$src/model.onnx" out $n_out \
                    "$src/$set/output_$n_out.pb" "$set/exp_$n_out" 2>data.log) ||
                    fail data "$set/output_$n_out.pb: $(first_line data.log)"
                for part in $parts; do
                    exp_pb+=("$part")
                    bin=${part##*/}
                    out_bin+=("$set/out${bin#exp}")
                    out_bin[${#out_bin[@]} - 1]="${out_bin[${#out_bin[@]} - 1]%.pb}.bin"
                    out_k+=("$n_out${bin#exp_$n_out}")
                done
            else
                exp_pb+=("$src/$set/output_$n_out.pb")
                out_bin+=("$set/out_$n_out.bin")
                out_k+=("$n_out")
            fi
            n_out=$((n_out + 1))
        done
        args+=("${out_bin[@]}")
        if [ "$MODE" = aarch64 ]; then
            timeout -k 5 "$QEMU_TIMEOUT" qemu-aarch64 ./driver "${args[@]}" >run.log 2>&1
        elif [ "$MODE" != host ]; then
            # Semihosting hands qemu's cwd-relative paths to the host; qemu
            # joins arg= pieces with spaces (none in our paths).
            local sh="enable=on,target=native,arg=driver"
            for a in "${args[@]}"; do sh="$sh,arg=$a"; done
            timeout -k 5 "$QEMU_TIMEOUT" qemu-system-arm -M "$QEMU_MACHINE" -nographic -monitor none \
                -semihosting-config "$sh" -kernel driver.elf >run.log 2>&1
        else
            timeout -k 5 60 ./driver "${args[@]}" >run.log 2>&1
        fi
        rc=$?
        [ $rc = 124 ] && fail run "$set: timeout"
        [ $rc = 0 ] || fail run "$set: exit $rc: $(first_line run.log)"
        for ((k = 0; k < ${#exp_pb[@]}; k++)); do
            "$TENSORTOOL" cmp "${exp_pb[k]}" "${out_bin[k]}" --rtol 1e-3 --atol 1e-5 \
                >cmp.log 2>&1
            rc=$?
            [ $rc = 0 ] || fail mismatch "$set output_${out_k[k]%.pb}: $(first_line cmp.log)"
        done
    done
    printf '%s\tpass\t\n' "$id" > "$res"
    # Keep the work dir small when the test passed.
    rm -rf "$w"/test_data_set_* "$w"/driver "$w"/driver.elf
    exit 0
}

if [ "${1:-}" = --worker ]; then
    worker "$2"
fi

# ------------------------------------------------------------------ main --
usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

mode=host suites="" filter="" jobs=2 update=0 verbose=0 sample=1 build_only=0 new_only=0
while [ $# -gt 0 ]; do
    case $1 in
        --arm) mode=arm ;;
        --aarch64) mode=aarch64 ;;
        --cpu|--cpu=*)
            if [ "$1" = --cpu ]; then cpu=${2:?}; shift; else cpu=${1#*=}; fi
            case $cpu in
                m4) mode=arm ;;
                m7|m0|m55) mode=arm-$cpu ;;
                *) echo "run.sh: unknown --cpu $cpu (m4, m7, m0, m55)" >&2; exit 2 ;;
            esac ;;
        --sample) sample=${2:?}; shift ;;
        --sample=*) sample=${1#*=} ;;
        --suite) suites=${2:?}; shift ;;
        --suite=*) suites=${1#*=} ;;
        --filter) filter=${2:?}; shift ;;
        --filter=*) filter=${1#*=} ;;
        -j) jobs=${2:?}; shift ;;
        -j*) jobs=${1#-j} ;;
        --update-expected) update=1 ;;
        --build-only) build_only=1 ;;
        --new-only) new_only=1 ;;
        -v) verbose=1 ;;
        -h|--help) usage ;;
        *) echo "run.sh: unknown option $1" >&2; usage ;;
    esac
    shift
done

if [ -z "$suites" ] || [ "$suites" = all ]; then
    if [ "$mode" != host ] && [ -z "$suites" ]; then
        suites="pytorch-converted pytorch-operator simple"
    else
        suites="node pytorch-converted pytorch-operator simple"
    fi
fi

export MODE=$mode BUILD_ONLY=$build_only
if [ $build_only = 1 ] && [ "$mode" != host ]; then
    echo "run.sh: --build-only is for host mode (--cpu m55 is always build only)" >&2
    exit 2
fi
export TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
export ONNX_1201_DIR=${ONNX_1201_DIR:-$(realpath -m "$root/../shared/onnx-1.20.1")}
export TVMCC=${TVMCC:-$root/tvmcc}
export TVMCC_FLAGS=${TVMCC_FLAGS:-}
export TENSORTOOL=${TENSORTOOL:-$root/build/tensortool}
export CC_HOST=${CC_HOST:-gcc}
# Warnings the emitted C (and test/driver.c) must be free of, on every
# compiler (docs/user-guide.md); also used by test/warnings/run.sh.
export CC_WARN="-std=c99 -Wall -Wextra -pedantic -Wconversion -Wsign-conversion -Wdouble-promotion -Wshadow -Wvla -Werror"
export QEMU_TIMEOUT=${QEMU_TIMEOUT:-120}
export WORKROOT=$(realpath -m "${CONFORMANCE_WORK:-$root/build/conformance}")/$mode
export ARM_FLAGS="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
export ARM_LD="$root/test/arm/mps2-an386.ld"
export QEMU_MACHINE=mps2-an386
export TARGET_FLAG=""
case $mode in
    arm-m7) ARM_FLAGS="-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16"
            ARM_LD="$root/test/arm/mps2-an500.ld" QEMU_MACHINE=mps2-an500 TARGET_FLAG="-t cortex-m7" ;;
    arm-m0) ARM_FLAGS="-mcpu=cortex-m0 -mthumb -mfloat-abi=soft"
            QEMU_MACHINE=mps2-an385 TARGET_FLAG="-t cortex-m0" ;;
    arm-m55) ARM_FLAGS="-mcpu=cortex-m55 -mthumb -mfloat-abi=hard"
            QEMU_MACHINE="" TARGET_FLAG="-t cortex-m55" ;;
    aarch64) TARGET_FLAG="-t aarch64" ;;
esac
export ARM_STARTUP="$WORKROOT/startup.o"
CLANG=""
command -v clang >/dev/null 2>&1 && CLANG=clang
export CLANG

for tool in "$TVMCC" "$TENSORTOOL"; do
    if [ ! -x "$tool" ]; then
        echo "conformance: $tool not built (run make)"
        echo "0 passed, 1 failed"
        exit 1
    fi
done
if [ "$suites" = onnx-1.20.1 ] && [ ! -d "$ONNX_1201_DIR/node" ]; then
    echo "SKIP conformance: the ONNX 1.20.1 node suite is not at $ONNX_1201_DIR/node (set ONNX_1201_DIR)"
    echo "0 passed, 0 failed"
    exit 0
fi
[ -d "$TESTDATA" ] || { echo "conformance: no test data in $TESTDATA (scripts/deps.sh test)"; echo "0 passed, 1 failed"; exit 1; }

mkdir -p "$WORKROOT"
# Runs sharing a work root would delete each other's results: take turns.
exec 9> "$WORKROOT/.lock"
if ! flock -n 9; then
    echo "conformance: waiting for another run using $WORKROOT (set CONFORMANCE_WORK to use another dir)"
    flock 9
fi
rm -rf "$WORKROOT/.results" "$WORKROOT/.objcache"
mkdir -p "$WORKROOT/.results" "$WORKROOT/bin" "$WORKROOT/.objcache"
# Run private copies, so a rebuild of the tree during the run (make relinks
# tvmcc in place) cannot fail tests half-way.
cp "$TVMCC" "$WORKROOT/bin/tvmcc" && cp "$TENSORTOOL" "$WORKROOT/bin/tensortool" ||
    { echo "conformance: cannot copy the tools"; echo "0 passed, 1 failed"; exit 1; }
export TVMCC="$WORKROOT/bin/tvmcc" TENSORTOOL="$WORKROOT/bin/tensortool"
if [ "$mode" = aarch64 ]; then
    for t in aarch64-linux-gnu-gcc qemu-aarch64; do
        command -v $t >/dev/null 2>&1 || { echo "conformance: $t missing (scripts/deps.sh test)"; echo "0 passed, 1 failed"; exit 1; }
    done
    printf '#include <stdio.h>\nint main(void) { return 0; }\n' > "$WORKROOT/libc_check.c"
    aarch64-linux-gnu-gcc -static "$WORKROOT/libc_check.c" -o "$WORKROOT/libc_check" 2>/dev/null ||
        { echo "conformance: aarch64-linux-gnu-gcc cannot link -static (install libc6-dev-arm64-cross)"; echo "0 passed, 1 failed"; exit 1; }
elif [ "$mode" != host ]; then
    for t in arm-none-eabi-gcc qemu-system-arm; do
        command -v $t >/dev/null 2>&1 || { echo "conformance: $t missing (scripts/deps.sh test)"; echo "0 passed, 1 failed"; exit 1; }
    done
    arm-none-eabi-gcc $ARM_FLAGS -std=c99 -Wall -Wextra -Werror -O1 -c "$root/test/arm/startup.c" \
        -o "$ARM_STARTUP" || { echo "0 passed, 1 failed"; exit 1; }
fi

# The list of tests: suite/test, sorted, filtered.
list="$WORKROOT/.tests"
for s in $suites; do
    [ -d "$(suite_dir "$s")" ] || { echo "conformance: unknown suite $s (no $(suite_dir "$s"))" >&2; exit 2; }
    for d in "$(suite_dir "$s")"/*/; do
        [ -f "$d/model.onnx" ] && printf '%s/%s\n' "$s" "$(basename "$d")"
    done
done | LC_ALL=C sort | { if [ -n "$filter" ]; then grep -E -- "$filter" || true; else cat; fi; } |
    while IFS= read -r t; do
        [ "$sample" -le 1 ] || [ $(( $(printf '%s' "$t" | cksum | cut -d' ' -f1) % sample )) = 0 ] && printf '%s\n' "$t"
    done > "$list"
# --new-only: drop the onnx-1.20.1 tests whose directory (model and every
# data set) is byte-identical to the same test in Debian's node suite: a
# host run of suite node under the same options covers them.
if [ $new_only = 1 ]; then
    n_dup=0
    while IFS= read -r t; do
        case $t in
            onnx-1.20.1/*)
                if [ -d "$TESTDATA/node/${t#*/}" ] &&
                        diff -rq "$(suite_dir onnx-1.20.1)/${t#*/}" "$TESTDATA/node/${t#*/}" >/dev/null 2>&1; then
                    n_dup=$((n_dup + 1))
                    continue
                fi ;;
        esac
        printf '%s\n' "$t"
    done < "$list" > "$list.new"
    mv "$list.new" "$list"
    [ $n_dup -gt 0 ] &&
        echo "SKIP conformance: $n_dup onnx-1.20.1 tests byte-identical to Debian's node suite (model and data sets): its host run covers them (--new-only)"
fi

ntests=$(wc -l < "$list")
extra=""
[ "$sample" -gt 1 ] && extra=", 1 in $sample sampled"
[ "$mode" = arm-m55 ] && extra="$extra, build only (no qemu run)"
[ $build_only = 1 ] && extra="$extra, build only (nothing runs)"
echo "conformance ($mode): $ntests tests, suites: $suites, -j $jobs$extra"
xargs -P "$jobs" -I{} "$0" --worker {} < "$list"

results="$WORKROOT/results.txt"
: > "$results"
while IFS= read -r id; do
    f="$WORKROOT/.results/${id%%/*}__${id#*/}"
    if [ -s "$f" ]; then cat "$f"; else printf '%s\tfail\tharness: no result (worker crashed)\n' "$id"; fi
done < "$list" > "$results"

[ $verbose = 1 ] && awk -F'\t' '{ printf "%-4s %s %s\n", toupper($2), $1, $3 }' "$results"

# Per-suite summary.
for s in $suites; do
    awk -F'\t' -v s="$s" 'index($1, s "/") == 1 { n++; if ($2 == "pass") p++ }
        END { if (n) printf "%s: %d/%d passed\n", s, p, n }' "$results"
done
awk -F'\t' '$2 == "fail" { split($3, a, ":"); c[a[1]]++ }
    END { for (k in c) printf "  %s %d", k, c[k]; if (length(c)) printf "  (failures by stage)\n" }' "$results"

# Expected failures: the first field of each non-comment line.
expfiles="$here/expected_failures.txt $here/expected_failures_onnx-1.20.1.txt"
case $mode in
    arm) expfiles="$expfiles $here/expected_failures_arm.txt" ;;
    arm-*) expfiles="$expfiles $here/expected_failures_arm.txt $here/expected_failures_$mode.txt" ;;
    aarch64) expfiles="$expfiles $here/expected_failures_aarch64.txt" ;;
esac
expected="$WORKROOT/.expected"
for e in $expfiles; do
    [ -f "$e" ] && sed -e 's/#.*//' "$e" | awk 'NF { print $1 }'
done | LC_ALL=C sort -u > "$expected"

unexpected=$(awk -F'\t' 'FILENAME == ARGV[1] { xp[$1] = 1; next } $2 == "fail" && !($1 in xp) { print $1 "  " $3 }' \
    "$expected" "$results")
nowpass=$(awk -F'\t' 'FILENAME == ARGV[1] { xp[$1] = 1; next } $2 == "pass" && ($1 in xp) { print $1 }' \
    "$expected" "$results")

status=0
if [ $update = 1 ] && grep -qE $'\t(harness: |[a-z]+: timeout: failed to run)' "$results"; then
    echo "not updating the expected list: some tests failed in the harness, not in tvmcc:"
    grep -m3 -E $'\t(harness: |[a-z]+: timeout: failed to run)' "$results" | sed 's/^/  /'
    status=1
elif [ $update = 1 ]; then
    # Rewrite this mode's list: keep header comments and entries for tests
    # not run now; replace the run ones with the current failures. On arm,
    # failures already expected on the host are not repeated.
    target="$here/expected_failures.txt"
    [ "$suites" = onnx-1.20.1 ] && target="$here/expected_failures_onnx-1.20.1.txt"
    [ "$mode" != host ] && target="$here/expected_failures_$mode.txt"
    hostexp="$WORKROOT/.hostexp"
    : > "$hostexp"
    # Failures already expected by the lists this mode inherits are not repeated.
    for e in $expfiles; do
        [ "$e" != "$target" ] && [ -f "$e" ] && sed -e 's/#.*//' "$e" | awk 'NF { print $1 }'
    done > "$hostexp"
    tmp="$target.tmp"
    {
        if [ -f "$target" ]; then
            awk '/^#/ { print; next } { exit }' "$target"
        else
            echo "# Conformance tests expected to fail ($mode): suite/test  stage: first error line"
            echo "# Regenerate with: test/conformance/run.sh$(case $mode in host) ;; arm) echo ' --arm' ;; aarch64) echo ' --aarch64' ;; *) echo " --cpu ${mode#arm-}" ;; esac) --update-expected"
        fi
        {
            [ -f "$target" ] && sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$target" |
                awk 'FILENAME == ARGV[1] { ran[$1] = 1; next } !($1 in ran)' "$list" -
            awk -F'\t' 'FILENAME == ARGV[1] { h[$1] = 1; next } $2 == "fail" && !($1 in h) { print $1 "  " $3 }' \
                "$hostexp" "$results"
        } | LC_ALL=C sort
    } > "$tmp" && mv "$tmp" "$target"
    echo "updated $target"
else
    if [ -n "$nowpass" ] && [ $build_only = 0 ]; then
        echo "now passing, remove from the list:"
        printf '  %s\n' $nowpass
    fi
    if [ -n "$unexpected" ]; then
        echo "unexpected failures:"
        printf '%s\n' "$unexpected" | sed 's/^/  /'
        status=1
    fi
fi

awk -F'\t' '{ if ($2 == "pass") p++; else f++ } END { printf "%d passed, %d failed\n", p, f }' "$results"
exit $status
