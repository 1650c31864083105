package enginesim

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/vrender/vrender/protocol"
)

// The engine's item cache (Sim.items) is vLLM's MultiModalReceiverCache,
// the engine core's half of the "lru" processor cache (vLLM's default
// --mm-processor-cache-type, used when the server has one API process and
// one data-parallel rank or external load balancing;
// vllm/multimodal/registry.py engine_receiver_cache_from_config): every
// kwargs item a request brings is kept under its mm_hash, bounded by the
// items' sizes, and a request may send an item's hash with a null kwargs
// item, which the engine core fills from the cache
// (BaseMultiModalReceiverCache.get_and_update_features, called by
// EngineCore.preprocess_add_request). engine-sim keeps what it reports of
// an item (seenImage), sized as the item's msgpack.

// addItems keeps the items an accepted request brought.
func (s *Sim) addItems(brought []broughtItem) {
	for _, it := range brought {
		s.items.Add(it.img.hash, it.size, it.img)
	}
}

// cacheMissMessage is the text of vLLM's GenerationError, which its
// generate route streams for a request the engine core finished with
// FinishReason.ERROR.
const cacheMissMessage = "Internal server error"

// answerMiss answers a request with null items the item cache does not
// hold as vLLM does: the engine core fails the request before scheduling
// it (newest vLLM raises MultiModalCacheMissError in the receiver cache,
// EngineCoreProc._handle_mm_cache_miss finishes the request with
// FinishReason.ERROR and the missing hashes, which only the in-process
// front end reads; bf578e1's receiver asserts, and the input thread's
// _handle_request_preproc_error finishes it the same way). The generate
// route then streams {"error": …} and [DONE] (serve_tokens_stream_generator
// raising GenerationError through _raise_if_error), or answers its choices
// with finish_reason "error" and no tokens when not streaming
// (serve_tokens_full_generator does not check). A front end that sent the
// nulls resends the request with the items' data.
func (s *Sim) answerMiss(w http.ResponseWriter, g *generation) {
	s.itemMisses.Add(1)
	s.log.Debug("enginesim: multimodal cache miss", "request_id", g.id, "mm_hashes", strings.Join(g.missing, ","))
	if g.req.Stream != nil && *g.req.Stream {
		body, _ := protocol.MarshalJSON(protocol.NewErrorResponse(http.StatusInternalServerError,
			protocol.ErrorTypeInternal, cacheMissMessage, nil))
		b := append([]byte("data: "), body...)
		b = append(b, "\n\n"+doneEvent...)
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
		return
	}
	choices := make([]choiceFields, max(g.req.SamplingParams.N, 1))
	for i := range choices {
		choices[i] = choiceFields{index: i, finish: "error", final: true}
	}
	model := s.servedName
	if g.lora != "" {
		model = g.lora
	}
	b := g.appendResponse(nil, model, s.now().Unix(), choices)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
