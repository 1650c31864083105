package preflight

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/vrender/vrender/internal/telemetry"
)

// Metrics is a scrape of a Prometheus text exposition (version 0.0.4): each
// sample's value summed over its label sets, keyed by sample name. An
// engine with several workers (tensor parallelism, data parallel ranks)
// exports one series per engine label; preflight wants the totals.
type Metrics map[string]float64

// ParseMetrics reads a Prometheus text exposition.
func ParseMetrics(r io.Reader) (Metrics, error) {
	m := Metrics{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		smp, err := telemetry.ParseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: %w", n, err)
		}
		m[smp.Name] += smp.Value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	return m, nil
}

// Counter returns a counter's total under its exposed name (with
// prometheus_client's "_total" suffix) or, from older clients, its bare
// name.
func (m Metrics) Counter(name string) (float64, bool) {
	if v, ok := m[name+"_total"]; ok {
		return v, true
	}
	v, ok := m[name]
	return v, ok
}

// Histogram returns a histogram's observation count and sum.
func (m Metrics) Histogram(name string) (count, sum float64, ok bool) {
	count, okc := m[name+"_count"]
	sum, oks := m[name+"_sum"]
	return count, sum, okc && oks
}
