#!/usr/bin/env bash
# bench/arm: MLPerf-Tiny-style models, fp32 and int8 (QDQ), on a Cortex-M4F
# under qemu.
#
#   bench/arm/run.sh [MODEL...]      (make bench-arm)
#
# MODEL: dscnn mobilenet resnet8 autoencoder (default: all). For each model
# gen_models.py writes build/bench-arm/MODEL.onnx and tvmcc quantize
# (int8 activations, per-channel int8 weights, otherwise its defaults)
# writes MODEL_int8.onnx from it. tvmcc compiles, with -t cortex-m4, the
# fp32 model as shipped ("tvmcc") and with $BASELINE_FLAGS (default -O0:
# one kernel per ONNX node, "baseline"), and the int8 model as shipped
# ("int8"). Each output is built with the target's flags from NAME.mk (-O2,
# hard float) and bench_main.c, and run on qemu-system-arm -M mps2-an386
# -icount shift=0 with the m4est plugin (bench/arm/m4est, built here with
# the host gcc), which measures:
#   instructions  model_run's SysTick ticks x the instructions per tick of a
#                 calibration loop (40 on this board: -icount shift=0 is 1 ns
#                 per instruction, SysTick runs at 25 MHz); resolution 40.
#                 m4est counts the same instructions exactly (report.py
#                 checks that the two agree).
#   cycles        m4est's estimate of Cortex-M4 cycles between the marker
#                 calls around model_run (bench_main.c), minus the markers'
#                 own cost (an empty pair of them)
#   MACs          sum of kernels[].macs in NAME.json
#   flash         text + data of model.o, model_weights.o and tvmrt.o
#                 (arm-none-eabi-size: text includes .rodata, i.e. weights)
#   RAM           data + bss of the same objects (bss holds the static arena)
# Per kernel: the tvmcc and int8 outputs are built a second time with
# -fno-inline -fno-ipa-icf, so that every kernel is a function of its own,
# and run with m4est marks on every kernel's entry ("profile" build; its
# total is reported next to the real build's).
# Cross-check: when ../shared/tools/m4cycles (relative to the repository
# root; M4CYCLES_DIR overrides) exists, every build also runs under that
# independent estimator with marks on the same markers, and results.md
# reports both figures. Without it the cross-check is reported as skipped.
# Also measures the runtime alone (tvmrt.c at -Os). Writes
# bench/arm/results.md (override with RESULTS=FILE).
#
# Environment: TVMCC, PYTHON, BASELINE_FLAGS, BASELINE_TVMCC (a tvmcc
# binary for the baseline, default TVMCC), QUANTIZE (unset: the int8
# models come from `tvmcc quantize --calib random:8`; a path to
# test/qdq/quantize.py uses that instead; INT8=0 skips the int8 models),
# QUANTIZE_FLAGS (added to tvmcc quantize's options; with QUANTIZE, the
# script's options, default --fuse-relu), M4CYCLES_DIR,
# PROFILE=0 (no per-kernel builds), QEMU_TIMEOUT (s, default 600),
# EXTRA_CFLAGS (appended to NAME.mk's flags for every variant, e.g.
# -U__ARM_FEATURE_DSP to build the portable loops instead of the SMLAD
# ones), M4EST_ARGS (extra m4est options, e.g. fmac=2; both estimators get
# the defaults otherwise).
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
# the int8 models come from `tvmcc quantize` (QUANTIZE=path/to/quantize.py:
# from the project's Python reference quantizer instead)
quantize=${QUANTIZE:-}
m4cycles_dir=${M4CYCLES_DIR:-$root/../shared/tools/m4cycles}
profile=${PROFILE:-1}
int8=${INT8:-1}
EXTRA_CFLAGS=${EXTRA_CFLAGS:-}
M4EST_ARGS=${M4EST_ARGS:-}
models=${*:-dscnn mobilenet resnet8 autoencoder}

mkdir -p "$work"
"$python" "$here/gen_models.py" "$work" $models || { echo "gen_models.py failed"; exit 1; }

A="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
tsv="$work/results.tsv"
notes="$work/notes.txt"   # "KEY<TAB>text" lines for report.py: why something was skipped
: > "$tsv"
: > "$notes"
status=0
QEMU="qemu-system-arm -M mps2-an386 -icount shift=0 -nographic -monitor none -semihosting-config enable=on,target=native"

# The estimators: m4est (ours) always; m4cycles when ../shared has it.
m4est=""
if gcc -O2 -std=c99 -Wall -Wextra -fPIC -fvisibility=hidden -shared -o "$work/m4est.so" \
        "$here/m4est/m4est.c" 2> "$work/m4est.log"; then
    m4est=$work/m4est.so
else
    printf 'm4est\tnot built: %s\n' "$(head -1 "$work/m4est.log")" >> "$notes"
fi
# m4est's own check: loops of known cost (a second).
if [ -n "$m4est" ] && ! BENCH_WORK=$work "$here/m4est/check.sh" > "$work/m4est-check.txt" 2>&1; then
    printf 'm4est check\tbench/arm/m4est/check.sh failed (%s)\n' "$(grep -m1 -v '^ok' "$work/m4est-check.txt")" >> "$notes"
fi
m4cycles=""
if [ -f "$m4cycles_dir/m4cycles.c" ]; then
    if gcc -O2 -std=gnu11 -fPIC -fvisibility=hidden -shared -o "$work/m4cycles.so" \
            "$m4cycles_dir/m4cycles.c" 2> "$work/m4cycles.log"; then
        m4cycles=$work/m4cycles.so
    else
        printf 'm4cycles\t%s did not build: %s\n' "$m4cycles_dir" "$(head -1 "$work/m4cycles.log")" >> "$notes"
    fi
else
    printf 'm4cycles\t%s (the shared m4cycles tool) is not present\n' "${M4CYCLES_DIR:-../shared/tools/m4cycles}" >> "$notes"
fi

# Provenance for results.md: "what<TAB>text" lines.
about="$work/about.txt"
{
    printf 'tvmcc\t%s (%s)\n' "$("$tvmcc" --version 2>/dev/null | head -1)" \
        "$(git -C "$root" log -1 --format='%h %cs' 2>/dev/null || echo 'not a git checkout')"
    printf 'qemu\t%s\n' "$(qemu-system-arm --version | head -1)"
    printf 'arm-none-eabi-gcc\t%s\n' "$(arm-none-eabi-gcc --version | head -1)"
    if [ "$int8" != 0 ] && [ -z "$quantize" ]; then
        printf 'quantize\ttvmcc quantize --calib random:8 %s\n' "${QUANTIZE_FLAGS:-}"
    elif [ "$int8" != 0 ] && [ -f "$quantize" ]; then
        q=$(cd "$(dirname "$quantize")" && pwd)/$(basename "$quantize")
        qc=$(git -C "$(dirname "$q")" log -1 --format='%h %cs' -- "$q" 2>/dev/null)
        [ -n "$(git -C "$(dirname "$q")" status --porcelain -- "$q" 2>/dev/null)" ] && qc="$qc, modified"
        printf 'quantize.py\t%s (%s)\n' "${q#$root/}" "${qc:-not in git}"
    fi
} > "$about"

# The int8 models, as onnxruntime's quantize_static writes QDQ models: a Relu
# or Clip right after a quantized op is removed and the op's QuantizeLinear
# takes its range (--fuse-relu; QUANTIZE_FLAGS overrides, e.g. empty for
# the form that keeps the Relu between its own Q/DQ pairs).
int8_models=""
if [ "$int8" != 0 ]; then
    if [ -z "$quantize" ]; then
        # tvmcc quantize: 8 random samples (uniform in [-1, 1]), its defaults
        # (mse ranges, equalization, bias correction, Relu/Clip fused into the
        # op's QuantizeLinear as onnxruntime writes it); QUANTIZE_FLAGS adds
        for m in $models; do
            if "$tvmcc" quantize "$work/$m.onnx" --calib random:8 -o "$work/${m}_int8.onnx" \
                    ${QUANTIZE_FLAGS:-} > "$work/${m}_int8.quantize.log" 2>&1; then
                int8_models="$int8_models $m"
            else
                echo "FAIL $m int8: tvmcc quantize: $(tail -1 "$work/${m}_int8.quantize.log")"; status=1
                printf 'int8 %s\ttvmcc quantize failed: %s\n' "$m" "$(tail -1 "$work/${m}_int8.quantize.log")" >> "$notes"
            fi
        done
    elif [ -f "$quantize" ]; then
        quantize_flags=${QUANTIZE_FLAGS---fuse-relu}
        for m in $models; do
            if "$python" "$quantize" "$work/$m.onnx" "$work/${m}_int8.onnx" --activations int8 $quantize_flags \
                    > "$work/${m}_int8.quantize.log" 2>&1; then
                int8_models="$int8_models $m"
            else
                echo "FAIL $m int8: quantize.py: $(tail -1 "$work/${m}_int8.quantize.log")"; status=1
                printf 'int8 %s\tquantize.py failed: %s\n' "$m" "$(tail -1 "$work/${m}_int8.quantize.log")" >> "$notes"
            fi
        done
    else
        printf 'int8\t%s not found (set QUANTIZE)\n' "$quantize" >> "$notes"
    fi
fi

# marks FILE ELF REGEX: "ADDR NAME" of the functions whose names match.
marks() {
    arm-none-eabi-nm "$2" | awk -v re="$3" '$2 ~ /^[tT]$/ && $3 ~ re { print $1, $3 }' > "$1"
}

# build SRC_DIR OUT_DIR FLAGS...: objects and bench.elf; 1 with cc.log on failure.
build() {
    local s=$1 o=$2 f
    shift 2
    mkdir -p "$o"
    for f in model model_weights tvmrt; do
        arm-none-eabi-gcc "$@" -Wall -Wextra -c "$s/$f.c" -o "$o/$f.o" 2> "$o/cc.log" || return 1
    done
    arm-none-eabi-gcc "$@" -Wall -Wextra -c "$here/bench_main.c" -o "$o/bench_main.o" 2> "$o/cc.log" &&
    arm-none-eabi-gcc $A -O2 -c "$root/test/arm/startup.c" -o "$o/startup.o" 2> "$o/cc.log" &&
    arm-none-eabi-gcc $A "$o"/*.o --specs=rdimon.specs -nostartfiles -T "$root/test/arm/mps2-an386.ld" \
        -lm -o "$o/bench.elf" 2> "$o/cc.log"
}

# qrun ELF LOG [PLUGIN-ARGS]: one qemu run; the plugin argument is optional.
qrun() {
    local elf=$1 log=$2
    shift 2
    timeout -k 5 "$timeout_s" $QEMU "$@" -kernel "$elf" > "$log" 2>&1
}

# measure MODEL VARIANT ONNX FLAGS...: one row of results.tsv.
measure() {
    local m=$1 var=$2 onnx=$3 d="$work/$1-$2" flags cal run out tool=$tvmcc
    local est=- m4c=- prof=- b e
    shift 3
    [ "$var" = baseline ] && tool=$baseline_tvmcc
    rm -rf "$d"
    if ! "$tool" "$onnx" -t cortex-m4 -o "$d" --name model "$@" > "$work/$m-$var.tvmcc.log" 2>&1; then
        echo "FAIL $m $var: tvmcc: $(head -1 "$work/$m-$var.tvmcc.log")"; status=1; return
    fi
    # The target's flags, exactly as NAME.mk gives them to a firmware build.
    flags="$(sed -n 's/^MODEL_CFLAGS := //p' "$d/model.mk" | sed "s|\$(MODEL_DIR)|$d|") $EXTRA_CFLAGS"
    build "$d" "$d" $flags || { echo "FAIL $m $var: cc: $(head -1 "$d/cc.log")"; status=1; return; }
    marks "$d/marks.txt" "$d/bench.elf" '^bench_mark_(begin|end)$'
    if [ -n "$m4est" ] && qrun "$d/bench.elf" "$d/run.log" \
            -plugin "$m4est,out=$d/m4est.txt,marks=$d/marks.txt${M4EST_ARGS:+,$M4EST_ARGS}"; then
        est=$d/m4est.txt
    elif ! qrun "$d/bench.elf" "$d/run.log"; then
        echo "FAIL $m $var: qemu exit $?: $(head -1 "$d/run.log")"; status=1; return
    elif [ -n "$m4est" ]; then
        printf 'm4est %s %s\tqemu failed with the plugin\n' "$m" "$var" >> "$notes"
    fi
    cal=$(sed -n 's/^calib: //p' "$d/run.log")
    run=$(sed -n 's/^run: //p' "$d/run.log")
    out=$(sed -n 's/^out: //p' "$d/run.log")
    # The independent estimator, marks on the same two functions.
    if [ -n "$m4cycles" ]; then
        b=$(awk '$2 == "bench_mark_begin" { print $1 }' "$d/marks.txt")
        e=$(awk '$2 == "bench_mark_end" { print $1 }' "$d/marks.txt")
        if qrun "$d/bench.elf" "$d/m4cycles.run.log" -d plugin -D "$d/m4cycles.txt" \
                -plugin "$m4cycles,mark=0x$b,mark=0x$e"; then
            m4c=$d/m4cycles.txt
        else
            printf 'm4cycles %s %s\tqemu failed with the plugin\n' "$m" "$var" >> "$notes"
        fi
    fi
    # Per kernel: every kernel out of line, marks on their entries.
    if [ "$profile" != 0 ] && [ "$var" != baseline ] && [ -n "$m4est" ]; then
        if build "$d" "$d/prof" $flags -fno-inline -fno-ipa-icf; then
            marks "$d/prof/marks.txt" "$d/prof/bench.elf" '^(bench_mark_(begin|end)|k[0-9]+_[A-Za-z0-9_]*([.].*)?)$'
            qrun "$d/prof/bench.elf" "$d/prof/run.log" \
                -plugin "$m4est,out=$d/prof/m4est.txt,marks=$d/prof/marks.txt${M4EST_ARGS:+,$M4EST_ARGS}" &&
                prof=$d/prof/m4est.txt
        fi
        [ "$prof" = - ] && printf 'profile %s %s\tthe per-kernel build failed (see %s)\n' "$m" "$var" "$d/prof" >> "$notes"
    fi
    arm-none-eabi-size "$d/model.o" "$d/model_weights.o" "$d/tvmrt.o" > "$d/size.txt"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$var" "$cal" "$run" "$out" \
        "$(awk 'NR > 1 { t += $1; dt += $2; b += $3 } END { print t, dt, b }' "$d/size.txt")" \
        "$d/model.json" "$est" "$m4c" "$prof" "$onnx" >> "$tsv"
    echo "ok   $m $var: run $run, calib $cal"
}

for m in $models; do
    measure "$m" tvmcc "$work/$m.onnx"
    measure "$m" baseline "$work/$m.onnx" $baseline
    case " $int8_models " in
    *" $m "*) measure "$m" int8 "$work/${m}_int8.onnx" ;;
    esac
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

"$python" "$here/report.py" "$tsv" "$rt/size.txt" "$baseline" "$notes" "$work/m4est-check.txt" "$about" > "$results" ||
    { echo "report.py failed"; exit 1; }
cat "$results"
echo "wrote $results"
exit $status
