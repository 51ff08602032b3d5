#!/bin/sh
# The portable `c` target's printing for the compiler's vectorizer
# (emit_c/emit_ctile.c):
#   tile/MODEL         models built here with constant weights (the packed
#                      template): conv_silu (3x3 Conv 16->32 on 13x13, then
#                      x * Sigmoid(x)) and pw_relu (1x1 Conv 24->40 on 7x7, 8-wide
#                      tiles along the positions, then Relu), compiled with
#                      -t c: tile rows under `#pragma GCC unroll P`, vector
#                      loops under `#pragma GCC unroll 1`, updates through
#                      MODEL_FMA, epilogue bounds as loop ends (`_end`)
#   post/conv_silu     the 3x3 conv's Swish runs in place over the tile (a
#                      store into the tile of an expression of it with
#                      MODEL_expf) before the transposed copy-out
#   noinline/conv_silu kernels defined `static MODEL_NOINLINE void`, the macro
#                      __attribute__((noinline)) under __GNUC__, and gcc's loop
#                      distribution pragma under __GNUC__ && !__clang__;
#                      with cc -O3 the object keeps the kernels as functions
#   norep/dw_pool      a depthwise 3x3 Conv 8->8 on 112x112 with Clip(0, 6),
#                      then a 3x3 stride-2 MaxPool: at -O3 -march=native no
#                      `rep movs`/`rep stos` (the padded copy's rows stay
#                      vector loops)
#   tile/mm_groups     MatMul 256x1024 by a constant 1024x32: the row group's
#                      tiles (side by side in one array) are updated through a
#                      local copy b*_t[p*16 + v]
#   fma/MODEL          on x86-64 with cc -march=native FMA: the tiles become
#                      packed vector FMAs (vfmadd...ps) at -O3
#   same/MODEL         each (and mm_groups, dw_pool) compiled with -t c gives the outputs of -t x86-64
#                      (no template, no intrinsics, libm expf) within rtol 1e-5
#   expf/accuracy      MODEL_expf, cut out of conv_silu's model.c, against
#                      libm expf on 2M arguments in [-110, 95]: relative error
#                      under 5e-7 where expf is a normal float, 0 and inf
#                      where expf is, NaN for NaN, exp(-inf) = 0, exp(inf) = inf
# Ends with "N passed, N failed".
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TVMCC=${TVMCC:-$root/tvmcc}
CC=${CC:-cc}
work=$root/build/ctarget
rm -rf "$work" && mkdir -p "$work"
pass=0 failed=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$pass passed, $failed failed"; [ $failed = 0 ]; exit $?; }
if ! /usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
rng = np.random.default_rng(3)
def t(name, a):
    return numpy_helper.from_array(a.astype(np.float32), name)
def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
def save(name, nodes, x, y, inits):
    g = helper.make_graph(nodes, name, [x], [y], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{out}/{name}.onnx")
save("conv_silu",
     [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
      helper.make_node("Sigmoid", ["c"], ["s"], name="sigmoid"),
      helper.make_node("Mul", ["c", "s"], ["y"], name="mul")],
     vi("x", [1, 16, 13, 13]), vi("y", [1, 32, 13, 13]),
     [t("w", rng.standard_normal((32, 16, 3, 3)) * 0.2), t("b", rng.standard_normal(32))])
save("pw_relu",
     [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
      helper.make_node("Relu", ["c"], ["y"], name="relu")],
     vi("x", [1, 24, 7, 7]), vi("y", [1, 40, 7, 7]),
     [t("w", rng.standard_normal((40, 24, 1, 1)) * 0.2), t("b", rng.standard_normal(40))])
save("dw_pool",
     [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", group=8, pads=[1, 1, 1, 1]),
      helper.make_node("Clip", ["c", "lo", "hi"], ["r"], name="clip"),
      helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2])],
     vi("x", [1, 8, 112, 112]), vi("y", [1, 8, 55, 55]),
     [t("w", rng.standard_normal((8, 1, 3, 3)) * 0.5), t("b", rng.standard_normal(8)),
      t("lo", np.array(0.0)), t("hi", np.array(6.0))])
save("mm_groups",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")],
     vi("x", [256, 1024]), vi("y", [256, 32]), [t("w", rng.standard_normal((1024, 32)) * 0.05)])
PY
then
    bad models "cannot build the test models (python3-onnx missing?)"
    finish
fi
for m in conv_silu pw_relu mm_groups dw_pool; do
    for t in c x86-64; do
        "$TVMCC" "$work/$m.onnx" -t $t -o "$work/$m.$t" > "$work/$m.$t.log" 2>&1 ||
            bad "compile/$m/$t" "tvmcc failed: $(tail -n 1 "$work/$m.$t.log")"
    done
done
for m in conv_silu pw_relu; do
    c=$work/$m.c/model.c
    if grep -q '^#pragma GCC unroll 1$' "$c" && grep -Eq '^#pragma GCC unroll ([2-9]|[1-9][0-9]+)$' "$c" &&
        grep -q '= MODEL_FMA(' "$c" && grep -q '^#define MODEL_FMA(a, b, c) fmaf(a, b, c)$' "$c" &&
        grep -q '_end = (int32_t)(' "$c"; then
        ok
    else
        bad tile/$m "no unroll pragmas, MODEL_FMA updates or loop ends in $c"
    fi
    if [ "$(uname -m)" = x86_64 ] && echo | $CC -march=native -dM -E - 2>/dev/null | grep -q __FMA__; then
        if $CC -I"$work/$m.c" -std=c99 -O3 -march=native -S "$c" -o "$work/$m.s" 2>"$work/$m.fma.log" &&
            grep -Eq 'vfmadd[0-9]+ps' "$work/$m.s"; then
            ok
        else
            bad fma/$m "no packed FMA in $work/$m.s"
        fi
    fi
done
# the 3x3 conv's post (Swish) in place over the tile, then a copy
if grep -Eq '(b[0-9]+)\[p[0-9]+ \* [0-9]+ \+ v[0-9]+\] = \(\1\[p[0-9]+ \* [0-9]+ \+ v[0-9]+\] \*.*MODEL_expf' \
    "$work/conv_silu.c/model.c"; then
    ok
else
    bad post/conv_silu "no in-place post pass over the tile in $work/conv_silu.c/model.c"
fi
# kernels stay functions; gcc keeps copy loops as loops
c=$work/conv_silu.c/model.c
if grep -Eq '^static MODEL_NOINLINE void k[0-9]+_' "$c" && ! grep -Eq '^static void k[0-9]+_' "$c" &&
    grep -A1 '^#if defined(__GNUC__)$' "$c" | grep -q '^#define MODEL_NOINLINE __attribute__((noinline))$' &&
    grep -A1 '^#if defined(__GNUC__) && !defined(__clang__)$' "$c" |
        grep -q '^#pragma GCC optimize("no-tree-loop-distribute-patterns")$' &&
    $CC -I"$work/conv_silu.c" -std=c99 -O3 -c "$c" -o "$work/conv_silu.o" 2>"$work/noinline.log" &&
    nm "$work/conv_silu.o" | grep -Eq ' t k[0-9]+_conv'; then
    ok
else
    bad noinline/conv_silu "kernels not NOINLINE, the pragma missing, or no kernel symbol in the -O3 object ($c)"
fi
if [ "$(uname -m)" = x86_64 ]; then
    if $CC -I"$work/dw_pool.c" -std=c99 -O3 -march=native -S "$work/dw_pool.c/model.c" -o "$work/dw_pool.s" \
        2>"$work/dw_pool.log" && grep -q 'vfmadd\|vmaxps' "$work/dw_pool.s" && ! grep -q 'rep mov\|rep stos' "$work/dw_pool.s"; then
        ok
    else
        bad norep/dw_pool "rep movs/stos (or no vector code) in $work/dw_pool.s"
    fi
fi
# a matmul's row group keeps its tiles side by side in one array: each tile
# is updated through a local copy (b*_t)
if grep -Eq 'b[0-9]+_t\[p[0-9]+ \* 16 \+ v[0-9]+\] = MODEL_FMA\(' "$work/mm_groups.c/model.c"; then
    ok
else
    bad tile/mm_groups "no tile copy in $work/mm_groups.c/model.c"
fi
# same outputs: run each build on one random input through bench/timer.c
for m in conv_silu pw_relu mm_groups dw_pool; do
    /usr/bin/python3 - "$work" "$m" <<'PY' || bad "same/$m" "cannot write the input"
import sys, numpy as np, onnx
work, m = sys.argv[1], sys.argv[2]
g = onnx.load(f"{work}/{m}.onnx").graph
inits = {i.name for i in g.initializer}
x = [i for i in g.input if i.name not in inits][0]
shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
np.random.default_rng(7).standard_normal(shape).astype(np.float32).tofile(f"{work}/{m}.in.bin")
PY
    for t in c x86-64; do
        d=$work/$m.$t
        $CC -I"$d" -std=c99 -O3 -march=native "$d"/*.c "$root/bench/timer.c" -lm -o "$d/timer" 2>"$d/cc.log" &&
            "$d/timer" "$work/$m.in.bin" -w 0 -n 1 -o "$d/out.bin" > /dev/null 2>&1 ||
            bad "same/$m" "build or run of the $t output failed ($d)"
    done
    if /usr/bin/python3 -c '
import sys, numpy as np
a = np.fromfile(sys.argv[1], np.float32); b = np.fromfile(sys.argv[2], np.float32)
sys.exit(0 if a.size == b.size and a.size > 0 and np.allclose(a, b, rtol=1e-5, atol=1e-6) else 1)
' "$work/$m.c/out.bin" "$work/$m.x86-64/out.bin"; then ok; else bad "same/$m" "-t c and -t x86-64 outputs differ"; fi
done
# MODEL_expf against expf
e=$work/conv_silu.c/model.c
{
    printf '#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n'
    sed -n '/^static inline float MODEL_expf(float x)$/,/^}$/p' "$e"
    cat <<'C'
int main(void)
{
    int i, bad = 0;
    double worst = 0.0;
    for (i = 0; i <= 2000000; i++) {
        float x = -110.0f + 205.0f * (float)i / 2000000.0f, a = MODEL_expf(x), b = expf(x);
        if (b == 0.0f || isinf(b) || b < 1.1754944e-38f) {
            if (isinf(b) != isinf(a) || (b == 0.0f && a > 1.5e-45f) || (!isinf(b) && a > 1.2e-38f))
                bad++;
            continue;
        }
        if (fabs((double)a - (double)b) / (double)b > worst)
            worst = fabs((double)a - (double)b) / (double)b;
    }
    if (!isnan(MODEL_expf(NAN)) || MODEL_expf(-INFINITY) != 0.0f || !isinf(MODEL_expf(INFINITY)) ||
        MODEL_expf(0.0f) != 1.0f)
        bad++;
    printf("max relative error %g, %d bad special values\n", worst, bad);
    return bad == 0 && worst < 5e-7 ? 0 : 1;
}
C
} > "$work/expf_test.c"
if grep -q MODEL_expf "$work/expf_test.c" && $CC -std=c99 -O2 "$work/expf_test.c" -lm -o "$work/expf_test" 2>"$work/expf.log" &&
    "$work/expf_test" > "$work/expf.out" 2>&1; then
    ok
else
    bad expf/accuracy "$(cat "$work/expf.log" "$work/expf.out" 2>/dev/null | tail -n 2)"
fi
finish
