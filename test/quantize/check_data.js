// Checks that gen_data.sh's inputs are what the float models expect: the
// trained models must read them right.
//
//   node check_data.js MODELDIR KEYS.txt SETDIR
//
// ocr_cls: the predicted angle (class 1 = 180 degrees) of every sample
// NAME_rANGLE is ANGLE; ocr_rec: the greedy CTC decoding of the output
// (argmax per time step, repeats merged, class 0 the blank, class K the
// K-th line of KEYS.txt, PaddleOCR's ppocr_keys_v1.txt, class
// len(KEYS) + 1 a space) equals the line in SETDIR/ocr_rec.labels, spaces
// at either end ignored; embedding_model: every output is finite and not
// constant over the samples. Prints each figure; exits 1 when fewer than
// 90% of the cls samples or 80% of the rec lines are right, or when the
// embeddings are not.
'use strict';
const fs = require('fs');
const path = require('path');
const { parseTensor } = require('./ort_eval.js');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

function samples(dir) {
    return fs.readdirSync(dir).filter((s) => fs.existsSync(path.join(dir, s, 'input_0.pb'))).sort();
}

async function runAll(model, dir, fn) {
    const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
    for (const s of samples(dir)) {
        const file = path.join(dir, s, 'input_0.pb');
        const t = parseTensor(fs.readFileSync(file), file);
        const r = await session.run({ [session.inputNames[0]]: new ort.Tensor(t.type, t.data, t.dims) });
        fn(s, r[session.outputNames[0]]);
    }
}

async function main() {
    const args = process.argv.slice(2);
    if (args.length !== 3) {
        console.error('usage: node check_data.js MODELDIR KEYS.txt SETDIR');
        process.exit(2);
    }
    const [models, keysFile, set] = args;
    let failed = false;

    let ok = 0, n = 0;
    await runAll(path.join(models, 'ocr_cls.onnx'), path.join(set, 'ocr_cls'), (s, out) => {
        const m = /_r(0|180)$/.exec(s);
        if (!m) throw new Error(s + ': name does not end in _r0 or _r180');
        const angle = out.data[1] > out.data[0] ? '180' : '0';
        n++;
        if (angle === m[1]) ok++;
    });
    console.log('ocr_cls: ' + ok + '/' + n + ' angles right');
    if (ok < 0.9 * n) failed = true;

    const keys = fs.readFileSync(keysFile, 'utf8').split('\n');
    if (keys[keys.length - 1] === '') keys.pop();
    const labels = {};
    for (const line of fs.readFileSync(path.join(set, 'ocr_rec.labels'), 'utf8').split('\n')) {
        const tab = line.indexOf('\t');
        if (tab > 0) labels[line.slice(0, tab)] = line.slice(tab + 1);
    }
    ok = 0; n = 0;
    const wrong = [];
    await runAll(path.join(models, 'ocr_rec.onnx'), path.join(set, 'ocr_rec'), (s, out) => {
        const [, steps, classes] = out.dims;
        let text = '', prev = 0;
        for (let t = 0; t < steps; t++) {
            let best = 0;
            for (let c = 1; c < classes; c++)
                if (out.data[t * classes + c] > out.data[t * classes + best]) best = c;
            if (best !== 0 && best !== prev) text += best <= keys.length ? keys[best - 1] : ' ';
            prev = best;
        }
        if (!(s in labels)) throw new Error(s + ': no label in ocr_rec.labels');
        n++;
        if (text.trim() === labels[s].trim()) ok++;
        else wrong.push(s + ' read "' + text + '"');
    });
    console.log('ocr_rec: ' + ok + '/' + n + ' lines read exactly' +
                (wrong.length ? ' (' + wrong.slice(0, 3).join(', ') + ')' : ''));
    if (ok < 0.8 * n) failed = true;

    const embs = [];
    await runAll(path.join(models, 'embedding_model.onnx'), path.join(set, 'embedding_model'), (s, out) => {
        embs.push(Float64Array.from(out.data));
    });
    let finite = true, spread = 0;
    for (const e of embs) {
        for (let i = 0; i < e.length; i++) {
            if (!Number.isFinite(e[i])) finite = false;
            spread = Math.max(spread, Math.abs(e[i] - embs[0][i]));
        }
    }
    console.log('embedding_model: ' + embs.length + ' embeddings, ' + (finite ? 'finite' : 'NOT finite') +
                ', largest difference from the first ' + spread.toFixed(3));
    if (!finite || !(spread > 0)) failed = true;
    process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error('check_data: ' + e.message); process.exit(1); });
