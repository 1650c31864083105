// bench.js — times the reference tokenizer for `vrender bench tokenize`.
//
// vrender's throughput target is stated as a ratio against the official
// Hugging Face binding (`tokenizers@0.23.2`) measured in the same run on the
// same inputs; this program produces the reference half of that ratio. It
// loads one tokenizer.json, then for each input file encodes (without special
// tokens) and decodes (keeping special tokens) the whole file: W warm-up runs,
// then N timed runs. Run it pinned to one core (taskset -c 0,
// RAYON_NUM_THREADS=1) for a single-core figure; the Go command does that.
//
// Usage:
//   node bench.js --node-modules DIR --model DIR|tokenizer.json \
//     [--iterations N] [--warmup W] FILE...
// Output (stdout, one JSON object):
//   {"load_ns":…, "files":[{"file":…, "bytes":…, "tokens":…, "ids":[…],
//     "decoded_sha256":"…", "encode":{"iterations":N,"min_ns":…,"median_ns":…},
//     "decode":{…}}]}
// "ids" and "decoded_sha256" let the caller check both sides agree.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const opts = {
    nodeModules: process.env.REFTOK_NODE_MODULES || '',
    model: '',
    iterations: 5,
    warmup: 1,
    files: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--node-modules': opts.nodeModules = argv[++i]; break;
      case '--model': opts.model = argv[++i]; break;
      case '--iterations': opts.iterations = parseInt(argv[++i], 10); break;
      case '--warmup': opts.warmup = parseInt(argv[++i], 10); break;
      default:
        if (a.startsWith('--')) throw new Error(`bench.js: unknown flag ${a}`);
        opts.files.push(a);
    }
  }
  if (!opts.nodeModules) throw new Error('bench.js: --node-modules DIR is required');
  if (!opts.model) throw new Error('bench.js: --model is required');
  if (!(opts.iterations >= 1)) throw new Error('bench.js: --iterations must be >= 1');
  if (!(opts.warmup >= 0)) throw new Error('bench.js: --warmup must be >= 0');
  if (opts.files.length === 0) throw new Error('bench.js: no input files');
  return opts;
}

// timeIt runs fn warmup times untimed, then iterations times timed.
async function timeIt(fn, warmup, iterations) {
  for (let i = 0; i < warmup; i++) await fn();
  const ns = [];
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    await fn();
    ns.push(Number(process.hrtime.bigint() - start));
  }
  ns.sort((a, b) => a - b);
  const mid = ns.length >> 1;
  const median = ns.length % 2 ? ns[mid] : (ns[mid - 1] + ns[mid]) / 2;
  return { iterations, min_ns: ns[0], median_ns: median };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const { Tokenizer } = require(path.join(path.resolve(opts.nodeModules), 'tokenizers'));
  const file = opts.model.endsWith('.json') ? opts.model : path.join(opts.model, 'tokenizer.json');

  const loadStart = process.hrtime.bigint();
  const tok = Tokenizer.fromFile(file);
  const loadNs = Number(process.hrtime.bigint() - loadStart);

  const results = [];
  for (const f of opts.files) {
    const text = fs.readFileSync(f, 'utf8');
    const encOpts = { addSpecialTokens: false };
    const ids = (await tok.encode(text, null, encOpts)).getIds();
    const encode = await timeIt(() => tok.encode(text, null, encOpts), opts.warmup, opts.iterations);
    const decoded = await tok.decode(ids, false);
    const decode = await timeIt(() => tok.decode(ids, false), opts.warmup, opts.iterations);
    results.push({
      file: f,
      bytes: Buffer.byteLength(text, 'utf8'),
      tokens: ids.length,
      ids,
      decoded_sha256: crypto.createHash('sha256').update(decoded, 'utf8').digest('hex'),
      encode,
      decode,
    });
  }
  process.stdout.write(JSON.stringify({ load_ns: loadNs, files: results }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`bench.js: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
