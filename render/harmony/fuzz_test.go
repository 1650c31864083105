package harmony

import (
	"strings"
	"testing"
)

// Tool schemas come from clients: rendering any of them must not panic.
func FuzzFunctionsNamespace(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"oneOf":[{"type":"string","default":"x"},{"type":"number"}],"default":1}}}`)
	f.Add(`{"type":["integer","null"],"enum":[],"items":{"type":"array"}}`)
	f.Add(strings.Repeat("[", 600))
	f.Fuzz(func(t *testing.T, schema string) {
		_, _ = FunctionsNamespace([]Tool{{Name: "f", Description: "d\nline", Parameters: []byte(schema)}})
	})
}
