#!/bin/sh
# Unit tests (build/unit, build/sched_test, build/sched_arm_test, build/qconv_test, build/equalize_test, build/ranges_test
# and test/quantize/cle_models.sh on the models of test/quantize/make_cle_models.py), the
# requantization of the compiled integer kernels against an exact derivation (test/unit/requant.py; the
# integer Add and Mul over every input pair: test/unit/requant_add.py), golden dump tests (test/golden/run.sh) and
# the declared-intrinsic tests (test/intrin/run.sh: a made-up ISA's tile from test/intrin/toyvec.json); the
# last line adds their counts: "N passed, N failed".
root=$(cd "$(dirname "$0")/../.." && pwd)
status=0
# The schedule property test (about half of the time, one process) runs
# beside the rest; its lines are printed when it is done.
"$root/build/sched_test" > "$root/build/sched_test.log" 2>&1 &
sched_pid=$!
"$root/build/unit" > "$root/build/unit.log" 2>&1 || status=1
grep -v '^[0-9]* passed' "$root/build/unit.log"
"$root/build/sched_arm_test" > "$root/build/sched_arm_test.log" 2>&1 || status=1; grep -v '^[0-9]* passed' "$root/build/sched_arm_test.log"
"$root/build/qconv_test" > "$root/build/qconv_test.log" 2>&1 || status=1; grep -v -e '^[0-9]* passed' -e 'took the int8' "$root/build/qconv_test.log"
"$root/build/ranges_test" > "$root/build/ranges_test.log" 2>&1 || status=1; grep -v '^[0-9]* passed' "$root/build/ranges_test.log"
{ /usr/bin/python3 "$root/test/quantize/make_cle_models.py" "$root/build/cle" && "$root/build/equalize_test" "$root/build/cle"; } > "$root/build/equalize_test.log" 2>&1 || status=1; grep -v '^[0-9]* passed' "$root/build/equalize_test.log"
"$root/test/quantize/cle_models.sh" "$root"/build/cle/*.onnx > "$root/build/cle_models.log" 2>&1 || status=1; grep -v -e '^[0-9]* passed' -e '^ok ' "$root/build/cle_models.log"
/usr/bin/python3 "$root/test/unit/requant.py" --tvmcc "$root/tvmcc" --work "$root/build/requant" > "$root/build/requant.log" 2>&1 || status=1
grep -v -e '^[0-9]* passed' -e '^PASS' "$root/build/requant.log"
/usr/bin/python3 "$root/test/unit/requant_add.py" --tvmcc "$root/tvmcc" --work "$root/build/requant_add" > "$root/build/requant_add.log" 2>&1 || status=1
grep -v -e '^[0-9]* passed' -e '^PASS' "$root/build/requant_add.log"
"$root/test/golden/run.sh" > "$root/build/golden.log" 2>&1 || status=1
grep -v '^[0-9]* passed' "$root/build/golden.log"
"$root/test/intrin/run.sh" > "$root/build/intrin.log" 2>&1 || status=1
grep -v -e '^[0-9]* passed' -e '^ok ' "$root/build/intrin.log"
wait $sched_pid || status=1
grep -v '^[0-9]* passed' "$root/build/sched_test.log"
p=0 f=0
for log in "$root/build/unit.log" "$root/build/sched_test.log" "$root/build/sched_arm_test.log" "$root/build/qconv_test.log" "$root/build/equalize_test.log" "$root/build/ranges_test.log" "$root/build/cle_models.log" "$root/build/requant.log" "$root/build/requant_add.log" "$root/build/golden.log" "$root/build/intrin.log"; do
    line=$(tail -n 1 "$log")
    lp=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    lf=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    [ -n "$lp" ] || { lp=0; lf=1; status=1; }
    p=$((p + lp)); f=$((f + lf))
done
echo "$p passed, $f failed"
exit $status
