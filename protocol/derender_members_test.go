package protocol

import (
	"errors"

	"github.com/vrender/vrender/internal/wire"

	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

var membersSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`,
	`{"stream":true,"model":"m","chat_request":{"messages":[{"role":"user","content":"hé \u00e9 \"q\" \\ \/"}],"tools":[]},` +
		`"stream_state":{"prev_tokens":["a","\u0120b"],"prefix_offset":0,"read_offset":2,"role_sent":true,"vrender_checkpoint":"AbC-_.xyz"},` +
		`"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1,2,3],"finish_reason":null,"logprobs":null}]}}`,
	`{"n":-0.5e+10,"m":[1.0,-0,0e1,1E-2],"o":{"p":[[],{}]},"q":[true,false,null]}`,
	`{"a\u0062":1}`, `{"é":1}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":"\x"}`, `{"a":"\u12"}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":1}x`, `[1]`, `null`, ``, `{"a":tru}`, `{"a":[1,]}`, `{"a":{"b"}}`,
	"{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", `{"a":"b` + "\n" + `"}`,
}

// checkMembers fails when objectNode's members disagree with json.Unmarshal
// into a member map: the decoder the derender path used before
// internal/wire (a fast splitter that fell back to it whenever unsure) and
// so the reference.
func checkMembers(t *testing.T, data []byte) {
	t.Helper()
	root := objectNode(data)
	ok := root != nil
	got := map[string][]byte{}
	if ok {
		for i, k := range root.Keys {
			got[k] = root.Vals[i].Raw
		}
	}
	var want map[string]json.RawMessage
	err := json.Unmarshal(data, &want)
	if !ok && err == nil {
		// JSON null (a nil map, no error), or nesting past CPython's limit,
		// which no body that passed ParseJSONBody has.
		if _, perr := wire.Parse(data); want == nil || errors.Is(perr, wire.ErrTooDeep) {
			return
		}
	}
	if ok != (err == nil) {
		t.Fatalf("%q: wireMembers ok = %v, encoding/json err = %v", data, ok, err)
	}
	if !ok {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%q: %d members, encoding/json %d", data, len(got), len(want))
	}
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Fatalf("%q: member %q = %q, encoding/json %q", data, k, got[k], v)
		}
	}
}

func TestFastMembers(t *testing.T) {
	for _, s := range membersSeeds {
		checkMembers(t, []byte(s))
	}
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, membersSeeds[4], membersSeeds[5]} {
		if objectNode([]byte(s)) == nil {
			t.Errorf("wireMembers declined the plain body %q", s)
		}
	}
	// Random byte edits of the seeds: wireMembers accepts what
	// encoding/json accepts, with the same members.
	rng := rand.New(rand.NewPCG(4, 2))
	alphabet := []byte(`{}[]",:\\ 0123456789-+.eEtrufalsn` + "\x00\x1f\x7f\xc3\xa9")
	for range 20000 {
		b := []byte(membersSeeds[rng.IntN(len(membersSeeds))])
		for range 1 + rng.IntN(3) {
			if len(b) == 0 {
				break
			}
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			}
		}
		checkMembers(t, b)
	}
}

func FuzzWireMembers(f *testing.F) {
	for _, s := range membersSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkMembers(t, data) })
}
