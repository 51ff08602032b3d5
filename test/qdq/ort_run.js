// onnxruntime-node with a chosen graph optimization level, for test/qdq/run.py's
// diagnosis of a failure: with 'disabled' onnxruntime computes the QDQ
// model as written (DequantizeLinear, float operator, QuantizeLinear), with
// 'all' (test/models/run_ort.js) it fuses the groups into integer kernels.
//
//   node ort_run.js LEVEL MODEL.onnx IN.bin:DTYPE:D0,D1,... ... -o OUT.bin ...
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
    const dash = args.indexOf('-o');
    if (args.length < 4 || dash < 2) {
        console.error('usage: node ort_run.js LEVEL MODEL.onnx IN.bin:DTYPE:DIMS ... -o OUT.bin ...');
        process.exit(2);
    }
    const session = await ort.InferenceSession.create(args[1], {
        intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: args[0],
    });
    const feeds = {};
    args.slice(2, dash).forEach((spec, i) => {
        const [file, dtype, dimText] = spec.split(':');
        const Arr = ARRAYS[dtype];
        if (!Arr) throw new Error('unknown dtype ' + dtype);
        const bytes = fs.readFileSync(file);
        const copy = new Uint8Array(bytes.length);
        copy.set(bytes);
        const dims = dimText === '' ? [] : dimText.split(',').map(Number);
        feeds[session.inputNames[i]] = new ort.Tensor(dtype, new Arr(copy.buffer), dims);
    });
    const result = await session.run(feeds);
    args.slice(dash + 1).forEach((file, i) => {
        const d = result[session.outputNames[i]].data;
        fs.writeFileSync(file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    });
}

main().catch((e) => { console.error('ort_run: ' + e.message); process.exit(1); });
