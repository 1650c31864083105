package derender

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"

	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/tokenizer"
)

// A checkpoint is everything a parsed stream needs to continue on any
// replica without its history: the detokenizer window, the parser
// machines' state, the counters, and a digest binding it to the model,
// parser configuration and parsing-relevant request fields. Wire form:
//
//	base64url(version | payload | HMAC-SHA256(key, version|payload)) [ "." base64url(tail) ]
//
// The payload is coded field by field with internal/statecodec (varints,
// byte-exact strings, no type descriptors); the parser's state is its own
// AppendState. Sealing (encode, MAC, base64) costs microseconds,
// more than a token's own work, so a stream is not resealed on every
// token: the tail lists, three bytes each, the ids pushed since the sealed
// state, and a resume replays them (at most maxCheckpointTail, so still
// O(delta)). The tail needs no tag: it holds only token ids, which a client
// may send as deltas anyway; everything a client must not forge (parser
// state, counters, tool-call ids) is in the signed part, and a call that
// changes anything but the ids reseals. The tag is checked before anything
// is decoded, so only states this key signed are ever trusted.

// checkpointVersion changes whenever the payload or a machine's state
// layout changes; older checkpoints are rejected, never reinterpreted.
const checkpointVersion = 4

// maxCheckpointLen bounds the encoded checkpoint a request may carry.
const maxCheckpointLen = 1 << 20

// maxCheckpointTail is how many ids a checkpoint carries unsealed: a resume
// replays at most this many, a stream reseals once every this many tokens.
const maxCheckpointTail = 32

// maxTailID bounds the ids a tail can carry (three bytes each); a larger
// id reseals.
const maxTailID = 1<<24 - 1

// stateKeyLen is the length of a generated key.
const stateKeyLen = 32

type checkpoint struct {
	Binding [sha256.Size]byte
	Detok   tokenizer.DetokState
	Parser  []byte
	// Tokens is prompt plus output tokens so far (for max_model_len).
	Tokens            int
	RoleSent          bool
	ToolsStreamed     bool
	ToolCallIDs       []string
	LogprobContext    []int
	LogprobTextOffset int
}

// codec saves and restores a checkpoint's payload.
func (cp *checkpoint) codec(c *statecodec.Codec) {
	c.Fixed(cp.Binding[:])
	statecodec.Strings(c, &cp.Detok.PrevTokens)
	c.Int(&cp.Detok.PrefixOffset)
	c.Int(&cp.Detok.ReadOffset)
	c.ByteSlice(&cp.Parser)
	c.Int(&cp.Tokens)
	c.Bool(&cp.RoleSent)
	c.Bool(&cp.ToolsStreamed)
	statecodec.Strings(c, &cp.ToolCallIDs)
	statecodec.Slice(c, &cp.LogprobContext, (*statecodec.Codec).Int)
	c.Int(&cp.LogprobTextOffset)
}

// ParseStateKey reads --state-key / VRENDER_STATE_KEY: hex when it is an
// even number of hex digits, else the raw bytes. A key shorter than 16
// bytes is refused.
func ParseStateKey(s string) ([]byte, error) {
	key := []byte(s)
	if b, err := hex.DecodeString(s); err == nil && len(s) > 0 {
		key = b
	}
	if len(key) < 16 {
		return nil, fmt.Errorf("state key must be at least 16 bytes (32 hex digits), got %d", len(key))
	}
	return key, nil
}

// NewStateKey returns a random key: checkpoints it signs resume only in
// this process.
func NewStateKey() []byte {
	k := make([]byte, stateKeyLen)
	_, _ = rand.Read(k) // crypto/rand.Read never fails
	return k
}

// SetStateKey replaces the checkpoint key; call it before serving.
func (e *Engine) SetStateKey(key []byte) error {
	if len(key) < 16 {
		return errors.New("derender: state key must be at least 16 bytes")
	}
	e.stateKey = bytes.Clone(key)
	e.macs = newMACPool(e.stateKey)
	return nil
}

// newMACPool pools HMAC states for key: a fresh one costs its key schedule
// and several allocations on every seal.
func newMACPool(key []byte) *sync.Pool {
	return &sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}
}

// mac returns HMAC(key, msg) appended to dst.
func (e *Engine) mac(dst, msg []byte) []byte {
	m := e.macs.Get().(hash.Hash)
	m.Reset()
	m.Write(msg)
	dst = m.Sum(dst)
	e.macs.Put(m)
	return dst
}

// sealScratch is the working memory of one seal, pooled by the engine: a
// stream seals once every maxCheckpointTail calls, too rarely to keep its
// own.
type sealScratch struct{ msg, enc []byte }

// sealCheckpoint seals cp and makes it the checkpoint ck last issued.
func (e *Engine) sealCheckpoint(ck *liveCheckpoint, cp *checkpoint) {
	sc, _ := e.seals.Get().(*sealScratch)
	if sc == nil {
		sc = new(sealScratch)
	}
	defer e.seals.Put(sc)
	c := statecodec.NewEncoder(append(sc.msg[:0], checkpointVersion))
	cp.codec(c)
	msg := c.Bytes()
	msg = e.mac(msg, msg)
	sc.enc = base64.RawURLEncoding.AppendEncode(sc.enc[:0], msg)
	sc.msg = msg
	ck.text.Reset()
	ck.text.Grow(len(sc.enc) + tailRoom)
	ck.text.Write(sc.enc)
	ck.cur, ck.sealedN, ck.tailN = ck.text.String(), len(sc.enc), 0
}

// splitCheckpoint separates the sealed part of a checkpoint from its tail
// of ids.
func splitCheckpoint(s string) (sealed string, tail []int, err error) {
	if len(s) > maxCheckpointLen {
		return "", nil, badRequest("invalid stream_state.vrender_checkpoint: longer than %d bytes", maxCheckpointLen)
	}
	sealed, enc, found := strings.Cut(s, ".")
	if !found {
		return sealed, nil, nil
	}
	if len(enc)%4 != 0 || len(enc)/4 > maxCheckpointTail {
		return "", nil, badRequest("invalid stream_state.vrender_checkpoint: malformed tail")
	}
	var b [3]byte
	tail = make([]int, 0, len(enc)/4)
	for i := 0; i < len(enc); i += 4 {
		if n, err := base64.RawURLEncoding.Decode(b[:], []byte(enc[i:i+4])); err != nil || n != 3 {
			return "", nil, badRequest("invalid stream_state.vrender_checkpoint: malformed tail")
		}
		tail = append(tail, int(b[0])<<16|int(b[1])<<8|int(b[2]))
	}
	return sealed, tail, nil
}

// appendTailID appends id's four tail characters.
func appendTailID(dst []byte, id int) []byte {
	var enc [4]byte
	base64.RawURLEncoding.Encode(enc[:], []byte{byte(id >> 16), byte(id >> 8), byte(id)})
	return append(dst, enc[:]...)
}

// openCheckpoint verifies and decodes the sealed part of a checkpoint.
// Every failure is a 400: nothing unsigned is ever decoded.
func (e *Engine) openCheckpoint(s string) (*checkpoint, error) {
	if len(s) > maxCheckpointLen {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: longer than %d bytes", maxCheckpointLen)
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: not base64url: %v", err)
	}
	if len(raw) < 1+sha256.Size {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: truncated")
	}
	if raw[0] != checkpointVersion {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: version %d is not supported (want %d); restart the stream",
			raw[0], checkpointVersion)
	}
	body, tag := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	var sum [sha256.Size]byte
	if !hmac.Equal(e.mac(sum[:0], body), tag) {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: signature mismatch (tampered, or signed by another server key)")
	}
	var cp checkpoint
	c := statecodec.NewDecoder(body[1:])
	if cp.codec(c); c.Err() != nil {
		return nil, badRequest("invalid stream_state.vrender_checkpoint: %v", c.Err())
	}
	return &cp, nil
}

// binding digests what a checkpoint must be used with: the model, parser
// configuration and the parsing-relevant request fields (not the prompt,
// which a resuming client need not send; what the machines learnt from it
// is in their state).
func (e *Engine) binding(model string, s *parseSetup) [sha256.Size]byte {
	h := sha256.New()
	str := func(v []byte) {
		h.Write(binary.AppendUvarint(nil, uint64(len(v))))
		h.Write(v)
	}
	str([]byte("vrender checkpoint binding"))
	str([]byte(model))
	str([]byte(e.cfg.Parsers.ReasoningParser))
	str([]byte(e.cfg.Parsers.ToolParser))
	str([]byte{flag(e.cfg.Parsers.EnableAutoToolChoice), flag(s.opts.SkipSpecialTokens)})
	str(s.reqKey)
	var stops []byte
	for _, id := range s.chat.StopTokenIDs {
		stops = binary.AppendVarint(stops, int64(id))
	}
	str(stops)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
