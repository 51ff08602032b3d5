#!/usr/bin/env bash
# Acceptance measurement of `tvmcc verify` (issue 20; not part of CI): runs
# `tvmcc verify MODEL --data TESTDIR -t TARGET` on every conformance test that
# test/conformance/run.sh runs in that mode and expects to pass (its suites,
# minus the tests in its expected-failure lists), and counts the results.
#
#   test/verify/acceptance.sh host|cortex-m4|aarch64 [-j N] [--filter REGEX]
#                             [--suite onnx-1.20.1] [--sample N]
#
# Host runs the suites node, pytorch-converted, pytorch-operator and simple;
# cortex-m4 and aarch64 the conformance script's default suites for them
# (pytorch-converted, pytorch-operator, simple). --suite onnx-1.20.1 runs the
# ONNX 1.20.1 node suite instead ($ONNX_1201_DIR/node, default
# ../shared/onnx-1.20.1 beside the repository); --sample N keeps the tests
# the conformance script's --sample N keeps (one in N, by checksum). Results, one line per test
# (suite/test, pass|fail, verify's first error line):
# build/verify-acceptance/MODE/results.txt. Ends with "N passed, N failed".
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ "${1:-}" = --worker ]; then
    src="$TESTDATA/$2"
    case $2 in onnx-1.20.1/*) src="$ONNX_1201_DIR/node/${2#*/}" ;; esac
    id=$2 res="$WORK/.results/${2//\//__}" log="$WORK/logs/${2//\//__}.log"
    timeout -k 5 900 "$TVMCC" verify "$src/model.onnx" --data "$src" -t "$VTARGET" \
        >"$log" 2>&1
    rc=$?
    if [ $rc = 0 ]; then
        printf '%s\tpass\t\n' "$id" > "$res"
    else
        msg=$(grep -v -e '^tvmcc verify: /' -e '^data set ' -e '^FAIL: ' -e '^  ' "$log" |
            head -1 | cut -c1-200)
        printf '%s\tfail\texit %d: %s\n' "$id" "$rc" "${msg//$src\//}" > "$res"
    fi
    exit 0
fi

mode=${1:?usage: acceptance.sh host|cortex-m4|aarch64 [-j N] [--filter REGEX]}
shift
jobs=2 filter="" suite="" sample=1
while [ $# -gt 0 ]; do
    case $1 in
        -j) jobs=$2; shift ;;
        --suite) suite=$2; shift ;;
        --sample) sample=$2; shift ;;
        --filter) filter=$2; shift ;;
        *) echo "acceptance.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
conf=$root/test/conformance
case $mode in
    host) target=c suites="node pytorch-converted pytorch-operator simple"
          exp="$conf/expected_failures.txt" ;;
    cortex-m4) target=cortex-m4 suites="pytorch-converted pytorch-operator simple"
          exp="$conf/expected_failures.txt $conf/expected_failures_arm.txt" ;;
    aarch64) target=aarch64 suites="pytorch-converted pytorch-operator simple"
          exp="$conf/expected_failures.txt $conf/expected_failures_aarch64.txt" ;;
    *) echo "acceptance.sh: unknown mode $mode" >&2; exit 2 ;;
esac
export TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
export ONNX_1201_DIR=${ONNX_1201_DIR:-$(realpath -m "$root/../shared/onnx-1.20.1")}
work_name=$mode
if [ "$suite" = onnx-1.20.1 ]; then
    suites=onnx-1.20.1 exp="$exp $conf/expected_failures_onnx-1.20.1.txt" work_name=$mode-1201
elif [ -n "$suite" ]; then
    echo "acceptance.sh: --suite takes onnx-1.20.1" >&2; exit 2
fi
export WORK=$root/build/verify-acceptance/$work_name VTARGET=$target
rm -rf "$WORK" && mkdir -p "$WORK/.results" "$WORK/logs" "$WORK/bin"
cp "$root/tvmcc" "$WORK/bin/tvmcc" && export TVMCC=$WORK/bin/tvmcc
for e in $exp; do sed -e 's/#.*//' "$e" | awk 'NF { print $1 }'; done | sort -u > "$WORK/.expected"
for s in $suites; do
    sdir=$TESTDATA/$s
    [ $s = onnx-1.20.1 ] && sdir=$ONNX_1201_DIR/node
    for d in "$sdir"/*/; do
        [ -f "$d/model.onnx" ] && printf '%s/%s\n' "$s" "$(basename "$d")"
    done
done | sort | { if [ -n "$filter" ]; then grep -E -- "$filter" || true; else cat; fi; } |
    while IFS= read -r t; do
        [ "$sample" -le 1 ] || [ $(( $(printf '%s' "$t" | cksum | cut -d' ' -f1) % sample )) = 0 ] &&
            printf '%s\n' "$t"
    done |
    awk 'FILENAME == ARGV[1] { x[$1] = 1; next } !($1 in x)' "$WORK/.expected" - > "$WORK/.tests"
echo "verify acceptance ($mode, -t $target): $(wc -l < "$WORK/.tests") tests, suites: $suites$([ "$sample" -gt 1 ] && echo ", 1 in $sample sampled")"
xargs -P "$jobs" -I{} "$0" --worker {} < "$WORK/.tests"
while IFS= read -r id; do
    f="$WORK/.results/${id//\//__}"
    if [ -s "$f" ]; then cat "$f"; else printf '%s\tfail\tno result\n' "$id"; fi
done < "$WORK/.tests" > "$WORK/results.txt"
awk -F'\t' '$2 == "fail" { print "  FAIL " $1 "  " $3 }' "$WORK/results.txt"
awk -F'\t' '{ if ($2 == "pass") p++; else f++ } END { printf "%d passed, %d failed\n", p, f }' \
    "$WORK/results.txt"
