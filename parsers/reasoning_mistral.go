package parsers

import (
	"fmt"

	"github.com/vrender/vrender/internal/statecodec"
)

// Mistral reasoning, as vLLM's MistralReasoningParser.extract_reasoning:
// reasoning is what follows the first "[THINK]" up to the next "[/THINK]"
// (or the end); content is the text before "[THINK]" plus the text after
// that "[/THINK]", empty content being null. Without "[THINK]" everything
// is content (a string, even empty), less its first "[/THINK]".

const (
	mistralThinkOn  = "[THINK]"
	mistralThinkOff = "[/THINK]"
)

func newMistralReasoning(v Vocab, _ *Request, _ []int) (reasoningMachine, error) {
	_, ok1 := v.TokenToID(mistralThinkOn)
	_, ok2 := v.TokenToID(mistralThinkOff)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("mistral reasoning parser: tokenizer has no %s/%s tokens", mistralThinkOn, mistralThinkOff)
	}
	return &mistralReasoning{}, nil
}

// mistralPhase is where a mistralReasoning machine is.
type mistralPhase uint8

const (
	mistralPre       mistralPhase = iota // before "[THINK]"
	mistralPreClosed                     // a "[/THINK]" came before any "[THINK]"
	mistralThinking                      // after "[THINK]"
	mistralContent                       // after "[THINK]" … "[/THINK]"
)

var (
	mistralPreMarkers       = []string{mistralThinkOn, mistralThinkOff}
	mistralThinkOnMarkers   = []string{mistralThinkOn}
	mistralReasoningMarkers = []string{mistralThinkOff}
)

// mistralReasoning is the mistral reasoning machine.
type mistralReasoning struct {
	phase mistralPhase
	// held is the content after a "[/THINK]" that came before any
	// "[THINK]": that marker is dropped unless a "[THINK]" follows, so the
	// text after it waits for the verdict.
	held []byte
	scan markerScan
}

// Push implements reasoningMachine.
func (m *mistralReasoning) Push(text string) (reasoning, content string) {
	for {
		switch m.phase {
		case mistralContent:
			return reasoning, content + text
		case mistralThinking:
			before, marker, rest := m.scan.next(text, mistralReasoningMarkers)
			reasoning += before
			if marker == "" {
				return reasoning, content
			}
			m.phase = mistralContent
			text = rest
		case mistralPre:
			before, marker, rest := m.scan.next(text, mistralPreMarkers)
			content += before
			switch marker {
			case "":
				return reasoning, content
			case mistralThinkOn:
				m.phase = mistralThinking
			default:
				m.phase = mistralPreClosed
			}
			text = rest
		case mistralPreClosed:
			before, marker, rest := m.scan.next(text, mistralThinkOnMarkers)
			m.held = append(m.held, before...)
			if marker == "" {
				return reasoning, content
			}
			content += mistralThinkOff + string(m.held)
			m.held = nil
			m.phase = mistralThinking
			text = rest
		}
	}
}

// Finish implements reasoningMachine.
func (m *mistralReasoning) Finish() (reasoning, content string) {
	held := m.scan.flush()
	switch m.phase {
	case mistralThinking:
		return held, ""
	case mistralPreClosed:
		s := string(m.held) + held
		m.held = nil
		return "", s
	}
	return "", held
}

// Nulls implements reasoningMachine.
func (m *mistralReasoning) Nulls() (reasoningNull, contentNull bool) {
	thought := m.phase == mistralThinking || m.phase == mistralContent
	return !thought, thought
}

// codec saves and restores the state of a mistralReasoning.
func (m *mistralReasoning) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &m.phase, 4)
	c.ByteSlice(&m.held)
	m.scan.codec(c)
}
