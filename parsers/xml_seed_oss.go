package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

// Seed-OSS tool calls, as vLLM's SeedOssEngineToolParser: the qwen3_coder
// grammar with its four wrapper terminals renamed (vllm/parser/seed_oss.py
// subclasses Qwen3Parser changing only them):
//
//	<seed:tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>\n</seed:tool_call>
//
// This machine runs the qwen3Coder machine on translated text: each seed
// wrapper becomes its qwen3 spelling, and a qwen3 spelling that appears
// literally (plain text for Seed-OSS) becomes a private-use rune plus its
// final ">" (">" is itself a terminal of the grammar, so it must stay).
// Content, names and arguments are translated back on the way out, holding
// only what may be a cut-off spelling. Known deviation: output that itself
// contains one of the four private-use runes comes back as the qwen3 text.

// seedWrap pairs a Seed-OSS wrapper with its qwen3 spelling and the rune
// that stands for the qwen3 spelling without its ">".
var seedWraps = []struct{ seed, qwen, escape string }{
	{"<seed:think>", thinkStart, "\U0010FFF0"},
	{"</seed:think>", thinkEnd, "\U0010FFF1"},
	{"<seed:tool_call>", toolCallStart, "\U0010FFF2"},
	{"</seed:tool_call>", toolCallEnd, "\U0010FFF3"},
}

var (
	// seedInMarkers are what translation looks for in model text.
	seedInMarkers []string
	seedIn        = map[string]string{}
	// seedOutMarkers are what back-translation looks for in output.
	seedOutMarkers []string
	seedOut        = map[string]string{}
	seedNameFix    *strings.Replacer
)

func init() {
	var pairs []string
	for _, w := range seedWraps {
		seedInMarkers = append(seedInMarkers, w.seed, w.qwen)
		seedIn[w.seed] = w.qwen
		seedIn[w.qwen] = w.escape + ">"
		lit := strings.TrimSuffix(w.qwen, ">")
		seedOutMarkers = append(seedOutMarkers, w.qwen, w.escape)
		seedOut[w.qwen] = w.seed
		seedOut[w.escape] = lit
		pairs = append(pairs, w.qwen, w.seed, w.escape, lit)
	}
	seedNameFix = strings.NewReplacer(pairs...)
}

// seedOSS is the seed_oss tool machine.
type seedOSS struct {
	inner *qwen3Coder
	// in translates model text; Out and Args translate back content and
	// the current call's arguments.
	in, out, args markerScan
	argsIndex     int
}

func newSeedOSS(v Vocab, req *Request) (toolMachine, error) {
	m, err := newQwen3Coder(v, req)
	if err != nil {
		return nil, err
	}
	return &seedOSS{inner: m.(*qwen3Coder)}, nil
}

// Push implements toolMachine.
func (s *seedOSS) Push(text string) (string, []ToolCallDelta) {
	content, calls := s.inner.Push(seedTranslate(&s.in, text, seedInMarkers, seedIn))
	return seedTranslate(&s.out, content, seedOutMarkers, seedOut), s.fixCalls(calls, false)
}

// Finish implements toolMachine.
func (s *seedOSS) Finish() (string, []ToolCallDelta) {
	content, calls := s.inner.Push(s.in.flush())
	more, last := s.inner.Finish()
	out := seedTranslate(&s.out, content+more, seedOutMarkers, seedOut) + s.out.flush()
	return out, s.fixCalls(append(calls, last...), true)
}

// Called implements toolMachine.
func (s *seedOSS) Called() bool { return s.inner.Called() }

// ContentNull forwards the inner machine's answer.
func (s *seedOSS) ContentNull() (null, decided bool) { return s.inner.ContentNull() }

// fixCalls translates names and argument fragments back.
func (s *seedOSS) fixCalls(calls []ToolCallDelta, final bool) []ToolCallDelta {
	out := calls[:0]
	for _, c := range calls {
		if c.Index != s.argsIndex {
			// A new call: the previous one's arguments ended with "}",
			// which holds nothing back, but flush to be sure.
			if rest := s.args.flush(); rest != "" {
				out = append(out, ToolCallDelta{Index: s.argsIndex, Arguments: rest})
			}
			s.argsIndex = c.Index
		}
		c.Name = seedNameFix.Replace(c.Name)
		c.Arguments = seedTranslate(&s.args, c.Arguments, seedOutMarkers, seedOut)
		if c.ID == "" && c.Arguments == "" {
			continue
		}
		out = append(out, c)
	}
	if final {
		if rest := s.args.flush(); rest != "" {
			out = append(out, ToolCallDelta{Index: s.argsIndex, Arguments: rest})
		}
	}
	return out
}

// seedTranslate replaces every marker in the stream through table,
// holding back a tail that may start one.
func seedTranslate(scan *markerScan, text string, markers []string, table map[string]string) string {
	if text == "" && scan.held == "" {
		return ""
	}
	var b strings.Builder
	for {
		before, marker, rest := scan.next(text, markers)
		b.WriteString(before)
		if marker == "" {
			return b.String()
		}
		b.WriteString(table[marker])
		text = rest
	}
}

// codec saves and restores the state of a seedOSS.
func (s *seedOSS) codec(c *statecodec.Codec) {
	s.inner.codec(c) // built by the factory, restored in place
	s.in.codec(c)
	s.out.codec(c)
	s.args.codec(c)
	c.Int(&s.argsIndex)
}
