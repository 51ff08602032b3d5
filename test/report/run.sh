#!/usr/bin/env bash
# tvmcc --report-html and the progress line (issue 20, items 2 and 3).
#
#   test/report/run.sh
#
# 1. A small float model (test/report/check.py tiny): the page is
#    well-formed XML, self-contained (no http(s):// address, no src= or
#    href=), its totals equal NAME.json's; the other output files are the
#    same bytes with and without --report-html, and the page is the same
#    bytes on a second run. The code size for cortex-m4 equals
#    arm-none-eabi-size's text + data of model.c and tvmrt.c built here with
#    NAME.mk's flags; a target whose compiler is missing gets a page saying
#    the code was not measured. Profiles (written here as tvmcc verify
#    --profile writes them): values shown per kernel; a kernel name the
#    program does not have, a bad unit: exit 1, one line naming the file
#    (and the kernel), nothing written; --profile without --report-html:
#    exit 2.
# 2. In a browser: resnet18 (torchvision, exported by
#    test/models/check_torchvision.py, cortex-m4) and an int8 QDQ model
#    (test/qdq/gen_models.py resnet8.s8) are rendered by headless chromium;
#    the screenshot (decoded by check.py, no library) must show the plan's
#    rectangles in their fill colours, and a copy of the page without its
#    <svg> must not (the check fails without the plan).
# 3. Progress: a compile of resnet18 for cortex-m4 (over 2 s) and tvmcc
#    tune on a one-Conv model show a progress line on a terminal (script(1))
#    and write nothing of it to a pipe (the compile: stderr empty).
# SKIPs, with the reason, what it cannot run here (no chromium, no torch,
# no onnxruntime-node for the QDQ model, no script(1), no arm-none-eabi-gcc).
# Prints PASS/FAIL/SKIP lines and, last, "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
work="$root/build/report"
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
finish() {
    echo "$pass passed, $fail failed"
    [ $fail = 0 ]
    exit
}

if ! "$PYTHON" -c 'import onnx, numpy' 2>/dev/null; then
    echo "SKIP report-html: onnx/numpy not importable by $PYTHON"
    finish
fi
rm -rf "$work/tiny" "$work/big" && mkdir -p "$work/tiny" "$work/big" "$work/models"
cp "$TVMCC" "$work/tvmcc.bin" 2>/dev/null || { bad "report-html: $TVMCC not built"; finish; }
tv="$work/tvmcc.bin"
chk() { "$PYTHON" "$here/check.py" "$@"; }

# ---------------------------------------------------------------- 1. tiny
t="$work/tiny"
chk tiny "$t/tiny.onnx" > "$t/gen.log" 2>&1 || { bad "check.py tiny: $(tail -1 "$t/gen.log")"; finish; }
if ! "$tv" "$t/tiny.onnx" -o "$t/a" --report-html > "$t/a.log" 2>&1; then
    bad "tiny --report-html: $(head -1 "$t/a.log")"
elif msg=$(chk static "$t/a/model_report.html" "$t/a/model.json"); then
    ok "tiny page: $msg"
else
    bad "tiny page: $msg"
fi
"$tv" "$t/tiny.onnx" -o "$t/b" > /dev/null 2>&1
"$tv" "$t/tiny.onnx" -o "$t/c" --report-html > /dev/null 2>&1
diffs=""
for f in "$t"/b/*; do
    cmp -s "$f" "$t/a/$(basename "$f")" || diffs="$diffs $(basename "$f")"
done
[ -e "$t/b/model_report.html" ] && diffs="$diffs (model_report.html written without --report-html)"
cmp -s "$t/a/model_report.html" "$t/c/model_report.html" || diffs="$diffs model_report.html(2nd run)"
if [ -z "$diffs" ] && [ -s "$t/a/model_report.html" ]; then
    ok "output contract unchanged by --report-html; the page is the same bytes on a second run"
else
    bad "outputs differ:$diffs"
fi

# code size: the page's against arm-none-eabi-size here
if command -v arm-none-eabi-gcc > /dev/null 2>&1 && command -v arm-none-eabi-size > /dev/null 2>&1; then
    "$tv" "$t/tiny.onnx" -t cortex-m4 -o "$t/m4" --report-html > "$t/m4.log" 2>&1
    flags=$(sed -n 's/^MODEL_CFLAGS := -I\$(MODEL_DIR) //p' "$t/m4/model.mk")
    want=0
    for s in model tvmrt; do
        # shellcheck disable=SC2086
        arm-none-eabi-gcc $flags -c -I"$t/m4" "$t/m4/$s.c" -o "$t/$s.o" 2>> "$t/m4.log" &&
            want=$((want + $(arm-none-eabi-size "$t/$s.o" | awk 'NR == 2 { print $1 + $2 }')))
    done
    got=$(sed -n 's/.*id="code" data-bytes="\([0-9]*\)".*/\1/p' "$t/m4/model_report.html")
    if [ "${got:-x}" = "$want" ] && [ "$want" -gt 0 ] &&
            msg=$(chk static "$t/m4/model_report.html" "$t/m4/model.json"); then
        ok "cortex-m4 code size $got bytes = arm-none-eabi-size of model.o + tvmrt.o; $msg"
    else
        bad "cortex-m4 code size: page ${got:-none}, arm-none-eabi-size $want ($(head -1 "$t/m4.log"))"
    fi
else
    echo "SKIP report-html code size: arm-none-eabi-gcc/size not installed"
fi
sed 's/"cc": *"[^"]*"/"cc": "tvmcc-no-such-cc"/' "$root/targets/cortex-m4.json" > "$t/nocc.json"
if "$tv" "$t/tiny.onnx" -t "$t/nocc.json" -o "$t/nocc" --report-html > "$t/nocc.log" 2>&1 &&
        grep -q '<td id="code">not measured</td><td>the target&#39;s compiler tvmcc-no-such-cc was not found' \
            "$t/nocc/model_report.html" && msg=$(chk static "$t/nocc/model_report.html" "$t/nocc/model.json"); then
    ok "a target whose compiler is missing: code 'not measured', flash = weights"
else
    bad "missing compiler: $(head -1 "$t/nocc.log") $(grep -o '<td id="code"[^/]*' "$t/nocc/model_report.html" 2>/dev/null)"
fi

# profiles
chk profile "$t/a/model.json" "$t/good.json"
if "$tv" "$t/tiny.onnx" -o "$t/p" --report-html --profile "$t/good.json" > "$t/p.log" 2>&1 &&
        msg=$(chk profiled "$t/p/model_report.html" "$t/a/model.json"); then
    ok "profile: $msg"
else
    bad "profile: $(head -1 "$t/p.log") ${msg:-}"
fi
chk profile "$t/a/model.json" "$t/badk.json" k99_nothere
printf '{"model": "m", "target": "c", "unit": "seconds", "runs": 1, "kernels": []}\n' > "$t/badu.json"
printf '{"model": "m", "target": "c", "unit": "ns", "runs": 1, "kernels": [' > "$t/trunc.json"
for c in "badk.json:k99_nothere" "badu.json:unit" "trunc.json:JSON"; do
    f=${c%%:*} what=${c#*:}
    "$tv" "$t/tiny.onnx" -o "$t/q" --report-html --profile "$t/$f" > "$t/q.out" 2> "$t/q.err"
    rc=$?
    if [ $rc = 1 ] && [ "$(wc -l < "$t/q.err")" = 1 ] && grep -q "$t/$f" "$t/q.err" &&
            grep -q "$what" "$t/q.err" && [ ! -e "$t/q" ]; then
        ok "bad profile $f: exit 1, nothing written: $(cat "$t/q.err")"
    else
        bad "bad profile $f: exit $rc, $(wc -l < "$t/q.err") line(s): $(head -2 "$t/q.err"), q/ $( [ -e "$t/q" ] && echo written)"
    fi
done
"$tv" "$t/tiny.onnx" -o "$t/q" --profile "$t/good.json" > /dev/null 2> "$t/q.err"
rc=$?
if [ $rc = 2 ] && grep -q "needs --report-html" "$t/q.err" && [ ! -e "$t/q" ]; then
    ok "--profile without --report-html: usage error"
else
    bad "--profile without --report-html: exit $rc: $(head -1 "$t/q.err")"
fi

# ------------------------------------------------- 2. resnet18, int8, chromium
b="$work/big"
models=()
if "$PYTHON" -c 'import torch, torchvision' 2>/dev/null; then
    if [ -s "$work/models/resnet18.onnx" ] ||
            "$PYTHON" "$root/test/models/check_torchvision.py" export "$work/models" resnet18 \
                > "$work/models/export.log" 2>&1; then
        models+=("resnet18:$work/models/resnet18.onnx:cortex-m4")
    else
        bad "resnet18 export: $(grep -m1 -i error "$work/models/export.log")"
    fi
else
    echo "SKIP report-html resnet18: torch/torchvision not importable by $PYTHON"
fi
if [ -d "$root/build/node/node_modules/onnxruntime-node" ] && command -v node > /dev/null; then
    if "$PYTHON" "$root/test/qdq/gen_models.py" "$work/qdq" -k resnet8.s8 > "$work/qdq.log" 2>&1; then
        models+=("resnet8_int8:$work/qdq/resnet8.s8.onnx:c")
    else
        bad "resnet8.s8 (test/qdq/gen_models.py): $(tail -1 "$work/qdq.log")"
    fi
else
    echo "SKIP report-html int8: onnxruntime-node not installed (test/qdq quantizes with it)"
fi
have_script=0
command -v script > /dev/null 2>&1 && have_script=1
[ $have_script = 1 ] || echo "SKIP report-html progress: script(1) not installed"
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || echo "SKIP report-html chromium: chromium not installed (scripts/deps.sh test)"

# shot PAGE PNG: renders PAGE in headless chromium; prints "act N tmp M"
shot() {
    rm -f "$2"
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --force-device-scale-factor=1 --window-size=1100,1300 --screenshot="$2" "file://$1" \
        > "$2.log" 2>&1
    [ -s "$2" ] && chk count "$2"
}

for m in "${models[@]}"; do
    name=${m%%:*} rest=${m#*:}
    onnx=${rest%:*} target=${rest##*:}
    o="$b/$name"
    # the compile of resnet18 also checks the progress line on a terminal
    if [ $have_script = 1 ] && [ "$name" = resnet18 ]; then
        start=$(date +%s)
        script -qec "'$tv' '$onnx' -t $target -o '$o' --report-html" /dev/null > "$b/$name.tty" 2>&1
        secs=$(( $(date +%s) - start ))
        if [ -s "$o/model_report.html" ] && grep -aq 'tvmcc: [a-z_ ]*[0-9/]* *([0-9]* s)' "$b/$name.tty"; then
            ok "progress on a terminal: $name compile ($secs s), e.g. '$(tr '\r' '\n' < "$b/$name.tty" |
                grep -a -m1 -o 'tvmcc: [a-z_ ]*[0-9/]* *([0-9]* s)')'"
        else
            bad "progress on a terminal: $name ($secs s): $(tr '\r' '\n' < "$b/$name.tty" | grep -a -v '^.\[K$' | head -2)"
        fi
    else
        "$tv" "$onnx" -t "$target" -o "$o" --report-html > "$b/$name.log" 2>&1
    fi
    if [ ! -s "$o/model_report.html" ]; then
        bad "$name --report-html: no page ($(head -1 "$b/$name.log" 2>/dev/null))"
        continue
    fi
    if msg=$(chk static "$o/model_report.html" "$o/model.json"); then
        ok "$name page: $msg"
    else
        bad "$name page: $msg"
    fi
    [ -n "$chromium" ] || continue
    counts=$(shot "$o/model_report.html" "$b/$name.png")
    chk strip "$o/model_report.html" "$b/$name.nosvg.html"
    stripped=$(shot "$b/$name.nosvg.html" "$b/$name.nosvg.png")
    act=$(echo "$counts" | awk '{ print $2 + $4 }')
    sact=$(echo "$stripped" | awk '{ print $2 + $4 }')
    if [ "${act:-0}" -ge 2000 ]; then
        ok "$name in chromium: the plan's rectangles on the screenshot ($counts pixels)"
    else
        bad "$name in chromium: ${counts:-no screenshot: $(grep -v -i dbus "$b/$name.png.log" | head -1)}"
    fi
    if [ -n "$stripped" ] && [ "${sact:-1}" = 0 ]; then
        ok "$name without its <svg>: the check fails ($stripped pixels)"
    else
        bad "$name without its <svg>: ${stripped:-no screenshot} (the check would still pass)"
    fi
done

# ---------------------------------------------------------------- 3. progress
if [ ${#models[@]} -gt 0 ] && [ "${models[0]%%:*}" = resnet18 ]; then
    start=$(date +%s)
    "$tv" "$work/models/resnet18.onnx" -t cortex-m4 -o "$b/pipe" > /dev/null 2> "$b/pipe.err"
    secs=$(( $(date +%s) - start ))
    if [ ! -s "$b/pipe.err" ] && [ -s "$b/pipe/model.c" ]; then
        ok "no progress on a pipe: resnet18 compile ($secs s), stderr empty"
    else
        bad "progress on a pipe: $(wc -c < "$b/pipe.err") bytes on stderr: $(head -c 200 "$b/pipe.err" | cat -v)"
    fi
else
    echo "SKIP report-html compile progress: no resnet18 (a compile long enough to show it)"
fi
chk tiny "$t/conv.onnx" conv
if [ $have_script = 1 ]; then
    # TVMCC_PROGRESS_AFTER=0 (a test hook): the line from the start, as a
    # tune of this small model may take less than the 2 s threshold
    TVMCC_PROGRESS_AFTER=0 script -qec "'$tv' tune '$t/conv.onnx' -t c --log '$t/tty.log.json' --trials 2" \
        /dev/null > "$t/tune.tty" 2>&1
    TVMCC_PROGRESS_AFTER=0 "$tv" tune "$t/conv.onnx" -t c --log "$t/pipe.log.json" --trials 2 \
        > /dev/null 2> "$t/tune.err"
    if grep -aq 'tvmcc tune: workload 1/1 ([^)]*) [0-9]*/[0-9]* ([0-9]* s)' "$t/tune.tty" &&
            ! grep -aq 'workload 1/1\|'$'\r' "$t/tune.err" && [ -s "$t/pipe.log.json" ]; then
        ok "tvmcc tune: progress on a terminal, none on a pipe"
    else
        bad "tvmcc tune progress: terminal: $(grep -ac 'workload 1/1' "$t/tune.tty") line(s); pipe: $(grep -ac 'workload 1/1' "$t/tune.err") line(s)"
    fi
fi
finish
