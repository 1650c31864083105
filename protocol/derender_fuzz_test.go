package protocol

import (
	"errors"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// FuzzDecodeDerender feeds arbitrary bodies to the derender decoders: they
// must never panic, and must return exactly one request or a
// *ValidationError.
func FuzzDecodeDerender(f *testing.F) {
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"stream":true}`,
		`{"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[1,2],"finish_reason":"stop"}]},"chat_request":{"messages":[{"role":"user","content":"hi"}]}}`,
		`{"stream":true,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1],"logprobs":{"content":[{"token":"token_id:1","logprob":-1,"top_logprobs":[{"token_id":2,"logprob":-2}]}]}}]},"stream_state":{"prev_tokens":["a"],"prefix_offset":0,"read_offset":1,"output_token_ids":[1],"output_chunk_lens":[1]}}`,
		`{"generate_responses":[{"request_id":"r","choices":[{"index":0,"token_ids":[1]}]}],"prompt_tokens":[3],"prompt_token_ids":[[1,2]],"completion_request":{"skip_special_tokens":false}}`,
		`{"stream":true,"generate_chunk":{"choices":[]},"stream_state":{"output_chunk_lens":[0],"logprob_context_token_ids":[1,2,3,4,5]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(a, b bool, err error) {
			var verr *pylax.ValidationError
			switch {
			case err != nil && !errors.As(err, &verr):
				t.Fatalf("error is %T, not *ValidationError: %v", err, err)
			case err != nil && (a || b):
				t.Fatal("a request and an error")
			case err == nil && a == b:
				t.Fatalf("want exactly one request, got batch %v stream %v", a, b)
			}
			if err != nil {
				_ = verr.Message()
			}
		}
		c, cs, err := DecodeDerenderChat(body)
		check(c != nil, cs != nil, err)
		p, ps, err := DecodeDerenderCompletion(body)
		check(p != nil, ps != nil, err)
	})
}
