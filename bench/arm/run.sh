#!/usr/bin/env bash
# bench/arm: MLPerf-Tiny-style fp32 models on a Cortex-M4F under qemu.
#
#   bench/arm/run.sh [MODEL...]      (make bench-arm)
#
# MODEL: dscnn mobilenet resnet8 autoencoder (default: all). For each model
# gen_models.py writes build/bench-arm/MODEL.onnx; tvmcc compiles it twice
# with -t cortex-m4: as shipped ("tvmcc") and with $BASELINE_FLAGS (default
# -O0: one kernel per ONNX node, "baseline"). Each output is built with the
# target's flags from NAME.mk (-O2, hard float) and bench_main.c, run once
# on qemu-system-arm -M mps2-an386 -icount shift=0, and measured:
#   instructions  model_run's SysTick ticks x the instructions per tick of a
#                 calibration loop (40 on this board: -icount shift=0 is 1 ns
#                 per instruction, SysTick runs at 25 MHz); resolution 40
#   MACs/insn     sum of kernels[].macs in NAME.json / instructions
#   flash         text + data of model.o, model_weights.o and tvmrt.o
#                 (arm-none-eabi-size: text includes .rodata, i.e. weights)
#   RAM           data + bss of the same objects (bss holds the static arena)
# and the runtime alone (tvmrt.c at -Os). Writes bench/arm/results.md
# (override with RESULTS=FILE). Environment: TVMCC, PYTHON, BASELINE_FLAGS,
# BASELINE_TVMCC (a tvmcc binary for the baseline, default TVMCC),
# QEMU_TIMEOUT (s, default 600), EXTRA_CFLAGS (appended to NAME.mk's flags
# for both variants, e.g. -U__ARM_FEATURE_DSP to build the portable loops
# instead of the SMLAD ones).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${BENCH_WORK:-$root/build/bench-arm}
tvmcc=${TVMCC:-$root/tvmcc}
python=${PYTHON:-/usr/bin/python3}
baseline=${BASELINE_FLAGS--O0}
baseline_tvmcc=${BASELINE_TVMCC:-$tvmcc}
results=${RESULTS:-$here/results.md}
timeout_s=${QEMU_TIMEOUT:-600}
EXTRA_CFLAGS=${EXTRA_CFLAGS:-}
models=${*:-dscnn mobilenet resnet8 autoencoder}

mkdir -p "$work"
"$python" "$here/gen_models.py" "$work" $models || { echo "gen_models.py failed"; exit 1; }

A="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
tsv="$work/results.tsv"
: > "$tsv"
status=0

# measure MODEL VARIANT FLAGS...: one row of results.tsv.
measure() {
    local m=$1 var=$2 d="$work/$1-$2" flags cal run out tool=$tvmcc
    shift 2
    [ "$var" = baseline ] && tool=$baseline_tvmcc
    rm -rf "$d"
    if ! "$tool" "$work/$m.onnx" -t cortex-m4 -o "$d" --name model "$@" > "$work/$m-$var.tvmcc.log" 2>&1; then
        echo "FAIL $m $var: tvmcc: $(head -1 "$work/$m-$var.tvmcc.log")"; status=1; return
    fi
    # The target's flags, exactly as NAME.mk gives them to a firmware build.
    flags="$(sed -n 's/^MODEL_CFLAGS := //p' "$d/model.mk" | sed "s|\$(MODEL_DIR)|$d|") $EXTRA_CFLAGS"
    for f in model model_weights tvmrt; do
        arm-none-eabi-gcc $flags -Wall -Wextra -c "$d/$f.c" -o "$d/$f.o" 2> "$d/cc.log" ||
            { echo "FAIL $m $var: cc $f.c: $(head -1 "$d/cc.log")"; status=1; return; }
    done
    arm-none-eabi-gcc $flags -Wall -Wextra -c "$here/bench_main.c" -o "$d/bench_main.o" &&
    arm-none-eabi-gcc $A -O2 -c "$root/test/arm/startup.c" -o "$d/startup.o" &&
    arm-none-eabi-gcc $A "$d"/*.o --specs=rdimon.specs -nostartfiles -T "$root/test/arm/mps2-an386.ld" \
        -lm -o "$d/bench.elf" 2> "$d/cc.log" ||
        { echo "FAIL $m $var: link: $(head -1 "$d/cc.log")"; status=1; return; }
    timeout -k 5 "$timeout_s" qemu-system-arm -M mps2-an386 -icount shift=0 -nographic -monitor none \
        -semihosting-config enable=on,target=native -kernel "$d/bench.elf" > "$d/run.log" 2>&1 ||
        { echo "FAIL $m $var: qemu exit $?: $(head -1 "$d/run.log")"; status=1; return; }
    cal=$(sed -n 's/^calib: //p' "$d/run.log")
    run=$(sed -n 's/^run: //p' "$d/run.log")
    out=$(sed -n 's/^out: //p' "$d/run.log")
    arm-none-eabi-size "$d/model.o" "$d/model_weights.o" "$d/tvmrt.o" > "$d/size.txt"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$var" "$cal" "$run" "$out" \
        "$(awk 'NR > 1 { t += $1; dt += $2; b += $3 } END { print t, dt, b }' "$d/size.txt")" \
        "$d/model.json" >> "$tsv"
    echo "ok   $m $var: run $run, calib $cal"
}

for m in $models; do
    measure "$m" tvmcc
    measure "$m" baseline $baseline
done

# The runtime's flash at -Os, with and without status messages.
rt="$work/runtime"
mkdir -p "$rt"
d=$(ls -d "$work"/*-tvmcc 2>/dev/null | head -1)
if [ -n "$d" ]; then
    arm-none-eabi-gcc $A -std=c99 -Os -ffunction-sections -c "$d/tvmrt.c" -o "$rt/tvmrt.o" &&
    arm-none-eabi-gcc $A -std=c99 -Os -ffunction-sections -DTVMRT_NO_MESSAGES -c "$d/tvmrt.c" -o "$rt/tvmrt_nomsg.o" &&
    arm-none-eabi-size "$rt/tvmrt.o" "$rt/tvmrt_nomsg.o" > "$rt/size.txt"
fi

"$python" "$here/report.py" "$tsv" "$rt/size.txt" "$baseline" > "$results" ||
    { echo "report.py failed"; exit 1; }
cat "$results"
echo "wrote $results"
exit $status
