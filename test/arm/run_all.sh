#!/usr/bin/env bash
# `make test-arm-all`: the conformance suites on every Arm target.
#
#   test/arm/run_all.sh [-j N] [--m0-sample N]
#
# Runs test/conformance/run.sh for Cortex-M4 (mps2-an386), Cortex-M7
# (mps2-an500), Cortex-M0 (Armv6-M build on mps2-an385; soft float is slow, so
# one test in --m0-sample, default 1 = all), Cortex-M55 (build only: the tests
# do not run MVE code) and AArch64 (qemu-aarch64), each with its default
# suites (pytorch-converted, pytorch-operator, simple). Prints each run's
# summary, the time it took and, as the last line, the total
# "N passed, N failed". Exits 1 if any run had an unexpected failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
jobs=2 m0_sample=1
while [ $# -gt 0 ]; do
    case $1 in
        -j) jobs=${2:?}; shift ;;
        -j*) jobs=${1#-j} ;;
        --m0-sample) m0_sample=${2:?}; shift ;;
        *) echo "usage: test/arm/run_all.sh [-j N] [--m0-sample N]" >&2; exit 2 ;;
    esac
    shift
done

logs="$root/build/test-logs"
mkdir -p "$logs"
pass=0 fail=0 status=0 table=""
for run in "m4:--cpu m4" "m7:--cpu m7" "m0:--cpu m0 --sample $m0_sample" "m55:--cpu m55" "aarch64:--aarch64"; do
    name=${run%%:*}
    start=$(date +%s)
    echo "=== $name: test/conformance/run.sh ${run#*:} -j $jobs"
    "$root/test/conformance/run.sh" ${run#*:} -j "$jobs" 2>&1 | tee "$logs/arm-$name.log" | grep -v '^  '
    rc=${PIPESTATUS[0]}
    secs=$(( $(date +%s) - start ))
    last=$(tail -1 "$logs/arm-$name.log")
    if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        pass=$((pass + BASH_REMATCH[1])); fail=$((fail + BASH_REMATCH[2]))
    else
        fail=$((fail + 1)); rc=1
    fi
    [ "$rc" = 0 ] || status=1
    table="$table$(printf '%-8s %-32s %5ss  %s' "$name" "$last" "$secs" "$([ "$rc" = 0 ] && echo ok || echo UNEXPECTED)")"$'\n'
done
echo "=== summary (failures include expected ones; UNEXPECTED marks a run with others)"
printf '%s' "$table"
echo "$pass passed, $fail failed"
exit $status
