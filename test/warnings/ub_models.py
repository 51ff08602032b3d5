#!/usr/bin/python3
"""Models whose inputs drive integer arithmetic and float-to-integer
conversions to the limits of their types (overflowing add, sub, mul and
reductions, INT_MIN / -1, NaN and out-of-range casts, integer Pow, shifts).
test/warnings/run.sh builds each with clang -fsanitize=undefined and runs
it: the emitted C must have no undefined behaviour for any input.

    ub_models.py OUTDIR   writes OUTDIR/NAME/model.onnx and in_K.bin
"""
import os, sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
out = sys.argv[1]
def save(name, nodes, ins, outs, feeds, opset=13, inits=()):
    d = os.path.join(out, name); os.makedirs(d, exist_ok=True)
    g = h.make_graph(nodes, name, ins, outs, list(inits))
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', opset)]), os.path.join(d, 'model.onnx'))
    for i, a in enumerate(feeds):
        a.tofile(os.path.join(d, 'in_%d.bin' % i))
def vi(n, t, s): return h.make_tensor_value_info(n, t, s)
for op in ['Add', 'Sub', 'Mul']:
    for tn, tt, npt in [('int32', T.INT32, np.int32), ('int64', T.INT64, np.int64), ('uint16', T.UINT16, np.uint16), ('int16', T.INT16, np.int16), ('int8', T.INT8, np.int8)]:
        info = np.iinfo(npt)
        a = np.array([info.max, info.min, info.max, 3], dtype=npt)
        b = np.array([info.max, info.max, info.min, 5], dtype=npt)
        save('%s_%s' % (op.lower(), tn), [h.make_node(op, ['a', 'b'], ['y'])],
             [vi('a', tt, [4]), vi('b', tt, [4])], [vi('y', tt, [4])], [a, b])
for tn, tt in [('int32', T.INT32), ('uint8', T.UINT8), ('int64', T.INT64), ('int8', T.INT8), ('uint32', T.UINT32)]:
    a = np.array([np.nan, 1e30, -1e30, -5.0, 3.7, np.inf], dtype=np.float32)
    save('cast_f32_%s' % tn, [h.make_node('Cast', ['a'], ['y'], to=tt)], [vi('a', T.FLOAT, [6])], [vi('y', tt, [6])], [a])
a = np.array([2, 3, -2, 10], dtype=np.int32); b = np.array([40, 31, 33, 12], dtype=np.int32)
save('pow_int32', [h.make_node('Pow', ['a', 'b'], ['y'])], [vi('a', T.INT32, [4]), vi('b', T.INT32, [4])], [vi('y', T.INT32, [4])], [a, b])
a = np.array([np.iinfo(np.int32).min, -3, 5, 0], dtype=np.int32)
save('neg_int32', [h.make_node('Neg', ['a'], ['y'])], [vi('a', T.INT32, [4])], [vi('y', T.INT32, [4])], [a])
save('abs_int32', [h.make_node('Abs', ['a'], ['y'])], [vi('a', T.INT32, [4])], [vi('y', T.INT32, [4])], [a])
b = np.array([-1, -1, 0, 0], dtype=np.int32)
save('div_int32', [h.make_node('Div', ['a', 'b'], ['y'])], [vi('a', T.INT32, [4]), vi('b', T.INT32, [4])], [vi('y', T.INT32, [4])], [a, b])
save('mod_int32', [h.make_node('Mod', ['a', 'b'], ['y'])], [vi('a', T.INT32, [4]), vi('b', T.INT32, [4])], [vi('y', T.INT32, [4])], [a, b])
a = np.full((2, 64), 255, dtype=np.uint8); b = np.full((64, 2), 255, dtype=np.uint8)
save('matmulinteger_big', [h.make_node('MatMulInteger', ['a', 'b'], ['y'])], [vi('a', T.UINT8, [2, 64]), vi('b', T.UINT8, [64, 2])], [vi('y', T.INT32, [2, 2])], [a, b], opset=10)
a = np.array([np.iinfo(np.int32).max, 7, -9, 100], dtype=np.int32)
save('reducesum_int32', [h.make_node('ReduceSum', ['a'], ['y'], keepdims=0)], [vi('a', T.INT32, [4])], [vi('y', T.INT32, [])], [np.array([np.iinfo(np.int32).max, 7, 9, 100], dtype=np.int32)])
save('cumsum_int32', [h.make_node('CumSum', ['a', 'ax'], ['y'])], [vi('a', T.INT32, [4])], [vi('y', T.INT32, [4])], [np.array([np.iinfo(np.int32).max, 7, 9, 100], dtype=np.int32)], inits=[nh.from_array(np.array(0, dtype=np.int64), 'ax')])
a = np.array([1, 2, 3, 4], dtype=np.uint16); b = np.array([15, 16, 0, 40], dtype=np.uint16)
save('shl_uint16', [h.make_node('BitShift', ['a', 'b'], ['y'], direction='LEFT')], [vi('a', T.UINT16, [4]), vi('b', T.UINT16, [4])], [vi('y', T.UINT16, [4])], [np.array([65535, 2, 3, 4], dtype=np.uint16), b], opset=11)
