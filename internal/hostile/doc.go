// Package hostile is vrender's bad-input corpus: malformed and hostile
// requests for every endpoint, kept as data in testdata/hostile/*.jsonl,
// with the answer each must get (status and OpenAI error type).
//
// The package's test starts the real server (qwen3, the qwen3 and hermes
// parsers, an in-process engine simulator) and replays the corpus,
// checking that every request gets its 4xx with an OpenAI error body, that
// nothing answers 5xx, that the server stays alive, and that heap and
// goroutines return to their baseline afterwards.
//
// Bodies too large or too odd to write in JSONL (10k-deep nesting, 100 MB,
// invalid UTF-8 bytes, prompts past max_model_len) come from generators
// named in the corpus; see Generators.
package hostile
