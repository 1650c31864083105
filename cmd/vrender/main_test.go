package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
)

// runCLI runs one command line with in-memory streams.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestExitStatuses(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    string // substring
		stderr    string // substring
		stdoutNot string
	}{
		{name: "no command", args: nil, code: 2, stderr: "Usage: vrender <command>"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		{name: "help", args: []string{"help"}, code: 0, stdout: "Commands:"},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: "Commands:"},
		{name: "help serve", args: []string{"help", "serve"}, code: 0, stdout: "Usage: vrender serve [MODEL] [options]"},
		{name: "help tokenize", args: []string{"help", "tokenize"}, code: 0, stdout: "--add-special-tokens"},
		{name: "help detokenize", args: []string{"help", "detokenize"}, code: 0, stdout: "--skip-special-tokens"},
		{name: "help bench", args: []string{"help", "bench"}, code: 0, stdout: "Kinds: tokenize, render, derender, serve"},
		{name: "help unknown", args: []string{"help", "nope"}, code: 2, stderr: `unknown command "nope"`},
		{name: "serve --help", args: []string{"serve", "--help"}, code: 0, stdout: "--served-model-name NAME [NAME ...]"},
		{name: "version", args: []string{"version"}, code: 0, stdout: "vrender "},
		{name: "version extra", args: []string{"version", "x"}, code: 2, stderr: `unexpected argument "x"`},
		{name: "tokenize without model", args: []string{"tokenize"}, code: 2, stderr: "a model is required (--model)\nRun 'vrender tokenize --help' for usage."},
		{name: "tokenize bad flag", args: []string{"tokenize", "--bogus"}, code: 2, stderr: "unknown flag --bogus"},
		{name: "tokenize positional", args: []string{"tokenize", qwen}, code: 2, stderr: "the model goes in --model"},
		{name: "tokenize missing model dir", args: []string{"tokenize", "--model", t.TempDir()}, code: 1, stderr: "vrender tokenize: load model:"},
		{name: "detokenize bad stdin fails before loading", args: []string{"detokenize", "--model", "/nonexistent"}, code: 1, stderr: "want a JSON array of token IDs"},
		{name: "serve two models", args: []string{"serve", "a", "b"}, code: 2, stderr: `unexpected argument "b"`},
		{name: "serve bad port", args: []string{"serve", "--port", "70000", "m"}, code: 2, stderr: "--port 70000 is out of range"},
		{name: "serve missing model", args: []string{"serve"}, code: 2, stderr: "a model is required"},
		{name: "serve gc headroom below -1", args: []string{"serve", "--image-cache-gc-headroom", "-2", "m"}, code: 2,
			stderr: "--image-cache-gc-headroom -2: want bytes, or -1 for Go's own pacing"},
		{name: "serve negative engine mm cache", args: []string{"serve", "--engine", "http://127.0.0.1:1", "--engine-mm-cache-gb", "-1", qwen},
			code: 2, stderr: "--engine-mm-cache-gb must be a finite number greater than or equal to 0, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "not json", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
		})
	}
}

// Expected IDs come from the HF reference binding (tokenizers 0.23.2) on
// the same tokenizer.json files.
func TestTokenize(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	llama := testenv.ModelDir(t, "llama3_1")
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"trailing newline is text", []string{"tokenize", "--model", qwen}, "Hello world!\n", "[9707,1879,4894]\n"},
		{"special tokens in text", []string{"tokenize", "--model=" + qwen}, "<|im_start|>user\nHi<|im_end|>\n", "[151644,872,198,13048,151645,198]\n"},
		{"llama without bos", []string{"tokenize", "--model", llama}, "Hello world!", "[9906,1917,0]\n"},
		{"llama with bos, underscore flag", []string{"tokenize", "--add_special_tokens", "--model", llama}, "Hello world!", "[128000,9906,1917,0]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != 0 || stdout != tt.want {
				t.Errorf("exit %d stdout %q, want 0 %q; stderr %s", code, stdout, tt.want, stderr)
			}
		})
	}
}

func TestTokenizeJSONL(t *testing.T) {
	llama := testenv.ModelDir(t, "llama3_1")
	stdin := strings.Join([]string{
		`{"text":"Hello world!"}`,
		`{"prompt":"Hello world!","add_special_tokens":true}`,
		``,
		`not json`,
		`{"text":"a","prompt":"b"}`,
		`{"other":1}`,
		`{"text":5}`,
		"{\"text\":\"\"}\r",
		`{"text":"Hello world!","id":7}`, // no trailing newline
	}, "\n")
	code, stdout, stderr := runCLI(t, stdin, "tokenize", "--jsonl", "--model", llama)
	want := strings.Join([]string{
		`{"tokens":[9906,1917,0]}`,
		`{"tokens":[128000,9906,1917,0]}`,
		`{"error":"empty line"}`,
		`{"error":"invalid JSON: invalid character 'o' in literal null (expecting 'u')"}`,
		`{"error":"give \"text\" or \"prompt\", not both"}`,
		`{"error":"want an object with a string \"text\" or \"prompt\""}`,
		`{"error":"invalid JSON: json: cannot unmarshal number into Go struct field tokenizeRequestLine.text of type string"}`,
		`{"tokens":[]}`,
		`{"tokens":[9906,1917,0]}`,
	}, "\n") + "\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if code != 1 || !strings.Contains(stderr, "5 of 9 lines failed") {
		t.Errorf("exit %d stderr %q, want 1 and a failure count", code, stderr)
	}

	code, stdout, _ = runCLI(t, "{\"text\":\"Hello world!\"}\n", "tokenize", "--jsonl", "--model", llama, "--add-special-tokens")
	if code != 0 || stdout != "{\"tokens\":[128000,9906,1917,0]}\n" {
		t.Errorf("all lines fine: exit %d stdout %q", code, stdout)
	}
}

func TestDetokenize(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	llama := testenv.ModelDir(t, "llama3_1")
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
		stderr string
	}{
		{"skips special tokens by default", []string{"detokenize", "--model", qwen}, "[151644,872,198,13048,151645]", 0, "user\nHi", ""},
		{"keeps them when asked", []string{"detokenize", "--no-skip-special-tokens", "--model", qwen}, " [151644,872,198,13048,151645] \n", 0, "<|im_start|>user\nHi<|im_end|>", ""},
		{"out of vocabulary", []string{"detokenize", "--model", qwen}, "[1,151669,200000]", 1, "", "vrender detokenize: Token id 200000 is out of vocabulary\n"},
		{"not ints", []string{"detokenize", "--model", qwen}, "[1.5]", 1, "", "want a JSON array of token IDs"},
		{"llama clean-up", []string{"detokenize", "--model", llama}, "[128000,9906,1174,1917,662,4536,956,433,949]", 0, "Hello, world. isn't it?", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code || stdout != tt.stdout || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d stdout %q stderr %q; want %d %q %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestDetokenizeJSONL(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	stdin := strings.Join([]string{
		`{"tokens":[9707,1879,0,151645]}`,
		`{"tokens":[9707,151645],"skip_special_tokens":false}`,
		`{"tokens":[]}`,
		`{"tokens":[999999]}`,
		`{"tokens":[-1]}`,
		`{"prompt":"x"}`,
		`[1,2]`,
	}, "\n") + "\n"
	code, stdout, stderr := runCLI(t, stdin, "detokenize", "--jsonl", "--model", qwen)
	want := strings.Join([]string{
		`{"prompt":"Hello world!"}`,
		`{"prompt":"Hello<|im_end|>"}`,
		`{"prompt":""}`,
		`{"error":"Token id 999999 is out of vocabulary"}`,
		`{"error":"Token id -1 is out of vocabulary"}`,
		`{"error":"want an object with a list \"tokens\""}`,
		`{"error":"invalid JSON: json: cannot unmarshal array into Go value of type main.detokenizeRequestLine"}`,
	}, "\n") + "\n"
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if code != 1 || !strings.Contains(stderr, "4 of 7 lines failed") {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
}

// JSONL output is flushed line by line when input pauses, so the command
// can be driven as a co-process.
func TestJSONLFlushesPerLine(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"tokenize", "--jsonl", "--model", qwen}, inR, outW, io.Discard)
		outW.Close()
	}()
	lines := make(chan string)
	go func() {
		buf := make([]byte, 4096)
		var acc []byte
		for {
			n, err := outR.Read(buf)
			acc = append(acc, buf[:n]...)
			for {
				i := bytes.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				lines <- string(acc[:i])
				acc = acc[i+1:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	for _, in := range []string{`{"text":"Hello"}`, `{"text":"world!"}`} {
		io.WriteString(inW, in+"\n")
		select {
		case got := <-lines:
			if !strings.HasPrefix(got, `{"tokens":[`) {
				t.Fatalf("answer %q", got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer to %s while stdin stays open", in)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

// syncBuffer is a bytes.Buffer safe for the server goroutine to write while
// the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestServe(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	// vLLM style: flags first, names space-separated, MODEL last after "--".
	addr, logs, stop := startServe(t, "--host", "127.0.0.1", "--port", "0", "--served_model_name", "qwen", "alias", "--max-model-len", "4k", "--", qwen)

	resp, err := http.Get("http://" + addr + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			Root        string `json:"root"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 2 || list.Data[0].ID != "qwen" || list.Data[1].ID != "alias" || list.Data[0].Root != qwen || list.Data[0].MaxModelLen != 4000 {
		t.Errorf("/v1/models = %+v", list.Data)
	}
	resp, err = http.Post("http://"+addr+"/tokenize", "application/json", strings.NewReader(`{"model":"alias","prompt":"Hello world!"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != `{"count":3,"max_model_len":4000,"tokens":[9707,1879,0],"token_strs":null}` {
		t.Errorf("/tokenize = %s", body)
	}

	stop()
	if !strings.Contains(logs.String(), "shutting down") {
		t.Errorf("no shutdown log:\n%s", logs)
	}
}
