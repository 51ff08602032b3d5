#!/usr/bin/python3
"""Post-training static quantization of a float ONNX model into QDQ form.

    quantize.py IN.onnx OUT.onnx [--activations int8|uint8|int16] [--per-tensor]
                [--fuse-relu] [--format qdq|qoperator] [--samples N] [--seed S]
                [--input-range LO,HI | --input-range NAME=LO,HI ...]
                [--input-dist uniform|normal] [--input-shape NAME=D0,D1,...]
                [--calib DIR]

Writes OUT.onnx the way onnxruntime's quantize_static(quant_format=QDQ)
lays a model out, at opset 13 (a lower opset is converted up first):

  - weights (constant input B of Conv, Gemm, MatMul): int8, symmetric, zero
    point 0, range [-127, 127], one scale per output channel (Conv axis 0;
    Gemm axis 0 with transB=1, else 1; MatMul the last axis), or one scale
    with --per-tensor; an int8 initializer feeding DequantizeLinear;
  - biases (Conv input 2, Gemm C): int32, scale x_scale * w_scale, zero
    point 0, feeding DequantizeLinear;
  - activations: a QuantizeLinear -> DequantizeLinear pair on every graph
    input, every float input and output of a quantized operator and every
    graph output; scale and zero point from the min/max seen over --samples
    random inputs, the range widened to hold 0:
        scale = (rmax - rmin) / (qmax - qmin), zp = round(qmin - rmin / scale)
    (int8 [-128,127] and uint8 [0,255] asymmetric; int16 symmetric with zero
    point 0, its Q/DQ in the com.microsoft domain as onnxruntime writes them
    below opset 21);
  - operators that pass values through (MaxPool, Reshape, Flatten,
    Transpose, Squeeze, Unsqueeze, Slice, Split, Pad, Resize nearest,
    Gather) give their output the scale and zero point of their input;
    Softmax's output gets scale 1/256 (zp 0 for uint8, -128 for int8);
    Concat, Add, Mul and the others get their own;
  - a float constant operand of Add, Mul or Gather is stored quantized with
    the activation type (asymmetric, its own range).

Relu and Clip are kept as quantized nodes (Q/DQ on both sides). With
--fuse-relu a Relu or Clip right after a Conv, Gemm, MatMul or Add (whose
output has no other use) is removed and the QuantizeLinear after that
operator takes the activation's range instead.

--format qoperator then rewrites DequantizeLinear -> OP -> QuantizeLinear
groups into QLinearConv, QLinearMatMul and the com.microsoft QLinearAdd,
QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat,
QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax and QGemm; MaxPool,
Reshape, Flatten, Transpose, Squeeze and Unsqueeze between equal
quantization parameters run on the quantized tensor directly. The
QuantizeLinear/DequantizeLinear at the float boundaries stay. The written
model is run once in onnxruntime-node to check that it loads and runs.

Calibration runs the float model in onnxruntime-node (test/qdq/calib.js)
with every float tensor made a graph output. Float inputs are uniform in
[LO, HI] (default [-1, 1]; NAME=LO,HI for one input) or normal (mean 0,
standard deviation (HI - LO) / 4) with --input-dist normal; an integer
input feeding Gather's indices is uniform over the table's rows, another
integer input over [LO, HI]. The same arguments give the same bytes.
An input with a symbolic dimension is drawn with that dimension 1 unless
--input-shape NAME=D0,D1,... gives its shape.

--calib DIR calibrates on the samples of DIR instead of random inputs: DIR
holds one folder per sample with input_K.pb (a TensorProto, K in the
graph's input order), the ONNX test-data layout (test/quantize/gen_data.sh
writes such sets). Every sample is used (--samples is ignored); an input's
shape must be the same in every sample and is the one the model is
calibrated and checked with.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference, version_converter

HERE = os.path.dirname(os.path.abspath(__file__))
FLOAT = TensorProto.FLOAT
MS = "com.microsoft"

QTYPES = {  # name: (onnx type, numpy type, qmin, qmax, symmetric)
    "int8": (TensorProto.INT8, np.int8, -128, 127, False),
    "uint8": (TensorProto.UINT8, np.uint8, 0, 255, False),
    "int16": (TensorProto.INT16, np.int16, -32768, 32767, True),
}
NP_OF_ONNX = {TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64,
              TensorProto.INT32: np.int32, TensorProto.INT8: np.int8,
              TensorProto.UINT8: np.uint8, TensorProto.BOOL: np.bool_}
DTYPE_NAME = {TensorProto.FLOAT: "float32", TensorProto.INT64: "int64",
              TensorProto.INT32: "int32", TensorProto.INT8: "int8",
              TensorProto.UINT8: "uint8", TensorProto.BOOL: "bool"}

# Operators placed between DequantizeLinear and QuantizeLinear.
QUANT_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "AveragePool", "GlobalAveragePool",
             "MaxPool", "Concat", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
             "Pad", "Slice", "Split", "Resize", "Sigmoid", "Tanh", "HardSwish", "LeakyRelu",
             "Softmax", "Gather", "Relu", "Clip"}
# Their outputs share the scale and zero point of input 0.
PASS_THROUGH = {"MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Slice",
                "Split", "Pad", "Resize", "Gather"}
FUSABLE_PRODUCERS = {"Conv", "Gemm", "MatMul", "Add"}
# Run on the quantized tensor in the QOperator form.
DIRECT_8BIT = {"MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze"}


def key(node):
    """A node's identity (the wrappers protobuf returns are not stable)."""
    return node.output[0] if len(node.output) else "#" + node.name


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--activations", choices=sorted(QTYPES), default="int8")
    ap.add_argument("--per-tensor", action="store_true")
    ap.add_argument("--fuse-relu", action="store_true")
    ap.add_argument("--format", choices=["qdq", "qoperator"], default="qdq")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--input-range", action="append", default=[],
                    help="LO,HI for every input or NAME=LO,HI for one (repeatable)")
    ap.add_argument("--input-dist", choices=["uniform", "normal"], default="uniform")
    ap.add_argument("--input-shape", action="append", default=[],
                    help="NAME=D0,D1,... the shape of an input's random draws (repeatable)")
    ap.add_argument("--calib", metavar="DIR",
                    help="calibrate on DIR/<sample>/input_K.pb instead of random inputs")
    ap.add_argument("--no-check", action="store_true",
                    help="do not run the written model in onnxruntime")
    return ap.parse_args(argv)


# ------------------------------------------------------------------ inputs

def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def input_shape(vi):
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1
            for d in vi.type.tensor_type.shape.dim]


def input_specs(model, ranges, dist):
    """[{name, dtype, shape, dist, range}] for the graph inputs: what the
    calibration (and test/qdq/run.py) draw them from."""
    default = (-1.0, 1.0)
    per_name = {}
    for r in ranges:
        if "=" in r:
            name, text = r.split("=", 1)
            per_name[name] = tuple(float(v) for v in text.split(","))
        else:
            default = tuple(float(v) for v in r.split(","))
    inits = {i.name: i for i in model.graph.initializer}
    specs = []
    for vi in graph_inputs(model):
        elem = vi.type.tensor_type.elem_type
        if elem not in DTYPE_NAME:
            raise SystemExit("quantize: input %s has an unsupported type" % vi.name)
        spec = {"name": vi.name, "dtype": DTYPE_NAME[elem], "shape": input_shape(vi)}
        if elem == FLOAT:
            spec["dist"] = dist
            spec["range"] = list(per_name.get(vi.name, default))
        else:
            lo, hi = per_name.get(vi.name, (0, 0))
            if vi.name not in per_name:
                # Gather indices: the rows of the table.
                for n in model.graph.node:
                    if n.op_type == "Gather" and len(n.input) > 1 and n.input[1] == vi.name \
                            and n.input[0] in inits:
                        axis = attr(n, "axis", 0)
                        hi = inits[n.input[0]].dims[axis] - 1
            spec["dist"] = "uniform"
            spec["range"] = [int(lo), int(hi)]
        specs.append(spec)
    return specs


def apply_shapes(specs, shapes):
    """--input-shape NAME=D0,D1,...: the shape of NAME's draws."""
    by_name = {s["name"]: s for s in specs}
    for text in shapes:
        name, _, dims = text.partition("=")
        if name not in by_name or not dims:
            raise SystemExit("quantize: --input-shape %s: no such input or no shape" % text)
        by_name[name]["shape"] = [int(d) for d in dims.split(",")]


def load_calib(specs, folder):
    """The samples of a test-data folder: one array per input, every
    sample's tensor back to back (count * shape); sets each spec's shape
    from the samples. Returns (arrays, count)."""
    if not os.path.isdir(folder):
        raise SystemExit("quantize: --calib %s: not a directory" % folder)
    samples = sorted(d for d in os.listdir(folder)
                     if os.path.isfile(os.path.join(folder, d, "input_0.pb")))
    if not samples:
        raise SystemExit("quantize: --calib %s: no <sample>/input_0.pb" % folder)
    per_input = [[] for _ in specs]
    for s in samples:
        for k, spec in enumerate(specs):
            path = os.path.join(folder, s, "input_%d.pb" % k)
            t = TensorProto()
            try:
                with open(path, "rb") as f:
                    t.ParseFromString(f.read())
                a = numpy_helper.to_array(t)
            except Exception as e:  # unreadable or not a TensorProto
                raise SystemExit("quantize: %s: not a readable TensorProto (%s: %s)"
                                 % (path, type(e).__name__, e))
            if DTYPE_NAME.get(t.data_type) != spec["dtype"]:
                raise SystemExit("quantize: %s: type %d, input %s is %s"
                                 % (path, t.data_type, spec["name"], spec["dtype"]))
            if per_input[k] and a.shape != per_input[k][0].shape:
                raise SystemExit("quantize: %s: shape %s, the first sample's is %s"
                                 % (path, list(a.shape), list(per_input[k][0].shape)))
            per_input[k].append(a)
    for spec, arrs in zip(specs, per_input):
        spec["shape"] = list(arrs[0].shape)
    return [np.stack(arrs) for arrs in per_input], len(samples)


def draw(spec, rng, count=1):
    """count samples of one input, as one array of count * shape."""
    shape = [count] + spec["shape"]
    lo, hi = spec["range"]
    if spec["dtype"] == "float32":
        if spec["dist"] == "normal":
            v = rng.normal((lo + hi) / 2.0, (hi - lo) / 4.0, shape)
        else:
            v = rng.uniform(lo, hi, shape)
        return v.astype(np.float32)
    return rng.integers(int(lo), int(hi) + 1, shape).astype(
        {"int64": np.int64, "int32": np.int32, "int8": np.int8, "uint8": np.uint8,
         "bool": np.bool_}[spec["dtype"]])


def run_calib(model, specs, arrays, samples):
    """Runs calib.js on model (a ModelProto) with arrays (one per input, the
    samples back to back); returns {output name: [min, max] or None}."""
    with tempfile.TemporaryDirectory(prefix="qdq-calib-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(model, path)
        args = []
        for k, (spec, arr) in enumerate(zip(specs, arrays)):
            f = os.path.join(tmp, "in%d.bin" % k)
            arr.tofile(f)
            args.append("%s:%s:%s" % (f, spec["dtype"], ",".join(str(d) for d in spec["shape"])))
        out = os.path.join(tmp, "ranges.json")
        p = subprocess.run(["node", os.path.join(HERE, "calib.js"), path, out, str(samples)] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError("onnxruntime: " + p.stdout.decode("utf-8", "replace").strip())
        with open(out) as f:
            return json.load(f)


# ------------------------------------------------------------- preparation

def constants_to_initializers(model):
    """Constant nodes (value attribute) become initializers."""
    g = model.graph
    keep = []
    for n in g.node:
        if n.op_type == "Constant" and attr(n, "value") is not None:
            t = onnx.TensorProto()
            t.CopyFrom(attr(n, "value"))
            t.name = n.output[0]
            g.initializer.append(t)
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)


def fold_with_ort(model, shapes):
    """model with its graph inputs bound to shapes ({name: dims}) and
    folded by onnxruntime's basic graph optimizations (constant folding,
    Conv+BatchNormalization and similar fusions), written by fold.js."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in graph_inputs(m):
        dims = vi.type.tensor_type.shape.dim
        shape = shapes[vi.name]
        if len(dims) != len(shape):
            raise SystemExit("quantize: input %s has rank %d, its shape %s"
                             % (vi.name, len(dims), shape))
        for d, v in zip(dims, shape):
            d.ClearField("dim_param")
            d.dim_value = v
    with tempfile.TemporaryDirectory(prefix="qdq-fold-") as tmp:
        src = os.path.join(tmp, "in.onnx")
        dst = os.path.join(tmp, "out.onnx")
        onnx.save(m, src)
        p = subprocess.run(["node", os.path.join(HERE, "fold.js"), src, dst],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError("onnxruntime: " + p.stdout.decode("utf-8", "replace").strip())
        out = onnx.load(dst)
    # keep the opsets the model had (onnxruntime adds its own domains)
    want = {o.domain for o in model.opset_import}
    keep = [o for o in out.opset_import if o.domain in want]
    del out.opset_import[:]
    out.opset_import.extend(keep)
    return out


def prepare(model, shapes=None):
    """model at opset 13 with constants as initializers and shapes
    inferred. A model below opset 13 whose conversion needs shapes that
    inference cannot give (a Softmax after a Reshape to a computed shape)
    is first folded by onnxruntime with its inputs bound to shapes (the
    shapes of --input-shape and the --calib samples)."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
    if opset < 13:
        try:
            model = version_converter.convert_version(model, 13)
        except RuntimeError:
            if not shapes or any(vi.name not in shapes for vi in graph_inputs(model)):
                raise
            model = fold_with_ort(model, shapes)
            model = version_converter.convert_version(shape_inference.infer_shapes(model), 13)
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version < 13:
            o.version = 13
    if model.ir_version < 7:
        model.ir_version = 7
    constants_to_initializers(model)
    return shape_inference.infer_shapes(model)


def float_tensors(model):
    """Names of the float tensors computed by nodes, in node order."""
    types = {}
    for vi in list(model.graph.value_info) + list(model.graph.output) + list(model.graph.input):
        types[vi.name] = vi.type.tensor_type.elem_type
    out = []
    for n in model.graph.node:
        for o in n.output:
            if o and types.get(o) == FLOAT:
                out.append(o)
    return out, types


def calibrate(model, specs, args):
    """{tensor: (min, max)} for every float graph input and node output."""
    names, _ = float_tensors(model)
    aug = onnx.ModelProto()
    aug.CopyFrom(model)
    have = {o.name for o in aug.graph.output}
    for name in names:
        if name not in have:
            aug.graph.output.append(helper.make_tensor_value_info(name, FLOAT, None))
    for spec in specs:
        if spec["dtype"] == "float32" and spec["name"] not in have:
            # an input cannot be an output too: route it through Identity
            aug.graph.node.append(helper.make_node("Identity", [spec["name"]],
                                                   [spec["name"] + "__calib"]))
            aug.graph.output.append(helper.make_tensor_value_info(spec["name"] + "__calib",
                                                                  FLOAT, None))
    if args.calib:
        arrays, count = load_calib(specs, args.calib)
    else:
        rng = np.random.default_rng(args.seed)
        count = args.samples
        arrays = [draw(s, rng, count) for s in specs]
    ranges = run_calib(aug, specs, arrays, count)
    out = {}
    for k, v in ranges.items():
        if v is not None:
            out[k[:-len("__calib")] if k.endswith("__calib") else k] = (float(v[0]), float(v[1]))
    return out


# ------------------------------------------------------------ parameters

def act_params(rmin, rmax, qtype):
    """(scale float32, zero point) of an activation range."""
    _, npt, qmin, qmax, sym = QTYPES[qtype]
    rmin = min(np.float32(rmin), np.float32(0))
    rmax = max(np.float32(rmax), np.float32(0))
    if sym:
        absmax = max(-rmin, rmax)
        rmin, rmax = -absmax, absmax
    if rmax == rmin:
        return np.float32(1.0), 0
    scale = np.float32((np.float32(rmax) - np.float32(rmin)) / np.float32(qmax - qmin))
    if sym:
        return scale, 0
    zp = int(np.clip(np.round(np.float32(qmin) - np.float32(rmin) / scale), qmin, qmax))
    return scale, zp


def quantize_values(values, scale, zp, qmin, qmax, npt):
    return np.clip(np.round(values / scale) + zp, qmin, qmax).astype(npt)


def weight_params(w, axis):
    """int8 symmetric weights: (q, scale array or scalar)."""
    w = w.astype(np.float32)
    if axis is None:
        absmax = np.float32(np.abs(w).max()) if w.size else np.float32(0)
        scale = np.float32(2 * absmax / np.float32(254))
        if scale == 0:
            scale = np.float32(1)
        return quantize_values(w, scale, 0, -127, 127, np.int8), scale
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    absmax = np.abs(moved).max(axis=1).astype(np.float32)
    scale = (np.float32(2) * absmax / np.float32(254)).astype(np.float32)
    scale[scale == 0] = 1
    shape = [1] * w.ndim
    shape[axis] = w.shape[axis]
    q = quantize_values(w, scale.reshape(shape), 0, -127, 127, np.int8)
    return q, scale


# ------------------------------------------------------------- the rewrite

class Quantizer:
    def __init__(self, model, ranges, args):
        self.m = model
        self.g = model.graph
        self.ranges = ranges
        self.args = args
        self.qtype = args.activations
        self.inits = {i.name: i for i in self.g.initializer}
        self.new_inits = []
        self.params = {}        # tensor -> (scale, zp)
        self.const_dq = {}      # (initializer, kind) -> DQ output name
        self.head_nodes = []    # DQs of constants, before everything
        self.qdq_domain = MS if self.qtype == "int16" else ""

    # -- bookkeeping
    def producers(self):
        return {o: n for n in self.g.node for o in n.output if o}

    def consumers(self):
        c = {}
        for n in self.g.node:
            for i in n.input:
                if i:
                    c.setdefault(i, []).append(n)
        return c

    def add_init(self, name, array):
        self.new_inits.append(numpy_helper.from_array(array, name))
        return name

    def is_float_const(self, name):
        t = self.inits.get(name)
        return t is not None and t.data_type == FLOAT

    # -- which inputs of a node are quantized, and how
    def roles(self, n):
        """[(input index, 'act' | 'weight' | 'bias' | 'const')]"""
        op = n.op_type
        k = len(n.input)
        if op in ("Conv", "Gemm", "MatMul"):
            out = [(0, "act")]
            if k > 1:
                out.append((1, "weight" if self.is_float_const(n.input[1]) else "act"))
            if op != "MatMul" and k > 2 and n.input[2] and self.bias_ok(n):
                out.append((2, "bias"))
            return out
        if op in ("Add", "Mul"):
            return [(i, "const" if self.is_float_const(n.input[i]) else "act") for i in range(k)]
        if op == "Concat":
            return [(i, "const" if self.is_float_const(n.input[i]) else "act") for i in range(k)]
        if op == "Gather":
            return [(0, "const" if self.is_float_const(n.input[0]) else "act")]
        return [(0, "act")]

    def bias_ok(self, n):
        if not self.is_float_const(n.input[2]):
            return False
        b = numpy_helper.to_array(self.inits[n.input[2]])
        if n.op_type == "Gemm":
            if attr(n, "beta", 1.0) != 1.0 or attr(n, "alpha", 1.0) != 1.0 or b.ndim != 1:
                return False
        return self.is_float_const(n.input[1])

    def quantizable(self, n, types):
        if n.op_type not in QUANT_OPS or n.domain not in ("", "ai.onnx"):
            return False
        if n.op_type == "Resize" and attr(n, "mode", b"nearest") not in (b"nearest", "nearest"):
            return False
        for i, role in self.roles(n):
            name = n.input[i]
            if role == "act" and types.get(name) != FLOAT:
                return False
        return any(types.get(o) == FLOAT for o in n.output)

    # -- --fuse-relu
    def fuse_relu(self, types):
        outputs = {o.name for o in self.g.output}
        while True:
            prod, cons = self.producers(), self.consumers()
            done = True
            for n in list(self.g.node):
                if n.op_type not in ("Relu", "Clip"):
                    continue
                p = prod.get(n.input[0])
                if p is None or p.op_type not in FUSABLE_PRODUCERS or n.input[0] in outputs or \
                        len(cons.get(n.input[0], [])) != 1 or not self.quantizable(p, types):
                    continue
                idx = list(p.output).index(n.input[0])
                p.output[idx] = n.output[0]
                self.g.node.remove(n)
                done = False
                break
            if done:
                return

    # -- parameters of activation tensors
    def tensor_params(self, t, prod):
        if t in self.params:
            return self.params[t]
        p = prod.get(t)
        if p is not None and p.op_type in PASS_THROUGH and self.quantized(p):
            src = p.input[0]
            if src in self.inits:
                r = numpy_helper.to_array(self.inits[src])
                val = act_params(r.min(), r.max(), self.qtype)
            else:
                val = self.tensor_params(src, prod)
        elif p is not None and p.op_type == "Softmax" and self.quantized(p) and \
                self.qtype != "int16":
            val = (np.float32(1.0 / 256), 0 if self.qtype == "uint8" else -128)
        else:
            if t not in self.ranges:
                raise RuntimeError("no calibration range for " + t)
            val = act_params(*self.ranges[t], self.qtype)
        self.params[t] = val
        return val

    def quantized(self, n):
        return key(n) in self.qset

    # -- constant operands
    def const_input(self, name, kind, node, axis=None, x_name=None, prod=None):
        key = (name, kind, axis, x_name)
        if key in self.const_dq:
            return self.const_dq[key]
        arr = numpy_helper.to_array(self.inits[name]).astype(np.float32)
        q_name, s_name, z_name = name + "_quantized", name + "_scale", name + "_zero_point"
        if kind == "weight":
            q, scale = weight_params(arr, axis)
            self.add_init(q_name, q)
            self.add_init(s_name, np.asarray(scale, np.float32))
            self.add_init(z_name, np.zeros(np.shape(scale), np.int8))
            self.wscale[name] = scale
            domain, ax = "", axis
        elif kind == "bias":
            x_scale, _ = self.tensor_params(x_name, prod)
            w_scale = self.wscale[node.input[1]]
            scale = (np.float32(x_scale) * np.asarray(w_scale, np.float32)).astype(np.float32)
            scale = np.where(scale == 0, np.float32(1), scale).astype(np.float32)
            q = np.round(arr / scale).astype(np.int64)
            q = np.clip(q, -2 ** 31, 2 ** 31 - 1).astype(np.int32)
            if scale.ndim == 0:
                scale = np.float32(scale)
            self.add_init(q_name, q)
            self.add_init(s_name, np.asarray(scale, np.float32))
            self.add_init(z_name, np.zeros(np.shape(scale), np.int32))
            domain, ax = "", (0 if np.ndim(scale) == 1 else None)
        else:  # a constant activation operand: activation type, own range
            onnx_t, npt, qmin, qmax, _ = QTYPES[self.qtype]
            scale, zp = act_params(arr.min() if arr.size else 0, arr.max() if arr.size else 0,
                                   self.qtype)
            self.add_init(q_name, quantize_values(arr, scale, zp, qmin, qmax, npt))
            self.add_init(s_name, np.asarray(scale, np.float32))
            self.add_init(z_name, np.asarray(zp, npt))
            domain, ax = self.qdq_domain, None
        out = name + "_DequantizeLinear_Output"
        kw = {"axis": ax} if ax is not None else {}
        self.head_nodes.append(helper.make_node("DequantizeLinear", [q_name, s_name, z_name],
                                                [out], name=name + "_DequantizeLinear",
                                                domain=domain, **kw))
        self.const_dq[key] = out
        return out

    def weight_axis(self, n):
        if self.args.per_tensor:
            return None
        w = self.inits[n.input[1]]
        if n.op_type == "Conv":
            return 0
        if n.op_type == "Gemm":
            return 0 if attr(n, "transB", 0) else 1
        return len(w.dims) - 1  # MatMul: the output (last) axis

    def run(self):
        _, types = float_tensors(self.m)
        for vi in self.g.input:
            types[vi.name] = vi.type.tensor_type.elem_type
        for t in self.g.initializer:
            types[t.name] = t.data_type
        if self.args.fuse_relu:
            self.qset = set()
            self.fuse_relu(types)
        self.qset = {key(n) for n in self.g.node if self.quantizable(n, types)}
        prod = self.producers()
        out_names = [o.name for o in self.g.output]
        in_names = [i.name for i in graph_inputs(self.m)]

        # tensors getting a Q/DQ pair
        qdq = []
        seen = set()

        def want(t):
            if t and t not in seen and types.get(t) == FLOAT and t not in self.inits:
                seen.add(t)
                qdq.append(t)
        for t in in_names:
            want(t)
        for n in self.g.node:
            if self.quantized(n):
                for i, role in self.roles(n):
                    if role == "act":
                        want(n.input[i])
                for o in n.output:
                    want(o)
        for t in out_names:
            want(t)
        for t in qdq:
            self.tensor_params(t, prod)

        # constants (weights first: the bias scales need them)
        self.wscale = {}
        rename = {}  # (node id, input index) -> new input name
        for n in self.g.node:
            if not self.quantized(n):
                continue
            roles = self.roles(n)
            for i, role in sorted(roles, key=lambda r: {"weight": 0, "const": 1, "act": 2,
                                                        "bias": 3}[r[1]]):
                if role == "weight":
                    rename[(key(n), i)] = self.const_input(n.input[1], "weight", n,
                                                          axis=self.weight_axis(n))
                elif role == "const":
                    rename[(key(n), i)] = self.const_input(n.input[i], "const", n)
                elif role == "bias":
                    rename[(key(n), i)] = self.const_input(n.input[2], "bias", n,
                                                          axis=self.weight_axis(n),
                                                          x_name=n.input[0], prod=prod)

        # activation pairs
        dq_of = {}
        pairs = {}
        onnx_t, npt, _, _, _ = QTYPES[self.qtype]
        for t in qdq:
            scale, zp = self.params[t]
            s_name, z_name = t + "_scale", t + "_zero_point"
            self.add_init(s_name, np.asarray(scale, np.float32))
            self.add_init(z_name, np.asarray(zp, npt))
            src = t + "_QuantizeLinear_Input" if t in out_names else t
            q_out = t + "_QuantizeLinear_Output"
            dq_out = t if t in out_names else t + "_DequantizeLinear_Output"
            pairs[t] = [helper.make_node("QuantizeLinear", [src, s_name, z_name], [q_out],
                                         name=t + "_QuantizeLinear", domain=self.qdq_domain),
                        helper.make_node("DequantizeLinear", [q_out, s_name, z_name], [dq_out],
                                         name=t + "_DequantizeLinear", domain=self.qdq_domain)]
            dq_of[t] = dq_out

        nodes = list(self.head_nodes)
        for t in in_names:
            if t in pairs:
                nodes += pairs[t]
        for n in self.g.node:
            for i, name in enumerate(n.input):
                if (key(n), i) in rename:
                    n.input[i] = rename[(key(n), i)]
                elif name in dq_of:
                    n.input[i] = dq_of[name]
            nodes.append(n)
            for o in list(n.output):
                base = o[:-len("_QuantizeLinear_Input")] if o.endswith("_QuantizeLinear_Input") \
                    else o
                if base in pairs and base not in in_names:
                    nodes += pairs[base]
        for n in nodes:
            for k, o in enumerate(n.output):
                if o in pairs and o in out_names and n.op_type != "DequantizeLinear":
                    n.output[k] = o + "_QuantizeLinear_Input"
        del self.g.node[:]
        self.g.node.extend(nodes)
        self.g.initializer.extend(self.new_inits)
        if self.qdq_domain:
            self.m.opset_import.append(helper.make_opsetid(MS, 1))
        del self.g.value_info[:]
        drop_unused_initializers(self.m)


def drop_unused_initializers(model):
    used = {i for n in model.graph.node for i in n.input}
    used |= {o.name for o in model.graph.output}
    keep = [t for t in model.graph.initializer if t.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep)
    ins = {i.name for i in model.graph.input}
    keep_in = [i for i in model.graph.input
               if i.name in used or i.name not in {t.name for t in keep}]
    if len(keep_in) != len(ins):
        del model.graph.input[:]
        model.graph.input.extend(keep_in)


# ------------------------------------------------------------- QOperator

QOP_MS = {"Add": "QLinearAdd", "Mul": "QLinearMul", "GlobalAveragePool": "QLinearGlobalAveragePool",
          "AveragePool": "QLinearAveragePool", "Concat": "QLinearConcat",
          "Sigmoid": "QLinearSigmoid", "LeakyRelu": "QLinearLeakyRelu",
          "Softmax": "QLinearSoftmax", "Gemm": "QGemm"}


def to_qoperator(model):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    outputs = {o.name for o in g.output}

    def prod_map():
        return {o: n for n in g.node for o in n.output if o}

    def cons_map():
        c = {}
        for n in g.node:
            for i in n.input:
                c.setdefault(i, []).append(n)
        return c

    def same_value(a, b):
        return np.array_equal(numpy_helper.to_array(inits[a]), numpy_helper.to_array(inits[b]))

    used_ms = False
    new_nodes = []
    prod, cons = prod_map(), cons_map()
    removed = set()
    for n in list(g.node):
        if n.op_type == "QuantizeLinear" and key(n) in removed:
            continue
        op = n.op_type
        if op not in QOP_MS and op not in ("Conv", "MatMul") and op not in DIRECT_8BIT:
            new_nodes.append(n)
            continue
        # output: used by exactly one standard QuantizeLinear
        o = n.output[0]
        users = cons.get(o, [])
        if len(n.output) != 1 or o in outputs or len(users) != 1 or \
                users[0].op_type != "QuantizeLinear" or users[0].domain not in ("", "ai.onnx"):
            new_nodes.append(n)
            continue
        qn = users[0]
        # inputs: DequantizeLinear outputs (standard domain)
        dq = []
        ok = True
        n_act = {"Conv": 3, "Gemm": 3, "MatMul": 2, "Add": 2, "Mul": 2}.get(op, len(n.input))
        if op in DIRECT_8BIT:
            n_act = 1
        for i in range(n_act):
            if i >= len(n.input) or not n.input[i]:
                dq.append(None)
                continue
            d = prod.get(n.input[i])
            if d is None or d.op_type != "DequantizeLinear" or d.domain not in ("", "ai.onnx"):
                ok = False
                break
            dq.append(d)
        if not ok or (op == "Gemm" and len(n.input) > 2 and dq[2] is None):
            new_nodes.append(n)
            continue

        def triple(d):
            return [d.input[0], d.input[1], d.input[2]]
        y = [qn.input[1], qn.input[2]]
        out = [qn.output[0]]
        atts = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if op in DIRECT_8BIT:
            if not same_value(dq[0].input[1], y[0]) or not same_value(dq[0].input[2], y[1]):
                new_nodes.append(n)
                continue
            q = helper.make_node(op, [dq[0].input[0]] + list(n.input[1:]), out,
                                 name=n.name or out[0], **atts)
        elif op == "Conv":
            ins = triple(dq[0]) + triple(dq[1]) + y
            if len(n.input) > 2 and n.input[2]:
                ins.append(dq[2].input[0])
            q = helper.make_node("QLinearConv", ins, out, name=(n.name or out[0]) + "_quant",
                                 **atts)
        elif op == "MatMul":
            q = helper.make_node("QLinearMatMul", triple(dq[0]) + triple(dq[1]) + y, out,
                                 name=(n.name or out[0]) + "_quant")
        elif op == "Gemm":
            ins = triple(dq[0]) + triple(dq[1])
            ins.append(dq[2].input[0] if len(n.input) > 2 and dq[2] is not None else "")
            ins += y
            # QGemm has no beta (a quantized C was only taken with beta 1)
            atts = {k: v for k, v in atts.items() if k in ("alpha", "transA", "transB")}
            q = helper.make_node("QGemm", ins, out, name=(n.name or out[0]) + "_quant",
                                 domain=MS, **atts)
        elif op == "Concat":
            ins = list(y)
            for d in dq:
                ins += triple(d)
            q = helper.make_node("QLinearConcat", ins, out, name=(n.name or out[0]) + "_quant",
                                 domain=MS, **atts)
        elif op in ("Add", "Mul"):
            q = helper.make_node(QOP_MS[op], triple(dq[0]) + triple(dq[1]) + y, out,
                                 name=(n.name or out[0]) + "_quant", domain=MS)
        else:
            if op in ("GlobalAveragePool", "AveragePool"):
                atts["channels_last"] = 0
            if op == "Softmax":
                atts["opset"] = 13
                if "axis" not in atts:
                    atts["axis"] = -1
            q = helper.make_node(QOP_MS[op], triple(dq[0]) + y, out,
                                 name=(n.name or out[0]) + "_quant", domain=MS, **atts)
        used_ms = used_ms or q.domain == MS
        new_nodes.append(q)
        removed.add(key(qn))
    final = [n for n in new_nodes if n.op_type != "QuantizeLinear" or key(n) not in removed]
    # drop DequantizeLinear / QuantizeLinear nodes whose outputs are unused
    while True:
        used = {i for n in final for i in n.input} | outputs
        keep = [n for n in final
                if n.op_type not in ("DequantizeLinear", "QuantizeLinear") or n.output[0] in used]
        if len(keep) == len(final):
            break
        final = keep
    del g.node[:]
    g.node.extend(final)
    if used_ms and not any(o.domain == MS for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS, 1))
    drop_unused_initializers(model)


# ------------------------------------------------------------------ main

def quantize(args):
    """Returns (quantized ModelProto, input specs)."""
    model = onnx.load(args.input)
    specs = input_specs(model, args.input_range, args.input_dist)
    apply_shapes(specs, args.input_shape)
    shapes = {s["name"]: s["shape"] for s in specs if s["name"] in
              {t.partition("=")[0] for t in args.input_shape}}
    if args.calib:
        load_calib(specs, args.calib)  # the samples' shapes
        shapes = {s["name"]: s["shape"] for s in specs}
    model = prepare(model, shapes)
    specs = input_specs(model, args.input_range, args.input_dist)
    apply_shapes(specs, args.input_shape)
    ranges = calibrate(model, specs, args)
    Quantizer(model, ranges, args).run()
    if args.format == "qoperator":
        to_qoperator(model)
    model.producer_name = "tvmcc-test-qdq"
    model.producer_version = "1"
    onnx.checker.check_model(model)
    return model, specs


def check_runs(path, specs, seed):
    """Runs the written model once in onnxruntime-node."""
    model = onnx.load(path)
    rng = np.random.default_rng(seed + 7919)
    run_calib(model, specs, [draw(s, rng, 1) for s in specs], 1)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    model, specs = quantize(args)
    onnx.save(model, args.output)
    if not args.no_check:
        check_runs(args.output, specs, args.seed)
    return specs


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, ValueError, onnx.checker.ValidationError) as e:
        sys.stderr.write("quantize: %s\n" % e)
        sys.exit(1)
