// Package benchdata builds the chat requests of vrender's render
// benchmarks. It is shared by the Go benchmarks in package render and by
// `vrender bench render` (package bench), which imports render; keeping the
// generator here avoids an import cycle and a second copy.
package benchdata

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Request is the part of an OpenAI chat request the benchmarks send; it
// marshals to the request body the reference renderer reads.
type Request struct {
	Messages            []json.RawMessage `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	AddGenerationPrompt bool              `json:"add_generation_prompt"`
}

// Size is one benchmark conversation.
type Size struct {
	Name     string // label for tables and sub-benchmarks
	Messages int    // messages in the conversation, system prompt included
	Words    int    // words in each ordinary message
}

// Sizes are the two conversations: about 1,000 and 9,000 prompt
// tokens with the Qwen3 template and tokenizer, the second with 80 messages.
var Sizes = []Size{
	{Name: "1k", Messages: 10, Words: 53},
	{Name: "9k", Messages: 80, Words: 86},
}

// Tools are the function tools every benchmark request offers.
var Tools = []json.RawMessage{
	json.RawMessage(`{"type":"function","function":{"name":"get_weather","description":"Get the current weather for a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]}}}`),
	json.RawMessage(`{"type":"function","function":{"name":"search","description":"Search the web and return the top results.","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":20}},"required":["query"]}}}`),
	json.RawMessage(`{"type":"function","function":{"name":"create_ticket","description":"Open a support ticket in the tracker.","parameters":{"type":"object","properties":{"title":{"type":"string"},"priority":{"type":"string","enum":["low","normal","high"]},"labels":{"type":"array","items":{"type":"string"}}},"required":["title"]}}}`),
}

// words is the vocabulary of the generated messages: English prose with
// some accented, CJK and Cyrillic words and numbers, so the tokenizer sees
// multi-byte text and the template sees non-ASCII strings.
var words = strings.Fields("the request response token model cache stream parser server client latency " +
	"throughput batch queue worker replica prompt template message tool call result error timeout retry " +
	"config region account order user session window buffer offset weather city rain forecast today " +
	"tomorrow because however which should would could about after before again always never " +
	"is are was were be has have had do does did not and or but with from into over under " +
	"café naïve über résumé 天气 服务器 请求 погода сервер 42 3.14 2025 17:30 99.9%")

// Conversation builds the request of one size. It is deterministic: the
// same size always gives the same bytes.
func Conversation(s Size) Request {
	rng := rand.New(rand.NewPCG(uint64(s.Messages), uint64(s.Words)))
	q := Request{Tools: Tools, AddGenerationPrompt: true}
	add := func(v map[string]any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("benchdata: marshal message: %v", err)) // only maps of strings and slices
		}
		q.Messages = append(q.Messages, b)
	}
	add(map[string]any{"role": "system", "content": "You are a helpful assistant. " + text(rng, s.Words)})
	// Turns fill all but the last message, which is the user's question the
	// generation prompt answers. Every third turn calls a tool: user,
	// assistant tool call, tool result, assistant answer.
	for turn := 0; len(q.Messages) < s.Messages-1; turn++ {
		room := s.Messages - 1 - len(q.Messages)
		add(map[string]any{"role": "user", "content": text(rng, s.Words)})
		switch {
		case room == 1:
		case turn%3 == 2 && room >= 4:
			id := fmt.Sprintf("call_%04d", turn)
			name, args, result := toolCall(rng, turn)
			add(map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
				map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}},
			}})
			add(map[string]any{"role": "tool", "tool_call_id": id, "content": result})
			add(map[string]any{"role": "assistant", "content": text(rng, s.Words)})
		default:
			add(map[string]any{"role": "assistant", "content": text(rng, s.Words), "reasoning_content": text(rng, s.Words/3)})
		}
	}
	add(map[string]any{"role": "user", "content": text(rng, s.Words)})
	return q
}

// toolCall returns a call of one of Tools, its arguments as the JSON string
// clients send, and a JSON tool result.
func toolCall(rng *rand.Rand, turn int) (name, args, result string) {
	var a, r map[string]any
	switch turn % 3 {
	case 0:
		name = "get_weather"
		a = map[string]any{"city": pick(rng, []string{"Paris", "Zürich", "東京", "Москва"}), "unit": "celsius"}
		r = map[string]any{"temperature": rng.IntN(35), "sky": pick(rng, []string{"clear", "cloudy", "rain"}), "wind_kmh": rng.IntN(60)}
	case 1:
		name = "search"
		a = map[string]any{"query": text(rng, 6), "limit": 1 + rng.IntN(10)}
		hits := make([]any, 3)
		for i := range hits {
			hits[i] = map[string]any{"title": text(rng, 5), "url": fmt.Sprintf("https://example.com/%d", rng.IntN(1e6)), "snippet": text(rng, 15)}
		}
		r = map[string]any{"results": hits}
	default:
		name = "create_ticket"
		a = map[string]any{"title": text(rng, 7), "priority": pick(rng, []string{"low", "normal", "high"}), "labels": []string{pick(rng, words), pick(rng, words)}}
		r = map[string]any{"id": fmt.Sprintf("TCK-%d", rng.IntN(1e5)), "status": "open"}
	}
	ab, err := json.Marshal(a)
	if err != nil {
		panic(fmt.Sprintf("benchdata: marshal arguments: %v", err))
	}
	rb, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("benchdata: marshal result: %v", err))
	}
	return name, string(ab), string(rb)
}

// text returns n random words as sentences of 6 to 17 words.
func text(rng *rand.Rand, n int) string {
	var b strings.Builder
	for i, left := 0, 0; i < n; i++ {
		w := pick(rng, words)
		if left == 0 {
			if i > 0 {
				b.WriteString(". ")
			}
			left = 6 + rng.IntN(12)
			w = capitalize(w)
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		left--
	}
	b.WriteByte('.')
	return b.String()
}

// capitalize upper-cases the first character of w.
func capitalize(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}

func pick[T any](rng *rand.Rand, pool []T) T { return pool[rng.IntN(len(pool))] }
