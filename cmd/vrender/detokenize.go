package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/vrender/vrender/model"
)

// runDetokenize is `vrender detokenize`: token IDs on stdin, text on stdout.
func runDetokenize(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := newCommand("detokenize", "--model MODEL [--skip-special-tokens=true|false] [--jsonl] < input",
		"Read a JSON array of token IDs from stdin and write their text to stdout, exactly\n"+
			"(no newline is added), decoded as vLLM's /detokenize does.\n\n"+
			"With --jsonl, every stdin line is a JSON object {\"tokens\": […]}, optionally with\n"+
			"\"skip_special_tokens\": true|false, and every stdout line answers the same input line\n"+
			"with {\"prompt\": \"…\"} or {\"error\": \"…\"}. The exit status is 1 if any line failed.")
	f, err := parseTokenFlags(c, "skip-special-tokens", true, "leave special tokens out of the text", args, stdout)
	if err != nil {
		return err
	}
	skipSpecial := f.special
	if f.jsonl {
		m, err := f.mf.load(ctx)
		if err != nil {
			return err
		}
		return jsonlSummary(processJSONL(stdin, stdout, func(line []byte) (any, error) {
			return detokenizeLine(m, line, skipSpecial)
		}))
	}
	// Malformed input fails before the model is loaded, which takes a while.
	data, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	var ids []int
	if err := json.Unmarshal(data, &ids); err != nil {
		return fmt.Errorf("stdin: want a JSON array of token IDs: %w", err)
	}
	m, err := f.mf.load(ctx)
	if err != nil {
		return err
	}
	text, err := m.Decode(ids, skipSpecial)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// detokenizeRequestLine is one --jsonl input line of `vrender detokenize`.
type detokenizeRequestLine struct {
	Tokens            *[]int `json:"tokens"`
	SkipSpecialTokens *bool  `json:"skip_special_tokens"`
}

// promptLine is one --jsonl output line of `vrender detokenize`.
type promptLine struct {
	Prompt string `json:"prompt"`
}

func detokenizeLine(m *model.Model, line []byte, skipSpecial bool) (any, error) {
	var req detokenizeRequestLine
	if err := decodeJSONLine(line, &req); err != nil {
		return nil, err
	}
	if req.Tokens == nil {
		return nil, errors.New(`want an object with a list "tokens"`)
	}
	if req.SkipSpecialTokens != nil {
		skipSpecial = *req.SkipSpecialTokens
	}
	text, err := m.Decode(*req.Tokens, skipSpecial)
	if err != nil {
		return nil, err
	}
	return promptLine{Prompt: text}, nil
}
