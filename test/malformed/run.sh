#!/usr/bin/env bash
# Malformed-input corpus: every model make_corpus.py writes into
# build/malformed/ is run through tvmcc built with ASan and UBSan
# (build/asan/tvmcc, `make build/asan/tvmcc`) with a 10 s limit. Each case
# must exit 1 with exactly one line of output that names the model file, no
# sanitizer report (leaks included), and leave no output directory and no
# temporary directory behind. A case named ok_NAME (or ok_NAME_TARGET, for
# the targets named at its end: c, x86_64_avx512, cortex_m4...) is a valid
# model that fuzzing once broke: it must compile (exit 0) with no sanitizer
# report and write its output directory.
#
#   test/malformed/run.sh [-v] [NAME_REGEX]
#
# Environment: TVMCC (default build/asan/tvmcc, built here when missing or
# stale), PYTHON, CASE_TIMEOUT (default 10). Prints PASS/FAIL per case, the
# slowest case, and last "N passed, N failed"; exits 1 if any case failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
limit=${CASE_TIMEOUT:-10}
verbose=0 filter=""
for a in "$@"; do
    case $a in
        -v) verbose=1 ;;
        *) filter=$a ;;
    esac
done
cd "$root"
if [ -z "${TVMCC:-}" ]; then
    TVMCC=$root/build/asan/tvmcc
    if ! make -s -j"$(nproc 2>/dev/null || echo 2)" build/asan/tvmcc >build/malformed-make.log 2>&1; then
        echo "malformed: make build/asan/tvmcc failed:"
        tail -5 build/malformed-make.log
        echo "0 passed, 1 failed"
        exit 1
    fi
fi
dir=$root/build/malformed
scratch=$dir/out
rm -rf "$dir" && mkdir -p "$scratch"
if ! "$PYTHON" "$here/make_corpus.py" "$dir" >/dev/null; then
    echo "malformed: make_corpus.py failed"
    echo "0 passed, 1 failed"
    exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=86:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=87}
pass=0 failed=0 slowest=0 slowest_name=""

while IFS= read -r model; do
    rel=${model#"$dir"/}
    name=${rel%.onnx}
    name=${name//\//_}
    [ -n "$filter" ] && ! printf '%s' "$name" | grep -qE -- "$filter" && continue
    out=$scratch/$name
    start=$(date +%s%N)
    # run from the model's directory so that the message can be matched on
    # the path as given
    targs=() want=1
    case $name in
        ok_*)
            want=0
            for t in c x86_64_avx512 x86_64_avx2 x86_64 cortex_m4 cortex_m0 cortex_m7 cortex_m55 aarch64; do
                case $name in *_"$t") targs=(-t "${t//_/-}"); break ;; esac
            done ;;
    esac
    msg=$(cd "$(dirname "$model")" && timeout -k 2 "$limit" "$TVMCC" "$(basename "$model")" \
          -o "$out" "${targs[@]}" 2>&1 </dev/null)
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    if [ $ms -gt $slowest ]; then slowest=$ms slowest_name=$name; fi
    lines=$(printf '%s' "$msg" | grep -c '')
    why=""
    if printf '%s' "$msg" | grep -qE 'Sanitizer|runtime error:|==[0-9]+==ERROR'; then
        why="sanitizer report"
    elif [ $rc = 124 ] || [ $rc = 137 ]; then
        why="timeout (${limit} s)"
    elif [ $rc != $want ]; then
        why="exit $rc, want $want"
    elif [ $want = 0 ]; then
        ls "$out"/*.c >/dev/null 2>&1 || why="no C written into $out"
    elif [ "$lines" != 1 ]; then
        why="$lines lines of output, want 1"
    elif ! printf '%s' "$msg" | grep -qF -- "$(basename "$model")"; then
        why="message does not name the file"
    elif [ -e "$out" ]; then
        why="output directory left behind"
    elif ls -A "$scratch" | grep -q '^\.tvmcc-tmp'; then
        why="temporary directory left behind"
        rm -rf "$scratch"/.tvmcc-tmp*
    fi
    if [ -z "$why" ]; then
        pass=$((pass + 1))
        echo "PASS $name (${ms} ms)"
        [ $verbose = 1 ] && printf '%s\n' "$msg" | sed 's/^/    | /'
    else
        failed=$((failed + 1))
        echo "FAIL $name: $why (${ms} ms)"
        printf '%s\n' "$msg" | head -8 | sed 's/^/    | /'
    fi
    rm -rf "$out"
done < <(find "$dir" -name '*.onnx' -not -path "$scratch/*" | LC_ALL=C sort)

echo "slowest: $slowest_name ${slowest} ms"
echo "$pass passed, $failed failed"
[ $failed = 0 ]
