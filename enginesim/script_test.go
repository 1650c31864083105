package enginesim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testmodel"
)

func TestParseScript(t *testing.T) {
	tok := testmodel.Load(t, "qwen3").Tokenizer
	tests := []struct {
		name    string
		script  string
		wantErr string
	}{
		{"jsonl with comments", "# canned\n{\"match\":\"a\",\"text\":\"hi\"}\n\n{\"default\":true,\"token_ids\":[1]}\n", ""},
		{"json list", `[{"match":"a","text":"hi","first_token_latency":"5ms","fault":{"kind":"drop","after_tokens":1}}]`, ""},
		{"unknown key", `{"match":"a","txt":"hi"}`, "unknown field"},
		{"no response", `{"match":"a"}`, `needs "text" or "token_ids"`},
		{"both responses", `{"match":"a","text":"x","token_ids":[1]}`, "exclusive"},
		{"no match", `{"text":"x"}`, `needs a non-empty "match"`},
		{"two defaults", "{\"default\":true,\"text\":\"x\"}\n{\"default\":true,\"text\":\"y\"}", "second default"},
		{"bad latency", `{"match":"a","text":"x","token_latency":"soon"}`, "not a non-negative duration"},
		{"bad fault", `{"match":"a","text":"x","fault":{"kind":"explode"}}`, "unknown fault kind"},
		{"token outside vocabulary", `{"match":"a","token_ids":[99999999]}`, "outside the vocabulary"},
		{"empty", "\n# nothing\n", "no entries"},
		{"broken line", "{\"match\":\"a\",\"text\":\"x\"}\n{oops", "line 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tc.script), tok)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestScriptLookup(t *testing.T) {
	tok := testmodel.Load(t, "qwen3").Tokenizer
	path := filepath.Join(t.TempDir(), "s.jsonl")
	script := "{\"match\":\"weather\",\"text\":\"sunny\",\"token_latency\":\"3ms\"}\n{\"match\":\"wea\",\"text\":\"never chosen first\"}\n{\"default\":true,\"text\":\"fallback\",\"eos\":false}\n"
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(path, tok)
	if err != nil {
		t.Fatal(err)
	}
	e := s.lookup("what is the weather like")
	if e == nil || tok.Decode(e.tokens, false) != "sunny" || !e.eos || e.tokenLatency == nil || *e.tokenLatency != 3*time.Millisecond {
		t.Fatalf("weather entry %+v", e)
	}
	if d := s.lookup("something else"); d == nil || tok.Decode(d.tokens, false) != "fallback" || d.eos {
		t.Fatalf("default entry %+v", d)
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing"), tok); err == nil {
		t.Fatal("missing file loaded")
	}
}
