package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

func TestDecodeGenerateRequest(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string // substring of the validation message; "" means success
		check   func(t *testing.T, r *GenerateRequest, info GenerateRequestInfo)
	}{
		{name: "minimal", body: `{"token_ids":[1,2],"sampling_params":{}}`,
			check: func(t *testing.T, r *GenerateRequest, info GenerateRequestInfo) {
				if len(r.RequestID) != 32 || r.OutputMode != "tokens" || info.MaxTokensSet || *r.SamplingParams.MaxTokens != 16 {
					t.Fatalf("%+v %+v", r, info)
				}
			}},
		{name: "lax types and explicit max_tokens", body: `{"request_id":"x","token_ids":["1",2.0],"sampling_params":{"max_tokens":"16","n":2,"seed":3,"stop_token_ids":[7],"logprobs":1,"logit_bias":{"5":1.5}},"stream":1}`,
			check: func(t *testing.T, r *GenerateRequest, info GenerateRequestInfo) {
				p := r.SamplingParams
				if r.TokenIDs[0] != 1 || r.TokenIDs[1] != 2 || !info.MaxTokensSet || *p.MaxTokens != 16 || p.N != 2 || *p.Seed != 3 ||
					p.StopTokenIDs[0] != 7 || *p.Logprobs != 1 || p.LogitBias[0].TokenID != 5 || !*r.Stream {
					t.Fatalf("%+v", r)
				}
			}},
		{name: "kv_transfer_params kept raw", body: `{"token_ids":[1],"sampling_params":{},"kv_transfer_params":{"do_remote_decode":true}}`,
			check: func(t *testing.T, r *GenerateRequest, _ GenerateRequestInfo) {
				if string(r.KVTransferParams) != `{"do_remote_decode":true}` {
					t.Fatalf("%s", r.KVTransferParams)
				}
			}},
		{name: "missing both", body: `{}`, wantErr: "2 validation errors:"},
		{name: "too short", body: `{"token_ids":[],"sampling_params":{}}`, wantErr: "too_short"},
		{name: "negative", body: `{"token_ids":[-1],"sampling_params":{}}`, wantErr: "token_ids must not contain negative values"},
		{name: "sampling not an object", body: `{"token_ids":[1],"sampling_params":3}`, wantErr: "dataclass_type"},
		{name: "post_init error", body: `{"token_ids":[1],"sampling_params":{"n":0}}`, wantErr: "Value error, n must be at least 1, got 0."},
		{name: "greedy n", body: `{"token_ids":[1],"sampling_params":{"n":2,"temperature":0}}`, wantErr: "n must be 1 when using greedy sampling"},
		{name: "empty cache_salt", body: `{"token_ids":[1],"sampling_params":{},"cache_salt":""}`, wantErr: "cache_salt"},
		{name: "exclusive multimodal", body: `{"token_ids":[1],"sampling_params":{},"content_parts":[{"type":"image_url"}],"features":{"a":1}}`,
			wantErr: "content_parts and features are mutually exclusive"},
		{name: "bad stream_options", body: `{"token_ids":[1],"sampling_params":{},"stream_options":[]}`, wantErr: "StreamOptions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, info, err := DecodeGenerateRequest([]byte(tc.body))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				tc.check(t, r, info)
				return
			}
			var ve *pylax.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(ve.Message(), tc.wantErr) {
				t.Fatalf("error %v, want a validation error containing %q", err, tc.wantErr)
			}
		})
	}
}

func FuzzDecodeGenerateRequest(f *testing.F) {
	for _, seed := range []string{
		`{"token_ids":[1,2],"sampling_params":{}}`,
		`{"token_ids":[1],"sampling_params":{"n":2,"stop":["x"],"logit_bias":{"1":2}},"stream":true,"stream_options":{"include_usage":true}}`,
		`{"token_ids":[1],"sampling_params":{"structured_outputs":{"json":{"type":"object"}}},"reasoning_parser_kwargs":{"chat_template_kwargs":{}}}`,
		`{"token_ids":[[1]],"sampling_params":null,"token_offsets":[[0,1],[1]]}`,
		`[]`, `null`, `{"token_ids":"1"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := ParseJSONBody(data)
		if err != nil {
			return
		}
		r, _, err := DecodeGenerateRequest(body)
		if err != nil {
			var ve *pylax.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("non-validation error %T: %v", err, err)
			}
			_ = ve.Message()
			_ = ve.Param()
			return
		}
		if len(r.TokenIDs) == 0 || r.SamplingParams.N < 1 {
			t.Fatalf("accepted an invalid request: %+v", r)
		}
		for _, id := range r.TokenIDs {
			if id < 0 {
				t.Fatalf("accepted a negative token id")
			}
		}
		if _, err := r.MarshalJSON(); err != nil {
			t.Fatalf("decoded request does not marshal: %v", err)
		}
	})
}
