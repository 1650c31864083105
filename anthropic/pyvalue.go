package anthropic

import (
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// The conversion hands some of a client's values to the chat request as
// Python prints them: a tool_use input as json.dumps writes it
// (pylax.AppendPyDumps), an image source's non-string members and an
// assistant's tool_result list as str() does. They are written from the
// body's trees, which hold the dict json.loads makes (a repeated key once,
// at its first place, with its last value).

// pyStr is Python's str() of the value n: a string as it is, anything
// else its repr.
func pyStr(n *wire.Node) string {
	if n.Kind == wire.String {
		return n.S
	}
	return string(pylax.AppendRepr(nil, n))
}
