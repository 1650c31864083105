// reftok.js — reference tokenizer server for vrender's parity tests.
//
// It answers encode/decode requests with the official Hugging Face binding
// (`tokenizers@0.23.2`, the same Rust core as Python tokenizers 0.23), so Go
// tests can compare vrender's tokenizer against it on thousands of strings
// with one process per test. It is a test tool, not part of the product.
//
// Usage:
//   node reftok.js [--node-modules DIR]     (or env REFTOK_NODE_MODULES=DIR)
// DIR is the node_modules folder holding `tokenizers` (.cache/ref/node_modules).
//
// Protocol: one JSON object per line on stdin, one JSON object per line on
// stdout, answered in order. Every request may carry "model" (a directory
// holding tokenizer.json, or the file itself); it is loaded once and becomes
// the current model for later requests that omit it.
//   {"op":"encode","text":"…","add_special_tokens":false}     -> {"ids":[…]}
//   {"op":"encode","texts":["…",…],"add_special_tokens":true} -> {"ids_batch":[[…],…]}
//   {"op":"decode","ids":[…],"skip_special_tokens":false}     -> {"text":"…"}
//   {"op":"decode","ids_batch":[[…],…],"skip_special_tokens":true} -> {"texts":["…",…]}
//   {"op":"id_to_token","ids":[…]}                            -> {"tokens":["…"|null,…]}
//   {"op":"token_to_id","tokens":["…",…]}                     -> {"ids":[N|null,…]}
//   {"op":"info"}                                             -> {"vocab_size":N}  (with added tokens)
// A failing request is answered with {"error":"…"}; the server keeps going.
// An "id" field in a request is echoed in its answer.
'use strict';

const path = require('path');
const readline = require('readline');

function parseArgs(argv) {
  const opts = { nodeModules: process.env.REFTOK_NODE_MODULES || '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--node-modules') opts.nodeModules = argv[++i];
    else if (a.startsWith('--node-modules=')) opts.nodeModules = a.slice('--node-modules='.length);
    else throw new Error(`reftok: unknown argument ${a}`);
  }
  if (!opts.nodeModules) throw new Error('reftok: --node-modules DIR or REFTOK_NODE_MODULES is required');
  return opts;
}

function tokenizerFile(model) {
  return model.endsWith('.json') ? model : path.join(model, 'tokenizer.json');
}

async function handle(req, state, Tokenizer) {
  if (req.model !== undefined && req.model !== state.modelName) {
    let tok = state.cache.get(req.model);
    if (!tok) {
      tok = Tokenizer.fromFile(tokenizerFile(req.model));
      state.cache.set(req.model, tok);
    }
    state.tok = tok;
    state.modelName = req.model;
  }
  const tok = state.tok;
  if (!tok) throw new Error('no model loaded: send "model" first');
  switch (req.op) {
    case 'encode': {
      const options = { addSpecialTokens: !!req.add_special_tokens };
      if (Array.isArray(req.texts)) {
        const encs = await tok.encodeBatch(req.texts, options);
        return { ids_batch: encs.map((e) => e.getIds()) };
      }
      const enc = await tok.encode(req.text, null, options);
      return { ids: enc.getIds() };
    }
    case 'decode': {
      const skip = !!req.skip_special_tokens;
      if (Array.isArray(req.ids_batch)) {
        return { texts: await tok.decodeBatch(req.ids_batch, skip) };
      }
      return { text: await tok.decode(req.ids, skip) };
    }
    case 'id_to_token':
      return { tokens: req.ids.map((id) => tok.idToToken(id)) };
    case 'token_to_id':
      return { ids: req.tokens.map((t) => tok.tokenToId(t)) };
    case 'info':
      return { vocab_size: tok.getVocabSize(true) };
    default:
      throw new Error(`unknown op ${JSON.stringify(req.op)}`);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const { Tokenizer } = require(path.join(path.resolve(opts.nodeModules), 'tokenizers'));
  const state = { cache: new Map(), tok: null, modelName: undefined };
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    let out;
    let req = {};
    try {
      req = JSON.parse(line);
      out = await handle(req, state, Tokenizer);
    } catch (err) {
      out = { error: String(err && err.message ? err.message : err) };
    }
    if (req && req.id !== undefined) out.id = req.id;
    // Writes are queued in order; wait for drain on back-pressure so a large
    // batch does not buffer unboundedly.
    if (!process.stdout.write(JSON.stringify(out) + '\n')) {
      await new Promise((resolve) => process.stdout.once('drain', resolve));
    }
  }
}

main().catch((err) => {
  process.stderr.write(`reftok: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
