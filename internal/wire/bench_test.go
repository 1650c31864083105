package wire

import (
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/internal/testenv"
)

// benchBody is the /v1/chat/completions/render body of a benchmark
// conversation, as bench's chatRenderBody writes it.
func benchBody(tb testing.TB, s benchdata.Size) []byte {
	q := benchdata.Conversation(s)
	b, err := json.Marshal(map[string]any{"model": "m", "messages": q.Messages, "tools": q.Tools,
		"add_generation_prompt": q.AddGenerationPrompt})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// benchTexts are the message contents of the 9k conversation.
func benchTexts(tb testing.TB) []string {
	var out []string
	for _, m := range benchdata.Conversation(benchdata.Sizes[1]).Messages {
		var v struct{ Content string }
		if err := json.Unmarshal(m, &v); err != nil {
			tb.Fatal(err)
		}
		out = append(out, v.Content)
	}
	return out
}

// cjkText is text with few ASCII bytes, where skipping ASCII by words
// must not cost more than it saves.
var cjkText = strings.Repeat("天气服务器请求погода сервер", 200)

// escText is escape-dense text (JSON held in a string, as tool call
// arguments are), where runs of plain bytes are short.
var escText = strings.Repeat("{\"city\": \"Paris\", \"unit\": \"celsius\"}\n\théllo \"wörld\"\n", 100)

// benchIDs are n token ids spread like a real prompt's: most below
// 20,000, the rest anywhere in a 152k vocabulary.
func benchIDs(n int) []int {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]int, n)
	for i := range ids {
		if rng.IntN(4) == 0 {
			ids[i] = rng.IntN(152064)
		} else {
			ids[i] = rng.IntN(20000)
		}
	}
	return ids
}

// The benchmarks run the current function (impl=new) beside the reference
// copy in ref_test.go (impl=ref) so that one run gives the ratio:
// benchstat -col /impl. Besides ns/op (wall time, which other processes
// on a shared machine inflate) they report cpu-ns/op, the process's CPU
// time per operation, garbage collection included.

// loop runs f b.N times and reports the process CPU time per call.
func loop(b *testing.B, f func()) {
	b.ReportAllocs()
	start := testenv.CPUTime(b)
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(testenv.CPUTime(b)-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkParse(b *testing.B) {
	esc, err := json.Marshal(map[string]string{"arguments": escText})
	if err != nil {
		b.Fatal(err)
	}
	// A 1280x720 screenshot as a data URL: 1.9 MB of base64 in one string.
	shot := make([]byte, 1472378)
	for i := range shot {
		shot[i] = byte(i * 2654435761 >> 13)
	}
	dataURL := []byte(`{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(shot) + `"}`)
	bodies := map[string][]byte{"cjk": []byte(`{"content":"` + cjkText + `"}`), "esc": esc, "dataurl": dataURL}
	names := []string{"cjk", "esc", "dataurl"}
	for _, s := range benchdata.Sizes {
		bodies[s.Name] = benchBody(b, s)
		names = append(names, s.Name)
	}
	for _, name := range names {
		body := bodies[name]
		for _, impl := range []struct {
			name  string
			parse func([]byte) (*Node, error)
		}{{"ref", refParse}, {"new", Parse}, {"utf8", ParseUTF8}} {
			b.Run("body="+name+"/impl="+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				loop(b, func() {
					if _, err := impl.parse(body); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

func BenchmarkValid(b *testing.B) {
	body := benchBody(b, benchdata.Sizes[1])
	for _, impl := range []struct {
		name  string
		valid func([]byte) error
	}{{"ref", refValid}, {"new", Valid}} {
		b.Run("body=9k/impl="+impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			loop(b, func() {
				if err := impl.valid(body); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkAppendInts(b *testing.B) {
	ids := benchIDs(8900)
	buf := make([]byte, 0, 64<<10)
	for _, impl := range []struct {
		name string
		fn   func([]byte, []int) []byte
	}{{"ref", refAppendInts}, {"new", AppendInts}} {
		b.Run("ids=8900/impl="+impl.name, func(b *testing.B) {
			loop(b, func() { buf = impl.fn(buf[:0], ids) })
		})
	}
}

func BenchmarkAppendString(b *testing.B) {
	for _, text := range []struct {
		name  string
		texts []string
	}{{"9k", benchTexts(b)}, {"cjk", []string{cjkText}}, {"esc", []string{escText}}} {
		benchAppendString(b, text.name, text.texts)
	}
}

func benchAppendString(b *testing.B, name string, texts []string) {
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	buf := make([]byte, 0, 128<<10)
	for _, impl := range []struct {
		name string
		fn   func([]byte, string) []byte
	}{{"ref", refAppendString}, {"new", AppendString}, {"ascii-ref", refAppendStringASCII}, {"ascii-new", AppendStringASCII}} {
		b.Run("text="+name+"/impl="+impl.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			loop(b, func() {
				buf = buf[:0]
				for _, s := range texts {
					buf = impl.fn(buf, s)
				}
			})
		})
	}
}
