package engine

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// decodeSeeds are engine answers of every shape the decoders meet, and
// inputs either fast path declines.
var decodeSeeds = []string{
	eventOneToken, eventFinish, eventUsage, eventLogprobs, eventOldLogps, eventEcho,
	`{"error":{"message":"x","code":500}}`, `{"error":"Unauthorized"}`, `{"error":[1]}`,
	`{"choices":[{"token_ids":[1,-2,0]}]}`, `{"Usage":{}}`, `{"a":[[[]]]}`,
	`{"request_id":"a\nb\u00e9\ud83d\ude00\ud800"}`, "{\"request_id\":\"a\xffb\"}", `{"request\u005fid":"x"}`,
	`{"choices":[{"logprobs":{"content":[{"token":"\u0041","logprob":-1}]}}]}`,
	`{"choices":[{"logprobs":{"content":[{"logprob":1e400}]}}]}`, `{"choices":[{"token_ids":[1.0]}]}`,
	`{"choices":[{"token_ids":[9223372036854775808]}]}`, `{"choices":[{"index":01}]}`, `{"choices":[null]}`,
	`null`, `[1]`, `{"request_id":`, `not json`, `{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`,
	`{"x":1e}`, `{"x":"\q"}`, "{\"x\":\"\x01\"}", `{"x":[1,]}`, `{"x":{"a" 1}}`, `{} x`,
	`{"prompt_logprobs":[null,{"1":{"logprob":-1}}],"kv_transfer_params":null,"metrics":{"ttft":0.01}}`,
}

// checkDecodeMatchesRef fails unless the wire-based decoder gives the
// reference scanner's answer: the same response, or the same error.
func checkDecodeMatchesRef(t *testing.T, in []byte) {
	t.Helper()
	var d eventDecoder
	var ref refEventDecoder
	got, err := d.decode(in)
	want, wantErr := ref.decode(in)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: err %v, reference %v", in, err, wantErr)
	}
	if err != nil {
		var e, we *Error
		if !errors.As(err, &e) || !errors.As(wantErr, &we) || e.Status != we.Status || e.Type != we.Type ||
			e.Message != we.Message || e.EngineStatus != we.EngineStatus {
			t.Fatalf("%q: err %#v, reference %#v", in, err, wantErr)
		}
		return
	}
	if g, w := marshalForCompare(t, got), marshalForCompare(t, want); g != w {
		t.Fatalf("%q:\n got %s\nwant %s", in, g, w)
	}
}

func TestDecodeMatchesRef(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecodeMatchesRef(t, []byte(s))
	}
	checkDecodeMatchesRef(t, []byte(nonStreamingAnswer(4096)))
	deep := `{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `,"request_id":"r"}`
	checkDecodeMatchesRef(t, []byte(deep))
}

// FuzzDecodeMatchesRef: the wire-based decoder and the scanner it
// replaced give the same response or the same error for any input.
func FuzzDecodeMatchesRef(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkDecodeMatchesRef(t, []byte(in)) })
}

// nonStreamingAnswer is a non-streaming generate answer with n output
// tokens, as vLLM's tokens-only engine writes it.
func nonStreamingAnswer(n int) string {
	var b strings.Builder
	b.WriteString(`{"request_id":"generate-tokens-chatcmpl-8c1d","choices":[{"index":0,"logprobs":null,"finish_reason":"length","token_ids":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(1000 + (i*7919)%150000))
	}
	b.WriteString(`],"weight_versions":null,"routed_experts":null}],"prompt_logprobs":null,"prompt_token_ids":null,"kv_transfer_params":null}`)
	return b.String()
}

// BenchmarkDecodeRef compares, in one run, the wire-based decoder with
// the scanner it replaced and with encoding/json (the path non-streaming
// answers took before), on a one-token stream event and on a 4k-token
// non-streaming answer.
func BenchmarkDecodeRef(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"one-token", eventOneToken},
		{"logprobs", eventLogprobs},
		{"answer-4k", nonStreamingAnswer(4096)},
	} {
		data := []byte(bc.in)
		b.Run(bc.name+"/wire", func(b *testing.B) {
			var d eventDecoder
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/ref-scanner", func(b *testing.B) {
			var d refEventDecoder
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeSlow(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
