// Calibration runs for test/qdq/quantize.py with onnxruntime-node.
//
//   node calib.js MODEL.onnx OUT.json N FILE:DTYPE:D0,D1,... ...
//
// One FILE:DTYPE:DIMS argument per graph input, in graph order; FILE holds
// N samples of that input back to back (dense, little-endian). The model
// runs once per sample; OUT.json gets, for every float32 graph output,
// [min, max] over all samples (NaNs ignored; null when there was no finite
// value). quantize.py makes every float tensor a graph output first.
// With N = 1 this is also the "loads and runs" check of a written model.
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

const ARRAYS = {
    float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
    int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
};

async function main() {
    const args = process.argv.slice(2);
    if (args.length < 3) {
        console.error('usage: node calib.js MODEL.onnx OUT.json N FILE:DTYPE:DIMS ...');
        process.exit(2);
    }
    const [modelPath, outPath, nText] = args;
    const n = Number(nText);
    const session = await ort.InferenceSession.create(modelPath, {
        intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    });
    const specs = args.slice(3);
    if (specs.length !== session.inputNames.length)
        throw new Error(specs.length + ' inputs given, model has ' + session.inputNames.length);
    const inputs = specs.map((spec) => {
        const parts = spec.split(':');
        if (parts.length !== 3) throw new Error('bad input spec ' + spec);
        const Arr = ARRAYS[parts[1]];
        if (!Arr) throw new Error('unknown dtype ' + parts[1]);
        const dims = parts[2] === '' ? [] : parts[2].split(',').map(Number);
        const count = dims.reduce((a, b) => a * b, 1);
        const bytes = fs.readFileSync(parts[0]);
        if (bytes.length !== n * count * Arr.BYTES_PER_ELEMENT)
            throw new Error(parts[0] + ': ' + bytes.length + ' bytes, expected ' +
                            n * count * Arr.BYTES_PER_ELEMENT);
        const copy = new Uint8Array(bytes.length);
        copy.set(bytes);
        return { dtype: parts[1], dims, count, all: new Arr(copy.buffer) };
    });
    const ranges = {};
    for (let s = 0; s < n; s++) {
        const feeds = {};
        inputs.forEach((inp, i) => {
            const part = inp.all.slice(s * inp.count, (s + 1) * inp.count);
            feeds[session.inputNames[i]] = new ort.Tensor(inp.dtype, part, inp.dims);
        });
        const result = await session.run(feeds);
        for (const name of session.outputNames) {
            const t = result[name];
            if (t.type !== 'float32') continue;
            let lo = Infinity, hi = -Infinity;
            for (const v of t.data) {
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            }
            const r = ranges[name];
            if (!r) ranges[name] = [lo, hi];
            else ranges[name] = [Math.min(r[0], lo), Math.max(r[1], hi)];
        }
    }
    const out = {};
    for (const name of Object.keys(ranges).sort()) {
        const [lo, hi] = ranges[name];
        out[name] = lo <= hi ? [lo, hi] : null;
    }
    fs.writeFileSync(outPath, JSON.stringify(out) + '\n');
}

main().catch((e) => { console.error('calib: ' + e.message); process.exit(1); });
