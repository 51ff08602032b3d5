#!/usr/bin/env bash
# tvmcc tune and --tuning-log (issue 5). On a small conv+matmul model
# (test/models/tune_model.py, with a numpy reference):
#   - tvmcc tune with a small trial budget writes a log with one entry per
#     workload (valid JSON: key, knobs, time_us, default_time_us): three of
#     the packed-panel template, one of the generic one (a grouped conv
#     of groups too narrow for the packed tiles);
#   - compiling with that log marks the kernels "tuned" in NAME.json with the
#     logged knobs and gives the reference's results;
#   - a log whose knobs differ from the defaults is applied (NAME.json and the
#     tile extent in --dump-loops) and the results stay right;
#   - malformed logs are errors naming the file and field (exit 1); a log for
#     another target is ignored with a warning; illegal knobs fall back to
#     the defaults with a warning; no compiler is a clear error (exit 1);
#   - a candidate that fails to build is skipped and logged with the reason;
#     the candidates tried depend only on the seed;
#   - SIGTERM while tuning removes the work directory and writes no log.
# Uses x86-64-avx512 when the CPU has it, else the portable c target (and
# prints a SKIP line saying so).
#
#   test/models/tune.sh
#
# Prints PASS/FAIL per check and, last, "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; exit $?; }

if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP tune: onnx/numpy not importable by $PYTHON"
    finish
fi
work="$root/build/tune-test"
rm -rf "$work" && mkdir -p "$work"
cp "$TVMCC" "$work/tvmcc.bin" || { bad "copy $TVMCC"; finish; }
T="$work/tvmcc.bin"
. "$root/test/hostcpu.sh"
target=c
if host_has avx512f; then
    target=x86-64-avx512
else
    echo "SKIP tune: -t x86-64-avx512: the host has no AVX-512F; tuning the portable c target instead"
fi
cflags=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cflags"])' "$root/targets/$target.json")
[ "$target" = c ] && cflags="$cflags -march=native"
"$PYTHON" "$here/tune_model.py" "$work" || { bad "model generation"; finish; }

# compile OUT [tvmcc options]: compiles, builds test/driver.c, runs it and
# compares both outputs with the reference (max|diff| <= 1e-4 * max|ref|).
run_model() {
    local out=$1
    shift
    "$T" "$work/model.onnx" -t "$target" -o "$work/$out" "$@" 2> "$work/$out.err" || return 1
    # the emitted C with tuned knobs builds warning-free too (as test/warnings)
    $CC $cflags -Wall -Wextra -pedantic -Wconversion -Wsign-conversion -Wdouble-promotion -Wshadow -Wvla \
        -Werror -c -o "$work/$out/model.o" "$work/$out/model.c" 2> "$work/$out.cc" || { cat "$work/$out.cc"; return 1; }
    $CC $cflags -I"$work/$out" -o "$work/$out/drv" "$root/test/driver.c" "$work/$out/model.o" \
        "$work/$out/model_weights.c" "$work/$out/tvmrt.c" -lm 2> "$work/$out.cc" || return 1
    "$work/$out/drv" "$work/in0.bin" "$work/in1.bin" -o "$work/$out/y0.bin" "$work/$out/y1.bin" "$work/$out/y2.bin" || return 1
    "$PYTHON" - "$work" "$out" <<'PY'
import sys, numpy as np
w, o = sys.argv[1], sys.argv[2]
for i in range(3):
    y = np.fromfile(f"{w}/{o}/y{i}.bin", np.float32)
    r = np.fromfile(f"{w}/ref{i}.bin", np.float32)
    if y.shape != r.shape or np.max(np.abs(y - r)) > 1e-4 * np.max(np.abs(r)):
        print(f"output {i} differs from the reference"); sys.exit(1)
PY
}

# 1. tune writes a valid log
start=$(date +%s)
if "$T" tune "$work/model.onnx" -t "$target" --log "$work/log.json" --trials 5 --seed 3 2> "$work/tune.err" &&
    "$PYTHON" - "$work/log.json" "$target" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
assert log["target"] == sys.argv[2] and log["tvmcc_version"], "header"
ws = log["workloads"]
ops = sorted(w["op"] for w in ws)
# the 1x1 conv's 16 output channels are one AVX-512 block: blocked
# (the grouped conv of 3-channel groups stays NCHW beside it)
want = ["conv2d", "conv2d_nchwc" if sys.argv[2] == "x86-64-avx512" else "conv2d", "generic_conv", "matmul"]
assert ops == want, ops
for w in ws:
    assert w["key"].endswith(":float32:" + sys.argv[2]), w["key"]
    assert w["time_us"] > 0 and w["default_time_us"] > 0, w
    assert w["time_us"] <= w["default_time_us"], w
    assert 1 <= w["measured"] <= 5 and w["measured"] <= w["space"], w
    for k in ("P", "V", "G", "kc"):
        assert isinstance(w["knobs"][k], int), (k, w)
assert len({w["key"] for w in ws}) == len(ws), "duplicate workloads"
PY
then ok "tune writes a valid log ($(( $(date +%s) - start ))s)"; else bad "tune writes a valid log"; cat "$work/tune.err"; fi

# 2. compiling with the log: correct results, kernels marked tuned with the logged knobs
check_tuned() { # OUT LOG: every kernel with a workload in LOG is tuned with LOG's knobs
    "$PYTHON" - "$work/$1/model.json" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); log = json.load(open(sys.argv[2]))
want = {w["key"]: w["knobs"] for w in log["workloads"]}
tuned = [k for k in m["kernels"] if "tuned" in k]
assert len(tuned) == 4, [k["name"] for k in tuned]
for k in tuned:
    assert k["tuned"]["knobs"] == want[k["tuned"]["workload"]], k["tuned"]
PY
}
if run_model tuned --tuning-log "$work/log.json" && check_tuned tuned "$work/log.json"; then
    ok "compile with the log: tuned kernels, results match the reference"
else bad "compile with the log"; cat "$work/tuned.err" 2>/dev/null; fi

# 3. non-default knobs from a log are applied and stay correct
"$PYTHON" - "$work/log.json" "$work/forced.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
for w in log["workloads"]:
    k = w["knobs"]
    k["P"] = 3
    k["V"] = 1
    if w["op"] == "generic_conv":
        k["P"] = 5
    if w["op"] == "matmul":
        k["G"] = 2
        k["kc"] = 20
json.dump(log, open(sys.argv[2], "w"))
PY
if run_model forced --tuning-log "$work/forced.json" && check_tuned forced "$work/forced.json" &&
    "$T" "$work/model.onnx" -t "$target" --tuning-log "$work/forced.json" --dump-loops | grep -q "for p[0-9]* in 0..3:"; then
    ok "forced knobs (P=3 V=1, matmul G=2 kc=20) applied, results match the reference"
else bad "forced knobs"; cat "$work/forced.err" 2>/dev/null; fi
if ! "$T" "$work/model.onnx" -t "$target" --dump-loops | grep -q "for p[0-9]* in 0..3:"; then
    ok "default compile has no P=3 tile (the check above can fail)"
else bad "default compile already has a P=3 tile"; fi

# 4. malformed logs: exit 1, message names the file and the field
malformed() { # NAME JSON EXPECTED-SUBSTRING
    printf '%s' "$2" > "$work/bad_$1.json"
    "$T" "$work/model.onnx" -t "$target" --tuning-log "$work/bad_$1.json" -o "$work/bad_$1" 2> "$work/bad_$1.err"
    local rc=$?
    if [ "$rc" = 1 ] && grep -q "bad_$1.json" "$work/bad_$1.err" && grep -qF -- "$3" "$work/bad_$1.err" &&
        [ ! -e "$work/bad_$1" ]; then
        ok "malformed log ($1): exit 1, $(head -n 1 "$work/bad_$1.err")"
    else bad "malformed log ($1): rc $rc, $(cat "$work/bad_$1.err")"; fi
}
malformed notjson '{"target": ' "not valid JSON"
malformed notarget '{"workloads": []}' "target: missing"
malformed wlist '{"target": "'$target'", "workloads": 3}' "workloads: expected an array"
malformed nokey '{"target": "'$target'", "workloads": [{"knobs": {"P": 1, "V": 1}}]}' "workloads[0].key: missing"
malformed badP '{"target": "'$target'", "workloads": [{"key": "k", "knobs": {"P": 1, "V": 1}}, {"key": "k2", "knobs": {"P": "x", "V": 1}}]}' "workloads[1].knobs.P: expected an integer"
"$T" "$work/model.onnx" -t "$target" --tuning-log "$work/nonexistent.json" -o "$work/bad_missing" 2> "$work/bad_missing.err"
if [ $? = 1 ] && grep -q "nonexistent.json" "$work/bad_missing.err"; then ok "missing log: exit 1"; else bad "missing log"; fi

# 5. a log for another target is ignored with a warning
"$PYTHON" - "$work/log.json" "$work/other.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1])); log["target"] = "cortex-m4"
json.dump(log, open(sys.argv[2], "w"))
PY
if "$T" "$work/model.onnx" -t "$target" --tuning-log "$work/other.json" -o "$work/other" 2> "$work/other.err" &&
    grep -q "warning: tuning log .*other.json is for target cortex-m4" "$work/other.err" &&
    ! grep -q '"tuned"' "$work/other/model.json" &&
    cmp -s "$work/other/model.c" <("$T" "$work/model.onnx" -t "$target" -o "$work/plain" && cat "$work/plain/model.c"); then
    ok "log for another target ignored with a warning (output as without a log)"
else bad "log for another target"; cat "$work/other.err"; fi

# 6. illegal knobs for a workload: warning, defaults
"$PYTHON" - "$work/log.json" "$work/illegal.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
for w in log["workloads"]:
    w["knobs"]["V"] = 3
json.dump(log, open(sys.argv[2], "w"))
PY
if "$T" "$work/model.onnx" -t "$target" --tuning-log "$work/illegal.json" -o "$work/illegal" 2> "$work/illegal.err" &&
    grep -q "not legal (V must be 1 or 2)" "$work/illegal.err" && ! grep -q '"tuned"' "$work/illegal/model.json"; then
    ok "illegal knobs in a log: warning, defaults"
else bad "illegal knobs"; cat "$work/illegal.err"; fi

# 6b. V (vectors per tile row) up to what the target's tile declares:
# x86-64-avx2's fma_tile takes 4 (compiled only: the knobs need not be
# measured to be legal); the 3x3 conv's 24 output channels (3 blocks of
# 8) take V = 3, every conv workload V = 5 is illegal
printf '#!/bin/sh\nfor a; do case $a in bench.c) exit 1;; esac; done\nexec %s "$@"\n' "$CC" > "$work/nocand"
chmod +x "$work/nocand"
if TVMCC_TUNE_CC="$work/nocand" "$T" tune "$work/model.onnx" -t x86-64-avx2 --log "$work/avx2.json" --trials 1 \
        2> "$work/avx2.err" &&
    "$PYTHON" - "$work/avx2.json" "$work/v3.json" "$work/v5.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
ws = [w for w in log["workloads"] if w["key"].startswith("conv2d")]
w24 = [w for w in ws if ",k24," in w["key"]]
assert ws and len(w24) == 1, [w["key"] for w in log["workloads"]]
for ks, v, path in ((w24, 3, sys.argv[2]), (ws, 5, sys.argv[3])):
    json.dump({"target": "x86-64-avx2", "workloads": [{"key": w["key"], "knobs": {"P": 2, "V": v, "G": 0, "kc": 0}}
                                                       for w in ks]}, open(path, "w"))
PY
then
    if "$T" "$work/model.onnx" -t x86-64-avx2 --tuning-log "$work/v3.json" -o "$work/v3" 2> "$work/v3.err" &&
        ! grep -q "not legal" "$work/v3.err" &&
        "$PYTHON" -c 'import json,sys; ks = json.load(open(sys.argv[1]))["kernels"]
sys.exit(0 if any(k.get("tuned", {}).get("knobs", {}).get("V") == 3 for k in ks) else 1)' "$work/v3/model.json" &&
        grep -q 'fma_tile 2x24' "$work/v3/model.c"; then
        ok "V = 3 legal on x86-64-avx2 (a 2 x 3-vector tile)"
    else bad "V = 3 on x86-64-avx2"; cat "$work/v3.err"; fi
    if host_has avx2 && host_has fma; then
        saved="$target|$cflags"
        target=x86-64-avx2
        cflags=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cflags"])' "$root/targets/$target.json")
        run_model v3run --tuning-log "$work/v3.json" && ok "V = 3 tiles give the reference's results" ||
            bad "V = 3 tiles: results"
        target=${saved%%|*} cflags=${saved#*|}
    else
        echo "SKIP tune: V = 3 run: the host has no AVX2+FMA"
    fi
    if "$T" "$work/model.onnx" -t x86-64-avx2 --tuning-log "$work/v5.json" -o "$work/v5" 2> "$work/v5.err" &&
        grep -q "not legal (V must be in 1..4)" "$work/v5.err" && ! grep -q '"tuned"' "$work/v5/model.json"; then
        ok "V = 5 on x86-64-avx2: warning, defaults"
    else bad "V = 5 on x86-64-avx2"; cat "$work/v5.err"; fi
else bad "tune -t x86-64-avx2 (workload keys)"; cat "$work/avx2.err"; fi

# 7. no compiler: clear error, exit 1, no log
TVMCC_TUNE_CC="$work/no-such-cc" "$T" tune "$work/model.onnx" -t "$target" --log "$work/nocc.json" 2> "$work/nocc.err"
if [ $? = 1 ] && grep -q "no-such-cc.*not found" "$work/nocc.err" && [ ! -e "$work/nocc.json" ]; then
    ok "no compiler: exit 1 ($(head -n 1 "$work/nocc.err"))"
else bad "no compiler"; cat "$work/nocc.err"; fi

# 8. a candidate that fails to build is skipped and logged with the reason
printf '#!/bin/sh\nfor a; do case $a in bench.c) echo "injected failure" >&2; exit 1;; esac; done\nexec %s "$@"\n' "$CC" > "$work/failcc"
chmod +x "$work/failcc"
if TVMCC_TUNE_CC="$work/failcc" "$T" tune "$work/model.onnx" -t "$target" --log "$work/fail.json" --trials 2 2> "$work/fail.err" &&
    "$PYTHON" - "$work/fail.json" <<'PY'
import json, sys
log = json.load(open(sys.argv[1]))
for w in log["workloads"]:
    assert w["time_us"] is None and w["failures"], w
    assert all("build failed: injected failure" in f["reason"] for f in w["failures"]), w["failures"]
PY
then ok "failing candidates skipped and logged with the reason"; else bad "failing candidates"; cat "$work/fail.err"; fi

# usage errors exit 2
"$T" tune "$work/model.onnx" -t "$target" 2> "$work/usage.err"; r1=$?
"$T" tune "$work/model.onnx" -t "$target" --log "$work/u.json" --trials 0 2>> "$work/usage.err"; r2=$?
if [ "$r1" = 2 ] && [ "$r2" = 2 ] && grep -q "log FILE.json is required" "$work/usage.err" &&
    grep -q "trials needs a number" "$work/usage.err"; then
    ok "tune usage errors: exit 2"
else bad "tune usage errors: $r1 $r2 $(cat "$work/usage.err")"; fi

# 9. the search is deterministic for a seed: with every build failing, the
# candidates tried depend only on the seed (their knobs are in "failures")
tried() { # SEED: the knobs tried, per workload
    TVMCC_TUNE_CC="$work/failcc" "$T" tune "$work/model.onnx" -t "$target" --log "$work/seed$1.json" \
        --trials 6 --seed "$1" 2> /dev/null &&
        "$PYTHON" -c 'import json,sys; print([[f["knobs"] for f in w["failures"]] for w in json.load(open(sys.argv[1]))["workloads"]])' \
            "$work/seed$1.json"
}
a=$(tried 5) b=$(tried 5) c=$(tried 6)
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "$c" ]; then
    ok "same seed, same candidates; another seed, others"
else bad "seeded search: '$a' / '$b' / '$c'"; fi

# 10. interrupted (SIGTERM while a candidate builds): the work directory is
# removed, no log is written, and tvmcc dies of the signal
mkdir -p "$work/tmp"
printf '#!/bin/sh\nfor a; do case $a in bench.c) touch "%s/building"; sleep 2;; esac; done\nexec %s "$@"\n' \
    "$work" "$CC" > "$work/slowcc"
chmod +x "$work/slowcc"
rm -f "$work/building"
TMPDIR="$work/tmp" TVMCC_TUNE_CC="$work/slowcc" "$T" tune "$work/model.onnx" -t "$target" \
    --log "$work/killed.json" --trials 4 2> "$work/killed.err" &
tpid=$!
for _ in $(seq 100); do [ -e "$work/building" ] && break; sleep 0.1; done
kill -TERM "$tpid" 2>/dev/null
wait "$tpid"; krc=$?
if [ -e "$work/building" ] && [ "$krc" = 143 ] && [ -z "$(ls -A "$work/tmp")" ] && [ ! -e "$work/killed.json" ] &&
    grep -q "interrupted (signal 15): work directory removed" "$work/killed.err"; then
    ok "SIGTERM during tuning: work directory removed, no log, exit 143"
else bad "SIGTERM during tuning: exit $krc, tmp: $(ls -A "$work/tmp"), $(tail -n 2 "$work/killed.err")"; fi

finish
