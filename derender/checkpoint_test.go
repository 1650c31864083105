package derender

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// checkpointAfter streams ids one token per call through the checkpoint
// path and returns the last state and the largest request body seen.
func checkpointAfter(t testing.TB, e *Engine, cr *protocol.ChatCompletionRequest, ids []int) (protocol.DerenderStreamState, []int) {
	t.Helper()
	var state *protocol.DerenderStreamState
	var sizes []int
	for _, id := range ids {
		req := &protocol.DerenderChatStreamRequest{
			GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: []int{id}}}},
			StreamState:   state, ChatRequest: cr,
		}
		if state == nil {
			req.PromptTokenIDs = benchPrompt
		}
		body, err := json.Marshal(map[string]any{"stream_state": req.StreamState, "prompt_token_ids": req.PromptTokenIDs,
			"generate_chunk": req.GenerateChunk})
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(body))
		res, err := e.ChatStream(context.Background(), req, "m")
		if err != nil {
			t.Fatal(err)
		}
		if state != nil && len(res.StreamState.OutputTokenIDs) != 0 {
			t.Fatalf("checkpoint path echoed %d output_token_ids", len(res.StreamState.OutputTokenIDs))
		}
		state = &protocol.DerenderStreamState{VrenderCheckpoint: res.StreamState.VrenderCheckpoint}
	}
	return *state, sizes
}

func TestCheckpointRejects(t *testing.T) {
	e, cr := benchEngine(t, 0)
	ids := benchOutput(t, e.model, 200)
	good, _ := checkpointAfter(t, e, cr, ids[:100])
	raw, err := base64.RawURLEncoding.DecodeString(good.VrenderCheckpoint)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x20
		return enc(b)
	}
	other, _ := benchEngine(t, 0)
	otherCR, err := protocol.DecodeChatCompletionRequest([]byte(strings.Replace(benchChatRequest, "write_file", "read_file", 1)))
	if err != nil {
		t.Fatal(err)
	}
	// A payload signed with the right key that is not a checkpoint: the
	// decoder must refuse it, not panic.
	forged := func(payload []byte) string {
		s, err := e.sealRaw(append([]byte{checkpointVersion}, payload...))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name, ckpt, want string
		engine           *Engine
		cr               *protocol.ChatCompletionRequest
		model            string
	}{
		{"flipped payload byte", flip(len(raw) / 2), "signature", e, cr, "m"},
		{"flipped tag byte", flip(len(raw) - 1), "signature", e, cr, "m"},
		{"truncated", enc(raw[:len(raw)-5]), "signature", e, cr, "m"},
		{"too short", enc(raw[:10]), "truncated", e, cr, "m"},
		{"version byte only", enc(raw[:1]), "truncated", e, cr, "m"},
		{"stale version", enc(append([]byte{checkpointVersion + 1}, raw[1:]...)), "version", e, cr, "m"},
		{"not base64", "!!" + good.VrenderCheckpoint, "base64", e, cr, "m"},
		{"other key", good.VrenderCheckpoint, "signature", other, cr, "m"},
		{"other request", good.VrenderCheckpoint, "another model", e, otherCR, "m"},
		{"other model", good.VrenderCheckpoint, "another model", e, cr, "m2"},
		{"signed garbage", forged([]byte{0xff, 0xff, 0xff, 0xff, 0xff}), "invalid stream_state.vrender_checkpoint", e, cr, "m"},
		{"signed empty", forged(nil), "invalid stream_state.vrender_checkpoint", e, cr, "m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.engine.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
				GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[100:101]}}},
				StreamState:   &protocol.DerenderStreamState{VrenderCheckpoint: tc.ckpt}, ChatRequest: tc.cr,
			}, tc.model)
			var bad *BadRequestError
			if !errors.As(err, &bad) || !strings.Contains(bad.Message, tc.want) {
				t.Fatalf("got %v, want a 400 mentioning %q", err, tc.want)
			}
		})
	}
	// The good checkpoint still resumes.
	if _, err := e.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
		GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[100:101]}}},
		StreamState:   &good, ChatRequest: cr,
	}, "m"); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointBodyFlat: with the checkpoint path the request body does
// not grow with the output (reasoning and content; inside a hermes tool
// call the parser keeps the call's raw text for vLLM's failed-call
// fallback, which the checkpoint must carry).
func TestCheckpointBodyFlat(t *testing.T) {
	e, cr := benchEngine(t, 0)
	var b strings.Builder
	b.WriteString("<think>\n")
	for i := range 700 {
		b.WriteString("Step ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(" checks the layout. ")
	}
	b.WriteString("</think>\n\nThe answer is here.")
	ids := e.model.Tokenizer.Encode(b.String(), false)
	if len(ids) < 3000 {
		t.Fatalf("only %d tokens", len(ids))
	}
	_, sizes := checkpointAfter(t, e, cr, ids)
	early, late := sizes[100], sizes[len(sizes)-1]
	for _, s := range sizes[100:] {
		late = max(late, s)
	}
	if late > early+64 {
		t.Fatalf("request body grew from %d bytes (token 100) to %d (token %d)", early, late, len(ids))
	}
	t.Logf("request body %d bytes at token 100, at most %d up to token %d", early, late, len(ids))
}

// FuzzCheckpoint feeds arbitrary checkpoints (and arbitrary payloads
// signed with the engine's key, which only a key holder could make) to the
// decoder: every outcome is a value or a 400, never a panic.
func FuzzCheckpoint(f *testing.F) {
	e, cr := benchEngine(f, 0)
	ids := benchOutput(f, e.model, 120)
	good, _ := checkpointAfter(f, e, cr, ids[:60])
	raw, _ := base64.RawURLEncoding.DecodeString(good.VrenderCheckpoint)
	f.Add(good.VrenderCheckpoint, raw[1:len(raw)-32])
	f.Add("", []byte{})
	f.Add("AQ", []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, s string, payload []byte) {
		for _, ckpt := range []string{s, mustSeal(t, e, payload)} {
			_, err := e.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
				GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[60:61]}}},
				StreamState:   &protocol.DerenderStreamState{VrenderCheckpoint: ckpt}, ChatRequest: cr,
			}, "m")
			var bad *BadRequestError
			if err != nil && !errors.As(err, &bad) {
				t.Fatalf("non-400 error: %v", err)
			}
		}
	})
}

func mustSeal(t *testing.T, e *Engine, payload []byte) string {
	s, err := e.sealRaw(append([]byte{checkpointVersion}, payload...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
