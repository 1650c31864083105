// Package structtaggolden loads render/testdata/structtag/golden.json, the
// structural tags vLLM's Python builders produce (see its README.md), for
// the tests of the packages that build or follow them.
package structtaggolden

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Case is one golden structural tag.
type Case struct {
	Model      string          `json:"model"`
	Tools      string          `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
	// StructuralTag is nil where vLLM sets no structural tag.
	StructuralTag *string `json:"structural_tag"`
}

// Choice is "auto", "required" or "named".
func (c Case) Choice() string {
	var s string
	if json.Unmarshal(c.ToolChoice, &s) == nil {
		return s
	}
	return "named"
}

// Golden is the whole file: the tool sets by name and the cases.
type Golden struct {
	Tools map[string][]json.RawMessage `json:"tools"`
	Cases []Case                       `json:"cases"`
}

// Load reads the golden file from the repository.
func Load() (*Golden, error) {
	_, self, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(self), "..", "..", "render", "testdata", "structtag", "golden.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &g, nil
}
