package protocol

import "time"

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
