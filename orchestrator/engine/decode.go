package engine

import (
	"encoding/json"

	"github.com/vrender/vrender/protocol"
)

// eventDecoder turns the data of one SSE event, or a non-streaming
// answer, into a GenerateResponse.
//
// Engine answers have one fixed shape, so protocol.GenerateDecoder reads
// them in place; what its fast path declines — error events among them —
// goes to encoding/json, which stays the reference and produces the
// errors. FuzzDecodeEvent checks that equivalence. A decoder belongs to
// one stream.
type eventDecoder struct {
	protocol.GenerateDecoder
}

func (d *eventDecoder) fast(data []byte, resp *protocol.GenerateResponse) error {
	return d.Fast(data, resp)
}

// decode returns the event's response, or an *Error for an error event or
// an event that is not valid GenerateResponse JSON.
func (d *eventDecoder) decode(data []byte) (*protocol.GenerateResponse, error) {
	resp := new(protocol.GenerateResponse)
	if err := d.fast(data, resp); err == nil {
		return resp, nil
	}
	return decodeSlow(data)
}

// decodeSlow is the encoding/json path, also the only one that recognises
// error events.
func decodeSlow(data []byte) (*protocol.GenerateResponse, error) {
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return nil, eventError(data)
	}
	resp := new(protocol.GenerateResponse)
	if err := json.Unmarshal(data, resp); err != nil {
		return nil, badGateway(err, "engine sent an event that is not a generate response: %v", err)
	}
	return resp, nil
}
