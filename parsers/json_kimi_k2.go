package parsers

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
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

const (
	kimiSectionStart = "<|tool_calls_section_begin|>"
	kimiSectionEnd   = "<|tool_calls_section_end|>"
	kimiCallStart    = "<|tool_call_begin|>"
	kimiCallEnd      = "<|tool_call_end|>"
	kimiArgStart     = "<|tool_call_argument_begin|>"
)

var kimiMarkers = []string{thinkStart, thinkEnd, kimiSectionStart, kimiSectionEnd, kimiCallStart, kimiCallEnd, kimiArgStart}

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

// kimiK2 is the kimi_k2 tool machine.
type kimiK2 struct {
	mode  engineMode
	state kimiState
	scan  markerScan
	tools []protocol.Tool
	// diverged is set once a "</think>" was dropped from content; E and R
	// then hold the content with calls and the raw text without. InTools
	// is set once the section opened (R collects everything); Decided
	// once a call is named (the content is E).
	diverged, inTools, decided bool
	e, r                       []byte
	// ws holds whitespace-only content in the no-tools "none" mode.
	ws    []byte
	nonWS bool
	// named is vLLM's tools_called; Calls counts calls emitted; Started
	// is set at the first call opener.
	named   bool
	nCalls  int
	started bool
	slot    kimiSlot

	out   strings.Builder
	calls []ToolCallDelta
	// markers are kimiMarkers and the special tokens to drop (engine_drop.go).
	markers []string
}

// kimiSlot is the call being read.
type kimiSlot struct {
	header []byte
	// hasArgs is set at the first argument text; Cleared when the header
	// did not parse then (vLLM blanks the name).
	hasArgs, cleared bool
	resolved, closed bool
	emit             bool
	index            int
	// buffer is set when arguments are held for schema coercion (or until
	// the name is known) in Args.
	buffer bool
	args   []byte
	// lead is set once leading whitespace was skipped; Trail holds
	// whitespace (and a split rune) not yet known to be inside.
	lead  bool
	trail []byte
	out   bool
	props map[string]*wire.Node
}

func newKimiK2(v Vocab, req *Request) (toolMachine, error) {
	return &kimiK2{mode: newEngineMode(req), tools: req.Tools, markers: engineTerminals(v, kimiMarkers)}, nil
}

// Push implements toolMachine.
func (k *kimiK2) Push(text string) (string, []ToolCallDelta) {
	for {
		before, marker, rest := k.scan.next(text, orTerminals(k.markers, kimiMarkers))
		k.text(before)
		if marker == "" {
			break
		}
		k.terminal(marker)
		text = rest
	}
	return k.take()
}

// Finish implements toolMachine.
func (k *kimiK2) Finish() (string, []ToolCallDelta) {
	k.text(k.scan.flush())
	if k.state != kimiContent && k.started {
		k.endSlot()
	}
	switch {
	case k.mode == engineNoneOpen:
		// vLLM drops whitespace-only content once any call started.
		if !k.started {
			k.out.Write(k.ws)
		}
	case k.mode == engineAuto && !k.decided:
		if k.diverged || k.inTools {
			k.out.Write(k.r)
		}
	}
	k.e, k.r, k.ws = nil, nil, nil
	return k.take()
}

// Called implements toolMachine.
func (k *kimiK2) Called() bool { return k.mode == engineAuto && k.named }

// ContentNull reports whether an empty content is null: with tool_choice
// "none" vLLM's engine path returns its own content, None when empty.
func (k *kimiK2) ContentNull() (null, decided bool) {
	return k.mode != engineAuto, k.mode != engineAuto
}

func (k *kimiK2) take() (string, []ToolCallDelta) {
	out, calls := k.out.String(), k.calls
	k.out.Reset()
	k.calls = nil
	return out, calls
}

// raw records text for the no-calls answer while it may still be needed.
func (k *kimiK2) raw(s string) {
	if k.mode == engineAuto && !k.decided && (k.diverged || k.inTools) {
		k.r = append(k.r, s...)
	}
}

// text handles non-terminal text in the current state.
func (k *kimiK2) text(s string) {
	if s == "" {
		return
	}
	switch k.state {
	case kimiContent:
		k.content(s)
	case kimiName:
		k.slot.header = append(k.slot.header, s...)
	case kimiArgs:
		k.argText(s)
	}
	k.raw(s)
}

// content is text of the content state: part of both answers.
func (k *kimiK2) content(s string) {
	switch {
	case k.mode == engineNoneOpen && !k.nonWS:
		if strings.TrimFunc(s, pyIsSpace) == "" {
			k.ws = append(k.ws, s...)
			return
		}
		k.nonWS = true
		k.out.Write(k.ws)
		k.ws = nil
		k.out.WriteString(s)
	case k.mode == engineAuto && k.diverged:
		k.e = append(k.e, s...)
	default:
		k.out.WriteString(s)
	}
}

// terminal applies the grammar's transition for t; one without a
// transition is text of the state.
func (k *kimiK2) terminal(t string) {
	if isDropToken(t, kimiMarkers) {
		return
	}
	switch k.state {
	case kimiContent:
		switch t {
		case thinkEnd:
			if k.mode == engineAuto && !k.diverged {
				k.diverged = true
			}
		case kimiSectionStart:
			k.state = kimiPreamble
			k.inTools = true
		default:
			k.text(t)
			return
		}
	case kimiPreamble, kimiBetween:
		if t == kimiCallStart {
			k.startSlot()
		} else if t == kimiSectionEnd {
			k.state = kimiPreamble
		}
	case kimiName:
		if t != kimiArgStart {
			k.text(t)
			return
		}
		k.state = kimiArgs
	case kimiArgs:
		switch t {
		case kimiCallEnd:
			k.endSlot()
			k.state = kimiBetween
		case kimiSectionEnd:
			k.endSlot()
			k.state = kimiPreamble
		default:
			k.text(t)
			return
		}
	}
	k.raw(t)
}

func (k *kimiK2) startSlot() {
	k.state = kimiName
	k.started = true
	k.slot = kimiSlot{}
}

// argText is argument text; the first piece settles the header.
func (k *kimiK2) argText(s string) {
	if k.mode == engineNoneQuiet {
		return
	}
	sl := &k.slot
	if !sl.hasArgs {
		sl.hasArgs = true
		if id, name, ok := kimiHeaderName(string(sl.header)); ok {
			k.resolve(id, name)
		} else {
			sl.cleared, sl.buffer = true, true
		}
		sl.header = nil
	}
	if sl.buffer {
		sl.args = append(sl.args, s...)
		return
	}
	if sl.emit {
		k.streamArgs(s)
	}
}

// resolve names the slot's call: from here on tools were called.
// id is the header's id (vLLM uses it as the call's id), "" for a fresh one.
func (k *kimiK2) resolve(id, name string) {
	sl := &k.slot
	sl.resolved = true
	if !k.named {
		k.named = true
		if k.mode == engineAuto && !k.decided {
			k.decided = true
			k.out.Write(k.e)
			k.e, k.r = nil, nil
		}
	}
	if k.mode != engineAuto {
		return
	}
	sl.emit, sl.index = true, k.nCalls
	k.nCalls++
	if len(k.tools) > 0 {
		sl.props = toolProperties(k.tools, name)
	}
	sl.buffer = len(sl.props) > 0
	if id == "" {
		id = newToolCallID()
	}
	k.calls = append(k.calls, ToolCallDelta{Index: sl.index, ID: id, Type: "function", Name: name})
}

// streamArgs sends argument text without its leading and (held) trailing
// whitespace.
func (k *kimiK2) streamArgs(s string) {
	sl := &k.slot
	buf := append(sl.trail, s...)
	sl.trail = nil
	if !sl.lead {
		i := 0
		for i < len(buf) {
			if !utf8.FullRune(buf[i:]) {
				break
			}
			r, size := utf8.DecodeRune(buf[i:])
			if !pyIsSpace(r) {
				sl.lead = true
				break
			}
			i += size
		}
		buf = buf[i:]
		if !sl.lead {
			sl.trail = append(sl.trail, buf...)
			return
		}
	}
	if n := len(buf) - len(s); n > 0 && s != "" && endsOnRune(buf[:n]) {
		// Held whitespace ends on a whole rune: only s needs a look.
		if cut := spaceTailStart([]byte(s)); cut > 0 {
			cut += n
			k.emitArgs(string(buf[:cut]))
			sl.trail = append(sl.trail, buf[cut:]...)
		} else {
			sl.trail = buf
		}
		return
	}
	cut := spaceTailStart(buf)
	if cut > 0 {
		k.emitArgs(string(buf[:cut]))
	}
	sl.trail = append(sl.trail, buf[cut:]...)
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

func (k *kimiK2) emitArgs(frag string) {
	k.slot.out = true
	k.calls = appendArgs(k.calls, k.slot.index, frag)
}

// endSlot is TOOL_CALL_END.
func (k *kimiK2) endSlot() {
	sl := &k.slot
	if sl.closed || k.mode == engineNoneQuiet {
		return
	}
	sl.closed = true
	if !sl.resolved {
		id, name := "", ""
		if !sl.hasArgs {
			if i, n, ok := kimiHeaderName(string(sl.header)); ok {
				id, name = i, n
			} else {
				name = pyStrip(string(sl.header))
			}
		} else if m := kimiNameRe.FindSubmatch(sl.args); m != nil {
			name = pyStrip(string(m[1]))
		}
		if name == "" {
			return
		}
		k.resolve(id, name)
		sl.buffer = true
	}
	if !sl.emit {
		return
	}
	if sl.buffer {
		args := pyStrip(string(sl.args))
		if args == "" {
			args = "{}"
		}
		k.emitArgs(engineFixArgTypes(args, sl.props))
		return
	}
	if !sl.out {
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

// codec saves and restores the state of a kimiK2.
func (k *kimiK2) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &k.mode, 3)
	statecodec.Enum(c, &k.state, 5)
	k.scan.codec(c)
	// tools is the request's, not state.
	c.Bool(&k.diverged)
	c.Bool(&k.inTools)
	c.Bool(&k.decided)
	c.ByteSlice(&k.e)
	c.ByteSlice(&k.r)
	c.ByteSlice(&k.ws)
	c.Bool(&k.nonWS)
	c.Bool(&k.named)
	c.Int(&k.nCalls)
	c.Bool(&k.started)
	k.slot.codec(c)
}

// codec saves and restores the state of a kimiSlot.
func (k *kimiSlot) codec(c *statecodec.Codec) {
	c.ByteSlice(&k.header)
	c.Bool(&k.hasArgs)
	c.Bool(&k.cleared)
	c.Bool(&k.resolved)
	c.Bool(&k.closed)
	c.Bool(&k.emit)
	c.Int(&k.index)
	c.Bool(&k.buffer)
	c.ByteSlice(&k.args)
	c.Bool(&k.lead)
	c.ByteSlice(&k.trail)
	c.Bool(&k.out)
	statecodec.Map(c, &k.props, (*statecodec.Codec).String, codecSchema)
}
