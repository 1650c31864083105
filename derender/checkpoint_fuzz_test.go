package derender

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// Checkpoint mutations FuzzCheckpointTamper applies to a genuine
// checkpoint (op modulo tamperOps).
const (
	tamperFlip      = iota // xor one byte of the sealed bytes with val
	tamperTruncate         // keep the first pos sealed bytes
	tamperInsert           // insert val at pos in the sealed bytes
	tamperOtherKey         // resume on an engine with another state key
	tamperOtherReq         // resume with another chat_request
	tamperOtherName        // resume under another model name
	tamperText             // insert val at pos in the wire text (base64, ".", tail)
	tamperOps
)

// FuzzCheckpointTamper starts from a genuine checkpoint (with a tail of
// unsealed ids) and tampers with it, truncates it or replays it where it
// does not belong. The property is stronger than "no panic": any change to
// the signed bytes, another key, another request or another model must be
// refused with a 400; only a checkpoint whose sealed bytes are intact may
// resume (a changed tail is token ids a client may send anyway).
func FuzzCheckpointTamper(f *testing.F) {
	e, cr := benchEngine(f, 0)
	other, _ := benchEngine(f, 0)
	otherCR, err := protocol.DecodeChatCompletionRequest([]byte(strings.Replace(benchChatRequest, "write_file", "read_file", 1)))
	if err != nil {
		f.Fatal(err)
	}
	ids := benchOutput(f, e.model, 120)
	good, _ := checkpointAfter(f, e, cr, ids[:90])
	sealed, tail, _ := strings.Cut(good.VrenderCheckpoint, ".")
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		f.Fatal(err)
	}
	for op := range tamperOps {
		for _, pos := range []uint16{0, 1, uint16(len(raw) / 2), uint16(len(raw) - 1), uint16(len(raw))} {
			f.Add(uint8(op), pos, uint8(0x20))
		}
	}
	f.Add(uint8(tamperText), uint16(len(sealed)), uint8('.'))
	f.Add(uint8(tamperText), uint16(len(good.VrenderCheckpoint)), uint8('A'))
	f.Fuzz(func(t *testing.T, op uint8, pos uint16, val uint8) {
		eng, req, name := e, cr, "m"
		mutated := bytes.Clone(raw)
		wire := ""
		switch op % tamperOps {
		case tamperFlip:
			if val == 0 {
				val = 1
			}
			mutated[int(pos)%len(mutated)] ^= val
		case tamperTruncate:
			mutated = mutated[:int(pos)%len(mutated)]
		case tamperInsert:
			i := int(pos) % (len(mutated) + 1)
			mutated = append(mutated[:i:i], append([]byte{val}, raw[i:]...)...)
		case tamperOtherKey:
			eng = other
		case tamperOtherReq:
			req = otherCR
		case tamperOtherName:
			name = "m2"
		case tamperText:
			s := good.VrenderCheckpoint
			i := int(pos) % (len(s) + 1)
			wire = s[:i] + string(rune(val)) + s[i:]
		}
		if wire == "" {
			wire = base64.RawURLEncoding.EncodeToString(mutated) + "." + tail
		}
		_, err := eng.ChatStream(context.Background(), &protocol.DerenderChatStreamRequest{
			GenerateChunk: protocol.GenerateResponse{RequestID: "r", Choices: []protocol.GenerateChoice{{TokenIDs: ids[90:91]}}},
			StreamState:   &protocol.DerenderStreamState{VrenderCheckpoint: wire}, ChatRequest: req,
		}, name)
		var bad *BadRequestError
		if err != nil && !errors.As(err, &bad) {
			t.Fatalf("op %d: non-400 error: %v", op%tamperOps, err)
		}
		if err == nil && !intact(wire, raw) || err == nil && (eng != e || req != cr || name != "m") {
			t.Fatalf("op %d pos %d val %#x: tampered or foreign checkpoint accepted: %q", op%tamperOps, pos, val, wire)
		}
	})
}

// intact reports whether the sealed part of wire decodes to raw: base64url
// without padding ignores a final character's spare bits, so a changed
// text can still carry the genuine bytes.
func intact(wire string, raw []byte) bool {
	sealed, _, _ := strings.Cut(wire, ".")
	got, err := base64.RawURLEncoding.DecodeString(sealed)
	return err == nil && bytes.Equal(got, raw)
}
