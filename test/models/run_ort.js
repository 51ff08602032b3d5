// Reference run for check_torchvision.sh with onnxruntime-node.
//   node run_ort.js MODEL.onnx INPUT.bin OUTPUT.bin
// The model's single input is read as dense float32 in the model's declared
// shape; the first output is written as dense float32. One intra-op thread,
// so the reference does not compete with parallel tests for cores.
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

async function main() {
    const [modelPath, inPath, outPath] = process.argv.slice(2);
    if (!outPath) {
        console.error('usage: node run_ort.js MODEL.onnx INPUT.bin OUTPUT.bin');
        process.exit(2);
    }
    const session = await ort.InferenceSession.create(modelPath, {
        intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    });
    const name = session.inputNames[0];
    const bytes = fs.readFileSync(inPath);
    const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    // The exported models have a fixed 1x3x224x224 input.
    const n = data.length;
    const dims = n === 3 * 224 * 224 ? [1, 3, 224, 224] : [n];
    const result = await session.run({ [name]: new ort.Tensor('float32', data, dims) });
    const out = result[session.outputNames[0]].data;
    fs.writeFileSync(outPath, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
}

main().catch((e) => { console.error('run_ort: ' + e.message); process.exit(1); });
