package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/parsers/pyjson"
)

// xLAM tool calls, as vLLM's xLAMToolParser.extract_tool_calls: a JSON
// list of {"name", "arguments"} objects found, in this order of preference,
//
//  1. after the first "</think>" (the stripped rest, or the first valid
//     JSON of a code-block pattern inside it): content is the stripped
//     text up to and including "</think>";
//  2. in ```json fences, then after [TOOL_CALLS] (to the end of the line),
//     then in <tool_call>…</tool_call>: the first match that is valid JSON
//     wins and content is the text with every match of that pattern
//     removed, stripped;
//  3. as the whole output when it starts with "[": content is null.
//
// Elements that are not objects with "name" and "arguments" are skipped; a
// non-string name, or arguments neither an object (json.dumps'd) nor a
// string (taken as is), void all calls. Without calls the server returns
// the output unchanged.
//
// Which text survives depends on the whole output, so this machine streams
// only the text before the first "```", "[TOOL_CALLS]", "<tool_call>" or
// "</think>" (it is kept either way, less trailing space), holds the rest
// and settles everything in Finish with one pass over the output. An output
// that starts with space or "[" is held whole.

const (
	xlFence     = "```"
	xlToolCalls = "[TOOL_CALLS]"
	xlToolOpen  = "<tool_call>"
	xlToolClose = "</tool_call>"
	xlThinkEnd  = "</think>"
)

var xlTriggers = []string{xlFence, xlToolCalls, xlToolOpen, xlThinkEnd}

// xlam is the xlam tool machine.
type xlam struct {
	scan markerScan
	// all is the whole output so far.
	all []byte
	// Certain counts the bytes of All known to precede every trigger;
	// Emitted those handed out as content.
	certainN, emitted int
	// tail counts bytes at the end of Certain that a cut-off UTF-8
	// sequence kept from being examined.
	tail          int
	started, hold bool
	triggered     bool
	calls         bool
}

func newXLAM(Vocab, *Request) (toolMachine, error) { return &xlam{}, nil }

// Push implements toolMachine.
func (x *xlam) Push(text string) (string, []ToolCallDelta) {
	x.all = append(x.all, text...)
	if x.triggered {
		return "", nil
	}
	before, marker, _ := x.scan.next(text, xlTriggers)
	if marker != "" {
		x.triggered = true
		x.scan = markerScan{}
	}
	return x.certain(before), nil
}

// certain takes text known to precede every trigger.
func (x *xlam) certain(before string) string {
	start := x.certainN - x.tail
	x.certainN += len(before)
	if x.hold || before == "" {
		return ""
	}
	if !x.started {
		r, n := utf8.DecodeRune(x.all[:x.certainN])
		if r == utf8.RuneError && n <= 1 && !utf8.FullRune(x.all[:x.certainN]) {
			return "" // the first rune is still cut off
		}
		x.started = true
		if pyIsSpace(r) || r == '[' {
			x.hold = true
			return ""
		}
		start = 0
	}
	seg := string(x.all[start:x.certainN])
	x.tail = incompleteTail(seg)
	seg = seg[:len(seg)-x.tail]
	cut := len(strings.TrimRightFunc(seg, pyIsSpace))
	if cut == 0 {
		return ""
	}
	end := start + cut
	out := string(x.all[x.emitted:end])
	x.emitted = end
	return out
}

// Finish implements toolMachine.
func (x *xlam) Finish() (string, []ToolCallDelta) {
	all := string(x.all)
	content, calls := xlamExtract(all)
	final := all
	if len(calls) > 0 {
		x.calls = true
		final = ""
		if content != nil {
			final = *content
		}
	}
	if !strings.HasPrefix(final, all[:x.emitted]) {
		// Cannot happen: the streamed text precedes every trigger.
		return final, calls
	}
	return final[x.emitted:], calls
}

// Called implements toolMachine.
func (x *xlam) Called() bool { return x.calls }

// xlamExtract is extract_tool_calls on a whole output: the content when
// calls were found, and the calls.
func xlamExtract(out string) (*string, []ToolCallDelta) {
	content, potential, ok := xlamPreprocess(out)
	if !ok {
		return nil, nil
	}
	canon, err := pyjson.Canonical(potential)
	if err != nil || canon[0] != '[' {
		return nil, nil
	}
	var l jsonList
	l.feed(canon)
	if !l.done() {
		return nil, nil
	}
	calls, ok := l.namedCalls()
	if !ok {
		return nil, nil
	}
	return content, calls
}

// xlamPreprocess is preprocess_model_output: ok is false when it finds no
// potential tool calls.
func xlamPreprocess(out string) (content *string, potential string, ok bool) {
	if i := strings.Index(out, xlThinkEnd); i >= 0 {
		c := pyStrip(out[:i+len(xlThinkEnd)])
		rest := pyStrip(out[i+len(xlThinkEnd):])
		if xlValid(rest) {
			return &c, rest, true
		}
		for _, p := range xlPatterns {
			for _, m := range p.findAll(rest) {
				if xlValid(rest[m.group0:m.group1]) {
					return &c, rest[m.group0:m.group1], true
				}
			}
		}
	}
	for _, p := range xlPatterns {
		matches := p.findAll(out)
		for _, m := range matches {
			if !xlValid(out[m.group0:m.group1]) {
				continue
			}
			var b strings.Builder
			prev := 0
			for _, r := range matches {
				b.WriteString(out[prev:r.start])
				prev = r.end
			}
			b.WriteString(out[prev:])
			c := pyStrip(b.String())
			return &c, out[m.group0:m.group1], true
		}
	}
	if strings.HasPrefix(pyStrip(out), "[") {
		if xlValid(out) || strings.Contains(out, "{") && strings.Contains(out, "name") && strings.Contains(out, "arguments") {
			return nil, out, true
		}
	}
	return nil, "", false
}

// xlValid reports whether json.loads accepts s.
func xlValid(s string) bool {
	_, err := pyjson.Canonical(s)
	return err == nil
}

// xlMatch is one regex match: the whole span and the group's.
type xlMatch struct{ start, end, group0, group1 int }

// xlPattern is one of the parser's json_code_block_patterns.
type xlPattern struct {
	findAll func(s string) []xlMatch
}

var xlPatterns = []xlPattern{{xlFences}, {xlToolCallsLines}, {xlToolCallTags}}

// xlFences is re.finditer(r"```(?:json)?\s*([\s\S]*?)```").
func xlFences(s string) []xlMatch {
	var ms []xlMatch
	for at := 0; ; {
		i := strings.Index(s[at:], xlFence)
		if i < 0 {
			return ms
		}
		start := at + i
		g := start + len(xlFence)
		g += len("json") * boolInt(strings.HasPrefix(s[g:], "json"))
		g += len(s[g:]) - len(strings.TrimLeftFunc(s[g:], pyIsSpace))
		j := strings.Index(s[g:], xlFence)
		if j < 0 {
			return ms
		}
		end := g + j + len(xlFence)
		ms = append(ms, xlMatch{start, end, g, g + j})
		at = end
	}
}

// xlToolCallsLines is re.finditer(r"\[TOOL_CALLS\]([\s\S]*?)(?=\n|$)").
func xlToolCallsLines(s string) []xlMatch {
	var ms []xlMatch
	for at := 0; ; {
		i := strings.Index(s[at:], xlToolCalls)
		if i < 0 {
			return ms
		}
		start := at + i
		g := start + len(xlToolCalls)
		e := len(s)
		if j := strings.IndexByte(s[g:], '\n'); j >= 0 {
			e = g + j
		}
		ms = append(ms, xlMatch{start, e, g, e})
		at = e
	}
}

// xlToolCallTags is re.finditer(r"<tool_call>([\s\S]*?)</tool_call>").
func xlToolCallTags(s string) []xlMatch {
	var ms []xlMatch
	for at := 0; ; {
		i := strings.Index(s[at:], xlToolOpen)
		if i < 0 {
			return ms
		}
		start := at + i
		g := start + len(xlToolOpen)
		j := strings.Index(s[g:], xlToolClose)
		if j < 0 {
			return ms
		}
		end := g + j + len(xlToolClose)
		ms = append(ms, xlMatch{start, end, g, g + j})
		at = end
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// codec saves and restores the state of an xlam.
func (x *xlam) codec(c *statecodec.Codec) {
	x.scan.codec(c)
	c.ByteSlice(&x.all)
	c.Int(&x.certainN)
	c.Int(&x.emitted)
	c.Int(&x.tail)
	c.Bool(&x.started)
	c.Bool(&x.hold)
	c.Bool(&x.triggered)
	c.Bool(&x.calls)
	c.Within(len(x.all), x.certainN, x.emitted)
	c.Within(x.certainN, x.tail)
}
