#!/usr/bin/env bash
# tvmcc's emitted code against onnxruntime-node, interleaved, on this machine.
#
#   bench/run.sh [--quick] [--rounds N] [--budget MS] [--threads "1 2"]
#                [--variant NAME=FLAGS]... [--variant-models "M..."] [--no-variants]
#                [--no-c] [--out FILE] [MODEL...]
#
# MODEL: resnet18 mobilenet_v2 squeezenet1_1 shufflenet_v2_x1_0 efficientnet_b0
# regnet_x_400mf resnext50_32x4d googlenet (grouped convs of group width 16;
# of widths 4 to 32; an Inception-style network) gemm1024 resnet18_bn mobilenet_v2_bn resnet18_int8 mobilenet_v2_int8 (the default
# is all of them; the _int8 models are the float ones quantized to QDQ int8 by
# $QUANTIZE, default test/qdq/quantize.py (per-channel int8 weights, int8
# activations), with the float model's input; skipped when it is missing; the _bn
# models keep their BatchNormalization nodes, as exporters that do not fold
# them write, and are left out of the geometric means). For each model: export it (if
# missing) with bench/export_models.py into build/bench/, compile it with
# ./tvmcc for $TARGET (default x86-64-avx512 when /proc/cpuinfo lists avx512f,
# else x86-64-avx2) and for the portable `c` target, build bench/timer.c
# against each output with `cc NAME.mk-CFLAGS -O3 -march=native` (and with
# -fopenmp for the 2-thread configuration), then run ROUNDS rounds; in each
# round every configuration runs once as its own process (warm-ups, then timed
# runs until BUDGET ms are spent), so tvmcc and onnxruntime alternate and
# share whatever the machine is doing. The order of configurations rotates
# every round. Medians are over all timed runs of all rounds.
#
# Configurations per model:
#   ort-1t     onnxruntime-node, intraOpNumThreads=1, graphOptimizationLevel all
#   tvm-1t     tvmcc -t $TARGET
#   c-1t       tvmcc -t c, built with -O3 -march=native        (--no-c drops it)
#   var-NAME   tvmcc -t $TARGET FLAGS, on --variant-models only (default
#              resnet18 mobilenet_v2 resnet18_bn mobilenet_v2_bn; default
#              variants O0=-O0 (no graph optimization: every node its own
#              kernel) and nofuse=--no-fuse (the other passes, BN folding
#              included, but no fusion), compared with tvm-1t: "fused vs
#              unfused"). A variant whose flags tvmcc rejects is skipped
#              with the reason.
#   ort-2t     onnxruntime-node, intraOpNumThreads=2   (only with 2 in --threads)
#   tvm-2t     tvm-1t's C built with -fopenmp, OMP_NUM_THREADS=2 (and
#              OMP_WAIT_POLICY=$OMP_WAIT when that is set: `passive` keeps
#              libgomp's threads from spinning at every region's end, which
#              on a host whose cores other jobs share made the 2-thread runs
#              10-30 times slower than one thread)
#
# Writes bench/results.md (or --out FILE) and keeps the raw per-run times in
# build/bench/raw/. --quick: 2 rounds, 300 ms budget, 1 warm-up. The FMA peak
# (bench/peak.c) is measured at the start and the end; the larger is kept.
#
# Environment: TARGET; ORT_ISA=avx2|host (avx2: onnxruntime with AVX-512
# hidden from cpuid, bench/isa_mask.c; the default for TARGET=x86-64-avx2
# on an AVX-512 host); MARCH (default -march=x86-64-v3 with ORT_ISA=avx2,
# else -march=native); OMP_WAIT; TVMCC, PYTHON, CC, NODE, QUANTIZE.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
# ORT_ISA: `avx2` hides AVX-512 (and AVX-VNNI, AMX) from onnxruntime, so
# that it picks the kernels an AVX2-only host gets (bench/isa_mask.c, an
# LD_PRELOAD library: CPUID faulting, Linux's cpuid_fault); `host` lets it
# see this machine. Default: avx2 for TARGET=x86-64-avx2 on a host with
# avx512f, else host.
# MARCH: the -march of every timer build and of bench/peak.c; default
# -march=x86-64-v3 when ORT_ISA=avx2 (an AVX2-only host: cc may not widen
# the generic loops to AVX-512 either), else -march=native.
NODE=${NODE:-node}
bdir="$root/build/bench"
all_models="resnet18 mobilenet_v2 squeezenet1_1 shufflenet_v2_x1_0 efficientnet_b0 regnet_x_400mf resnext50_32x4d googlenet gemm1024 resnet18_bn mobilenet_v2_bn resnet18_int8 mobilenet_v2_int8"
QUANTIZE=${QUANTIZE:-$root/test/qdq/quantize.py}

# 20 rounds of 250 ms rather than 5 of 1000: this host's speed changes in
# phases of seconds (the same binary ran 5.2 and 7.6 ms per inference in
# neighbouring rounds, onnxruntime likewise), and shorter, more numerous
# rounds spread them more evenly over the configurations that are compared.
rounds=20 budget=250 warmups=2 maxruns=50 threads="1 2" with_c=1 quick=0
variants=() variant_models="resnet18 mobilenet_v2 resnet18_bn mobilenet_v2_bn" default_variants=1
out="$here/results.md"
models=()
argv_text=""; [ $# -gt 0 ] && argv_text=$(printf "%q " "$@"); argv_text=${argv_text% }

die() { echo "bench: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1 rounds=2 budget=300 warmups=1 maxruns=10 ;;
    --rounds) rounds=${2:?}; shift ;;
    --budget) budget=${2:?}; shift ;;
    --threads) threads=${2:?}; shift ;;
    --variant) variants+=("${2:?}"); default_variants=0; shift ;;
    --variant-models) variant_models=${2?}; shift ;;
    --no-variants) variants=(); default_variants=0 ;;
    --no-c) with_c=0 ;;
    --out) out=${2:?}; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (bench/run.sh --help)" ;;
    *) case " $all_models " in
       *" $1 "*) models+=("$1") ;;
       *) die "unknown model $1 (one of: $all_models)" ;;
       esac ;;
    esac
    shift
done
[ ${#models[@]} -gt 0 ] || read -r -a models <<< "$all_models"
[ $default_variants = 1 ] && variants=("O0=-O0" "nofuse=--no-fuse")

if [ -z "${TARGET:-}" ]; then
    if grep -qw avx512f /proc/cpuinfo; then TARGET=x86-64-avx512; else TARGET=x86-64-avx2; fi
fi
if [ -z "${ORT_ISA:-}" ]; then
    ORT_ISA=host
    [ "$TARGET" = x86-64-avx2 ] && grep -qw avx512f /proc/cpuinfo && ORT_ISA=avx2
fi
case $ORT_ISA in
host) MARCH=${MARCH:--march=native} ;;
avx2) MARCH=${MARCH:--march=x86-64-v3} ;;
*) die "ORT_ISA=$ORT_ISA: one of host, avx2" ;;
esac

# ---- prerequisites ---------------------------------------------------------
[ -x "$TVMCC" ] || die "$TVMCC not built (make)"
"$PYTHON" -c 'import onnx, torch, torchvision' 2>/dev/null ||
    die "$PYTHON cannot import onnx, torch and torchvision (scripts/deps.sh)"
[ -d "$root/build/node/node_modules/onnxruntime-node" ] && command -v "$NODE" >/dev/null ||
    die "onnxruntime-node not installed (scripts/deps.sh test)"

raw="$bdir/raw"
rm -rf "$raw"
mkdir -p "$raw" "$bdir/work"
log() { echo "bench: $*" >&2; }

# ---- onnxruntime without AVX-512 (ORT_ISA=avx2) ----------------------------
ort_env=""
if [ "$ORT_ISA" = avx2 ]; then
    $CC -std=c99 -O2 -shared -fPIC "$here/isa_mask.c" -o "$bdir/isa_mask.so" -ldl 2>"$raw/isa_mask.cc.log" ||
        die "cannot build bench/isa_mask.c: $(head -1 "$raw/isa_mask.cc.log")"
    probe=$(LD_PRELOAD="$bdir/isa_mask.so" "$NODE" -e \
        'console.log(require("os").cpus().length > 0 ? "ok" : "")' 2>&1) && [ "$probe" = ok ] ||
        die "ORT_ISA=avx2: cannot hide AVX-512 from node here ($probe); ORT_ISA=host measures against onnxruntime's AVX-512 kernels"
    ort_env="env LD_PRELOAD=$bdir/isa_mask.so "
fi

# ---- the machine's FMA peak ------------------------------------------------
$CC -std=c99 -O2 $MARCH -fopenmp "$here/peak.c" -o "$bdir/peak" 2>"$raw/peak.cc.log" ||
    die "cannot build bench/peak.c: $(head -1 "$raw/peak.cc.log")"
peak1=$(OMP_NUM_THREADS=1 "$bdir/peak" 0.2) || die "peak failed"
peak2=""
case " $threads " in *" 2 "*) peak2=$(OMP_NUM_THREADS=2 "$bdir/peak" 0.2) || die "peak failed" ;; esac
log "FMA peak: 1 thread ${peak1% *}${peak2:+, 2 threads ${peak2% *}} (GFLOP/s isa threads)"

# ---- meta data for the report ---------------------------------------------
{
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "cpuid=family $(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1), model $(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "ncpu=$(grep -c '^processor' /proc/cpuinfo)"
    echo "isa=$(grep -m1 -ow -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
    echo "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "target=$TARGET"
    echo "march=$MARCH"
    echo "ort_isa=$ORT_ISA"
    echo "omp_wait=${OMP_WAIT:-}"
    echo "tvmcc=$("$TVMCC" --version 2>&1 | head -1)"
    echo "cc=$($CC --version | head -1)"
    echo "node=$("$NODE" --version)"
    echo "ort=$(sed -n 's/^ *"version": *"\(.*\)".*/\1/p' "$root/build/node/node_modules/onnxruntime-node/package.json" | head -1)"
    echo "peak1=$peak1"
    echo "peak2=$peak2"
    echo "rounds=$rounds"
    echo "budget=$budget"
    echo "warmups=$warmups"
    echo "maxruns=$maxruns"
    echo "quick=$quick"
    echo "args=$argv_text"
    echo "models=${models[*]}"
    echo "threads=$threads"
    echo "variant_models=$variant_models"
    echo "variants=${variants[*]:-}"
} > "$raw/meta.txt"

# ---- building --------------------------------------------------------------
# compile_model MODEL DIR TARGET FLAGS...: tvmcc into DIR/out; on failure
# prints the reason and returns 1 (status 2 + "unknown option" = flag rejected).
compile_model() {
    local m=$1 d=$2 t=$3; shift 3
    rm -rf "$d" && mkdir -p "$d"
    if ! timeout 600 "$TVMCC" "$bdir/$m.onnx" -t "$t" -o "$d/out" --name model "$@" > "$d/tvmcc.log" 2>&1; then
        if grep -q 'unknown option' "$d/tvmcc.log"; then
            echo "tvmcc does not accept '$*' yet: $(head -1 "$d/tvmcc.log")"
        else
            echo "tvmcc -t $t $*: $(grep -m1 . "$d/tvmcc.log")"
        fi
        return 1
    fi
}

# build_timer DIR BIN EXTRA_CFLAGS...: bench/timer.c against DIR/out.
build_timer() {
    local d=$1 bin=$2; shift 2
    local flags
    flags=$(sed -n 's/^MODEL_CFLAGS := //p' "$d/out/model.mk" | sed "s|\$(MODEL_DIR)|$d/out|g")
    # shellcheck disable=SC2086
    if ! $CC $flags -O3 $MARCH "$@" -w "$d"/out/*.c "$here/timer.c" -lm -o "$bin" \
            > "$bin.cc.log" 2>&1; then
        echo "cc: $(grep -m1 -E 'error|undefined' "$bin.cc.log")"
        return 1
    fi
    echo "$CC $flags -O3 $MARCH $* OUT/*.c bench/timer.c -lm" > "$bin.cmd"
}

# ---- per model -------------------------------------------------------------
for m in "${models[@]}"; do
    case $m in *_int8)
        # the QDQ model of the float one, with its input
        base=${m%_int8}
        if [ ! -f "$bdir/$base.onnx" ] || [ ! -f "$bdir/$base.input.bin" ] || [ ! -f "$bdir/$base.shape" ]; then
            log "exporting $base"
            "$PYTHON" "$here/export_models.py" export "$bdir" "$base" > "$raw/export-$base.log" 2>&1 ||
                { log "export of $base failed: $(grep -m1 -i error "$raw/export-$base.log")"; continue; }
        fi
        if [ ! -f "$bdir/$m.onnx" ]; then
            [ -f "$QUANTIZE" ] || { log "$m: no quantizer at $QUANTIZE (QUANTIZE=...)"; continue; }
            log "quantizing $base"
            "$PYTHON" "$QUANTIZE" "$bdir/$base.onnx" "$bdir/$m.onnx" > "$raw/quantize-$m.log" 2>&1 ||
                { log "quantizing $base failed: $(tail -1 "$raw/quantize-$m.log")"; continue; }
        fi
        cp "$bdir/$base.input.bin" "$bdir/$m.input.bin"
        cp "$bdir/$base.shape" "$bdir/$m.shape" ;;
    esac
    if [ ! -f "$bdir/$m.onnx" ] || [ ! -f "$bdir/$m.input.bin" ] || [ ! -f "$bdir/$m.shape" ]; then
        log "exporting $m"
        "$PYTHON" "$here/export_models.py" export "$bdir" "$m" > "$raw/export-$m.log" 2>&1 ||
            { log "export of $m failed: $(grep -m1 -i error "$raw/export-$m.log")"; continue; }
    fi
    shape=$(cat "$bdir/$m.shape")
    w="$bdir/work/$m" r="$raw/$m"
    mkdir -p "$w" "$r"
    configs=() # id|command, command run with eval in a subshell

    configs+=("ort-1t|$ort_env$NODE $here/ort_timer.js $bdir/$m.onnx $bdir/$m.input.bin --shape $shape --threads 1")
    echo "${ort_env:+LD_PRELOAD=build/bench/isa_mask.so (bench/isa_mask.c) }node bench/ort_timer.js build/bench/$m.onnx build/bench/$m.input.bin --shape $shape --threads 1" > "$r/ort-1t.cmd"

    log "$m: tvmcc -t $TARGET"
    if why=$(compile_model "$m" "$w/tvm" "$TARGET") && why=$(build_timer "$w/tvm" "$w/tvm/timer"); then
        configs+=("tvm-1t|$w/tvm/timer $bdir/$m.input.bin")
        printf 'tvmcc build/bench/%s.onnx -t %s -o OUT --name model\n%s\n' "$m" "$TARGET" \
            "$(cat "$w/tvm/timer.cmd")" > "$r/tvm-1t.cmd"
        echo "$(grep -c '#pragma omp parallel' "$w/tvm/out/model.c") / $(grep -c '#pragma omp simd' "$w/tvm/out/model.c")" > "$r/omp-pragmas"
        case " $threads " in *" 2 "*)
            if why2=$(build_timer "$w/tvm" "$w/tvm/timer-omp" -fopenmp); then
                configs+=("tvm-2t|env OMP_NUM_THREADS=2 ${OMP_WAIT:+OMP_WAIT_POLICY=$OMP_WAIT }$w/tvm/timer-omp $bdir/$m.input.bin")
                printf 'tvmcc build/bench/%s.onnx -t %s -o OUT --name model\n%s\nOMP_NUM_THREADS=2%s\n' \
                    "$m" "$TARGET" "$(cat "$w/tvm/timer-omp.cmd")" "${OMP_WAIT:+ OMP_WAIT_POLICY=$OMP_WAIT}" > "$r/tvm-2t.cmd"
            else
                echo "$why2" > "$r/tvm-2t.skip"
            fi ;;
        esac
    else
        echo "$why" > "$r/tvm-1t.skip"
        case " $threads " in *" 2 "*) echo "$why" > "$r/tvm-2t.skip" ;; esac
        log "$m: $why"
    fi

    if [ $with_c = 1 ]; then
        log "$m: tvmcc -t c"
        if why=$(compile_model "$m" "$w/c" c) && why=$(build_timer "$w/c" "$w/c/timer"); then
            configs+=("c-1t|$w/c/timer $bdir/$m.input.bin")
            printf 'tvmcc build/bench/%s.onnx -t c -o OUT --name model\n%s\n' "$m" \
                "$(cat "$w/c/timer.cmd")" > "$r/c-1t.cmd"
        else
            echo "$why" > "$r/c-1t.skip"
            log "$m: $why"
        fi
    fi

    case " $variant_models " in *" $m "*)
        for v in "${variants[@]}"; do
            vname=${v%%=*} vflags=${v#*=}
            log "$m: tvmcc -t $TARGET $vflags"
            # shellcheck disable=SC2086
            if why=$(compile_model "$m" "$w/var-$vname" "$TARGET" $vflags) &&
               why=$(build_timer "$w/var-$vname" "$w/var-$vname/timer"); then
                configs+=("var-$vname|$w/var-$vname/timer $bdir/$m.input.bin")
                printf 'tvmcc build/bench/%s.onnx -t %s %s -o OUT --name model\n%s\n' "$m" "$TARGET" \
                    "$vflags" "$(cat "$w/var-$vname/timer.cmd")" > "$r/var-$vname.cmd"
            else
                echo "$why" > "$r/var-$vname.skip"
                echo "$vflags" > "$r/var-$vname.flags"
                log "$m: variant $vname skipped: $why"
            fi
        done ;;
    esac

    case " $threads " in *" 2 "*)
        configs+=("ort-2t|$ort_env$NODE $here/ort_timer.js $bdir/$m.onnx $bdir/$m.input.bin --shape $shape --threads 2")
        echo "${ort_env:+LD_PRELOAD=build/bench/isa_mask.so (bench/isa_mask.c) }node bench/ort_timer.js build/bench/$m.onnx build/bench/$m.input.bin --shape $shape --threads 2" > "$r/ort-2t.cmd" ;;
    esac
    case " $threads " in *" 1 "*) ;; *)
        # Only 2 threads asked for: drop the 1-thread timings (builds were needed anyway).
        kept=()
        for c in "${configs[@]}"; do case ${c%%|*} in *-1t) ;; *) kept+=("$c") ;; esac; done
        configs=("${kept[@]}") ;;
    esac

    # Interleaved rounds; the first round writes every configuration's output.
    n=${#configs[@]}
    for ((round = 0; round < rounds; round++)); do
        log "$m: round $((round + 1))/$rounds"
        for ((k = 0; k < n; k++)); do
            c=${configs[$(((k + round) % n))]}
            id=${c%%|*} cmd=${c#*|}
            [ -f "$r/$id.fail" ] && continue
            extra=""
            [ $round = 0 ] && extra="-o $r/$id.out.bin"
            # the GEMM's fraction of peak also against the peak measured
            # just before each of its runs (the host's speed changes in
            # phases; report.py takes the median over rounds)
            if [ "$m" = gemm1024 ]; then
                nt=1
                case $id in *-2t) nt=2 ;; esac
                p=$(OMP_NUM_THREADS=$nt "$bdir/peak" 0.1) && echo "${p%% *}" >> "$r/$id.peak"
            fi
            if ! (eval "timeout 900 $cmd -w $warmups -n $maxruns -b $budget $extra") \
                    >> "$r/$id.txt" 2> "$r/$id.err"; then
                echo "run failed: $(grep -m1 . "$r/$id.err")" > "$r/$id.fail"
                log "$m: $id $(cat "$r/$id.fail")"
            fi
        done
    done
    ref="$r/ort-1t.out.bin"
    [ -f "$ref" ] || ref="$r/ort-2t.out.bin"
    for c in "${configs[@]}"; do
        id=${c%%|*}
        [ -f "$r/$id.out.bin" ] && [ -f "$ref" ] &&
            "$PYTHON" "$here/export_models.py" compare "$ref" "$r/$id.out.bin" > "$r/$id.relerr"
    done
    rm -f "$r"/*.out.bin
done

# What fusion can save at most (bench/fusion_bound.sh): the share of the
# unfused run that the kernels fusion removes take, per variant model
# without BatchNormalization, when the nofuse variant ran and perf exists.
case " ${variants[*]:-} " in *"=--no-fuse "*)
    if command -v perf >/dev/null 2>&1; then
        for m in "${models[@]}"; do
            case " $variant_models " in *" $m "*) ;; *) continue ;; esac
            case $m in *_bn) continue ;; esac
            "$here/fusion_bound.sh" "$m" "$TARGET" > "$raw/fusion_bound.$m.txt" 2>&1 ||
                log "$m: fusion_bound failed: $(tail -1 "$raw/fusion_bound.$m.txt")"
        done
    else
        log "perf not found: no fusion bound (apt-get install linux-perf)"
    fi ;;
esac

# The peak again at the end: a busy machine lowers a measurement, so the
# larger of the two is kept (the peak is a best case by definition).
again1=$(OMP_NUM_THREADS=1 "$bdir/peak" 0.2) && awk -v a="${again1%% *}" -v b="${peak1%% *}" 'BEGIN{exit !(a>b)}' &&
    sed -i "s/^peak1=.*/peak1=$again1/" "$raw/meta.txt"
if [ -n "$peak2" ]; then
    again2=$(OMP_NUM_THREADS=2 "$bdir/peak" 0.2) && awk -v a="${again2%% *}" -v b="${peak2%% *}" 'BEGIN{exit !(a>b)}' &&
        sed -i "s/^peak2=.*/peak2=$again2/" "$raw/meta.txt"
fi
echo "peak_runs=start ${peak1%% *}${peak2:+/${peak2%% *}}, end ${again1%% *}${peak2:+/${again2%% *}}" >> "$raw/meta.txt"
"$PYTHON" "$here/report.py" "$raw" "$out" || die "report failed"
log "wrote ${out#"$root"/}"
