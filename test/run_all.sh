#!/usr/bin/env bash
# Everything `make test` runs, in order: dependency check, unit/golden tests
# (test/unit/run.sh, when present), bad-input tests, conformance on the host
# (all suites), the emitted C's warning check (test/warnings/run.sh), on
# Cortex-M4 and AArch64 under qemu (model suites), the torchvision
# check and a determinism check. Each sub-suite's output goes to the terminal
# and to build/test-logs/NAME.log; its last line "N passed, N failed" is
# added to the total. The last line printed here is the total, in the same
# form, followed by ", N skipped": the summary before it lists every SKIP
# line a sub-suite printed (a check or case that could not run here, with
# the reason). The exit status is 1 if any sub-suite had an unexpected
# failure.
#
#   test/run_all.sh [-j N] [--only NAME,...]
#     -j N     parallel jobs for the conformance runs, and suites run at
#              once between pool_begin and pool_end (default 2)
#     --only   run just these sub-suites (skips the deps step): unit
#              bad_input conformance-host conformance-O0 opt-levels-agree
#              conformance-onnx-1.20.1 emitted-c-warnings conformance-arm
#              conformance-aarch64 conformance-1201-arm conformance-1201-aarch64
#              conformance-x86 arm-intrinsics c-target torchvision exporter_patterns
#              qdq qdq-m0-float-free qdq-build x86dw m4q quantize quantize-trained control_fold
#              strings seq_io transformer types tune verify report-html x86_special_values nchwc_layout grouped winograd pool threads determinism malformed conformance-asan fuzz
#              fresh (the pool_begin ... pool_end suites run two at a time)
#
# TVMCC_TEST_CPU_FLAGS="avx2 fma ..." makes the CPU-dependent suites act as
# on a host with just those /proc/cpuinfo flags (test/hostcpu.sh).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=2 only=""
while [ $# -gt 0 ]; do
    case $1 in
        -j) jobs=${2:?}; shift ;;
        -j*) jobs=${1#-j} ;;
        --only) only=${2:?}; shift ;;
        *) echo "usage: test/run_all.sh [-j N] [--only NAME,...]" >&2; exit 2 ;;
    esac
    shift
done
TVMCC=${TVMCC:-./tvmcc}
logs=build/test-logs
mkdir -p "$logs"
total_pass=0 total_fail=0 status=0 summary="" skipped="" n_skipped=0

# run_suite NAME COMMAND...: runs one sub-suite and adds its counts. Between
# pool_begin and pool_end (suites of one process each, independent of one
# another) it starts the suite in the background instead, at most $jobs at
# a time, its output going to its log only; pool_end prints each one's
# output and counts it, in the listed order.
pool=0 pool_names=()
declare -A pool_pid pool_start
run_suite() {
    local name=$1 start
    shift
    case ",${only:-$name}," in *",$name,"*) ;; *) return 0 ;; esac
    if [ $pool = 1 ]; then
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        pool_start[$name]=$(date +%s)
        rm -f "$logs/$name.rc" "$logs/$name.end"
        (
            "$@" > "$logs/$name.log" 2>&1
            echo $? > "$logs/$name.rc"
            date +%s > "$logs/$name.end"
        ) &
        pool_pid[$name]=$!
        pool_names+=("$name")
        echo "=== $name: $* (started beside others; its output follows when done)"
        return 0
    fi
    echo "=== $name: $*"
    start=$(date +%s)
    "$@" 2>&1 | tee "$logs/$name.log"
    count_suite "$name" "${PIPESTATUS[0]}" $(( $(date +%s) - start ))
}
pool_begin() { pool=1; }
pool_end() {
    local name
    pool=0
    for name in ${pool_names[@]+"${pool_names[@]}"}; do
        wait "${pool_pid[$name]}"
        echo "=== $name (output)"
        cat "$logs/$name.log"
        count_suite "$name" "$(cat "$logs/$name.rc" 2>/dev/null || echo 1)" \
            $(( $(cat "$logs/$name.end" 2>/dev/null || date +%s) - ${pool_start[$name]} ))
    done
    pool_names=()
}

# count_suite NAME STATUS SECONDS: adds the counts of the suite's log.
count_suite() {
    local name=$1 rc=$2 secs=$3 last p f s
    last=$(tail -n 1 "$logs/$name.log")
    p=$(printf '%s\n' "$last" | sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1/p')
    f=$(printf '%s\n' "$last" | sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\2/p')
    if [ -z "$p" ]; then
        p=0 f=1
        echo "$name: no \"N passed, N failed\" line; counted as one failure"
        rc=1
    fi
    # every SKIP line of the suite, for the summary
    while IFS= read -r s; do
        s=${s#SKIP }
        skipped="$skipped  $name: ${s#"$name: "}
"
        n_skipped=$((n_skipped + 1))
    done < <(grep -a '^SKIP ' "$logs/$name.log")
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    [ "$rc" = 0 ] || status=1
    summary="$summary$(printf '  %-22s %5d passed %5d failed  %s  (%ds)' "$name" "$p" "$f" \
        "$([ "$rc" = 0 ] && echo ok || echo UNEXPECTED)" "$secs")
"
}

# Compiles three models twice into different directories; the outputs (and
# messages) must be byte-identical.
determinism() {
    local d=build/determinism pass=0 failed=0 m name a b
    rm -rf "$d" && mkdir -p "$d"
    /usr/bin/python3 test/models/make_demo.py "$d/demo" >/dev/null
    for m in "$d/demo/model.onnx" \
             /usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d/model.onnx \
             /usr/share/libonnx-testdata/data/node/test_softmax_example/model.onnx; do
        name=$(basename "$(dirname "$m")")
        for a in 1 2; do
            timeout 120 "$TVMCC" "$m" -o "$d/$name.$a" > "$d/$name.$a.log" 2>&1
            echo "exit $?" >> "$d/$name.$a.log"
        done
        if ! grep -q '^exit 0$' "$d/$name.1.log"; then
            echo "FAIL determinism $name: compile failed: $(head -1 "$d/$name.1.log")"
            failed=$((failed + 1))
        elif b=$(diff -r "$d/$name.1" "$d/$name.2" 2>&1 && diff "$d/$name.1.log" "$d/$name.2.log" 2>&1); then
            echo "PASS determinism $name"
            pass=$((pass + 1))
        else
            echo "FAIL determinism $name: outputs differ: $(printf '%s' "$b" | head -1)"
            failed=$((failed + 1))
        fi
    done
    echo "$pass passed, $failed failed"
    [ $failed = 0 ]
}

# The optimizing passes must not change results: the tests passing at -O0
# and at the default level are the same set.
opt_levels_agree() {
    local a=build/conformance/host/results.txt b=build/conformance-O0/host/results.txt
    if [ ! -f "$a" ] || [ ! -f "$b" ]; then
        echo "FAIL opt-levels: missing $a or $b"
        echo "0 passed, 1 failed"
        return 1
    fi
    if diff <(awk -F'\t' '$2 == "pass" {print $1}' "$a" | sort) \
            <(awk -F'\t' '$2 == "pass" {print $1}' "$b" | sort) > build/opt-levels.diff; then
        echo "PASS opt-levels: $(awk -F'\t' '$2 == "pass"' "$a" | wc -l) tests pass at -O2 and at -O0"
        echo "1 passed, 0 failed"
    else
        echo "FAIL opt-levels: pass sets differ (< default, > -O0):"
        head -20 build/opt-levels.diff
        echo "0 passed, 1 failed"
        return 1
    fi
}

# make test has run it before building (TVMCC_DEPS_CHECKED=1)
[ -z "$only" ] && [ -z "${TVMCC_DEPS_CHECKED:-}" ] && echo "=== deps: scripts/deps.sh test"
if [ -z "$only" ] && [ -z "${TVMCC_DEPS_CHECKED:-}" ] && ! scripts/deps.sh test; then
    echo "deps: scripts/deps.sh test failed; continuing, tests needing missing tools fail or skip"
fi
if [ -x test/unit/run.sh ]; then
    run_suite unit test/unit/run.sh
fi
run_suite bad_input test/bad_input/run.sh
run_suite conformance-host test/conformance/run.sh --suite all -j "$jobs"
run_suite conformance-O0 env TVMCC_FLAGS=-O0 CONFORMANCE_WORK="$root/build/conformance-O0" \
    test/conformance/run.sh --suite all -j "$jobs"
run_suite opt-levels-agree opt_levels_agree
# The ONNX 1.20.1 node suite (opsets up to 25), read from ../shared/onnx-1.20.1
# or $ONNX_1201_DIR; SKIP where absent. Its own expected failures:
# test/conformance/expected_failures_onnx-1.20.1.txt.
run_suite conformance-onnx-1.20.1 env CONFORMANCE_WORK="$root/build/conformance-1201" \
    test/conformance/run.sh --suite onnx-1.20.1 --new-only -j "$jobs"
# The emitted C of the host run under clang with the strict warning flags,
# a sample under arm-none-eabi-gcc -Os (Cortex-M0), the runtime on all three
# (gcc builds every output with the same flags in conformance-host itself).
run_suite emitted-c-warnings test/warnings/run.sh -j "$jobs"
run_suite conformance-arm env TVMCC_FLAGS="-t cortex-m4" test/conformance/run.sh --arm -j "$jobs"
# AArch64 under qemu-user, model suites (about 90 s at -j 2; needs libc6-dev-arm64-cross)
run_suite conformance-aarch64 test/conformance/run.sh --aarch64 -j "$jobs"
# One in 8 of the ONNX 1.20.1 node tests on Cortex-M4 and AArch64 under qemu
run_suite conformance-1201-arm env TVMCC_FLAGS="-t cortex-m4" CONFORMANCE_WORK="$root/build/conformance-1201" \
    test/conformance/run.sh --arm --suite onnx-1.20.1 --sample 8 -j "$jobs"
run_suite conformance-1201-aarch64 env CONFORMANCE_WORK="$root/build/conformance-1201" \
    test/conformance/run.sh --aarch64 --suite onnx-1.20.1 --sample 8 -j "$jobs"
# The best x86 target this CPU runs (AVX-512, else AVX2) with its intrinsic
# kernels, built with -march=native: one test in 3 of every suite. The
# AVX-512 target's output is built (gcc with its -mavx512* flags, the
# warning flags, -Werror) even where the CPU cannot run it.
. "$root/test/hostcpu.sh"
conformance_x86() {
    local t="" p=0 f=0 f2 rc=0 last
    if host_has avx512f; then t=x86-64-avx512
    elif host_has avx2; then t=x86-64-avx2
    fi
    if [ -z "$t" ]; then
        echo "SKIP conformance-x86: runs: this CPU has neither AVX-512F nor AVX2"
    else
        env TVMCC_FLAGS="-t $t" CC_HOST="gcc -march=native" \
            CONFORMANCE_WORK="$root/build/conformance-x86" \
            test/conformance/run.sh --suite all --sample 3 -j "$jobs" | tee "$logs/conformance-x86.run"
        rc=${PIPESTATUS[0]}
        last=$(tail -n 1 "$logs/conformance-x86.run")
        p=${last%% passed*} f=${last#*passed, } f=${f%% failed*}
    fi
    if [ "$t" != x86-64-avx512 ]; then
        echo "SKIP conformance-x86: -t x86-64-avx512 runs: this CPU has no AVX-512F (the sample is built only)"
        env TVMCC_FLAGS="-t x86-64-avx512" \
            CC_HOST="gcc -mavx512f -mavx512vl -mavx512bw -mavx512dq -mfma" \
            CONFORMANCE_WORK="$root/build/conformance-x86-build" \
            test/conformance/run.sh --suite all --sample 3 --build-only -j "$jobs" | tee "$logs/conformance-x86.build"
        [ "${PIPESTATUS[0]}" = 0 ] || rc=1
        last=$(tail -n 1 "$logs/conformance-x86.build")
        p=$((p + ${last%% passed*})) f2=${last#*passed, } f=$((f + ${f2%% failed*}))
    fi
    echo "$p passed, $f failed"
    return $rc
}
run_suite conformance-x86 conformance_x86
# torchvision's CNNs exported and checked (build/models: winograd reads
# resnet18 from there)
run_suite torchvision test/models/check_torchvision.sh
# Generated QDQ models (quantized here, calibrated in onnxruntime-node) on the
# host, Cortex-M4, Cortex-M0 and AArch64 against onnxruntime: within 1 LSB, 99% exact
# (test/qdq/run.sh; SKIP without onnx/numpy or onnxruntime-node)
# Then the bitexact step: the int8/uint8 models' outputs on host (-t c),
# -t cortex-m4 built on the host, x86-64-avx2/avx512 (where the CPU runs
# them) and every target that ran them (cortex-m4 under qemu) byte-equal.
run_suite qdq test/qdq/run.sh --targets "${QDQ_TARGETS:-host,cortex-m4,cortex-m0,aarch64}" -j "$jobs"
# No soft-float call nor 64-bit division reachable from an integer kernel on
# Cortex-M0 (objdump of model.c built with -fno-inline; needs the qdq models)
run_suite qdq-m0-float-free /usr/bin/python3 test/qdq/m0_float_free.py --tvmcc ./tvmcc \
    --models build/qdq/models --work build/qdq/m0
# The integer code of every target built warning-free (-Werror -Wconversion)
# with the target's compiler: Cortex-M7, Cortex-M55 (no MVE in qemu 7.2) and
# aarch64-dotprod are only built (test/qdq/build_targets.sh)
run_suite qdq-build test/qdq/build_targets.sh
# The x86 int8 kernels' vector forms (depthwise rows, copies, epilogues,
# QuantizeLinear) byte-equal to the c target's (test/x86dw/run.sh)
run_suite x86dw test/x86dw/run.sh
# The Cortex-M float QuantizeLinear form (VCVTR, QADD, SSAT) on special
# inputs, host and Cortex-M4 under qemu via tvmcc verify (test/m4q/run.sh)
run_suite m4q test/m4q/run.sh
# tvmcc quantize (issue 18): the QDQ models it writes from the float models
# above (each range method, int8/uint8/int16, per tensor) against
# onnxruntime on the host and (a sample) Cortex-M4 under qemu; determinism;
# its errors (test/quantize/run.sh, about 3 minutes)
run_suite quantize test/quantize/run.sh -j "$jobs"
# tvmcc quantize on trained models from npm packages (openWakeWord's speech
# embedding, PaddleOCR's text-direction classifier) with speech from
# espeak-ng and text rendered by ImageMagick: the min/max baseline, each
# range method in onnxruntime and in tvmcc's int8 build (within 1 dB), the
# speech embedding at 25 dB or more (test/quantize/trained.sh; SKIP without
# the npm registry or the tools; about 6 minutes)
run_suite quantize-trained test/quantize/trained.sh
# The suites from here to pool_end are one process each and independent:
# they run two at a time (-j), the longest first.
pool_begin
run_suite exporter_patterns test/models/exporter_patterns.sh
# 3x3 convs as Winograd F(2x2, 3x3) on x86-64-avx2 (issue 19)
run_suite winograd test/winograd/run.sh
# grouped convs through the packed tiles, -t native (issue 19)
run_suite grouped test/grouped/run.sh
# --report-html pages in headless chromium, --profile, progress (issue 20)
run_suite report-html test/report/run.sh
# tvmcc verify on host, cortex-m4 and aarch64, --runner, --profile (issue 20)
run_suite verify test/verify/run.sh
# x86 max pools in vectors, NaN included (issue 19)
run_suite pool test/pool/run.sh
# tvmcc tune on a small conv+matmul model and --tuning-log (issue 5)
run_suite tune test/models/tune.sh
# the x86 templates' parallel loops: same bytes at 1, 2 and 3 threads (issue 19)
run_suite threads test/threads/run.sh
run_suite nchwc_layout test/models/nchwc_layout.sh
# Where each Arm intrinsic must (and must not) appear in the emitted C and
# the objects (SMLAD on M4/M7, NEON on AArch64, MVE on M55; none on c,
# x86 or M0), all built with -Werror.
run_suite arm-intrinsics test/arm/intrin_check.sh
run_suite c-target test/ctarget/run.sh
run_suite x86_special_values test/models/x86_special_values.sh
# Ifs on shapes folded before inference, run-time Ifs as Where, --input-value;
# host, Cortex-M4 and AArch64 against onnxruntime (about 10 s)
run_suite control_fold test/models/control_fold.sh
# Transformer blocks: GPT (opsets 18, 20) and Llama-style (Attention,
# RMSNormalization, RotaryEmbedding at 23, KV cache at 24) on the host against
# onnxruntime, built warning-free for Cortex-M4 and AArch64 (about 15 s)
run_suite transformer test/transformer/run.sh
run_suite strings test/models/strings.sh
# Sequence and optional graph inputs/outputs (--sequence-length,
# --input-shape 'x[K]=...', --optional-absent) on the host
run_suite seq_io test/models/seq_io.sh
# The ONNX 1.20 element types (float8, float4e2m1, int4/uint4, int2/uint2)
# through data-movement ops and the float8e8m0 rounding modes (test/types)
run_suite types test/types/run.sh
run_suite determinism determinism
pool_end
# malformed-input corpus under ASan+UBSan (test/malformed/run.sh, issue 6),
# beside make demo in a fresh Debian 12 minbase root with git and make only,
# and the test set resolving there (test/fresh/run.sh; needs root and
# network access to the Debian mirror; SKIP otherwise)
pool_begin
run_suite fresh test/fresh/run.sh
run_suite malformed test/malformed/run.sh
pool_end
# tvmcc and the emitted C both under ASan+UBSan (build/asan/tvmcc is built by
# the malformed suite's run.sh); the sanitized conformance subset.
run_suite conformance-asan env ASAN_OPTIONS=detect_leaks=0 TVMCC="$root/build/asan/tvmcc" \
    CC_HOST='gcc -fsanitize=address,undefined -fno-sanitize-recover=all' \
    CONFORMANCE_WORK="$root/build/conformance-asan" \
    test/conformance/run.sh --suite pytorch-converted -j "$jobs"
# 60 s of each libFuzzer harness (make fuzz builds them with clang).
run_suite fuzz sh -c 'make -s -j"$0" build/fuzz/fuzz_reader build/fuzz/fuzz_compile && test/fuzz/run.sh 60' "$jobs"

echo "=== summary"
printf '%s' "$summary"
if [ -n "$skipped" ]; then
    echo "skipped ($n_skipped), with the reasons:"
    printf '%s' "$skipped"
fi
echo "$total_pass passed, $total_fail failed, $n_skipped skipped"
exit $status
