package render

import (
	"errors"
	"strings"
	"testing"
)

// A text nested past the depth limit before its syntax error is refused as
// too deep, as the reference decoder (which stops at the limit) refuses it.
func TestParseJSONDepthBeforeSyntaxError(t *testing.T) {
	for n := 505; n < 520; n++ {
		for _, s := range []string{strings.Repeat("[", n) + strings.Repeat("]", n) + "x", strings.Repeat("[", n) + "x" + strings.Repeat("]", n),
			strings.Repeat("[", n) + `"a` + strings.Repeat("]", n), strings.Repeat(`{"a":`, n) + "1,]", strings.Repeat("[", n) + "]x"} {
			_, we := refParseJSON([]byte(s))
			_, ge := parseJSON([]byte(s))
			if errors.Is(we, errRefJSONTooDeep) != errors.Is(ge, errJSONTooDeep) || (we == nil) != (ge == nil) {
				t.Errorf("%d %.20q...: ref %v, got %v", n, s[n-3:], we, ge)
			}
		}
	}
}
