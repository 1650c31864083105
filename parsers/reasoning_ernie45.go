package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

// ERNIE-4.5 reasoning, as vLLM's Ernie45ReasoningParser.extract_reasoning:
// the thinking family's split on "<think>"/"</think>" (reasoning_thinking.go), then,
// when the content holds a "<response>" followed somewhere by a
// "</response>", the content is only what lies between the first
// "<response>" and the last "</response>". Until that is known the content
// is held back: text before "<response>" waits for a "</response>" (which
// drops it), text after a "</response>" waits for another one.

const (
	ernieResponseOn  = "<response>"
	ernieResponseOff = "</response>"
)

var ernieSpec = newThinkingSpec("ernie45", thinkStart, thinkEnd)

func newErnie45Reasoning(v Vocab, _ *Request, _ []int) (reasoningMachine, error) {
	t, err := newThinking(ernieSpec, false, v, nil)
	if err != nil {
		return nil, err
	}
	return &ernie45Reasoning{think: *t}, nil
}

// erniePhase is where the content filter is.
type erniePhase uint8

const (
	ernieBefore erniePhase = iota // no "<response>" yet
	ernieInside                   // after the first "<response>"
	ernieClosed                   // after a "</response>" that follows it
)

var (
	ernieOnMarkers  = []string{ernieResponseOn}
	ernieOffMarkers = []string{ernieResponseOff}
)

// ernie45Reasoning is the ernie45 reasoning machine.
type ernie45Reasoning struct {
	think thinkingReasoning
	phase erniePhase
	// pre is the content before the first "<response>"; Body is the
	// content after it (ernieInside) or after the last "</response>"
	// (ernieClosed), not yet known to be kept.
	pre, body []byte
	scan      markerScan
}

// Push implements reasoningMachine.
func (e *ernie45Reasoning) Push(text string) (reasoning, content string) {
	reasoning, c := e.think.Push(text)
	return reasoning, e.filter(c)
}

// filter passes content through the response-tag rule.
func (e *ernie45Reasoning) filter(text string) string {
	var out strings.Builder // not +=: many markers in one push would copy it each time
	for {
		markers := ernieOffMarkers
		if e.phase == ernieBefore {
			markers = ernieOnMarkers
		}
		before, marker, rest := e.scan.next(text, markers)
		switch e.phase {
		case ernieBefore:
			e.pre = append(e.pre, before...)
			if marker != "" {
				e.phase = ernieInside
			}
		case ernieInside:
			e.body = append(e.body, before...)
			if marker != "" {
				out.Write(e.body)
				e.pre, e.body = nil, nil
				e.phase = ernieClosed
			}
		case ernieClosed:
			e.body = append(e.body, before...)
			if marker != "" {
				out.WriteString(ernieResponseOff)
				out.Write(e.body)
				e.body = nil
			}
		}
		if marker == "" {
			return out.String()
		}
		text = rest
	}
}

// Finish implements reasoningMachine.
func (e *ernie45Reasoning) Finish() (reasoning, content string) {
	reasoning, c := e.think.Finish()
	content = e.filter(c)
	held := e.scan.flush()
	switch e.phase {
	case ernieBefore:
		content += string(e.pre) + held
	case ernieInside:
		content += string(e.pre) + ernieResponseOn + string(e.body) + held
	}
	e.pre, e.body = nil, nil
	return reasoning, content
}

// Nulls implements reasoningMachine.
func (e *ernie45Reasoning) Nulls() (reasoningNull, contentNull bool) { return e.think.Nulls() }

// codec saves and restores the state of a ernie45Reasoning.
func (e *ernie45Reasoning) codec(c *statecodec.Codec) {
	e.think.codec(c)
	statecodec.Enum(c, &e.phase, 3)
	c.ByteSlice(&e.pre)
	c.ByteSlice(&e.body)
	e.scan.codec(c)
}
