package derender

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// chatStreamAt makes one one-token call echoing only ckpt.
func chatStreamAt(e *Engine, cr *protocol.ChatCompletionRequest, ckpt string, id int, finish *string) (*protocol.DerenderChatStreamResponse, error) {
	return e.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
		GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: []int{id}, FinishReason: finish}}},
		StreamState:   &protocol.DerenderStreamState{VrenderCheckpoint: ckpt}, ChatRequest: cr,
	}, "m")
}

// TestCheckpointCacheRejects: a stream's live state stays cached under its
// seal between calls, so a tampered checkpoint that shares the cache key
// with the real one must still be verified and refused, and the real one
// must still resume from the cache afterwards.
func TestCheckpointCacheRejects(t *testing.T) {
	e, cr := benchEngine(t, 16)
	ids := benchOutput(t, e.model, 200)
	good, _ := checkpointAfter(t, e, cr, ids[:90])
	sealed, tail, ok := strings.Cut(good.VrenderCheckpoint, ".")
	if !ok {
		t.Fatalf("no tail after 90 calls: %q", good.VrenderCheckpoint)
	}
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), raw...)
	flipped[len(raw)/2] ^= 0x20
	_, tailIDs, err := splitCheckpoint(good.VrenderCheckpoint)
	if err != nil {
		t.Fatal(err)
	}
	// Another first id in the tail: unsigned, so a client may send it.
	other := appendTailID(nil, tailIDs[0]+1)
	for _, id := range tailIDs[1:] {
		other = appendTailID(other, id)
	}
	for _, tc := range []struct{ name, ckpt, want string }{
		// The key is the end of the sealed part: unchanged here.
		{"flipped payload byte", base64.RawURLEncoding.EncodeToString(flipped) + "." + tail, "signature"},
		{"tail not in fours", good.VrenderCheckpoint + "A", "malformed tail"},
		{"sealed part cut short", sealed[1:] + "." + tail, ""},
	} {
		_, err := chatStreamAt(e, cr, tc.ckpt, ids[90], nil)
		var bad *BadRequestError
		if !errors.As(err, &bad) || !strings.Contains(bad.Message, tc.want) {
			t.Fatalf("%s: got %v, want a 400 mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := e.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
		GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[90:91]}}},
		StreamState:   &good, ChatRequest: cr,
	}, "m2"); err == nil {
		t.Fatal("the live state resumed for another model")
	}
	hits, restores := e.CheckpointStats()
	if _, err := chatStreamAt(e, cr, good.VrenderCheckpoint, ids[90], nil); err != nil {
		t.Fatalf("good checkpoint after the rejects: %v", err)
	}
	if h, r := e.CheckpointStats(); h != hits+1 || r != restores {
		t.Fatalf("good checkpoint after the rejects: %d hits %d restores, want %d and %d (from the cache)", h, r, hits+1, restores)
	}
	// A different tail on the same seal is a different history, not the
	// cached state: it resumes by replay.
	if _, err := chatStreamAt(e, cr, sealed+"."+string(other), ids[90], nil); err != nil {
		t.Fatalf("other tail: %v", err)
	}
	if h, r := e.CheckpointStats(); h != hits+1 || r != restores+1 {
		t.Fatalf("other tail: %d hits %d restores, want %d and %d", h, r, hits+1, restores+1)
	}
}

// TestCheckpointRetry: a client may resend a call (its answer was lost).
// The checkpoint it resends is one the cached state has moved past, so it
// resumes from the checkpoint itself, and both continuations answer the
// same as a stream that never retried.
func TestCheckpointRetry(t *testing.T) {
	e, cr := benchEngine(t, 16)
	ids := benchOutput(t, e.model, 300)
	want := batchOnce(t, e, cr, ids).Choices[0].Message
	var acc, retried parsers.Accumulator
	state, _ := checkpointAfter(t, e, cr, ids[:1])
	ckpt := state.VrenderCheckpoint
	for i := 1; i < len(ids); i++ {
		var finish *string
		if i == len(ids)-1 {
			finish = new("stop")
		}
		res, err := chatStreamAt(e, cr, ckpt, ids[i], finish)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if i%7 == 0 {
			// The retry of the same call, after the first went through.
			again, err := chatStreamAt(e, cr, ckpt, ids[i], finish)
			if err != nil {
				t.Fatalf("retry of call %d: %v", i, err)
			}
			if got, want := deltaText(again), deltaText(res); got != want {
				t.Fatalf("retry of call %d answered %q, first %q", i, got, want)
			}
			retried.Add(ParserDelta(&again.Chunk.Choices[0].Delta, nil))
		}
		acc.Add(ParserDelta(&res.Chunk.Choices[0].Delta, nil))
		ckpt = res.StreamState.VrenderCheckpoint
	}
	calls := acc.Calls()
	if len(calls) != 1 || len(want.ToolCalls) != 1 || calls[0].Arguments != want.ToolCalls[0].Function.Arguments ||
		want.Reasoning == nil || acc.Reasoning() != *want.Reasoning {
		t.Fatalf("stream with retries %+v %q\nbatch %+v", calls, acc.Reasoning(), want)
	}
	if _, restores := e.CheckpointStats(); restores == 0 {
		t.Fatal("no retry resumed from its checkpoint")
	}
}

// TestCheckpointCacheConcurrent runs streams at once on an engine whose
// cache is smaller than their number (evictions), with every call also
// sent twice at the same time (one may find the state held by the other).
// Every stream must still reach the batch answer; run with -race.
func TestCheckpointCacheConcurrent(t *testing.T) {
	e, cr := benchEngine(t, 3)
	ids := benchOutput(t, e.model, 120)
	want := batchOnce(t, e, cr, ids).Choices[0].Message
	const streams = 6
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for s := range streams {
		wg.Go(func() {
			if err := concurrentStream(e, cr, ids, want, s%2 == 0); err != nil {
				errs <- fmt.Errorf("stream %d: %w", s, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func concurrentStream(e *Engine, cr *protocol.ChatCompletionRequest, ids []int, want protocol.ChatMessage, twice bool) error {
	var acc parsers.Accumulator
	res, err := e.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
		GenerateChunk:  protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[:1]}}},
		PromptTokenIDs: benchPrompt, ChatRequest: cr,
	}, "m")
	if err != nil {
		return err
	}
	acc.Add(ParserDelta(&res.Chunk.Choices[0].Delta, nil))
	ckpt := res.StreamState.VrenderCheckpoint
	for i := 1; i < len(ids); i++ {
		var finish *string
		if i == len(ids)-1 {
			finish = new("stop")
		}
		var dup *protocol.DerenderChatStreamResponse
		var dupErr error
		var wg sync.WaitGroup
		if twice {
			wg.Go(func() { dup, dupErr = chatStreamAt(e, cr, ckpt, ids[i], finish) })
		}
		res, err := chatStreamAt(e, cr, ckpt, ids[i], finish)
		wg.Wait()
		if err != nil {
			return fmt.Errorf("call %d: %w", i, err)
		}
		if dupErr != nil {
			return fmt.Errorf("call %d sent twice: %w", i, dupErr)
		}
		if dup != nil && deltaText(dup) != deltaText(res) {
			return fmt.Errorf("call %d sent twice answered %q and %q", i, deltaText(dup), deltaText(res))
		}
		acc.Add(ParserDelta(&res.Chunk.Choices[0].Delta, nil))
		ckpt = res.StreamState.VrenderCheckpoint
	}
	calls := acc.Calls()
	if len(calls) != 1 || len(want.ToolCalls) != 1 || calls[0].Arguments != want.ToolCalls[0].Function.Arguments ||
		want.Reasoning == nil || acc.Reasoning() != *want.Reasoning {
		return fmt.Errorf("stream %+v %q\nbatch %+v", calls, acc.Reasoning(), want)
	}
	return nil
}

// deltaText is a call's delta without its tool-call ids (random per call).
func deltaText(res *protocol.DerenderChatStreamResponse) string {
	d := ParserDelta(&res.Chunk.Choices[0].Delta, nil)
	var b strings.Builder
	fmt.Fprintf(&b, "c=%q r=%q", d.Content, d.Reasoning)
	for _, tc := range d.ToolCalls {
		fmt.Fprintf(&b, " call %d %q %q", tc.Index, tc.Name, tc.Arguments)
	}
	return b.String()
}
