#!/usr/bin/env bash
# Same C: compares the output of two tvmcc binaries, for a behaviour-
# preserving refactor (the emitted C must stay byte-identical).
#
#   test/samec/run.sh OLD_TVMCC NEW_TVMCC [--targets LIST] [--suites LIST]
#                     [--filter REGEX] [--sample N] [-j N]
#                     [--models-only | --no-bench] [-v]
#   test/samec/run.sh --selftest
#
# For every model x target, compiles the model with both binaries, each in
# its own dir (BUILD/TARGET/SUITE/MODEL/old and .../new, both run as
# `tvmcc MODEL -o out --name model -t TARGET [--input-shape ...] $TVMCC_FLAGS`
# from that dir), and compares the exit status, stdout and stderr (after
# replacing the binaries' paths, the pair's dirs and tvmcc's temp dir
# suffixes) and every file under out/ byte for byte (names and modes too).
# A pair is one of:
#   same      identical output (exit 0, same messages, same files)
#   refused   both refused with the same exit status and message
#   differ    a file, a message or the exit status differs (first differing
#             file and line; every difference in BUILD/.../diff.txt)
#   onefails  one binary exits 0 and the other not
#   timeout   either compile took over $SAMEC_TIMEOUT s (default 300)
# same and refused pass; the pair's dirs are then removed (the others are
# kept for inspection, with the differing files only). Prints per-target
# and total counts, every failing pair with its dir (200 without -v; all in
# BUILD/results.txt), and as the last line "N passed, N failed". Exit 0
# when every pair passed, 1 otherwise, 2 on a usage error.
#
# Models: the conformance suites node, pytorch-converted, pytorch-operator,
# simple ($TESTDATA, default /usr/share/libonnx-testdata/data; symbolic
# input dims bound from test_data_set_0 with --input-shape, exactly as
# test/conformance/run.sh does) and the bench models: suite "bench",
# bench/run.sh's models, exported (when missing) into build/bench/ by
# bench/export_models.py, and suite "bench-arm", every model of
# bench/arm/gen_models.py, written (when missing) into build/bench-arm/.
#   --suites LIST    comma or space separated, from the six above (default all)
#   --no-bench       the four conformance suites only
#   --models-only    the bench models only (bench, bench-arm)
#   --targets LIST   comma or space separated (default every targets/*.json)
#   --filter REGEX   models whose SUITE/NAME matches (grep -E)
#   --sample N       one model in N, chosen by a checksum of SUITE/NAME (the
#                    same models on every target)
#   -j N             pairs compiled in parallel (default 2)
#   -v               one line per pair
#   --selftest       checks this script on 3 small models (one refused) x 2
#                    targets: ./tvmcc against itself passes (4 same, 2
#                    refused alike); against a copy with one byte of the
#                    format of model.c's header comment changed it fails
#                    naming out/model.c, line 1, col 24; against a wrapper
#                    that refuses every model it fails as "onefails"; against
#                    one that adds a warning it fails naming stderr
#
# Environment: TESTDATA, TENSORTOOL (default build/tensortool), TVMCC_FLAGS
# (extra options for both), SAMEC_TIMEOUT, SAMEC_WORK (work dir instead of
# build/samec; concurrent runs with the same dir wait for each other),
# PYTHON (for the bench generators, default /usr/bin/python3), BENCH_WORK
# (bench-arm models dir, as bench/arm/run.sh; default build/bench-arm).
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
conformance_suites="node pytorch-converted pytorch-operator simple"
bench_suites="bench bench-arm"

# ---------------------------------------------------------------- worker --
# One pair: "run.sh --worker TARGET SUITE/NAME" writes one line
# "TARGET<TAB>SUITE/NAME<TAB>category<TAB>detail" to .results.
clip() { tr '\t\r' '  ' | cut -c1-"${1:-160}"; }

model_path() {
    case ${1%%/*} in
        bench) printf '%s/%s.onnx' "$BENCH_DIR" "${1#*/}" ;;
        bench-arm) printf '%s/%s.onnx' "$BENCH_ARM_DIR" "${1#*/}" ;;
        *) printf '%s/%s/model.onnx' "$TESTDATA" "$1" ;;
    esac
}

# Replaces run-dependent strings of a message file in place.
normalize() {
    sed -i -e "s|$BIN_DIR/old/tvmcc|TVMCC|g" -e "s|$BIN_DIR/new/tvmcc|TVMCC|g" \
        -e "s|$2/old|PAIR|g" -e "s|$2/new|PAIR|g" \
        -e 's|\.tvmcc-tmp-[A-Za-z0-9]\{6\}|.tvmcc-tmp-XXXXXX|g' "$1"
}

# first_diff A B: "line L col C: old: ...|new: ..." for two files, the
# differing lines shown from a little before their first differing column.
first_diff() {
    local c l
    c=$(cmp "$1" "$2" 2>&1)
    case $c in
        *"EOF on $1"*|*"EOF on $2"*)
            # one file is a prefix of the other
            local short=old long=$2 other=new
            case $c in *"EOF on $2"*) short=new long=$1 other=old ;; esac
            l=$(printf '%s' "$c" | sed -n 's/.*, line \([0-9]*\).*/\1/p')
            printf '%s ends after line %s, %s goes on: %s' "$short" "${l:-0}" "$other" \
                "$(sed -n "$((${l:-0} + 1))p" "$long" | clip 100)"
            return ;;
    esac
    l=$(printf '%s' "$c" | sed -n 's/.*, line \([0-9]*\)$/\1/p')
    awk -v l="$l" 'FNR == l { if (FILENAME == ARGV[1]) a = $0; else b = $0 }
        END { for (i = 1; i <= length(a) && substr(a, i, 1) == substr(b, i, 1); i++) ;
              s = i > 30 ? i - 30 : 1; p = s > 1 ? "..." : ""
              printf "line %d col %d: old: %s%s | new: %s%s", l, i, p, substr(a, s, 60), p, substr(b, s, 60) }' \
        "$1" "$2" | clip 220
}

worker() {
    local target=$1 id=$2 suite=${2%%/*} name=${2#*/}
    local pair="$WORKROOT/$target/$suite/$name"
    local res="$WORKROOT/.results/${target}__${suite}__$name"
    local model side pb info shape_args=() so sn
    model=$(model_path "$id")

    result() { printf '%s\t%s\t%s\t%s\n' "$target" "$id" "$1" "$2" > "$res"; exit 0; }

    rm -rf "$pair" && mkdir -p "$pair/old" "$pair/new" || result harness "cannot create $pair"
    case " $conformance_suites " in *" $suite "*)
        # As test/conformance/run.sh: bind symbolic dims from data set 0.
        for pb in "$TESTDATA/$id"/test_data_set_0/input_*.pb; do
            [ -f "$pb" ] || continue
            info=$("$TENSORTOOL" info "$pb" 2>/dev/null) || continue
            set -- $info
            [ $# -eq 3 ] && [ "$1" != "-" ] && [ "$3" != "[]" ] || continue
            shape_args+=(--input-shape "$1=$(printf '%s' "$3" | tr -d '[]')")
        done ;;
    esac
    for side in old new; do
        (cd "$pair/$side" && timeout -k 5 "$SAMEC_TIMEOUT" "$BIN_DIR/$side/tvmcc" "$model" -o out \
            --name model "${shape_args[@]}" -t "$target" ${TVMCC_FLAGS:-} >stdout 2>stderr
         echo $? > status)
        normalize "$pair/$side/stdout" "$pair"
        normalize "$pair/$side/stderr" "$pair"
    done
    so=$(cat "$pair/old/status") sn=$(cat "$pair/new/status")
    [ "$so" = 124 ] || [ "$sn" = 124 ] && result timeout "old exit $so, new exit $sn (timeout ${SAMEC_TIMEOUT} s = 124)"
    if [ "$so" = 0 ] && [ "$sn" != 0 ]; then
        result onefails "new exit $sn: $(grep -m1 . "$pair/new/stderr" | clip)"
    elif [ "$so" != 0 ] && [ "$sn" = 0 ]; then
        result onefails "old exit $so: $(grep -m1 . "$pair/old/stderr" | clip)"
    fi

    # Every difference into diff.txt, the first one into the result line.
    local diffs="$pair/diff.txt" f
    : > "$diffs"
    [ "$so" = "$sn" ] || echo "exit status: old $so, new $sn" >> "$diffs"
    for f in stderr stdout; do
        cmp -s "$pair/old/$f" "$pair/new/$f" ||
            echo "$f $(first_diff "$pair/old/$f" "$pair/new/$f")" >> "$diffs"
    done
    for side in old new; do
        if [ -d "$pair/$side/out" ]; then
            (cd "$pair/$side/out" && find . -mindepth 1 -printf '%P %M\n' | sort) > "$pair/$side.files"
        else
            : > "$pair/$side.files"
        fi
    done
    if ! cmp -s "$pair/old.files" "$pair/new.files"; then
        diff "$pair/old.files" "$pair/new.files" | sed -n 's/^</only in (or mode in) old:/p; s/^>/only in (or mode in) new:/p' >> "$diffs"
    fi
    while read -r f _; do
        [ -f "$pair/old/out/$f" ] && [ -f "$pair/new/out/$f" ] || continue
        cmp -s "$pair/old/out/$f" "$pair/new/out/$f" ||
            echo "out/$f $(first_diff "$pair/old/out/$f" "$pair/new/out/$f")" >> "$diffs"
    done < "$pair/old.files"
    # A kept pair keeps only the files that differ (a bench model's weights
    # are 100+ MB); old.files and new.files list them all.
    [ -s "$diffs" ] && while read -r f _; do
        [ -f "$pair/old/out/$f" ] && [ -f "$pair/new/out/$f" ] &&
            cmp -s "$pair/old/out/$f" "$pair/new/out/$f" && rm -f "$pair/old/out/$f" "$pair/new/out/$f"
    done < "$pair/old.files"
    if [ -s "$diffs" ]; then
        local n more=""
        n=$(wc -l < "$diffs")
        [ "$n" -gt 1 ] && more=" (+$((n - 1)) more)"
        result differ "$(head -1 "$diffs" | clip 220)$more"
    fi
    local msg
    msg=$(grep -m1 . "$pair/old/stderr" | clip)
    rm -rf "$pair"
    [ "$so" = 0 ] && result same ""
    result refused "exit $so: $msg"
}

if [ "${1:-}" = --worker ]; then
    worker "$2" "$3"
fi

# ---------------------------------------------------------------- selftest --
selftest() {
    local st="$root/build/samec-selftest" out pass=0 failed=0
    local args=(--suites node --filter '^node/test_(relu|add|hammingwindow_expanded)$' --targets c,arm --sample 1 -j 2)
    rm -rf "$st" && mkdir -p "$st"
    [ -x "$root/tvmcc" ] || { echo "samec selftest: $root/tvmcc not built (make)"; echo "0 passed, 1 failed"; exit 1; }
    # One character of model.c's header comment changed ("by" -> "bY").
    perl -0777 -pe 's/%s\.c: generated by/%s.c: generated bY/' "$root/tvmcc" > "$st/tvmcc-patched" &&
        chmod +x "$st/tvmcc-patched" && ! cmp -s "$root/tvmcc" "$st/tvmcc-patched" ||
        { echo "samec selftest: cannot patch tvmcc"; echo "0 passed, 1 failed"; exit 1; }
    printf '#!/bin/sh\necho "tvmcc: refused by the selftest" >&2\nexit 1\n' > "$st/tvmcc-refuses"
    printf '#!/bin/sh\n"%s" "$@"; rc=$?\necho "tvmcc: warning: printed by the selftest" >&2\nexit $rc\n' \
        "$root/tvmcc" > "$st/tvmcc-warns"
    chmod +x "$st/tvmcc-refuses" "$st/tvmcc-warns"
    check() { # NAME EXPECTED_STATUS GREP_PATTERN OLD NEW
        local name=$1 want=$2 pat=$3 rc
        SAMEC_WORK="$st/$name" "$0" "$4" "$5" "${args[@]}" > "$st/$name.log" 2>&1
        rc=$?
        if [ $rc = "$want" ] && grep -qE "$pat" "$st/$name.log"; then
            echo "PASS samec-selftest $name"; pass=$((pass + 1))
        else
            echo "FAIL samec-selftest $name: exit $rc (want $want) or no line matching '$pat' in $st/$name.log"
            failed=$((failed + 1))
        fi
    }
    check same 0 'total +6 pairs: 4 same, 2 refused alike, 0 differ.*' "$root/tvmcc" "$root/tvmcc"
    check differ 1 'differ +build/samec-selftest/differ/c/node/test_relu: out/model\.c line 1 col 24: old: /\* model\.c: generated by .* \| new: /\* model\.c: generated bY' \
        "$root/tvmcc" "$st/tvmcc-patched"
    check onefails 1 'onefails +build/samec-selftest/onefails/arm/node/test_add: new exit 1: tvmcc: refused by the selftest' \
        "$root/tvmcc" "$st/tvmcc-refuses"
    check warning 1 'differ +build/samec-selftest/warning/c/node/test_relu: stderr old ends after line 0, new goes on: tvmcc: warning: printed by the selftest' \
        "$root/tvmcc" "$st/tvmcc-warns"
    echo "$pass passed, $failed failed"
    [ $failed = 0 ]
    exit
}

# ------------------------------------------------------------------ main --
usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}

[ "${1:-}" = --selftest ] && selftest
old="" new="" targets="" suites="" filter="" sample=1 jobs=2 verbose=0 bench=both
while [ $# -gt 0 ]; do
    case $1 in
        --targets) targets=${2:?}; shift ;;
        --targets=*) targets=${1#*=} ;;
        --suites) suites=${2:?}; shift ;;
        --suites=*) suites=${1#*=} ;;
        --filter) filter=${2:?}; shift ;;
        --filter=*) filter=${1#*=} ;;
        --sample) sample=${2:?}; shift ;;
        --sample=*) sample=${1#*=} ;;
        -j) jobs=${2:?}; shift ;;
        -j*) jobs=${1#-j} ;;
        --no-bench) bench=no ;;
        --models-only) bench=only ;;
        -v) verbose=1 ;;
        -h|--help) usage ;;
        -*) echo "samec: unknown option $1" >&2; usage ;;
        *) if [ -z "$old" ]; then old=$1; elif [ -z "$new" ]; then new=$1
           else echo "samec: too many arguments: $1" >&2; usage; fi ;;
    esac
    shift
done
[ -n "$new" ] || { echo "samec: OLD_TVMCC and NEW_TVMCC are required" >&2; usage; }
case $sample$jobs in *[!0-9]*) echo "samec: --sample and -j take numbers" >&2; exit 2 ;; esac
[ "$sample" -ge 1 ] && [ "$jobs" -ge 1 ] || { echo "samec: --sample and -j must be at least 1" >&2; exit 2; }

suites=${suites//,/ }
if [ -z "$suites" ] || [ "$suites" = all ]; then suites="$conformance_suites $bench_suites"; fi
case $bench in
    no) s=""; for x in $suites; do case " $bench_suites " in *" $x "*) ;; *) s="$s $x" ;; esac; done; suites=$s ;;
    only) s=""; for x in $suites; do case " $bench_suites " in *" $x "*) s="$s $x" ;; esac; done; suites=$s ;;
esac
suites=$(printf '%s\n' $suites | awk '!seen[$0]++' | tr '\n' ' ')
suites=${suites% }
[ -n "$suites" ] || { echo "samec: no suites left" >&2; exit 2; }
for x in $suites; do
    case " $conformance_suites $bench_suites " in *" $x "*) ;;
        *) echo "samec: unknown suite $x (one of: $conformance_suites $bench_suites)" >&2; exit 2 ;; esac
done
if [ -z "$targets" ]; then
    targets=$(cd "$root/targets" && ls *.json | sed 's/\.json$//' | tr '\n' ' ')
fi
targets=${targets//,/ }
targets=$(printf '%s\n' $targets | awk '!seen[$0]++' | tr '\n' ' ')
targets=${targets% }

export TESTDATA=${TESTDATA:-/usr/share/libonnx-testdata/data}
export TENSORTOOL=${TENSORTOOL:-$root/build/tensortool}
export TVMCC_FLAGS=${TVMCC_FLAGS:-}
export SAMEC_TIMEOUT=${SAMEC_TIMEOUT:-300}
export WORKROOT=$(realpath -m "${SAMEC_WORK:-$root/build/samec}")
export BIN_DIR="$WORKROOT/bin"
export BENCH_DIR="$root/build/bench" BENCH_ARM_DIR="${BENCH_WORK:-$root/build/bench-arm}"
export conformance_suites
PYTHON=${PYTHON:-/usr/bin/python3}

fatal() { echo "samec: $*"; echo "0 passed, 1 failed"; exit 1; }
for b in "$old" "$new"; do
    [ -x "$b" ] && [ -f "$b" ] || fatal "$b is not an executable file"
done
[ -x "$TENSORTOOL" ] || fatal "$TENSORTOOL not built (make)"
case " $suites " in *" node "*|*" pytorch-"*|*" simple "*)
    [ -d "$TESTDATA" ] || fatal "no test data in $TESTDATA (scripts/deps.sh test)" ;;
esac

mkdir -p "$WORKROOT"
exec 9> "$WORKROOT/.lock"
if ! flock -n 9; then
    echo "samec: waiting for another run using $WORKROOT (set SAMEC_WORK to use another dir)"
    flock 9
fi
# Nothing of an earlier run is left (kept pairs of other targets included).
find "$WORKROOT" -mindepth 1 -maxdepth 1 ! -name .lock -exec rm -rf {} +
mkdir -p "$WORKROOT/.results" "$BIN_DIR/old" "$BIN_DIR/new"
# Private copies with the same base name: a rebuild during the run cannot
# change them, and a message quoting argv[0] reads the same for both.
cp "$old" "$BIN_DIR/old/tvmcc" && cp "$new" "$BIN_DIR/new/tvmcc" || fatal "cannot copy the binaries"

# The bench models, by the bench scripts' own generators (nothing is run).
harness="$WORKROOT/.harness"
: > "$harness"
bench_models="" bench_arm_models=""
case " $suites " in *" bench "*)
    bench_models=$(sed -n 's/^all_models="\(.*\)"$/\1/p' "$root/bench/run.sh")
    [ -n "$bench_models" ] || fatal "cannot read the model list of bench/run.sh"
    missing=""
    for m in $bench_models; do
        [ -f "$BENCH_DIR/$m.onnx" ] && [ -f "$BENCH_DIR/$m.input.bin" ] && [ -f "$BENCH_DIR/$m.shape" ] || missing="$missing $m"
    done
    if [ -n "$missing" ]; then
        echo "samec: exporting$missing into ${BENCH_DIR#"$root"/}/ (bench/export_models.py)"
        "$PYTHON" "$root/bench/export_models.py" export "$BENCH_DIR" $missing > "$WORKROOT/export-bench.log" 2>&1 ||
            echo "samec: bench/export_models.py failed: $(grep -m1 -i error "$WORKROOT/export-bench.log")"
    fi ;;
esac
case " $suites " in *" bench-arm "*)
    bench_arm_models=$(cd "$root/bench/arm" && "$PYTHON" -c 'import gen_models; print(" ".join(gen_models.MODELS))' 2>&1) ||
        fatal "cannot read the model list of bench/arm/gen_models.py: $bench_arm_models"
    missing=""
    for m in $bench_arm_models; do [ -f "$BENCH_ARM_DIR/$m.onnx" ] || missing="$missing $m"; done
    if [ -n "$missing" ]; then
        echo "samec: writing$missing into ${BENCH_ARM_DIR#"$root"/}/ (bench/arm/gen_models.py)"
        "$PYTHON" "$root/bench/arm/gen_models.py" "$BENCH_ARM_DIR" $missing > "$WORKROOT/export-bench-arm.log" 2>&1 ||
            echo "samec: bench/arm/gen_models.py failed: $(grep -m1 -i error "$WORKROOT/export-bench-arm.log")"
    fi ;;
esac

# The model list (SUITE/NAME, sorted, filtered, sampled), then model x target.
models="$WORKROOT/.models"
for s in $suites; do
    case $s in
        bench) for m in $bench_models; do printf 'bench/%s\n' "$m"; done ;;
        bench-arm) for m in $bench_arm_models; do printf 'bench-arm/%s\n' "$m"; done ;;
        *) for d in "$TESTDATA/$s"/*/; do
               [ -f "$d/model.onnx" ] && printf '%s/%s\n' "$s" "$(basename "$d")"
           done ;;
    esac
done | sort | { if [ -n "$filter" ]; then grep -E -- "$filter" || true; else cat; fi; } |
    while IFS= read -r m; do
        [ "$sample" -le 1 ] || [ $(( $(printf '%s' "$m" | cksum | cut -d' ' -f1) % sample )) = 0 ] && printf '%s\n' "$m"
    done > "$models"
# A bench model its generator did not write is a failure on every target.
list="$WORKROOT/.pairs"
while IFS= read -r m; do
    for t in $targets; do
        case $m in
            bench/*|bench-arm/*) if [ ! -f "$(model_path "$m")" ]; then
                printf '%s\t%s\tharness\tnot generated (see %s)\n' "$t" "$m" "${WORKROOT#"$root"/}/export-${m%%/*}.log" >> "$harness"
                continue; fi ;;
        esac
        printf '%s %s\n' "$t" "$m"
    done
done < "$models" > "$list"

nmodels=$(wc -l < "$models")
extra=""
[ "$sample" -gt 1 ] && extra=", 1 in $sample sampled"
[ -n "$filter" ] && extra="$extra, filter $filter"
[ -n "$TVMCC_FLAGS" ] && extra="$extra, TVMCC_FLAGS=$TVMCC_FLAGS"
echo "samec: $nmodels models x $(echo $targets | wc -w) targets, suites: $suites, -j $jobs$extra"
echo "  old: $old"
echo "  new: $new"
start=$(date +%s)
xargs -P "$jobs" -L 1 "$0" --worker < "$list"
secs=$(( $(date +%s) - start ))
for t in $targets; do [ -d "$WORKROOT/$t" ] && find "$WORKROOT/$t" -depth -type d -empty -delete; done

results="$WORKROOT/results.txt"
{
    while read -r t m; do
        f="$WORKROOT/.results/${t}__${m%%/*}__${m#*/}"
        if [ -s "$f" ]; then cat "$f"; else printf '%s\t%s\tharness\tno result (worker crashed)\n' "$t" "$m"; fi
    done < "$list"
    cat "$harness"
} > "$results"

[ $verbose = 1 ] && awk -F'\t' '{ printf "%-8s %-14s %s  %s\n", toupper($3), $1, $2, $4 }' "$results"

summary() { # awk over results lines: counts by category
    awk -F'\t' -v label="$1" '{ n++; c[$3]++ }
        END { printf "%-16s %5d pairs: %d same, %d refused alike, %d differ, %d onefails, %d timeout, %d harness\n",
              label, n, c["same"], c["refused"], c["differ"], c["onefails"], c["timeout"], c["harness"] }'
}
for t in $targets; do
    awk -F'\t' -v t="$t" '$1 == t' "$results" | summary "$t"
done
summary total < "$results"
echo "elapsed: ${secs} s ($(wc -l < "$list") pairs, $(( $(wc -l < "$list") * 2 )) compiles)"

fails=$(awk -F'\t' '$3 != "same" && $3 != "refused"' "$results")
if [ -n "$fails" ]; then
    echo "differences (TARGET/SUITE/MODEL dirs kept: old/ and new/ with out/, status, stderr, stdout; diff.txt):"
    printf '%s\n' "$fails" | awk -F'\t' -v all=$verbose -v w="${WORKROOT#"$root"/}" '
        all || NR <= 200 { printf "  %-8s %s/%s/%s: %s\n", $3, w, $1, $2, $4 }
        END { if (!all && NR > 200) printf "  ... %d more (-v, or %s/results.txt)\n", NR - 200, w }'
    echo "failing pairs by category and first difference:"
    printf '%s\n' "$fails" | awk -F'\t' '{ k = $3; if ($3 == "differ") { split($4, w, " "); k = k " " w[1] } c[k]++ }
        END { for (k in c) printf "  %6d  %s\n", c[k], k }' | sort -k1,1nr -k2
fi
awk -F'\t' '{ if ($3 == "same" || $3 == "refused") p++; else f++ }
    END { printf "%d passed, %d failed\n", p, f }' "$results"
[ -z "$fails" ]
