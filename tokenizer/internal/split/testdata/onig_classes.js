// Prints the code points Oniguruma (inside the Hugging Face tokenizers Node
// binding) puts in each character class the scanners use, as JSON
// {"<class>": [[first, last], ...]}.
//
// usage: node onig_classes.js <node_modules dir> > classes.json
//
// The binding exposes no regex object, so each class becomes the Split
// pre-tokenizer of a minimal tokenizer, run over one string holding every
// Unicode scalar value; the matches are the pieces of the "Isolated" split
// that the "Removed" split does not return.
"use strict";
const path = require("path");
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

const codePoints = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (c < 0xd800 || c > 0xdfff) codePoints.push(c);
}
const chunks = [];
for (let i = 0; i < codePoints.length; i += 10000) {
  chunks.push(String.fromCodePoint(...codePoints.slice(i, i + 10000)));
}
const all = chunks.join("");

const out = {};
for (const cls of ["\\p{Lu}", "\\p{Ll}", "\\p{Lt}", "\\p{Lm}", "\\p{Lo}", "\\p{M}", "\\p{N}", "\\p{P}", "\\p{S}", "\\s"]) {
  const gaps = new Set(preTokenizer(cls + "+", "Removed").preTokenizeString(all).map(([, [a, b]]) => a + ":" + b));
  const ranges = [];
  for (const [, [a, b]] of preTokenizer(cls + "+", "Isolated").preTokenizeString(all)) {
    if (gaps.has(a + ":" + b)) continue;
    const first = codePoints[a], last = codePoints[b - 1];
    if (first < 0xd800 && last > 0xdfff) {
      ranges.push([first, 0xd7ff], [0xe000, last]); // a run across the surrogate gap
    } else {
      ranges.push([first, last]);
    }
  }
  out[cls] = ranges;
}
process.stdout.write(JSON.stringify(out));
