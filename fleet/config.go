package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxConfigFile bounds an engine config file: a few hundred engines fit
// in far less.
const maxConfigFile = 1 << 20

// EngineConfig is serve's --engine-config file:
//
//	pools:
//	  collocated: [http://10.0.0.1:8000, http://10.0.0.2:8000]
//	  # or, for disaggregated serving, instead of collocated:
//	  prefill: [http://10.0.1.1:8000]
//	  decode: [http://10.0.2.1:8000, http://10.0.2.2:8000]
//	health:
//	  interval: 5s     # GET /health period; negative disables checks and ejection
//	  timeout: 2s
//	  eject_after: 3   # consecutive failures
//	  eject_window: 10s # each within this long of the one before
//	api_key: KEY       # sent to the engines as a bearer token
//
// Unknown keys are errors, so a misspelt setting cannot be silently
// ignored.
type EngineConfig struct {
	Pools struct {
		Collocated []string `yaml:"collocated"`
		Prefill    []string `yaml:"prefill"`
		Decode     []string `yaml:"decode"`
	} `yaml:"pools"`
	Health struct {
		Interval    time.Duration `yaml:"interval"`
		Timeout     time.Duration `yaml:"timeout"`
		EjectAfter  int           `yaml:"eject_after"`
		EjectWindow time.Duration `yaml:"eject_window"`
	} `yaml:"health"`
	APIKey string `yaml:"api_key"`
}

// HealthConfig is the file's health section.
func (c *EngineConfig) HealthConfig() HealthConfig {
	return HealthConfig{Interval: c.Health.Interval, Timeout: c.Health.Timeout, EjectAfter: c.Health.EjectAfter,
		EjectWindow: c.Health.EjectWindow}
}

// LoadEngineConfig reads and checks an engine config file.
func LoadEngineConfig(path string) (*EngineConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("engine config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, fmt.Errorf("engine config %s: %w", path, err)
	}
	if len(data) > maxConfigFile {
		return nil, fmt.Errorf("engine config %s: larger than %d bytes", path, maxConfigFile)
	}
	c, err := parseEngineConfig(data)
	if err != nil {
		return nil, fmt.Errorf("engine config %s: %w", path, err)
	}
	return c, nil
}

// parseEngineConfig decodes one YAML document strictly and checks it.
func parseEngineConfig(data []byte) (*EngineConfig, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c EngineConfig
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty")
		}
		return nil, err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *EngineConfig) validate() error {
	p := &c.Pools
	switch {
	case len(p.Collocated) > 0 && (len(p.Prefill) > 0 || len(p.Decode) > 0):
		return errors.New("pools: give either collocated engines or prefill and decode engines, not both")
	case len(p.Collocated) == 0 && len(p.Prefill) == 0 && len(p.Decode) == 0:
		return errors.New("pools: no engines")
	case len(p.Collocated) == 0 && (len(p.Prefill) == 0 || len(p.Decode) == 0):
		return errors.New("pools: disaggregated serving needs both prefill and decode engines")
	case c.Health.Timeout < 0:
		return errors.New("health.timeout must not be negative")
	}
	for _, list := range [][]string{p.Collocated, p.Prefill, p.Decode} {
		for _, u := range list {
			if u == "" {
				return errors.New("pools: empty engine URL")
			}
		}
	}
	return nil
}
