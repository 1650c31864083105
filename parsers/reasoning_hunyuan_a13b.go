package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

// Hunyuan-A13B reasoning, as vLLM's HunyuanA13BReasoningParser
// .extract_reasoning, which tries two regexes:
//
//   - full, (?:<think>\n(.*?)\n</think>\n<answer>\n)?(.*?)\n</answer>, matches
//     whenever the output holds a "\n</answer>". If the output starts with
//     "<think>\n" and has a "\n</think>\n<answer>\n" followed by a
//     "\n</answer>", reasoning is between the first two and content runs
//     up to the next "\n</answer>"; otherwise content is everything before
//     the first "\n</answer>" and reasoning is null.
//   - half, <think>\n(.*?)\n</think>\n<answer>\n(.*), searched anywhere: the
//     first "<think>\n" with an answer marker after it splits reasoning and
//     content, dropping the text before it.
//
// Failing both, the whole output is content. Empty parts are null except
// in that last case. The tags are ordinary text, so the machine holds the
// output back until one of these outcomes is certain; once reasoning is
// certain (the output started with "<think>\n", the answer marker came and
// no "\n</answer>" before it) content streams up to the "\n</answer>".

const (
	hunyuanThink  = "<think>\n"
	hunyuanAnswer = "\n</think>\n<answer>\n"
	hunyuanEnd    = "\n</answer>"
)

var (
	hunyuanAnswerMarkers = []string{hunyuanAnswer}
	hunyuanEndMarkers    = []string{hunyuanEnd}
)

func newHunyuanReasoning() *hunyuanReasoning {
	return &hunyuanReasoning{answer: -1, end: -1, findAnswer: holdScan{next: len(hunyuanThink)}}
}

// hunyuanMode is what the start of the output was.
type hunyuanMode uint8

const (
	hunyuanUndecided hunyuanMode = iota // shorter than "<think>\n" and a prefix of it
	hunyuanThinking                     // starts with "<think>\n"
	hunyuanPlain                        // anything else
)

// hunyuanReasoning is the hunyuan_a13b reasoning machine.
type hunyuanReasoning struct {
	mode hunyuanMode
	// buf is the output held back while the outcome is open.
	buf []byte
	// answer and End are the offsets in Buf of the first answer marker
	// (after "<think>\n") and of the first "\n</answer>", or -1.
	answer, end int
	// findAnswer, FindEnd and FindLaterEnd search Buf for the answer
	// marker, the first end marker and an end marker after the answer.
	findAnswer, findEnd, findLaterEnd holdScan
	// streaming is set once reasoning went out: content now streams up
	// to the end marker, found with Scan.
	streaming bool
	scan      markerScan
	// done is set once the content is complete; later output is dropped.
	done bool
	// noMatch is set at Finish when neither regex matched: the output is
	// the content, "" included.
	noMatch bool
}

// Push implements reasoningMachine.
func (h *hunyuanReasoning) Push(text string) (reasoning, content string) {
	switch {
	case h.done:
		return "", ""
	case h.streaming:
		return "", h.stream(text)
	}
	h.buf = append(h.buf, text...)
	if h.mode == hunyuanUndecided {
		if len(h.buf) < len(hunyuanThink) && strings.HasPrefix(hunyuanThink, string(h.buf)) {
			return "", ""
		}
		h.mode = hunyuanPlain
		if strings.HasPrefix(string(h.buf[:min(len(h.buf), len(hunyuanThink))]), hunyuanThink) {
			h.mode = hunyuanThinking
		}
	}
	if h.end < 0 {
		h.end, _ = h.findEnd.find(h.buf, hunyuanEndMarkers)
	}
	if h.mode == hunyuanPlain {
		if h.end < 0 {
			return "", ""
		}
		return "", h.finishWith(string(h.buf[:h.end]))
	}
	if h.answer < 0 {
		if h.answer, _ = h.findAnswer.find(h.buf, hunyuanAnswerMarkers); h.answer < 0 {
			return "", ""
		}
		h.findLaterEnd.seek(h.answer + len(hunyuanAnswer))
	}
	body := h.answer + len(hunyuanAnswer)
	reasoning = string(h.buf[len(hunyuanThink):h.answer])
	switch {
	case h.end >= body:
		return reasoning, h.finishWith(string(h.buf[body:h.end]))
	case h.end >= 0:
		// A "\n</answer>" before the answer: reasoning only if another
		// one follows the answer marker.
		if later, _ := h.findLaterEnd.find(h.buf, hunyuanEndMarkers); later >= 0 {
			return reasoning, h.finishWith(string(h.buf[body:later]))
		}
		return "", ""
	case len(h.buf) >= body-1+len(hunyuanEnd):
		// No "\n</answer>" can start before the body any more.
		h.streaming = true
		rest := string(h.buf[body:])
		h.buf = nil
		return reasoning, h.stream(rest)
	}
	return "", ""
}

// stream passes content up to the end marker.
func (h *hunyuanReasoning) stream(text string) string {
	before, marker, _ := h.scan.next(text, hunyuanEndMarkers)
	if marker != "" {
		h.done, h.streaming = true, false
	}
	return before
}

func (h *hunyuanReasoning) finishWith(content string) string {
	h.done, h.buf = true, nil
	return content
}

// Finish implements reasoningMachine.
func (h *hunyuanReasoning) Finish() (reasoning, content string) {
	switch {
	case h.done:
		return "", ""
	case h.streaming:
		h.streaming, h.done = false, true
		return "", h.scan.flush()
	}
	buf := string(h.buf)
	h.done, h.buf = true, nil
	if h.end >= 0 {
		return "", buf[:h.end]
	}
	// No "\n</answer>" anywhere: the half regex.
	if t := strings.Index(buf, hunyuanThink); t >= 0 {
		from := t + len(hunyuanThink)
		if a := strings.Index(buf[from:], hunyuanAnswer); a >= 0 {
			return buf[from : from+a], buf[from+a+len(hunyuanAnswer):]
		}
	}
	h.noMatch = true
	return "", buf
}

// Nulls implements reasoningMachine.
func (h *hunyuanReasoning) Nulls() (reasoningNull, contentNull bool) {
	return true, !h.noMatch
}

// codec saves and restores the state of a hunyuanReasoning.
func (h *hunyuanReasoning) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &h.mode, 3)
	c.ByteSlice(&h.buf)
	c.Int(&h.answer)
	c.Int(&h.end)
	h.findAnswer.codec(c)
	h.findEnd.codec(c)
	h.findLaterEnd.codec(c)
	c.Bool(&h.streaming)
	h.scan.codec(c)
	c.Bool(&h.done)
	c.Bool(&h.noMatch)
	if !h.streaming && !h.done { // the buffer is released after
		c.Within(len(h.buf), h.findEnd.next)
		// The answer searches start past "<think>", and run only once
		// the buffer starts with it.
		c.Within(max(len(h.buf), len(hunyuanThink)), h.findAnswer.next, h.findLaterEnd.next)
		c.Within(len(h.buf)+1, h.end+1)
		if h.answer >= 0 {
			c.Within(len(h.buf)-len(hunyuanAnswer), h.answer-len(hunyuanThink))
		}
	}
}

func newHunyuanReasoningMachine(Vocab, *Request, []int) (reasoningMachine, error) {
	return newHunyuanReasoning(), nil
}
