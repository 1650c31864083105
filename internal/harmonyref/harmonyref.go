// Package harmonyref runs openai_harmony, the reference for vrender's
// Harmony (gpt-oss) rendering and parsing, from tests: the npm
// openai-harmony wasm build in .cache/harmony-ref, driven by
// tools/harmony-ref/harmony.mjs under node. Where it comes from and which
// openai/harmony version it is: render/harmony/testdata/README.md.
package harmonyref

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// Request is one call of openai_harmony. Op "render" renders Conversation
// (openai_harmony's Conversation JSON) with render_conversation_for_completion
// when NextTurnRole is set, else render_conversation. Op "parse" is
// parse_messages_from_completion_tokens(Tokens, Role); "stream" feeds Tokens
// one by one to a StreamableParser started with Role (no process_eos).
type Request struct {
	Op               string `json:"op"`
	Conversation     any    `json:"conversation,omitempty"`
	NextTurnRole     string `json:"next_turn_role,omitempty"`
	AutoDropAnalysis bool   `json:"auto_drop_analysis"`
	Tokens           []int  `json:"tokens,omitempty"`
	Role             string `json:"role,omitempty"`
}

// Message is a parsed message as the wasm build serializes it (content is
// the message's single text).
type Message struct {
	Role        string `json:"role"`
	Name        string `json:"name"`
	Recipient   string `json:"recipient"`
	Channel     string `json:"channel"`
	ContentType string `json:"content_type"`
	Content     string `json:"content"`
}

// Result is openai_harmony's answer to one Request. Error is set when it
// raised.
type Result struct {
	Tokens   []int     `json:"tokens"`
	Text     string    `json:"text"`
	Messages []Message `json:"messages"`
	Deltas   []string  `json:"deltas"`
	Error    string    `json:"error"`
}

// Run sends requests to openai_harmony in one node process and returns its
// answers in order. It skips (fails under CI=true) when the reference or
// node is absent.
func Run(t testing.TB, requests []Request) []Result {
	t.Helper()
	dir := testenv.HarmonyRefDir(t)
	node := testenv.Node(t)
	in, err := json.Marshal(requests)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(testenv.RepoRoot(t), "tools", "harmony-ref", "harmony.mjs")
	cmd := exec.Command(node, script, dir)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openai_harmony reference: %v\n%s", err, stderr.String())
	}
	var results []Result
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("openai_harmony reference output: %v", err)
	}
	if len(results) != len(requests) {
		t.Fatalf("openai_harmony answered %d requests, sent %d", len(results), len(requests))
	}
	return results
}
