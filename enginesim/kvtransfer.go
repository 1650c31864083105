package enginesim

import (
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// kvTransfer imitates the NixlConnector side of disaggregated serving: a
// prefill request with kv_transfer_params.do_remote_decode=true answers with
// the parameters a decode engine needs to pull the KV cache; a decode
// request with do_remote_prefill=true generates without a prefill (see
// Config.KVRole for the checks each role makes).
type kvTransfer struct {
	engineID   string
	nextBlock  atomic.Int64
	blockSize  int
	remoteHost string
	remotePort int
	// gate serialises prefills when Config.SerialPrefill is set.
	gate *prefillGate
}

func newKVTransfer() kvTransfer {
	return kvTransfer{engineID: protocol.RandomUUID(), blockSize: 16, remoteHost: "127.0.0.1", remotePort: 5600,
		gate: newPrefillGate()}
}

// blocksFor is how many KV blocks a prompt of n tokens fills.
func (k *kvTransfer) blocksFor(n int) int { return (n + k.blockSize - 1) / k.blockSize }

// kvFlags reads the two booleans that matter from a request's
// kv_transfer_params.
func kvFlags(raw json.RawMessage) (remoteDecode, remotePrefill bool) {
	if len(raw) == 0 {
		return false, false
	}
	var p struct {
		DoRemoteDecode  bool `json:"do_remote_decode"`
		DoRemotePrefill bool `json:"do_remote_prefill"`
	}
	_ = json.Unmarshal(raw, &p) // protocol validated it as an object; odd member types just read as false
	return p.DoRemoteDecode, p.DoRemotePrefill
}

// prefillResponse is the kv_transfer_params a prefill engine returns, in
// NixlConnector.request_finished's key order: blocks for the prompt's KV
// cache, named by this engine and its side channel. With a registry the
// blocks are recorded for a consumer of this process to claim.
func (k *kvTransfer) prefillResponse(engineRequestID string, promptLen int, reg *KVRegistry) json.RawMessage {
	blocks := k.blocksFor(promptLen)
	first := k.nextBlock.Add(int64(blocks)) - int64(blocks)
	ids := make([]int64, blocks)
	b := []byte(`{"do_remote_prefill":true,"do_remote_decode":false,"remote_block_ids":[`)
	for i := range blocks {
		if i > 0 {
			b = append(b, ',')
		}
		ids[i] = first + int64(i)
		b = strconv.AppendInt(b, ids[i], 10)
	}
	if reg != nil {
		reg.issue(k.engineID, engineRequestID, ids)
	}
	b = append(b, `],"remote_engine_id":`...)
	b = strconv.AppendQuote(b, k.engineID)
	b = append(b, `,"remote_request_id":`...)
	b = wire.AppendString(b, engineRequestID)
	b = append(b, `,"remote_host":`...)
	b = strconv.AppendQuote(b, k.remoteHost)
	b = append(b, `,"remote_port":`...)
	b = strconv.AppendInt(b, int64(k.remotePort), 10)
	b = append(b, `,"tp_size":1}`...)
	return b
}
