package enginesim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/telemetry"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func TestVersion(t *testing.T) {
	sim, srv := newServer(t, Config{})
	for _, want := range []string{DefaultVersion, "0.30.2rc1.dev7+gabc"} {
		if want != DefaultVersion {
			sim.SetVersion(want)
		}
		status, body := get(t, srv.URL+"/version")
		var v struct{ Version string }
		if err := json.Unmarshal([]byte(body), &v); status != 200 || err != nil || v.Version != want {
			t.Fatalf("GET /version = %d %s (%v), want version %q", status, body, err, want)
		}
	}
}

// sample returns the value of the exposition line that starts with prefix.
func sample(t *testing.T, metrics, prefix string) string {
	t.Helper()
	for line := range strings.SplitSeq(metrics, "\n") {
		if strings.HasPrefix(line, prefix) {
			return line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	t.Fatalf("no sample %q in:\n%s", prefix, metrics)
	return ""
}

func TestKVMetrics(t *testing.T) {
	sim, srv := newServer(t, Config{})
	url := srv.URL + "/inference/v1/generate"
	transfer := func() {
		t.Helper()
		_, _, out := post(t, url, `{"token_ids":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],"sampling_params":{"max_tokens":1},`+
			`"kv_transfer_params":{"do_remote_decode":true}}`)
		var resp struct {
			KV json.RawMessage `json:"kv_transfer_params"`
		}
		if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.KV) == 0 {
			t.Fatalf("prefill response %s: %v", out, err)
		}
		status, _, out := post(t, url, `{"token_ids":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],"sampling_params":{"max_tokens":2},`+
			`"kv_transfer_params":`+string(resp.KV)+`}`)
		if status != http.StatusOK {
			t.Fatalf("decode: %d %s", status, out)
		}
	}
	transfer()
	transfer()
	// A collocated request transfers nothing.
	post(t, url, `{"token_ids":[1,2,3],"sampling_params":{"max_tokens":2}}`)
	_, m := get(t, srv.URL+"/metrics")
	const lbl = `{engine="0",model_name="qwen3"}`
	checks := []struct{ prefix, want string }{
		{MetricXferTime + "_count" + lbl, "2.0"},
		{MetricXferTime + `_bucket{engine="0",model_name="qwen3",le="+Inf"}`, "2.0"},
		{MetricBytesTransferred + "_sum" + lbl, "5.013504e+06"}, // 2 * 17 tokens * 147456 bytes
		{MetricFailedTransfers + "_total" + lbl, "0.0"},
		{MetricKVExpiredReqs + "_total" + lbl, "0.0"},
	}
	for _, c := range checks {
		if got := sample(t, m, c.prefix); got != c.want {
			t.Errorf("%s = %s, want %s", c.prefix, got, c.want)
		}
	}
	if !strings.Contains(m, "# TYPE "+MetricKVExpiredReqs+"_total counter") {
		t.Errorf("no counter TYPE line for %s:\n%s", MetricKVExpiredReqs, m)
	}

	sim.SetKVFaults(KVFaults{ExpireEvery: 1})
	transfer()
	sim.SetKVFaults(KVFaults{FailEvery: 1})
	transfer()
	_, m = get(t, srv.URL+"/metrics")
	for _, c := range []struct{ prefix, want string }{
		{MetricKVExpiredReqs + "_total" + lbl, "1.0"},
		{MetricFailedTransfers + "_total" + lbl, "1.0"},
		{MetricXferTime + "_count" + lbl, "2.0"},
	} {
		if got := sample(t, m, c.prefix); got != c.want {
			t.Errorf("after faults: %s = %s, want %s", c.prefix, got, c.want)
		}
	}
}

// A served name with a quote, backslash or newline is escaped as the
// exposition format defines (strconv.Quote would write \t and \x escapes,
// which Prometheus reads literally), so a scraper gets it back.
func TestMetricsLabelEscaping(t *testing.T) {
	const name = "a\"b\\c\nd\té"
	_, srv := newServer(t, Config{ServedModelName: name})
	_, m := get(t, srv.URL+"/metrics")
	fams, err := telemetry.ParseText(strings.NewReader(m))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, m)
	}
	if _, ok := telemetry.Value(fams, MetricFailedTransfers+"_total", map[string]string{"model_name": name}); !ok {
		t.Fatalf("model_name %q not read back from:\n%s", name, m)
	}
}
