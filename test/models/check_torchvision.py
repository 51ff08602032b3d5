#!/usr/bin/python3
"""Helpers for check_torchvision.sh.

    check_torchvision.py export OUTDIR NAME...
        exports torchvision models (weights=None, torch.manual_seed(0),
        BatchNorm statistics calibrated on random images, eval mode, opset 13,
        input 1x3x224x224) to OUTDIR/NAME.onnx and writes a
        random input OUTDIR/NAME.input.bin (float32, fixed seed) and its
        shape, comma-separated, to OUTDIR/NAME.shape.
        NAME "transformer_block" is a hand-written pre-norm transformer
        encoder block (LayerNorm, 4-head self-attention with MatMul and
        Softmax, an MLP with exact (erf) GELU), exported at opset 17 so that
        LayerNormalization appears, with a dynamic batch axis ("batch"),
        input 2x16x64; the export fails unless the graph has
        LayerNormalization, Softmax, MatMul, Erf and a symbolic batch
        dimension.
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


def transformer_block(torch):
    """A pre-norm transformer encoder block, written out op by op.

    The reshapes to and from heads take the batch size from x.shape, so with
    a dynamic batch axis the exporter emits Shape -> Gather -> Unsqueeze ->
    Concat -> Reshape chains that the compiler must fold once the batch is
    bound with --input-shape.
    """
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, dim=64, heads=4, hidden=128):
            super().__init__()
            self.heads = heads
            self.norm1 = nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.norm2 = nn.LayerNorm(dim)
            self.fc1 = nn.Linear(dim, hidden)
            self.act = nn.GELU()  # exact form: exported with Erf
            self.fc2 = nn.Linear(hidden, dim)

        def forward(self, x):
            b, s, d = x.shape
            h = self.heads
            qkv = self.qkv(self.norm1(x)).reshape(b, s, 3, h, d // h)
            q = qkv[:, :, 0].transpose(1, 2)  # b h s dh
            k = qkv[:, :, 1].transpose(1, 2)
            v = qkv[:, :, 2].transpose(1, 2)
            att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * (d // h) ** -0.5, dim=-1)
            y = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            return x + self.fc2(self.act(self.fc1(self.norm2(x))))

    return Block()


def check_transformer_graph(path):
    """Raises when the exported block lacks what it is meant to exercise."""
    import onnx

    model = onnx.load(path)
    ops = {n.op_type for n in model.graph.node}
    missing = {"LayerNormalization", "Softmax", "MatMul", "Erf"} - ops
    if missing:
        raise RuntimeError("error: exported transformer_block has no %s (ops: %s)"
                           % (", ".join(sorted(missing)), ", ".join(sorted(ops))))
    dim0 = model.graph.input[0].type.tensor_type.shape.dim[0]
    if not dim0.dim_param:
        raise RuntimeError("error: exported transformer_block has a static batch dimension")


def export(out, names):
    import torch

    os.makedirs(out, exist_ok=True)
    for name in names:
        torch.manual_seed(0)
        path = os.path.join(out, name + ".onnx")
        if name == "transformer_block":
            model = transformer_block(torch).eval()
            x = torch.randn(2, 16, 64, generator=torch.Generator().manual_seed(1))
            with torch.no_grad():
                torch.onnx.export(model, x, path, opset_version=17, input_names=["input"],
                                  output_names=["output"], do_constant_folding=True,
                                  dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
            check_transformer_graph(path)
            x.numpy().astype(np.float32).tofile(os.path.join(out, name + ".input.bin"))
            with open(os.path.join(out, name + ".shape"), "w") as f:
                f.write("2,16,64\n")
            continue
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        calibrate_batchnorm(torch, model)
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
        with torch.no_grad():
            torch.onnx.export(model, x, path, opset_version=13, input_names=["input"],
                              output_names=["output"], do_constant_folding=True)
        x.numpy().astype(np.float32).tofile(os.path.join(out, name + ".input.bin"))
        with open(os.path.join(out, name + ".shape"), "w") as f:
            f.write("1,3,224,224\n")


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
