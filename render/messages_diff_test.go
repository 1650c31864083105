package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// messageDiffCases are messages that reach every branch of vLLM's message
// handling: each error, each skipped part, the forwarded members.
var messageDiffCases = []string{
	`[{"role":"user","content":"hi","name":"n","task":"t","junk":[1]}]`,
	`[{"role":1,"content":"x"}]`,
	`[{"role":null}]`,
	`[{"content":"x"}]`,
	`[{"role":"user","content":7}]`,
	`[{"role":"user","content":{"a":1}}]`,
	`[{"role":"user","content":null},{"role":"user"}]`,
	`[{"role":"user","content":["a",{"type":"text","text":"b","x":[1,{"y":2}],"uuid":null},{"type":"input_text","text":"c"},{"type":"output_text","text":null}]}]`,
	`[{"role":"user","content":[{"type":"refusal","refusal":"r","text":"t"},{"type":"thinking","thinking":"k","closed":true}]}]`,
	`[{"role":"user","content":[{"type":"text","text":5}]}]`,
	`[{"role":"user","content":[{"type":"text","text":[1]}]}]`,
	`[{"role":"user","content":[7]}]`,
	`[{"role":"user","content":[null]}]`,
	`[{"role":"user","content":[[1]]}]`,
	`[{"role":"user","content":[{"type":5}]}]`,
	`[{"role":"user","content":[{"type":"nope"}]}]`,
	`[{"role":"user","content":[{"type":"caf\u00e9 'x'"}]}]`,
	`[{"role":"user","content":[{}]}]`,
	`[{"role":"user","content":[{"type":null}]}]`,
	`[{"role":"user","content":[{"type":"text","uuid":"u","text":"t"}]}]`,
	`[{"role":"user","content":[{"type":"audio_url","audio_url":{"url":"a"}}]}]`,
	`[{"role":"user","content":[{"input_audio":{"data":"a"}}]}]`,
	`[{"role":"user","content":[{"video_url":"v","type":"text","uuid":"x"}]}]`,
	`[{"role":"user","content":[{"type":"image_url","image_url":"http://x/a.png"},{"type":"text","text":"<|vision_start|><|image_pad|><|vision_end|> t"}]}]`,
	`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u","detail":"low"},"uuid":"id1"},{"type":"input_image","image_url":{"url":"v","detail":null}}]}]`,
	`[{"role":"user","content":[{"image_url":"u","uuid":"x"},{"image_url":{"url":"w","detail":7}}]}]`,
	`[{"role":"user","content":[{"type":"image_url"}]}]`,
	`[{"role":"user","content":[{"type":"image_url","image_url":null,"uuid":"k"}]}]`,
	`[{"role":"user","content":[{"image_url":null,"uuid":"k'\""}]}]`,
	`[{"role":"user","content":[{"type":"image_url","image_url":{"url":5}}]}]`,
	`[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]`,
	`[{"role":"user","content":[{"type":"image_url","image_url":[1]}]}]`,
	`[{"role":"user","content":[{"image_url":"u","uuid":5}]}]`,
	`[{"role":"user","content":[{"type":"image_embeds","image_embeds":"e"}]}]`,
	`[{"role":"user","content":[{"type":"tool_reference","name":"g"},{"tool_reference":1,"name":7}]}]`,
	`[{"role":"tool","content":[{"type":"tool_reference","name":"g"},{"type":"text","text":"x"}],"tool_call_id":null}]`,
	`[{"role":"tool","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"tool_call_id":["x"]}]`,
	`[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\": [1, 2.5]}","z":1},"extra":true}],"reasoning":null,"reasoning_content":"rc"}]`,
	`[{"role":"assistant","content":"","tool_calls":[],"reasoning":{"a":1}}]`,
	`[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":""}}]}]`,
	`[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{bad"}}]}]`,
	`[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":5}}]}]`,
	`[{"role":"assistant","tool_calls":[7]}]`,
	`[{"role":"assistant","tool_calls":[{"type":"x","function":{}}]}]`,
	`[{"role":"assistant","tool_calls":"s"}]`,
	`[{"role":"developer","content":"d","tools":[{"a":1}]},{"role":"system","content":"s"},{"role":"developer","content":[{"type":"text","text":"p"}]},{"role":"user","content":"u"}]`,
	`[{"role":"user","content":"a","a":1,"a":2,"role":"assistant"}]`,
	`[{"tool_call_id":1,"role":2}]`,
	`[{"role":"assistant","tool_calls":[null,{"id":null,"function":null},{"function":{"name":null,"arguments":null}}],"tool_call_id":null,"reasoning":"r"}]`,
	`[{"role":"assistant","tool_calls":[{"id":1}]}]`,
	`[{"role":"assistant","tool_calls":[{"function":[1]}]}]`,
	`[{"role":"assistant","tool_calls":[{"function":{"arguments":{}}}]}]`,
	`[{"role":"user","content":[{"type":"image_url","text":"t"},{"text":null},{"text":true}]}]`,
	`[{"Role":"user","content":"x"}]`,
	`[{"role":"user","content":"` + strings.Repeat("x", 3) + `","deep":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}]`,
}

// messagesDiff renders the messages of one messages array through the
// typed path and the tree-reading path it replaced, in every content
// format, with and without developer merging and image support, and
// reports the first difference: the template input, the image
// references or the error.
func messagesDiff(t *testing.T, messages []byte) {
	t.Helper()
	body := append(append([]byte(`{"messages":`), messages...), '}')
	req, err := protocol.DecodeChatCompletionRequest(body)
	if err != nil {
		return // refused by validation, before either path
	}
	var raws []json.RawMessage
	var trees []*node
	root, err := wire.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := root.Get("messages")
	for _, n := range list.Arr {
		raws = append(raws, n.Raw)
		trees = append(trees, n)
	}
	for _, format := range []string{FormatString, FormatOpenAI} {
		for _, dev := range []bool{false, true} {
			for _, images := range []bool{false, true} {
				var mmOld, mmNew *imageParts
				if images {
					mmOld, mmNew = &imageParts{}, &imageParts{}
				}
				old, errOld := refNormalizeChat(raws, trees, format, dev, mmOld)
				got, errNew := normalizeChat(req.Messages, format, dev, mmNew)
				where := fmt.Sprintf("%s (format %s, developer %v, images %v)", messages, format, dev, images)
				if e1, e2 := clientErr(errOld), clientErr(errNew); e1 != e2 {
					t.Fatalf("%s:\n typed error %s\n trees error %s", where, e2, e1)
				}
				if d1, d2 := dumpNodes(old), dumpNodes(got); d1 != d2 {
					t.Fatalf("%s:\n typed %s\n trees %s", where, d2, d1)
				}
				if images && !reflect.DeepEqual(mmOld.refs, mmNew.refs) {
					t.Fatalf("%s: typed images %+v, trees %+v", where, mmNew.refs, mmOld.refs)
				}
			}
		}
	}
	if goCaseFolds(list) {
		return // encoding/json matched keys case-insensitively; vLLM never did
	}
	old, errOld := refHarmonyMessages(raws)
	got, errNew := harmonyMessages(req.Messages)
	if errOld != nil && errNew != nil && goTypeErrors(list) > 1 {
		// encoding/json reported the first wrongly typed member in
		// document order, which a typed message does not keep; either
		// is refused, with the same parameter.
		var b1, b2 *BadRequestError
		if !errors.As(errOld, &b1) || !errors.As(errNew, &b2) || b1.Param != b2.Param {
			t.Fatalf("%s Harmony:\n typed error %s\n json error  %s", messages, clientErr(errNew), clientErr(errOld))
		}
		return
	}
	if e1, e2 := clientErr(errOld), clientErr(errNew); e1 != e2 {
		t.Fatalf("%s Harmony:\n typed error %s\n json error  %s", messages, e2, e1)
	}
	if errOld == nil && !reflect.DeepEqual(old, got) {
		t.Fatalf("%s Harmony:\n typed %+v\n json  %+v", messages, got, old)
	}
}

// clientErr is an error with the fields a client sees.
func clientErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	var br *BadRequestError
	if errors.As(err, &br) {
		return fmt.Sprintf("400 param=%q %s", br.Param, br.Message)
	}
	return fmt.Sprintf("%T %v", err, err)
}

func dumpNodes(msgs []*node) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(nodeJSON(m))
		b.WriteByte('\n')
	}
	return b.String()
}

// goTypeErrors is the most members of one message the old Harmony
// decoder refused for their type, each decoded alone.
func goTypeErrors(list *node) int {
	most := 0
	for _, m := range list.Arr {
		n := 0
		for i, k := range m.Keys {
			one := append(append(wire.AppendString([]byte{'{'}, k), ':'), m.Vals[i].Raw...)
			var hm harmonyMessage
			if json.Unmarshal(append(one, '}'), &hm) != nil {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// goCaseFolds reports a member name the old Harmony decoder
// (encoding/json) would have matched to a field case-insensitively.
func goCaseFolds(list *node) bool {
	fields := []string{"role", "content", "reasoning", "tool_calls", "tool_call_id", "id", "function", "name", "arguments", "text"}
	var walk func(n *node) bool
	walk = func(n *node) bool {
		for i, k := range n.Keys {
			for _, f := range fields {
				if k != f && strings.EqualFold(k, f) {
					return true
				}
			}
			if walk(n.Vals[i]) {
				return true
			}
		}
		for _, v := range n.Arr {
			if walk(v) {
				return true
			}
		}
		return false
	}
	return walk(list)
}

// TestTypedMessagesMatchTrees holds render's reading of typed messages to
// the tree reading it replaced, on the parity conversations and on
// messages reaching every error.
func TestTypedMessagesMatchTrees(t *testing.T) {
	n := 0
	for _, c := range loadConversations(t) {
		root, err := wire.Parse(c.Request)
		if err != nil {
			t.Fatal(err)
		}
		if msgs, ok := root.Get("messages"); ok {
			messagesDiff(t, msgs.Raw)
			n++
		}
	}
	if n < 30 {
		t.Fatalf("only %d conversations", n)
	}
	for _, c := range messageDiffCases {
		if !json.Valid([]byte(c)) {
			t.Fatalf("bad case %s", c)
		}
		messagesDiff(t, []byte(c))
	}
}

// FuzzTypedMessagesMatchTrees: on any messages array, the typed path
// gives the template input, images and error the tree reading gave.
func FuzzTypedMessagesMatchTrees(f *testing.F) {
	for _, c := range messageDiffCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, messages string) {
		if !json.Valid([]byte(messages)) {
			return
		}
		messagesDiff(t, []byte(messages))
	})
}
