package enginesim

import (
	"strings"
	"testing"
)

// --max-logprobs as vLLM's input processor applies it.
func TestGenerateMaxLogprobs(t *testing.T) {
	tests := []struct {
		name        string
		maxLogprobs int
		params      string
		wantStatus  int
		want        string
	}{
		{"within the default", 0, `"logprobs":20`, 200, `"finish_reason"`},
		{"past the default", 0, `"logprobs":21`, 400,
			`{"error":{"message":"Requested sample logprobs of 21, which is greater than max allowed: 20 (parameter=logprobs, value=21)","type":"BadRequestError","param":"logprobs","code":400}}`},
		{"whole vocabulary past the default", 0, `"logprobs":-1`, 400, `which is greater than max allowed: 20 (parameter=logprobs`},
		{"prompt logprobs past the limit", 5, `"prompt_logprobs":6`, 400, `"param":"prompt_logprobs"`},
		{"no limit", -1, `"logprobs":-1`, 200, `"finish_reason"`},
		{"zero asks for none", 1, `"logprobs":0`, 200, `"finish_reason"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newServer(t, Config{MaxLogprobs: tc.maxLogprobs})
			body := `{"token_ids":[1],"sampling_params":{"max_tokens":1,` + tc.params + `}}`
			status, _, got := post(t, srv.URL+"/inference/v1/generate", body)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, got)
			}
			if strings.HasPrefix(tc.want, "{") && got != tc.want {
				t.Fatalf("body\n got %s\nwant %s", got, tc.want)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("body %s\nlacks %s", got, tc.want)
			}
		})
	}
}
