package telemetry

import (
	"io"
	"time"
)

// Stage is one CPU-bound step of vrender's work.
type Stage uint8

// The stages timed by vrender_stage_seconds.
const (
	// StageTemplate is rendering a chat template to prompt text.
	StageTemplate Stage = iota
	// StageTokenize is encoding prompt text to token ids.
	StageTokenize
	// StageDetokenize is decoding generated ids to text.
	StageDetokenize
	// StageParse is the reasoning and tool parsers reading generated text.
	StageParse
	numStages
)

var stageNames = [numStages]string{"template", "tokenize", "detokenize", "parse"}

func (s Stage) String() string {
	if s < numStages {
		return stageNames[s]
	}
	return "unknown"
}

// stageBuckets span one streamed token's detokenize step (a microsecond)
// to a long prompt's template and tokenization (hundreds of
// milliseconds).
var stageBuckets = []float64{
	0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025,
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
}

// Stages times the stages, one histogram each. A nil *Stages records
// nothing, so hooks need no check. The stage index is an array index: no
// label lookup on the token path.
type Stages struct {
	h [numStages]*Histogram
}

// NewStages returns empty stage histograms.
func NewStages() *Stages {
	s := &Stages{}
	for i := range s.h {
		s.h[i] = NewHistogram(stageBuckets)
	}
	return s
}

// Start returns the time a stage began, or the zero time when s is nil
// (so that a disabled recorder does not even read the clock).
func (s *Stages) Start() time.Time {
	if s == nil {
		return time.Time{}
	}
	return time.Now()
}

// Since records the time from start (a Start result) to now in stage and
// returns now, so that back-to-back stages read the clock once between
// them.
func (s *Stages) Since(stage Stage, start time.Time) time.Time {
	if s == nil {
		return time.Time{}
	}
	now := time.Now()
	s.h[stage].Observe(now.Sub(start))
	return now
}

// Observe records d in stage.
func (s *Stages) Observe(stage Stage, d time.Duration) {
	if s != nil {
		s.h[stage].Observe(d)
	}
}

// Histogram is stage's histogram (for tests); nil when s is nil.
func (s *Stages) Histogram(stage Stage) *Histogram {
	if s == nil {
		return nil
	}
	return s.h[stage]
}

// WritePrometheus writes vrender_stage_seconds{stage=…}.
func (s *Stages) WritePrometheus(w io.Writer) error {
	const name = "vrender_stage_seconds"
	if err := WriteHeader(w, name, "histogram",
		"Wall time spent in a CPU-bound stage, measured in the goroutine doing it: one observation per call "+
			"(template, tokenize: per prompt; detokenize, parse: per request or per streamed engine event)."); err != nil {
		return err
	}
	for i, h := range s.h {
		if err := h.WriteSeries(w, name, Label("stage", Stage(i).String())); err != nil {
			return err
		}
	}
	return nil
}
