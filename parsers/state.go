package parsers

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// Parser state encoding for stateless streaming (a signed checkpoint the
// client carries). The machines keep their mutable state in exported
// fields and their per-request configuration (marker specs, tool tables)
// in unexported ones, which the factory rebuilds from the request. So a
// machine is saved by encoding its exported fields (statecodec.go), and
// restored by building a fresh machine for the same request and decoding
// into them. A machine whose state the codec cannot carry (an interface
// field, shared pointers) implements encoding.BinaryMarshaler itself, as
// the pythonic call list does; one that does neither fails to save with an
// error rather than saving wrongly.

// parserState is what a Parser carries beside its machines: the fields
// that change while streaming. The rest follows from the request.
type parserState struct {
	WS         string
	ContentOut bool
	CallsOut   bool
	Finished   bool
	// The machines' types and layout fingerprints guard against decoding
	// into a different machine than the one saved, or one another build
	// laid out differently.
	ReasoningType, ToolsType     string
	ReasoningLayout, ToolsLayout uint64
	Reasoning, Tools             []byte
}

// MarshalState encodes everything p needs to continue a stream; Restore
// with the same configuration and request brings it back.
func (p *Parser) MarshalState() ([]byte, error) {
	p.settle()
	s := parserState{WS: string(p.WS), ContentOut: p.ContentOut, CallsOut: p.CallsOut, Finished: p.Finished}
	var err error
	if p.Reasoning != nil {
		s.ReasoningType, s.ReasoningLayout = machineType(p.Reasoning)
		if s.Reasoning, err = encodeMachine(p.Reasoning); err != nil {
			return nil, fmt.Errorf("reasoning parser state: %w", err)
		}
	}
	if p.Tools != nil {
		s.ToolsType, s.ToolsLayout = machineType(p.Tools)
		if s.Tools, err = encodeMachine(p.Tools); err != nil {
			return nil, fmt.Errorf("tool parser state: %w", err)
		}
	}
	// Sized for the lot: the varints and flags take well under 64 bytes.
	buf := make([]byte, 0, len(s.WS)+len(s.ReasoningType)+len(s.ToolsType)+len(s.Reasoning)+len(s.Tools)+64)
	return appendState(buf, reflect.ValueOf(&s).Elem())
}

// Restore rebuilds the parser MarshalState saved, for the same cfg, vocab
// and request. The prompt is not needed: what the machines learnt from it
// is part of the state. Malformed state is an error, never a panic.
func Restore(cfg Config, v Vocab, req *Request, state []byte) (*Parser, error) {
	p, err := New(cfg, v, req, nil)
	if err != nil {
		return nil, err
	}
	var s parserState
	if err := decodeAll(state, reflect.ValueOf(&s).Elem()); err != nil {
		return nil, fmt.Errorf("parser state: %w", err)
	}
	rt, rl := machineType(p.Reasoning)
	tt, tl := machineType(p.Tools)
	if s.ReasoningType != rt || s.ToolsType != tt {
		return nil, fmt.Errorf("parser state is for machines %q/%q, not %q/%q", s.ReasoningType, s.ToolsType, rt, tt)
	}
	if s.ReasoningLayout != rl || s.ToolsLayout != tl {
		return nil, errors.New("parser state was saved by a build whose machines are laid out differently")
	}
	if p.Reasoning != nil {
		if err := decodeMachine(p.Reasoning, s.Reasoning); err != nil {
			return nil, fmt.Errorf("reasoning parser state: %w", err)
		}
		if err := checkState(p.Reasoning); err != nil {
			return nil, fmt.Errorf("reasoning parser state: %w", err)
		}
	}
	if p.Tools != nil {
		if err := decodeMachine(p.Tools, s.Tools); err != nil {
			return nil, fmt.Errorf("tool parser state: %w", err)
		}
		if err := checkState(p.Tools); err != nil {
			return nil, fmt.Errorf("tool parser state: %w", err)
		}
	}
	p.ContentOut, p.CallsOut, p.Finished = s.ContentOut, s.CallsOut, s.Finished
	p.WS = nil
	if s.WS != "" {
		p.WS = []byte(s.WS)
	}
	return p, nil
}

// stateChecker is a machine whose decoded state can be out of its domain
// in a way that would make it loop: a phase outside its enum, say. The
// codec checks types only; a checkpoint is signed, but a signing key can
// leak, and a machine must never hang on its own state.
type stateChecker interface{ checkState() error }

func checkState(m any) error {
	if c, ok := m.(stateChecker); ok {
		return c.checkState()
	}
	return nil
}

// phaseError reports a phase outside [0, n).
func phaseError[P ~int | ~uint8](phase P, n int) error {
	if int(phase) < 0 || int(phase) >= n {
		return fmt.Errorf("phase %d out of range", phase)
	}
	return nil
}

// layouts memoises StateLayout per machine type: a pure function of the
// type, so the cache never changes an answer.
var layouts sync.Map // reflect.Type -> uint64

func machineType(m any) (string, uint64) {
	if m == nil || reflect.ValueOf(m).IsNil() {
		return "", 0
	}
	t := reflect.TypeOf(m)
	if l, ok := layouts.Load(t); ok {
		return t.String(), l.(uint64)
	}
	l := StateLayout(t)
	layouts.Store(t, l)
	return t.String(), l
}

var errNotPointer = errors.New("machine is not a pointer to a struct; its state cannot be restored in place")

func machineValue(m any) (reflect.Value, error) {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, fmt.Errorf("%T: %w", m, errNotPointer)
	}
	return v.Elem(), nil
}

// machineStateCap is the buffer a machine's state starts in: most fit, so
// encoding one is one allocation, not a run of doublings.
const machineStateCap = 256

func encodeMachine(m any) ([]byte, error) {
	v, err := machineValue(m)
	if err != nil {
		return nil, err
	}
	return appendState(make([]byte, 0, machineStateCap), v)
}

func decodeMachine(m any, data []byte) error {
	v, err := machineValue(m)
	if err != nil {
		return err
	}
	return decodeAll(data, v)
}

// decodeAll decodes data into v and insists nothing is left over.
func decodeAll(data []byte, v reflect.Value) (err error) {
	r := &stateReader{b: data}
	if err := readState(r, v); err != nil {
		return err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%d bytes of state left over", len(r.b))
	}
	return nil
}

// AppendState appends the exported fields of the struct v points to,
// encoded with the machine-state codec (for the checkpoint envelope).
func AppendState(dst []byte, v any) ([]byte, error) {
	rv, err := machineValue(v)
	if err != nil {
		return nil, err
	}
	return appendState(dst, rv)
}

// DecodeState decodes what AppendState wrote into the struct v points to;
// malformed data is an error, never a panic.
func DecodeState(data []byte, v any) error {
	rv, err := machineValue(v)
	if err != nil {
		return err
	}
	return decodeAll(data, rv)
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
	if s, ok := p.Reasoning.(streamingMachine); ok {
		s.setStreaming()
	}
	if s, ok := p.Tools.(streamingMachine); ok {
		s.setStreaming()
	}
}
