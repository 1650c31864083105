package enginesim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/vrender/vrender/protocol"
)

// KV roles of an engine in disaggregated serving (vLLM's
// kv_transfer_config.kv_role).
const (
	// KVRoleBoth (the default) serves every request: plain ones, prefills
	// (do_remote_decode) and decodes (do_remote_prefill) alike, without
	// checking the parameters, as a kv_both NixlConnector engine does.
	KVRoleBoth = "both"
	// KVRoleProducer is a prefill engine: it only accepts requests with
	// kv_transfer_params.do_remote_decode=true and answers them with the
	// parameters of the KV blocks it keeps for a decode engine. vLLM would
	// also decode a plain request; the sim refuses it so that a router
	// sending decode traffic to a prefill engine is caught.
	KVRoleProducer = "producer"
	// KVRoleConsumer is a decode engine: it only accepts requests whose
	// kv_transfer_params name KV blocks a producer issued
	// (do_remote_prefill=true), refusing with 400 any it cannot have
	// received from a prefill engine, and streams the continuation.
	KVRoleConsumer = "consumer"
)

// validKVRole reports whether role is one of the KVRole constants ("" is
// KVRoleBoth).
func validKVRole(role string) bool {
	switch role {
	case "", KVRoleBoth, KVRoleProducer, KVRoleConsumer:
		return true
	}
	return false
}

// ValidateKVRole reports an unknown --kv-role.
func ValidateKVRole(role string) error {
	if !validKVRole(role) {
		return fmt.Errorf("unknown kv role %q (want producer, consumer or both)", role)
	}
	return nil
}

// kvLeaseTimeout is how long a producer keeps a prefill's KV blocks for
// the decode engine to read: vLLM's VLLM_NIXL_ABORT_REQUEST_TIMEOUT
// default (480 s), after which the blocks are freed and counted in
// nixl_num_kv_expired_reqs.
const kvLeaseTimeout = 480 * time.Second

// maxKVLeases bounds a registry: beyond it the oldest leases are dropped,
// as if they had expired.
const maxKVLeases = 1 << 16

// KVRegistry records the KV blocks the producers of one process issued,
// so that a consumer sharing it accepts exactly those, each once. Sims in
// different processes cannot share one; a consumer without a registry
// accepts any well-formed parameters. Safe for concurrent use.
type KVRegistry struct {
	mu     sync.Mutex
	leases map[string]kvLease
	order  []string // lease keys, oldest first
	now    func() time.Time
}

type kvLease struct {
	blocks  []int64
	expires time.Time
}

// NewKVRegistry returns an empty registry.
func NewKVRegistry() *KVRegistry {
	return &KVRegistry{leases: map[string]kvLease{}, now: time.Now}
}

func leaseKey(engineID, requestID string) string { return engineID + "\x00" + requestID }

// issue records blocks a producer keeps for remote request requestID.
func (r *KVRegistry) issue(engineID, requestID string, blocks []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.order) >= maxKVLeases {
		for _, k := range r.order[:maxKVLeases/2] {
			delete(r.leases, k)
		}
		r.order = append(r.order[:0], r.order[maxKVLeases/2:]...)
	}
	k := leaseKey(engineID, requestID)
	r.leases[k] = kvLease{blocks: blocks, expires: r.now().Add(kvLeaseTimeout)}
	r.order = append(r.order, k)
}

// claim hands the lease over to a decode engine: the parameters must name
// blocks a producer issued and nobody read yet.
func (r *KVRegistry) claim(engineID, requestID string, blocks []int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := leaseKey(engineID, requestID)
	l, ok := r.leases[k]
	switch {
	case !ok:
		return fmt.Errorf("no prefill engine issued KV blocks for request %q of engine %s (forged, already read, or expired)",
			requestID, engineID)
	case r.now().After(l.expires):
		delete(r.leases, k)
		return fmt.Errorf("the KV lease of request %q expired before the decode engine read it", requestID)
	case !slices.Equal(l.blocks, blocks):
		return fmt.Errorf("remote_block_ids %v are not the blocks %v the prefill engine issued for request %q",
			blocks, l.blocks, requestID)
	}
	delete(r.leases, k)
	return nil
}

// remotePrefillParams is the kv_transfer_params a decode request carries,
// as a NixlConnector prefill engine returns them.
type remotePrefillParams struct {
	DoRemotePrefill bool    `json:"do_remote_prefill"`
	DoRemoteDecode  bool    `json:"do_remote_decode"`
	RemoteBlockIDs  []int64 `json:"remote_block_ids"`
	RemoteEngineID  *string `json:"remote_engine_id"`
	RemoteRequestID *string `json:"remote_request_id"`
	RemoteHost      *string `json:"remote_host"`
	RemotePort      *int    `json:"remote_port"`
}

// engineIDPattern is a producer's engine id: a UUID, hex with or without
// dashes (vLLM's str(uuid4()), or the sim's hex form).
var engineIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)

// checkRemotePrefill is a consumer's check of a decode request: the
// parameters must be what a producer returns for this prompt, and, with a
// registry, what one actually issued.
func (k *kvTransfer) checkRemotePrefill(raw json.RawMessage, promptLen int, reg *KVRegistry) error {
	if len(raw) == 0 || string(raw) == "null" {
		return fmt.Errorf("this engine is a kv_consumer: it serves only decode requests whose kv_transfer_params " +
			"come from a prefill engine (do_remote_prefill=true)")
	}
	var p remotePrefillParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("kv_transfer_params are not NixlConnector parameters: %v", err)
	}
	switch {
	case !p.DoRemotePrefill:
		return fmt.Errorf("this engine is a kv_consumer: kv_transfer_params.do_remote_prefill must be true")
	case p.DoRemoteDecode:
		return fmt.Errorf("this engine is a kv_consumer: it does not serve prefills (do_remote_decode=true)")
	case p.RemoteEngineID == nil || !engineIDPattern.MatchString(*p.RemoteEngineID):
		return fmt.Errorf("kv_transfer_params.remote_engine_id %s is not the id of a prefill engine", quoteOrNull(p.RemoteEngineID))
	case p.RemoteRequestID == nil || *p.RemoteRequestID == "":
		return fmt.Errorf("kv_transfer_params.remote_request_id is missing")
	case p.RemoteHost == nil || *p.RemoteHost == "":
		return fmt.Errorf("kv_transfer_params.remote_host is missing")
	case p.RemotePort == nil || *p.RemotePort < 1 || *p.RemotePort > 65535:
		return fmt.Errorf("kv_transfer_params.remote_port is missing or out of range")
	}
	if want := k.blocksFor(promptLen); len(p.RemoteBlockIDs) != want {
		return fmt.Errorf("kv_transfer_params.remote_block_ids name %d blocks, but this prompt of %d tokens fills %d: "+
			"the prefill ran on another prompt", len(p.RemoteBlockIDs), promptLen, want)
	}
	for _, b := range p.RemoteBlockIDs {
		if b < 0 {
			return fmt.Errorf("kv_transfer_params.remote_block_ids holds a negative block id %d", b)
		}
	}
	if reg != nil {
		return reg.claim(*p.RemoteEngineID, *p.RemoteRequestID, p.RemoteBlockIDs)
	}
	return nil
}

func quoteOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// checkPrefill is a producer's check: only prefill requests.
func checkPrefill(raw json.RawMessage) error {
	remoteDecode, remotePrefill := kvFlags(raw)
	switch {
	case remotePrefill:
		return fmt.Errorf("this engine is a kv_producer: it does not decode transferred KV (do_remote_prefill=true)")
	case !remoteDecode:
		return fmt.Errorf("this engine is a kv_producer: it serves only prefill requests " +
			"(kv_transfer_params.do_remote_decode=true, max_tokens 1)")
	}
	return nil
}

// kvAccept is what the KV parameters of an accepted request imply.
type kvAccept struct {
	response      json.RawMessage // the kv_transfer_params to answer with (prefills)
	remotePrefill bool            // the prompt's KV cache comes from a prefill engine
}

// acceptKV applies the engine's KV role to a request (engine request id
// id) and, for a prefill, issues its KV blocks.
func (s *Sim) acceptKV(req *protocol.GenerateRequest, id string) (kvAccept, *apiError) {
	role := s.cfg.KVRole
	if !validKVRole(role) {
		return kvAccept{}, &apiError{http.StatusInternalServerError, protocol.NewErrorResponse(http.StatusInternalServerError,
			protocol.ErrorTypeInternal, "simulated engine misconfigured: "+ValidateKVRole(role).Error(), nil)}
	}
	remoteDecode, remotePrefill := kvFlags(req.KVTransferParams)
	switch role {
	case KVRoleProducer:
		if err := checkPrefill(req.KVTransferParams); err != nil {
			return kvAccept{}, badRequest(err.Error())
		}
	case KVRoleConsumer:
		if err := s.kv.checkRemotePrefill(req.KVTransferParams, len(req.TokenIDs), s.cfg.KVRegistry); err != nil {
			return kvAccept{}, badRequest(err.Error())
		}
	}
	var a kvAccept
	a.remotePrefill = remotePrefill
	if remoteDecode {
		a.response = s.kv.prefillResponse(id, len(req.TokenIDs), s.cfg.KVRegistry)
	}
	return a, nil
}
