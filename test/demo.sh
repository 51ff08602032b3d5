#!/bin/sh
# The demo (make demo): generate a small CNN with onnx.helper, compile it with
# tvmcc, build the emitted C with the system cc and test/driver.c, run it and
# compare with the output numpy computed. Everything goes to build/demo/.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PYTHON=${PYTHON:-/usr/bin/python3}
TVMCC=${TVMCC:-./tvmcc}
CC=${CC:-cc}
d=build/demo

rm -rf "$d"
mkdir -p "$d"
"$PYTHON" test/models/make_demo.py "$d"
echo "demo: $TVMCC $d/model.onnx -o $d/out"
"$TVMCC" "$d/model.onnx" -o "$d/out"
$CC -std=c99 -Wall -Wextra -pedantic -O2 -I "$d/out" "$d"/out/*.c test/driver.c -lm -o "$d/driver"
"$d/driver" "$d/input.bin" -o "$d/output.bin"
"$PYTHON" test/models/make_demo.py --check "$d/expected.bin" "$d/output.bin"
