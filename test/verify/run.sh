#!/usr/bin/env bash
# tvmcc verify (issue 20): step `verify` of test/run_all.sh.
#
#   test/verify/run.sh
#
# 1. A sample of conformance models (SAMPLE below) verifies (exit 0, every
#    output "pass") on the host, on cortex-m4 (qemu-system-arm) and on
#    aarch64 (qemu-aarch64); each table shows the run's time or instruction
#    count.
# 2. A corrupted expected output (one element changed) exits 1 naming the
#    output and the element; an expected output of another shape or type
#    exits 1 with one line naming the file and the output.
# 3. --runner with test/verify/qemu_runner.sh (host and cortex-m4) gives the
#    same table; a runner that fails makes verify exit 1.
# 4. Usage errors exit 2; a missing DIR, a data set without its input_K.pb
#    and a missing qemu (empty PATH) exit 1 with one line.
# 5. --profile writes JSON with one entry per kernel of NAME.json, in its
#    order (a model of 5 kernels at -O0), for the host (ns) and cortex-m4 (instructions).
# 6. Progress: none when stderr is not a terminal, a line when it is.
# 7. Cleanup: no tvmcc-verify-* directory is left in TMPDIR after passing,
#    failing and interrupted (SIGINT) runs.
# Prints PASS/FAIL lines, SKIP for what this machine cannot run, and last
# "N passed, N failed".
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
work=$root/build/verify
rm -rf "$work" && mkdir -p "$work/tmp"
export TMPDIR=$work/tmp
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ $fail = 0 ]; exit $?; }

if [ ! -x "$TVMCC" ]; then bad "tvmcc not built ($TVMCC)"; finish; fi
if [ ! -d "$TESTDATA/node" ]; then
    echo "SKIP verify: no ONNX test data in $TESTDATA (scripts/deps.sh test)"
    finish
fi
cp "$TVMCC" "$work/tvmcc" && tv=$work/tvmcc

# no temporary directory of tvmcc verify left behind
no_leftovers() {
    if ls "$TMPDIR" | grep -q '^tvmcc-verify-'; then
        bad "cleanup after $1: $(ls "$TMPDIR" | grep '^tvmcc-verify-' | head -1) left in TMPDIR"
        rm -rf "$TMPDIR"/tvmcc-verify-*
    else
        ok "cleanup after $1"
    fi
}

# A sample of conformance tests: convolutions, matrix products, pooling,
# integer and bool outputs, several data sets, several inputs and outputs.
SAMPLE="node/test_add node/test_conv_with_strides_padding node/test_gemm_default_matrix_bias
node/test_maxpool_2d_pads node/test_argmax_default_axis_example node/test_less
node/test_split_equal_parts_1d pytorch-converted/test_Conv2d pytorch-converted/test_Linear
pytorch-operator/test_operator_add_broadcast simple/test_expand_shape_model1"

# verify_ok LABEL TARGET TEST [options]: exit 0, every row "pass", a time column
verify_ok() {
    local label=$1 target=$2 t=$3 log
    shift 3
    log=$work/${label//[\/ ]/_}.log
    "$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" -t "$target" "$@" >"$log" 2>&1
    local rc=$?
    if [ $rc != 0 ]; then
        bad "$label: exit $rc: $(grep -v '^tvmcc verify: /' "$log" | head -2 | tr '\n' ' ')"
    elif ! grep -q '^PASS: ' "$log" || grep -q ' FAIL$' "$log"; then
        bad "$label: no PASS line ($log)"
    elif ! grep -Eq ' (us|ms|s|insns)( +[0-9]+)?  pass$' "$log"; then
        bad "$label: no time or instruction count in the table ($log)"
    else
        ok "$label"
    fi
}

have() { command -v "$1" >/dev/null 2>&1; }
targets="c"
if have arm-none-eabi-gcc && have qemu-system-arm; then targets="$targets cortex-m4"
else echo "SKIP verify cortex-m4: arm-none-eabi-gcc or qemu-system-arm missing"; fi
if have aarch64-linux-gnu-gcc && have qemu-aarch64; then targets="$targets aarch64"
else echo "SKIP verify aarch64: aarch64-linux-gnu-gcc or qemu-aarch64 missing"; fi

# ---- 1. the sample on each target
for target in $targets; do
    for t in $SAMPLE; do
        verify_ok "$target $t" "$target" "$t"
    done
done
no_leftovers "the sample runs"

# estimated Cortex-M4 cycles (the m4est plugin, embedded in tvmcc) beside
# the instruction count: at least one cycle per instruction, at most a few
if [[ " $targets " == *" cortex-m4 "* ]]; then
    t=pytorch-converted/test_Conv2d
    "$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" -t cortex-m4 >"$work/est.log" 2>&1
    row=$(grep -E ' insns +[0-9]+  pass$' "$work/est.log" | head -1)
    insns=$(echo "$row" | sed -n 's/.* \([0-9][0-9]*\) insns  *[0-9]*  pass$/\1/p')
    cyc=$(echo "$row" | sed -n 's/.* insns  *\([0-9][0-9]*\)  pass$/\1/p')
    if grep -q 'M4 cycles (est.)' "$work/est.log" && [ -n "$insns" ] && [ -n "$cyc" ] &&
            [ "$cyc" -ge "$insns" ] && [ "$cyc" -le $((insns * 6)) ]; then
        ok "cortex-m4: estimated cycles $cyc for $insns instructions"
    else
        bad "cortex-m4: no plausible cycle estimate (${cyc:-none} for ${insns:-?} instructions; $work/est.log)"
    fi
    # a qemu without plugin support: the run goes on without the estimate
    mkdir -p "$work/noplugin"
    printf '#!/bin/sh\nfor a in "$@"; do [ "$a" = -plugin ] && exit 1; done\nexec %s "$@"\n' \
        "$(command -v qemu-system-arm)" > "$work/noplugin/qemu-system-arm"
    chmod +x "$work/noplugin/qemu-system-arm"
    PATH=$work/noplugin:$PATH "$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" \
        -t cortex-m4 >"$work/noplugin.log" 2>&1
    if [ $? = 0 ] && grep -q '^PASS: ' "$work/noplugin.log" &&
            ! grep -q 'M4 cycles' "$work/noplugin.log"; then
        ok "cortex-m4: a qemu without plugins verifies without the estimate"
    else
        bad "cortex-m4 with a qemu that rejects -plugin: $(tail -2 "$work/noplugin.log" | tr '\n' ' ')"
    fi
fi

# progress: nothing on stderr when it is not a terminal; a progress line
# when it is (script(1) gives the run a pseudo-terminal) and the run takes
# over two seconds (ir/progress.h; a runner that sleeps 3 s first)
t=node/test_add
"$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" >/dev/null 2>"$work/quiet.err"
if [ $? = 0 ] && [ ! -s "$work/quiet.err" ]; then
    ok "no progress output when stderr is not a terminal"
else
    bad "stderr of a passing run is not empty: $(head -c 200 "$work/quiet.err")"
fi
if have script; then
    script -qec "'$tv' verify '$TESTDATA/$t/model.onnx' --data '$TESTDATA/$t' --runner 'sleep 3; exec' >/dev/null" \
        /dev/null >"$work/tty.out" 2>&1
    if grep -q 'tvmcc verify: data set 0/1' "$work/tty.out"; then
        ok "progress on stderr when it is a terminal"
    else
        bad "no progress line on a terminal: $(head -c 200 "$work/tty.out" | tr -d '\r')"
    fi
else
    echo "SKIP verify progress on a terminal: script(1) missing"
fi

# ---- 2. corrupted expected outputs
if "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    src=$TESTDATA/node/test_conv_with_strides_padding
    mkdir -p "$work/bad_value" "$work/bad_shape" "$work/bad_type"
    for d in bad_value bad_shape bad_type; do cp -r "$src/test_data_set_0" "$work/$d/"; done
    "$PYTHON" - "$work" <<'EOF'
import sys, numpy as np
from onnx import numpy_helper, TensorProto
w = sys.argv[1]
def load(p):
    t = TensorProto(); t.ParseFromString(open(p, 'rb').read()); return t
p = w + '/bad_value/test_data_set_0/output_0.pb'
t = load(p); a = numpy_helper.to_array(t).copy()
a.flat[5] += 1.0
open(p, 'wb').write(numpy_helper.from_array(a, t.name).SerializeToString())
p = w + '/bad_shape/test_data_set_0/output_0.pb'
t = load(p); a = numpy_helper.to_array(t).reshape(-1)
open(p, 'wb').write(numpy_helper.from_array(a, t.name).SerializeToString())
p = w + '/bad_type/test_data_set_0/output_0.pb'
t = load(p); a = numpy_helper.to_array(t).astype(np.int64)
open(p, 'wb').write(numpy_helper.from_array(a, t.name).SerializeToString())
EOF
    for target in $targets; do
        "$tv" verify "$src/model.onnx" --data "$work/bad_value" -t $target >"$work/bad_value.out" \
            2>"$work/bad_value.err"
        rc=$?
        # element 5 of y [1,1,4,3] is [0,0,1,2]
        if [ $rc = 1 ] && grep -q "output 'y' differs in 1 of 12 elements; worst: element 5 \[0,0,1,2\]" \
            "$work/bad_value.err" && grep -q '^FAIL: 0 of 1 output' "$work/bad_value.out"; then
            ok "corrupted expected value ($target): exit 1 naming output y, element 5"
        else
            bad "corrupted expected value ($target): exit $rc: $(cat "$work/bad_value.err")"
        fi
    done
    for d in bad_shape bad_type; do
        "$tv" verify "$src/model.onnx" --data "$work/$d" >"$work/$d.out" 2>"$work/$d.err"
        rc=$?
        if [ $rc = 1 ] && [ "$(wc -l < "$work/$d.err")" = 1 ] &&
            grep -q "$d/test_data_set_0/output_0.pb: output 'y' is float32 \[1,1,4,3\], the file holds" \
                "$work/$d.err"; then
            ok "expected output of another ${d#bad_}: exit 1, one line naming the file and y"
        else
            bad "expected output of another ${d#bad_}: exit $rc: $(cat "$work/$d.err")"
        fi
    done
else
    echo "SKIP verify corrupted outputs: python3 onnx/numpy missing"
fi
no_leftovers "failing runs"

# ---- 3. --runner
t=pytorch-converted/test_Conv2d
for target in $targets; do
    verify_ok "--runner qemu_runner.sh ($target)" "$target" "$t" --runner "$here/qemu_runner.sh"
done
"$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" --runner 'sh -c "exit 3"' \
    >"$work/runner_fail.out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q 'exited with status 3' "$work/runner_fail.out"; then
    ok "a failing runner: exit 1"
else
    bad "a failing runner: exit $rc: $(head -2 "$work/runner_fail.out")"
fi
# a runner that writes nothing
"$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" --runner true >"$work/runner_none.out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "no output_K.bin" "$work/runner_none.out"; then
    ok "a runner writing no outputs: exit 1"
else
    bad "a runner writing no outputs: exit $rc: $(head -2 "$work/runner_none.out")"
fi

# ---- 4. usage and data errors
m=$TESTDATA/node/test_add/model.onnx
usage_case() {
    local label=$1
    shift
    "$tv" verify "$@" >"$work/usage.out" 2>&1
    local rc=$?
    if [ $rc = 2 ]; then ok "usage error exits 2: $label"; else bad "usage error $label: exit $rc"; fi
}
usage_case "no model" --data "$TESTDATA/node/test_add"
usage_case "no --data" "$m"
usage_case "unknown option" "$m" --data "$TESTDATA/node/test_add" --frobnicate
usage_case "bad --rtol" "$m" --data "$TESTDATA/node/test_add" --rtol abc
usage_case "--runs 0" "$m" --data "$TESTDATA/node/test_add" --runs 0
usage_case "unknown target" "$m" --data "$TESTDATA/node/test_add" -t no-such-target
error_case() {
    local label=$1 want=$2
    shift 2
    "$@" >"$work/err.out" 2>"$work/err.err"
    local rc=$?
    if [ $rc = 1 ] && [ "$(wc -l < "$work/err.err")" = 1 ] && grep -q -- "$want" "$work/err.err"; then
        ok "$label: exit 1, one line"
    else
        bad "$label: exit $rc: $(head -3 "$work/err.err")"
    fi
}
error_case "missing DIR" "no-such-dir: not a directory" "$tv" verify "$m" --data "$work/no-such-dir"
mkdir -p "$work/no_input/test_data_set_0"
cp "$TESTDATA/node/test_add/test_data_set_0/input_0.pb" "$TESTDATA/node/test_add/test_data_set_0/output_0.pb" \
    "$work/no_input/test_data_set_0/"
error_case "a data set without input_1.pb" "input_1.pb: missing (input 'y')" "$tv" verify "$m" --data "$work/no_input"
error_case "qemu missing" "qemu-system-arm is not on PATH.*apt-get install qemu-system-arm" \
    env PATH=/nonexistent "$tv" verify "$m" --data "$TESTDATA/node/test_add" -t cortex-m4
error_case "compiler missing" "not on PATH (Debian: apt-get install gcc)" \
    env PATH=/nonexistent "$tv" verify "$m" --data "$TESTDATA/node/test_add"
no_leftovers "error runs"

# ---- 5. --profile
t=pytorch-operator/test_operator_basic
"$tv" "$TESTDATA/$t/model.onnx" -o "$work/conv2d_out" >/dev/null 2>&1
for target in $targets; do
    [ $target = aarch64 ] && continue
    unit=ns
    [ $target = cortex-m4 ] && unit=instructions
    "$tv" "$TESTDATA/$t/model.onnx" -O0 -t $target -o "$work/prof_$target" >/dev/null 2>&1
    rm -f "$work/prof_$target.json"
    if "$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" -t $target --runs 3 -O0 \
        --profile "$work/prof_$target.json" >"$work/prof_$target.log" 2>&1 &&
        "$PYTHON" - "$work/prof_$target.json" "$work/prof_$target/model.json" $target $unit \
            >"$work/prof_check_$target.log" 2>&1 <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
m = json.load(open(sys.argv[2]))
assert set(p) == {"model", "target", "unit", "runs", "kernels"}, sorted(p)
assert p["model"] == "model.onnx" and p["target"] == sys.argv[3], p
assert p["unit"] == sys.argv[4] and p["runs"] == 3, p
names = [k["name"] for k in m["kernels"]]
assert [k["name"] for k in p["kernels"]] == names, (p["kernels"], names)
assert all(set(k) == {"name", "value"} and k["value"] >= 0 for k in p["kernels"])
assert sum(k["value"] for k in p["kernels"]) > 0
assert len(names) >= 3, names
print(len(names), "kernels")
EOF
    then
        ok "--profile ($target): one entry per kernel of model.json ($(cat "$work/prof_check_$target.log"))"
    else
        bad "--profile ($target): $(tail -2 "$work/prof_$target.log" "$work/prof_check_$target.log" | tr '\n' ' ')"
    fi
done
# without the hooks defined the emitted C builds as before: the conformance
# suite's warning flags, macros empty
if gcc -std=c99 -Wall -Wextra -pedantic -Werror -c "$work/conv2d_out/model.c" -I "$work/conv2d_out" \
    -o "$work/hooks.o" 2>"$work/hooks.log" && grep -q 'TVMCC_KERNEL_BEGIN(0);' "$work/conv2d_out/model.c"; then
    ok "model.c carries the kernel hooks and builds warning-free without them"
else
    bad "kernel hooks: $(head -2 "$work/hooks.log")"
fi

# ---- 6. SIGINT: a runner that hangs, interrupted
t=node/test_add
"$tv" verify "$TESTDATA/$t/model.onnx" --data "$TESTDATA/$t" --runner 'sleep 30;' \
    >"$work/int.out" 2>&1 &
pid=$!
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    ls "$TMPDIR" | grep -q '^tvmcc-verify-' && [ -f "$(ls -d "$TMPDIR"/tvmcc-verify-* | head -1)/driver" ] && break
    sleep 0.5
done
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
if [ $rc = 130 ] && grep -q interrupted "$work/int.out"; then
    ok "SIGINT: verify stops (status 130)"
else
    bad "SIGINT: exit $rc: $(head -2 "$work/int.out")"
fi
no_leftovers "SIGINT"

finish
