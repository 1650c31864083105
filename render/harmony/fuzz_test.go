package harmony

import (
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// Tool schemas come from clients: rendering any of them must not panic.
func FuzzFunctionsNamespace(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"oneOf":[{"type":"string","default":"x"},{"type":"number"}],"default":1}}}`)
	f.Add(`{"type":["integer","null"],"enum":[],"items":{"type":"array"}}`)
	f.Add(strings.Repeat("[", 600))
	f.Fuzz(func(t *testing.T, schema string) {
		n, err := wire.Parse([]byte(schema))
		if err != nil {
			return // protocol refuses the request before it reaches here
		}
		_, _ = FunctionsNamespace([]Tool{{Name: "f", Description: "d\nline", Parameters: n}})
	})
}
