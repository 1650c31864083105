package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// runTokenize is `vrender tokenize`: text on stdin, token IDs on stdout.
func runTokenize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := newCommand("tokenize", "--model MODEL [--add-special-tokens] [--jsonl] < input",
		"Tokenize stdin with MODEL's tokenizer and print the token IDs as a JSON array.\n"+
			"The whole of stdin is the text, byte for byte: a trailing newline is tokenized too\n"+
			"(use printf, or echo -n).\n\n"+
			"With --jsonl, every stdin line is a JSON object {\"text\": …} or {\"prompt\": …}, optionally\n"+
			"with \"add_special_tokens\": true|false, and every stdout line answers the same input line\n"+
			"with {\"tokens\": […]} or {\"error\": \"…\"}. The exit status is 1 if any line failed.")
	f, err := parseTokenFlags(c, "add-special-tokens", false, "add the special tokens the tokenizer's post-processor adds (BOS, …)", args, stdout)
	if err != nil {
		return err
	}
	addSpecial := f.special
	m, err := f.mf.load(ctx)
	if err != nil {
		return err
	}
	if f.jsonl {
		return jsonlSummary(processJSONL(stdin, stdout, func(line []byte) (any, error) {
			return tokenizeLine(m.Tokenizer, line, addSpecial)
		}))
	}
	text, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	b, err := protocol.MarshalJSON(nonNil(m.Tokenizer.Encode(string(text), addSpecial)))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// tokenFlags are the flags tokenize and detokenize share.
type tokenFlags struct {
	mf      modelFlags
	special bool // --add-special-tokens or --skip-special-tokens
	jsonl   bool
}

// parseTokenFlags registers --model, the command's special-tokens switch
// and --jsonl on c and parses args; neither command takes an argument.
func parseTokenFlags(c *command, special string, specialDefault bool, specialUsage string, args []string, stdout io.Writer) (tokenFlags, error) {
	var f tokenFlags
	f.mf.register(c, false)
	c.fs.BoolVar(&f.special, special, specialDefault, specialUsage)
	c.fs.BoolVar(&f.jsonl, "jsonl", false, "read and write JSON lines (see above)")
	rest, err := c.parse(args, stdout)
	if err != nil {
		return f, err
	}
	if len(rest) > 0 {
		return f, usagef("unexpected argument %q (the model goes in --model)", rest[0])
	}
	return f, nil
}

// tokenizeRequestLine is one --jsonl input line of `vrender tokenize`.
type tokenizeRequestLine struct {
	Text             *string `json:"text"`
	Prompt           *string `json:"prompt"`
	AddSpecialTokens *bool   `json:"add_special_tokens"`
}

// tokensLine is one --jsonl output line of `vrender tokenize`.
type tokensLine struct {
	Tokens []int `json:"tokens"`
}

func tokenizeLine(tok *tokenizer.Tokenizer, line []byte, addSpecial bool) (any, error) {
	var req tokenizeRequestLine
	if err := decodeJSONLine(line, &req); err != nil {
		return nil, err
	}
	text := req.Text
	switch {
	case req.Text != nil && req.Prompt != nil:
		return nil, errors.New(`give "text" or "prompt", not both`)
	case req.Prompt != nil:
		text = req.Prompt
	case req.Text == nil:
		return nil, errors.New(`want an object with a string "text" or "prompt"`)
	}
	if req.AddSpecialTokens != nil {
		addSpecial = *req.AddSpecialTokens
	}
	return tokensLine{Tokens: nonNil(tok.Encode(*text, addSpecial))}, nil
}

// nonNil keeps an empty result a JSON list rather than null.
func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}
