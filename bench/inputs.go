package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The two standard tokenizer benchmark inputs. Both are generated from a
// fixed seed, so every run and every machine measures the same bytes.
const (
	// ChatPromptBytes is sized so the chat prompt is about 9,000 tokens for
	// the Qwen3 tokenizer (≈4 bytes per token on this mix).
	ChatPromptBytes = 34 << 10
	// MixedTextBytes is the size of the mixed-text input.
	MixedTextBytes = 1 << 20
)

// Input is one benchmark input file.
type Input struct {
	Name string // short label for the table
	Path string
}

// WriteStandardInputs generates chat_prompt.txt and mixed_1mb.txt into dir.
func WriteStandardInputs(dir string) ([]Input, error) {
	inputs := []struct {
		name, file, text string
	}{
		{ChatPromptName, "chat_prompt.txt", ChatPrompt()},
		{"mixed 1 MB", "mixed_1mb.txt", MixedText(MixedTextBytes)},
	}
	var out []Input
	for _, in := range inputs {
		path := filepath.Join(dir, in.file)
		if err := os.WriteFile(path, []byte(in.text), 0o644); err != nil {
			return nil, fmt.Errorf("write benchmark input: %w", err)
		}
		out = append(out, Input{Name: in.name, Path: path})
	}
	return out, nil
}

// paragraphs are short hand-written texts in the languages and registers a
// chat model sees; the generators recombine them.
var paragraphs = []string{
	"The committee reviewed the proposal on Tuesday and agreed to postpone the vote until the budget figures were confirmed. Several members asked whether the new schedule would affect the contractors already on site.",
	"If you're running the service behind a load balancer, make sure the health check hits /healthz rather than the root path; otherwise a slow template render can mark the replica as down.",
	"Die Ergebnisse der Studie zeigen, dass sich die Reaktionszeit bei höherer Last kaum verändert. Größere Unterschiede gab es nur bei sehr kurzen Anfragen.",
	"Le modèle a été entraîné sur des données multilingues ; il répond correctement à la plupart des questions, mais il lui arrive d'inventer des références.",
	"El equipo publicó la nueva versión el lunes. ¿Podrías revisar si los cambios en la configuración afectan a los clientes que todavía usan la API antigua?",
	"Esta é uma frase em português com acentuação: ação, coração, não, você.",
	"Система обрабатывает запросы параллельно, но порядок ответов сохраняется. Ошибки записываются в журнал вместе с идентификатором запроса.",
	"Η απόδοση του συστήματος βελτιώθηκε σημαντικά μετά την αλλαγή του αλγορίθμου.",
	"يعمل النظام على معالجة الطلبات بشكل متوازٍ، مع الحفاظ على ترتيب الردود.",
	"המערכת מעבדת בקשות במקביל ושומרת על סדר התשובות.",
	"यह प्रणाली अनुरोधों को समानांतर में संसाधित करती है और उत्तरों का क्रम बनाए रखती है।",
	"ระบบประมวลผลคำขอแบบขนานและรักษาลำดับของคำตอบไว้",
	"该系统并行处理请求，同时保持响应的顺序。错误会连同请求标识符一起写入日志。",
	"このシステムはリクエストを並列に処理し、レスポンスの順序を保ちます。エラーはリクエストIDと一緒にログに記録されます。",
	"이 시스템은 요청을 병렬로 처리하면서 응답 순서를 유지합니다.",
	"Hệ thống xử lý các yêu cầu song song và giữ nguyên thứ tự phản hồi.",
	"Sistem ini memproses permintaan secara paralel dan menjaga urutan respons.",
	"Great job on the release 🎉🚀! The team 👩‍💻👨‍💻 fixed 42 bugs 🐛 and the dashboard 📊 finally loads in under 200 ms ⚡.",
}

// codeBlocks are fenced code snippets in several languages.
var codeBlocks = []string{
	"```go\nfunc (c *Cache) Get(key string) (Value, bool) {\n\tc.mu.RLock()\n\tdefer c.mu.RUnlock()\n\tv, ok := c.items[key]\n\treturn v, ok\n}\n```",
	"```python\ndef top_k(scores: dict[str, float], k: int = 5) -> list[tuple[str, float]]:\n    return sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[:k]\n```",
	"```javascript\nconst retry = async (fn, n = 3) => {\n  for (let i = 0; i < n; i++) {\n    try { return await fn(); } catch (e) { if (i === n - 1) throw e; }\n  }\n};\n```",
	"```rust\npub fn parse(input: &str) -> Result<Vec<Token>, Error> {\n    input.split_whitespace().map(Token::from_str).collect()\n}\n```",
	"```sql\nSELECT region, SUM(amount) AS total\nFROM sales\nWHERE sold_at >= DATE '2024-01-01'\nGROUP BY region\nORDER BY total DESC\nLIMIT 10;\n```",
	"```bash\nfor f in logs/*.gz; do\n  zcat \"$f\" | grep -c ERROR\ndone | sort -n | tail -3\n```",
}

// benchWords feeds the random identifiers, keys and sentences that keep the
// inputs from being a few paragraphs repeated: word caches would make such
// input unrealistically cheap.
var benchWords = strings.Fields("request response token model cache stream parser handler server client " +
	"latency throughput batch queue worker replica engine prompt template message tool call argument " +
	"result error timeout retry config region account invoice order user session window buffer offset")

// ChatPrompt returns the chat benchmark input: a ChatML conversation with a
// tool-calling system prompt, multilingual turns, code, JSON tool calls and
// tool responses, about 9,000 Qwen3 tokens.
func ChatPrompt() string {
	rng := rand.New(rand.NewPCG(9000, 1))
	var sb strings.Builder
	sb.WriteString("<|im_start|>system\nYou are a helpful assistant that can call tools.\n\n# Tools\n\n" +
		"You may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n")
	for i := 0; i < 6; i++ {
		sb.WriteString(toolSchema(rng, i))
		sb.WriteByte('\n')
	}
	sb.WriteString("</tools>\n\nFor each function call, return a json object with function name and arguments " +
		"within <tool_call></tool_call> XML tags.<|im_end|>\n")
	for turn := 0; sb.Len() < ChatPromptBytes; turn++ {
		sb.WriteString("<|im_start|>user\n")
		sb.WriteString(pick(rng, paragraphs))
		if turn%3 == 1 {
			sb.WriteString("\n\n")
			sb.WriteString(pick(rng, codeBlocks))
		}
		sb.WriteString("<|im_end|>\n<|im_start|>assistant\n")
		if turn%4 == 0 {
			sb.WriteString("<think>\n")
			sb.WriteString(sentence(rng, 20+rng.IntN(30)))
			sb.WriteString("\n</think>\n\n")
		}
		if turn%2 == 0 {
			call, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("tool_%d", rng.IntN(6)), "arguments": randomObject(rng, 2)})
			fmt.Fprintf(&sb, "<tool_call>\n%s\n</tool_call><|im_end|>\n", call)
			result, _ := json.MarshalIndent(randomObject(rng, 3), "", "  ")
			fmt.Fprintf(&sb, "<|im_start|>user\n<tool_response>\n%s\n</tool_response><|im_end|>\n<|im_start|>assistant\n", result)
		}
		sb.WriteString(pick(rng, paragraphs))
		sb.WriteString(" ")
		sb.WriteString(sentence(rng, 10+rng.IntN(20)))
		if turn%3 == 2 {
			sb.WriteString("\n\n")
			sb.WriteString(pick(rng, codeBlocks))
		}
		sb.WriteString("<|im_end|>\n")
	}
	sb.WriteString("<|im_start|>assistant\n")
	return sb.String()
}

// MixedText returns size bytes (cut at a character boundary, padded with
// newlines) of prose in many languages, code, JSON, tables, numbers and emoji.
func MixedText(size int) string {
	rng := rand.New(rand.NewPCG(1<<20, 2))
	var sb strings.Builder
	sb.Grow(size + 4096)
	for sb.Len() < size {
		switch rng.IntN(8) {
		case 0, 1, 2:
			sb.WriteString(pick(rng, paragraphs))
		case 3:
			sb.WriteString(pick(rng, codeBlocks))
		case 4:
			data, _ := json.Marshal(randomObject(rng, 3))
			sb.Write(data)
		case 5:
			for r := 0; r < 4; r++ {
				fmt.Fprintf(&sb, "| %s | %d | %.3f | %s |\n", pick(rng, benchWords), rng.IntN(100000), rng.Float64()*1000, pick(rng, benchWords))
			}
		case 6:
			sb.WriteString(sentence(rng, 30+rng.IntN(40)))
		case 7:
			fmt.Fprintf(&sb, "Order #%d shipped on 2024-%02d-%02d for $%d.%02d (ref %x).", rng.IntN(1e6), 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(5000), rng.IntN(100), rng.Uint32())
		}
		sb.WriteString(pick(rng, []string{"\n\n", "\n", " ", "\r\n", "\n\n\n"}))
	}
	s := sb.String()
	cut := size
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + strings.Repeat("\n", size-cut)
}

// sentence strings together n random words with punctuation.
func sentence(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		w := pick(rng, benchWords)
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			sb.WriteByte(' ')
		}
		sb.WriteString(w)
		switch rng.IntN(12) {
		case 0:
			sb.WriteByte(',')
		case 1:
			fmt.Fprintf(&sb, "_%d", rng.IntN(1000))
		}
	}
	sb.WriteByte('.')
	return sb.String()
}

func toolSchema(rng *rand.Rand, i int) string {
	props := map[string]any{}
	for j := 0; j < 2+rng.IntN(4); j++ {
		props[pick(rng, benchWords)] = map[string]any{"type": pick(rng, []string{"string", "integer", "number", "boolean"}), "description": sentence(rng, 6)}
	}
	data, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]any{
		"name": fmt.Sprintf("tool_%d", i), "description": sentence(rng, 12),
		"parameters": map[string]any{"type": "object", "properties": props},
	}})
	return string(data)
}

func randomObject(rng *rand.Rand, depth int) map[string]any {
	obj := map[string]any{}
	for i := 0; i < 2+rng.IntN(4); i++ {
		key := pick(rng, benchWords)
		switch k := rng.IntN(6); {
		case k == 0 && depth > 0:
			obj[key] = randomObject(rng, depth-1)
		case k == 1:
			obj[key] = rng.IntN(100000)
		case k == 2:
			obj[key] = rng.Float64() * 100
		case k == 3:
			obj[key] = []any{pick(rng, benchWords), rng.IntN(10), rng.IntN(2) == 0}
		default:
			obj[key] = prefixRunes(pick(rng, paragraphs), 20+rng.IntN(40))
		}
	}
	return obj
}

// prefixRunes returns the first n characters of s.
func prefixRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func pick[T any](rng *rand.Rand, pool []T) T { return pool[rng.IntN(len(pool))] }
