package telemetry

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// Histogram is a fixed-bucket Prometheus histogram. Observe is a bucket
// scan and three atomic adds: no locks, no allocation.
type Histogram struct {
	bounds []float64 // seconds, ascending
	counts []atomic.Int64
	sumNS  atomic.Int64
}

// NewHistogram returns a histogram with the given upper bounds (seconds,
// ascending); a +Inf bucket is implied.
func NewHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Int64, len(bounds)+1)}
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNS.Add(int64(d))
}

// Count is the number of observations.
func (h *Histogram) Count() int64 {
	var n int64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// Sum is the total observed time.
func (h *Histogram) Sum() time.Duration { return time.Duration(h.sumNS.Load()) }

// WriteSeries writes the histogram's _bucket, _sum and _count lines for
// name with the given extra labels (`stage="template"`, or "" for none).
// The HELP and TYPE lines are the caller's (see WriteHeader), so that
// several label sets can share them.
func (h *Histogram) WriteSeries(w io.Writer, name, labels string) error {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum int64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		if _, err := fmt.Fprintf(w, "%s_bucket{%s%sle=\"%s\"} %d\n", name, labels, sep,
			strconv.FormatFloat(b, 'g', -1, 64), cum); err != nil {
			return err
		}
	}
	cum += h.counts[len(h.bounds)].Load()
	lb := ""
	if labels != "" {
		lb = "{" + labels + "}"
	}
	_, err := fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n%s_sum%s %s\n%s_count%s %d\n",
		name, labels, sep, cum,
		name, lb, strconv.FormatFloat(float64(h.sumNS.Load())/1e9, 'g', -1, 64),
		name, lb, cum)
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
