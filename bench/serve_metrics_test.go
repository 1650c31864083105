package bench

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

// A hand-computed run: two successes, one failure, known timings.
func TestCalculateMetrics(t *testing.T) {
	reqs := []SampleRequest{{PromptLen: 10}, {PromptLen: 20}, {PromptLen: 30}}
	outs := []RequestOutput{
		{Success: true, TTFT: 0.1, ITL: []float64{0.02, 0.02, 0.02}, Latency: 0.16, OutputTokens: 4, StartTime: 0},
		{Success: true, TTFT: 0.3, ITL: []float64{0.05}, Latency: 0.35, OutputTokens: 2, StartTime: 0.5},
		{Error: "HTTP 500"},
	}
	cases := []struct {
		name        string
		goodput     map[string]float64
		wantGoodput float64
	}{
		{"no goodput", nil, 0},
		{"ttft slo keeps the fast one", map[string]float64{"ttft": 200}, 0.5},
		{"tpot slo keeps the fast one", map[string]float64{"tpot": 30}, 0.5},
		{"loose slos keep both", map[string]float64{"ttft": 500, "tpot": 60, "e2el": 400}, 1.0},
		{"e2el slo keeps none", map[string]float64{"e2el": 100}, 0},
		{"boundary is inclusive", map[string]float64{"ttft": 300}, 1.0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := CalculateMetrics(reqs, outs, 2.0, []float64{50, 99}, tc.goodput)
			if m.Completed != 2 || m.Failed != 1 || m.TotalInput != 30 || m.TotalOutput != 6 {
				t.Fatalf("counts = %d/%d in %d out %d, want 2/1 30 6", m.Completed, m.Failed, m.TotalInput, m.TotalOutput)
			}
			if !near(m.RequestGoodput, tc.wantGoodput) {
				t.Errorf("goodput = %g, want %g", m.RequestGoodput, tc.wantGoodput)
			}
			checks := []struct {
				name      string
				got, want float64
			}{
				{"request throughput", m.RequestThroughput, 1.0},
				{"output throughput", m.OutputThroughput, 3.0},
				{"total token throughput", m.TotalTokenThroughput, 18.0},
				{"mean ttft", m.TTFT.Mean, 200},
				{"median ttft", m.TTFT.Median, 200},
				{"std ttft", m.TTFT.Std, 100},
				{"p99 ttft", m.TTFT.Percentiles[1].Value, 100 + 0.99*200},
				{"mean tpot", m.TPOT.Mean, 35}, // (20 + 50) / 2: TPOT excludes the first token
				{"mean itl", m.ITL.Mean, 27.5},
				{"median itl", m.ITL.Median, 20},
				{"p99 itl", m.ITL.Percentiles[1].Value, 20 + 0.97*30}, // numpy linear: h = 3*0.99
				{"std itl", m.ITL.Std, math.Sqrt(1.6875e-4) * 1000},
				{"mean e2el", m.E2EL.Mean, 255},
				{"peak tokens/s", m.MaxOutputTokensPerS, 6},
				{"peak concurrency", float64(m.MaxConcurrentRequests), 2},
			}
			for _, c := range checks {
				if !near(c.got, c.want) {
					t.Errorf("%s = %.9g, want %.9g", c.name, c.got, c.want)
				}
			}
			if got := m.OutputLens; len(got) != 3 || got[0] != 4 || got[1] != 2 || got[2] != 0 {
				t.Errorf("output lens = %v, want [4 2 0]", got)
			}
		})
	}
}

func TestCalculateMetricsFallbacksAndEmpty(t *testing.T) {
	// No usage chunk: the chunk count stands in; one token means no TPOT.
	outs := []RequestOutput{{Success: true, TTFT: 0.01, Latency: 0.01, Chunks: 1}}
	m := CalculateMetrics([]SampleRequest{{}}, outs, 1, []float64{99}, map[string]float64{"tpot": 0})
	if m.TotalOutput != 1 || m.TPOT.Mean != 0 || m.RequestGoodput != 1 {
		t.Errorf("one-token run: output %d, tpot %g, goodput %g; want 1, 0, 1 (tpot counts 0 for goodput)", m.TotalOutput, m.TPOT.Mean, m.RequestGoodput)
	}
	m = CalculateMetrics(nil, []RequestOutput{{Error: "x"}}, 1, []float64{99}, nil)
	if m.Completed != 0 || m.TTFT.Mean != 0 || m.TTFT.Percentiles[0].Value != 0 || m.MaxOutputTokensPerS != 0 {
		t.Errorf("all-failed run: %+v, want zeros", m)
	}
}

func TestPercentileSortedMatchesNumpy(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 10}
	// numpy.percentile([1,2,3,4,10], p) for these p:
	for p, want := range map[float64]float64{0: 1, 25: 2, 50: 3, 90: 7.6, 99: 9.76, 100: 10} {
		if got := percentileSorted(xs, p); !near(got, want) {
			t.Errorf("p%g = %g, want %g", p, got, want)
		}
	}
}

func TestParseGoodput(t *testing.T) {
	cases := []struct {
		in      []string
		want    map[string]float64
		wantErr string
	}{
		{[]string{"ttft:100", "tpot:5.5"}, map[string]float64{"ttft": 100, "tpot": 5.5}, ""},
		{[]string{"ttft:100 e2el:2000"}, map[string]float64{"ttft": 100, "e2el": 2000}, ""},
		{[]string{"itl:5"}, nil, "must be one of"},
		{[]string{"ttft=5"}, nil, "KEY:VALUE"},
		{[]string{"ttft:-1"}, nil, "non-negative"},
	}
	for _, tc := range cases {
		got, err := ParseGoodput(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseGoodput(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("ParseGoodput(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("ParseGoodput(%q)[%s] = %g, want %g", tc.in, k, got[k], v)
			}
		}
	}
}

func TestParsePercentileFlags(t *testing.T) {
	if p, err := ParsePercentiles("50, 90,99.9"); err != nil || len(p) != 3 || p[2] != 99.9 {
		t.Errorf("ParsePercentiles = %v, %v", p, err)
	}
	if _, err := ParsePercentiles("50,x"); err == nil {
		t.Error("ParsePercentiles accepted x")
	}
	if m, err := ParsePercentileMetrics("ttft,tpot,itl,e2el"); err != nil || len(m) != 4 {
		t.Errorf("ParsePercentileMetrics = %v, %v", m, err)
	}
	if _, err := ParsePercentileMetrics("ttft,latency"); err == nil {
		t.Error("ParsePercentileMetrics accepted latency")
	}
}
