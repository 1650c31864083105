package engine_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

// swappableEngine serves an engine-sim that a test may replace (an engine
// restart) and records every generate body it is sent.
type swappableEngine struct {
	m   *model.Model
	cfg enginesim.Config

	mu     sync.Mutex
	sim    *enginesim.Sim
	h      http.Handler
	bodies [][]byte
	posts  atomic.Int64
}

func newSwappableEngine(t *testing.T, m *model.Model, cfg enginesim.Config) (*swappableEngine, string) {
	t.Helper()
	e := &swappableEngine{m: m, cfg: cfg}
	e.restart(t)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return e, srv.URL
}

func (e *swappableEngine) restart(t *testing.T) {
	t.Helper()
	cfg := e.cfg
	cfg.ServedModelName, cfg.Logger = "qwen", slog.New(slog.DiscardHandler)
	sim, err := enginesim.New(e.m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.sim, e.h = sim, sim.Handler()
	e.mu.Unlock()
}

func (e *swappableEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/inference/v1/generate" {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		e.posts.Add(1)
		e.mu.Lock()
		e.bodies = append(e.bodies, b)
		e.mu.Unlock()
	}
	e.mu.Lock()
	h := e.h
	e.mu.Unlock()
	h.ServeHTTP(w, r)
}

// lastBody is the last generate body the engine was sent.
func (e *swappableEngine) lastBody() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bodies[len(e.bodies)-1]
}

// picture is one test image: a grid of 1×4×6 patches (6 placeholder
// tokens) whose pixels depend on seed, so two pictures of one size differ.
func picture(hash string, seed byte, offset int) features.Image {
	px := make([]byte, 24*1176*2)
	for i := range px {
		px[i] = byte(i*7) + seed
	}
	return features.Image{Hash: hash, Placeholder: features.Placeholder{Offset: offset, Length: 6},
		Processed: features.QwenImage{GridTHW: [3]int64{1, 4, 6}, PixelValues: px}}
}

// turn is a generate request with imgs at their offsets in 40 prompt
// tokens, as the orchestrator hands it to a Client.
func turn(t *testing.T, imgs ...features.Image) *protocol.GenerateRequest {
	t.Helper()
	f, err := features.QwenImageFeatures(imgs, 1176, features.Options{Kwargs: true, Metadata: true})
	if err != nil {
		t.Fatal(err)
	}
	g := &protocol.GenerateRequest{TokenIDs: make([]int, 40), SamplingParams: protocol.NewSamplingParams()}
	for i := range g.TokenIDs {
		g.TokenIDs[i] = 100 + i
	}
	g.SamplingParams.MaxTokens = new(200)
	g.SamplingParams.ExplicitMaxTokens = true
	g.SetFeatures(&f)
	return g
}

// answer streams g and returns the tokens of its answer.
func answer(t *testing.T, c *engine.Client, g *protocol.GenerateRequest, id string) ([]int, error) {
	t.Helper()
	st, err := c.Stream(context.Background(), g, id)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []int
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for _, ch := range ev.Choices {
			out = append(out, ch.TokenIDs...)
		}
	}
}

// TestNullItemsAsData: a client that sends the items its engine holds as
// null gets, turn after turn, the answers a client sending every item's
// data gets — while the engine keeps the pictures, after it restarted and
// lost them, after it evicted one the client still counts on (it keeps
// less than the client thinks), and with two different pictures of one
// size — and its client never sees the misses, each resent once with the
// data.
func TestNullItemsAsData(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	a, b := picture("img-a", 0, 3), picture("img-b", 1, 3)
	aThenB := []features.Image{picture("img-a", 0, 3), picture("img-b", 1, 20)}
	one := int64(24*1176*2 + 200) // room for one picture's item, not two
	cases := []struct {
		name string
		// turns are the requests' pictures; restartBefore is the turn the
		// engine restarts before (-1: never).
		turns         [][]features.Image
		engineCache   int64
		restartBefore int
		// null are the turns sent with a null item; posts the generate
		// requests the engine gets in all (a miss costs one more).
		null  []int
		posts int64
	}{
		{"the same picture every turn", [][]features.Image{{a}, {a}, {a}}, 0, -1, []int{1, 2}, 3},
		{"two pictures of one size", [][]features.Image{{a}, {b}, {a}, {b}}, 0, -1, []int{2, 3}, 4},
		{"a second picture joins", [][]features.Image{{a}, aThenB, aThenB}, 0, -1, []int{1, 2}, 3},
		{"engine restarts", [][]features.Image{{a}, {a}, {a}, {a}}, 0, 2, []int{1, 2, 3}, 5},
		{"engine evicts", [][]features.Image{{a}, {b}, {a}, {a}}, one, -1, []int{2, 3}, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref, refURL := newSwappableEngine(t, m, enginesim.Config{MMProcessorCacheBytes: c.engineCache})
			eng, url := newSwappableEngine(t, m, enginesim.Config{MMProcessorCacheBytes: c.engineCache})
			plain, err := engine.New(refURL, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			lean, err := engine.New(url, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second, MMCacheBytes: 1 << 30,
				Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			answers := map[string][]int{} // by the turn's pictures' hashes
			for i, imgs := range c.turns {
				if i == c.restartBefore {
					eng.restart(t)
					ref.restart(t)
				}
				want, err := answer(t, plain, turn(t, imgs...), turnID(i))
				if err != nil {
					t.Fatal(err)
				}
				g := turn(t, imgs...)
				got, err := answer(t, lean, g, turnID(i))
				if err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				for _, it := range g.FeaturesWriter().(*features.Features).Modalities[0].Kwargs {
					if it.IsNull() {
						t.Fatalf("turn %d: the caller's request lost an item's data", i)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("turn %d: %v, sending the data: %v", i, got, want)
				}
				var key string
				for _, img := range imgs {
					key += img.Hash + " "
				}
				for k, other := range answers {
					if k != key && slices.Equal(other, got) {
						t.Errorf("turn %d: the answer to %q is the answer to %q: the engine confused the pictures", i, key, k)
					}
				}
				answers[key] = got
				if n := bytes.Count(ref.lastBody(), []byte(`"kwargs_data":{"image":[null`)); n != 0 {
					t.Errorf("turn %d: the client without an item cache sent a null item", i)
				}
				sentNull := bytes.Contains(kwargsOfTurn(eng, i), []byte(`null`))
				if wantNull := slices.Contains(c.null, i); sentNull != wantNull {
					t.Errorf("turn %d: sent a null item %v, want %v", i, sentNull, wantNull)
				}
			}
			if n := eng.posts.Load(); n != c.posts {
				t.Errorf("the engine got %d requests, want %d", n, c.posts)
			}
			st := lean.ItemStats()
			if resends := c.posts - int64(len(c.turns)); st.Resends != resends || st.Null < int64(len(c.null)) {
				t.Errorf("ItemStats %+v, want %d resends and at least %d null items", st, resends, len(c.null))
			}
			if !strings.Contains(string(ref.lastBody()), `"kwargs_data":{"image":["`) {
				t.Error("the reference client sent no item data")
			}
		})
	}
}

// kwargsOfTurn is the kwargs_data member of the first request the engine
// got for turn i.
func kwargsOfTurn(e *swappableEngine, i int) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	id := []byte(`"request_id":"` + turnID(i) + `"`)
	for _, b := range e.bodies {
		if bytes.Contains(b, id) {
			start := bytes.Index(b, []byte(`"kwargs_data":`))
			end := bytes.Index(b, []byte(`,"mm_metadata":`))
			if start < 0 || end < start {
				return nil
			}
			return b[start:end]
		}
	}
	return nil
}

func turnID(i int) string { return "turn-" + strconv.Itoa(i) }

// TestNullItemsConcurrent: sessions running at once on one engine whose
// item cache holds fewer pictures than there are sessions (so it evicts
// what the client counts on) all get the answers of sending the data, and
// no error reaches them.
func TestNullItemsConcurrent(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	const sessions, turns = 6, 4
	pics := make([]features.Image, sessions)
	for i := range pics {
		pics[i] = picture("img-"+strconv.Itoa(i), byte(i), 3)
	}
	_, refURL := newSwappableEngine(t, m, enginesim.Config{})
	plain, err := engine.New(refURL, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]int, sessions)
	for i, p := range pics {
		if want[i], err = answer(t, plain, turn(t, p), "ref"); err != nil {
			t.Fatal(err)
		}
	}
	// Room for two pictures' items.
	_, url := newSwappableEngine(t, m, enginesim.Config{MMProcessorCacheBytes: 2 * (24*1176*2 + 200)})
	lean, err := engine.New(url, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second, MMCacheBytes: 1 << 30,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions*turns)
	for i, p := range pics {
		wg.Go(func() {
			for k := range turns {
				got, err := answer(t, lean, turn(t, p), "s"+strconv.Itoa(i)+"-"+strconv.Itoa(k))
				switch {
				case err != nil:
					errs <- err
				case !slices.Equal(got, want[i]):
					errs <- errors.New("session " + strconv.Itoa(i) + ": an answer unlike sending the data")
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestForgetItems: after ForgetItems (an engine ejected from its pool) the
// client sends its pictures' data again rather than count on the engine.
func TestForgetItems(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	eng, url := newSwappableEngine(t, m, enginesim.Config{})
	c, err := engine.New(url, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second, MMCacheBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	a := picture("img-a", 0, 3)
	for i, forget := range []bool{false, false, true} {
		if forget {
			c.ForgetItems()
		}
		if _, err := answer(t, c, turn(t, a), turnID(i)); err != nil {
			t.Fatal(err)
		}
		if null, want := bytes.Contains(kwargsOfTurn(eng, i), []byte("null")), i == 1; null != want {
			t.Errorf("turn %d: sent a null item %v, want %v", i, null, want)
		}
	}
	if st := c.ItemStats(); st != (engine.ItemStats{Null: 1}) {
		t.Errorf("ItemStats %+v, want one null item and no resend", st)
	}
}
