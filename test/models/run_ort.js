// Reference runs with onnxruntime-node, for check_torchvision.sh and
// exporter_patterns.py.
//
//   node run_ort.js MODEL.onnx INPUT.bin OUTPUT.bin
//       the model's single input is read as dense float32 (shape 1x3x224x224
//       when it has that many values, else flat); the first output is
//       written as dense float32.
//   node run_ort.js MODEL.onnx IN.bin:DTYPE:D0,D1,... ... -o OUT.bin ...
//       one argument per graph input, in graph order (DTYPE is an ONNX dtype
//       name as in NAME.json; an empty dims list is a scalar); every output
//       named after -o is written raw in its own element type, in graph
//       order.
//
// One intra-op thread, so the reference does not compete with parallel tests
// for cores.
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

const ARRAYS = {
    float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
    int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
    int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array, float16: Uint16Array,
};

function usage() {
    console.error('usage: node run_ort.js MODEL.onnx INPUT.bin OUTPUT.bin\n' +
                  '       node run_ort.js MODEL.onnx IN.bin:DTYPE:D0,D1 ... -o OUT.bin ...');
    process.exit(2);
}

// Reads FILE as a tensor of DTYPE and DIMS (copying, so the typed array is
// aligned whatever the Buffer's offset).
function readTensor(file, dtype, dims) {
    const Arr = ARRAYS[dtype];
    if (!Arr) throw new Error('unknown dtype ' + dtype);
    const bytes = fs.readFileSync(file);
    const count = dims.reduce((a, b) => a * b, 1);
    if (bytes.length !== count * Arr.BYTES_PER_ELEMENT)
        throw new Error(file + ': ' + bytes.length + ' bytes, expected ' +
                        count * Arr.BYTES_PER_ELEMENT + ' for ' + dtype + '[' + dims + ']');
    const copy = new Uint8Array(bytes.length);
    copy.set(bytes);
    return new ort.Tensor(dtype, new Arr(copy.buffer), dims);
}

function writeTensor(file, tensor) {
    const data = tensor.data;
    fs.writeFileSync(file, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

async function main() {
    const args = process.argv.slice(2);
    if (args.length < 3) usage();
    const modelPath = args[0];
    const session = await ort.InferenceSession.create(modelPath, {
        intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    });
    const dash = args.indexOf('-o');
    if (dash < 0) {
        // Old form: one float32 input, first output.
        if (args.length !== 3) usage();
        const bytes = fs.readFileSync(args[1]);
        const n = bytes.length / 4;
        const dims = n === 3 * 224 * 224 ? [1, 3, 224, 224] : [n];
        const feeds = { [session.inputNames[0]]: readTensor(args[1], 'float32', dims) };
        const result = await session.run(feeds);
        writeTensor(args[2], result[session.outputNames[0]]);
        return;
    }
    const ins = args.slice(1, dash), outs = args.slice(dash + 1);
    if (ins.length !== session.inputNames.length)
        throw new Error(ins.length + ' inputs given, model has ' + session.inputNames.length);
    if (outs.length > session.outputNames.length)
        throw new Error(outs.length + ' outputs given, model has ' + session.outputNames.length);
    const feeds = {};
    ins.forEach((spec, i) => {
        const parts = spec.split(':');
        if (parts.length !== 3) throw new Error('bad input spec ' + spec + ' (FILE:DTYPE:DIMS)');
        const dims = parts[2] === '' ? [] : parts[2].split(',').map(Number);
        feeds[session.inputNames[i]] = readTensor(parts[0], parts[1], dims);
    });
    const result = await session.run(feeds);
    outs.forEach((file, i) => writeTensor(file, result[session.outputNames[i]]));
}

main().catch((e) => { console.error('run_ort: ' + e.message); process.exit(1); });
