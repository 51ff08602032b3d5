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
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${BENCH_WORK:-$root/build/bench-aarch64}
tvmcc=${TVMCC:-$root/tvmcc}
python=${PYTHON:-/usr/bin/python3}
models=${*:-resnet8 mobilenet}
flags="-std=c99 -O3 -ffp-contract=fast"
mkdir -p "$work"
"$python" "$here/gen_models.py" "$work" $models || exit 1
status=0
for m in $models; do
    for var in tvmcc baseline; do
        tool=$tvmcc
        if [ $var = baseline ]; then
            [ -n "${BASELINE_TVMCC:-}" ] || continue
            tool=$BASELINE_TVMCC
        fi
        d="$work/$m-$var"
        rm -rf "$d"
        "$tool" "$work/$m.onnx" -t aarch64 -o "$d" --name model > "$d.log" 2>&1 &&
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
        echo "$m $var $(($2 - $1)) $(grep '^out:' "$d/out.txt")"
    done
done
exit $status
