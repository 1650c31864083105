package orchestrator_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vrender/vrender/anthropic"
	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/responses"
)

// recordingEngines is an Engines that records what StartMM was given and
// refuses the call, so a test can read the routing input without an engine.
type recordingEngines struct {
	g  *protocol.GenerateRequest
	mm []kvindex.MMItem
}

var errNoEngine = errors.New("recordingEngines: no engine")

func (e *recordingEngines) Start(ctx context.Context, g *protocol.GenerateRequest, id string) (*fleet.Call, error) {
	return e.StartMM(ctx, g, id, nil)
}

func (e *recordingEngines) StartMM(_ context.Context, g *protocol.GenerateRequest, _ string, mm []kvindex.MMItem) (*fleet.Call, error) {
	e.g, e.mm = g, mm
	return nil, errNoEngine
}

func (e *recordingEngines) Health() []fleet.EngineHealth { return nil }

// TestFrontEndsRouteByImage: a request with an image, through each front
// end that serves one (chat completions, Anthropic Messages, Responses),
// reaches the fleet with the image's mm_hash and placeholder range, the same
// the engine's features member carries, so prefix routing keys the image's
// blocks by it.
func TestFrontEndsRouteByImage(t *testing.T) {
	dir := filepath.Join(testenv.SharedDir(t), "multimodal")
	m, err := model.Load(context.Background(), filepath.Join(dir, "models", "qwen2_5_vl"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	images, err := render.DefaultImageConfig(m, media.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := render.New(m, render.Config{Images: images})
	if err != nil {
		t.Fatal(err)
	}
	gen := render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{})
	der, err := derender.New(m, derender.Config{MaxLogprobs: 20})
	if err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(filepath.Join(dir, "images", "png_rgb_56x30.png"))
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(img)
	url := "data:image/png;base64," + b64

	cases := []struct {
		name  string
		serve func(ctx context.Context, o *orchestrator.Orchestrator) error
	}{
		{"chat", func(ctx context.Context, o *orchestrator.Orchestrator) error {
			req, err := protocol.DecodeChatCompletionRequest([]byte(`{"model":"qwen","messages":[{"role":"user","content":[` +
				`{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"` + url + `"}}]}]}`))
			if err != nil {
				return err
			}
			_, err = o.Chat(ctx, orchestrator.ChatRun{API: orchestrator.APIChat, Request: req}, nil)
			return err
		}},
		{"anthropic", func(ctx context.Context, o *orchestrator.Orchestrator) error {
			a, err := anthropic.DecodeMessagesRequest([]byte(`{"model":"qwen","max_tokens":50,"messages":[{"role":"user","content":[` +
				`{"type":"text","text":"What is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + b64 + `"}}]}]}`))
			if err != nil {
				return err
			}
			req, err := anthropic.ToChat(a)
			if err != nil {
				return err
			}
			_, err = anthropic.Serve(ctx, o, req, "x", nil)
			return err
		}},
		{"responses", func(ctx context.Context, o *orchestrator.Orchestrator) error {
			req, err := responses.DecodeRequest([]byte(`{"model":"qwen","input":[{"role":"user","content":[` +
				`{"type":"input_text","text":"What is this?"},{"type":"input_image","detail":"auto","image_url":"` + url + `"}]}]}`))
			if err != nil {
				return err
			}
			_, err = responses.Serve(ctx, o, req, nil)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng := &recordingEngines{}
			o, err := orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: der, Parsers: parsers.Config{},
				Engines: eng, ModelName: "qwen", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			err = tc.serve(context.Background(), o)
			if eng.g == nil {
				t.Fatalf("the fleet was never called: %v", err)
			}
			if err == nil {
				t.Fatal("served without an engine")
			}
			// The features member as the engine receives it.
			sent, err := protocol.AppendJSON(nil, eng.g)
			if err != nil {
				t.Fatal(err)
			}
			n, err := wire.Parse(sent)
			if err != nil {
				t.Fatal(err)
			}
			fn, _ := n.Get("features")
			f, err := features.Decode(fn)
			if err != nil {
				t.Fatal(err)
			}
			want := kvindex.FeatureItems(&f)
			if len(want) != 1 || !slices.Equal(eng.mm, want) {
				got, _ := json.Marshal(eng.mm)
				t.Fatalf("routing items %s, want the features' %v", got, want)
			}
			if p := want[0]; p.Length != 6 || eng.g.TokenIDs[p.Offset] != eng.g.TokenIDs[p.Offset+p.Length-1] {
				t.Errorf("placeholder %+v does not cover the expanded pads", p)
			}
		})
	}
}
