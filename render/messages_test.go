package render

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// nodeJSON writes a node as compact JSON in its key order.
func nodeJSON(n *node) string {
	var b strings.Builder
	var walk func(*node)
	walk = func(n *node) {
		switch n.Kind {
		case jNull:
			b.WriteString("null")
		case jBool:
			b.WriteString(strconv.FormatBool(n.B))
		case jNum:
			b.WriteString(n.S)
		case jStr:
			q, _ := json.Marshal(n.S)
			b.Write(q)
		case jArr:
			b.WriteByte('[')
			for i, c := range n.Arr {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(c)
			}
			b.WriteByte(']')
		case jObj:
			b.WriteByte('{')
			for i, k := range n.Keys {
				if i > 0 {
					b.WriteByte(',')
				}
				q, _ := json.Marshal(k)
				b.Write(q)
				b.WriteByte(':')
				walk(n.Vals[i])
			}
			b.WriteByte('}')
		}
	}
	walk(n)
	return b.String()
}

func testMessages(t *testing.T, src string) []protocol.Message {
	t.Helper()
	var msgs []json.RawMessage
	if err := json.Unmarshal([]byte(src), &msgs); err != nil {
		t.Fatalf("bad test input %s: %v", src, err)
	}
	return typedMessages(msgs)
}

func TestNormalizeMessages(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		format    string
		developer bool // template handles developer itself
		want      string
		wantErr   string
	}{
		{"string content", `[{"role":"user","content":"hi","extra":1}]`, FormatString, false,
			`[{"role":"user","content":"hi"}]`, ""},
		{"string content as openai parts", `[{"role":"user","content":"hi"}]`, FormatOpenAI, false,
			`[{"role":"user","content":[{"type":"text","text":"hi"}]}]`, ""},
		{"null content string", `[{"role":"user","content":null}]`, FormatString, false,
			`[{"role":"user","content":""}]`, ""},
		// vLLM bf578e1 _collect_extra_fields: unknown keys of a text part
		// follow type and text in an "openai"-format message.
		{"text part extras kept in openai format", `[{"role":"user","content":[{"cache_control":{"type":"ephemeral"},"type":"text","text":"a","name":"n","lang":"en"},{"type":"refusal","refusal":"r","closed":true,"x":1}]}]`, FormatOpenAI, false,
			`[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"},"lang":"en"},{"type":"text","text":"r","x":1}]}]`, ""},
		{"text part extras dropped in string format", `[{"role":"user","content":[{"type":"text","text":"a","lang":"en"}]}]`, FormatString, false,
			`[{"role":"user","content":"a"}]`, ""},
		{"missing content openai", `[{"role":"user"}]`, FormatOpenAI, false,
			`[{"role":"user","content":[]}]`, ""},
		{"text parts joined", `[{"role":"user","content":[{"type":"text","text":"a"},"b",{"type":"input_text","text":"c"},{"type":"text"}]}]`, FormatString, false,
			`[{"role":"user","content":"a\nb\nc"}]`, ""},
		{"refusal and thinking parts", `[{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"refusal","refusal":"r"}]}]`, FormatString, false,
			`[{"role":"assistant","content":"t\nr"}]`, ""},
		{"tool parts become a string in openai format", `[{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]}]`, FormatOpenAI, false,
			`[{"role":"tool","content":"x\ny","tool_call_id":"c1"}]`, ""},
		{"tool_reference kept structured", `[{"role":"tool","content":[{"type":"tool_reference","name":"n"}]}]`, FormatOpenAI, false,
			`[{"role":"tool","content":[{"type":"tool_reference","name":"n"}]}]`, ""},
		{"reasoning copied to both keys", `[{"role":"assistant","content":"a","reasoning":"r"}]`, FormatString, false,
			`[{"role":"assistant","content":"a","reasoning":"r","reasoning_content":"r"}]`, ""},
		{"reasoning_content accepted", `[{"role":"assistant","content":"a","reasoning_content":"r"}]`, FormatString, false,
			`[{"role":"assistant","content":"a","reasoning":"r","reasoning_content":"r"}]`, ""},
		{"reasoning ignored on user", `[{"role":"user","content":"a","reasoning":"r"}]`, FormatString, false,
			`[{"role":"user","content":"a"}]`, ""},
		{"empty tool_calls dropped", `[{"role":"assistant","content":"a","tool_calls":[]}]`, FormatString, false,
			`[{"role":"assistant","content":"a"}]`, ""},
		{"arguments parsed, empty and null become {}",
			`[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{\"b\":1,\"a\":[2.5]}"}},{"id":"2","function":{"name":"g","arguments":""}},{"id":"3","function":{"name":"h","arguments":"null"}},{"id":"4","function":{"name":"i"}}]}]`,
			FormatString, false,
			`[{"role":"assistant","content":"","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":{"b":1,"a":[2.5]}}},{"id":"2","function":{"name":"g","arguments":{}}},{"id":"3","function":{"name":"h","arguments":{}}},{"id":"4","function":{"name":"i","arguments":{}}}]}]`, ""},
		{"name and task kept when strings", `[{"role":"user","content":"a","name":"bob","task":7}]`, FormatString, false,
			`[{"role":"user","content":"a","name":"bob"}]`, ""},
		{"developer merged into system", `[{"role":"system","content":"s"},{"role":"user","content":"u"},{"role":"developer","content":"d"}]`, FormatString, false,
			`[{"role":"system","content":"s\n\nd"},{"role":"user","content":"u"}]`, ""},
		{"merged system message leads", `[{"role":"user","content":"u"},{"role":"developer","content":"d","tools":[]},{"role":"system","content":"s"}]`, FormatString, false,
			`[{"role":"system","content":"d\n\ns"},{"role":"user","content":"u"}]`, ""},
		{"system messages kept apart without developer", `[{"role":"system","content":"a"},{"role":"user","content":"u"},{"role":"system","content":"b"}]`, FormatString, false,
			`[{"role":"system","content":"a"},{"role":"user","content":"u"},{"role":"system","content":"b"}]`, ""},
		{"developer kept when the template knows it", `[{"role":"developer","content":"d"}]`, FormatString, true,
			`[{"role":"developer","content":"d","tools":null}]`, ""},
		{"image part refused", `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]`, FormatString, false,
			"", "multimodal input is not supported"},
		{"untyped audio refused", `[{"role":"user","content":[{"audio_url":"x"}]}]`, FormatString, false,
			"", "multimodal input is not supported"},
		{"unknown part type", `[{"role":"user","content":[{"type":"file"}]}]`, FormatString, false,
			"", "Unsupported chat content part type: 'file'. Supported types: " + supportedPartTypes + "."},
		{"missing part type", `[{"role":"user","content":[{"foo":1}]}]`, FormatString, false,
			"", "Missing 'type' field in multimodal part."},
		{"tool call of another type", `[{"role":"assistant","tool_calls":[{"type":"custom","function":{"name":"f"}}]}]`, FormatString, false,
			"", "chat completions only support assistant tool_calls of type 'function'."},
		{"tool call not an object", `[{"role":"assistant","tool_calls":[1]}]`, FormatString, false,
			"", "assistant tool_calls entries must be objects."},
		{"missing role", `[{"content":"x"}]`, FormatString, false, "", "Each message must have a string 'role'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := normalizeMessages(testMessages(t, tt.in), tt.format, tt.developer)
			if tt.wantErr != "" {
				var br *BadRequestError
				if !errors.As(err, &br) || br.Message != tt.wantErr {
					t.Fatalf("err = %v, want BadRequestError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := nodeJSON(&node{Kind: jArr, Arr: msgs})
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCutAtFinalMessage(t *testing.T) {
	tests := []struct {
		name, text, final, want string
		wantErr                 bool
	}{
		{"spacing kept", "<a>Hello" + continueTag + "</a>", "Hello", "<a>Hello", false},
		{"trailing space trimmed by template", "<a>Hello  CONTINUE_FINAL_MESSAGE_TAG</a>", "Hello  ", "<a>Hello", false},
		{"message deleted", "<a></a>", "Hello", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cutAtFinalMessage(tt.text, tt.final)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("cut = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPyStrRepr(t *testing.T) {
	for in, want := range map[string]string{`a`: `'a'`, `it's`: `"it's"`, "a\nb": `'a\nb'`, `\`: `'\\'`} {
		if got := pyStrRepr(in); got != want {
			t.Errorf("pyStrRepr(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCheckDocuments(t *testing.T) {
	for in, wantErr := range map[string]bool{
		`null`: false, `[]`: false, `[{"title":"a","text":"b"}]`: false, `""`: false, `{}`: false,
		`["x"]`: true, `"abc"`: true, `{"a":1}`: true, `5`: true,
	} {
		n, err := parseJSON([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkDocuments(n); (err != nil) != wantErr {
			t.Errorf("checkDocuments(%s) = %v, want error %v", in, err, wantErr)
		}
	}
}
