package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Whatever GenerateDecoder.Fast reads, json.Unmarshal reads the same —
// unexported fields included (finishSet decides a batch derender's
// default finish_reason). The engine package fuzzes the same equivalence
// on exported fields over engine event shapes.
func TestGenerateDecoderMatchesUnmarshal(t *testing.T) {
	for _, in := range generateSeeds {
		checkGenerateDecoder(t, in)
	}
}

var generateSeeds = []string{
	`{"request_id":"r","choices":[{"index":0,"token_ids":[5],"finish_reason":null}]}`,
	`{"request_id":"r","choices":[{"index":0,"token_ids":[5]}]}`,
	`{"request_id":"r","choices":[{"index":0,"token_ids":[5,6],"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
	`{"choices":[{"token_ids":[],"logprobs":{"content":[{"token":"a","token_id":5,"logprob":-0.5,"top_logprobs":[{"token_id":5,"logprob":-0.5}]}]}}]}`,
	`{"request_id":null,"choices":null,"prompt_token_ids":[1,2],"kv_transfer_params":{"a":1}}`,
	`{"choices":[{"Finish_Reason":"stop"}]}`, `{"choices":[{"finish_reason":"stop","finish_reason":null}]}`, `[]`, `{`,
}

func FuzzGenerateDecoder(f *testing.F) {
	for _, s := range generateSeeds {
		f.Add(s)
	}
	f.Fuzz(checkGenerateDecoder)
}

func checkGenerateDecoder(t *testing.T, in string) {
	var d GenerateDecoder
	var fast GenerateResponse
	if d.Fast([]byte(in), &fast) != nil {
		return
	}
	var want GenerateResponse
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatalf("%q: fast path read what json.Unmarshal rejects (%v)", in, err)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("%q:\nfast %+v\njson %+v", in, fast, want)
	}
	// The members Fast saw are the body's, as generateRaw takes them.
	root := objectNode([]byte(in))
	for _, m := range []struct {
		name string
		bit  int
	}{{"choices", seenChoices}, {"request_id", seenRequestID}} {
		if _, ok := root.Get(m.name); ok != (d.seen&m.bit != 0) {
			t.Fatalf("%q: member %s present %v, Fast saw it %v", in, m.name, ok, d.seen&m.bit != 0)
		}
	}
}
