// Prints, for every pattern and input, the matches Oniguruma (inside the
// Hugging Face tokenizers Node binding) finds, as start, end byte offsets.
//
// usage: node onig_reference.js <node_modules dir> < input.json > output.json
// input:  {"patterns": [string], "inputs": [string]}
// output: {"patterns": [...], "inputs": [...], "matches": [[[start, end, start, end, ...] per input] per pattern]}
//
// The binding exposes no regex object, so each pattern becomes the Split
// pre-tokenizer of a minimal tokenizer. With behavior "Isolated" the
// pre-tokenizer returns matches and the gaps between them; with "Removed"
// only the gaps. The matches are the pieces of the first not in the second.
"use strict";
const path = require("path");
const fs = require("fs");
const { Tokenizer } = require(path.join(process.argv[2], "tokenizers"));

function preTokenizer(pattern, behavior) {
  const json = {
    version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: { type: "Split", pattern: { Regex: pattern }, behavior, invert: false },
    post_processor: null, decoder: null,
    model: { type: "WordLevel", vocab: { a: 0 }, unk_token: "a" },
  };
  return Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
}

// byteOffsets maps code point offsets (what the binding reports) to UTF-8 byte offsets.
function byteOffsets(s) {
  const offs = [0];
  let b = 0;
  for (const ch of s) {
    b += Buffer.byteLength(ch, "utf8");
    offs.push(b);
  }
  return offs;
}

const input = JSON.parse(fs.readFileSync(0, "utf8"));
const matches = input.patterns.map((pattern) => {
  const isolated = preTokenizer(pattern, "Isolated");
  const removed = preTokenizer(pattern, "Removed");
  return input.inputs.map((s) => {
    const offs = byteOffsets(s);
    const gaps = new Set(removed.preTokenizeString(s).map(([, [a, b]]) => a + ":" + b));
    return isolated.preTokenizeString(s)
      .filter(([, [a, b]]) => !gaps.has(a + ":" + b))
      .flatMap(([, [a, b]]) => [offs[a], offs[b]]);
  });
});
process.stdout.write(JSON.stringify({ patterns: input.patterns, inputs: input.inputs, matches }));
