package parsers

import (
	"fmt"
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

func init() {
	// Both set structural_tag_model, so with vLLM's default strict tool
	// calling required and named tool_choice are parsed like auto.
	registerTool("deepseek_v3", ToolInfo{New: newDeepSeekV3, SupportsRequiredAndNamed: true, StructuralTagModel: "deepseek_r1"})
	registerTool("deepseek_v31", ToolInfo{New: newDeepSeekV31, SupportsRequiredAndNamed: true, StructuralTagModel: "deepseek_v3_1"})
}

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

// DeepSeek is the deepseek_v3 / deepseek_v31 tool-call machine. Content and
// calls are tracked independently, as vLLM takes content from the first
// calls-begin marker and runs its regex over the whole text.
type DeepSeek struct {
	V31 bool
	// Begun is set once "<｜tool▁calls▁begin｜>" was seen: content ended.
	Begun   bool
	Content markerScan
	// Raw is, for v3, the text from the calls-begin marker on: the content
	// returned if a call's type is not "function".
	Raw     []byte
	BadType bool

	Phase dsPhase
	Scan  markerScan
	// Line is the part of the current line an attempt has read (v3), or
	// the name (v3.1).
	Line []byte
	Name string
	// TypeOK is set when a v3 attempt's TYPE is "function".
	TypeOK bool
	Args   []byte
	// Retry is what a v3 attempt read after its first line: the regex scan
	// resumes there when the attempt fails.
	Retry []byte
	// Pending holds calls matched before the calls-begin marker.
	Pending []ToolCallDelta
	Calls   int
}

func newDeepSeekV3(v Vocab, _ *Request) (ToolMachine, error) {
	if err := dsCheckVocab(v, "DeepSeek-V3"); err != nil {
		return nil, err
	}
	return &DeepSeek{}, nil
}

func newDeepSeekV31(v Vocab, _ *Request) (ToolMachine, error) {
	if err := dsCheckVocab(v, "DeepSeek-V3.1"); err != nil {
		return nil, err
	}
	return &DeepSeek{V31: true}, nil
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

// Push implements ToolMachine.
func (d *DeepSeek) Push(text string) (content string, calls []ToolCallDelta) {
	if !d.Begun {
		before, marker, rest := d.Content.next(text, dsContentMarkers)
		content = before
		if marker != "" {
			d.Begun = true
			if !d.V31 {
				d.Raw = append(append(d.Raw, marker...), rest...)
			}
		}
	} else if !d.V31 {
		d.Raw = append(d.Raw, text...)
	}
	found := d.match(text, nil)
	if !d.Begun {
		d.Pending = append(d.Pending, found...)
		return content, nil
	}
	if len(d.Pending) > 0 {
		found = append(d.Pending, found...)
		d.Pending = nil
	}
	return content, found
}

// Finish implements ToolMachine. An attempt still open cannot match any
// more, and no match fits in what it read (a match spans more lines), so
// nothing is re-scanned.
func (d *DeepSeek) Finish() (content string, calls []ToolCallDelta) {
	d.Scan.flush()
	if !d.Begun {
		d.Pending = nil
		return d.Content.flush(), nil
	}
	if d.BadType {
		return string(d.Raw), nil
	}
	return "", nil
}

// Called implements ToolMachine.
func (d *DeepSeek) Called() bool { return d.Begun && !d.BadType }

// match advances the regex scan over text and returns the calls it
// completed.
func (d *DeepSeek) match(text string, calls []ToolCallDelta) []ToolCallDelta {
	for text != "" {
		switch d.Phase {
		case dsSeek:
			_, marker, rest := d.Scan.next(text, dsSeekMarkers)
			if marker == "" {
				return calls
			}
			d.Phase, d.Line, text = dsHead, d.Line[:0], rest
		case dsHead:
			if d.V31 {
				before, marker, rest := d.Scan.next(text, dsNameMarkers)
				d.Line = append(d.Line, before...)
				switch marker {
				case "":
					return calls
				case "\n":
					// No match starts on this line.
					d.Phase = dsSeek
				default:
					d.Name, d.Args, d.Phase = string(d.Line), d.Args[:0], dsArgs
				}
				text = rest
				continue
			}
			line, rest, ok := strings.Cut(text, "\n")
			d.Line = append(d.Line, line...)
			if !ok {
				return calls
			}
			text = rest
			// TYPE is greedy: the line's last separator splits it.
			j := strings.LastIndex(string(d.Line), dsSep)
			if j < 0 {
				d.Phase = dsSeek
				continue
			}
			// A TYPE other than "function" is fatal only if the attempt
			// matches.
			d.TypeOK = string(d.Line[:j]) == "function"
			d.Name = string(d.Line[j+len(dsSep):])
			d.Phase, d.Line, d.Retry = dsFenceLine, d.Line[:0], d.Retry[:0]
		case dsFenceLine:
			line, rest, ok := strings.Cut(text, "\n")
			d.Line = append(d.Line, line...)
			d.Retry = append(d.Retry, line...)
			if !strings.HasPrefix(dsFenceText, string(d.Line)) {
				text = d.fail(rest, ok)
				continue
			}
			if !ok {
				return calls
			}
			d.Retry = append(d.Retry, '\n')
			text = rest
			if string(d.Line) != dsFenceText {
				text = d.fail(text, false)
				continue
			}
			d.Phase, d.Args = dsArgs, d.Args[:0]
		case dsArgs:
			if d.V31 {
				before, marker, rest := d.Scan.next(text, dsArgsMarkers)
				d.Args = append(d.Args, before...)
				switch marker {
				case "":
					return calls
				case "\n":
					d.Phase = dsSeek
				default:
					calls = d.emit(calls)
				}
				text = rest
				continue
			}
			line, rest, ok := strings.Cut(text, "\n")
			d.Args = append(d.Args, line...)
			d.Retry = append(d.Retry, line...)
			if !ok {
				return calls
			}
			d.Retry = append(d.Retry, '\n')
			d.Phase, d.Line, text = dsClose, d.Line[:0], rest
		case dsClose:
			n := min(len(text), len(dsCloseLine)-len(d.Line))
			d.Line = append(d.Line, text[:n]...)
			d.Retry = append(d.Retry, text[:n]...)
			text = text[n:]
			if !strings.HasPrefix(dsCloseLine, string(d.Line)) {
				text = d.fail(text, false)
				continue
			}
			if len(d.Line) == len(dsCloseLine) {
				calls = d.emit(calls)
			}
		}
	}
	return calls
}

// fail ends a v3 attempt that read past its first line: the scan resumes
// at the second line, so what the attempt read there is scanned again.
// cut reports that rest followed a newline the attempt did not record.
func (d *DeepSeek) fail(rest string, cut bool) string {
	again := string(d.Retry)
	if cut {
		again += "\n"
	}
	d.Phase, d.Retry, d.Line = dsSeek, d.Retry[:0], d.Line[:0]
	return again + rest
}

// emit completes a match.
func (d *DeepSeek) emit(calls []ToolCallDelta) []ToolCallDelta {
	d.Phase = dsSeek
	d.Line, d.Retry = d.Line[:0], d.Retry[:0]
	if !d.V31 && !d.TypeOK {
		d.BadType = true
	}
	if d.BadType {
		return calls
	}
	c := ToolCallDelta{Index: d.Calls, ID: newToolCallID(), Type: "function", Name: d.Name, Arguments: string(d.Args)}
	d.Calls++
	return append(calls, c)
}
