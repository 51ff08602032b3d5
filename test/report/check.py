#!/usr/bin/python3
"""Helpers for test/report/run.sh (tvmcc --report-html).

    check.py tiny OUT.onnx [conv]
        a small float model (Conv, Relu, Conv, Relu, global pooling, Gemm)
        built with onnx.helper: several kernels, an arena, weights; with
        "conv" one Conv only (one workload for tvmcc tune)
    check.py static REPORT.html NAME.json
        the page is well-formed XML, names nothing by http:// or https://,
        loads no file (no src= or href= attributes), has the plan's <svg>
        with rectangles, and its totals equal NAME.json's: arena
        (workspace_bytes), weights (weights_bytes), I/O buffers (the inputs'
        and outputs' bytes), RAM (their sum), MACs (the kernels' sum); one
        table row per kernel, in order
    check.py count SCREENSHOT.png
        decodes the PNG (8-bit RGB or RGBA, zlib and the five filters; no
        library) and prints the pixel counts of the plan's two rectangle
        fills: "act N tmp M"
    check.py strip REPORT.html OUT.html
        a copy without the <svg> element (the test must fail on it)
    check.py profile NAME.json OUT.json [BAD_KERNEL]
        a profile as tvmcc verify --profile writes it, every kernel of
        NAME.json with value 1000 * (index + 1); with BAD_KERNEL one more
        entry of that name
    check.py profiled REPORT.html NAME.json
        the kernel table shows the profile: the unit column and each
        kernel's value
Exit status 0 when the check passes, 1 (with the reason on stdout) when not.
"""
import json
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

ACT = (0x20, 0x60, 0xC0)  # rect.act in emit_c/report_html.c
TMP = (0xE0, 0x70, 0x00)  # rect.tmp

DTYPE_BYTES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1,
               "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
               "bool": 1}


def fail(msg):
    print(msg)
    sys.exit(1)


def tiny(out, only=None):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Add", ["r1", "r2"], ["s"], name="add"),
        helper.make_node("GlobalAveragePool", ["s"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1, name="fc"),
    ]
    y = [1, 10]
    if only == "conv":
        nodes, y = [helper.make_node("Conv", ["x", "w1", "b1"], ["y"], pads=[1, 1, 1, 1])], [1, 16, 32, 32]
    g = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
        [w("w1", 16, 3, 3, 3), w("b1", 16), w("w2", 16, 16, 3, 3), w("b2", 16),
         w("w3", 10, 16), w("b3", 10)])
    if only == "conv":
        del g.initializer[2:]
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, out)


def tensor_bytes(t):
    n = 1
    for d in t["shape"]:
        n *= d
    return n * DTYPE_BYTES[t["dtype"]]


def static(html, meta):
    text = open(html, encoding="utf-8").read()
    m = json.load(open(meta))
    if re.search(r"https?://", text, re.I):
        fail("the page names an http(s) address: %s" % re.search(r".{0,40}https?://.{0,40}", text, re.I).group(0))
    if re.search(r"\s(src|href)\s*=", text, re.I):
        fail("the page loads a file (src= or href=)")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        fail("not well-formed: %s" % e)
    ids = {e.get("id"): e for e in root.iter() if e.get("id")}
    svg = ids.get("plan")
    if svg is None or svg.tag != "svg":
        fail("no <svg id=plan>")
    rects = [r for r in svg.iter("rect") if r.get("class") in ("act", "tmp")]
    if not rects:
        fail("the plan has no tensor rectangles")
    for r in rects:
        if r.find("title") is None or not r.find("title").text:
            fail("a rectangle without a <title>")
    ins = sum(tensor_bytes(t) for t in m["inputs"])
    outs = sum(tensor_bytes(t) for t in m["outputs"])
    want = {"arena": m["workspace_bytes"], "weights": m["weights_bytes"], "io": ins + outs,
            "ram": m["workspace_bytes"] + ins + outs}
    for k, v in want.items():
        e = ids.get(k)
        if e is None or int(e.get("data-bytes", -1)) != v:
            fail("total %s: page %s, NAME.json %d" % (k, None if e is None else e.get("data-bytes"), v))
    macs = sum(k["macs"] for k in m["kernels"])
    if ids.get("macs") is None or int(ids["macs"].get("data-value")) != macs:
        fail("MACs: page %s, NAME.json %d" % (ids.get("macs") is not None and ids["macs"].get("data-value"), macs))
    flash = int(ids["flash"].get("data-bytes"))
    code = ids.get("code")
    if code.get("data-bytes") is not None:
        if int(code.get("data-bytes")) <= 0 or flash != m["weights_bytes"] + int(code.get("data-bytes")):
            fail("flash %d is not weights + code %s" % (flash, code.get("data-bytes")))
    elif flash != m["weights_bytes"]:
        fail("flash %d without a code size is not the weights" % flash)
    names = [r.findall("td")[1].text for r in root.iter("tr") if len(r.findall("td")) > 3
             and r.findall("td")[1].get("class") == "name"]
    if names != [k["name"] for k in m["kernels"]]:
        fail("kernel table %s != NAME.json %s" % (names[:5], [k["name"] for k in m["kernels"]][:5]))
    print("well-formed, self-contained, %d rectangles, %d kernels, totals match NAME.json (RAM %d, "
          "flash %d, MACs %d)" % (len(rects), len(names), want["ram"], flash, macs))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def count(png):
    data = open(png, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s: not a PNG" % png)
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail("%s: only 8-bit RGB/RGBA, non-interlaced (depth %d, colour type %d)" % (png, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    act = tmp = 0
    pos = 0
    for _ in range(h):
        f = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + prev[i]) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + prev[i]) >> 1)) & 255
            elif f == 4:
                line[i] = (line[i] + paeth(a, prev[i], prev[i - bpp] if i >= bpp else 0)) & 255
        for i in range(0, stride, bpp):
            px = (line[i], line[i + 1], line[i + 2])
            if px == ACT:
                act += 1
            elif px == TMP:
                tmp += 1
        prev = line
    print("act %d tmp %d" % (act, tmp))


def strip(html, out):
    text = open(html, encoding="utf-8").read()
    cut = re.sub(r"<svg\b.*?</svg>", "", text, flags=re.S)
    if cut == text:
        fail("no <svg> to strip")
    open(out, "w", encoding="utf-8").write(cut)


def profile(meta, out, bad=None):
    m = json.load(open(meta))
    ks = [{"name": k["name"], "value": 1000.0 * (i + 1)} for i, k in enumerate(m["kernels"])]
    if bad:
        ks.append({"name": bad, "value": 1.0})
    json.dump({"model": m["name"], "target": m["target"], "unit": "cycles", "runs": 3,
               "kernels": ks}, open(out, "w"), indent=1)


def profiled(html, meta):
    root = ET.fromstring(open(html, encoding="utf-8").read())
    m = json.load(open(meta))
    heads = [th.text for th in root.iter("th")]
    if "cycles" not in heads:
        fail("no 'cycles' column")
    rows = {r.findall("td")[1].text: r.findall("td") for r in root.iter("tr")
            if len(r.findall("td")) > 3 and r.findall("td")[1].get("class") == "name"}
    for i, k in enumerate(m["kernels"]):
        tds = rows.get(k["name"])
        if tds is None or tds[8].text != "%d" % (1000 * (i + 1)):
            fail("kernel %s: value %s, want %d" % (k["name"], tds and tds[8].text, 1000 * (i + 1)))
    print("profile values shown for all %d kernels" % len(m["kernels"]))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"tiny": tiny, "static": static, "count": count, "strip": strip, "profile": profile,
     "profiled": profiled}[cmd](*args)


if __name__ == "__main__":
    main()
