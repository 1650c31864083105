package preflight

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
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
		name, value, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: %w", n, err)
		}
		m[name] += value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	return m, nil
}

// parseSample splits `name{labels} value [timestamp]`; label values may hold
// spaces, braces and escaped quotes.
func parseSample(line string) (string, float64, error) {
	end := strings.IndexAny(line, "{ \t")
	if end <= 0 {
		return "", 0, fmt.Errorf("no value in %q", line)
	}
	name, rest := line[:end], line[end:]
	if rest[0] == '{' {
		close, err := labelsEnd(rest)
		if err != nil {
			return "", 0, fmt.Errorf("%s: %w", name, err)
		}
		rest = rest[close+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields) > 2 {
		return "", 0, fmt.Errorf("%s: want a value and an optional timestamp, got %q", name, rest)
	}
	v, err := parseValue(fields[0])
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", name, err)
	}
	return name, v, nil
}

// labelsEnd returns the index of the '}' closing the label set s opens.
func labelsEnd(s string) (int, error) {
	inQuote := false
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '}':
			return i, nil
		}
	}
	return 0, fmt.Errorf("unterminated label set")
}

func parseValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q: %w", s, err)
	}
	return v, nil
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
