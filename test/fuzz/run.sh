#!/usr/bin/env bash
# Runs the libFuzzer harnesses (built by `make fuzz`) for N seconds each,
# side by side.
# Each harness keeps its corpus in build/fuzz/corpus_NAME/, seeded with
# about 200 small models of the ONNX backend test suite (and the generated
# malformed corpus, when build/malformed/ exists). Inputs that crash, time
# out (10 s) or run out of memory (2 GB) are saved as
# build/fuzz/artifacts/NAME-crash-* etc.: turn each into a regression case in
# test/malformed/make_corpus.py. libFuzzer's log is build/fuzz/NAME.log.
#
#   test/fuzz/run.sh [SECONDS [NAME...]]     (default 60 s, reader compile)
#
# FUZZ_FLAGS adds libFuzzer options, e.g. FUZZ_FLAGS='-fork=1
# -ignore_crashes=1' to keep going after a finding (long runs).
#
# Prints one PASS/FAIL line per harness with executions and coverage, and
# last "N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
secs=${1:-60}
[ $# -gt 0 ] && shift
names=${*:-reader compile}
TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
pass=0 failed=0
mkdir -p build/fuzz/artifacts

# seed DIR: copies every 8th model under 16 KB (about 200) into DIR.
seed() {
    local dir=$1 i=0 f
    mkdir -p "$dir"
    while IFS= read -r f; do
        i=$((i + 1))
        [ $((i % 8)) = 0 ] || continue
        cp "$f" "$dir/seed-$(basename "$(dirname "$f")").onnx"
    done < <(find "$TESTDATA" -name model.onnx -size -16k 2>/dev/null | LC_ALL=C sort)
    if [ -d build/malformed ]; then
        find build/malformed -maxdepth 1 -name '*.onnx' -size -64k -exec cp {} "$dir/" \;
    fi
}

# The harnesses run side by side (each is one process on one core); each
# reports when all are done, in order.
declare -A before pid
for name in $names; do
    bin=build/fuzz/fuzz_$name
    corpus=build/fuzz/corpus_$name
    [ -x "$bin" ] || continue
    seed "$corpus"
    before[$name]=$(ls build/fuzz/artifacts | grep -cE "^$name-(crash|timeout|oom|leak)")
    # shellcheck disable=SC2086
    "$bin" "$corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 ${FUZZ_FLAGS:-} \
        -artifact_prefix="build/fuzz/artifacts/$name-" > "build/fuzz/$name.log" 2>&1 &
    pid[$name]=$!
done
for name in $names; do
    bin=build/fuzz/fuzz_$name
    corpus=build/fuzz/corpus_$name
    log=build/fuzz/$name.log
    if [ ! -x "$bin" ]; then
        echo "FAIL fuzz_$name: $bin not built (make build/fuzz/fuzz_$name)"
        failed=$((failed + 1))
        continue
    fi
    wait "${pid[$name]}"
    rc=$?
    # artifacts are named after their harness, so the side-by-side runs'
    # findings are told apart; slow-unit reports are not findings
    found=$(( $(ls build/fuzz/artifacts | grep -cE "^$name-(crash|timeout|oom|leak)") - ${before[$name]} ))
    [ $found -gt 0 ] && rc=1
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -z "$execs" ] && execs=$(sed -n 's/^#\([0-9]*\):* .*cov:.*/\1/p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | sed 's/cov: //')
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | sed 's/ft: //')
    info="$found findings, ${execs:-?} executions, coverage ${cov:-?} edges, ${ft:-?} features, $(ls "$corpus" | wc -l) corpus files"
    if [ $rc = 0 ]; then
        echo "PASS fuzz_$name: $secs s, $info"
        pass=$((pass + 1))
    else
        echo "FAIL fuzz_$name: exit $rc after $info; see $log and build/fuzz/artifacts/"
        grep -m 3 -E 'ERROR|SUMMARY|==[0-9]+==' "$log" | sed 's/^/    | /'
        failed=$((failed + 1))
    fi
done
echo "$pass passed, $failed failed"
[ $failed = 0 ]
