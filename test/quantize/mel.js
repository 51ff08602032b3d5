// openWakeWord's audio front end for test/quantize/gen_data.sh: runs
// melspectrogram.onnx in onnxruntime-node on whole utterances.
//
//   node mel.js MELSPECTROGRAM.onnx OUTDIR FILE.wav ...
//
// Each FILE.wav (16 kHz, mono, 16-bit PCM) is fed to the model as one
// [1, samples] float32 tensor holding the int16 sample values (not scaled to
// [-1, 1]: openWakeWord feeds int16 audio, openwakeword-js multiplies by
// 32768). OUTDIR/BASENAME.mel gets the model's output [T, 1, ..., 32] as raw
// little-endian float32, T*32 values, before openWakeWord's x/10+2 (that
// transform and the windowing are gen_inputs.py's).
'use strict';
const fs = require('fs');
const path = require('path');

const modules = process.env.ORT_NODE_MODULES ||
    path.join(__dirname, '..', '..', 'build', 'node', 'node_modules');
const ort = require(path.join(modules, 'onnxruntime-node'));

function readWav(file) {
    const b = fs.readFileSync(file);
    if (b.length < 12 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE')
        throw new Error(file + ': not a RIFF WAVE file');
    let pos = 12, fmt = null;
    while (pos + 8 <= b.length) {
        const id = b.toString('ascii', pos, pos + 4);
        const size = b.readUInt32LE(pos + 4);
        const body = pos + 8;
        if (body + size > b.length && id !== 'data')
            throw new Error(file + ': chunk ' + id + ' runs past the end');
        if (id === 'fmt ') {
            fmt = { format: b.readUInt16LE(body), channels: b.readUInt16LE(body + 2),
                    rate: b.readUInt32LE(body + 4), bits: b.readUInt16LE(body + 14) };
        } else if (id === 'data') {
            if (!fmt) throw new Error(file + ': data chunk before fmt chunk');
            if (fmt.format !== 1 || fmt.channels !== 1 || fmt.rate !== 16000 || fmt.bits !== 16)
                throw new Error(file + ': fmt must be PCM mono 16000 Hz 16-bit');
            const n = Math.floor(Math.min(size, b.length - body) / 2);
            const x = new Float32Array(n);
            for (let i = 0; i < n; i++) x[i] = b.readInt16LE(body + 2 * i);
            return x;
        }
        pos = body + size + (size & 1);
    }
    throw new Error(file + ': no data chunk');
}

async function main() {
    const args = process.argv.slice(2);
    if (args.length < 3) {
        console.error('usage: node mel.js MELSPECTROGRAM.onnx OUTDIR FILE.wav ...');
        process.exit(2);
    }
    const session = await ort.InferenceSession.create(args[0], {
        intraOpNumThreads: 1, interOpNumThreads: 1,
    });
    for (const file of args.slice(2)) {
        const audio = readWav(file);
        const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', audio, [1, audio.length]) };
        const result = await session.run(feeds);
        const out = result[session.outputNames[0]];
        const dims = out.dims;
        if (dims[dims.length - 1] !== 32) throw new Error(file + ': mel output dims ' + dims);
        const base = path.basename(file).replace(/\.wav$/, '');
        fs.writeFileSync(path.join(args[1], base + '.mel'), Buffer.from(out.data.buffer, out.data.byteOffset, out.data.byteLength));
    }
}

main().catch((e) => { console.error('mel.js: ' + e.message); process.exit(1); });
