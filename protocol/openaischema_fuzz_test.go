package protocol

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// FuzzOpenAISchema validates any JSON value against every OpenAI type the
// Responses decoder reads, and an input item as input_item_parsing prepares
// it: no panic, valid (the unions' fast path) true exactly when validate
// finds no error, the same errors twice, each error located under the value
// and carrying a type, a message and an input that is one JSON value (the
// message summarises it, and completed items are rebuilt by code).
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
		loc := []any{"m"}
		check := func(what string, errs, again []FieldError) {
			if len(errs) != len(again) {
				t.Fatalf("%s %s: %d errors, then %d", what, data, len(errs), len(again))
			}
			for i, fe := range errs {
				if fe.Type == "" || fe.Msg == "" || len(fe.Loc) == 0 || fe.Loc[0] != "m" {
					t.Fatalf("%s %s: error %+v", what, data, fe)
				}
				if !json.Valid(fe.Input) {
					t.Fatalf("%s %s: error input %q is not JSON", what, data, fe.Input)
				}
				if fe.repr() != again[i].repr() {
					t.Fatalf("%s %s: %s, then %s", what, data, fe.repr(), again[i].repr())
				}
			}
		}
		for _, name := range roots {
			n := openaiType(name)
			errs := n.validate(v, loc, nil)
			check(name, errs, n.validate(v, loc, nil))
			if n.valid(v) != (len(errs) == 0) {
				t.Fatalf("%s %s: valid %v with %d errors", name, data, n.valid(v), len(errs))
			}
		}
		check("input item", validateInputItem(v, loc, nil), validateInputItem(v, loc, nil))
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
