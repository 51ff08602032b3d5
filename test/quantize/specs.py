#!/usr/bin/python3
"""Writes the input description test/qdq/run.py reads for a model quantized
by `tvmcc quantize --calib random:N`: float inputs uniform in [-1, 1] (the
range tvmcc draws its random samples from), integer inputs feeding Gather
uniform over the table's rows (test/qdq/quantize.py's input_specs).

    specs.py FLOAT.onnx NAME OUT.json
"""
import json
import os
import sys

import onnx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qdq"))
import quantize  # noqa: E402


def main():
    model, name, out = sys.argv[1:4]
    specs = quantize.input_specs(onnx.load(model), [], "uniform")
    with open(out, "w") as f:
        json.dump({"model": name, "float": model, "inputs": specs}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
