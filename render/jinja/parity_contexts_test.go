package jinja

// parityContext is one render input of the parity matrix: a raw context
// object (JSON, key order kept) to which the template's bos/eos are added.
type parityContext struct {
	name string
	json string
}

const (
	ctxSysUser = `"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What is the weather in Paris?"}]`
	ctxTools   = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Get the current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","description":"Temperature unit","enum":["celsius","fahrenheit"]},"options":{"type":"object","description":"Extra options","properties":{"days":{"type":"integer","description":"Forecast days","minimum":1,"maximum":7.5},"hourly":{"type":"boolean","description":"Hourly data"}}},"tags":{"type":"array","description":"Tags","items":{"type":"string"}}},"required":["city"]}}},{"type":"function","function":{"name":"search","description":"Search the web.","parameters":{"type":"object","properties":{"query":{"type":"string","description":"Query text"}},"required":["query"]}}}]`
	ctxCall    = `{"role":"assistant","content":"","tool_calls":[{"id":"call12345","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris","unit":"celsius"}}}]}`
	ctxResult  = `{"role":"tool","tool_call_id":"call12345","name":"get_weather","content":"{\"temperature\": 21, \"sky\": \"clear\"}"}`
)

var parityContexts = []parityContext{
	{"sys_user", `{` + ctxSysUser + `,"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"user_only", `{"messages":[{"role":"user","content":"Hello!"}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"user_no_gen", `{"messages":[{"role":"user","content":"Hello!"}],"tools":null,"documents":null,"add_generation_prompt":false}`},
	{"multi_turn", `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello! How can I help?"},{"role":"user","content":"Tell me a joke."}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"multi_turn_sys_end_assistant", `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"}],"tools":null,"documents":null,"add_generation_prompt":false}`},
	{"tools_user", `{` + ctxSysUser + `,` + ctxTools + `,"documents":null,"add_generation_prompt":true}`},
	{"tools_user_nosys", `{"messages":[{"role":"user","content":"Weather in Oslo?"}],` + ctxTools + `,"documents":null,"add_generation_prompt":true}`},
	{"tool_call_roundtrip", `{"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What is the weather in Paris?"},` + ctxCall + `,` + ctxResult + `],` + ctxTools + `,"documents":null,"add_generation_prompt":true}`},
	{"parallel_tool_calls", `{"messages":[{"role":"user","content":"Weather in Paris and search news"},{"role":"assistant","content":null,"tool_calls":[{"id":"call12345","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris","options":{"days":3,"hourly":false},"tags":["a","b"]}}},{"id":"call67890","type":"function","function":{"name":"search","arguments":{"query":"news \"today\""}}}]},{"role":"tool","tool_call_id":"call12345","content":"sunny"},{"role":"tool","tool_call_id":"call67890","content":"nothing happened"}],` + ctxTools + `,"documents":null,"add_generation_prompt":true}`},
	{"tool_call_then_answer", `{"messages":[{"role":"user","content":"Weather?"},` + ctxCall + `,` + ctxResult + `,{"role":"assistant","content":"It is 21 degrees and clear."},{"role":"user","content":"Thanks"}],` + ctxTools + `,"documents":null,"add_generation_prompt":true}`},
	{"reasoning_history", `{"messages":[{"role":"user","content":"What is 3*7?"},{"role":"assistant","content":"21","reasoning_content":"3 times 7 is 21."},{"role":"user","content":"And 4*5?"}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"think_in_content", `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"<think>\nThe user greets me.\n</think>\n\nHello there!"},{"role":"user","content":"Bye"}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"enable_thinking_false", `{"messages":[{"role":"user","content":"Quick answer: capital of Spain?"}],"tools":null,"documents":null,"add_generation_prompt":true,"enable_thinking":false}`},
	{"enable_thinking_true", `{"messages":[{"role":"user","content":"Think hard: 17*23?"}],"tools":null,"documents":null,"add_generation_prompt":true,"enable_thinking":true,"thinking":true}`},
	{"unicode", `{"messages":[{"role":"system","content":"Réponds en français — s'il te plaît « merci »."},{"role":"user","content":"你好，世界 🌍 \"quoted\" back\\slash <b>tag</b> </s> tab\there"}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"empty_content", `{"messages":[{"role":"system","content":""},{"role":"user","content":""}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"content_parts", `{"messages":[{"role":"system","content":[{"type":"text","text":"You are terse."}]},{"role":"user","content":[{"type":"text","text":"Describe"},{"type":"text","text":" this."}]}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"content_image", `{"messages":[{"role":"user","content":[{"type":"image"},{"type":"text","text":"What is in the image?"}]}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"documents", `{"messages":[{"role":"user","content":"Summarise the documents."}],"tools":null,"documents":[{"title":"Doc A","text":"Alpha text."},{"title":"Doc B","text":"Beta text."}],"add_generation_prompt":true}`},
	{"tool_no_params", `{"messages":[{"role":"user","content":"Ping"}],"tools":[{"type":"function","function":{"name":"ping","description":"Ping the server.","parameters":{"type":"object","properties":{}}}}],"documents":null,"add_generation_prompt":true}`},
	{"string_arguments", `{"messages":[{"role":"user","content":"Weather?"},{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call12345","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Rome\"}"}}]},{"role":"tool","tool_call_id":"call12345","content":"rainy"}],` + ctxTools + `,"documents":null,"add_generation_prompt":false}`},
	{"numbers_in_args", `{"messages":[{"role":"user","content":"Compute"},{"role":"assistant","content":"","tool_calls":[{"id":"call00001","type":"function","function":{"name":"search","arguments":{"a":1,"b":1.5,"c":1e-07,"d":1e16,"e":true,"f":null,"g":[1,[2.0,3]],"h":{"x":-0.0},"i":12345678901234567890}}}]},{"role":"tool","tool_call_id":"call00001","content":"ok"}],` + ctxTools + `,"documents":null,"add_generation_prompt":true}`},
	{"long_conversation", `{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"u1"},{"role":"assistant","content":"a1"},{"role":"user","content":"u2"},{"role":"assistant","content":"a2"},{"role":"user","content":"u3"},{"role":"assistant","content":"a3"},{"role":"user","content":"u4"},{"role":"assistant","content":"a4"},{"role":"user","content":"u5"}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"system_only", `{"messages":[{"role":"system","content":"Only a system prompt."}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"extra_fields", `{"messages":[{"role":"user","content":"Hi","name":"alice"},{"role":"assistant","content":"Hello alice","name":"bot"},{"role":"user","content":"Again"}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"llama_kwargs", `{` + ctxSysUser + `,` + ctxTools + `,"documents":null,"add_generation_prompt":true,"tools_in_user_message":false,"date_string":"01 Feb 2025","builtin_tools":["brave_search","wolfram_alpha"]}`},
	{"gptoss_kwargs", `{"messages":[{"role":"developer","content":"Answer in haiku."},{"role":"user","content":"Spring?"},{"role":"assistant","content":"Blossoms fall","thinking":"A haiku about spring."},{"role":"user","content":"Winter?"}],"tools":null,"documents":null,"add_generation_prompt":true,"reasoning_effort":"high","model_identity":"You are TestGPT."}`},
	{"continue_final", `{"messages":[{"role":"user","content":"Write a poem"},{"role":"assistant","content":"Roses are red,","reasoning_content":"Start classic."}],"tools":null,"documents":null,"add_generation_prompt":false}`},
	{"whitespace_content", `{"messages":[{"role":"system","content":"  padded system \n\n"},{"role":"user","content":"\n  spaced question  \n"},{"role":"assistant","content":"\n\n  answer with trailing\n  "},{"role":"user","content":"/no_think tell me more /think"}],"tools":null,"documents":null,"add_generation_prompt":true}`},
	{"tools_reasoning_calls", `{"messages":[{"role":"system","content":"Use tools. /think"},{"role":"user","content":"Weather in Paris?"},{"role":"assistant","content":"Let me check.","reasoning_content":"Need weather tool.","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},{"role":"tool","content":"21C"},{"role":"assistant","content":"It's 21C.","reasoning_content":"Tool said 21C."},{"role":"user","content":"And tomorrow?"}],` + ctxTools + `,"documents":null,"add_generation_prompt":true,"enable_thinking":true}`},
}
