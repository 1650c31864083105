package parity

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStatusError(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		body        string
		unsupported bool
		refused     bool
		msg         string
	}{
		{name: "missing route", status: 404, body: `{"detail":"Not Found"}`, unsupported: true},
		{name: "method not allowed", status: 405, body: `{"detail":"Method Not Allowed"}`, unsupported: true},
		{name: "unknown model is vLLM's 404", status: 404, body: `{"error":{"message":"The model x does not exist.","type":"NotFoundError","code":404}}`,
			msg: "HTTP 404: The model x does not exist."},
		{name: "refusal", status: 400, body: `{"error":{"message":"bad tool_choice","type":"BadRequestError","code":400}}`,
			refused: true, msg: "HTTP 400: bad tool_choice"},
		{name: "auth", status: 401, body: `{"error":"Unauthorized"}`, msg: "HTTP 401: Unauthorized"},
		{name: "plain body", status: 502, body: "upstream down", msg: "HTTP 502: upstream down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := statusError(tt.status, []byte(tt.body))
			if got := errors.Is(err, ErrUnsupported); got != tt.unsupported {
				t.Fatalf("unsupported = %v for %v", got, err)
			}
			if Refused(err) != tt.refused {
				t.Errorf("Refused = %v", !tt.refused)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("error %q, want %q", err, tt.msg)
			}
		})
	}
}

func TestChatStreamErrors(t *testing.T) {
	tests := []struct {
		name, body, err string
	}{
		{name: "no done", body: "data: {\"choices\":[{\"index\":0,\"delta\":{},\"token_ids\":[1]}]}\n\n", err: "without [DONE]"},
		{name: "no token ids", body: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n", err: "no token_ids"},
		{name: "error event", body: "data: {\"error\":{\"message\":\"boom\"}}\n\n", err: "error event"},
		{name: "bad chunk", body: "data: {nope\n\n", err: "decode chunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer k" {
					w.WriteHeader(401)
					return
				}
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			c := &Client{BaseURL: srv.URL + "/", APIKey: "k"}
			_, err := c.ChatStream(t.Context(), []byte(`{}`))
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err %v, want %q", err, tt.err)
			}
		})
	}
}

func TestChatStreamAccumulates(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"prompt_token_ids\":[5,6]}\n\n"+
			": keep-alive comment\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"r\"},\"token_ids\":[1,2]}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"token_ids\":[3]}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"c\"},\"finish_reason\":\"stop\",\"token_ids\":[4]}]}\n\n"+
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2}}\n\n"+
			"data: [DONE]\n\n")
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL}
	comp, err := c.ChatStream(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(comp.Chunks) != "[[1 2] [3] [4]]" || fmt.Sprint(comp.PromptTokenIDs) != "[5 6]" {
		t.Errorf("chunks %v prompt %v", comp.Chunks, comp.PromptTokenIDs)
	}
	want := Answer{Content: sp("c"), Reasoning: sp("r"), FinishReason: "stop"}
	if d := compareAnswers(want, comp.Answer, false); len(d) > 0 {
		t.Errorf("answer: %v", d)
	}
}
