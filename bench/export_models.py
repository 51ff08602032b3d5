#!/usr/bin/python3
"""Benchmark models for bench/run.sh.

    export_models.py export OUTDIR NAME...
        writes OUTDIR/NAME.onnx, OUTDIR/NAME.input.bin (dense float32, fixed
        seed) and OUTDIR/NAME.shape (the input shape, "1,3,224,224") for each
        NAME: a torchvision model (e.g. resnet18, regnet_x_400mf,
        resnext50_32x4d, googlenet; weights=None, torch.manual_seed(0),
        BatchNorm statistics calibrated on one random batch, eval mode,
        opset 13, input 1x3x224x224) or "gemm1024", a single MatMul
        Y = A * B with A the 1024x1024 input and B a constant 1024x1024.
    export_models.py compare REF.bin OUT.bin
        prints max|out - ref| / max|ref| of two float32 files (or "n/a")
"""
import os
import sys

import numpy as np

GEMM_N = 1024


def calibrate(torch, model):
    """Running statistics of every BatchNorm from one random batch.

    Untrained torchvision models with default BatchNorm statistics shrink
    their activations layer by layer (mobilenet_v2 ends near 1e-9), which
    makes denormals and the accuracy column meaningless. One training-mode
    pass with a cumulative average gives unit-scale activations.
    """
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.train()
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        model(torch.randn(2, 3, 224, 224, generator=gen))
    model.eval()


def export_torchvision(outdir, name):
    """NAME, or NAME_bn: the same network with its BatchNormalization nodes
    kept (exported with the training mode preserved, from eval mode, so they
    are inference-mode BatchNormalization), as exporters that do not fold
    BN into the convolution write it; the fused-vs-unfused comparison runs
    on these."""
    import torch
    import torchvision

    keep_bn = name.endswith("_bn")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name[:-3] if keep_bn else name)(weights=None)
    calibrate(torch, model)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    path = os.path.join(outdir, name + ".onnx")
    extra = {"training": torch.onnx.TrainingMode.PRESERVE} if keep_bn else {}
    with torch.no_grad():
        torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                          output_names=["output"], do_constant_folding=not keep_bn, **extra)
    return x.numpy().astype(np.float32)


def export_gemm(outdir, name):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    b = rng.standard_normal((GEMM_N, GEMM_N), dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"], name="gemm")],
        name,
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [GEMM_N, GEMM_N])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [GEMM_N, GEMM_N])],
        [numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(outdir, name + ".onnx"))
    return np.random.default_rng(4).standard_normal((GEMM_N, GEMM_N), dtype=np.float32)


def export(outdir, names):
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        x = export_gemm(outdir, name) if name == "gemm1024" else export_torchvision(outdir, name)
        x.tofile(os.path.join(outdir, name + ".input.bin"))
        with open(os.path.join(outdir, name + ".shape"), "w") as f:
            f.write(",".join(str(d) for d in x.shape) + "\n")
        print("exported %s %s" % (name, "x".join(str(d) for d in x.shape)))


def compare(ref_path, out_path):
    try:
        ref = np.fromfile(ref_path, dtype=np.float32).astype(np.float64)
        out = np.fromfile(out_path, dtype=np.float32).astype(np.float64)
    except OSError:
        print("n/a")
        return
    if ref.shape != out.shape or ref.size == 0:
        print("size-mismatch")
        return
    scale = np.abs(ref).max()
    err = np.abs(out - ref).max()
    print("%.2g" % (err / scale if scale else err) if np.all(np.isfinite(out)) else "non-finite")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
