package render

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// parityClock is the fixed time strftime_now sees on both sides.
var parityClock = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// sharedTemplateTokens are the bos/eos of each shared template's model, from
// ../shared/templates/SOURCES.md ("" = the tokenizer has none).
var sharedTemplateTokens = map[string][2]string{
	"command-r-plus-tool-use.jinja":     {"<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"},
	"command-r7b-tool-use.jinja":        {"<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"},
	"deepseek-r1-0528-tools-vllm.jinja": {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"},
	"deepseek-r1-distill.jinja":         {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"},
	"deepseek-v3.jinja":                 {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"},
	"deepseek-v3.1.jinja":               {"<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"},
	"gemma-2.jinja":                     {"<bos>", "<eos>"},
	"gemma-3.jinja":                     {"<bos>", "<end_of_turn>"},
	"gemma-4.jinja":                     {"<bos>", "<eos>"},
	"glm-4.6.jinja":                     {"", "<|endoftext|>"},
	"gpt-oss.jinja":                     {"<|startoftext|>", "<|return|>"},
	"granite-3.3.jinja":                 {"<|end_of_text|>", "<|end_of_text|>"},
	"granite-4.0.jinja":                 {"<|end_of_text|>", "<|end_of_text|>"},
	"hermes-3-tool-use.jinja":           {"<|begin_of_text|>", "<|im_end|>"},
	"hunyuan-a13b-vllm.jinja":           {"<|startoftext|>", "<|eos|>"},
	"internlm2.5-tool-vllm.jinja":       {"<s>", "</s>"},
	"kimi-k2.jinja":                     {"[BOS]", "[EOS]"},
	"llama-3.jinja":                     {"<|begin_of_text|>", "<|eot_id|>"},
	"llama-3.1.jinja":                   {"<|begin_of_text|>", "<|eot_id|>"},
	"llama-3.2.jinja":                   {"<|begin_of_text|>", "<|eot_id|>"},
	"llama-4.jinja":                     {"<|begin_of_text|>", "<|eot|>"},
	"llama-4-pythonic-vllm.jinja":       {"<|begin_of_text|>", "<|eot|>"},
	"minimax-m2.jinja":                  {"]~!b[", "[e~["},
	"ministral-3-reasoning.jinja":       {"<s>", "</s>"},
	"mistral-nemo.jinja":                {"<s>", "</s>"},
	"mistral-small-3.2.jinja":           {"<s>", "</s>"},
	"mistral-v3-tools-vllm.jinja":       {"<s>", "</s>"},
	"nemotron-nano-v2.jinja":            {"<SPECIAL_10>", "<SPECIAL_11>"},
	"olmo-2.jinja":                      {"<|endoftext|>", "<|endoftext|>"},
	"phi-3.5-mini.jinja":                {"<s>", "<|endoftext|>"},
	"phi-4.jinja":                       {"<|endoftext|>", "<|im_end|>"},
	"phi-4-mini.jinja":                  {"<|endoftext|>", "<|endoftext|>"},
	"qwen2.5-instruct.jinja":            {"", "<|im_end|>"},
	"qwen3.jinja":                       {"", "<|im_end|>"},
	"qwen3-coder.jinja":                 {"", "<|im_end|>"},
	"qwen3-rev.jinja":                   {"", "<|im_end|>"},
	"qwen3.5.jinja":                     {"", "<|im_end|>"},
	"qwq-32b.jinja":                     {"", "<|im_end|>"},
	"seed-oss.jinja":                    {"<seed:bos>", "<seed:eos>"},
	"smollm3.jinja":                     {"", "<|im_end|>"},
}

// testRequest is the part of a chat request the parity corpus varies.
type testRequest struct {
	Messages             []json.RawMessage   `json:"messages"`
	Tools                testTools           `json:"tools"`
	ToolChoice           protocol.ToolChoice `json:"tool_choice"`
	Documents            json.RawMessage     `json:"documents"`
	ChatTemplateKwargs   json.RawMessage     `json:"chat_template_kwargs"`
	ReasoningEffort      *string             `json:"reasoning_effort"`
	AddGenerationPrompt  bool                `json:"add_generation_prompt"`
	ContinueFinalMessage bool                `json:"continue_final_message"`
}

// testTools are a test request's tools, decoded as protocol decodes a
// request's tools (a fixture with invalid tools fails to decode).
type testTools []protocol.Tool

func (t *testTools) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*t = nil
		return nil
	}
	tools, err := protocol.DecodeTools(data)
	*t = tools
	return err
}

// decodeTools is protocol.DecodeTools of raw tools, nil for nil.
func decodeTools(tb testing.TB, raws ...json.RawMessage) []protocol.Tool {
	tb.Helper()
	if raws == nil {
		return nil
	}
	list, err := json.Marshal(raws)
	if err != nil {
		tb.Fatal(err)
	}
	tools, err := protocol.DecodeTools(list)
	if err != nil {
		tb.Fatal(err)
	}
	return tools
}

func (q testRequest) input() ChatInput {
	return ChatInput{
		Messages: typedMessages(q.Messages), Tools: q.Tools, ToolChoice: q.ToolChoice, Documents: kwargsNode(q.Documents),
		ChatTemplateKwargs: kwargsNode(q.ChatTemplateKwargs), ReasoningEffort: q.ReasoningEffort,
		AddGenerationPrompt: q.AddGenerationPrompt, ContinueFinalMessage: q.ContinueFinalMessage,
	}
}

type conversation struct {
	Name    string          `json:"name"`
	Request json.RawMessage `json:"request"`
}

func loadConversations(t testing.TB) []conversation {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var convs []conversation
	if err := json.Unmarshal(data, &convs); err != nil {
		t.Fatal(err)
	}
	return convs
}

// lineProc is a reference process answering one JSON line per request line.
type lineProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startLineProc(t testing.TB, name string, args ...string) *lineProc {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &lineProc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() {
		_ = p.in.Close()
		_ = p.cmd.Wait()
	})
	return p
}

func (p *lineProc) call(t testing.TB, req, resp any) {
	t.Helper()
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.in.Write(append(data, '\n')); err != nil {
		t.Fatalf("write to reference: %v", err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("read from reference: %v", err)
	}
	if err := json.Unmarshal(line, resp); err != nil {
		t.Fatalf("decode reference answer %q: %v", line, err)
	}
}

type refAnswer struct {
	OK            bool   `json:"ok"`
	Prompt        string `json:"prompt"`
	ContentFormat string `json:"content_format"`
	ErrorType     string `json:"error_type"`
	Message       string `json:"message"`
}

// parityTemplate is one template of the corpus and the model it renders for.
type parityTemplate struct {
	name     string
	model    *model.Model
	template string // --chat-template path, "" for the model's own
	tokDir   string
}

func specialTokensOf(m *model.Model) map[string]string {
	tc := m.TokenizerConfig
	out := map[string]string{}
	for k, v := range map[string]string{
		"bos_token": tc.BOSToken, "eos_token": tc.EOSToken, "unk_token": tc.UNKToken,
		"sep_token": tc.SEPToken, "pad_token": tc.PADToken, "cls_token": tc.CLSToken, "mask_token": tc.MaskToken,
	} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func parityTemplates(t *testing.T) []parityTemplate {
	shared := testenv.SharedDir(t)
	var list []parityTemplate
	qwenDir := testenv.ModelDir(t, "qwen3")
	qwen := testmodel.Load(t, "qwen3")
	paths, err := filepath.Glob(filepath.Join(shared, "templates", "*.jinja"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no templates in %s: %v", shared, err)
	}
	for _, p := range paths {
		name := filepath.Base(p)
		toks, ok := sharedTemplateTokens[name]
		if !ok {
			t.Errorf("template %s has no bos/eos entry; add it from SOURCES.md", name)
			continue
		}
		m := *qwen
		m.TokenizerConfig.BOSToken, m.TokenizerConfig.EOSToken = toks[0], toks[1]
		m.ChatTemplates = nil
		list = append(list, parityTemplate{name: name, model: &m, template: p, tokDir: qwenDir})
	}
	for _, name := range []string{"qwen3", "llama3_1", "deepseek_v3", "gemma3", "gptoss"} {
		dir := testenv.ModelDir(t, name)
		m := testmodel.Load(t, name)
		if len(m.ChatTemplates) == 0 {
			continue // gptoss ships no template
		}
		list = append(list, parityTemplate{name: "model:" + name, model: m, tokDir: dir})
	}
	return list
}

// TestChatParity renders every corpus conversation with every template on
// both sides and compares prompts, errors and token IDs.
func TestChatParity(t *testing.T) {
	if testing.Short() {
		t.Skip("parity test runs reference processes")
	}
	root := testenv.RepoRoot(t)
	py := startLineProc(t, testenv.Python3(t), filepath.Join(root, "tools", "refrender", "chat.py"))
	node := startLineProc(t, testenv.Node(t), filepath.Join(root, "tools", "reftok", "reftok.js"),
		"--node-modules", testenv.RefNodeModules(t))
	convs := loadConversations(t)
	templates := parityTemplates(t)

	var table []string
	total, passed := 0, 0
	for _, pt := range templates {
		r, err := New(pt.model, Config{ChatTemplate: pt.template, Now: func() time.Time { return parityClock }})
		if err != nil {
			t.Errorf("%s: New: %v", pt.name, err)
			continue
		}
		src := pt.model.ChatTemplates["default"]
		if pt.template != "" {
			data, _ := os.ReadFile(pt.template)
			src = string(data)
		}
		ok, errs := 0, 0
		var texts []string
		var ids [][]int
		var fails []string
		for _, c := range convs {
			var q testRequest
			if err := json.Unmarshal(c.Request, &q); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			tmplSrc := src
			if len(q.Tools) > 0 && pt.template == "" && pt.model.ChatTemplates["tool_use"] != "" {
				tmplSrc = pt.model.ChatTemplates["tool_use"]
			}
			var want refAnswer
			py.call(t, map[string]any{
				"template": tmplSrc, "request": json.RawMessage(c.Request),
				"special_tokens": specialTokensOf(pt.model), "content_format": "auto",
				"now": parityClock.Format("2006-01-02T15:04:05"),
			}, &want)
			got, err := r.RenderChat(context.Background(), q.input())
			switch {
			case want.OK && err != nil:
				fails = append(fails, fmt.Sprintf("%s: reference renders, vrender fails: %v", c.Name, err))
			case want.OK && got.Text != want.Prompt:
				fails = append(fails, fmt.Sprintf("%s: prompt differs\n got: %q\nwant: %q", c.Name, got.Text, want.Prompt))
			case want.OK && got.ContentFormat != want.ContentFormat:
				fails = append(fails, fmt.Sprintf("%s: content format %s, want %s", c.Name, got.ContentFormat, want.ContentFormat))
			case want.OK:
				ok++
				texts = append(texts, got.Text)
				ids = append(ids, got.TokenIDs)
			case err == nil:
				fails = append(fails, fmt.Sprintf("%s: reference raises %s: %s; vrender renders %q", c.Name, want.ErrorType, want.Message, got.Text))
			default:
				var br *BadRequestError
				if !errors.As(err, &br) {
					fails = append(fails, fmt.Sprintf("%s: error is %T, want *BadRequestError: %v", c.Name, err, err))
				} else if br.Message != want.Message {
					fails = append(fails, fmt.Sprintf("%s: error message\n got: %q\nwant: %q (%s)", c.Name, br.Message, want.Message, want.ErrorType))
				} else {
					ok++
					errs++
				}
			}
		}
		if len(texts) > 0 {
			var ans struct {
				IDs   [][]int `json:"ids_batch"`
				Error string  `json:"error"`
			}
			node.call(t, map[string]any{"op": "encode", "model": pt.tokDir, "texts": texts, "add_special_tokens": false}, &ans)
			if ans.Error != "" {
				t.Fatalf("reftok: %s", ans.Error)
			}
			for i := range texts {
				if !slices.Equal(ids[i], ans.IDs[i]) {
					ok--
					fails = append(fails, fmt.Sprintf("token IDs differ for prompt %q", texts[i]))
				}
			}
		}
		total += len(convs)
		passed += ok
		table = append(table, fmt.Sprintf("%-36s %3d/%d  (%d same error)", pt.name, ok, len(convs), errs))
		for _, f := range fails {
			t.Errorf("%s: %s", pt.name, f)
		}
	}
	sort.Strings(table)
	t.Logf("render parity per template (pass/total):\n%s\nTOTAL %d/%d", strings.Join(table, "\n"), passed, total)
}
