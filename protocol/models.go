package protocol

import (
	"fmt"
	"slices"
	"time"
)

// ModelPermission is vLLM's (OpenAI's legacy) permission object; vLLM
// always sends one with these fixed values.
type ModelPermission struct {
	ID                 string  `json:"id"`
	Object             string  `json:"object"`
	Created            int64   `json:"created"`
	AllowCreateEngine  bool    `json:"allow_create_engine"`
	AllowSampling      bool    `json:"allow_sampling"`
	AllowLogprobs      bool    `json:"allow_logprobs"`
	AllowSearchIndices bool    `json:"allow_search_indices"`
	AllowView          bool    `json:"allow_view"`
	AllowFineTuning    bool    `json:"allow_fine_tuning"`
	Organization       string  `json:"organization"`
	Group              *string `json:"group"`
	IsBlocking         bool    `json:"is_blocking"`
}

// NewModelPermission returns vLLM's default permission, created at now.
func NewModelPermission(now time.Time) ModelPermission {
	return ModelPermission{
		ID:            "modelperm-" + RandomUUID(),
		Object:        "model_permission",
		Created:       now.Unix(),
		AllowSampling: true,
		AllowLogprobs: true,
		AllowView:     true,
		Organization:  "*",
	}
}

// ModelCard is one entry of GET /v1/models.
type ModelCard struct {
	ID          string            `json:"id"`
	Object      string            `json:"object"`
	Created     int64             `json:"created"`
	OwnedBy     string            `json:"owned_by"`
	Root        *string           `json:"root"`
	Parent      *string           `json:"parent"`
	MaxModelLen *int              `json:"max_model_len"`
	Permission  []ModelPermission `json:"permission"`
}

// NewModelCard returns the card vLLM lists for a base model served under
// name id from path root.
func NewModelCard(id, root string, maxModelLen int, now time.Time) ModelCard {
	return ModelCard{
		ID:          id,
		Object:      "model",
		Created:     now.Unix(),
		OwnedBy:     "vllm",
		Root:        &root,
		MaxModelLen: &maxModelLen,
		Permission:  []ModelPermission{NewModelPermission(now)},
	}
}

// LoRAModulePath is one --lora-modules adapter, vLLM's LoRAModulePath
// (vllm/entrypoints/openai/models/protocol.py): requests name it in
// "model"; BaseModelName is "" when not given. vLLM's is_3d_lora_weight
// only matters to the engine that loads the weights.
type LoRAModulePath struct {
	Name, Path, BaseModelName string
}

// ValidateLoRAModules checks adapters as vLLM's init_static_loras loads
// them (vllm/entrypoints/openai/models/serving.py load_lora_adapter): a
// name and a path each, no name twice. It also refuses an adapter named
// as a served model, which vLLM accepts and then lists twice, the adapter
// shadowing the base model in every request (_maybe_get_adapters looks
// adapters up first).
func ValidateLoRAModules(adapters []LoRAModulePath, servedNames []string) error {
	seen := make(map[string]bool, len(adapters))
	for _, l := range adapters {
		switch {
		case l.Name == "" || l.Path == "":
			return fmt.Errorf("adapter %q needs a name and a path (vLLM: \"Both 'lora_name' and 'lora_path' must be provided.\")", l.Name)
		case seen[l.Name]:
			return fmt.Errorf("the lora adapter '%s' is given twice (vLLM: \"The lora adapter '%s' has already been loaded.\")", l.Name, l.Name)
		case slices.Contains(servedNames, l.Name):
			return fmt.Errorf("the lora adapter '%s' has the name of a served model (--served-model-name)", l.Name)
		}
		seen[l.Name] = true
	}
	return nil
}

// Parent is the base model vLLM lists as the adapter's parent: its
// BaseModelName when that is one of servedNames, else the first served
// name (load_lora_adapter keeps base_model_name only when is_base_model).
func (l LoRAModulePath) Parent(servedNames []string) string {
	if l.BaseModelName != "" && slices.Contains(servedNames, l.BaseModelName) {
		return l.BaseModelName
	}
	if len(servedNames) == 0 {
		return ""
	}
	return servedNames[0]
}

// NewLoRAModelCard returns the card vLLM lists for an adapter after the
// base models (OpenAIServingModels.show_available_models in
// vllm/entrypoints/openai/models/serving.py): its path as root, its base
// model as parent, and no max_model_len.
func NewLoRAModelCard(name, root, parent string, now time.Time) ModelCard {
	return ModelCard{
		ID:         name,
		Object:     "model",
		Created:    now.Unix(),
		OwnedBy:    "vllm",
		Root:       &root,
		Parent:     &parent,
		Permission: []ModelPermission{NewModelPermission(now)},
	}
}

// ModelCards is what vLLM's OpenAIServingModels.show_available_models
// lists: a card per served name (all from root), then one per adapter.
func ModelCards(names []string, root string, maxModelLen int, adapters []LoRAModulePath, now time.Time) []ModelCard {
	cards := make([]ModelCard, 0, len(names)+len(adapters))
	for _, name := range names {
		cards = append(cards, NewModelCard(name, root, maxModelLen, now))
	}
	for _, l := range adapters {
		cards = append(cards, NewLoRAModelCard(l.Name, l.Path, l.Parent(names), now))
	}
	return cards
}

// ModelList is the body of GET /v1/models.
type ModelList struct {
	Object string      `json:"object"`
	Data   []ModelCard `json:"data"`
}

// NewModelList wraps cards in a list object.
func NewModelList(cards []ModelCard) ModelList {
	if cards == nil {
		cards = []ModelCard{}
	}
	return ModelList{Object: "list", Data: cards}
}
