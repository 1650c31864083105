package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/internal/wire"
)

// codecSchema codes a property schema as its JSON text: the request's own
// bytes, so the state is what it was when machines held the text.
func codecSchema(c *statecodec.Codec, v **wire.Node) {
	if !c.Decoding() {
		raw := wire.AppendNode(nil, *v)
		c.ByteSlice(&raw)
		return
	}
	var raw []byte
	c.ByteSlice(&raw)
	if c.Failed() {
		return
	}
	n, err := wire.Parse(raw)
	if err != nil {
		c.Failf("tool schema: %v", err)
		return
	}
	*v = n
}

// codecCallDelta codes a tool-call delta a machine holds back.
func codecCallDelta(c *statecodec.Codec, d *ToolCallDelta) {
	c.Int(&d.Index)
	c.String(&d.ID)
	c.String(&d.Type)
	c.String(&d.Name)
	c.String(&d.Arguments)
}
