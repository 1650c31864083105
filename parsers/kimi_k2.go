package parsers

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Kimi K2 tool calls, as vLLM's KimiK2ToolParser: a ParserEngine adapter
// whose extract_tool_calls runs the kimi_k2 grammar from the content
// state (extract_tool_calls_from_content):
//
//	<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|><|tool_calls_section_end|>
//
// Terminals are found in the text; one without a transition in the
// current state is text of that state (header, arguments, or dropped).
// After the section opens the machine never returns to content, so text
// after the calls is dropped. A call's name is the header's "NAME" (the
// part of the id "….+:\d+" before its first colon, without "functions.");
// a header that does not parse names the call only when no argument text
// follows (then the stripped header is the name), else the name comes
// from a '"name": "…"' in the arguments. Arguments are the raw text,
// stripped ("{}" when empty), re-serialised only when the tool's schema
// coerces a value (engine_fix_types.go).
//
// With calls the content is the text before the section with "</think>"
// dropped (null when whitespace); without, it is the text unchanged. With
// tool_choice "none" vLLM's engine path returns the former, calls dropped.
//
// Known deviations (pathological outputs): vLLM also names a call from a
// '"name"' in its arguments when that value itself parses as an id
// ("x:0"), mid-stream; here such a name is taken whole at the call's end.
// A call whose name can only come from json.loads of its arguments (a
// name with escaped quotes) is dropped. Special tokens outside the grammar
// are not dropped (vLLM drops those of the tokenizer).

func init() {
	registerTool("kimi_k2", ToolInfo{New: newKimiK2, NeedsSpecialTokens: true, EngineBased: true,
		SupportsRequiredAndNamed: true, StructuralTagModel: "kimi"})
}

const (
	kimiSectionStart = "<|tool_calls_section_begin|>"
	kimiSectionEnd   = "<|tool_calls_section_end|>"
	kimiCallStart    = "<|tool_call_begin|>"
	kimiCallEnd      = "<|tool_call_end|>"
	kimiArgStart     = "<|tool_call_argument_begin|>"
)

var kimiMarkers = []string{qcThinkStart, qcThinkEnd, kimiSectionStart, kimiSectionEnd, kimiCallStart, kimiCallEnd, kimiArgStart}

// kimiNameRe is ParserEngine._NAME_RE.
var kimiNameRe = regexp.MustCompile(`"name"\s*:\s*"([^"]*)"`)

// kimiState is the grammar's parser state.
type kimiState uint8

const (
	kimiContent kimiState = iota
	kimiPreamble
	kimiName
	kimiArgs
	kimiBetween
)

// KimiK2 is the kimi_k2 tool machine.
type KimiK2 struct {
	Mode  qcMode
	State kimiState
	Scan  markerScan
	Tools []Tool
	// Diverged is set once a "</think>" was dropped from content; E and R
	// then hold the content with calls and the raw text without. InTools
	// is set once the section opened (R collects everything); Decided
	// once a call is named (the content is E).
	Diverged, InTools, Decided bool
	E, R                       []byte
	// WS holds whitespace-only content in the no-tools "none" mode.
	WS    []byte
	NonWS bool
	// Named is vLLM's tools_called; Calls counts calls emitted; Started
	// is set at the first call opener.
	Named   bool
	Calls   int
	Started bool
	Slot    kimiSlot

	out   strings.Builder
	calls []ToolCallDelta
	// markers are kimiMarkers and the special tokens to drop (engine_drop.go).
	markers []string
}

// kimiSlot is the call being read.
type kimiSlot struct {
	Header []byte
	// HasArgs is set at the first argument text; Cleared when the header
	// did not parse then (vLLM blanks the name).
	HasArgs, Cleared bool
	Resolved, Closed bool
	Emit             bool
	Index            int
	// Buffer is set when arguments are held for schema coercion (or until
	// the name is known) in Args.
	Buffer bool
	Args   []byte
	// Lead is set once leading whitespace was skipped; Trail holds
	// whitespace (and a split rune) not yet known to be inside.
	Lead  bool
	Trail []byte
	Out   bool
	Props map[string]json.RawMessage
}

func newKimiK2(v Vocab, req *Request) (ToolMachine, error) {
	k := &KimiK2{Tools: req.Tools, markers: engineTerminals(v, kimiMarkers)}
	if choice, _, _ := req.Choice(); choice == ChoiceNone {
		k.Mode = qcNoneOpen
		if len(req.Tools) > 0 {
			k.Mode = qcNoneQuiet
		}
	}
	return k, nil
}

// Push implements ToolMachine.
func (k *KimiK2) Push(text string) (string, []ToolCallDelta) {
	for {
		before, marker, rest := k.Scan.next(text, orTerminals(k.markers, kimiMarkers))
		k.text(before)
		if marker == "" {
			break
		}
		k.terminal(marker)
		text = rest
	}
	return k.take()
}

// Finish implements ToolMachine.
func (k *KimiK2) Finish() (string, []ToolCallDelta) {
	k.text(k.Scan.flush())
	if k.State != kimiContent && k.Started {
		k.endSlot()
	}
	switch {
	case k.Mode == qcNoneOpen:
		// vLLM drops whitespace-only content once any call started.
		if !k.Started {
			k.out.Write(k.WS)
		}
	case k.Mode == qcAuto && !k.Decided:
		if k.Diverged || k.InTools {
			k.out.Write(k.R)
		}
	}
	k.E, k.R, k.WS = nil, nil, nil
	return k.take()
}

// Called implements ToolMachine.
func (k *KimiK2) Called() bool { return k.Mode == qcAuto && k.Named }

// ContentNull reports whether an empty content is null: with tool_choice
// "none" vLLM's engine path returns its own content, None when empty.
func (k *KimiK2) ContentNull() (null, decided bool) {
	return k.Mode != qcAuto, k.Mode != qcAuto
}

func (k *KimiK2) take() (string, []ToolCallDelta) {
	out, calls := k.out.String(), k.calls
	k.out.Reset()
	k.calls = nil
	return out, calls
}

// raw records text for the no-calls answer while it may still be needed.
func (k *KimiK2) raw(s string) {
	if k.Mode == qcAuto && !k.Decided && (k.Diverged || k.InTools) {
		k.R = append(k.R, s...)
	}
}

// text handles non-terminal text in the current state.
func (k *KimiK2) text(s string) {
	if s == "" {
		return
	}
	switch k.State {
	case kimiContent:
		k.content(s)
	case kimiName:
		k.Slot.Header = append(k.Slot.Header, s...)
	case kimiArgs:
		k.argText(s)
	}
	k.raw(s)
}

// content is text of the content state: part of both answers.
func (k *KimiK2) content(s string) {
	switch {
	case k.Mode == qcNoneOpen && !k.NonWS:
		if strings.TrimFunc(s, pyIsSpace) == "" {
			k.WS = append(k.WS, s...)
			return
		}
		k.NonWS = true
		k.out.Write(k.WS)
		k.WS = nil
		k.out.WriteString(s)
	case k.Mode == qcAuto && k.Diverged:
		k.E = append(k.E, s...)
	default:
		k.out.WriteString(s)
	}
}

// terminal applies the grammar's transition for t; one without a
// transition is text of the state.
func (k *KimiK2) terminal(t string) {
	if isDropToken(t, kimiMarkers) {
		return
	}
	switch k.State {
	case kimiContent:
		switch t {
		case qcThinkEnd:
			if k.Mode == qcAuto && !k.Diverged {
				k.Diverged = true
			}
		case kimiSectionStart:
			k.State = kimiPreamble
			k.InTools = true
		default:
			k.text(t)
			return
		}
	case kimiPreamble, kimiBetween:
		if t == kimiCallStart {
			k.startSlot()
		} else if t == kimiSectionEnd {
			k.State = kimiPreamble
		}
	case kimiName:
		if t != kimiArgStart {
			k.text(t)
			return
		}
		k.State = kimiArgs
	case kimiArgs:
		switch t {
		case kimiCallEnd:
			k.endSlot()
			k.State = kimiBetween
		case kimiSectionEnd:
			k.endSlot()
			k.State = kimiPreamble
		default:
			k.text(t)
			return
		}
	}
	k.raw(t)
}

func (k *KimiK2) startSlot() {
	k.State = kimiName
	k.Started = true
	k.Slot = kimiSlot{}
}

// argText is argument text; the first piece settles the header.
func (k *KimiK2) argText(s string) {
	if k.Mode == qcNoneQuiet {
		return
	}
	sl := &k.Slot
	if !sl.HasArgs {
		sl.HasArgs = true
		if id, name, ok := kimiHeaderName(string(sl.Header)); ok {
			k.resolve(id, name)
		} else {
			sl.Cleared, sl.Buffer = true, true
		}
		sl.Header = nil
	}
	if sl.Buffer {
		sl.Args = append(sl.Args, s...)
		return
	}
	if sl.Emit {
		k.streamArgs(s)
	}
}

// resolve names the slot's call: from here on tools were called.
// id is the header's id (vLLM uses it as the call's id), "" for a fresh one.
func (k *KimiK2) resolve(id, name string) {
	sl := &k.Slot
	sl.Resolved = true
	if !k.Named {
		k.Named = true
		if k.Mode == qcAuto && !k.Decided {
			k.Decided = true
			k.out.Write(k.E)
			k.E, k.R = nil, nil
		}
	}
	if k.Mode != qcAuto {
		return
	}
	sl.Emit, sl.Index = true, k.Calls
	k.Calls++
	if len(k.Tools) > 0 {
		sl.Props = toolProperties(k.Tools, name)
	}
	sl.Buffer = len(sl.Props) > 0
	if id == "" {
		id = newToolCallID()
	}
	k.calls = append(k.calls, ToolCallDelta{Index: sl.Index, ID: id, Type: "function", Name: name})
}

// streamArgs sends argument text without its leading and (held) trailing
// whitespace.
func (k *KimiK2) streamArgs(s string) {
	sl := &k.Slot
	buf := append(sl.Trail, s...)
	sl.Trail = nil
	if !sl.Lead {
		i := 0
		for i < len(buf) {
			if !utf8.FullRune(buf[i:]) {
				break
			}
			r, size := utf8.DecodeRune(buf[i:])
			if !pyIsSpace(r) {
				sl.Lead = true
				break
			}
			i += size
		}
		buf = buf[i:]
		if !sl.Lead {
			sl.Trail = append(sl.Trail, buf...)
			return
		}
	}
	if n := len(buf) - len(s); n > 0 && s != "" && endsOnRune(buf[:n]) {
		// Held whitespace ends on a whole rune: only s needs a look.
		if cut := spaceTailStart([]byte(s)); cut > 0 {
			cut += n
			k.emitArgs(string(buf[:cut]))
			sl.Trail = append(sl.Trail, buf[cut:]...)
		} else {
			sl.Trail = buf
		}
		return
	}
	cut := spaceTailStart(buf)
	if cut > 0 {
		k.emitArgs(string(buf[:cut]))
	}
	sl.Trail = append(sl.Trail, buf[cut:]...)
}

// endsOnRune reports whether b does not end inside a rune.
func endsOnRune(b []byte) bool {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return utf8.FullRune(b[i:])
		}
	}
	return true
}

// spaceTailStart is where the trailing run of Python whitespace (and an
// incomplete rune after it) starts in b.
func spaceTailStart(b []byte) int {
	end := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				end = i
			}
			break
		}
	}
	for end > 0 {
		r, size := utf8.DecodeLastRune(b[:end])
		if r == utf8.RuneError && size <= 1 || !pyIsSpace(r) {
			break
		}
		end -= size
	}
	return end
}

func (k *KimiK2) emitArgs(frag string) {
	k.Slot.Out = true
	k.calls = appendArgs(k.calls, k.Slot.Index, frag)
}

// endSlot is TOOL_CALL_END.
func (k *KimiK2) endSlot() {
	sl := &k.Slot
	if sl.Closed || k.Mode == qcNoneQuiet {
		return
	}
	sl.Closed = true
	if !sl.Resolved {
		id, name := "", ""
		if !sl.HasArgs {
			if i, n, ok := kimiHeaderName(string(sl.Header)); ok {
				id, name = i, n
			} else {
				name = pyStrip(string(sl.Header))
			}
		} else if m := kimiNameRe.FindSubmatch(sl.Args); m != nil {
			name = pyStrip(string(m[1]))
		}
		if name == "" {
			return
		}
		k.resolve(id, name)
		sl.Buffer = true
	}
	if !sl.Emit {
		return
	}
	if sl.Buffer {
		args := pyStrip(string(sl.Args))
		if args == "" {
			args = "{}"
		}
		k.emitArgs(engineFixArgTypes(args, sl.Props))
		return
	}
	if !sl.Out {
		k.emitArgs("{}")
	}
}

// kimiHeaderName is KimiK2Parser._extract_tool_id_and_name's name: the
// header stripped must start with an id matching ".+:\d+" (not across a
// newline, greedy); the name is the id before its first colon, without a
// "functions." prefix.
func kimiHeaderName(header string) (id, name string, ok bool) {
	line := pyStrip(header)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	end := -1
	for i := len(line) - 2; i >= 1; i-- {
		if line[i] == ':' && line[i+1] >= '0' && line[i+1] <= '9' {
			j := i + 1
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			end = j
			break
		}
	}
	if end < 0 {
		return "", "", false
	}
	id = pyStrip(line[:end])
	// vLLM's result strips the name again.
	name = pyStrip(strings.TrimPrefix(id[:strings.IndexByte(id, ':')], "functions."))
	return id, name, name != ""
}
