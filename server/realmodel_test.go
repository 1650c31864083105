package server

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
)

func realServer(t testing.TB, m *model.Model) http.Handler {
	t.Helper()
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Expected IDs come from the HF reference binding (tokenizers 0.23.2, see
// tools/reftok) on the same tokenizer.json files.
func TestRealModelQwen3(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	h := realServer(t, m)
	maxLen := strconv.Itoa(m.MaxModelLen)
	cases := []httpCase{
		{name: "ascii", method: "POST", path: "/tokenize", body: `{"prompt":"Hello world!","return_token_strs":true}`,
			wantStatus: 200, wantBody: `{"count":3,"max_model_len":` + maxLen + `,"tokens":[9707,1879,0],"token_strs":["Hello","Ġworld","!"]}`},
		{name: "digits", method: "POST", path: "/tokenize", body: `{"prompt":"What is 2+2?","model":"m"}`,
			wantStatus: 200, wantBody: `{"count":7,"max_model_len":` + maxLen + `,"tokens":[3838,374,220,17,10,17,30],"token_strs":null}`},
		{name: "non-ascii", method: "POST", path: "/tokenize", body: `{"prompt":"héllo wörld 你好","add_special_tokens":false}`,
			wantStatus: 200, wantBody: `{"count":8,"max_model_len":` + maxLen + `,"tokens":[71,18503,385,289,9416,507,220,108386],"token_strs":null}`},
		{name: "special tokens in text", method: "POST", path: "/tokenize", body: `{"prompt":"<|im_start|>user\nHi<|im_end|>\n","return_token_strs":true}`,
			wantStatus: 200, wantBody: `{"count":6,"max_model_len":` + maxLen + `,"tokens":[151644,872,198,13048,151645,198],"token_strs":["<|im_start|>","user","Ċ","Hi","<|im_end|>","Ċ"]}`},
		{name: "detokenize keeps special tokens", method: "POST", path: "/detokenize", body: `{"tokens":[151644,872,198,13048,151645]}`,
			wantStatus: 200, wantBody: `{"prompt":"<|im_start|>user\nHi<|im_end|>"}`},
		{name: "detokenize past the vocabulary", method: "POST", path: "/detokenize", body: `{"tokens":[151669]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"Token id 151669 is out of vocabulary","type":"BadRequestError","param":null,"code":400}}`},
		{name: "detokenize last id", method: "POST", path: "/detokenize", body: `{"tokens":[151668]}`,
			wantStatus: 200, wantBody: `{"prompt":"</think>"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// Llama 3.1 adds <|begin_of_text|> by default and asks transformers to
// clean up spaces before punctuation when decoding.
func TestRealModelLlama31(t *testing.T) {
	m := testmodel.Load(t, "llama3_1")
	h := realServer(t, m)
	maxLen := strconv.Itoa(m.MaxModelLen)
	cases := []httpCase{
		{name: "adds bos by default", method: "POST", path: "/tokenize", body: `{"prompt":"Hello world!"}`,
			wantStatus: 200, wantBody: `{"count":4,"max_model_len":` + maxLen + `,"tokens":[128000,9906,1917,0],"token_strs":null}`},
		{name: "without special tokens", method: "POST", path: "/tokenize", body: `{"prompt":"Hello world!","add_special_tokens":false}`,
			wantStatus: 200, wantBody: `{"count":3,"max_model_len":` + maxLen + `,"tokens":[9906,1917,0],"token_strs":null}`},
		{name: "detokenize cleans up spaces", method: "POST", path: "/detokenize", body: `{"tokens":[128000,9906,1174,1917,662,4536,956,433,949]}`,
			wantStatus: 200, wantBody: `{"prompt":"<|begin_of_text|>Hello, world. isn't it?"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}
