package parity

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Status is the outcome of one check of one request.
type Status string

// Outcomes. Only Fail is an unexplained difference.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Known   Status = "known"   // a difference docs/compatibility.md explains, or vLLM disagreeing with itself
	Skipped Status = "skipped" // the server does not offer the check, or it cannot be made
)

// Check names, in report order.
const (
	CheckTokenize    = "render /tokenize"
	CheckRender      = "render /v1/chat/completions/render"
	CheckParserBatch = "parser batch"
	CheckParserStrm  = "parser stream"
	CheckVLLMStream  = "vLLM stream vs its non-stream"
)

// Checks lists every check in report order.
var Checks = []string{CheckTokenize, CheckRender, CheckParserBatch, CheckParserStrm, CheckVLLMStream}

// Result is one check of one request.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	// Reason says why a check was skipped or known, or what failed.
	Reason string `json:"reason,omitempty"`
	// Differences are every field that differs, the first one first.
	Differences []Difference `json:"differences,omitempty"`
	// VLLM (the non-streaming answer) and VRender are both sides' values
	// for a parser check.
	VLLM    *Answer `json:"vllm,omitempty"`
	VRender *Answer `json:"vrender,omitempty"`
	// VLLMStream is vLLM's accumulated stream, for the check that holds it
	// to vLLM's own non-streaming answer.
	VLLMStream *Answer `json:"vllm_stream,omitempty"`
}

// First is the first difference, or the reason when there is none.
func (r *Result) First() string {
	if len(r.Differences) > 0 {
		return r.Differences[0].String()
	}
	return r.Reason
}

// Case is every check of one request.
type Case struct {
	Name    string   `json:"name"`
	Line    int      `json:"line"`
	Results []Result `json:"results"`
}

// Summary counts one check's outcomes.
type Summary struct {
	Check   string `json:"check"`
	Pass    int    `json:"pass"`
	Fail    int    `json:"fail"`
	Known   int    `json:"known"`
	Skipped int    `json:"skipped"`
}

// Report is a whole parity run; it is also the JSON report.
type Report struct {
	VLLM        string    `json:"vllm"`
	ServedModel string    `json:"served_model"`
	Model       string    `json:"model"`
	Seed        int64     `json:"seed"`
	Started     time.Time `json:"started"`
	Elapsed     string    `json:"elapsed"`
	// Notes are run-wide remarks (a check the server does not offer).
	Notes   []string  `json:"notes,omitempty"`
	Summary []Summary `json:"summary"`
	Cases   []Case    `json:"cases"`
}

// summarize fills Summary from Cases.
func (r *Report) summarize() {
	r.Summary = r.Summary[:0]
	for _, check := range Checks {
		s := Summary{Check: check}
		for _, c := range r.Cases {
			for _, res := range c.Results {
				if res.Check != check {
					continue
				}
				switch res.Status {
				case Pass:
					s.Pass++
				case Fail:
					s.Fail++
				case Known:
					s.Known++
				case Skipped:
					s.Skipped++
				}
			}
		}
		r.Summary = append(r.Summary, s)
	}
}

// Failures is the number of unexplained differences.
func (r *Report) Failures() int {
	n := 0
	for _, s := range r.Summary {
		n += s.Fail
	}
	return n
}

// WriteText writes the readable report: a table of counts per check, then
// the first difference of every failure, the known differences, the skips
// and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "vrender parity: %d request(s) against %s (served model %q; vrender model %s; seed %d; %s)\n\n",
		len(r.Cases), r.VLLM, r.ServedModel, r.Model, r.Seed, r.Elapsed)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "check\tpass\tfail\tknown\tskipped\t")
	for _, s := range r.Summary {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", s.Check, s.Pass, s.Fail, s.Known, s.Skipped)
	}
	tw.Flush()
	section := func(title string, st Status) {
		first := true
		for _, c := range r.Cases {
			for _, res := range c.Results {
				if res.Status != st {
					continue
				}
				if first {
					fmt.Fprintf(&b, "\n%s:\n", title)
					first = false
				}
				fmt.Fprintf(&b, "  %s | %s (line %d): %s\n", res.Check, c.Name, c.Line, oneLine(res.First()))
				if st == Known && len(res.Differences) > 0 {
					fmt.Fprintf(&b, "      %s\n", oneLine(res.Reason))
				}
			}
		}
	}
	section("Unexplained differences (first difference of each)", Fail)
	section("Known differences (not vrender failures)", Known)
	section("Skipped", Skipped)
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	if n := r.Failures(); n > 0 {
		fmt.Fprintf(&b, "\nFAIL: %d unexplained difference(s) between vrender and vLLM\n", n)
	} else {
		b.WriteString("\nPASS: no unexplained difference between vrender and vLLM\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine keeps a report entry on one line, however long the texts.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	const maxLen = 400
	if r := []rune(s); len(r) > maxLen {
		return string(r[:maxLen]) + "…"
	}
	return s
}
