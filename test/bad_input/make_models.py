#!/usr/bin/python3
"""Writes the malformed models test/bad_input/run.sh feeds to tvmcc.

Usage: make_models.py OUTDIR. Every model is built with onnx.helper and is
deliberately wrong in exactly one way; node and tensor names are distinctive
so run.sh can check that tvmcc's message names them.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "bad", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def vinfo(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/bad_input"
    os.makedirs(out, exist_ok=True)

    def save(m, name):
        onnx.save(m, os.path.join(out, name))

    f4 = [1, 4]
    # A valid model: Relu on a 1x4 float tensor (usage-error cases use it).
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu_ok")],
               [vinfo("x", TensorProto.FLOAT, f4)], [vinfo("y", TensorProto.FLOAT, f4)]),
         "good.onnx")

    with open(os.path.join(out, "not_onnx.onnx"), "w") as f:
        f.write("This is a text file, not an ONNX model.\n" * 4)

    # A real model with a weight, cut after 100 bytes.
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(1, 64) / 7, "w_big")
    m = model([helper.make_node("Add", ["x", "w_big"], ["y"], name="add_big")],
              [vinfo("x", TensorProto.FLOAT, [1, 64])], [vinfo("y", TensorProto.FLOAT, [1, 64])], [w])
    save(m, "add_big_ok.onnx")  # whole, for --input-value on an initializer
    data = m.SerializeToString()
    assert len(data) > 200
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[:100])

    # Two operators no one implements: one error must list both.
    save(model([helper.make_node("FrobnicateXyz", ["x"], ["t"], name="frob_node"),
                helper.make_node("WibbleQux", ["t"], ["y"], name="wibble_node")],
               [vinfo("x", TensorProto.FLOAT, f4)], [vinfo("y", TensorProto.FLOAT, f4)]),
         "unknown_ops.onnx")

    # Add reads "w_missing", which is neither an input, an initializer nor
    # produced by any node.
    save(model([helper.make_node("Add", ["x", "w_missing"], ["y"], name="add_dangling")],
               [vinfo("x", TensorProto.FLOAT, f4)], [vinfo("y", TensorProto.FLOAT, f4)]),
         "dangling_input.onnx")

    # Add of float and int64.
    save(model([helper.make_node("Add", ["x", "n"], ["y"], name="add_mixed")],
               [vinfo("x", TensorProto.FLOAT, f4), vinfo("n", TensorProto.INT64, f4)],
               [vinfo("y", TensorProto.FLOAT, f4)]),
         "type_mismatch.onnx")

    # First dimension symbolic; compiling needs --input-shape.
    save(model([helper.make_node("Relu", ["xdyn"], ["y"], name="relu_dyn")],
               [vinfo("xdyn", TensorProto.FLOAT, ["batch", 4])],
               [vinfo("y", TensorProto.FLOAT, ["batch", 4])]),
         "dynamic_dim.onnx")

    # Gradient through an operator tvmcc does not differentiate (Softmax).
    g = model([helper.make_node("Softmax", ["x"], ["s"], name="soft"),
               helper.make_node("Gradient", ["x"], ["dx"], name="grad_soft",
                                domain="ai.onnx.preview.training", xs=["x"], y="s")],
              [vinfo("x", TensorProto.FLOAT, f4)],
              [vinfo("s", TensorProto.FLOAT, f4), vinfo("dx", TensorProto.FLOAT, f4)])
    g.opset_import.append(helper.make_opsetid("ai.onnx.preview.training", 1))
    save(g, "gradient_softmax.onnx")

    # Gradient fed another tensor than the one its xs names.
    g = model([helper.make_node("Relu", ["x"], ["s"], name="relu"),
               helper.make_node("Gradient", ["z"], ["dx"], name="grad_other",
                                domain="ai.onnx.preview.training", xs=["x"], y="s")],
              [vinfo("x", TensorProto.FLOAT, f4), vinfo("z", TensorProto.FLOAT, f4)],
              [vinfo("s", TensorProto.FLOAT, f4), vinfo("dx", TensorProto.FLOAT, f4)])
    g.opset_import.append(helper.make_opsetid("ai.onnx.preview.training", 1))
    save(g, "gradient_other_input.onnx")

    # An If on a run-time condition (input c): both branches are compiled,
    # and the else branch's Conv has a rank-3 weight for a rank-4 input;
    # the error must name the Conv and the If.
    x4 = [1, 2, 4, 4]
    then_b = helper.make_graph([helper.make_node("Relu", ["x"], ["t_y"], name="relu_then")],
                               "then_b", [], [vinfo("t_y", TensorProto.FLOAT, None)])
    wbad = numpy_helper.from_array(np.ones((3, 2, 3), dtype=np.float32), "w_rank3")
    else_b = helper.make_graph([helper.make_node("Conv", ["x", "w_rank3"], ["e_y"],
                                                 name="conv_rank3")],
                               "else_b", [], [vinfo("e_y", TensorProto.FLOAT, None)], [wbad])
    save(model([helper.make_node("If", ["c"], ["y"], name="if_runtime_bad",
                                 then_branch=then_b, else_branch=else_b)],
               [vinfo("x", TensorProto.FLOAT, x4), vinfo("c", TensorProto.BOOL, [])],
               [vinfo("y", TensorProto.FLOAT, None)]),
         "runtime_if_bad_branch.onnx")

    # Inputs of several types for --input-value errors; only x is used.
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu_values")],
               [vinfo("x", TensorProto.FLOAT, f4), vinfo("sr", TensorProto.INT64, []),
                vinfo("flag", TensorProto.BOOL, [2]), vinfo("u8", TensorProto.UINT8, [2]),
                vinfo("f", TensorProto.FLOAT, [2]), vinfo("h", TensorProto.FLOAT16, [1]),
                vinfo("i8", TensorProto.INT8, [1]), vinfo("s", TensorProto.STRING, [1])],
               [vinfo("y", TensorProto.FLOAT, f4)]),
         "input_values.onnx")

    # onnxruntime's com.microsoft QOperator ops, each wrong in one way.
    I8, U8, F = TensorProto.INT8, TensorProto.UINT8, TensorProto.FLOAT

    def const(name, dtype, vals, dims=None):
        vals = list(vals)
        return helper.make_tensor(name, dtype, [len(vals)] if dims is None else dims, vals)

    def scalars(prefix, qtype=I8):
        return [const(prefix + "_s", F, [0.05], []), const(prefix + "_z", qtype, [0], [])]

    def ms_model(nodes, inputs, outputs, inits, name):
        m = model(nodes, inputs, outputs, inits)
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        save(m, name)

    q4 = [1, 4]
    qx = [vinfo("qa", I8, q4), vinfo("qb", I8, q4)]
    qy = [vinfo("qy", I8, q4)]
    add_ins = ["qa", "a_s", "a_z", "qb", "b_s", "b_z", "y_s", "y_z"]
    add_inits = scalars("a") + scalars("b") + scalars("y")
    # QLinearAdd given five inputs
    ms_model([helper.make_node("QLinearAdd", add_ins[:5], ["qy"], name="qadd_short",
                               domain="com.microsoft")], qx, qy, add_inits, "qop_arity.onnx")
    # QLinearAdd whose A_scale is a vector
    ms_model([helper.make_node("QLinearAdd", add_ins, ["qy"], name="qadd_vecscale",
                               domain="com.microsoft")], qx, qy,
             [const("a_s", F, [0.05, 0.1])] + add_inits[1:], "qop_scale_vector.onnx")
    # QLinearMul of a float tensor
    ms_model([helper.make_node("QLinearMul", ["xf"] + add_ins[1:], ["qy"], name="qmul_float",
                               domain="com.microsoft")],
             [vinfo("xf", F, q4), vinfo("qb", I8, q4)], qy, add_inits, "qop_float_input.onnx")
    # QLinearAdd in the default domain: not an ONNX operator
    save(model([helper.make_node("QLinearAdd", add_ins, ["qy"], name="qadd_onnx")], qx, qy,
               add_inits), "qop_default_domain.onnx")
    # QLinearGlobalAveragePool on uint8 with an int8 zero point
    ms_model([helper.make_node("QLinearGlobalAveragePool", ["qu", "a_s", "a_z", "y_s", "y_z"],
                               ["qg"], name="qgap_zptype", domain="com.microsoft")],
             [vinfo("qu", U8, [1, 2, 3, 3])], [vinfo("qg", U8, [1, 2, 1, 1])], add_inits,
             "qop_zp_type.onnx")
    # QLinearConcat with a partial (X, scale) pair
    ms_model([helper.make_node("QLinearConcat", ["y_s", "y_z", "qa", "a_s", "a_z", "qb", "b_s"],
                               ["qy"], name="qconcat_pair", domain="com.microsoft", axis=1)],
             qx, qy, add_inits, "qop_concat_arity.onnx")
    # QLinearSoftmax without its required opset attribute
    ms_model([helper.make_node("QLinearSoftmax", ["qa", "a_s", "a_z", "y_s", "y_z"], ["qy"],
                               name="qsoftmax_noopset", domain="com.microsoft")],
             qx[:1], qy, add_inits, "qop_softmax_opset.onnx")
    # QLinearAveragePool on NHWC input
    ms_model([helper.make_node("QLinearAveragePool", ["qp", "a_s", "a_z", "y_s", "y_z"], ["qpo"],
                               name="qavgpool_nhwc", domain="com.microsoft", kernel_shape=[2, 2],
                               channels_last=1)],
             [vinfo("qp", I8, [1, 4, 4, 2])], [vinfo("qpo", I8, [1, 3, 3, 2])], add_inits,
             "qop_avgpool_nhwc.onnx")
    # QGemm whose b_scale has 3 entries for 4 output columns
    gw = numpy_helper.from_array(np.ones((4, 4), dtype=np.int8), "gw")
    ms_model([helper.make_node("QGemm", ["qa", "a_s", "a_z", "gw", "gw_s", "b_z", "", "y_s",
                                         "y_z"], ["qy"], name="qgemm_bscale",
                               domain="com.microsoft")],
             qx[:1], qy, add_inits + [gw, const("gw_s", F, [0.1, 0.1, 0.1])],
             "qop_gemm_bscale.onnx")
    # QGemm with y_scale but no y_zero_point
    ms_model([helper.make_node("QGemm", ["qa", "a_s", "a_z", "gw", "b_s", "b_z", "", "y_s"],
                               ["qy"], name="qgemm_noyzp", domain="com.microsoft")],
             qx[:1], qy, add_inits + [gw], "qop_gemm_yzp.onnx")
    # QLinearMatMul whose b_scale is neither a scalar nor per column
    ms_model([helper.make_node("QLinearMatMul", ["qa", "a_s", "a_z", "gw", "gw_s", "b_z", "y_s",
                                                 "y_z"], ["qy"], name="qmatmul_bscale")],
             qx[:1], qy, add_inits + [gw, const("gw_s", F, [0.1, 0.1, 0.1])],
             "qop_matmul_bscale.onnx")

    # An opset newer than tvmcc knows (ONNX 1.20.1 defines 25)
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu_new")],
              [vinfo("x", TensorProto.FLOAT, f4)], [vinfo("y", TensorProto.FLOAT, f4)])
    m.opset_import[0].version = 26
    save(m, "opset26.onnx")
    # Sequence and optional graph inputs (frontend/seq_io.c): a sequence
    # input needs --sequence-length, its elements' shapes must fit the
    # declared element shape, an absent optional cannot be read.
    def opset18(nodes, inputs, outputs, name):
        graph = helper.make_graph(nodes, "bad", inputs, outputs)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        m.ir_version = 8
        save(m, name)
    seq_in = helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, [2, 3])
    opset18([helper.make_node("ConcatFromSequence", ["seq_in"], ["cat"], name="cat_seq", axis=0),
             helper.make_node("Add", ["cat", "t_in"], ["y"], name="add_t")],
            [seq_in, vinfo("t_in", TensorProto.FLOAT, [1, 3])],
            [vinfo("y", TensorProto.FLOAT, None)], "seq_input.onnx")
    opt_in = helper.make_value_info("opt_in", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [4])))
    opset18([helper.make_node("OptionalGetElement", ["opt_in"], ["got"], name="get_opt"),
             helper.make_node("Relu", ["got"], ["y"], name="relu_got")],
            [opt_in], [vinfo("y", TensorProto.FLOAT, [4])], "opt_get.onnx")
    opset18([helper.make_node("Relu", ["opt_in"], ["y"], name="relu_opt")],
            [opt_in], [vinfo("y", TensorProto.FLOAT, [4])], "opt_read.onnx")
    # The ONNX 1.20 element types (numbers: Debian's onnx predates them)
    def raw_tensor(name, dtype, dims, raw):
        t = TensorProto()
        t.name, t.data_type, t.raw_data = name, dtype, raw
        t.dims.extend(dims)
        return t
    def new_model(nodes, inputs, outputs, opset, inits=()):
        m = model(nodes, inputs, outputs, inits)
        m.opset_import[0].version = opset
        m.ir_version = 10
        return m
    # Cast to float8e8m0 (24) with a round_mode ONNX does not define
    save(new_model([helper.make_node("Cast", ["x"], ["y"], name="cast_e8m0_sideways", to=24,
                                     round_mode="sideways")],
                   [vinfo("x", TensorProto.FLOAT, f4)], [vinfo("y", 24, f4)], 25),
         "cast_e8m0_mode.onnx")
    # blocked QuantizeLinear whose scale has 3 blocks where ceil(4 / 2) = 2
    save(new_model([helper.make_node("QuantizeLinear", ["xq", "bs", "bz"], ["yq"],
                                     name="q_blocked_shape", axis=1, block_size=2)],
                   [vinfo("xq", TensorProto.FLOAT, [2, 4])], [vinfo("yq", 22, [2, 4])], 21,
                   [numpy_helper.from_array(np.ones((2, 3), dtype=np.float32), "bs"),
                    raw_tensor("bz", 22, [2, 3], bytes(3))]),
         "q_blocked_shape.onnx")
    # DequantizeLinear with an integer output_dtype
    save(new_model([helper.make_node("DequantizeLinear", ["xi", "ds"], ["yd"],
                                     name="dq_int_out", output_dtype=6)],
                   [vinfo("xi", TensorProto.INT8, f4)], [vinfo("yd", TensorProto.INT32, f4)], 21,
                   [numpy_helper.from_array(np.ones((), dtype=np.float32), "ds")]),
         "dq_output_dtype.onnx")

    vision_models(save)
    transformer_models(save)
    late_models(save)


def transformer_models(save):
    """Transformer operators (opsets 20-24) with one bad attribute, shape or
    opset each."""
    F = TensorProto.FLOAT
    f4 = [1, 4]

    def at_opset(m, opset):
        m.opset_import[0].version = opset
        return m

    save(model([helper.make_node("Gelu", ["x"], ["y"], name="gelu_old")],
               [vinfo("x", F, f4)], [vinfo("y", F, f4)]), "gelu_old_opset.onnx")
    save(at_opset(model([helper.make_node("Gelu", ["x"], ["y"], name="gelu_fast",
                                          approximate="fast")],
                        [vinfo("x", F, f4)], [vinfo("y", F, f4)]), 20), "gelu_approximate.onnx")
    qkv = [vinfo("q", F, [1, 3, 2, 4]), vinfo("k", F, [1, 2, 2, 4]), vinfo("v", F, [1, 2, 2, 4])]
    save(at_opset(model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn_gqa")],
                        qkv, [vinfo("y", F, [1, 3, 2, 4])]), 23), "attention_heads.onnx")
    qkv3 = [vinfo("q", F, [1, 2, 8]), vinfo("k", F, [1, 2, 8]), vinfo("v", F, [1, 2, 8])]
    save(at_opset(model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn_3d")],
                        qkv3, [vinfo("y", F, [1, 2, 8])]), 23), "attention_3d_heads.onnx")
    rope_in = [vinfo("x", F, [1, 2, 3, 4]), vinfo("c", F, [1, 3, 1]), vinfo("s", F, [1, 3, 1])]
    save(at_opset(model([helper.make_node("RotaryEmbedding", ["x", "c", "s"], ["y"],
                                          name="rope_odd", rotary_embedding_dim=3)],
                        rope_in, [vinfo("y", F, [1, 2, 3, 4])]), 23), "rotary_odd_dim.onnx")


def vision_models(save):
    """Operators of opsets 18-20 with one bad attribute or input each."""
    F = TensorProto.FLOAT

    def m(opset, node, inputs, out_shape, inits=()):
        graph = helper.make_graph([node], "bad", inputs, [vinfo("vy", F, out_shape)], list(inits))
        mm = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        mm.ir_version = 8 if opset == 18 else 9
        return mm

    def ints(name, values):
        return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)

    x4 = [vinfo("vx", F, [1, 2, 4, 4])]
    sc = numpy_helper.from_array(np.asarray([1, 1, 2, 2], dtype=np.float32), "vsc")
    rs = ["vx", "", "vsc"]
    save(m(18, helper.make_node("Resize", rs, ["vy"], name="resize_policy",
                                keep_aspect_ratio_policy="fit"), x4, [1, 2, 8, 8], [sc]),
         "resize_policy.onnx")
    save(m(18, helper.make_node("Resize", rs, ["vy"], name="resize_aa_nearest", antialias=1),
           x4, [1, 2, 8, 8], [sc]), "resize_aa_nearest.onnx")
    save(m(18, helper.make_node("Resize", rs, ["vy"], name="resize_axes_twice", axes=[2, -2]),
           x4, [1, 2, 8, 8], [sc]), "resize_axes_twice.onnx")
    save(m(18, helper.make_node("Resize", rs, ["vy"], name="resize_sym18",
                                coordinate_transformation_mode="half_pixel_symmetric"),
           x4, [1, 2, 8, 8], [sc]), "resize_sym18.onnx")
    save(m(20, helper.make_node("DFT", ["vd", "", "vax"], ["vy"], name="dft_axis3"),
           [vinfo("vd", F, [1, 4, 4, 1])], [1, 4, 4, 2], [ints("vax", 3)]), "dft_axis3.onnx")
    save(m(18, helper.make_node("GridSample", ["vg", "vgrid"], ["vy"], name="gridsample_3d_old"),
           [vinfo("vg", F, [1, 1, 2, 2, 2]), vinfo("vgrid", F, [1, 2, 2, 2, 3])],
           [1, 1, 2, 2, 2]), "gridsample_3d_old.onnx")
    save(m(20, helper.make_node("AffineGrid", ["vth", "vsize"], ["vy"], name="affine_theta"),
           [vinfo("vth", F, [2, 2, 4])], [2, 3, 3, 2], [ints("vsize", [2, 1, 3, 3])]),
         "affine_theta.onnx")
    save(m(18, helper.make_node("CenterCropPad", ["vc", "vshape"], ["vy"], name="ccp_count",
                                axes=[0, 1]),
           [vinfo("vc", F, [4, 4, 3])], [2, 2, 3], [ints("vshape", [2, 2, 3])]),
         "ccp_count.onnx")
    save(m(18, helper.make_node("Col2Im", ["vcol", "vim", "vbl"], ["vy"], name="col2im_block"),
           [vinfo("vcol", F, [1, 5, 5])], [1, 1, 3, 3],
           [ints("vim", [3, 3]), ints("vbl", [2, 2])]), "col2im_block.onnx")
    save(m(19, helper.make_node("DeformConv", ["vdx", "vdw", "voff"], ["vy"], name="deform_off",
                                kernel_shape=[2, 2]),
           [vinfo("vdx", F, [1, 1, 3, 3]), vinfo("vdw", F, [1, 1, 2, 2]),
            vinfo("voff", F, [1, 6, 2, 2])], [1, 1, 2, 2]), "deform_off.onnx")
    save(m(18, helper.make_node("LpPool", ["vx"], ["vy"], name="lppool_p0", kernel_shape=[2, 2],
                                p=0), x4, [1, 2, 3, 3]), "lppool_p0.onnx")


def late_models(save):
    """String tensors (opset 20), LpNormalization, GroupNormalization and
    TreeEnsemble, each wrong in one way (these cases were appended to
    main() by parallel branches; the merges left them under vision_models,
    where main()'s f4 is not defined)."""
    f4 = [1, 4]

    # String tensors (opset 20): a RegexFullMatch pattern outside the RE2
    # subset, a StringSplit whose longest split is not declared, string
    # n-grams in TfIdfVectorizer, a cast from string to bool, a string into
    # an operator that takes none
    ST = TensorProto.STRING

    def model20(nodes, inputs, outputs, name):
        m = helper.make_model(helper.make_graph(nodes, "bad", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 20)])
        m.ir_version = 9
        save(m, name)

    model20([helper.make_node("RegexFullMatch", ["s"], ["m"], name="regex_flags",
                              pattern="(?i)abc")],
            [vinfo("s", ST, [2])], [vinfo("m", TensorProto.BOOL, [2])], "regex_flags.onnx")
    model20([helper.make_node("StringSplit", ["s"], ["p", "n"], name="split_free")],
            [vinfo("s", ST, [2])], [vinfo("p", ST, [2, None]), vinfo("n", TensorProto.INT64, [2])],
            "split_undeclared.onnx")
    model20([helper.make_node("TfIdfVectorizer", ["s"], ["y"], name="tfidf_str", mode="TF",
                              min_gram_length=1, max_gram_length=1, max_skip_count=0,
                              ngram_counts=[0], ngram_indexes=[0], pool_strings=["a"])],
            [vinfo("s", ST, [2])], [vinfo("y", TensorProto.FLOAT, [1])], "tfidf_strings.onnx")
    model20([helper.make_node("Cast", ["s"], ["b"], name="cast_sb", to=TensorProto.BOOL)],
            [vinfo("s", ST, [2])], [vinfo("b", TensorProto.BOOL, [2])], "cast_string_bool.onnx")
    m = helper.make_model(helper.make_graph(
        [helper.make_node("LabelEncoder", ["s"], ["y"], name="label_types", domain="ai.onnx.ml",
                          keys_int64s=[1, 2], values_strings=["a", "b"])],
        "bad", [vinfo("s", ST, [2])], [vinfo("y", ST, [2])]),
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 2)])
    m.ir_version = 8
    save(m, "label_types.onnx")
    model20([helper.make_node("NonZero", ["f"], ["nz"], name="nonzero_free")],
            [vinfo("f", TensorProto.FLOAT, [2, 2])], [vinfo("nz", TensorProto.INT64, [2, None])],
            "nonzero_undeclared.onnx")
    model20([helper.make_node("Relu", ["s"], ["r"], name="relu_str")],
            [vinfo("s", ST, [2])], [vinfo("r", ST, [2])], "string_relu.onnx")

    def model_opset(nodes, inputs, outputs, opset, inits=()):
        m = model(nodes, inputs, outputs, inits)
        m.opset_import[0].version = opset
        return m

    # LpNormalization with p = 3 (ONNX defines 1 and 2)
    save(model_opset([helper.make_node("LpNormalization", ["x"], ["y"], name="lpnorm_p3", p=3)],
                     [vinfo("x", TensorProto.FLOAT, f4)], [vinfo("y", TensorProto.FLOAT, f4)], 22),
         "lpnorm_p.onnx")
    # GroupNormalization: 3 groups of 4 channels
    g4 = [1, 4, 2]
    save(model_opset([helper.make_node("GroupNormalization", ["x", "gs", "gb"], ["y"],
                                       name="groupnorm_3of4", num_groups=3)],
                     [vinfo("x", TensorProto.FLOAT, g4), vinfo("gs", TensorProto.FLOAT, [4]),
                      vinfo("gb", TensorProto.FLOAT, [4])], [vinfo("y", TensorProto.FLOAT, g4)],
                     21), "groupnorm_groups.onnx")
    # TreeEnsemble (ai.onnx.ml 5) with a LOGISTIC post_transform (only NONE)
    te = model_opset([helper.make_node("TreeEnsemble", ["x"], ["y"], name="trees_logistic",
                                       domain="ai.onnx.ml", post_transform=2, n_targets=1,
                                       aggregate_function=1, nodes_modes=[0],
                                       nodes_featureids=[0], nodes_splits=[0.5],
                                       nodes_truenodeids=[0], nodes_falsenodeids=[1],
                                       nodes_trueleafs=[1], nodes_falseleafs=[1],
                                       leaf_targetids=[0, 0], leaf_weights=[1.0, 2.0],
                                       tree_roots=[0])],
                     [vinfo("x", TensorProto.FLOAT, f4)], [vinfo("y", TensorProto.FLOAT, [1, 1])],
                     18)
    te.opset_import.append(helper.make_opsetid("ai.onnx.ml", 5))
    save(te, "trees_post.onnx")


if __name__ == "__main__":
    main()
