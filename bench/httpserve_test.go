package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/internal/benchdata"
)

func TestParseProcIO(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{"kernel format", "rchar: 100\nwchar: 200\nsyscr: 7\nsyscw: 5\nread_bytes: 0\n", 12, false},
		{"missing syscw", "rchar: 1\nsyscr: 7\n", 0, true},
		{"bad number", "syscr: x\nsyscw: 1\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcIO([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseProcIO = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestPromValue(t *testing.T) {
	body := []byte("# HELP go_memstats_mallocs_total x\n# TYPE go_memstats_mallocs_total counter\n" +
		"go_memstats_mallocs_total_extra 9\ngo_memstats_mallocs_total 1.234e+06\ngo_goroutines 7\n")
	if v, ok := promValue(body, "go_memstats_mallocs_total"); !ok || v != 1.234e6 {
		t.Fatalf("promValue = %v, %v", v, ok)
	}
	if _, ok := promValue(body, "absent"); ok {
		t.Fatal("promValue found an absent metric")
	}
}

// contents returns the content strings of q's messages.
func contents(t *testing.T, q benchdata.Request) []string {
	t.Helper()
	var out []string
	for _, raw := range q.Messages {
		var m struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Content)
	}
	return out
}

func TestColdConversationNeverRepeatsText(t *testing.T) {
	base := benchdata.Conversation(benchdata.Sizes[0])
	seen := map[string]int{}
	size := -1
	for i := -1; i < 50; i++ {
		q, err := ColdConversation(base, coldTag(i))
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Messages) != len(base.Messages) {
			t.Fatalf("unit %d: %d messages, want %d", i, len(q.Messages), len(base.Messages))
		}
		n := 0
		for _, c := range contents(t, q) {
			if prev, ok := seen[c]; ok {
				t.Fatalf("unit %d repeats a message of unit %d: %.60q", i, prev, c)
			}
			seen[c] = i
			n += len(c)
		}
		// Cold units past the warm-up keep one size, so they cost the same.
		if i >= 0 && size >= 0 && n != size {
			t.Fatalf("unit %d: %d content bytes, unit 0 had %d", i, n, size)
		}
		if i == 0 {
			size = n
		}
	}
	// The base conversation is not modified.
	if strings.HasPrefix(contents(t, base)[0], "[") {
		t.Fatal("ColdConversation changed its input")
	}
}

// The spliced tag gives the bytes decoding, editing and re-encoding each
// message would.
func TestColdConversationSpliceMatchesReencoding(t *testing.T) {
	for _, size := range benchdata.Sizes {
		base := benchdata.Conversation(size)
		for _, tag := range []string{coldTag(-1), coldTag(7), "[in-pro3] ", "<tag> ", "ü "} {
			q, err := ColdConversation(base, tag)
			if err != nil {
				t.Fatal(err)
			}
			for i, raw := range base.Messages {
				want, err := coldMessageSlow(raw, tag+strconv.Itoa(i)+" ")
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(q.Messages[i], want) {
					t.Fatalf("%s tag %q message %d:\n got %s\nwant %s", size.Name, tag, i, q.Messages[i], want)
				}
			}
		}
	}
}

func TestColdPrompt(t *testing.T) {
	chatml := "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
	got := ColdPrompt(chatml, "[t] ")
	want := "<|im_start|>system\n[t] 0 be brief<|im_end|>\n<|im_start|>user\n[t] 1 hi<|im_end|>\n<|im_start|>assistant\n[t] 2 "
	if got != want {
		t.Fatalf("ColdPrompt(ChatML) =\n%q\nwant\n%q", got, want)
	}
	if got := ColdPrompt("one\n\ntwo", "[t] "); got != "[t] 0 one\n\n[t] 1 two" {
		t.Fatalf("ColdPrompt(plain) = %q", got)
	}
	if ColdPrompt(ChatPrompt(), coldTag(1)) == ColdPrompt(ChatPrompt(), coldTag(2)) {
		t.Fatal("two tags gave the same prompt")
	}
}

func TestMultiTurnCalls(t *testing.T) {
	s := benchdata.Sizes[len(benchdata.Sizes)-1]
	q := benchdata.Conversation(s)
	calls := MultiTurnCalls(q)
	if len(calls) != MultiTurnTurns {
		t.Fatalf("%d calls, want %d", len(calls), MultiTurnTurns)
	}
	prev := 0
	for i, c := range calls {
		turn := q
		turn.Messages = q.Messages[:TurnMessages(i, len(q.Messages))]
		if want := chatRenderBody(turn); !bytes.Equal(c.Body, want) {
			t.Fatalf("turn %d body:\n got %s\nwant %s", i, c.Body, want)
		}
		var body struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(c.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Messages) <= prev && len(body.Messages) != len(q.Messages) {
			t.Fatalf("turn %d holds %d messages after %d", i, len(body.Messages), prev)
		}
		prev = len(body.Messages)
	}
	if prev != len(q.Messages) {
		t.Fatalf("last turn holds %d messages, want all %d", prev, len(q.Messages))
	}
}

func TestDerenderCallWorkload(t *testing.T) {
	w := DerenderCallWorkload("derender 1-token call", derenderChatRequest, derenderPrompt, []int{10, 11})
	for round := range 2 {
		for pos := range 2 {
			calls, err := w.Next(0)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(calls[0].Body, &body); err != nil {
				t.Fatalf("round %d call %d: %v: %s", round, pos, err, calls[0].Body)
			}
			_, hasPrompt := body["prompt_token_ids"]
			if hasPrompt != (pos == 0) {
				t.Fatalf("round %d call %d: prompt sent %v", round, pos, hasPrompt)
			}
			wantState := "null"
			if pos > 0 {
				wantState = `{"vrender_checkpoint":"ck"}`
			}
			if string(body["stream_state"]) != wantState {
				t.Fatalf("round %d call %d: stream_state %s, want %s", round, pos, body["stream_state"], wantState)
			}
			if err := w.Check([]byte(`{"stream_state":{"vrender_checkpoint":"ck"}}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// drive sends every unit it makes exactly once, each unit's calls in order
// on one connection, counts what finished, and stops on the first error.
func TestDriveConcurrentUnits(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	fail := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got[r.URL.Path]++
		if r.URL.Path == fail {
			w.WriteHeader(http.StatusTeapot)
		}
	}))
	defer srv.Close()
	s := &Server{URL: srv.URL, client: srv.Client(), nextUnit: 100}
	w := Workload{Name: "t", Independent: true, Next: func(i int) ([]Call, error) {
		p := "/u" + strconv.Itoa(i)
		return []Call{{Method: "GET", Path: p + "/a"}, {Method: "GET", Path: p + "/b"}}, nil
	}}
	units, requests, err := s.drive(context.Background(), w, 4, func(n int) bool { return n >= 50 })
	if err != nil {
		t.Fatal(err)
	}
	if units < 50 || requests != 2*units {
		t.Fatalf("units %d requests %d", units, requests)
	}
	mu.Lock()
	for p, n := range got {
		if n != 1 {
			t.Fatalf("%s sent %d times", p, n)
		}
		if strings.HasSuffix(p, "/b") && got[strings.TrimSuffix(p, "/b")+"/a"] != 1 {
			t.Fatalf("%s without its first call", p)
		}
	}
	if got["/u99/a"] != 0 || got["/u100/a"] != 1 {
		t.Fatal("units must start at the server's next unit")
	}
	fail = "/u" + strconv.Itoa(s.nextUnit+3) + "/b"
	mu.Unlock()
	if _, _, err := s.drive(context.Background(), w, 4, func(int) bool { return false }); err == nil || !strings.Contains(err.Error(), "418") {
		t.Fatalf("error = %v, want the failed call's status", err)
	}
}

// TestRunInOrder: units run one after another, each unit's calls in order
// and checked, until done says stop; the unit made ahead is never sent,
// numbers are not reused, and a unit that cannot be made, or an answer
// that fails its check, stops the run with its error.
func TestRunInOrder(t *testing.T) {
	var mu sync.Mutex
	var got []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.Write(b)
	}))
	defer ts.Close()
	s := &Server{URL: ts.URL, client: ts.Client(), nextUnit: 3}
	failAt := -1
	w := Workload{Name: "ordered", Next: func(i int) ([]Call, error) {
		if i == failAt {
			return nil, errors.New("no unit")
		}
		mark := ""
		if i >= 1000 {
			mark = "x"
		}
		return []Call{{Method: "POST", Path: "/", Body: []byte(fmt.Sprintf("%s%d.0", mark, i))},
			{Method: "POST", Path: "/", Body: []byte(fmt.Sprintf("%s%d.1", mark, i))}}, nil
	}, Check: func(body []byte) error {
		if bytes.HasPrefix(body, []byte("x")) {
			return errors.New("bad answer")
		}
		return nil
	}}
	// done is asked at most once a millisecond, so the run may go past 4.
	units, requests, err := s.runInOrder(context.Background(), w, func(units int) bool { return units >= 4 })
	if err != nil || units < 4 || requests != 2*units {
		t.Fatalf("units %d, requests %d, err %v", units, requests, err)
	}
	var want []string
	for i := 3; i < 3+units; i++ {
		want = append(want, fmt.Sprintf("%d.0", i), fmt.Sprintf("%d.1", i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
	if s.nextUnit != 3+units && s.nextUnit != 4+units {
		t.Fatalf("next unit %d after %d units from 3 (one made ahead at most)", s.nextUnit, units)
	}
	s.nextUnit, got = 1000, nil
	if _, _, err := s.runInOrder(context.Background(), w, func(int) bool { return false }); err == nil || !strings.Contains(err.Error(), "bad answer") {
		t.Fatalf("a failed check: err %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("sent %q past a failed check", got)
	}
	failAt, s.nextUnit = 11, 10
	if units, _, err := s.runInOrder(context.Background(), w, func(int) bool { return false }); err == nil || units != 1 || !strings.Contains(err.Error(), "no unit") {
		t.Fatalf("a unit that cannot be made: units %d, err %v", units, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	failAt = -1
	if _, _, err := s.runInOrder(ctx, w, func(int) bool { return false }); err == nil {
		t.Fatal("a canceled run succeeded")
	}
}
