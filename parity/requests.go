package parity

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
)

// Request is one chat request of the requests file.
type Request struct {
	// Name identifies the case in the report: a golden line's id, else
	// "line N".
	Name string `json:"name"`
	// Line is the 1-based line of the requests file.
	Line int `json:"line"`
	// Body is the OpenAI chat completion request, a JSON object.
	Body json.RawMessage `json:"-"`
}

// maxLine bounds one line of the requests file (long conversations with
// tool schemas run to megabytes).
const maxLine = 64 << 20

// ReadRequests reads a JSONL file of chat requests: one OpenAI chat
// completion request per line, or a line of the parser golden set
// (../shared/parity), whose chat_request is taken. Blank lines are
// skipped; anything else that is not a JSON object is an error naming the
// line.
func ReadRequests(r io.Reader) ([]Request, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), maxLine)
	var out []Request
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		req, err := parseRequestLine(line, n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, req)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read requests: %w", err)
	}
	return out, nil
}

func parseRequestLine(line []byte, n int) (Request, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return Request{}, fmt.Errorf("not a JSON object (want one chat request per line)")
	}
	req := Request{Name: "line " + strconv.Itoa(n), Line: n, Body: append(json.RawMessage(nil), line...)}
	if cr, ok := obj["chat_request"]; ok {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(cr, &inner); err != nil || inner == nil {
			return Request{}, fmt.Errorf("chat_request is not a JSON object")
		}
		req.Body = append(json.RawMessage(nil), cr...)
		var id string
		if json.Unmarshal(obj["id"], &id) == nil && id != "" {
			req.Name = id
		}
	}
	return req, nil
}

// Fields of the chat form of POST /tokenize (vLLM's TokenizeChatRequest).
var tokenizeFields = []string{
	"messages", "add_generation_prompt", "continue_final_message", "add_special_tokens",
	"chat_template", "chat_template_kwargs", "mm_processor_kwargs", "media_io_kwargs", "tools",
}

// tokenizeBody is the chat form of /tokenize for a chat request: the
// fields it shares with the chat request, and the served model.
func tokenizeBody(body json.RawMessage, model string) ([]byte, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	for _, k := range tokenizeFields {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	out["model"] = mustJSON(model)
	return encodeObject(out)
}

// renderBody is the chat request for /v1/chat/completions/render: as the
// client wrote it, for the served model.
func renderBody(body json.RawMessage, model string) ([]byte, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	obj["model"] = mustJSON(model)
	return encodeObject(obj)
}

// RequestIDPrefix starts the request_id parity sends with each chat
// completion; a stand-in server reads the case name back from it.
const RequestIDPrefix = "vrender-parity-"

// chatBody is the request for /v1/chat/completions: the client's request
// made reproducible (temperature 0, a fixed seed, one choice, no logprobs)
// and asking for the token IDs vrender must derender.
func chatBody(req Request, model string, seed int64, stream bool) ([]byte, error) {
	obj, err := decodeObject(req.Body)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"n", "logprobs", "top_logprobs", "stream_options", "prompt_logprobs", "use_beam_search"} {
		delete(obj, k)
	}
	mode := "batch"
	if stream {
		mode = "stream"
	}
	obj["model"] = mustJSON(model)
	obj["stream"] = mustJSON(stream)
	obj["return_token_ids"] = mustJSON(true)
	obj["temperature"] = mustJSON(0)
	obj["seed"] = mustJSON(seed)
	obj["request_id"] = mustJSON(fmt.Sprintf("%s%s-%d-%s", RequestIDPrefix, mode, req.Line, idSafe(req.Name)))
	return encodeObject(obj)
}

var notIDSafe = regexp.MustCompile(`[^A-Za-z0-9_.:-]+`)

// idSafe keeps a case name readable inside a request id.
func idSafe(s string) string { return notIDSafe.ReplaceAllString(s, "_") }

func decodeObject(body json.RawMessage) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("request is not a JSON object")
	}
	return obj, nil
}

// encodeObject writes obj without HTML escaping: the messages reach the
// chat template byte for byte either way, but the bodies stay readable.
func encodeObject(obj map[string]json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("parity: marshal %T: %v", v, err))
	}
	return b
}
