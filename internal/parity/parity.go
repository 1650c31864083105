// Package parity reads ../shared/parity, the golden answers of vLLM's own
// reasoning and tool-call parsers, for the tests that hold vrender to them
// (parsers, derender over HTTP, state checkpoints). See that folder's README.
package parity

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// Case is one line of ../shared/parity/*.jsonl.
type Case struct {
	ID                   string          `json:"id"`
	Tokenizer            string          `json:"tokenizer"`
	ReasoningParser      *string         `json:"reasoning_parser"`
	ToolParser           *string         `json:"tool_parser"`
	EnableAutoToolChoice bool            `json:"enable_auto_tool_choice"`
	ChatRequest          json.RawMessage `json:"chat_request"`
	PromptTokenIDs       []int           `json:"prompt_token_ids"`
	OutputTokenIDs       []int           `json:"output_token_ids"`
	FinishReasonEngine   string          `json:"finish_reason_engine"`
	Expect               Expect          `json:"expect"`
	// Stream is "strict" or "relaxed" (see the README).
	Stream string `json:"stream"`
}

// Expect is vLLM's non-streaming answer for a case.
type Expect struct {
	Content      *string    `json:"content"`
	Reasoning    *string    `json:"reasoning"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	FinishReason string     `json:"finish_reason"`
}

// ToolCall is an expected call; ids are random in vLLM and not compared.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Parsers returns the server flags the case was produced with ("" = none).
func (c *Case) Parsers() (reasoning, tool string) {
	if c.ReasoningParser != nil {
		reasoning = *c.ReasoningParser
	}
	if c.ToolParser != nil {
		tool = *c.ToolParser
	}
	return reasoning, tool
}

// Answer is a comparable form of an answer; "<null>" marks JSON null.
type Answer struct {
	Content, Reasoning string
	Calls              []string // "name arguments"
	FinishReason       string
}

// Null spells a nullable string for Answer.
func Null(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// Want is the expected answer; a stream accumulates null as "".
func (c *Case) Want(stream bool) Answer {
	a := Answer{Content: Null(c.Expect.Content), Reasoning: Null(c.Expect.Reasoning), FinishReason: c.Expect.FinishReason}
	for _, tc := range c.Expect.ToolCalls {
		a.Calls = append(a.Calls, tc.Name+" "+tc.Arguments)
	}
	if stream {
		if a.Content == "<null>" {
			a.Content = ""
		}
		if a.Reasoning == "<null>" {
			a.Reasoning = ""
		}
	}
	return a
}

// Load reads every golden file: the file names, sorted, and their cases.
func Load(t testing.TB) (names []string, sets map[string][]Case) {
	t.Helper()
	dir := filepath.Join(testenv.SharedDir(t), "parity")
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s: %v", dir, err)
	}
	sets = map[string][]Case{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var c Case
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			sets[filepath.Base(f)] = append(sets[filepath.Base(f)], c)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	return names, sets
}

// Llama31MaxModelLen is the context length to load the golden set's
// llama3_1 directory with: it has no config.json (Llama 3.1 8B's value).
const Llama31MaxModelLen = 131072

// ModelDir is the model directory of a case's tokenizer name. The golden
// set's llama3_1 names ids 128004/128008/128010 as Llama 3.1 does and lives
// beside the golden files; the others are the npm models of .cache.
func ModelDir(t testing.TB, name string) string {
	t.Helper()
	if name == "llama3_1" {
		return filepath.Join(testenv.SharedDir(t), "parity", "models", "llama3_1")
	}
	return testenv.ModelDir(t, name)
}

// Chunkings returns token boundaries for n tokens: all at once, one per
// token, and 20 random splits from seed.
func Chunkings(n int, seed uint64) [][]int {
	out := [][]int{{n}}
	one := make([]int, n)
	for i := range one {
		one[i] = i + 1
	}
	out = append(out, one)
	r := rand.New(rand.NewPCG(seed, 7))
	for k := 0; k < 20; k++ {
		var cuts []int
		for i := 1; i < n; i++ {
			if r.IntN(3) == 0 {
				cuts = append(cuts, i)
			}
		}
		out = append(out, append(cuts, n))
	}
	return out
}
