"""Small models for the golden tests (test/golden/run.sh).

Each function builds one model with onnx.helper; weights come from a fixed
seed so that the dumps are stable. Usage: models.py OUTDIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(outdir, name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, f"{outdir}/{name}.onnx")


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv_relu(outdir):
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.array([0.5, -0.5], np.float32), "b")
    save(outdir, "conv_relu",
         [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c"], ["y"], name="relu")],
         [f32("x", [1, 1, 4, 4])], [f32("y", [1, 2, 4, 4])], [w, b])


def shape_chain(outdir):
    """The exporter pattern Shape -> Gather -> Unsqueeze -> Concat -> Reshape:
    everything but the Reshape folds to constants and disappears."""
    idx = numpy_helper.from_array(np.array(0, np.int64), "idx")
    minus1 = numpy_helper.from_array(np.array([-1], np.int64), "minus1")
    save(outdir, "shape_chain",
         [helper.make_node("Shape", ["x"], ["s"], name="shape"),
          helper.make_node("Gather", ["s", "idx"], ["n"], name="gather", axis=0),
          helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq"),
          helper.make_node("Concat", ["n1", "minus1"], ["shp"], name="concat", axis=0),
          helper.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")],
         [f32("x", [2, 3, 4])], [f32("y", [2, 12])],
         [idx, minus1, numpy_helper.from_array(np.array([0], np.int64), "axes")])


def gemm_softmax(outdir):
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    save(outdir, "gemm_softmax",
         [helper.make_node("Gemm", ["x", "w"], ["g"], name="gemm", transB=1),
          helper.make_node("Softmax", ["g"], ["y"], name="softmax", axis=-1)],
         [f32("x", [2, 3])], [f32("y", [2, 4])], [w])


def conv_bn(outdir):
    """BatchNormalization after a Conv folds into the Conv's weights."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((2, 1, 1, 1)).astype(np.float32), "w")
    bn = [numpy_helper.from_array(np.array(v, np.float32), n)
          for n, v in (("gamma", [1.5, 0.5]), ("beta", [0.25, -1.0]), ("mean", [0.1, 0.2]),
                       ("var", [4.0, 0.25]))]
    save(outdir, "conv_bn",
         [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
          helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["y"],
                           name="bn", epsilon=0.0)],
         [f32("x", [1, 1, 2, 2])], [f32("y", [1, 2, 2, 2])], [w] + bn)


def identity_chain(outdir):
    """Identity, Dropout and a reshape back to the same shape vanish."""
    shape = numpy_helper.from_array(np.array([2, 3], np.int64), "shape")
    save(outdir, "identity_chain",
         [helper.make_node("Identity", ["x"], ["a"], name="id"),
          helper.make_node("Dropout", ["a"], ["b"], name="drop"),
          helper.make_node("Reshape", ["b", "shape"], ["c"], name="same_shape"),
          helper.make_node("Relu", ["c"], ["y"], name="relu")],
         [f32("x", [2, 3])], [f32("y", [2, 3])], [shape])


def eltwise_chain(outdir):
    """At -O0 each op is a kernel; in-place reuse keeps the arena at one tensor."""
    save(outdir, "eltwise_chain",
         [helper.make_node("Relu", ["x"], ["a"], name="relu"),
          helper.make_node("Sigmoid", ["a"], ["b"], name="sigmoid"),
          helper.make_node("Tanh", ["b"], ["c"], name="tanh"),
          helper.make_node("Exp", ["c"], ["y"], name="exp")],
         [f32("x", [64])], [f32("y", [64])])


def broadcast_add(outdir):
    save(outdir, "broadcast_add",
         [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
         [f32("a", [2, 3, 4]), f32("b", [4])], [f32("y", [2, 3, 4])])


def layernorm_rows(outdir):
    """The mean and the deviation are computed per tile of 8 rows inside the
    normalizing loop (compute_at): local arrays instead of workspace temps."""
    rng = np.random.default_rng(4)
    scale = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "scale")
    bias = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "bias")
    save(outdir, "layernorm_rows",
         [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], name="ln", axis=-1)],
         [f32("x", [16, 4])], [f32("y", [16, 4])], [scale, bias], opset=17)


def nchwc_block(outdir):
    """conv -> relu -> conv -> residual add, channels multiples of 16: with
    an x86 target both convs, the relu and the add run in blocked channels
    (NCHW16c / NCHW8c) and the only transform left is the one back to NCHW
    before the graph output (the first conv reads the NCHW input)."""
    rng = np.random.default_rng(5)
    w1 = numpy_helper.from_array(rng.standard_normal((32, 16, 3, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((32, 32, 3, 3)).astype(np.float32), "w2")
    save(outdir, "nchwc_block",
         [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
          helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
          helper.make_node("Add", ["c2", "r1"], ["y"], name="add")],
         [f32("x", [1, 16, 8, 8])], [f32("y", [1, 32, 8, 8])], [w1, b1, w2])


def nchwc_odd(outdir):
    """A conv with 12 output channels (not a multiple of the block): it
    stays NCHW on every target, with no transform."""
    rng = np.random.default_rng(6)
    w = numpy_helper.from_array(rng.standard_normal((12, 3, 3, 3)).astype(np.float32), "w")
    save(outdir, "nchwc_odd",
         [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["c"], ["y"], name="relu")],
         [f32("x", [1, 3, 8, 8])], [f32("y", [1, 12, 8, 8])], [w])


if __name__ == "__main__":
    for fn in (conv_relu, shape_chain, gemm_softmax, broadcast_add, conv_bn, identity_chain,
               eltwise_chain, layernorm_rows, nchwc_block, nchwc_odd):
        fn(sys.argv[1])
