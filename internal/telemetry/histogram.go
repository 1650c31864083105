package telemetry

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// Histogram is a fixed-bucket Prometheus histogram of integer
// observations: nanoseconds for a duration histogram, plain units (bytes)
// for a value histogram. Observe is a bucket scan and two atomic adds: no
// locks, no allocation, an exact sum.
type Histogram struct {
	bounds   []float64 // in the exposed unit (seconds for durations), ascending
	duration bool      // observations are nanoseconds, exposed as seconds
	counts   []atomic.Int64
	sum      atomic.Int64 // in observed units
}

// NewHistogram returns a duration histogram with the given upper bounds
// (seconds, ascending); a +Inf bucket is implied.
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, duration: true, counts: make([]atomic.Int64, len(bounds)+1)}
}

// NewValueHistogram returns a histogram of integer values (bytes, tokens)
// with the given upper bounds; a +Inf bucket is implied.
func NewValueHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Int64, len(bounds)+1)}
}

// Observe records one duration in a duration histogram.
func (h *Histogram) Observe(d time.Duration) { h.ObserveValue(int64(d)) }

// ObserveValue records one value, in observed units (nanoseconds for a
// duration histogram).
func (h *Histogram) ObserveValue(v int64) {
	s := float64(v)
	if h.duration {
		s = time.Duration(v).Seconds()
	}
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// Count is the number of observations.
func (h *Histogram) Count() int64 {
	var n int64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// Sum is the total observed time of a duration histogram.
func (h *Histogram) Sum() time.Duration { return time.Duration(h.sum.Load()) }

// Style is how sample values are spelled. Both parse the same; engines
// (vLLM's prometheus_client) write counts as floats, and the engine
// simulator writes what they write.
type Style uint8

// The value spellings.
const (
	// StyleGo writes counts as integers ("2").
	StyleGo Style = iota
	// StylePython writes counts as Python floats ("2.0").
	StylePython
)

func (st Style) count(v int64) string {
	s := strconv.FormatInt(v, 10)
	if st == StylePython {
		s += ".0"
	}
	return s
}

// WriteSeries writes the histogram's _bucket, _sum and _count lines for
// name with the given extra labels (`stage="template"`, or "" for none).
// The HELP and TYPE lines are the caller's (see WriteHeader), so that
// several label sets can share them.
func (h *Histogram) WriteSeries(w io.Writer, name, labels string) error {
	return h.WriteSeriesStyle(w, name, labels, StyleGo)
}

// WriteSeriesStyle is WriteSeries with counts spelled in style st.
func (h *Histogram) WriteSeriesStyle(w io.Writer, name, labels string, st Style) error {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum int64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		if _, err := fmt.Fprintf(w, "%s_bucket{%s%sle=\"%s\"} %s\n", name, labels, sep,
			strconv.FormatFloat(b, 'g', -1, 64), st.count(cum)); err != nil {
			return err
		}
	}
	cum += h.counts[len(h.bounds)].Load()
	lb := ""
	if labels != "" {
		lb = "{" + labels + "}"
	}
	sum := float64(h.sum.Load())
	if h.duration {
		sum /= 1e9
	}
	_, err := fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %s\n%s_sum%s %s\n%s_count%s %s\n",
		name, labels, sep, st.count(cum),
		name, lb, strconv.FormatFloat(sum, 'g', -1, 64),
		name, lb, st.count(cum))
	return err
}

// WriteHeader writes a metric family's HELP and TYPE lines.
func WriteHeader(w io.Writer, name, typ, help string) error {
	_, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	return err
}

// WriteSample writes one sample line; labels is "" or `k="v",k2="v2"`.
func WriteSample(w io.Writer, name, labels string, v float64) error {
	var err error
	if labels == "" {
		_, err = fmt.Fprintf(w, "%s %s\n", name, strconv.FormatFloat(v, 'g', -1, 64))
	} else {
		_, err = fmt.Fprintf(w, "%s{%s} %s\n", name, labels, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return err
}

// WriteCount writes one integer sample line (a counter's value) in style
// st; labels is "" or `k="v",k2="v2"`.
func WriteCount(w io.Writer, name, labels string, v int64, st Style) error {
	var err error
	if labels == "" {
		_, err = fmt.Fprintf(w, "%s %s\n", name, st.count(v))
	} else {
		_, err = fmt.Fprintf(w, "%s{%s} %s\n", name, labels, st.count(v))
	}
	return err
}

// Label formats one label pair, escaping the value as the exposition
// format requires.
func Label(name, value string) string {
	return name + `="` + escapeLabel(value) + `"`
}

func escapeLabel(v string) string {
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			out = append(out, `\\`...)
		case '"':
			out = append(out, `\"`...)
		case '\n':
			out = append(out, `\n`...)
		default:
			out = append(out, c)
		}
	}
	return string(out)
}
