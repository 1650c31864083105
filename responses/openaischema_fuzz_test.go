package responses

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// FuzzOpenAISchema validates any JSON value against every OpenAI type the
// Responses decoder reads: no panic; valid (the unions' fast path) true
// exactly when validate finds no error; each error located under the value
// and carrying a type, a message and an input that is one JSON value (the
// message summarises it); a capped sink keeps the same first errors and
// counts the others. An input item prepared as input_item_parsing prepares
// it is still one JSON value (completed items are rebuilt by code).
func FuzzOpenAISchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"function","name":"f","parameters":5}`, `{"type":"bogus"}`, `5.5`, `[1,"a"]`, `"auto"`, `null`,
		`{"role":"bogus","content":"hi"}`, `{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}]}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"},{"type":"output_text"},3]}`,
		`{"format":{"type":"json_schema","name":"x","schema":[]},"verbosity":"loud"}`, `{"effort":"max","summary":1}`,
		`{"a":"b","c":1}`, `{"type":"namespace","name":"n","description":"d","tools":[{"type":"function","name":"f"}]}`,
	} {
		f.Add([]byte(s))
	}
	addGoldenMembers(f)
	roots := make([]string, 0, len(openaiTypes()))
	for name := range openaiTypes() {
		roots = append(roots, name)
	}
	sort.Strings(roots)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := wire.Parse(data)
		if err != nil {
			return
		}
		run := func(n *schemaNode, keep int) *errSink {
			s := &errSink{keep: keep}
			n.validate(v, &locPath{base: []any{"m"}}, s)
			return s
		}
		for _, name := range roots {
			n := openaiType(name)
			all := run(n, 1<<30)
			if all.omitted != 0 {
				t.Fatalf("%s %s: %d omitted with no cap", name, data, all.omitted)
			}
			if n.valid(v) != (len(all.errs) == 0) {
				t.Fatalf("%s %s: valid %v with %d errors", name, data, n.valid(v), len(all.errs))
			}
			for i, fe := range all.errs {
				if fe.Type == "" || fe.Msg == "" || len(fe.Loc) == 0 || fe.Loc[0] != "m" {
					t.Fatalf("%s %s: error %+v", name, data, fe)
				}
				if !json.Valid(fe.Input) {
					t.Fatalf("%s %s: error %d input %q is not JSON", name, data, i, fe.Input)
				}
			}
			// The capped sink keeps the same first errors and counts the rest.
			for _, keep := range []int{0, 3, pylax.MaxReportedErrors} {
				capped := run(n, keep)
				if len(capped.errs)+capped.omitted != len(all.errs) || len(capped.errs) > keep {
					t.Fatalf("%s %s: keep %d: %d kept + %d omitted, want %d", name, data, keep,
						len(capped.errs), capped.omitted, len(all.errs))
				}
				for i, fe := range capped.errs {
					if fe.Repr() != all.errs[i].Repr() {
						t.Fatalf("%s %s: error %d is %s, then %s", name, data, i, fe.Repr(), all.errs[i].Repr())
					}
				}
			}
		}
		p, accepted := prepareInputItem(v)
		if !json.Valid(p.Raw) {
			t.Fatalf("%s: prepared item %q is not JSON", data, p.Raw)
		}
		if accepted && v.Kind != wire.Object {
			t.Fatalf("%s: a non-object accepted", data)
		}
	})
}

// addGoldenMembers seeds f with every member value of the Responses golden
// bodies.
func addGoldenMembers(f *testing.F) {
	file, err := os.Open("testdata/responses_validation_golden.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c struct {
			Body string `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			f.Fatal(err)
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.Body), &members); err != nil {
			f.Fatal(err)
		}
		for _, v := range members {
			f.Add([]byte(v))
		}
	}
}
