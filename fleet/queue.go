package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// metricsPath is where a vLLM engine exports Prometheus metrics.
const metricsPath = "/metrics"

// vLLM's scheduler gauges (vllm/v1/metrics/loggers.py), one series per
// engine core (data-parallel rank); the scrape sums them.
const (
	metricWaiting = "vllm:num_requests_waiting"
	metricRunning = "vllm:num_requests_running"
)

// maxMetricsBody bounds what one scrape reads: vLLM's /metrics is tens of
// kilobytes (histograms per model), so 8 MiB means a misbehaving endpoint.
const maxMetricsBody = 8 << 20

// QueueConfig is the scrape of the engines' own queue figures, which the
// prefix scorer weighs into their load (RouterConfig.QueueWeight): it
// also counts requests other routers sent to the same engines.
type QueueConfig struct {
	// Interval is the scrape period; 0 (or negative) turns scraping off.
	Interval time.Duration
	// Timeout bounds one scrape (default: the interval, at most 2s).
	Timeout time.Duration
}

// engineQueue is what the last scrape of an engine's /metrics said. The
// router reads it with atomics only: a slow or failing scrape never holds
// up a routing decision, it only leaves the figures unknown.
type engineQueue struct {
	known            atomic.Bool
	waiting, running atomic.Int64
}

// waitingNow is the engine's waiting requests by its last scrape (0 when
// unknown).
func (q *engineQueue) waitingNow() int64 {
	if !q.known.Load() {
		return 0
	}
	return q.waiting.Load()
}

// runQueueScrapes scrapes every engine's /metrics each Interval until ctx
// is done; with scraping off it returns at once. An engine without those
// gauges (no /metrics, another server) keeps unknown figures, which count
// as an empty queue.
func (p *Pool) runQueueScrapes(ctx context.Context) {
	if p.queue.Interval > 0 {
		every(ctx, p.queue.Interval, p.scrapeQueuesNow)
	}
}

// scrapeQueuesNow scrapes every engine once, concurrently, and returns
// when all are done.
func (p *Pool) scrapeQueuesNow(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range p.members {
		wg.Go(func() {
			waiting, running, err := p.scrapeQueue(ctx, m)
			if ctx.Err() != nil {
				return
			}
			was := m.queue.known.Load()
			if err != nil {
				m.queue.known.Store(false)
				if was {
					p.log.Info("engine queue metrics unavailable; its load counts vrender's requests only", "pool", p.role,
						"engine", m.client.URL(), "err", err)
				}
				return
			}
			m.queue.waiting.Store(waiting)
			m.queue.running.Store(running)
			m.queue.known.Store(true)
		})
	}
	wg.Wait()
}

// errNoQueueMetrics: the engine's /metrics has neither gauge.
var errNoQueueMetrics = errors.New("no " + metricWaiting + " in its metrics")

// scrapeQueue is one GET /metrics of m.
func (p *Pool) scrapeQueue(ctx context.Context, m *poolMember) (waiting, running int64, err error) {
	cctx, cancel := context.WithTimeout(ctx, p.queue.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, m.client.URL()+metricsPath, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("metrics scrape: %w", err)
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("metrics scrape of %s: %w", m.client.URL(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return 0, 0, fmt.Errorf("metrics scrape of %s: status %d", m.client.URL(), resp.StatusCode)
	}
	waiting, running, err = parseQueueMetrics(io.LimitReader(resp.Body, maxMetricsBody))
	if err != nil {
		return 0, 0, fmt.Errorf("metrics scrape of %s: %w", m.client.URL(), err)
	}
	return waiting, running, nil
}

// parseQueueMetrics sums the waiting and running gauges' samples in a
// Prometheus text exposition. The waiting gauge must be there; other
// families are skipped unparsed.
func parseQueueMetrics(r io.Reader) (waiting, running int64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	found := false
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, metricWaiting):
			dst, found = &waiting, true
			line = line[len(metricWaiting):]
		case strings.HasPrefix(line, metricRunning):
			dst = &running
			line = line[len(metricRunning):]
		default:
			continue
		}
		if line != "" && line[0] == '{' {
			end := strings.LastIndexByte(line, '}')
			if end < 0 {
				return 0, 0, fmt.Errorf("malformed sample %q", sc.Text())
			}
			line = line[end+1:]
		} else if line != "" && line[0] != ' ' && line[0] != '\t' {
			continue // another metric sharing the prefix
		}
		fields := strings.Fields(line) // value [timestamp]
		if len(fields) == 0 {
			return 0, 0, fmt.Errorf("malformed sample %q", sc.Text())
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil || v < 0 || v > 1e12 {
			return 0, 0, fmt.Errorf("malformed sample %q", sc.Text())
		}
		*dst += int64(v + 0.5)
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if !found {
		return 0, 0, errNoQueueMetrics
	}
	return waiting, running, nil
}
