package parsers

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/statecodec"
)

// codecRaw codes a held JSON value.
func codecRaw(c *statecodec.Codec, v *json.RawMessage) { c.ByteSlice((*[]byte)(v)) }

// codecCallDelta codes a tool-call delta a machine holds back.
func codecCallDelta(c *statecodec.Codec, d *ToolCallDelta) {
	c.Int(&d.Index)
	c.String(&d.ID)
	c.String(&d.Type)
	c.String(&d.Name)
	c.String(&d.Arguments)
}
