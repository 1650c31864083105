package render

import (
	"encoding/json"

	"github.com/vrender/vrender/protocol"
)

// typedMessages decodes test messages written as JSON objects, as protocol
// decodes a request's; a fixture that is not a list of objects panics.
func typedMessages(raw []json.RawMessage) []protocol.Message {
	msgs, err := protocol.ParseMessages(raw)
	if err != nil {
		panic(err)
	}
	return msgs
}
