#!/bin/sh
# Cross-layer equalization on whole models: each MODEL.onnx is compiled by
# tvmcc as it is and, equalized, by `build/equalize_test --emit`; both C
# outputs are built with test/driver.c and run on the same random input
# (float32, uniform in [-1, 1]); the outputs must agree within 1e-4 of
# their largest magnitude (equalization changes only float rounding).
#
#   test/quantize/cle_models.sh MODEL.onnx...
#
# Prints one line per model, then "N passed, N failed".
root=$(cd "$(dirname "$0")/../.." && pwd)
work="$root/build/cle_models"
py=/usr/bin/python3
p=0 f=0
for m in "$@"; do
    name=$(basename "$m" .onnx)
    d="$work/$name"
    rm -rf "$d" && mkdir -p "$d"
    pairs=$("$root/build/equalize_test" --emit "$m" "$d/eq" 2>"$d/emit.log") || {
        echo "FAIL $name: equalize_test --emit: $(head -n 1 "$d/emit.log")"; f=$((f + 1)); continue; }
    "$root/tvmcc" "$m" -o "$d/ref" >"$d/tvmcc.log" 2>&1 || {
        echo "FAIL $name: tvmcc: $(head -n 1 "$d/tvmcc.log")"; f=$((f + 1)); continue; }
    ok=1
    for v in ref eq; do
        cc -std=c99 -O2 -I "$d/$v" "$d/$v"/*.c "$root/test/driver.c" -lm -o "$d/$v/driver" 2>"$d/cc.log" || {
            echo "FAIL $name: cc ($v): $(head -n 1 "$d/cc.log")"; ok=0; }
    done
    [ $ok = 1 ] || { f=$((f + 1)); continue; }
    # one random file per input, sized from the model's input byte counts
    ins=$("$py" - "$d/ref/model.h" "$d" <<'EOF'
import re, sys
import numpy as np
h = open(sys.argv[1]).read()
sizes = [int(x.strip().rstrip('uUlL')) for x in re.search(r'#define MODEL_INPUT_BYTES \{([^}]*)\}', h).group(1).split(',')]
rng = np.random.default_rng(7)
for i, n in enumerate(sizes):
    p = '%s/in%d.bin' % (sys.argv[2], i)
    rng.uniform(-1, 1, n // 4).astype(np.float32).tofile(p)
    print(p)
EOF
)
    nout=$(sed -n 's/#define MODEL_OUTPUT_BYTES {\(.*\)}/\1/p' "$d/ref/model.h" | tr ',' '\n' | grep -c .)
    for v in ref eq; do
        outs=""
        i=0
        while [ $i -lt "$nout" ]; do outs="$outs $d/$v/out$i.bin"; i=$((i + 1)); done
        # shellcheck disable=SC2086
        "$d/$v/driver" $ins -o $outs >"$d/run.log" 2>&1 || { echo "FAIL $name: run ($v): $(head -n 1 "$d/run.log")"; ok=0; }
    done
    [ $ok = 1 ] || { f=$((f + 1)); continue; }
    if "$py" - "$d" "$nout" "$pairs" "$name" <<'EOF'
import sys
import numpy as np
d, n, pairs, name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
worst = 0.0
for i in range(n):
    a = np.fromfile('%s/ref/out%d.bin' % (d, i), np.float32).astype(np.float64)
    b = np.fromfile('%s/eq/out%d.bin' % (d, i), np.float32).astype(np.float64)
    worst = max(worst, np.abs(a - b).max() / max(np.abs(a).max(), 1e-30))
print('%s %s: %s; outputs differ by %.3g of their magnitude' %
      ('ok' if worst <= 1e-4 else 'FAIL', name, pairs.split(': ')[-1], worst))
sys.exit(0 if worst <= 1e-4 else 1)
EOF
    then p=$((p + 1)); else f=$((f + 1)); fi
done
echo "$p passed, $f failed"
[ $f = 0 ]
