// onnxruntime side of bench/kernel_minima.sh: per-node minimum kernel
// times from onnxruntime's profiler.
//
//   node ort_node_minima.js MODEL.onnx INPUT.bin --shape D0,D1,... RUNS OUT.json
//
// One session (intraOpNumThreads 1, or $ORT_THREADS, interOpNumThreads 1, sequential,
// graphOptimizationLevel 'all', profiling on), 3 warm-up runs, RUNS timed
// runs; writes [{"name", "op", "us"}] with each node's shortest
// "<node>_kernel_time" event of the timed runs. Node names are those after
// onnxruntime's graph optimizations (a fused node is named by its output
// value, an NCHWc one with the suffix "_nchwc").
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES || path.join(__dirname, '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

async function main() {
    const a = process.argv.slice(2);
    if (a.length !== 6 || a[2] !== '--shape') {
        console.error('usage: node ort_node_minima.js MODEL.onnx INPUT.bin --shape D0,D1,... RUNS OUT.json');
        process.exit(2);
    }
    const [model, input, , shapeText, runsText, out] = a;
    const shape = shapeText.split(',').map(Number);
    const runs = Number(runsText);
    if (!(runs >= 1) || shape.some((d) => !(d >= 1))) {
        console.error('ort_node_minima: bad --shape or RUNS');
        process.exit(2);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ortmin-'));
    const s = await ort.InferenceSession.create(model, {
        intraOpNumThreads: Number(process.env.ORT_THREADS || 1), interOpNumThreads: 1, executionMode: 'sequential',
        graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: path.join(dir, 'prof'),
    });
    const buf = fs.readFileSync(input);
    const n = shape.reduce((x, y) => x * y, 1);
    if (buf.length !== n * 4) {
        console.error(`ort_node_minima: ${input} has ${buf.length} bytes, the shape needs ${n * 4}`);
        process.exit(1);
    }
    const x = new Float32Array(buf.buffer, buf.byteOffset, n);
    const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x, shape) };
    for (let i = 0; i < 3 + runs; i++)
        await s.run(feeds);
    s.endProfiling();
    const files = fs.readdirSync(dir).map((f) => path.join(dir, f));
    if (files.length !== 1) {
        console.error(`ort_node_minima: expected one profile in ${dir}, found ${files.length}`);
        process.exit(1);
    }
    const events = JSON.parse(fs.readFileSync(files[0], 'utf8'));
    fs.rmSync(dir, { recursive: true, force: true });
    const seen = {}, best = {}, op = {};
    for (const e of events) {
        if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time'))
            continue;
        const name = e.name.slice(0, -'_kernel_time'.length);
        seen[name] = (seen[name] || 0) + 1;
        op[name] = e.args && e.args.op_name;
        if (seen[name] > 3 && (best[name] === undefined || e.dur < best[name]))
            best[name] = e.dur; /* the first 3 are the warm-ups */
    }
    const rows = Object.keys(best).map((name) => ({ name, op: op[name], us: best[name] }));
    fs.writeFileSync(out, JSON.stringify(rows, null, 1));
}

main().catch((e) => {
    console.error('ort_node_minima: ' + e.message);
    process.exit(1);
});
