#!/usr/bin/python3
"""Helpers for check_torchvision.sh.

    check_torchvision.py export OUTDIR NAME...
        exports torchvision models (weights=None, torch.manual_seed(0),
        BatchNorm statistics calibrated on random images, eval mode, opset 13,
        input 1x3x224x224) to OUTDIR/NAME.onnx and writes a
        random input OUTDIR/NAME.input.bin (float32, fixed seed)
    check_torchvision.py compare REF.bin OUT.bin
        passes when max|out - ref| <= 1e-3 * max|ref| (float32 files); prints
        the error; exit 0 pass, 1 fail
"""
import os
import sys

import numpy as np


def calibrate_batchnorm(torch, model):
    """Sets BatchNorm running statistics from one batch of random images.

    With the default init, mobilenet_v2's activations shrink layer by layer
    (its output is ~1e-9), which would make the comparison meaningless; with
    calibrated statistics every layer works at unit scale, as in a trained
    network. Leaves the model in eval mode.
    """
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batch
    model.train()
    with torch.no_grad():
        model(torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(2)))
    model.eval()


def export(out, names):
    import torch
    import torchvision

    os.makedirs(out, exist_ok=True)
    for name in names:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)(weights=None)
        calibrate_batchnorm(torch, model)
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
        path = os.path.join(out, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                              output_names=["output"], do_constant_folding=True)
        x.numpy().astype(np.float32).tofile(os.path.join(out, name + ".input.bin"))


def compare(ref_path, out_path):
    ref = np.fromfile(ref_path, dtype=np.float32).astype(np.float64)
    out = np.fromfile(out_path, dtype=np.float32).astype(np.float64)
    if ref.shape != out.shape:
        print("%d values, reference has %d" % (out.size, ref.size))
        return 1
    scale = np.abs(ref).max()
    err = np.abs(out - ref).max()
    ok = bool(np.all(np.isfinite(out))) and err <= 1e-3 * scale
    print("max|diff| %.3g, max|ref| %.3g, ratio %.3g" % (err, scale, err / scale if scale else err))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
