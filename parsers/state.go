package parsers

import (
	"fmt"

	"github.com/vrender/vrender/internal/statecodec"
)

// Parser state encoding for stateless streaming (a signed checkpoint the
// client carries). A machine keeps its per-request configuration (marker
// specs, tool tables) beside its mutable state; the factory rebuilds the
// configuration from the request, and the machine's codec method walks
// the state alone through a statecodec.Codec, one method for both
// directions. Restore builds a fresh machine for the same request and
// decodes into it. The layout has no version of its own: it is part of
// the checkpoint payload, whose version a changed machine must bump.
//
// Decoded state is checked where a bad value could make a machine loop or
// index out of range (enum values, offsets into held bytes, node tables):
// a checkpoint is signed, but a signing key can leak, and a machine must
// never panic or hang on its own state.

// stateMachine is a machine whose state can be saved and restored.
type stateMachine interface {
	codec(c *statecodec.Codec)
}

// stateCap is the buffer a parser's state starts in when the caller gives
// none: most fit, so saving is one allocation.
const stateCap = 256

// AppendState appends everything p needs to continue a stream to dst;
// Restore with the same configuration and request brings it back.
func (p *Parser) AppendState(dst []byte) []byte {
	p.settle()
	if dst == nil {
		dst = make([]byte, 0, stateCap+len(p.ws))
	}
	c := statecodec.NewEncoder(dst)
	p.codec(c)
	return c.Bytes()
}

// Restore rebuilds the parser AppendState saved, for the same cfg, vocab
// and request. The prompt is not needed: what the machines learnt from it
// is part of the state. Malformed state is an error, never a panic.
func Restore(cfg Config, v Vocab, req *Request, state []byte) (*Parser, error) {
	p, err := New(cfg, v, req, nil)
	if err != nil {
		return nil, err
	}
	c := statecodec.NewDecoder(state)
	p.codec(c)
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("parser state: %w", err)
	}
	return p, nil
}

// codec saves and restores what changes while streaming: the parser's own
// fields and its machines' state. Which machines there are follows from
// the request; a state for others is refused.
func (p *Parser) codec(c *statecodec.Codec) {
	c.ByteSlice(&p.ws)
	c.Bool(&p.contentOut)
	c.Bool(&p.callsOut)
	c.Bool(&p.finished)
	// A finished parser's machines are only asked for their verdicts.
	c.SetSettled(p.finished)
	for _, m := range []stateMachine{p.reasoning, p.tools} {
		present := m != nil
		want := present
		if c.Bool(&present); present != want {
			c.Failf("parser state has machines this request does not")
			return
		}
		if present {
			m.codec(c)
		}
	}
}

// streamingMachine is a machine that keeps less when its output is
// streamed (see SetStreaming).
type streamingMachine interface{ setStreaming() }

// SetStreaming tells the machines that every delta goes out to a client as
// it is made. A fallback that re-answers the whole output at Finish (vLLM's
// non-streaming answer for a malformed call) can then no longer be reached
// once a call was sent, so the text it would need is not kept and the
// state, and with it a checkpoint, stays flat. Batch parsing never calls
// it. Call it before the first Push, or after Restore.
func (p *Parser) SetStreaming() {
	if s, ok := p.reasoning.(streamingMachine); ok {
		s.setStreaming()
	}
	if s, ok := p.tools.(streamingMachine); ok {
		s.setStreaming()
	}
}
