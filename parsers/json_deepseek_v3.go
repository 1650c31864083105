package parsers

import (
	"fmt"
	"github.com/vrender/vrender/internal/statecodec"
	"strings"
)

// DeepSeek V3 and V3.1 tool calls, as vLLM's DeepSeekV3ToolParser and
// DeepSeekV31ToolParser extract_tool_calls:
//
//   - without "<｜tool▁calls▁begin｜>" in the text there are no calls and
//     the text is the content;
//   - otherwise content is the text before that marker (null when empty or
//     whitespace-only) and the calls are every match of the parser's regex
//     over the whole text, arguments kept raw; text between and after
//     calls is dropped. Zero matches still count as tools_called (content
//     null) but give no calls (finish_reason stays the engine's).
//
// Both regexes are line-bound (no DOTALL). V3 matches
// "<｜tool▁call▁begin｜>TYPE<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>"
// with TYPE up to the line's last separator and ARGS exactly one line; a
// TYPE other than "function" fails pydantic validation, and vLLM then
// returns no calls and the whole text as content. V3.1 matches
// "<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>" on one
// line, NAME and ARGS as short as possible.
//
// A call is streamed (name and arguments together) once its match is
// certain; calls matched before the calls-begin marker wait for it.

const (
	dsCallsBegin = "<｜tool▁calls▁begin｜>"
	dsCallsEnd   = "<｜tool▁calls▁end｜>"
	dsCallBegin  = "<｜tool▁call▁begin｜>"
	dsCallEnd    = "<｜tool▁call▁end｜>"
	dsSep        = "<｜tool▁sep｜>"
	dsFenceText  = "```json"
	dsCloseLine  = "```" + dsCallEnd
)

var (
	dsContentMarkers = []string{dsCallsBegin}
	dsSeekMarkers    = []string{dsCallBegin}
	dsNameMarkers    = []string{dsSep, "\n"}
	dsArgsMarkers    = []string{dsCallEnd, "\n"}
)

// dsPhase is where the call matcher is within one regex attempt.
type dsPhase uint8

const (
	dsSeek      dsPhase = iota // looking for "<｜tool▁call▁begin｜>"
	dsHead                     // v3: rest of the line; v3.1: the name up to the separator
	dsFenceLine                // v3: the line that must be exactly "```json"
	dsArgs                     // v3: the arguments line; v3.1: arguments up to the call end
	dsClose                    // v3: the line that must start with "```<｜tool▁call▁end｜>"
)

// deepSeek is the deepseek_v3 / deepseek_v31 tool-call machine. Content and
// calls are tracked independently, as vLLM takes content from the first
// calls-begin marker and runs its regex over the whole text.
type deepSeek struct {
	v31 bool
	// begun is set once "<｜tool▁calls▁begin｜>" was seen: content ended.
	begun   bool
	content markerScan
	// raw is, for v3, the text from the calls-begin marker on: the content
	// returned if a call's type is not "function".
	raw     []byte
	badType bool
	// rawDropped is set once a streamed call went out: the client has it,
	// so the fallback to the whole text can no longer be reached, and raw
	// stops growing (a checkpoint stays flat over many calls).
	rawDropped bool

	phase dsPhase
	scan  markerScan
	// line is the part of the current line an attempt has read (v3), or
	// the name (v3.1).
	line []byte
	name string
	// typeOK is set when a v3 attempt's TYPE is "function".
	typeOK bool
	args   []byte
	// retry is what a v3 attempt read after its first line: the regex scan
	// resumes there when the attempt fails.
	retry []byte
	// pending holds calls matched before the calls-begin marker.
	pending []ToolCallDelta
	calls   int

	streaming bool // set by SetStreaming; configuration, not state
}

// setStreaming implements streamingMachine.
func (d *deepSeek) setStreaming() { d.streaming = true }

func newDeepSeekV3(v Vocab, _ *Request) (toolMachine, error) {
	if err := dsCheckVocab(v, "DeepSeek-V3"); err != nil {
		return nil, err
	}
	return &deepSeek{}, nil
}

func newDeepSeekV31(v Vocab, _ *Request) (toolMachine, error) {
	if err := dsCheckVocab(v, "DeepSeek-V3.1"); err != nil {
		return nil, err
	}
	return &deepSeek{v31: true}, nil
}

// dsCheckVocab fails as vLLM's constructor does when the tokenizer lacks
// the calls markers.
func dsCheckVocab(v Vocab, model string) error {
	for _, tok := range []string{dsCallsBegin, dsCallsEnd} {
		if v == nil {
			return fmt.Errorf("%s tool parser: no tokenizer to locate %q", model, tok)
		}
		if _, ok := v.TokenToID(tok); !ok {
			return fmt.Errorf("%s tool parser could not locate tool call start/end tokens in the tokenizer", model)
		}
	}
	return nil
}

// Push implements toolMachine.
func (d *deepSeek) Push(text string) (content string, calls []ToolCallDelta) {
	if !d.begun {
		before, marker, rest := d.content.next(text, dsContentMarkers)
		content = before
		if marker != "" {
			d.begun = true
			if !d.v31 {
				d.raw = append(append(d.raw, marker...), rest...)
			}
		}
	} else if !d.v31 && !d.rawDropped {
		d.raw = append(d.raw, text...)
	}
	found := d.match(text, nil)
	if !d.begun {
		d.pending = append(d.pending, found...)
		return content, nil
	}
	if len(d.pending) > 0 {
		found = append(d.pending, found...)
		d.pending = nil
	}
	if len(found) > 0 && d.streaming {
		d.raw, d.rawDropped = nil, true
	}
	return content, found
}

// Finish implements toolMachine. An attempt still open cannot match any
// more, and no match fits in what it read (a match spans more lines), so
// nothing is re-scanned.
func (d *deepSeek) Finish() (content string, calls []ToolCallDelta) {
	d.scan.flush()
	if !d.begun {
		d.pending = nil
		return d.content.flush(), nil
	}
	if d.badType {
		return string(d.raw), nil
	}
	return "", nil
}

// Called implements toolMachine.
func (d *deepSeek) Called() bool { return d.begun && !d.badType }

// match advances the regex scan over text and returns the calls it
// completed.
func (d *deepSeek) match(text string, calls []ToolCallDelta) []ToolCallDelta {
	for text != "" {
		switch d.phase {
		case dsSeek:
			_, marker, rest := d.scan.next(text, dsSeekMarkers)
			if marker == "" {
				return calls
			}
			d.phase, d.line, text = dsHead, d.line[:0], rest
		case dsHead:
			if d.v31 {
				before, marker, rest := d.scan.next(text, dsNameMarkers)
				d.line = append(d.line, before...)
				switch marker {
				case "":
					return calls
				case "\n":
					// No match starts on this line.
					d.phase = dsSeek
				default:
					d.name, d.args, d.phase = string(d.line), d.args[:0], dsArgs
				}
				text = rest
				continue
			}
			line, rest, ok := strings.Cut(text, "\n")
			d.line = append(d.line, line...)
			if !ok {
				return calls
			}
			text = rest
			// TYPE is greedy: the line's last separator splits it.
			j := strings.LastIndex(string(d.line), dsSep)
			if j < 0 {
				d.phase = dsSeek
				continue
			}
			// A TYPE other than "function" is fatal only if the attempt
			// matches.
			d.typeOK = string(d.line[:j]) == "function"
			d.name = string(d.line[j+len(dsSep):])
			d.phase, d.line, d.retry = dsFenceLine, d.line[:0], d.retry[:0]
		case dsFenceLine:
			line, rest, ok := strings.Cut(text, "\n")
			d.line = append(d.line, line...)
			d.retry = append(d.retry, line...)
			if !strings.HasPrefix(dsFenceText, string(d.line)) {
				text = d.fail(rest, ok)
				continue
			}
			if !ok {
				return calls
			}
			d.retry = append(d.retry, '\n')
			text = rest
			if string(d.line) != dsFenceText {
				text = d.fail(text, false)
				continue
			}
			d.phase, d.args = dsArgs, d.args[:0]
		case dsArgs:
			if d.v31 {
				before, marker, rest := d.scan.next(text, dsArgsMarkers)
				d.args = append(d.args, before...)
				switch marker {
				case "":
					return calls
				case "\n":
					d.phase = dsSeek
				default:
					calls = d.emit(calls)
				}
				text = rest
				continue
			}
			line, rest, ok := strings.Cut(text, "\n")
			d.args = append(d.args, line...)
			d.retry = append(d.retry, line...)
			if !ok {
				return calls
			}
			d.retry = append(d.retry, '\n')
			d.phase, d.line, text = dsClose, d.line[:0], rest
		case dsClose:
			n := min(len(text), len(dsCloseLine)-len(d.line))
			d.line = append(d.line, text[:n]...)
			d.retry = append(d.retry, text[:n]...)
			text = text[n:]
			if !strings.HasPrefix(dsCloseLine, string(d.line)) {
				text = d.fail(text, false)
				continue
			}
			if len(d.line) == len(dsCloseLine) {
				calls = d.emit(calls)
			}
		}
	}
	return calls
}

// fail ends a v3 attempt that read past its first line: the scan resumes
// at the second line, so what the attempt read there is scanned again.
// cut reports that rest followed a newline the attempt did not record.
func (d *deepSeek) fail(rest string, cut bool) string {
	again := string(d.retry)
	if cut {
		again += "\n"
	}
	d.phase, d.retry, d.line = dsSeek, d.retry[:0], d.line[:0]
	return again + rest
}

// emit completes a match.
func (d *deepSeek) emit(calls []ToolCallDelta) []ToolCallDelta {
	d.phase = dsSeek
	d.line, d.retry = d.line[:0], d.retry[:0]
	if !d.v31 && !d.typeOK {
		d.badType = true
	}
	if d.badType {
		return calls
	}
	c := ToolCallDelta{Index: d.calls, ID: newToolCallID(), Type: "function", Name: d.name, Arguments: string(d.args)}
	d.calls++
	return append(calls, c)
}

// codec saves and restores the state of a deepSeek.
func (d *deepSeek) codec(c *statecodec.Codec) {
	c.Bool(&d.v31)
	c.Bool(&d.begun)
	d.content.codec(c)
	c.ByteSlice(&d.raw)
	c.Bool(&d.rawDropped)
	c.Bool(&d.badType)
	statecodec.Enum(c, &d.phase, 5)
	d.scan.codec(c)
	c.ByteSlice(&d.line)
	c.String(&d.name)
	c.Bool(&d.typeOK)
	c.ByteSlice(&d.args)
	c.ByteSlice(&d.retry)
	statecodec.Slice(c, &d.pending, codecCallDelta)
	c.Int(&d.calls)
}
