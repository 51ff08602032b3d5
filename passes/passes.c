/*
 * The ordered pass table: each pass with the lowest -O level it runs at
 * (cmd/compile.c runs them in this order). The memory planner
 * (plan_memory.c) is not a pass: it runs after lowering, on the kernel
 * order.
 */
#include "passes.h"

const Pass pass_table[] = {
    {"quantize", pass_quantize, "compute DequantizeLinear -> op -> QuantizeLinear patterns on integers", 0},
    {"simplify", pass_simplify, "drop identities and no-op reshapes, fold BatchNormalization into Conv", 1},
    {"fold_constants", pass_fold_constants, "evaluate nodes whose inputs are all constant", 0},
    {"dce", pass_dce, "drop nodes whose outputs are constant or unused", 0},
    {"layout", pass_layout, "store activations in the target's preferred layout", 1},
    {"winograd", pass_winograd, "3x3 convs as Winograd F(2x2, 3x3) transforms around 16 matmuls (x86-64-avx2)", 1},
    {"fuse", pass_fuse, "group nodes into kernels by the paper's fusion rules", 1},
};
const int pass_count = (int)(sizeof pass_table / sizeof pass_table[0]);
