#!/usr/bin/python3
"""Writes test/quantize's realistic model inputs in the ONNX test-data
layout (SETDIR/<name>/input_0.pb, one TensorProto per graph input), for
test/quantize/gen_data.sh.

    gen_inputs.py speech MELDIR LIST SETDIR WINDOWS
        LIST: lines "NAME" of utterances whose MELDIR/NAME.mel (mel.js) and
        MELDIR/NAME.wav exist. Writes
          SETDIR/embedding_model/NAME_wK/input_0.pb  [1, 76, 32, 1]
          SETDIR/melspectrogram/NAME_wK/input_0.pb   [1, 1760]
        for WINDOWS windows per utterance, evenly spread.
    gen_inputs.py image MODEL PPM NAME SETDIR
        MODEL: ocr_cls (PaddleOCR ClsResizeImg, [1, 3, 48, 192]),
        ocr_rec (RecResizeImg, [1, 3, 48, 320]) or ocr_det
        (DetResizeForTest to 320x320 + NormalizeImage, [1, 3, 320, 320]).

The embedding model's input is openWakeWord's: the mel output transformed
by x/10 + 2, windows of 76 frames taken every 8 frames (openWakeWord's
AudioFeatures._get_embeddings), as [1, 76, 32, 1]. The melspectrogram
model's input is a 1760-sample chunk of int16-valued audio (1280 new
samples + 480 of context, openwakeword-js's streaming chunk) from the same
place in the utterance.

PaddleOCR (tools/infer and ppocr/data/imaug/operators.py) reads images with
OpenCV in BGR order; the images here are rendered with ImageMagick as RGB
PPM and swapped to BGR. Resizing is bilinear with OpenCV's INTER_LINEAR
sample positions (half-pixel centers, edge clamped).
"""
import math
import os
import sys

import numpy as np
from onnx import numpy_helper

MEL_WINDOW = 76
MEL_STEP = 8
CHUNK = 1760
HOP = 160


def write(setdir, name, arr):
    d = os.path.join(setdir, name)
    os.makedirs(d, exist_ok=True)
    t = numpy_helper.from_array(np.ascontiguousarray(arr), "input")
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(t.SerializeToString())


def read_wav16(path):
    """int16 samples of a canonical PCM wav written by sox."""
    b = open(path, "rb").read()
    if b[:4] != b"RIFF" or b[8:12] != b"WAVE":
        raise SystemExit("gen_inputs: %s: not a WAVE file" % path)
    pos = 12
    while pos + 8 <= len(b):
        cid = b[pos:pos + 4]
        size = int.from_bytes(b[pos + 4:pos + 8], "little")
        if cid == b"data":
            return np.frombuffer(b[pos + 8:pos + 8 + size], dtype="<i2")
        pos += 8 + size + (size & 1)
    raise SystemExit("gen_inputs: %s: no data chunk" % path)


def speech(meldir, listfile, setdir, windows):
    names = [l.strip() for l in open(listfile) if l.strip()]
    for name in names:
        mel = np.fromfile(os.path.join(meldir, name + ".mel"), dtype="<f4").reshape(-1, 32)
        mel = mel / 10.0 + 2.0
        audio = read_wav16(os.path.join(meldir, name + ".wav")).astype(np.float32)
        starts = list(range(0, mel.shape[0] - MEL_WINDOW + 1, MEL_STEP))
        if len(starts) < windows:
            raise SystemExit("gen_inputs: %s: %d mel frames, too short for %d windows"
                             % (name, mel.shape[0], windows))
        # evenly spread, leaving out the first and last (silence) windows
        pick = [starts[(k + 1) * len(starts) // (windows + 1)] for k in range(windows)]
        for k, s in enumerate(pick):
            win = mel[s:s + MEL_WINDOW].astype(np.float32).reshape(1, MEL_WINDOW, 32, 1)
            write(os.path.join(setdir, "embedding_model"), "%s_w%d" % (name, k), win)
            a0 = min(s * HOP, max(0, audio.shape[0] - CHUNK))
            chunk = np.zeros(CHUNK, np.float32)
            part = audio[a0:a0 + CHUNK]
            chunk[:part.shape[0]] = part
            write(os.path.join(setdir, "melspectrogram"), "%s_w%d" % (name, k),
                  chunk.reshape(1, CHUNK))


def read_ppm(path):
    """[H, W, 3] uint8 RGB of a binary PPM (P6, maxval 255)."""
    b = open(path, "rb").read()
    fields = []
    pos = 0
    while len(fields) < 4:
        while b[pos:pos + 1].isspace():
            pos += 1
        if b[pos:pos + 1] == b"#":
            while b[pos:pos + 1] not in (b"\n", b""):
                pos += 1
            continue
        start = pos
        while not b[pos:pos + 1].isspace():
            pos += 1
        fields.append(b[start:pos])
    pos += 1
    if fields[0] != b"P6" or int(fields[3]) != 255:
        raise SystemExit("gen_inputs: %s: not an 8-bit P6 PPM" % path)
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(b[pos:pos + w * h * 3], np.uint8).reshape(h, w, 3)


def resize_linear(img, w, h):
    """Bilinear resize of [H, W, C] to [h, w, C], OpenCV INTER_LINEAR
    positions: src = (dst + 0.5) * scale - 0.5, clamped to the edge."""
    src = img.astype(np.float64)
    H, W = src.shape[:2]

    def axis(n_out, n_in):
        x = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
        x = np.clip(x, 0, n_in - 1)
        i0 = np.floor(x).astype(np.int64)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, x - i0

    y0, y1, fy = axis(h, H)
    x0, x1, fx = axis(w, W)
    top = src[y0][:, x0] * (1 - fx)[None, :, None] + src[y0][:, x1] * fx[None, :, None]
    bot = src[y1][:, x0] * (1 - fx)[None, :, None] + src[y1][:, x1] * fx[None, :, None]
    out = top * (1 - fy)[:, None, None] + bot * fy[:, None, None]
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def image(model, ppm, name, setdir):
    img = read_ppm(ppm)[:, :, ::-1]  # RGB -> BGR, as cv2.imread gives
    h, w = img.shape[:2]
    if model in ("ocr_cls", "ocr_rec"):
        # ClsResizeImg / RecResizeImg (resize_norm_img): height 48, width
        # ceil(48 * w / h) up to the model's width, (x/255 - 0.5)/0.5,
        # zero padding on the right
        img_w = 192 if model == "ocr_cls" else 320
        rw = min(img_w, int(math.ceil(48 * w / float(h))))
        r = resize_linear(img, rw, 48).astype(np.float32)
        r = (r / 255.0 - 0.5) / 0.5
        x = np.zeros((3, 48, img_w), np.float32)
        x[:, :, :rw] = r.transpose(2, 0, 1)
    elif model == "ocr_det":
        # DetResizeForTest (image_shape 320x320) + NormalizeImage (ImageNet
        # mean and std, scale 1/255) + ToCHWImage
        r = resize_linear(img, 320, 320).astype(np.float32)
        mean = np.array([0.485, 0.456, 0.406], np.float32)
        std = np.array([0.229, 0.224, 0.225], np.float32)
        r = (r / 255.0 - mean) / std
        x = r.transpose(2, 0, 1).astype(np.float32)
    else:
        raise SystemExit("gen_inputs: unknown image model %s" % model)
    write(os.path.join(setdir, model), name, x.reshape((1,) + x.shape))


def main(argv):
    if len(argv) == 5 and argv[0] == "speech":
        speech(argv[1], argv[2], argv[3], int(argv[4]))
    elif len(argv) == 5 and argv[0] == "image":
        image(argv[1], argv[2], argv[3], argv[4])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
