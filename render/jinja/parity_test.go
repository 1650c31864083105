package jinja

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
)

// specialTokens are the bos/eos a template's model uses, as listed in
// /work/shared/templates/SOURCES.md; a nil bos is not passed at all (the
// tokenizer has none, so transformers does not pass it).
type specialTokens struct {
	bos *string
	eos string
}

func sp(s string) *string { return &s }

var templateTokens = map[string]specialTokens{
	"command-r-plus-tool-use.jinja":     {sp("<BOS_TOKEN>"), "<|END_OF_TURN_TOKEN|>"},
	"command-r7b-tool-use.jinja":        {sp("<BOS_TOKEN>"), "<|END_OF_TURN_TOKEN|>"},
	"deepseek-r1-0528-tools-vllm.jinja": {sp("<｜begin▁of▁sentence｜>"), "<｜end▁of▁sentence｜>"},
	"deepseek-r1-distill.jinja":         {sp("<｜begin▁of▁sentence｜>"), "<｜end▁of▁sentence｜>"},
	"deepseek-v3.jinja":                 {sp("<｜begin▁of▁sentence｜>"), "<｜end▁of▁sentence｜>"},
	"deepseek-v3.1.jinja":               {sp("<｜begin▁of▁sentence｜>"), "<｜end▁of▁sentence｜>"},
	"gemma-2.jinja":                     {sp("<bos>"), "<eos>"},
	"gemma-3.jinja":                     {sp("<bos>"), "<end_of_turn>"},
	"gemma-4.jinja":                     {sp("<bos>"), "<eos>"},
	"glm-4.6.jinja":                     {nil, "<|endoftext|>"},
	"gpt-oss.jinja":                     {sp("<|startoftext|>"), "<|return|>"},
	"granite-3.3.jinja":                 {sp("<|end_of_text|>"), "<|end_of_text|>"},
	"granite-4.0.jinja":                 {sp("<|end_of_text|>"), "<|end_of_text|>"},
	"hermes-3-tool-use.jinja":           {sp("<|begin_of_text|>"), "<|im_end|>"},
	"hunyuan-a13b-vllm.jinja":           {sp("<|startoftext|>"), "<|eos|>"},
	"internlm2.5-tool-vllm.jinja":       {sp("<s>"), "</s>"},
	"kimi-k2.jinja":                     {sp("[BOS]"), "[EOS]"},
	"llama-3.jinja":                     {sp("<|begin_of_text|>"), "<|eot_id|>"},
	"llama-3.1.jinja":                   {sp("<|begin_of_text|>"), "<|eot_id|>"},
	"llama-3.2.jinja":                   {sp("<|begin_of_text|>"), "<|eot_id|>"},
	"llama-4.jinja":                     {sp("<|begin_of_text|>"), "<|eot|>"},
	"llama-4-pythonic-vllm.jinja":       {sp("<|begin_of_text|>"), "<|eot|>"},
	"minimax-m2.jinja":                  {sp("]~!b["), "[e~["},
	"ministral-3-reasoning.jinja":       {sp("<s>"), "</s>"},
	"mistral-nemo.jinja":                {sp("<s>"), "</s>"},
	"mistral-small-3.2.jinja":           {sp("<s>"), "</s>"},
	"mistral-v3-tools-vllm.jinja":       {sp("<s>"), "</s>"},
	"nemotron-nano-v2.jinja":            {sp("<SPECIAL_10>"), "<SPECIAL_11>"},
	"olmo-2.jinja":                      {sp("<|endoftext|>"), "<|endoftext|>"},
	"phi-3.5-mini.jinja":                {sp("<s>"), "<|endoftext|>"},
	"phi-4.jinja":                       {sp("<|endoftext|>"), "<|im_end|>"},
	"phi-4-mini.jinja":                  {sp("<|endoftext|>"), "<|endoftext|>"},
	"qwen2.5-instruct.jinja":            {nil, "<|im_end|>"},
	"qwen3.jinja":                       {nil, "<|im_end|>"},
	"qwen3-coder.jinja":                 {nil, "<|im_end|>"},
	"qwen3-rev.jinja":                   {nil, "<|im_end|>"},
	"qwen3.5.jinja":                     {nil, "<|im_end|>"},
	"qwq-32b.jinja":                     {nil, "<|im_end|>"},
	"seed-oss.jinja":                    {sp("<seed:bos>"), "<seed:eos>"},
	"smollm3.jinja":                     {nil, "<|im_end|>"},
}

// parityClock is the fixed time strftime_now sees on both sides.
var parityClock = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

type parityTemplate struct {
	name   string
	source string
	tokens specialTokens
}

type refRequest struct {
	Template string          `json:"template"`
	Context  json.RawMessage `json:"context"`
	Now      string          `json:"now"`
}

type refResponse struct {
	OK        bool   `json:"ok"`
	Output    string `json:"output"`
	ErrorType string `json:"error_type"`
	Message   string `json:"message"`
}

// refRenderer drives tools/refrender/render.py over pipes.
type refRenderer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startRefRenderer(t *testing.T) *refRenderer {
	t.Helper()
	py := testenv.Python3(t)
	if err := exec.Command(py, "-c", "import jinja2, sys; sys.exit(0 if jinja2.__version__.startswith('3.1.') else 1)").Run(); err != nil {
		msg := "python3 with Jinja2 3.1 is required for the reference renderer (pip install Jinja2==3.1.6)"
		if testenv.InCI() {
			t.Fatal(msg)
		}
		t.Skip("\n*** MISSING TEST FIXTURE: " + msg)
	}
	script := filepath.Join(testenv.RepoRoot(t), "tools", "refrender", "render.py")
	cmd := exec.Command(py, script)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start reference renderer: %v", err)
	}
	rr := &refRenderer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	return rr
}

func (rr *refRenderer) render(req refRequest) (refResponse, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return refResponse{}, err
	}
	if _, err := rr.in.Write(append(line, '\n')); err != nil {
		return refResponse{}, fmt.Errorf("write to reference renderer: %w", err)
	}
	respLine, err := rr.out.ReadBytes('\n')
	if err != nil {
		return refResponse{}, fmt.Errorf("read from reference renderer: %w", err)
	}
	var resp refResponse
	if err := json.Unmarshal(respLine, &resp); err != nil {
		return refResponse{}, fmt.Errorf("decode reference response: %w", err)
	}
	return resp, nil
}

func loadParityTemplates(t *testing.T) []parityTemplate {
	t.Helper()
	dir := filepath.Join(testenv.SharedDir(t), "templates")
	files, err := filepath.Glob(filepath.Join(dir, "*.jinja"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates in %s: %v", dir, err)
	}
	var out []parityTemplate
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		tok, ok := templateTokens[name]
		if !ok {
			t.Fatalf("%s: no bos/eos listed for it; add it from SOURCES.md", name)
		}
		out = append(out, parityTemplate{name: name, source: string(src), tokens: tok})
	}
	models, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(t), ".cache", "models", "*", "tokenizer_config.json"))
	if len(models) == 0 {
		testenv.ModelDir(t, "qwen3") // skips or fails loudly
	}
	for _, cfgPath := range models {
		model := filepath.Base(filepath.Dir(cfgPath))
		pt, ok := modelTemplate(t, cfgPath)
		if !ok {
			t.Logf("model %s: no chat_template in tokenizer_config.json", model)
			continue
		}
		pt.name = "model:" + model
		out = append(out, pt)
	}
	return out
}

// modelTemplate reads chat_template, bos_token and eos_token from a
// tokenizer_config.json (tokens may be strings or AddedToken objects).
func modelTemplate(t *testing.T, path string) (parityTemplate, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		Bos          json.RawMessage `json:"bos_token"`
		Eos          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var src string
	if err := json.Unmarshal(cfg.ChatTemplate, &src); err != nil || src == "" {
		var named []struct{ Name, Template string }
		if json.Unmarshal(cfg.ChatTemplate, &named) != nil {
			return parityTemplate{}, false
		}
		for _, n := range named {
			if n.Name == "default" {
				src = n.Template
			}
		}
		if src == "" {
			return parityTemplate{}, false
		}
	}
	token := func(raw json.RawMessage) *string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return &s
		}
		var obj struct{ Content *string }
		if json.Unmarshal(raw, &obj) == nil {
			return obj.Content
		}
		return nil
	}
	tok := specialTokens{bos: token(cfg.Bos)}
	if e := token(cfg.Eos); e != nil {
		tok.eos = *e
	}
	return parityTemplate{source: src, tokens: tok}, true
}

// withTokens prepends bos_token/eos_token to a context object.
func withTokens(ctx string, tok specialTokens) string {
	var b strings.Builder
	b.WriteString("{")
	if tok.bos != nil {
		q, _ := json.Marshal(*tok.bos)
		b.WriteString(`"bos_token":`)
		b.Write(q)
		b.WriteString(",")
	}
	q, _ := json.Marshal(tok.eos)
	b.WriteString(`"eos_token":`)
	b.Write(q)
	rest := strings.TrimPrefix(strings.TrimSpace(ctx), "{")
	if strings.TrimSpace(rest) != "}" {
		b.WriteString(",")
	}
	b.WriteString(rest)
	return b.String()
}

// goOutcome renders with vrender and reports output or (type, message).
func goOutcome(tmpl *Template, compileErr error, ctxJSON string) refResponse {
	if compileErr != nil {
		return errOutcome(compileErr)
	}
	vars, err := FromJSON([]byte(ctxJSON))
	if err != nil {
		return refResponse{ErrorType: "ContextError", Message: err.Error()}
	}
	out, err := tmpl.Render(context.Background(), vars, func() time.Time { return parityClock })
	if err != nil {
		return errOutcome(err)
	}
	return refResponse{OK: true, Output: out}
}

func errOutcome(err error) refResponse {
	if te, ok := err.(*TemplateError); ok {
		return refResponse{ErrorType: te.PyType, Message: te.Message}
	}
	return refResponse{ErrorType: "GoError", Message: err.Error()}
}

func sameOutcome(a, b refResponse) bool {
	if a.OK != b.OK {
		return false
	}
	if a.OK {
		return a.Output == b.Output
	}
	return a.ErrorType == b.ErrorType && a.Message == b.Message
}

func describeOutcome(r refResponse) string {
	if r.OK {
		return fmt.Sprintf("output %q", r.Output)
	}
	return fmt.Sprintf("%s: %s", r.ErrorType, r.Message)
}

// TestParityWithJinja2 renders every shared and cached-model chat template
// against every parity context with vrender and with Python Jinja2 (as
// transformers configures it) and requires identical output, or the same
// error type and message.
func TestParityWithJinja2(t *testing.T) {
	if testing.Short() {
		t.Skip("parity matrix runs a Python reference; skipped in -short mode")
	}
	templates := loadParityTemplates(t)
	ref := startRefRenderer(t)
	now := parityClock.Format("2006-01-02T15:04:05")

	type row struct {
		name           string
		pass, total    int
		okRenders, err int
	}
	var rows []row
	failures := 0
	for _, pt := range templates {
		tmpl, cerr := Compile(pt.source, Options{})
		r := row{name: pt.name}
		for _, pc := range parityContexts {
			ctx := withTokens(pc.json, pt.tokens)
			want, err := ref.render(refRequest{Template: pt.source, Context: json.RawMessage(ctx), Now: now})
			if err != nil {
				t.Fatalf("%s/%s: %v", pt.name, pc.name, err)
			}
			got := goOutcome(tmpl, cerr, ctx)
			r.total++
			if want.OK {
				r.okRenders++
			} else {
				r.err++
			}
			if sameOutcome(got, want) {
				r.pass++
				continue
			}
			failures++
			if failures <= 40 {
				t.Errorf("%s / %s:\n  jinja2:  %s\n  vrender: %s", pt.name, pc.name, describeOutcome(want), describeOutcome(got))
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-36s %9s %10s %8s\n", "template", "pass", "renders", "raises")
	total, pass := 0, 0
	for _, r := range rows {
		fmt.Fprintf(&b, "%-36s %4d/%-4d %10d %8d\n", r.name, r.pass, r.total, r.okRenders, r.err)
		total += r.total
		pass += r.pass
	}
	fmt.Fprintf(&b, "%-36s %4d/%-4d\n", "TOTAL", pass, total)
	t.Log(b.String())
	if failures > 0 {
		t.Errorf("%d of %d template x context renders differ from Jinja2", failures, total)
	}
}
