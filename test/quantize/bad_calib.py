#!/usr/bin/python3
"""Bad calibration data for test/quantize/run.sh's error cases.

    bad_calib.py MODEL.onnx OUT_DIR

Writes, for MODEL's first input: OUT_DIR/wrong_shape (one dimension off),
wrong_dtype (int64), empty (no samples), count (two input files for one
input), corrupt (bytes that are not a TensorProto), and OUT_DIR/int_only.onnx
(a model without float tensors).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def sample(root, case, arrays, name):
    d = os.path.join(root, case, "s0")
    os.makedirs(d, exist_ok=True)
    for k, a in enumerate(arrays):
        with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())


def main():
    model, out = sys.argv[1:3]
    m = onnx.load(model)
    inp = m.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    good = np.zeros(shape, np.float32)
    off = list(shape)
    off[-1] += 1
    sample(out, "wrong_shape", [np.zeros(off, np.float32)], inp.name)
    sample(out, "wrong_dtype", [np.zeros(shape, np.int64)], inp.name)
    os.makedirs(os.path.join(out, "empty"), exist_ok=True)
    sample(out, "count", [good, good], inp.name)
    d = os.path.join(out, "corrupt", "s0")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(b"\xff\xff\xff\xff not a tensor")
    g = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])], "int_only",
        [helper.make_tensor_value_info("a", TensorProto.INT64, [4]),
         helper.make_tensor_value_info("b", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("c", TensorProto.INT64, [4])])
    im = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    im.ir_version = 7
    onnx.save(im, os.path.join(out, "int_only.onnx"))


if __name__ == "__main__":
    main()
