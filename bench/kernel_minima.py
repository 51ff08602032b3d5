#!/usr/bin/env python3
"""Report of bench/kernel_minima.sh: tvmcc's per-kernel minima against
onnxruntime's per-node minima.

    kernel_minima.py NAME.json ORT.json TVM.txt [TVM.txt ...] [--top N]

NAME.json lists each kernel's ONNX nodes; an onnxruntime node is matched
to the tvmcc kernel holding the ONNX node of its name (onnxruntime names a
fused node by its output value: "_nchwc" and "_output_0" are stripped).
Prints the sums of the minima and their ratio, the sums per kernel kind
(the kernel's first ONNX op) and the N kernels that lose most (default 20):
tvmcc us, onnxruntime us (of the nodes matched to it), difference and
tvmcc's GFLOP/s. Nodes that match no kernel (onnxruntime's layout
reorders, activations it did not fuse) are summed apart.
"""
import json
import re
import sys


def main(argv):
    top = 20
    if '--top' in argv:
        i = argv.index('--top')
        top = int(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    kernels = json.load(open(argv[0]))['kernels']
    ort = json.load(open(argv[1]))
    best = {}
    for path in argv[2:]:
        for line in open(path):
            i, us = line.split()
            best[int(i)] = min(best.get(int(i), float('inf')), float(us))
    node_kernel = {}
    for i, k in enumerate(kernels):
        for n in k['nodes']:
            node_kernel[n['name']] = i
    ort_k, unmatched = {}, 0.0
    for e in ort:
        name = re.sub(r'_output_0$', '', re.sub(r'_nchwc$', '', e['name']))
        if name in node_kernel:
            i = node_kernel[name]
            ort_k[i] = ort_k.get(i, 0.0) + e['us']
        else:
            unmatched += e['us']
    t_tvm = sum(best.values())
    t_ort = sum(e['us'] for e in ort)
    print(f"sum of minima: tvmcc {t_tvm / 1000:.3f} ms, onnxruntime {t_ort / 1000:.3f} ms "
          f"(of which unmatched {unmatched / 1000:.3f}), ratio {t_tvm / t_ort:.3f}")
    kinds = {}
    for i, us in best.items():
        k = kinds.setdefault(kernels[i]['nodes'][0]['op'], [0.0, 0.0])
        k[0] += us
        k[1] += ort_k.get(i, 0.0)
    print('by kind (tvmcc / onnxruntime ms): ' +
          ', '.join(f"{op} {a / 1000:.2f}/{b / 1000:.2f}" for op, (a, b) in sorted(kinds.items(), key=lambda x: -x[1][0])))
    rows = sorted(((us - ort_k.get(i, 0.0), i) for i, us in best.items()), reverse=True)
    for diff, i in rows[:top]:
        k = kernels[i]
        us = best[i]
        ops = '+'.join(n['op'] for n in k['nodes'])
        gf = 2.0 * k.get('macs', 0) / us / 1e3 if us > 0 else 0.0
        print(f"{k['name']:20s} {ops[:34]:34s} tvmcc {us:9.1f}  onnxruntime {ort_k.get(i, 0.0):9.1f}  "
              f"diff {diff:8.1f}  {gf:6.1f} GFLOP/s")
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
