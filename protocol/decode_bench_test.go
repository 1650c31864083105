package protocol

import "testing"

// decodeBenchBody is a chat body with the members protocol reads as
// trees: messages, tools, kwargs objects, response_format, logit_bias.
const decodeBenchBody = `{"model":"qwen","messages":[{"role":"system","content":"You are terse."},` +
	`{"role":"user","content":[{"type":"text","text":"What is in the picture?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},` +
	`{"role":"assistant","content":"A cat.","tool_calls":[{"id":"c1","type":"function","function":{"name":"look","arguments":"{\"at\": \"cat\"}"}}]},` +
	`{"role":"tool","tool_call_id":"c1","content":"ok"}],` +
	`"tools":[{"type":"function","function":{"name":"look","description":"Look.","parameters":{"type":"object","properties":{"at":{"type":"string"}},"required":["at"]}}}],` +
	`"tool_choice":"auto","temperature":0.7,"top_p":0.9,"max_tokens":256,"stop":["\n\n"],"logit_bias":{"11":-5,"12":2.5},` +
	`"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object"}}},` +
	`"chat_template_kwargs":{"enable_thinking":false},"mm_processor_kwargs":{"max_pixels":802816},` +
	`"media_io_kwargs":{"image":{"rgba_background_color":[0,0,0]}},"vllm_xargs":{"a":1,"b":["x",2]},"documents":[{"title":"t","text":"x"}]}`

func BenchmarkDecodeChatCompletionRequest(b *testing.B) {
	body := []byte(decodeBenchBody)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeChatCompletionRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}
