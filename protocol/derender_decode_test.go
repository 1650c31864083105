package protocol

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// The derender member readers against json.Unmarshal, the reading they
// replace, over every JSON text the body parser lets through.
var derenderMemberSeeds = []string{
	`{"prev_tokens":["a","b"],"prefix_offset":1,"read_offset":2,"role_sent":true}`,
	`{"vrender_checkpoint":"x"}`, `{"VRENDER_CHECKPOINT":"x","vrender_checkpoint":null}`,
	`{"output_token_ids":[1,2,3],"output_token_ids":[4]}`,
	`{"output_token_ids":[1,2,3],"output_token_ids":[4],"output_token_ids":[5,null,null]}`,
	`{"output_token_ids":[1,2],"output_token_ids":null,"output_token_ids":[null]}`,
	`{"output_token_ids":[]}`, `{"output_chunk_lens":[1.0]}`, `{"prefix_offset":1e2}`,
	`{"prefix_offset":-0}`, `{"prefix_offset":99999999999999999999}`, `{"prefix_offset":"1"}`,
	`{"prev_tokens":[null,"\ud800",1]}`, `{"prev_tokens":"a"}`, `{"role_sent":1}`, `{"role_ſent":true}`,
	`{"Role_Sent":true,"role_sent":false}`, `{"unknown":[{"x":[1,{}]}],"read_offset":3}`,
	`{"skip_special_tokens":false,"skip_special_tokens":true}`,
	`{"skip_special_tokens":true,"skip_special_tokens":null}`, `{"SPACES_between_special_tokens":"no"}`,
	"{\"prev_tokens\":[\"\xff\xfe\"],\"\xffx\":1}", `[1,2,3]`, `[]`, `[1,null]`, `[[1],[],null,[2,3]]`, `[[1,"a"]]`, `{"a":1}`, `"x"`, `7`, `null`, "[1,\n2 ]",
}

func FuzzDerenderMembers(f *testing.F) {
	for _, s := range derenderMemberSeeds {
		f.Add(s)
	}
	f.Fuzz(checkDerenderMembers)
}

func TestDerenderMembersMatchUnmarshal(t *testing.T) {
	for _, s := range derenderMemberSeeds {
		checkDerenderMembers(t, s)
	}
}

func checkDerenderMembers(t *testing.T, in string) {
	raw := []byte(in)
	if _, err := wire.Parse(raw); err != nil {
		return // the body parser rejects it before any member is read
	}
	agree(t, "stream_state", in, decodeStreamState)
	agree(t, "completion_request", in, decodeCompletionParams)
	agree(t, "prompt_tokens", in, decodeIntList)
	agree(t, "prompt_token_ids", in, decodeIntLists)
}

func agree[T any](t *testing.T, what, in string, decode func([]byte) (T, error)) {
	t.Helper()
	got, err := decode([]byte(in))
	var want T
	werr := json.Unmarshal([]byte(in), &want)
	if (err != nil) != (werr != nil) {
		t.Fatalf("%s %q: reader error %v, json.Unmarshal error %v", what, in, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %q:\nreader %#v\njson   %#v", what, in, got, want)
	}
}
