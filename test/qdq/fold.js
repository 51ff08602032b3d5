// Folds a model with onnxruntime's basic graph optimizations (constant
// folding, Conv+BatchNormalization and similar fusions) and writes the
// result, for test/qdq/quantize.py (models below opset 13 whose conversion
// needs shapes that ONNX shape inference cannot give).
//
//   node fold.js IN.onnx OUT.onnx
'use strict';
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

async function main() {
    const args = process.argv.slice(2);
    if (args.length !== 2) {
        console.error('usage: node fold.js IN.onnx OUT.onnx');
        process.exit(2);
    }
    await ort.InferenceSession.create(args[0], {
        graphOptimizationLevel: 'basic', optimizedModelFilePath: args[1],
        intraOpNumThreads: 1, interOpNumThreads: 1,
    });
}

main().catch((e) => { console.error('fold.js: ' + e.message); process.exit(1); });
