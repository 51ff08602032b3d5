#!/bin/sh
# Golden tests: for each model of models.py and each dump in DUMPS, the
# output of `tvmcc MODEL DUMP` must equal test/golden/MODEL.DUMPNAME.txt;
# then a few models' graphs after the layout pass for a given target
# (MODEL.layout-TARGET.txt).
#   test/golden/run.sh            compare
#   test/golden/run.sh --update   rewrite the expected files (review the diff!)
# Ends with "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
work=$root/build/golden
update=0
[ "${1:-}" = --update ] && update=1
rm -rf "$work" && mkdir -p "$work"
if ! /usr/bin/python3 "$here/models.py" "$work"; then
    echo "golden: cannot build the models (python3-onnx missing?)"
    echo "0 passed, 1 failed"
    exit 1
fi
pass=0 failed=0
# check EXPECTED GOT LABEL: counts a pass when the files are equal, else
# prints the difference (with --update, GOT first becomes EXPECTED).
check() {
    [ $update = 1 ] && cp "$2" "$1"
    if [ -f "$1" ] && cmp -s "$1" "$2"; then
        pass=$((pass + 1))
    else
        failed=$((failed + 1))
        echo "FAIL golden $3"
        [ -f "$1" ] && diff "$1" "$2" | head -20
    fi
}
for m in "$work"/*.onnx; do
    name=$(basename "$m" .onnx)
    for dump in frontend simplify dce fuse loops report report-O0; do
        case $dump in
            loops) opt=--dump-loops ;;
            report) opt=--report ;;
            report-O0) opt="--report -O0" ;;
            *) opt=--dump-ir=$dump ;;
        esac
        "$TVMCC" "$m" $opt > "$work/$name.$dump.txt" 2> "$work/$name.$dump.err"
        check "$here/$name.$dump.txt" "$work/$name.$dump.txt" "$name $dump"
    done
done
# The graph after the layout pass for a target: MODEL:TARGET, compared
# with MODEL.layout-TARGET.txt (blocked channels on the x86 targets).
for mt in nchwc_block:x86-64-avx512 nchwc_block:x86-64-avx2 nchwc_odd:x86-64-avx512; do
    name=${mt%%:*} target=${mt#*:}
    got="$work/$name.layout-$target.txt"
    "$TVMCC" "$work/$name.onnx" -t "$target" --dump-ir=layout > "$got" 2> "$got.err"
    check "$here/$name.layout-$target.txt" "$got" "$name layout -t $target"
done
echo "golden: $pass passed, $failed failed"
echo "$pass passed, $failed failed"
[ $failed = 0 ]
