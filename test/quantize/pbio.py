#!/usr/bin/python3
"""Converts between the ONNX test-data layout and the dense files of
test/driver.c, for test/quantize/tvmcc_eval.sh.

    pbio.py pb2bin DATADIR BINDIR
        DATADIR/<sample>/input_K.pb -> BINDIR/<sample>/input_K.bin (the
        tensor's bytes, little-endian, row-major)
    pbio.py bin2pb MODEL.json BINDIR OUTDIR
        BINDIR/<sample>/output_K.bin -> OUTDIR/<sample>/output_K.pb, with
        the name, dtype and shape of output K in tvmcc's MODEL.json
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

DTYPES = {"float32": "<f4", "float64": "<f8", "int8": "i1", "uint8": "u1", "int16": "<i2",
          "int32": "<i4", "int64": "<i8", "bool": "?"}


def samples(folder, first):
    return sorted(d for d in os.listdir(folder) if os.path.isfile(os.path.join(folder, d, first)))


def pb2bin(data, bins):
    for s in samples(data, "input_0.pb"):
        os.makedirs(os.path.join(bins, s), exist_ok=True)
        k = 0
        while os.path.isfile(os.path.join(data, s, "input_%d.pb" % k)):
            path = os.path.join(data, s, "input_%d.pb" % k)
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            a = numpy_helper.to_array(t)
            a.astype(a.dtype.newbyteorder("<")).tofile(os.path.join(bins, s, "input_%d.bin" % k))
            k += 1


def bin2pb(model_json, bins, out):
    with open(model_json) as f:
        outputs = json.load(f)["outputs"]
    for s in samples(bins, "output_0.bin"):
        os.makedirs(os.path.join(out, s), exist_ok=True)
        for k, o in enumerate(outputs):
            if o["dtype"] not in DTYPES:
                raise SystemExit("pbio: output %s: dtype %s not supported" % (o["name"], o["dtype"]))
            path = os.path.join(bins, s, "output_%d.bin" % k)
            a = np.fromfile(path, dtype=DTYPES[o["dtype"]])
            if a.size != int(np.prod(o["shape"], dtype=np.int64)):
                raise SystemExit("pbio: %s: %d values, shape %s" % (path, a.size, o["shape"]))
            t = numpy_helper.from_array(a.reshape(o["shape"]).astype(a.dtype.newbyteorder("=")), o["name"])
            with open(os.path.join(out, s, "output_%d.pb" % k), "wb") as f:
                f.write(t.SerializeToString())


def main(argv):
    if len(argv) == 3 and argv[0] == "pb2bin":
        pb2bin(argv[1], argv[2])
    elif len(argv) == 4 and argv[0] == "bin2pb":
        bin2pb(argv[1], argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
