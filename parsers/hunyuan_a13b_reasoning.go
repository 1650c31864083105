package parsers

import "strings"

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

func init() {
	registerReasoning("hunyuan_a13b", ReasoningInfo{New: func(Vocab, *Request, []int) (ReasoningMachine, error) {
		return newHunyuanReasoning(), nil
	}})
}

func newHunyuanReasoning() *HunyuanReasoning {
	return &HunyuanReasoning{Answer: -1, End: -1, FindAnswer: holdScan{Next: len(hunyuanThink)}}
}

// hunyuanMode is what the start of the output was.
type hunyuanMode uint8

const (
	hunyuanUndecided hunyuanMode = iota // shorter than "<think>\n" and a prefix of it
	hunyuanThinking                     // starts with "<think>\n"
	hunyuanPlain                        // anything else
)

// HunyuanReasoning is the hunyuan_a13b reasoning machine.
type HunyuanReasoning struct {
	Mode hunyuanMode
	// Buf is the output held back while the outcome is open.
	Buf []byte
	// Answer and End are the offsets in Buf of the first answer marker
	// (after "<think>\n") and of the first "\n</answer>", or -1.
	Answer, End int
	// FindAnswer, FindEnd and FindLaterEnd search Buf for the answer
	// marker, the first end marker and an end marker after the answer.
	FindAnswer, FindEnd, FindLaterEnd holdScan
	// Streaming is set once reasoning went out: content now streams up
	// to the end marker, found with Scan.
	Streaming bool
	Scan      markerScan
	// Done is set once the content is complete; later output is dropped.
	Done bool
	// NoMatch is set at Finish when neither regex matched: the output is
	// the content, "" included.
	NoMatch bool
}

// Push implements ReasoningMachine.
func (h *HunyuanReasoning) Push(text string) (reasoning, content string) {
	switch {
	case h.Done:
		return "", ""
	case h.Streaming:
		return "", h.stream(text)
	}
	h.Buf = append(h.Buf, text...)
	if h.Mode == hunyuanUndecided {
		if len(h.Buf) < len(hunyuanThink) && strings.HasPrefix(hunyuanThink, string(h.Buf)) {
			return "", ""
		}
		h.Mode = hunyuanPlain
		if strings.HasPrefix(string(h.Buf[:min(len(h.Buf), len(hunyuanThink))]), hunyuanThink) {
			h.Mode = hunyuanThinking
		}
	}
	if h.End < 0 {
		h.End, _ = h.FindEnd.find(h.Buf, hunyuanEndMarkers)
	}
	if h.Mode == hunyuanPlain {
		if h.End < 0 {
			return "", ""
		}
		return "", h.finishWith(string(h.Buf[:h.End]))
	}
	if h.Answer < 0 {
		if h.Answer, _ = h.FindAnswer.find(h.Buf, hunyuanAnswerMarkers); h.Answer < 0 {
			return "", ""
		}
		h.FindLaterEnd.seek(h.Answer + len(hunyuanAnswer))
	}
	body := h.Answer + len(hunyuanAnswer)
	reasoning = string(h.Buf[len(hunyuanThink):h.Answer])
	switch {
	case h.End >= body:
		return reasoning, h.finishWith(string(h.Buf[body:h.End]))
	case h.End >= 0:
		// A "\n</answer>" before the answer: reasoning only if another
		// one follows the answer marker.
		if later, _ := h.FindLaterEnd.find(h.Buf, hunyuanEndMarkers); later >= 0 {
			return reasoning, h.finishWith(string(h.Buf[body:later]))
		}
		return "", ""
	case len(h.Buf) >= body-1+len(hunyuanEnd):
		// No "\n</answer>" can start before the body any more.
		h.Streaming = true
		rest := string(h.Buf[body:])
		h.Buf = nil
		return reasoning, h.stream(rest)
	}
	return "", ""
}

// stream passes content up to the end marker.
func (h *HunyuanReasoning) stream(text string) string {
	before, marker, _ := h.Scan.next(text, hunyuanEndMarkers)
	if marker != "" {
		h.Done, h.Streaming = true, false
	}
	return before
}

func (h *HunyuanReasoning) finishWith(content string) string {
	h.Done, h.Buf = true, nil
	return content
}

// Finish implements ReasoningMachine.
func (h *HunyuanReasoning) Finish() (reasoning, content string) {
	switch {
	case h.Done:
		return "", ""
	case h.Streaming:
		h.Streaming, h.Done = false, true
		return "", h.Scan.flush()
	}
	buf := string(h.Buf)
	h.Done, h.Buf = true, nil
	if h.End >= 0 {
		return "", buf[:h.End]
	}
	// No "\n</answer>" anywhere: the half regex.
	if t := strings.Index(buf, hunyuanThink); t >= 0 {
		from := t + len(hunyuanThink)
		if a := strings.Index(buf[from:], hunyuanAnswer); a >= 0 {
			return buf[from : from+a], buf[from+a+len(hunyuanAnswer):]
		}
	}
	h.NoMatch = true
	return "", buf
}

// Nulls implements ReasoningMachine.
func (h *HunyuanReasoning) Nulls() (reasoningNull, contentNull bool) {
	return true, !h.NoMatch
}
