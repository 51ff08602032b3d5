#!/usr/bin/env bash
# bench/arm/aarch64.sh: guest instructions per model_run on AArch64 under
# qemu-aarch64 (user mode), tvmcc against a baseline tvmcc.
#
#   BASELINE_TVMCC=path/to/other/tvmcc bench/arm/aarch64.sh [MODEL...]
#
# MODEL: names from gen_models.py (default: resnet8 mobilenet). Each model
# is compiled with -t aarch64 by $TVMCC (default ./tvmcc) and, when
# BASELINE_TVMCC is set, by that binary too; both are built with the same
# flags (aarch64.json's: -std=c99 -O3 -ffp-contract=fast, -static) and
# bench_aarch64.c, and run under qemu-aarch64 -d in_asm,exec,nochain with 1
# and with 2 calls of model_run; the difference of the two instruction
# counts (count_insns.py) is one model_run, without start-up and libc.
# Prints "MODEL VARIANT INSTRUCTIONS OUTPUT-LINE" per build. The logs are
# large (about 130 MB for mobilenet) and deleted after counting.
#
# INT8=1: the models quantized by `tvmcc quantize --calib random:8` (as
# bench/arm/run.sh does: per-channel symmetric int8 weights, int8
# activations from 8 random inputs, seed 0), compiled and run instead of the
# float ones (variant names get "-int8"). EXTRA_CFLAGS is appended to the
# flags of both builds (e.g. -march=armv8.2-a+dotprod for SDOT);
# TARGET replaces aarch64 (e.g. aarch64-dotprod, or a target file) for
# $TVMCC, BASELINE_TARGET for the baseline.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${BENCH_WORK:-$root/build/bench-aarch64}
tvmcc=${TVMCC:-$root/tvmcc}
python=${PYTHON:-/usr/bin/python3}
models=${*:-resnet8 mobilenet}
flags="-std=c99 -O3 -ffp-contract=fast ${EXTRA_CFLAGS:-}"
target=${TARGET:-aarch64}
mkdir -p "$work"
"$python" "$here/gen_models.py" "$work" $models || exit 1
status=0
suffix=""
if [ "${INT8:-0}" != 0 ]; then
    suffix=_int8
    for m in $models; do
        "$tvmcc" quantize "$work/$m.onnx" --calib random:8 -o "$work/${m}_int8.onnx" \
            > "$work/${m}_int8.quantize.log" 2>&1 ||
            { echo "FAIL $m int8: tvmcc quantize: $(tail -1 "$work/${m}_int8.quantize.log")"; exit 1; }
    done
fi
for m in $models; do
    for var in tvmcc baseline; do
        tool=$tvmcc
        t=$target
        if [ $var = baseline ]; then
            [ -n "${BASELINE_TVMCC:-}" ] || continue
            tool=$BASELINE_TVMCC
            t=${BASELINE_TARGET:-aarch64}
        fi
        d="$work/$m$suffix-$var"
        rm -rf "$d"
        "$tool" "$work/$m$suffix.onnx" -t "$t" -o "$d" --name model > "$d.log" 2>&1 &&
        aarch64-linux-gnu-gcc -I"$d" $flags -static "$d"/*.c "$here/bench_aarch64.c" -lm -o "$d/bench" ||
            { echo "FAIL $m $var"; status=1; continue; }
        counts=""
        for runs in 1 2; do
            qemu-aarch64 -d in_asm,exec,nochain -D "$d/qemu.log" "$d/bench" $runs > "$d/out.txt" ||
                { echo "FAIL $m $var: run"; status=1; }
            counts="$counts $("$python" "$here/count_insns.py" "$d/qemu.log")"
            rm -f "$d/qemu.log"
        done
        set -- $counts
        echo "$m$suffix $var $(($2 - $1)) $(grep '^out:' "$d/out.txt")"
    done
done
exit $status
