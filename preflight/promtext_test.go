package preflight

import (
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	const text = `# HELP vllm:nixl_xfer_time_seconds Histogram of transfer duration.
# TYPE vllm:nixl_xfer_time_seconds histogram
vllm:nixl_xfer_time_seconds_bucket{engine="0",le="0.005",model_name="m"} 1.0
vllm:nixl_xfer_time_seconds_count{engine="0",model_name="m"} 3.0
vllm:nixl_xfer_time_seconds_sum{engine="0",model_name="m"} 0.25
vllm:nixl_xfer_time_seconds_count{engine="1",model_name="m"} 1.0
vllm:nixl_xfer_time_seconds_sum{engine="1",model_name="m"} 0.05
vllm:nixl_num_kv_expired_reqs_total{engine="0",model_name="we} ird \"name\""} 2.0 1700000000000
legacy_counter 7
process_start_time_seconds 1.7e+09
up_bytes{a="b"} +Inf
`
	m, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if c, s, ok := m.Histogram("vllm:nixl_xfer_time_seconds"); !ok || c != 4 || s < 0.2999 || s > 0.3001 {
		t.Errorf("histogram = %v %v %v, want 4 0.3 true", c, s, ok)
	}
	if v, ok := m.Counter("vllm:nixl_num_kv_expired_reqs"); !ok || v != 2 {
		t.Errorf("expired = %v %v", v, ok)
	}
	if v, ok := m.Counter("legacy_counter"); !ok || v != 7 {
		t.Errorf("legacy counter = %v %v", v, ok)
	}
	if _, ok := m.Counter("vllm:nixl_num_failed_transfers"); ok {
		t.Error("absent counter found")
	}
	if _, _, ok := m.Histogram("legacy_counter"); ok {
		t.Error("counter read as histogram")
	}

	for _, bad := range []string{"novalue\n", `x{a="b" 1` + "\n", "x 1 2 3\n", "x abc\n"} {
		if _, err := ParseMetrics(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseMetrics(%q) succeeded", bad)
		}
	}
}
