package derender

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
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
	good, _ := checkpointAfter(t, e, cr, ids[:90])
	sealed, tail, hasTail := strings.Cut(good.VrenderCheckpoint, ".")
	if !hasTail || len(tail) == 0 {
		t.Fatalf("checkpoint after 100 one-token calls has no tail: %q", good.VrenderCheckpoint)
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
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
		// Version 2 coded the payload by reflection over the machines'
		// then exported fields.
		{"version 2", enc(append([]byte{2}, raw[1:]...)), "version 2 is not supported", e, cr, "m"},
		// Version 3 lacked the qwen3_coder gate's leading-whitespace flag.
		{"version 3", enc(append([]byte{3}, raw[1:]...)), "version 3 is not supported", e, cr, "m"},
		{"not base64", "!!" + good.VrenderCheckpoint, "base64", e, cr, "m"},
		{"tail not in fours", good.VrenderCheckpoint + "A", "malformed tail", e, cr, "m"},
		{"tail not base64", sealed + ".!!!!", "malformed tail", e, cr, "m"},
		{"tail too long", sealed + "." + strings.Repeat("AAAA", maxCheckpointTail+1), "malformed tail", e, cr, "m"},
		{"tail on a forged seal", flip(3) + "." + tail, "signature", e, cr, "m"},
		{"other key", good.VrenderCheckpoint, "signature", other, cr, "m"},
		{"other request", good.VrenderCheckpoint, "another model", e, otherCR, "m"},
		{"other model", good.VrenderCheckpoint, "another model", e, cr, "m2"},
		{"signed garbage", forged([]byte{0xff, 0xff, 0xff, 0xff, 0xff}), "invalid stream_state.vrender_checkpoint", e, cr, "m"},
		{"signed empty", forged(nil), "invalid stream_state.vrender_checkpoint", e, cr, "m"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.engine.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
				GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[90:91]}}},
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
		GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[90:91]}}},
		StreamState:   &good, ChatRequest: cr,
	}, "m"); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointBodyFlat: with the checkpoint path the request body does
// not grow with the output (reasoning and content here; inside a long
// hermes call in TestCheckpointBodyFlatInCall).
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
	// The tail of unsealed ids makes the size saw-tooth over
	// maxCheckpointTail calls; compare the peaks.
	early := slices.Max(sizes[100 : 100+2*maxCheckpointTail])
	late := slices.Max(sizes[100:])
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

// sealRaw appends the tag to version|payload and encodes it: a payload
// only a key holder could sign, for the tests of what the decoder does
// with one.
func (e *Engine) sealRaw(msg []byte) (string, error) {
	return base64.RawURLEncoding.EncodeToString(e.mac(msg, msg)), nil
}

func mustSeal(t *testing.T, e *Engine, payload []byte) string {
	s, err := e.sealRaw(append([]byte{checkpointVersion}, payload...))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCheckpointTailResume: a checkpoint resumed with its tail of ids on an
// engine that never saw the stream (cache off), from the live state that
// issued it (cache on), and with the tail folded into a fresh seal all
// continue to the same answer as one batch call.
func TestCheckpointTailResume(t *testing.T) {
	cold, cr := benchEngine(t, 0)
	warm, _ := benchEngine(t, 16)
	if err := warm.SetStateKey(cold.stateKey); err != nil {
		t.Fatal(err)
	}
	ids := benchOutput(t, cold.model, 400)
	want := batchOnce(t, cold, cr, ids).Choices[0].Message
	for _, e := range []*Engine{cold, warm} {
		acc := streamOnce(t, e, cr, ids, echoCheckpoint)
		if calls := acc.Calls(); len(calls) != 1 || len(want.ToolCalls) != 1 || calls[0].Arguments != want.ToolCalls[0].Function.Arguments ||
			want.Reasoning == nil || acc.Reasoning() != *want.Reasoning {
			t.Fatalf("stream %+v %q\nbatch %+v", calls, acc.Reasoning(), want)
		}
	}
	if hits, restores := cold.CheckpointStats(); hits != 0 || restores != int64(len(ids)-1) {
		t.Fatalf("cold engine: %d hits, %d restores for %d calls", hits, restores, len(ids))
	}
	if hits, restores := warm.CheckpointStats(); hits != int64(len(ids)-2) || restores != 1 {
		// The first call has no checkpoint; the second finds the one the
		// history path issued under its own key, so it restores once.
		t.Fatalf("warm engine: %d hits, %d restores for %d calls", hits, restores, len(ids))
	}
}

// TestCheckpointBodyFlatInCall: inside a long hermes tool call argument the
// checkpoint stays flat (the streaming machine drops the raw call text once
// the call went out).
func TestCheckpointBodyFlatInCall(t *testing.T) {
	e, cr := benchEngine(t, 0)
	ids := benchOutput(t, e.model, 3000)
	_, sizes := checkpointAfter(t, e, cr, ids)
	// The second half of the output is the call's argument; entering the
	// call adds its id and the JSON reader's state once.
	from := len(sizes) * 6 / 10
	early := slices.Max(sizes[from : from+2*maxCheckpointTail])
	late := slices.Max(sizes[from:])
	if late > early+16 {
		t.Fatalf("request body grew from %d bytes (token %d, in the call) to %d (token %d)", early, from, late, len(ids))
	}
	t.Logf("request body %d bytes at token %d, at most %d up to token %d", early, from, late, len(ids))
}
