package responses

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/render"
)

// refToolDumps is responsesToolDumps as it read the raw tools with
// encoding/json before the request kept their trees: the reference the
// tree reading must match.
func refToolDumps(tools []json.RawMessage) (json.RawMessage, error) {
	out := []byte{'['}
	for i, raw := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		var t struct {
			Type        *string         `json:"type"`
			Name        *string         `json:"name"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      json.RawMessage `json:"strict"`
			Description json.RawMessage `json:"description"`
		}
		if json.Unmarshal(raw, &t) != nil || t.Type == nil || *t.Type != "function" || t.Name == nil {
			v, err := refPyCompactOrNil(raw)
			if err != nil {
				return nil, err
			}
			out = append(out, v...)
			continue
		}
		out = append(out, `{"name":`...)
		out = wire.AppendString(out, *t.Name)
		for _, m := range []struct {
			k string
			v json.RawMessage
		}{{"parameters", t.Parameters}, {"strict", t.Strict}, {"type", nil}, {"description", t.Description}} {
			out = append(out, ',')
			out = wire.AppendString(out, m.k)
			out = append(out, ':')
			if m.k == "type" {
				out = append(out, `"function"`...)
				continue
			}
			v, err := refPyCompactOrNil(m.v)
			if err != nil {
				return nil, err
			}
			if v == nil {
				v = json.RawMessage("null")
			}
			out = append(out, v...)
		}
		out = append(out, '}')
	}
	return append(out, ']'), nil
}

// refPyCompactOrNil is how the response object wrote a member before it
// kept the trees: the raw text read again by render.PyJSONCompact.
func refPyCompactOrNil(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	return render.PyJSONCompact(raw)
}

// checkToolDumpsMatchRaw compares the answer's tools dump, and the chat
// tools ToChat reads, from the trees with the encoding/json reading of the
// same tools. encoding/json also matched member names in another case
// (which no tool the request validates has where it matters): such
// bodies are skipped.
func checkToolDumpsMatchRaw(t *testing.T, body []byte) {
	r, err := DecodeRequest(body)
	if err != nil || len(r.Tools) == 0 {
		return
	}
	raws := make([]json.RawMessage, len(r.Tools))
	for i, n := range r.Tools {
		for _, k := range n.Keys {
			for _, want := range []string{"type", "name", "parameters", "strict", "description"} {
				if k != want && (strings.EqualFold(k, want) || strings.ContainsAny(k, "ſ\u212a")) {
					return
				}
			}
		}
		raws[i] = n.Raw
	}
	got := responsesToolDumps(r.Tools)
	want, werr := refToolDumps(raws)
	if werr != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s: dumps %s, want %s (%v)", body, got, want, werr)
	}
	if !json.Valid(got) {
		t.Fatalf("%s: invalid dump %s", body, got)
	}
}

var toolDumpSeeds = []string{
	`{"input":"x","tools":[{"type":"function","name":"f","parameters":{ "type" : "object" },"strict":true,"description":"d"}]}`,
	`{"input":"x","tools":[{"type":"function","name":"f"},{"type":"web_search"},{"type":"mcp","server_label":"s"}]}`,
	`{"input":"x","tools":[{"type":"function","name":"f","parameters":null,"strict":null,"description":null}]}`,
	`{"input":"x","tools":[{"type":"function","name":"\u00e9","parameters":{"a":[1,2.50,"\u2028"]}}]}`,
}

func TestToolDumpsMatchRaw(t *testing.T) {
	for _, s := range toolDumpSeeds {
		checkToolDumpsMatchRaw(t, []byte(s))
	}
}

func FuzzToolDumpsMatchRaw(f *testing.F) {
	for _, s := range toolDumpSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkToolDumpsMatchRaw)
}
