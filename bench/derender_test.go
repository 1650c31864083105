package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/protocol"
)

// TestDerenderTiny runs the whole benchmark at tiny sizes: every client's
// stream must reach the batch answer, and the checkpoint-only body must
// not grow with the output (a few bytes of varint widths aside).
func TestDerenderTiny(t *testing.T) {
	dir := testenv.ModelDir(t, "qwen3")
	r, err := Derender(context.Background(), DerenderOptions{ModelDir: dir, Sizes: []int{120, 480}, MinTime: time.Millisecond, HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 2 {
		t.Fatalf("%d results", len(r.Results))
	}
	for _, x := range r.Results {
		if !x.StreamEqualsBatch {
			t.Errorf("%d tokens: a stream did not reach the batch answer", x.Tokens)
		}
		if x.BatchNsPerToken <= 0 || x.StreamNsPerToken <= 0 || x.SessionNsPerToken <= 0 || x.SessionRatio <= 0 || x.HTTPEchoNsPerCall <= 0 || x.HTTPCheckpointNsPerCall <= 0 {
			t.Errorf("%d tokens: missing figures %+v", x.Tokens, x)
		}
	}
	small, large := r.Results[0], r.Results[1]
	if large.CheckpointMaxBodyBytes > small.CheckpointMaxBodyBytes+64 || large.EchoMaxBodyBytes > small.EchoMaxBodyBytes+64 {
		t.Errorf("checkpoint bodies grew: %d -> %d (echo %d -> %d)", small.CheckpointMaxBodyBytes, large.CheckpointMaxBodyBytes,
			small.EchoMaxBodyBytes, large.EchoMaxBodyBytes)
	}
	if large.HistoryMaxBodyBytes <= small.HistoryMaxBodyBytes {
		t.Errorf("history bodies did not grow: %d -> %d", small.HistoryMaxBodyBytes, large.HistoryMaxBodyBytes)
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil || !strings.Contains(out.String(), "session/batch") {
		t.Fatalf("table: %v\n%s", err, out.String())
	}
}

// BenchmarkDerenderStreamEcho is one-token streaming through the package
// API with a client echoing stream_state as returned, with one echoing
// only the checkpoint, and through an in-process session, for profiling.
func BenchmarkDerenderStreamEcho(b *testing.B) {
	m := testmodel.Load(b, "qwen3")
	cr, err := protocol.DecodeChatCompletionRequest([]byte(derenderChatRequest))
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name    string
		echo    echoMode
		session bool // ChatSession.Push instead of the stream_state protocol
	}{{"echo", echoAll, false}, {"checkpoint", echoCheckpoint, false}, {"session", 0, true}} {
		b.Run(mode.name, func(b *testing.B) {
			e, err := newBenchEngine(m, benchParsers, 256)
			if err != nil {
				b.Fatal(err)
			}
			c := &apiClient{cr: cr, prompt: derenderPrompt, ids: DerenderOutput(m, 1024)}
			for b.Loop() {
				var err error
				if mode.session {
					_, err = c.session(e, false)
				} else {
					_, err = c.stream(context.Background(), e, mode.echo, false)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.ids)), "ns/token")
		})
	}
}

// BenchmarkDerenderHTTP is one-token streaming through the chat derender
// endpoint (in process), for profiling the per-call cost.
func BenchmarkDerenderHTTP(b *testing.B) {
	m := testmodel.Load(b, "qwen3")
	ids := DerenderOutput(m, 1024)
	for _, mode := range []struct {
		name string
		echo echoMode
	}{{"echo", echoAll}, {"checkpoint", echoCheckpoint}} {
		b.Run(mode.name, func(b *testing.B) {
			h, err := newBenchHandler(m, benchParsers)
			if err != nil {
				b.Fatal(err)
			}
			var maxBody int
			var clk serverClock
			for b.Loop() {
				if err := httpStream(&clk, h, derenderChatRequest, derenderPrompt, ids, mode.echo, &maxBody); err != nil {
					b.Fatal(err)
				}
			}
			// The handler's CPU alone: the client's request building and
			// reply decoding are outside clk.
			b.ReportMetric(float64(clk.cpu.Nanoseconds())/float64(b.N)/float64(len(ids)), "server-cpu-ns/call")
		})
	}
}
