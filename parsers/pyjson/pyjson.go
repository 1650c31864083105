package pyjson

import (
	"fmt"

	"github.com/vrender/vrender/internal/wire"
)

// Canonical returns json.dumps(json.loads(s), ensure_ascii=False) for a
// complete document s (surrounding whitespace allowed, nothing else).
func Canonical(s string) (string, error) {
	var v Value
	out, n, err := v.Feed(nil, s)
	if err != nil {
		return "", err
	}
	if out, err = v.End(out); err != nil {
		return "", err
	}
	for _, c := range []byte(s[n:]) {
		if !isSpace(c) {
			return "", fmt.Errorf("%w: extra data after the value", ErrSyntax)
		}
	}
	return string(out), nil
}

// Quote returns json.dumps(s, ensure_ascii=False) for a Go string.
func Quote(s string) string { return string(wire.AppendString(make([]byte, 0, len(s)+2), s)) }
