#!/bin/sh
# Runs a model compiled by tvmcc on every sample of a test-data folder and
# writes its outputs in the same layout, for ort_eval.js --quant-outputs
# (the SQNR of tvmcc's build, float or int8, against the float model in
# onnxruntime).
#
#   test/quantize/tvmcc_eval.sh MODEL.onnx DATADIR OUTDIR [TVMCC OPTIONS ...]
#
# Compiles MODEL.onnx with ./tvmcc (TVMCC overrides) into OUTDIR/build
# (--name model plus the options given, e.g. --input-shape x=1,3,48,192),
# builds it with test/driver.c for the host (CC, default cc, -O2), runs it
# on DATADIR/<sample>/input_K.pb and writes OUTDIR/<sample>/output_K.pb.
# Then, e.g.:
#   node test/quantize/ort_eval.js --quant-outputs OUTDIR FLOAT.onnx DATADIR
set -e
[ $# -ge 3 ] || { echo "usage: test/quantize/tvmcc_eval.sh MODEL.onnx DATADIR OUTDIR [TVMCC OPTIONS ...]" >&2; exit 2; }
model=$1 data=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
CC=${CC:-cc}
py=/usr/bin/python3
[ -x "$TVMCC" ] || { echo "tvmcc_eval.sh: $TVMCC not built" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/build" "$out/bin"
"$TVMCC" "$model" -o "$out/build" --name model "$@" >"$out/compile.log" 2>&1 ||
    { echo "tvmcc_eval.sh: tvmcc: $(tail -1 "$out/compile.log")" >&2; exit 1; }
$CC -O2 -I "$out/build" "$out"/build/*.c "$root/test/driver.c" -lm -o "$out/build/driver" \
    >"$out/cc.log" 2>&1 || { echo "tvmcc_eval.sh: cc: $(head -1 "$out/cc.log")" >&2; exit 1; }
$py "$here/pbio.py" pb2bin "$data" "$out/bin"
nout=$($py -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["outputs"]))' "$out/build/model.json")
for d in "$out"/bin/*/; do
    d=${d%/}
    ins=$(ls "$d" | grep '^input_[0-9]*\.bin$' | sort -t_ -k2 -n | sed "s|^|$d/|")
    outs=$(k=0; while [ $k -lt $nout ]; do echo "$d/output_$k.bin"; k=$((k + 1)); done)
    "$out/build/driver" $ins -o $outs >"$out/run.log" 2>&1 ||
        { echo "tvmcc_eval.sh: $(basename "$d"): $(tail -1 "$out/run.log")" >&2; exit 1; }
done
$py "$here/pbio.py" bin2pb "$out/build/model.json" "$out/bin" "$out"
rm -rf "$out/bin"
echo "tvmcc_eval.sh: $(ls -d "$out"/*/output_0.pb | wc -l) samples in $out"
