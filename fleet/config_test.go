package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseEngineConfig(t *testing.T) {
	good := `
pools:
  prefill: [http://p1:8000, http://p2:8000]
  decode:
    - http://d1:8000
health:
  interval: 250ms
  timeout: 1s
  eject_after: 5
api_key: sekret
`
	c, err := parseEngineConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pools.Prefill) != 2 || c.Pools.Decode[0] != "http://d1:8000" || c.APIKey != "sekret" {
		t.Fatalf("parsed %+v", c)
	}
	if h := c.HealthConfig(); h.Interval != 250*time.Millisecond || h.Timeout != time.Second || h.EjectAfter != 5 {
		t.Fatalf("health %+v", h)
	}
	tests := []struct{ name, yaml, want string }{
		{"unknown top key", "pools:\n  collocated: [http://a]\napi-key: x\n", "field api-key not found"},
		{"unknown nested key", "pools:\n  collocated: [http://a]\nhealth:\n  intervall: 1s\n", "field intervall not found"},
		{"misspelt pool", "pools:\n  colocated: [http://a]\n", "field colocated not found"},
		{"bad duration", "pools:\n  collocated: [http://a]\nhealth:\n  interval: soon\n", "soon"},
		{"wrong type", "pools:\n  collocated: http://a\n", "cannot unmarshal"},
		{"empty", "", "empty"},
		{"two documents", "pools:\n  collocated: [http://a]\n---\npools:\n  collocated: [http://b]\n", "more than one"},
		{"no engines", "health:\n  interval: 1s\n", "no engines"},
		{"mixed", "pools:\n  collocated: [http://a]\n  prefill: [http://b]\n  decode: [http://c]\n", "not both"},
		{"prefill only", "pools:\n  prefill: [http://b]\n", "both prefill and decode"},
		{"empty url", "pools:\n  collocated: ['']\n", "empty engine URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseEngineConfig([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestLoadEngineConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engines.yaml")
	if err := os.WriteFile(path, []byte("pools:\n  collocated: [http://a:1]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadEngineConfig(path)
	if err != nil || len(c.Pools.Collocated) != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := LoadEngineConfig(path + ".missing"); err == nil {
		t.Fatal("a missing file loaded")
	}
}
