// Compares a quantized model with its float original in onnxruntime-node on
// a directory of samples in the ONNX test-data layout.
//
//   node ort_eval.js FLOAT.onnx QUANT.onnx DATADIR [--json OUT.json] [--save-ref]
//   node ort_eval.js --ref-outputs QUANT.onnx DATADIR [--json OUT.json]
//   node ort_eval.js --quant-outputs QDIR FLOAT.onnx DATADIR [--json OUT.json]
//   (each also [--opt-level disabled|basic|extended|all]: onnxruntime's graph
//   optimization level for the models it runs, default all)
//
// DATADIR/<sample>/input_K.pb holds one TensorProto per graph input, K in
// the graph's input order (float32, int64, int32, uint8, int8). Both models
// run on every sample; with --ref-outputs the reference is not run but read
// from DATADIR/<sample>/output_K.pb (K in the graph's output order), and
// --save-ref writes FLOAT's outputs there (float32 TensorProtos, raw_data).
// With --quant-outputs the quantized outputs are not run but read from
// QDIR/<sample>/output_K.pb (what tvmcc_eval.sh writes from a tvmcc build),
// K in FLOAT's output order.
//
// Printed per graph output (and written to OUT.json with --json):
//   SQNR of one sample, f the reference output, q the quantized one, both
//   taken as doubles and summed over every element of the output:
//       S = sum f^2,  N = sum (f - q)^2
//       SQNR = 10 * log10(S / N) dB, then clamped to [-100, 100];
//       N == 0 gives 100 (equal outputs), S == 0 with N > 0 gives -100.
//   mean SQNR: the arithmetic mean of the per-sample dB values;
//   worst: the lowest per-sample dB value and its sample;
//   top-1 agreement: the output seen as rows of its last axis (every
//   leading axis flattened), argmax of each row (the first index on ties)
//   in f and in q; the fraction of rows, over all samples, where some
//   position holds the maximum of both rows (the same argmax, or, where a
//   saturated row ties at its maximum, a shared one).
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

const SQNR_CAP = 100;

// ONNX TensorProto data_type -> [ort type, typed array, float_data-like field]
const TYPES = {
    1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
    6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
    11: ['float64', Float64Array],
};

// --------------------------------------------------------------- protobuf

function readVarint(b, st) {
    let v = 0n, shift = 0n;
    for (;;) {
        if (st.pos >= b.length) throw new Error('truncated varint');
        const byte = b[st.pos++];
        v |= BigInt(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return v;
        shift += 7n;
        if (shift > 63n) throw new Error('varint too long');
    }
}

// One TensorProto: {dims, type, data (typed array)}.
function parseTensor(b, file) {
    const st = { pos: 0 };
    const dims = [];
    let type = 0, raw = null;
    const floats = [], ints = [], int64s = [], doubles = [];
    while (st.pos < b.length) {
        const key = Number(readVarint(b, st));
        const field = key >>> 3, wire = key & 7;
        if (wire === 0) {
            const v = readVarint(b, st);
            if (field === 1) dims.push(Number(v));
            else if (field === 2) type = Number(v);
            else if (field === 5) ints.push(Number(BigInt.asIntN(32, v)));
            else if (field === 7) int64s.push(BigInt.asIntN(64, v));
        } else if (wire === 2) {
            const len = Number(readVarint(b, st));
            const end = st.pos + len;
            if (end > b.length) throw new Error(file + ': field ' + field + ' runs past the end');
            const s = { pos: st.pos };
            if (field === 1) while (s.pos < end) dims.push(Number(readVarint(b, s)));
            else if (field === 4) for (; s.pos + 4 <= end; s.pos += 4) floats.push(b.readFloatLE(s.pos));
            else if (field === 5) while (s.pos < end) ints.push(Number(BigInt.asIntN(32, readVarint(b, s))));
            else if (field === 7) while (s.pos < end) int64s.push(BigInt.asIntN(64, readVarint(b, s)));
            else if (field === 10) for (; s.pos + 8 <= end; s.pos += 8) doubles.push(b.readDoubleLE(s.pos));
            else if (field === 9) raw = b.subarray(st.pos, end);
            else if (field === 13 || field === 14) throw new Error(file + ': external data is not supported');
            st.pos = end;
        } else if (wire === 5) {
            if (field === 4) floats.push(b.readFloatLE(st.pos));
            st.pos += 4;
        } else if (wire === 1) {
            if (field === 10) doubles.push(b.readDoubleLE(st.pos));
            st.pos += 8;
        } else {
            throw new Error(file + ': unsupported wire type ' + wire);
        }
    }
    const t = TYPES[type];
    if (!t) throw new Error(file + ': data_type ' + type + ' is not supported');
    const count = dims.reduce((a, d) => a * d, 1);
    const Arr = t[1];
    let data;
    if (raw) {
        if (raw.length !== count * Arr.BYTES_PER_ELEMENT)
            throw new Error(file + ': raw_data has ' + raw.length + ' bytes, dims ask ' + count * Arr.BYTES_PER_ELEMENT);
        const copy = new Uint8Array(raw.length);
        copy.set(raw);
        data = new Arr(copy.buffer);
    } else {
        const src = type === 1 ? floats : type === 7 ? int64s : type === 11 ? doubles : ints;
        if (src.length !== count) throw new Error(file + ': ' + src.length + ' values, dims ask ' + count);
        data = Arr.from(src);
    }
    return { dims, type: t[0], data };
}

function writeVarint(out, v) {
    let x = BigInt(v);
    do {
        let byte = Number(x & 0x7fn);
        x >>= 7n;
        if (x) byte |= 0x80;
        out.push(byte);
    } while (x);
}

// A float32 TensorProto with dims, data_type 1, name and raw_data.
function encodeTensor(name, dims, f32) {
    const head = [];
    for (const d of dims) { head.push(0x08); writeVarint(head, d); }
    head.push(0x10, 1);
    const nm = Buffer.from(name, 'utf8');
    head.push(0x42); writeVarint(head, nm.length);
    const rawHead = [0x4a];
    writeVarint(rawHead, f32.byteLength);
    return Buffer.concat([Buffer.from(head), nm, Buffer.from(rawHead),
                          Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength)]);
}

// ---------------------------------------------------------------- metrics

function toDoubles(t) {
    const d = t.data;
    const out = new Float64Array(d.length);
    for (let i = 0; i < d.length; i++) out[i] = Number(d[i]);
    return out;
}

function sqnr(f, q) {
    let s = 0, n = 0;
    for (let i = 0; i < f.length; i++) {
        const e = f[i] - q[i];
        s += f[i] * f[i];
        n += e * e;
    }
    if (Number.isNaN(s) || Number.isNaN(n)) return -SQNR_CAP;
    if (n === 0) return SQNR_CAP;
    if (s === 0) return -SQNR_CAP;
    return Math.max(-SQNR_CAP, Math.min(SQNR_CAP, 10 * Math.log10(s / n)));
}

function argmaxRows(x, width) {
    const rows = width ? Math.floor(x.length / width) : 0;
    const out = new Int32Array(rows);
    for (let r = 0; r < rows; r++) {
        let best = 0, bv = x[r * width];
        for (let j = 1; j < width; j++) {
            if (x[r * width + j] > bv) { bv = x[r * width + j]; best = j; }
        }
        out[r] = best;
    }
    return out;
}

// ------------------------------------------------------------------- main

function usage() {
    console.error('usage: node ort_eval.js FLOAT.onnx QUANT.onnx DATADIR [--json OUT.json] [--save-ref]\n' +
                  '       node ort_eval.js --ref-outputs QUANT.onnx DATADIR [--json OUT.json]\n' +
                  '       node ort_eval.js --quant-outputs QDIR FLOAT.onnx DATADIR [--json OUT.json]\n' +
                  '       (each with [--opt-level disabled|basic|extended|all])');
    process.exit(2);
}

async function main() {
    const args = process.argv.slice(2);
    const pos = [];
    let jsonOut = null, refOutputs = false, saveRef = false, quantDir = null, optLevel = 'all';
    for (let i = 0; i < args.length; i++) {
        if (args[i] === '--json') { if (++i >= args.length) usage(); jsonOut = args[i]; }
        else if (args[i] === '--ref-outputs') refOutputs = true;
        else if (args[i] === '--save-ref') saveRef = true;
        else if (args[i] === '--quant-outputs') { if (++i >= args.length) usage(); quantDir = args[i]; }
        else if (args[i] === '--opt-level') {
            if (++i >= args.length || !['disabled', 'basic', 'extended', 'all'].includes(args[i])) usage();
            optLevel = args[i];
        }
        else if (args[i].startsWith('--')) usage();
        else pos.push(args[i]);
    }
    if (refOutputs && quantDir) usage();
    if (pos.length !== (refOutputs || quantDir ? 2 : 3) || (refOutputs && saveRef)) usage();
    const floatPath = refOutputs ? null : pos[0];
    const quantPath = quantDir ? quantDir : refOutputs ? pos[0] : pos[1];
    const dataDir = pos[pos.length - 1];
    const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: optLevel };
    const ref = floatPath ? await ort.InferenceSession.create(floatPath, opts) : null;
    // the side that is run (QUANT, or FLOAT with --quant-outputs)
    const quant = quantDir ? ref : await ort.InferenceSession.create(quantPath, opts);
    if (ref && ref.outputNames.join('\n') !== quant.outputNames.join('\n'))
        throw new Error('outputs differ: ' + ref.outputNames + ' vs ' + quant.outputNames);
    const samples = fs.readdirSync(dataDir)
        .filter((s) => fs.existsSync(path.join(dataDir, s, 'input_0.pb'))).sort();
    if (!samples.length) throw new Error(dataDir + ': no <sample>/input_0.pb');
    const stats = {};
    for (const name of quant.outputNames)
        stats[name] = { sum: 0, worst: Infinity, worstSample: null, agree: 0, rows: 0, per: {} };
    for (const s of samples) {
        const dir = path.join(dataDir, s);
        const feeds = {};
        quant.inputNames.forEach((name, k) => {
            const file = path.join(dir, 'input_' + k + '.pb');
            if (!fs.existsSync(file)) throw new Error(file + ': missing (input ' + name + ')');
            const t = parseTensor(fs.readFileSync(file), file);
            feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
        });
        let qOut, fOut;
        if (quantDir) {
            fOut = await ref.run(feeds);
            qOut = {};
            quant.outputNames.forEach((name, k) => {
                const file = path.join(quantDir, s, 'output_' + k + '.pb');
                if (!fs.existsSync(file)) throw new Error(file + ': missing (output ' + name + ')');
                qOut[name] = parseTensor(fs.readFileSync(file), file);
            });
        } else if (ref) {
            qOut = await quant.run(feeds);
            fOut = await ref.run(feeds);
        } else {
            qOut = await quant.run(feeds);
            fOut = {};
            quant.outputNames.forEach((name, k) => {
                const file = path.join(dir, 'output_' + k + '.pb');
                if (!fs.existsSync(file)) throw new Error(file + ': missing (output ' + name + ')');
                fOut[name] = parseTensor(fs.readFileSync(file), file);
            });
        }
        quant.outputNames.forEach((name, k) => {
            const f = fOut[name], q = qOut[name];
            if (f.dims.join(',') !== q.dims.join(','))
                throw new Error(s + ': output ' + name + ' dims ' + f.dims + ' vs ' + q.dims);
            if (saveRef) {
                const f32 = Float32Array.from(toDoubles(f));
                fs.writeFileSync(path.join(dir, 'output_' + k + '.pb'), encodeTensor(name, f.dims, f32));
            }
            const fd = toDoubles(f), qd = toDoubles(q);
            const db = sqnr(fd, qd);
            const st = stats[name];
            st.sum += db;
            st.per[s] = db;
            if (db < st.worst) { st.worst = db; st.worstSample = s; }
            const width = f.dims.length ? f.dims[f.dims.length - 1] : 1;
            const af = argmaxRows(fd, width), aq = argmaxRows(qd, width);
            for (let r = 0; r < af.length; r++) {
                const mf = fd[r * width + af[r]], mq = qd[r * width + aq[r]];
                for (let k = 0; k < width; k++)
                    if (fd[r * width + k] === mf && qd[r * width + k] === mq) { st.agree++; break; }
            }
            st.rows += af.length;
        });
    }
    const report = { float: floatPath, quant: quantPath, data: dataDir, samples: samples.length, outputs: {} };
    for (const name of quant.outputNames) {
        const st = stats[name];
        const r = {
            mean_sqnr_db: st.sum / samples.length, worst_sqnr_db: st.worst, worst_sample: st.worstSample,
            top1_agreement: st.rows ? st.agree / st.rows : null, rows: st.rows, per_sample_db: st.per,
        };
        report.outputs[name] = r;
        console.log(name + ': ' + samples.length + ' samples, SQNR mean ' + r.mean_sqnr_db.toFixed(2) +
                    ' dB, worst ' + r.worst_sqnr_db.toFixed(2) + ' dB (' + r.worst_sample + '), top-1 ' +
                    (r.top1_agreement === null ? '-' : (100 * r.top1_agreement).toFixed(1) + '%') +
                    ' of ' + r.rows + ' rows');
    }
    if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(report, null, 1) + '\n');
}

module.exports = { parseTensor, sqnr };

if (require.main === module)
    main().catch((e) => { console.error('ort_eval: ' + e.message); process.exit(1); });
