package preflight

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/vrender/vrender/internal/wire"
)

// WriteText prints the checklist: ✓, ✗ or – per check, the figures, and
// what to fix under a failure.
func (r *Report) WriteText(w io.Writer) error {
	roles := make([]string, 0, len(r.Engines))
	for role := range r.Engines {
		roles = append(roles, role)
	}
	sort.Strings(roles)
	if _, err := fmt.Fprintf(w, "vrender preflight (%s):", r.Mode); err != nil {
		return err
	}
	for _, role := range roles {
		fmt.Fprintf(w, " %s=%s", role, r.Engines[role])
	}
	fmt.Fprintln(w)
	for _, c := range r.Checks {
		mark := map[string]string{StatusPass: "✓", StatusFail: "✗", StatusSkip: "–"}[c.Status]
		fmt.Fprintf(w, "%s %s: %s\n", mark, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", c.Fix)
		}
	}
	verdict := "all checks passed"
	if !r.OK {
		verdict = "FAILED: fix the check marked ✗ and run preflight again"
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

func quoteJSON(s string) string { return string(wire.AppendString(nil, s)) }
