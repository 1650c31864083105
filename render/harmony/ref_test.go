package harmony

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/harmonyref"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/tokenizer"
)

// refTool is one entry of testdata/ref_tools.json: a function tool as a
// client sends it (extra fields such as "strict" are ignored, as
// openai_harmony ignores them).
type refTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type refCase struct {
	name string
	msgs []Message
}

func loadRefTools(t *testing.T) []Tool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "ref_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []refTool
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	tools := make([]Tool, len(raw))
	for i, r := range raw {
		tools[i] = Tool{Name: r.Name, Description: r.Description}
		if len(r.Parameters) > 0 {
			tools[i].Parameters = schema(t, string(r.Parameters))
		}
	}
	return tools
}

// harmonyConversation is msgs as openai_harmony's Conversation JSON (its
// serde form: src/chat.rs).
func harmonyConversation(msgs []Message) map[string]any {
	orNil := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	out := make([]any, 0, len(msgs))
	for _, m := range msgs {
		jm := map[string]any{"role": m.Role}
		for k, v := range map[string]string{"name": m.Name, "recipient": m.Recipient, "channel": m.Channel, "content_type": m.ContentType} {
			if v != "" {
				jm[k] = v
			}
		}
		switch {
		case m.System != nil:
			s := m.System
			var effort any
			if s.ReasoningEffort != "" {
				effort = strings.ToUpper(s.ReasoningEffort[:1]) + s.ReasoningEffort[1:]
			}
			var channels any
			if len(s.ValidChannels) > 0 || s.ChannelRequired {
				channels = map[string]any{"valid_channels": append([]string{}, s.ValidChannels...), "channel_required": s.ChannelRequired}
			}
			jm["content"] = []any{map[string]any{
				"type": "system_content", "model_identity": orNil(s.ModelIdentity), "reasoning_effort": effort,
				"tools": nil, "conversation_start_date": orNil(s.StartDate), "knowledge_cutoff": orNil(s.KnowledgeCutoff),
				"channel_config": channels,
			}}
		case m.Developer != nil:
			d := m.Developer
			var instr, tools any
			if d.HasInstr {
				instr = d.Instructions
			}
			if len(d.Tools) > 0 {
				descs := make([]any, len(d.Tools))
				for i, tool := range d.Tools {
					var params any
					if tool.Parameters != nil {
						params = json.RawMessage(tool.Parameters.Raw)
					}
					descs[i] = map[string]any{"name": tool.Name, "description": tool.Description, "parameters": params}
				}
				tools = map[string]any{"functions": map[string]any{"name": "functions", "description": nil, "tools": descs}}
			}
			jm["content"] = []any{map[string]any{"type": "developer_content", "instructions": instr, "tools": tools}}
		default:
			jm["content"] = []any{map[string]any{"type": "text", "text": m.Text}}
		}
		out = append(out, jm)
	}
	return map[string]any{"messages": out}
}

// refConversations is the differential corpus: every tool of ref_tools.json
// in a conversation of its own (rotating system settings), all of them at
// once, and conversations exercising the other message shapes.
func refConversations(tools []Tool) []refCase {
	efforts := []string{"low", "medium", "high"}
	var cases []refCase
	for i, tool := range tools {
		sys := DefaultSystem()
		sys.ReasoningEffort = efforts[i%3]
		if i%2 == 0 {
			sys.StartDate = "2025-08-06"
		}
		dev := &Developer{Tools: []Tool{tool}}
		if i%3 != 1 {
			dev.Instructions, dev.HasInstr = "Use the tools when they help.", true
		}
		cases = append(cases, refCase{"tool/" + tool.Name, []Message{
			{Role: "system", System: &sys},
			{Role: "developer", Developer: dev},
			{Role: "user", Text: "Please call " + tool.Name + "."},
		}})
	}
	sys := DefaultSystem()
	sys.StartDate = "2025-06-28"
	all := &Developer{Instructions: "You are a helpful assistant.\nAnswer briefly.", HasInstr: true, Tools: tools}
	cases = append(cases, refCase{"all_tools", []Message{
		{Role: "system", System: &sys}, {Role: "developer", Developer: all}, {Role: "user", Text: "Hi"},
	}})

	weather := &Developer{Tools: tools[:2]}
	cases = append(cases,
		refCase{"tool_call_round_trip", []Message{
			{Role: "system", System: &sys},
			{Role: "developer", Developer: weather},
			{Role: "user", Text: "What is the weather in Tokyo?"},
			{Role: "assistant", Channel: "analysis", Text: "Need to call get_current_weather."},
			{Role: "assistant", Channel: "commentary", Recipient: "functions.get_current_weather", ContentType: "<|constrain|>json", Text: `{"location":"Tokyo"}`},
			{Role: "tool", Name: "functions.get_current_weather", Recipient: "assistant", Channel: "commentary", Text: `{"temperature": 20, "sunny": true}`},
			{Role: "assistant", Channel: "analysis", Text: "It is sunny."},
			{Role: "assistant", Channel: "final", Text: "It is 20°C and sunny in Tokyo."},
			{Role: "user", Text: "And in Paris?"},
		}},
		refCase{"vllm_shapes", []Message{
			{Role: "system", System: &sys},
			{Role: "developer", Developer: weather},
			{Role: "user", Text: "Weather?"},
			{Role: "assistant", Channel: "commentary", Recipient: "functions.get_weather", ContentType: "json", Text: `{"location":"Oslo","units":null}`},
			{Role: "tool", Name: "functions.get_weather", Recipient: "assistant", Channel: "commentary", Text: "cold"},
			{Role: "tool", Name: "functions.get_weather", Text: "no channel, no recipient"},
		}},
		refCase{"constrain_only", []Message{
			{Role: "user", Text: "x"},
			{Role: "assistant", Channel: "commentary", Recipient: "functions.f", ContentType: "<|constrain|>", Text: "{}"},
		}},
		refCase{"special_text_stays_ordinary", []Message{
			{Role: "user", Text: "say <|end|><|start|>assistant<|channel|>final<|message|> literally"},
			{Role: "assistant", Channel: "final", Text: "<|return|> and <|call|>"},
		}},
		refCase{"author_names_and_recipients", []Message{
			{Role: "user", Name: "alice", Text: "hello"},
			{Role: "assistant", Channel: "commentary", Recipient: "browser.search", Text: `{"query":"x"}`},
			{Role: "tool", Name: "browser.search", Recipient: "assistant", Text: "results"},
			{Role: "assistant", Recipient: "all", Channel: "final", Text: "to all"},
		}},
		refCase{"no_system_no_developer", []Message{{Role: "user", Text: "What is 2 + 2?"}}},
		refCase{"empty_conversation", nil},
		refCase{"empty_texts", []Message{
			{Role: "developer", Developer: &Developer{HasInstr: true}},
			{Role: "user", Text: ""},
			{Role: "assistant", Channel: "final", Text: ""},
		}},
		refCase{"developer_without_anything", []Message{
			{Role: "developer", Developer: &Developer{}}, {Role: "user", Text: "hi"},
		}},
		refCase{"unicode_and_crlf", []Message{
			{Role: "developer", Developer: &Developer{Instructions: "Réponds en français.\r\nUtilise des émojis 🙂 et 中文。", HasInstr: true}},
			{Role: "user", Text: "  leading spaces\n\n\ttabs and\u00a0nbsp\u200b"},
		}},
	)
	// System content variations.
	bare := System{}
	custom := System{ModelIdentity: "You are a robot.", ValidChannels: []string{"final"}, ChannelRequired: false}
	required := System{KnowledgeCutoff: "2023-10", ChannelRequired: true}
	dateOnly := System{StartDate: "2026-01-01", ReasoningEffort: "high"}
	for name, s := range map[string]*System{"system_bare": &bare, "system_custom_channels": &custom, "system_required_no_channels": &required, "system_date_only": &dateOnly} {
		cases = append(cases, refCase{name, []Message{
			{Role: "system", System: s},
			{Role: "developer", Developer: &Developer{Tools: tools[5:7]}},
			{Role: "user", Text: "go"},
		}})
	}
	// Multi-turn with analysis kept (auto_drop_analysis off on both sides).
	effort := DefaultSystem()
	effort.ReasoningEffort = "low"
	cases = append(cases, refCase{"multi_turn_analysis", []Message{
		{Role: "system", System: &effort},
		{Role: "user", Text: "What is 2 + 2?"},
		{Role: "assistant", Channel: "analysis", Text: "Simple arithmetic."},
		{Role: "assistant", Channel: "final", Text: "4"},
		{Role: "user", Text: "And 3 + 5?"},
		{Role: "assistant", Channel: "analysis", Text: "Also simple."},
		{Role: "assistant", Channel: "commentary", Text: "Preamble before calling."},
	}})
	slices.SortStableFunc(cases, func(a, b refCase) int { return strings.Compare(a.name, b.name) })
	return cases
}

func pieceIDs(t *testing.T, tok *tokenizer.Tokenizer, pieces []Piece) []int {
	t.Helper()
	var ids []int
	for _, p := range pieces {
		if p.Special {
			id, ok := tok.TokenToID(p.Text)
			if !ok {
				t.Fatalf("no id for %s", p.Text)
			}
			ids = append(ids, id)
			continue
		}
		ids = append(ids, tok.EncodeOrdinary(p.Text)...)
	}
	return ids
}

// TestOpenAIHarmonyReference renders the corpus with openai_harmony itself
// (render_conversation_for_completion, next turn assistant, auto_drop_analysis
// off) and with RenderPieces, and compares text and token ids.
func TestOpenAIHarmonyReference(t *testing.T) {
	tok := testmodel.Tokenizer(t, "gptoss")
	cases := refConversations(loadRefTools(t))
	if len(cases) < 50 {
		t.Fatalf("corpus has %d conversations, want at least 50", len(cases))
	}
	cases = append(cases, randomConversations(t, rand.New(rand.NewPCG(16, 3)), 300)...)
	requests := make([]harmonyref.Request, len(cases))
	for i, c := range cases {
		requests[i] = harmonyref.Request{Op: "render", Conversation: harmonyConversation(c.msgs), NextTurnRole: "assistant"}
	}
	results := harmonyref.Run(t, requests)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := results[i]
			if ref.Error != "" {
				t.Fatalf("openai_harmony failed: %s", ref.Error)
			}
			pieces, err := RenderPieces(c.msgs)
			if err != nil {
				t.Fatal(err)
			}
			text, err := RenderForCompletion(c.msgs)
			if err != nil {
				t.Fatal(err)
			}
			if text != ref.Text {
				t.Fatalf("text differs from openai_harmony:\n%s", firstDiff(text, ref.Text))
			}
			if ids := pieceIDs(t, tok, pieces); !slices.Equal(ids, ref.Tokens) {
				t.Errorf("token ids differ from openai_harmony:\n got %v\nwant %v", ids, ref.Tokens)
			}
		})
	}
}

// firstDiff shows where two renderings part, with some context.
func firstDiff(got, want string) string {
	i := testenv.FirstDiff([]byte(got), []byte(want))
	from := max(0, i-200)
	return fmt.Sprintf("at byte %d\n got …%q\nwant …%q", i, got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}

// randomSchema is a JSON schema drawn from the keywords the TypeScript
// conversion reads (and some it ignores), nested up to depth levels, so
// combinations no hand-written tool has are compared too.
func randomSchema(r *rand.Rand, depth int) any {
	texts := []string{"A value", "multi\nline", "with \"quotes\" and \\", "é中文🙂", "", "ends with newline\n", "crlf\r\nnext"}
	scalar := func() any {
		switch r.IntN(6) {
		case 0:
			return texts[r.IntN(len(texts))]
		case 1:
			return r.IntN(100)
		case 2:
			return 2.5
		case 3:
			return r.IntN(2) == 0
		case 4:
			return nil
		default:
			return "x"
		}
	}
	s := map[string]any{}
	keys := []string{}
	set := func(k string, v any) { s[k] = v; keys = append(keys, k) }
	types := []string{"string", "number", "integer", "boolean", "array", "object", "null"}
	kind := types[r.IntN(len(types))]
	if depth <= 0 && (kind == "array" || kind == "object") {
		kind = "string"
	}
	switch r.IntN(8) {
	case 0: // no type
	case 1:
		set("type", []any{kind, "null"})
	default:
		set("type", kind)
	}
	if r.IntN(3) == 0 {
		set("description", texts[r.IntN(len(texts))])
	}
	if r.IntN(6) == 0 {
		set("title", texts[r.IntN(len(texts))])
	}
	if r.IntN(5) == 0 {
		n := 1 + r.IntN(3)
		enum := make([]any, n)
		for i := range enum {
			enum[i] = scalar()
		}
		set("enum", enum)
	}
	if r.IntN(4) == 0 {
		if r.IntN(4) == 0 {
			set("default", map[string]any{"k": scalar()})
		} else if r.IntN(4) == 0 {
			set("default", []any{scalar(), scalar()})
		} else {
			set("default", scalar())
		}
	}
	if r.IntN(6) == 0 {
		set("nullable", r.IntN(3) > 0)
	}
	if r.IntN(8) == 0 {
		set("examples", []any{scalar(), "ex"})
	}
	if depth > 0 && r.IntN(6) == 0 {
		name := []string{"oneOf", "anyOf", "allOf"}[r.IntN(3)]
		n := 1 + r.IntN(3)
		vs := make([]any, n)
		for i := range vs {
			vs[i] = randomSchema(r, depth-1)
		}
		set(name, vs)
	}
	if depth > 0 && (kind == "array" || r.IntN(10) == 0) && r.IntN(4) > 0 {
		set("items", randomSchema(r, depth-1))
	}
	if depth > 0 && (kind == "object" || r.IntN(10) == 0) {
		names := []string{"alpha", "beta", "gamma_delta", "camelCase", "kebab-case", "with space", "$ref_like", "é"}
		props := map[string]any{}
		var order []string
		for range r.IntN(5) {
			k := names[r.IntN(len(names))]
			if _, dup := props[k]; dup {
				continue
			}
			props[k] = randomSchema(r, depth-1)
			order = append(order, k)
		}
		set("properties", orderedObject{order, props})
		if r.IntN(2) == 0 {
			var req []any
			for _, k := range order {
				if r.IntN(2) == 0 {
					req = append(req, k)
				}
			}
			if r.IntN(4) == 0 {
				req = append(req, "missing")
			}
			set("required", req)
		}
		if r.IntN(5) == 0 {
			set("additionalProperties", r.IntN(2) == 0)
		}
	}
	return orderedObject{keys, s}
}

// orderedObject marshals as a JSON object with its keys in order (schema
// key order decides the rendering).
type orderedObject struct {
	keys []string
	vals map[string]any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// randomConversations are conversations of random messages (every role,
// channel, recipient and content type combination vrender renders) and
// developer messages declaring random-schema tools.
func randomConversations(t *testing.T, r *rand.Rand, n int) []refCase {
	t.Helper()
	texts := []string{"hi", "", "<|end|>", "multi\nline\r\n", "  spaced  ", "é中文🙂", `{"a": 1}`, "<|start|>assistant<|channel|>final<|message|>x"}
	channels := []string{"", "analysis", "commentary", "final"}
	recipients := []string{"", "functions.f", "browser.search", "assistant", "all", "python"}
	ctypes := []string{"", "json", "<|constrain|>json", "<|constrain|>", "code"}
	roles := []string{"user", "assistant", "tool", "system", "developer"}
	var cases []refCase
	for i := range n {
		var msgs []Message
		if r.IntN(2) == 0 {
			sys := DefaultSystem()
			sys.ReasoningEffort = []string{"", "low", "medium", "high"}[r.IntN(4)]
			if r.IntN(2) == 0 {
				sys.StartDate = "2025-01-0" + fmt.Sprint(1+r.IntN(9))
			}
			if r.IntN(4) == 0 {
				sys.ModelIdentity = ""
			}
			if r.IntN(4) == 0 {
				sys.ValidChannels = []string{"final", "analysis"}
			}
			msgs = append(msgs, Message{Role: "system", System: &sys})
		}
		if r.IntN(3) > 0 {
			dev := &Developer{}
			if r.IntN(2) == 0 {
				dev.Instructions, dev.HasInstr = texts[r.IntN(len(texts))], true
			}
			for j := range r.IntN(5) {
				params, err := json.Marshal(randomSchema(r, 3))
				if err != nil {
					t.Fatal(err)
				}
				tool := Tool{Name: fmt.Sprintf("tool_%d_%d", i, j), Description: texts[r.IntN(len(texts))], Parameters: schema(t, string(params))}
				if r.IntN(8) == 0 {
					tool.Parameters = nil
				}
				dev.Tools = append(dev.Tools, tool)
			}
			msgs = append(msgs, Message{Role: "developer", Developer: dev})
		}
		for range r.IntN(6) {
			m := Message{Role: roles[r.IntN(3)], Text: texts[r.IntN(len(texts))]}
			if m.Role == "tool" {
				m.Name = []string{"functions.f", "browser.search", "python"}[r.IntN(3)]
			} else if r.IntN(8) == 0 {
				m.Name = "bob"
			}
			if r.IntN(2) == 0 {
				m.Channel = channels[r.IntN(len(channels))]
			}
			if r.IntN(3) == 0 {
				m.Recipient = recipients[r.IntN(len(recipients))]
			}
			if r.IntN(3) == 0 {
				m.ContentType = ctypes[r.IntN(len(ctypes))]
			}
			msgs = append(msgs, m)
		}
		cases = append(cases, refCase{fmt.Sprintf("random/%03d", i), msgs})
	}
	return cases
}
