package scaletest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/vrender/vrender/internal/testenv"
)

// Stream outcomes. A stream that did not complete is a clean failure when
// what it delivered before failing is a prefix of the reference output.
const (
	outComplete   = "complete"
	outHTTPError  = "http error status"
	outErrorEvent = "in-stream error event then [DONE]"
	outCut        = "connection closed before [DONE]"
)

// streamResult is what one stream delivered: its choices' deltas in order,
// normalized, and how it ended.
type streamResult struct {
	deltas  []string
	outcome string
	detail  string
	// retries counts derender calls sent again after no answer or a 502.
	retries int
}

// normalizeChoices returns each choice of a chunk as canonical JSON (sorted
// keys), with tool-call ids blanked: vLLM makes a fresh random id per call,
// so they cannot match a reference run.
func normalizeChoices(chunk []byte) ([]string, error) {
	var c struct {
		Choices []map[string]any `json:"choices"`
	}
	if err := json.Unmarshal(chunk, &c); err != nil {
		return nil, fmt.Errorf("chunk %.200q: %w", chunk, err)
	}
	var out []string
	for _, ch := range c.Choices {
		if d, ok := ch["delta"].(map[string]any); ok {
			if tcs, ok := d["tool_calls"].([]any); ok {
				for _, tc := range tcs {
					if m, ok := tc.(map[string]any); ok && m["id"] != nil {
						m["id"] = "<id>"
					}
				}
			}
		}
		b, err := json.Marshal(ch)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

// chatStream runs one orchestrated /v1/chat/completions stream.
func chatStream(ctx context.Context, client *http.Client, base, prompt string) streamResult {
	body := fmt.Sprintf(`{"model":"q","stream":true,"seed":7,"messages":[{"role":"user","content":%q}]}`, prompt)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return streamResult{outcome: outCut, detail: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return streamResult{outcome: outCut, detail: err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return streamResult{outcome: outHTTPError, detail: fmt.Sprintf("%d %s", resp.StatusCode, b)}
	}
	var r streamResult
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	errored := false
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			r.outcome = outComplete
			if errored {
				r.outcome = outErrorEvent
			}
			return r
		}
		if errored {
			r.outcome, r.detail = "corrupt", "data after an error event: "+data
			return r
		}
		if strings.HasPrefix(data, `{"error"`) {
			errored, r.detail = true, data
			continue
		}
		d, err := normalizeChoices([]byte(data))
		if err != nil {
			r.outcome, r.detail = "corrupt", err.Error()
			return r
		}
		r.deltas = append(r.deltas, d...)
	}
	r.outcome, r.detail = outCut, fmt.Sprint(sc.Err())
	return r
}

// derenderScenario is one engine output streamed through
// /v1/chat/completions/derender a few tokens per call.
type derenderScenario struct {
	chatRequest json.RawMessage
	prompt      []int
	chunks      [][]int
}

// derenderStream sends the scenario's chunks one call each, echoing
// stream_state (with vrender's signed checkpoint) from call to call, so
// consecutive calls may be served by different replicas.
func derenderStream(ctx context.Context, client *http.Client, base string, sc *derenderScenario, requestID string,
	pause func()) streamResult {
	var r streamResult
	state := json.RawMessage("null")
	for i, chunk := range sc.chunks {
		finish := "null"
		if i == len(sc.chunks)-1 {
			finish = `"stop"`
		}
		ids, _ := json.Marshal(chunk)
		prompt, _ := json.Marshal(sc.prompt)
		body := `{"stream":true,"model":"q","prompt_token_ids":` + string(prompt) + `,"chat_request":` +
			string(sc.chatRequest) + `,"stream_state":` + string(state) + `,"generate_chunk":{"request_id":` +
			fmt.Sprintf("%q", requestID) + `,"choices":[{"index":0,"token_ids":` + string(ids) +
			`,"finish_reason":` + finish + `}]}}`
		status, b, err := postRetrying(ctx, client, base+"/v1/chat/completions/derender", body, &r.retries)
		switch {
		case err != nil:
			return streamResult{deltas: r.deltas, outcome: outCut, detail: err.Error(), retries: r.retries}
		case status != http.StatusOK:
			return streamResult{deltas: r.deltas, outcome: outHTTPError, retries: r.retries,
				detail: fmt.Sprintf("call %d: %d %.300s", i, status, b)}
		}
		var out struct {
			Chunk       json.RawMessage `json:"chunk"`
			StreamState json.RawMessage `json:"stream_state"`
		}
		if err := json.Unmarshal(b, &out); err != nil || len(out.StreamState) == 0 {
			return streamResult{deltas: r.deltas, outcome: "corrupt", detail: fmt.Sprintf("call %d: %.300s", i, b)}
		}
		d, err := normalizeChoices(out.Chunk)
		if err != nil {
			return streamResult{deltas: r.deltas, outcome: "corrupt", detail: err.Error()}
		}
		r.deltas = append(r.deltas, d...)
		state = out.StreamState
		if pause != nil {
			pause()
		}
	}
	r.outcome = outComplete
	return r
}

// judge classifies a stream against its single-replica reference.
func judge(r streamResult, ref []string) string {
	switch {
	case r.outcome == outComplete && slices.Equal(r.deltas, ref):
		return "identical"
	case r.outcome == outComplete:
		return "corrupt"
	case r.outcome == "corrupt":
		return "corrupt"
	case len(r.deltas) <= len(ref) && slices.Equal(r.deltas, ref[:len(r.deltas)]):
		return "clean failure"
	}
	return "corrupt"
}

func firstDiff(a, b []string) string {
	if i := testenv.FirstDiff(a, b); i < min(len(a), len(b)) {
		return fmt.Sprintf("delta %d: got %s, want %s", i, a[i], b[i])
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

// postRetrying POSTs one derender call, sending it once more when it got no
// answer or haproxy's 502 (the replica died with the call): with the state
// echoed in the body a call is idempotent, so the retry, on another
// replica, resumes from the signed checkpoint.
func postRetrying(ctx context.Context, client *http.Client, url, body string, retries *int) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		var status int
		var b []byte
		resp, err := client.Do(req)
		if err == nil {
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
		}
		if attempt < 2 && (err != nil || status == http.StatusBadGateway) && ctx.Err() == nil {
			*retries++
			continue
		}
		return status, b, err
	}
}
