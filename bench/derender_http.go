package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// DerenderCallWorkload streams ids (the answer to chatJSON after prompt)
// one token per call to
// /v1/chat/completions/derender, echoing only the checkpoint (the prompt
// goes with the first call of each stream), and starts a new stream when
// one ends: one unit is one call, as a router makes per engine event.
func DerenderCallWorkload(name, chatJSON string, promptIDs, ids []int) Workload {
	prompt, _ := json.Marshal(promptIDs)
	state := []byte("null")
	pos := 0
	var buf bytes.Buffer
	return Workload{Name: name, Kind: "checkpoint",
		Next: func(int) ([]Call, error) {
			if pos == len(ids) {
				pos, state = 0, []byte("null")
			}
			buf.Reset()
			buf.WriteString(`{"stream":true,"model":"m","chat_request":`)
			buf.WriteString(chatJSON)
			if pos == 0 {
				buf.WriteString(`,"prompt_token_ids":`)
				buf.Write(prompt)
			}
			fr := "null"
			if pos == len(ids)-1 {
				fr = `"stop"`
			}
			buf.WriteString(`,"stream_state":`)
			buf.Write(state)
			buf.WriteString(`,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[`)
			buf.WriteString(strconv.Itoa(ids[pos]))
			buf.WriteString(`],"finish_reason":` + fr + `}]}}`)
			pos++
			return []Call{{Method: "POST", Path: "/v1/chat/completions/derender", Body: bytes.Clone(buf.Bytes())}}, nil
		},
		Check: func(body []byte) error {
			var res struct {
				StreamState struct {
					C string `json:"vrender_checkpoint"`
				} `json:"stream_state"`
			}
			if err := json.Unmarshal(body, &res); err != nil {
				return fmt.Errorf("derender response: %w", err)
			}
			if res.StreamState.C == "" && pos < len(ids) {
				return fmt.Errorf("derender response without a checkpoint: %.200s", body)
			}
			state, _ = json.Marshal(map[string]string{"vrender_checkpoint": res.StreamState.C})
			return nil
		}}
}
