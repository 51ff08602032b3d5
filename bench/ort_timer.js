// onnxruntime-node side of bench/run.sh.
//
//   node ort_timer.js MODEL.onnx INPUT.bin --shape D0,D1,... [--threads T]
//        [-w WARMUPS] [-n RUNS] [-b BUDGET_MS] [-m] [-o OUTPUT.bin]
//
// Creates a session with intraOpNumThreads=T (default 1), interOpNumThreads=1,
// sequential execution and graphOptimizationLevel 'all', feeds the model's
// first input from INPUT.bin (dense float32 of the given shape) and runs it
// WARMUPS times untimed, then RUNS times timed. The budget rules are those of
// bench/timer.c: warm-up stops after BUDGET_MS / 2, timed runs after
// BUDGET_MS, at least one call of each. Prints one line per timed run in
// milliseconds ('#' lines are comments), or with -m only the median; -o
// writes the first output of the last run as float32.
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

function usage() {
    console.error('usage: node ort_timer.js MODEL.onnx INPUT.bin --shape D0,D1,... [--threads T] ' +
        '[-w WARMUPS] [-n RUNS] [-b BUDGET_MS] [-m] [-o OUTPUT.bin]');
    process.exit(2);
}

function parseArgs(argv) {
    const o = { files: [], threads: 1, warmups: 2, runs: 10, budget: 0, median: false };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        const num = () => {
            const v = Number(argv[++i]);
            if (!Number.isInteger(v) || v < 0) usage();
            return v;
        };
        if (a === '--shape') o.shape = (argv[++i] || '').split(',').map(Number);
        else if (a === '--threads') o.threads = num();
        else if (a === '-w') o.warmups = num();
        else if (a === '-n') o.runs = num();
        else if (a === '-b') o.budget = num();
        else if (a === '-m') o.median = true;
        else if (a === '-o') o.out = argv[++i];
        else if (a.startsWith('-')) usage();
        else o.files.push(a);
    }
    if (o.files.length !== 2 || !o.shape || o.shape.some((d) => !Number.isInteger(d) || d < 0) ||
        o.runs < 1 || o.threads < 1) usage();
    return o;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const session = await ort.InferenceSession.create(o.files[0], {
        intraOpNumThreads: o.threads, interOpNumThreads: 1, executionMode: 'sequential',
        graphOptimizationLevel: 'all',
    });
    const bytes = fs.readFileSync(o.files[1]);
    const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    const count = o.shape.reduce((p, d) => p * d, 1);
    if (count !== data.length) {
        console.error(`ort_timer: ${o.files[1]} holds ${data.length} floats, shape needs ${count}`);
        process.exit(1);
    }
    const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, o.shape) };

    let result;
    const w0 = nowMs();
    let warm = 0;
    while (warm < o.warmups) {
        result = await session.run(feeds);
        warm++;
        if (o.budget > 0 && nowMs() - w0 >= o.budget / 2) break;
    }
    const times = [];
    let spent = 0;
    while (times.length < o.runs) {
        const t = nowMs();
        result = await session.run(feeds);
        const dt = nowMs() - t;
        times.push(dt);
        spent += dt;
        if (o.budget > 0 && spent >= o.budget) break;
    }

    if (o.median) {
        const s = times.slice().sort((a, b) => a - b);
        const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        console.log(m.toFixed(4));
    } else {
        console.log(`# warmups ${warm}, ${(nowMs() - w0 - spent).toFixed(3)} ms, ort ${ort.env.versions ? ort.env.versions.common : ''}`);
        for (const t of times) console.log(t.toFixed(4));
    }
    if (o.out) {
        const y = result[session.outputNames[0]].data;
        fs.writeFileSync(o.out, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
    }
}

main().catch((e) => { console.error('ort_timer: ' + e.message); process.exit(1); });
