package server

import (
	"net/http"
	"slices"

	"github.com/vrender/vrender/protocol"
)

// handleModels answers GET /v1/models with one card per served name, as
// vLLM lists its base model paths, then one per LoRA adapter
// (OpenAIServingModels.show_available_models,
// vllm/entrypoints/openai/models/serving.py).
func (s *server) handleModels(w http.ResponseWriter, r *http.Request) {
	cards := protocol.ModelCards(s.servedNames, s.modelPath, s.model.MaxModelLen, s.adapters, s.now())
	s.writeJSON(w, r, http.StatusOK, protocol.NewModelList(cards))
}

// checkModel accepts a request's "model" when it is absent, null or empty
// (the served model is meant), one of the served names or a LoRA adapter's
// name, as vLLM's _check_model does (vllm/entrypoints/serve/engine/serving.py).
func (s *server) checkModel(name *string) *apiError {
	if name == nil || *name == "" || slices.Contains(s.servedNames, *name) || s.isAdapter(*name) {
		return nil
	}
	return notFoundModel(*name)
}

// isAdapter reports a --lora-modules name.
func (s *server) isAdapter(name string) bool {
	return slices.ContainsFunc(s.adapters, func(l protocol.LoRAModulePath) bool { return l.Name == name })
}
