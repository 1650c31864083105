// Runs openai_harmony (the npm package openai-harmony: the official Rust crate compiled to WebAssembly) as the
// reference renderer and parser for render/harmony's differential tests.
//
//   node harmony.mjs CACHE_DIR < requests.json > results.json
//
// CACHE_DIR is .cache/harmony-ref: node_modules/openai-harmony and o200k_base.tiktoken (written by
// `make models`). requests.json is an array of
//   {"op": "render", "conversation": {...}, "next_turn_role": "assistant", "auto_drop_analysis": false}
//   {"op": "parse", "tokens": [...], "role": "assistant"}          parseMessagesFromCompletionTokens (+ decodeUtf8)
//   {"op": "stream", "tokens": [...], "role": "assistant"}         JsStreamableParser, token by token
// and the output holds, per request, {"tokens": [...], "text": "..."}, {"messages": [...], ...} or {"error": "..."}.
// The package loads its wasm and the vocabulary with fetch(); node's fetch reads neither file: URLs nor (here)
// the network, so fetch is replaced by one that serves those two files from disk and refuses everything else.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const cacheDir = process.argv[2];
if (!cacheDir) {
  console.error("usage: node harmony.mjs CACHE_DIR < requests.json");
  process.exit(2);
}
const vocabBase = "http://harmony-ref.invalid/";

globalThis.fetch = async (input) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  let file;
  let type = "application/octet-stream";
  if (url.startsWith("file:") && url.endsWith(".wasm")) {
    file = fileURLToPath(url);
    type = "application/wasm";
  } else if (url === vocabBase + "o200k_base.tiktoken") {
    file = path.join(cacheDir, "o200k_base.tiktoken");
  } else {
    throw new Error("harmony.mjs: no network access for " + url);
  }
  const res = new Response(await readFile(file), { status: 200, headers: { "content-type": type } });
  // reqwest's wasm client parses Response.url, which a constructed Response leaves empty.
  Object.defineProperty(res, "url", { value: url });
  return res;
};

const h = await import(path.resolve(cacheDir, "node_modules/openai-harmony/dist/openai_harmony.js"));
const enc = await h.load_harmony_encoding("HarmonyGptOss", vocabBase);

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const requests = JSON.parse(Buffer.concat(chunks).toString("utf8"));

function run(req) {
  switch (req.op) {
    case "render": {
      const cfg = { auto_drop_analysis: !!req.auto_drop_analysis };
      const ids = req.next_turn_role
        ? enc.renderConversationForCompletion(req.conversation, req.next_turn_role, cfg)
        : enc.renderConversation(req.conversation, cfg);
      return { tokens: Array.from(ids), text: enc.decodeUtf8(ids) };
    }
    case "parse": {
      const ids = Uint32Array.from(req.tokens);
      return { messages: JSON.parse(enc.parseMessagesFromCompletionTokens(ids, req.role ?? null)), text: enc.decodeUtf8(ids) };
    }
    case "stream": {
      const p = new h.JsStreamableParser(enc, req.role ?? "assistant");
      const deltas = [];
      for (const t of req.tokens) {
        p.process(t);
        deltas.push(p.lastContentDelta ?? "");
      }
      const out = { messages: JSON.parse(p.messages), deltas, state: p.state };
      p.free();
      return out;
    }
    default:
      throw new Error("unknown op " + req.op);
  }
}

const results = requests.map((req) => {
  try {
    return run(req);
  } catch (e) {
    return { error: String(e && e.message ? e.message : e) };
  }
});
process.stdout.write(JSON.stringify(results));
