package protocol

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"testing"
)

// mapRequestCache is an unbounded ChatRequestCache for tests.
type mapRequestCache map[[sha256.Size]byte]*ChatCompletionRequest

func (c mapRequestCache) Get(k [sha256.Size]byte) (*ChatCompletionRequest, bool) {
	r, ok := c[k]
	return r, ok
}
func (c mapRequestCache) Add(k [sha256.Size]byte, r *ChatCompletionRequest) { c[k] = r }

// FuzzDecodeDerenderChatCached is the decoder the server's chat derender
// endpoint uses (the tree of a body ParseJSONTree accepted): a miss, a hit
// and the uncached decode of the bytes must give the same request or the
// same error, so neither the cache nor the tree changes an answer.
func FuzzDecodeDerenderChatCached(f *testing.F) {
	chat := `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"auto"}`
	for _, s := range []string{
		``, `null`, `{}`, `{"stream":true}`,
		`{"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[1,2],"finish_reason":"stop"}]},"chat_request":` + chat + `}`,
		`{"stream":true,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]}]},"chat_request":` + chat + `,"stream_state":{"vrender_checkpoint":"AQ.AAAA"}}`,
		`{"stream":true,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]}]},"chat_request":{"messages":"x"},"prompt_token_ids":[1]}`,
		`{"generate_response":{"choices":[]},"chat_request":{"messages":[],"n":2,"logprobs":true,"top_logprobs":30}}`,
		`{"generate_response":{"choices":[]},"chat_request":{"messages":[{"role":"user","content":"\ud800"}],"stream":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		cache := mapRequestCache{}
		text, root, err := ParseJSONTree(body)
		if err != nil {
			return // the server answers the syntax error; nothing is decoded
		}
		want := decodeOutcome(DecodeDerenderChat(text))
		miss := decodeOutcome(DecodeDerenderChatTree(text, root, cache))
		hit := decodeOutcome(DecodeDerenderChatTree(text, root, cache))
		if !reflect.DeepEqual(miss, want) {
			t.Fatalf("%q: cache miss %s\n     uncached %s", body, miss, want)
		}
		if !reflect.DeepEqual(hit, want) {
			t.Fatalf("%q: cache hit %s\n    uncached %s", body, hit, want)
		}
	})
}

// decodeOutcome is a decode result made comparable: the error text, or
// the request with its generated request_id (random when the body has
// none) blanked.
type outcome struct {
	err    string
	batch  *DerenderChatRequest
	stream *DerenderChatStreamRequest
}

func decodeOutcome(b *DerenderChatRequest, s *DerenderChatStreamRequest, err error) outcome {
	if err != nil {
		return outcome{err: err.Error()}
	}
	if b != nil {
		b.GenerateResponse.RequestID = ""
	}
	if s != nil {
		s.GenerateChunk.RequestID = ""
	}
	return outcome{batch: b, stream: s}
}

func (o outcome) String() string {
	switch {
	case o.err != "":
		return "error: " + o.err
	case o.batch != nil:
		return fmt.Sprintf("batch %+v chat %+v", *o.batch, *o.batch.ChatRequest)
	default:
		return fmt.Sprintf("stream %+v chat %+v", *o.stream, *o.stream.ChatRequest)
	}
}
