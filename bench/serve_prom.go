package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
)

// AddedLatencyMetric is the orchestrator's histogram of the time from an
// engine event read to the client chunk flushed: the latency vrender adds
// per token.
const AddedLatencyMetric = "vrender_orchestrator_event_seconds"

// HistogramBucket is one cumulative bucket of a Prometheus histogram.
type HistogramBucket struct {
	UpperBound float64 // le
	Count      float64 // observations <= UpperBound
}

// Histogram is a Prometheus histogram summed over its label sets.
type Histogram struct {
	Buckets    []HistogramBucket // ascending le, the last +Inf
	Count, Sum float64
}

// ParseHistogram extracts histogram name from Prometheus text exposition,
// adding up series that differ in labels other than le. ok is false when
// the text has no bucket of that name.
func ParseHistogram(text []byte, name string) (h Histogram, ok bool, err error) {
	byLE := map[float64]float64{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		smp, perr := telemetry.ParseSample(line)
		if perr != nil {
			return Histogram{}, false, fmt.Errorf("prometheus: %w", perr)
		}
		series, labels, value := smp.Name, smp.Labels, smp.Value
		switch series {
		case name + "_bucket":
			leText, found := labels["le"]
			if !found {
				return Histogram{}, false, fmt.Errorf("prometheus: %s without le label: %q", series, line)
			}
			le, perr := strconv.ParseFloat(leText, 64)
			if perr != nil {
				return Histogram{}, false, fmt.Errorf("prometheus: bad le %q: %w", leText, perr)
			}
			byLE[le] += value
			ok = true
		case name + "_count":
			h.Count += value
		case name + "_sum":
			h.Sum += value
		}
	}
	if err := sc.Err(); err != nil {
		return Histogram{}, false, fmt.Errorf("prometheus: %w", err)
	}
	for le, c := range byLE {
		h.Buckets = append(h.Buckets, HistogramBucket{UpperBound: le, Count: c})
	}
	slices.SortFunc(h.Buckets, func(a, b HistogramBucket) int { return compareFloat(a.UpperBound, b.UpperBound) })
	return h, ok, nil
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Sub returns the observations made between before and h (bucket layouts
// must match; buckets missing from before count as zero).
func (h Histogram) Sub(before Histogram) Histogram {
	prev := map[float64]float64{}
	for _, b := range before.Buckets {
		prev[b.UpperBound] = b.Count
	}
	out := Histogram{Count: h.Count - before.Count, Sum: h.Sum - before.Sum, Buckets: make([]HistogramBucket, len(h.Buckets))}
	for i, b := range h.Buckets {
		out.Buckets[i] = HistogramBucket{UpperBound: b.UpperBound, Count: b.Count - prev[b.UpperBound]}
	}
	return out
}

// Add returns the observations of h and other together, as PromQL's sum()
// over replicas does (a bound missing from one side counts its cumulative
// count below that bound as zero there, which only matters for mismatched
// layouts; replicas of one binary share theirs).
func (h Histogram) Add(other Histogram) Histogram {
	counts := map[float64]float64{}
	for _, b := range h.Buckets {
		counts[b.UpperBound] += b.Count
	}
	for _, b := range other.Buckets {
		counts[b.UpperBound] += b.Count
	}
	out := Histogram{Count: h.Count + other.Count, Sum: h.Sum + other.Sum, Buckets: make([]HistogramBucket, 0, len(counts))}
	for le, n := range counts {
		out.Buckets = append(out.Buckets, HistogramBucket{UpperBound: le, Count: n})
	}
	slices.SortFunc(out.Buckets, func(a, b HistogramBucket) int { return cmp.Compare(a.UpperBound, b.UpperBound) })
	return out
}

// ScrapeHistograms scrapes histogram name from every url (the replicas of
// a load-balanced service) and returns their sum.
func ScrapeHistograms(ctx context.Context, client *http.Client, urls []string, name string) (Histogram, error) {
	var sum Histogram
	for _, u := range urls {
		h, err := ScrapeHistogram(ctx, client, u, name)
		if err != nil {
			return Histogram{}, err
		}
		sum = sum.Add(h)
	}
	return sum, nil
}

// Quantile estimates the q-quantile (0..1) the way PromQL's
// histogram_quantile does: find the bucket holding rank q*count and
// interpolate linearly inside it (the lowest bucket starting at 0); a rank
// in the +Inf bucket returns the highest finite bound. NaN when empty.
func (h Histogram) Quantile(q float64) float64 {
	n := len(h.Buckets)
	if n < 2 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
		return math.NaN()
	}
	total := h.Buckets[n-1].Count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	b := 0
	for b < n-1 && h.Buckets[b].Count < rank {
		b++
	}
	if b == n-1 {
		return h.Buckets[n-2].UpperBound
	}
	end := h.Buckets[b].UpperBound
	if b == 0 && end <= 0 {
		return end
	}
	start, below := 0.0, 0.0
	if b > 0 {
		start, below = h.Buckets[b-1].UpperBound, h.Buckets[b-1].Count
	}
	inBucket := h.Buckets[b].Count - below
	if inBucket <= 0 {
		return end
	}
	return start + (end-start)*(rank-below)/inBucket
}

// ScrapeHistogram fetches url and parses histogram name from it.
func ScrapeHistogram(ctx context.Context, client *http.Client, url, name string) (Histogram, error) {
	body, err := scrapeBody(ctx, client, url)
	if err != nil {
		return Histogram{}, err
	}
	h, ok, err := ParseHistogram(body, name)
	if err != nil {
		return Histogram{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	if !ok {
		return Histogram{}, fmt.Errorf("scrape %s: no histogram %s", url, name)
	}
	return h, nil
}

// scrapeBody fetches a Prometheus endpoint.
func scrapeBody(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: HTTP %s", url, resp.Status)
	}
	return body, nil
}

// scrapeFamilies fetches and parses a Prometheus endpoint.
func scrapeFamilies(ctx context.Context, client *http.Client, url string) (map[string]*telemetry.Family, error) {
	body, err := scrapeBody(ctx, client, url)
	if err != nil {
		return nil, err
	}
	fams, err := telemetry.ParseText(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", url, err)
	}
	return fams, nil
}

// sumSamples adds every sample named name (all label sets), and reports
// whether there was one.
func sumSamples(fams map[string]*telemetry.Family, name string) (float64, bool) {
	var sum float64
	found := false
	for _, f := range fams {
		for _, s := range f.Samples {
			if s.Name == name {
				sum += s.Value
				found = true
			}
		}
	}
	return sum, found
}
