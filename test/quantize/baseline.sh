#!/bin/sh
# The min/max post-training quantization baseline of issue 18, measured in
# onnxruntime: each model of models.sh quantized by the project's Python
# reference quantizer (test/qdq/quantize.py, int8 QDQ, per-channel weights,
# min/max activation ranges), once calibrated on random inputs (uniform in
# [-1, 1], 8 draws: quantize.py's default) and once on the calib set of
# gen_data.sh, then compared with the float model on the eval set by
# ort_eval.js.
#
#   test/quantize/baseline.sh MODELDIR DATADIR OUTDIR [MODEL ...]
#
# OUTDIR gets MODEL.random.onnx, MODEL.calib.onnx and MODEL.{random,calib}.json
# (ort_eval's report); one line per model and calibration is printed.
set -e
[ $# -ge 3 ] || { echo "usage: test/quantize/baseline.sh MODELDIR DATADIR OUTDIR [MODEL ...]" >&2; exit 2; }
models=$1 data=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
command -v node >/dev/null 2>&1 || { echo "SKIP: node not installed"; exit 77; }
$py -c 'import onnx, numpy' 2>/dev/null || { echo "SKIP: python3-onnx not installed"; exit 77; }
mkdir -p "$out"
[ $# -gt 0 ] || set -- embedding_model melspectrogram ocr_cls ocr_rec ocr_det
for m in "$@"; do
    case $m in
        embedding_model) shape=input_1=1,76,32,1 ;;
        melspectrogram) shape=input=1,1760 ;;
        ocr_cls) shape=x=1,3,48,192 ;;
        ocr_rec) shape=x=1,3,48,320 ;;
        ocr_det) shape=x=1,3,320,320 ;;
        *) echo "baseline.sh: unknown model $m" >&2; exit 2 ;;
    esac
    for how in random calib; do
        q=$out/$m.$how.onnx
        if [ $how = random ]; then
            $py "$root/test/qdq/quantize.py" "$models/$m.onnx" "$q" --input-shape $shape
        else
            $py "$root/test/qdq/quantize.py" "$models/$m.onnx" "$q" --calib "$data/calib/$m"
        fi
        printf '%-16s %-7s ' $m $how
        node "$here/ort_eval.js" "$models/$m.onnx" "$q" "$data/eval/$m" --opt-level "${ORT_Q_OPT:-all}" \
            --json "$out/$m.$how.json"
    done
done
