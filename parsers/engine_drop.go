package parsers

import "slices"

// vLLM's ParserEngine (vllm/parser/engine/streaming_parser_engine.py,
// _build_drop_info) lexes every special token of the tokenizer
// (all_special_tokens) that is not one of the grammar's own terminals as a
// DROP terminal. No transition reads DROP, so in the tool parser's pass the
// token is left out in every state: content, a call's name, a parameter
// value. (The reasoning adapter's pass sets skip_tool_parsing, which keeps
// the text; so reasoning keeps special tokens and only what reaches an
// engine-based tool machine loses them.) vLLM's non-streaming path lexes the
// text, so a special token's text is dropped wherever it appears; the
// engine tool machines here do the same, on the text, in every chunking.

// specialTokenLister is a vocabulary that can list its special tokens.
type specialTokenLister interface {
	SpecialTokens() []string
}

// engineTerminals returns the grammar's terminals followed by the
// vocabulary's special tokens that are not among them, which the machine
// must lex and drop (isDropToken).
func engineTerminals(v Vocab, terminals []string) []string {
	l, ok := v.(specialTokenLister)
	if !ok {
		return terminals
	}
	var out []string
	for _, tok := range l.SpecialTokens() {
		if tok == "" || slices.Contains(terminals, tok) {
			continue
		}
		if out == nil {
			out = append(slices.Clip(terminals), tok)
			continue
		}
		out = append(out, tok)
	}
	if out == nil {
		return terminals
	}
	return out
}

// isDropToken reports whether a terminal that engineTerminals added was
// lexed: it is not one of the grammar's own.
func isDropToken(t string, terminals []string) bool {
	return !slices.Contains(terminals, t)
}

// orTerminals is markers, or terminals for a machine built without a
// vocabulary (a zero value).
func orTerminals(markers, terminals []string) []string {
	if markers == nil {
		return terminals
	}
	return markers
}
