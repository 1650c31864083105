package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// goldenCalls turns a golden case's expected calls into benchCalls; ok is
// false when an argument is not a string, integer or boolean (the bench's
// calls carry no others).
func goldenCalls(calls []parity.ToolCall) ([]benchCall, bool) {
	var out []benchCall
	for _, c := range calls {
		bc := benchCall{Name: c.Name}
		dec := json.NewDecoder(strings.NewReader(c.Arguments))
		dec.UseNumber()
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, false
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, false // a malformed-output case
			}
			val, err := dec.Token()
			if err != nil {
				return nil, false
			}
			switch v := val.(type) {
			case string, bool:
				bc.Params = append(bc.Params, benchParam{key.(string), v})
			case json.Number:
				n, err := v.Int64()
				if err != nil {
					return nil, false
				}
				bc.Params = append(bc.Params, benchParam{key.(string), int(n)})
			default:
				return nil, false
			}
		}
		out = append(out, bc)
	}
	return out, true
}

// TestFamilyFormatsMatchGoldens holds the bench's markup to vLLM's: for
// every family with a golden file, the calls of each golden case with
// simple arguments, written by the family's Calls, must appear byte for
// byte in that case's output; at least one case per family must have
// several calls.
func TestFamilyFormatsMatchGoldens(t *testing.T) {
	_, sets := parity.Load(t)
	for i := range DerenderFamilies {
		f := &DerenderFamilies[i]
		if f.Golden == "" {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			cases, ok := sets[f.Golden]
			if !ok {
				t.Fatalf("no golden file %s", f.Golden)
			}
			var opts model.Options
			if f.Model == "llama3_1" {
				opts.MaxModelLen = parity.Llama31MaxModelLen
			}
			m, err := model.Load(context.Background(), parity.ModelDir(t, f.Model), opts)
			if err != nil {
				t.Fatal(err)
			}
			matched, several := 0, 0
			for _, c := range cases {
				reasoning, tool := c.Parsers()
				if reasoning != f.Parsers.ReasoningParser || tool != f.Parsers.ToolParser || c.Stream != "strict" || len(c.Expect.ToolCalls) == 0 {
					continue
				}
				calls, ok := goldenCalls(c.Expect.ToolCalls)
				if !ok {
					continue
				}
				out := m.Tokenizer.Decode(c.OutputTokenIDs, false)
				want := f.Calls(calls)
				if !strings.Contains(out, want) {
					// A golden case may test malformed or unusual spacing;
					// count only what matches, and require matches below.
					t.Logf("%s: output %q does not hold %q", c.ID, out, want)
					continue
				}
				matched++
				if len(calls) > 1 {
					several++
				}
			}
			if matched == 0 || several == 0 {
				t.Errorf("%d golden cases match the bench's %s markup (%d with several calls); want some of each", matched, f.Name, several)
			}
			t.Logf("%d golden cases match (%d with several calls)", matched, several)
		})
	}
}

// TestFamilyWorkloadsParse derenders every family's workloads at a small
// size: the batch answer holds the calls the output was written with
// (checkFamilyAnswer), and the session and stream reach it.
func TestFamilyWorkloadsParse(t *testing.T) {
	ctx := context.Background()
	fm := &familyModels{dir: familyModelsDir(t), loaded: map[string]*model.Model{}, dirs: map[string]string{}}
	defer fm.close()
	cr, err := protocol.DecodeChatCompletionRequest([]byte(familyChatRequest))
	if err != nil {
		t.Fatal(err)
	}
	for i := range DerenderFamilies {
		f := &DerenderFamilies[i]
		m, _, err := fm.get(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		e, err := newBenchEngine(m, f.Parsers, 16)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range FamilyKinds {
			ids, calls := familyOutput(m, f, kind, 300)
			if (kind == "calls") != (calls > 0) || len(ids) < 200 || len(ids) > 600 {
				t.Errorf("%s %s: %d tokens, %d calls", f.Name, kind, len(ids), calls)
			}
			c := &apiClient{cr: cr, prompt: m.Tokenizer.Encode(f.Prompt, false), ids: ids}
			equal, err := verifyFamily(ctx, e, c, kind, calls, f.Think != nil)
			if err != nil {
				t.Errorf("%s %s: %v", f.Name, kind, err)
			} else if !equal {
				t.Errorf("%s %s: a stream did not reach the batch answer", f.Name, kind)
			}
		}
	}
}

// TestMeasureFamilies runs the timed path and the table for one family.
func TestMeasureFamilies(t *testing.T) {
	r := &DerenderReport{}
	if err := measureFamilies(context.Background(), DerenderOptions{FamilyTokens: 200, ModelsDir: familyModelsDir(t), MinTime: 1,
		Families: []string{"pythonic"}}, r); err != nil {
		t.Fatal(err)
	}
	if len(r.Families) != len(FamilyKinds) {
		t.Fatalf("%d results", len(r.Families))
	}
	for _, x := range r.Families {
		if !x.StreamEqualsBatch || x.BatchNsPerToken <= 0 || x.SessionNsPerToken <= 0 || x.StreamNsPerToken <= 0 ||
			x.HTTPBatchNsPerToken <= 0 || x.HTTPCheckpointNsPerCall <= 0 {
			t.Errorf("%s %s: %+v", x.Family, x.Kind, x)
		}
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil || !strings.Contains(out.String(), "parser families") {
		t.Fatalf("table: %v\n%s", err, out.String())
	}
	if _, err := selectFamilies([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `unknown family "nope"`) {
		t.Errorf("unknown family: %v", err)
	}
}

// familyModelsDir is the models folder of the test tokenizers (each family's
// must be there).
func familyModelsDir(t *testing.T) string {
	t.Helper()
	dir := testenv.ModelDir(t, "qwen3")
	for _, f := range DerenderFamilies {
		testenv.ModelDir(t, f.Model)
	}
	return filepath.Dir(dir)
}

func TestAddTokens(t *testing.T) {
	in := `{"version":"1.0","added_tokens":[{"id":5,"content":"<s>","special":true}],"model":{"type":"BPE","vocab":{"a":0,"b":7}}}`
	out, err := addTokens([]byte(in), []string{"[X]", "[Y]"})
	if err != nil {
		t.Fatal(err)
	}
	var tj struct {
		Added []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(out, &tj); err != nil {
		t.Fatal(err)
	}
	if tj.Version != "1.0" || len(tj.Added) != 3 || tj.Added[1].ID != 8 || tj.Added[1].Content != "[X]" || !tj.Added[1].Special || tj.Added[2].ID != 9 {
		t.Fatalf("added tokens %+v", tj)
	}
}

func TestFormatValues(t *testing.T) {
	c := benchCall{Name: "f", Params: []benchParam{{"q", "a \"b\"\n<c>"}, {"n", 3}, {"ok", true}}}
	if got, want := jsonArgs(c), `{"q": "a \"b\"\n<c>", "n": 3, "ok": true}`; got != want {
		t.Errorf("jsonArgs = %s, want %s", got, want)
	}
	var py []string
	for _, p := range c.Params {
		py = append(py, pyValue(p.Value))
	}
	if got, want := strings.Join(py, " "), `"a \"b\"\n<c>" 3 True`; got != want {
		t.Errorf("pyValue = %s, want %s", got, want)
	}
}
