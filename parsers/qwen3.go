package parsers

// Qwen3 reasoning, as vLLM's Qwen3Parser engine run with tool parsing
// skipped (its extract_reasoning): output starts in reasoning unless
// chat_template_kwargs.enable_thinking is false; "<think>" inside reasoning
// is dropped, "</think>" ends it and is dropped, "<tool_call>" ends it
// implicitly and stays as content; a "</think>" in content is dropped.

func init() {
	registerReasoning("qwen3", ReasoningInfo{New: newQwen3Reasoning, NeedsSpecialTokens: true})
}

const (
	thinkStart = "<think>"
	thinkEnd   = "</think>"
	toolCallOn = "<tool_call>"
)

// Qwen3Reasoning is the qwen3 reasoning machine.
type Qwen3Reasoning struct {
	// Disabled is set when enable_thinking is false: all output is content.
	Disabled bool
	// InContent is set once reasoning has ended.
	InContent bool
	Scan      markerScan
}

func newQwen3Reasoning(_ Vocab, req *Request, _ []int) (ReasoningMachine, error) {
	on, set := req.kwargBool("enable_thinking")
	return &Qwen3Reasoning{Disabled: set && !on}, nil
}

var (
	qwen3ReasoningMarkers = []string{thinkStart, thinkEnd, toolCallOn}
	qwen3ContentMarkers   = []string{thinkEnd}
)

// Push implements ReasoningMachine.
func (q *Qwen3Reasoning) Push(text string) (reasoning, content string) {
	if q.Disabled {
		return "", text
	}
	for {
		markers := qwen3ReasoningMarkers
		if q.InContent {
			markers = qwen3ContentMarkers
		}
		before, marker, rest := q.Scan.next(text, markers)
		if q.InContent {
			content += before
		} else {
			reasoning += before
		}
		switch marker {
		case "":
			return reasoning, content
		case thinkEnd:
			q.InContent = true
		case toolCallOn:
			q.InContent = true
			content += marker
		}
		text = rest
	}
}

// Finish implements ReasoningMachine.
func (q *Qwen3Reasoning) Finish() (reasoning, content string) {
	held := q.Scan.flush()
	if q.InContent {
		return "", held
	}
	return held, ""
}

// Nulls implements ReasoningMachine: with thinking disabled vLLM returns
// the output itself as content ("" stays ""), otherwise empty parts are null.
func (q *Qwen3Reasoning) Nulls() (reasoningNull, contentNull bool) {
	return true, !q.Disabled
}
