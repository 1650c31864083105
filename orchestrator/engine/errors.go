package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is an engine failure, classified by the status vrender should
// answer its own OpenAI client with.
type Error struct {
	// Status is the HTTP status for vrender's client: the engine's 4xx
	// passed through as 400 (404 stays 404), 502 for an engine 5xx or a
	// protocol violation, 503 when the engine is unreachable or
	// overloaded, 504 when it stopped sending within the timeouts.
	Status int
	// Type is the OpenAI error type: the engine's own for a passed-through
	// 4xx, else the status phrase (as vLLM's HTTPException handler names
	// it).
	Type string
	// Message says what happened, with the engine's own message when it
	// sent one.
	Message string
	// EngineStatus is the status code the engine answered with (or the
	// code of its in-stream error event); 0 when it never answered.
	EngineStatus int
	// Temporary is set when the same request may succeed if tried again
	// (unreachable or overloaded engine), and only then.
	Temporary bool

	cause error
}

func (e *Error) Error() string {
	if e.EngineStatus != 0 {
		return fmt.Sprintf("engine error %d (engine status %d): %s", e.Status, e.EngineStatus, e.Message)
	}
	return fmt.Sprintf("engine error %d: %s", e.Status, e.Message)
}

// Unwrap gives the underlying transport error, if any.
func (e *Error) Unwrap() error { return e.cause }

// Type names for statuses vLLM has no exception class for: the status
// phrase, as vLLM's HTTPException handler writes it.
var (
	typeBadGateway         = http.StatusText(http.StatusBadGateway)
	typeServiceUnavailable = http.StatusText(http.StatusServiceUnavailable)
	typeGatewayTimeout     = http.StatusText(http.StatusGatewayTimeout)
)

const (
	typeBadRequest = "BadRequestError"
	typeNotFound   = "NotFoundError"
)

func badGateway(cause error, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadGateway, Type: typeBadGateway, Message: fmt.Sprintf(format, args...), cause: cause}
}

func unavailable(cause error, format string, args ...any) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Type: typeServiceUnavailable,
		Message: fmt.Sprintf(format, args...), Temporary: true, cause: cause}
}

func gatewayTimeout(format string, args ...any) *Error {
	return &Error{Status: http.StatusGatewayTimeout, Type: typeGatewayTimeout, Message: fmt.Sprintf(format, args...)}
}

// errClosedBeforeDone is the message of a stream that ended without its
// [DONE] terminator: the engine crashed or a proxy cut the connection.
const errClosedBeforeDone = "engine closed the stream before [DONE]"

// engineErrorBody is what an engine error body may hold: vLLM's
// {"error":{message,type,param,code}}, the API-key middleware's
// {"error":"Unauthorized"}, or FastAPI's {"detail": str | [...]}.
type engineErrorBody struct {
	Error  json.RawMessage `json:"error"`
	Detail json.RawMessage `json:"detail"`
}

type engineErrorInfo struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parsedError is an engine error body reduced to what the mapping needs.
type parsedError struct {
	message, typ string
	code         int // the code member, 0 when absent or not a number
}

// maxErrorMessage bounds how much of an engine's error text is repeated to
// the client.
const maxErrorMessage = 2048

// parseErrorBody extracts the message, type and code of an engine error
// body of any of the shapes engines and proxies send; a body that is not
// JSON becomes the message as it is.
func parseErrorBody(body []byte) parsedError {
	body = bytes.TrimSpace(body)
	var env engineErrorBody
	if json.Unmarshal(body, &env) == nil {
		if p, ok := parseErrorMember(env.Error); ok {
			return p
		}
		if msg, ok := detailMessage(env.Detail); ok {
			return parsedError{message: truncate(msg)}
		}
	}
	return parsedError{message: truncate(string(body))}
}

func parseErrorMember(raw json.RawMessage) (parsedError, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return parsedError{}, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return parsedError{message: truncate(s)}, true
	}
	var info engineErrorInfo
	if json.Unmarshal(raw, &info) != nil {
		return parsedError{}, false
	}
	p := parsedError{message: truncate(info.Message), typ: info.Type}
	// vLLM writes code as an int; some proxies as a string.
	code := strings.Trim(string(info.Code), `"`)
	if n, err := strconv.Atoi(code); err == nil {
		p.code = n
	}
	return p, true
}

// detailMessage renders FastAPI's detail: a string, or a validation list
// whose "msg" members are joined.
func detailMessage(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var list []struct {
		Msg string `json:"msg"`
		Loc []any  `json:"loc"`
	}
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		parts := make([]string, 0, len(list))
		for _, d := range list {
			if len(d.Loc) > 0 {
				parts = append(parts, fmt.Sprintf("%v: %s", d.Loc, d.Msg))
			} else {
				parts = append(parts, d.Msg)
			}
		}
		return strings.Join(parts, "; "), true
	}
	return string(raw), true
}

func truncate(s string) string {
	if len(s) <= maxErrorMessage {
		return s
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// statusError maps an engine's non-200 answer to the error vrender's
// client sees.
func statusError(engineStatus int, body []byte) *Error {
	p := parseErrorBody(body)
	msg := p.message
	if msg == "" {
		msg = http.StatusText(engineStatus)
	}
	return mapEngineError(engineStatus, p.typ, msg)
}

// mapEngineError is the one status mapping for HTTP answers and in-stream
// error events alike.
func mapEngineError(engineStatus int, engineType, msg string) *Error {
	e := &Error{EngineStatus: engineStatus, Message: msg}
	switch {
	case engineStatus == http.StatusNotFound:
		e.Status, e.Type = http.StatusNotFound, orDefault(engineType, typeNotFound)
	case engineStatus == http.StatusUnauthorized || engineStatus == http.StatusForbidden:
		// The engine refused vrender's credentials: a deployment fault, not
		// the client's, so it must not look like a bad request.
		e.Status, e.Type = http.StatusBadGateway, typeBadGateway
		e.Message = "engine refused vrender's credentials: " + msg
	case engineStatus == http.StatusTooManyRequests:
		e.Status, e.Type, e.Temporary = http.StatusServiceUnavailable, typeServiceUnavailable, true
	case engineStatus == http.StatusRequestTimeout:
		e.Status, e.Type = http.StatusGatewayTimeout, typeGatewayTimeout
	case engineStatus >= 400 && engineStatus < 500:
		e.Status, e.Type = http.StatusBadRequest, orDefault(engineType, typeBadRequest)
	case engineStatus == http.StatusServiceUnavailable:
		e.Status, e.Type, e.Temporary = http.StatusServiceUnavailable, typeServiceUnavailable, true
	case engineStatus == http.StatusGatewayTimeout:
		e.Status, e.Type = http.StatusGatewayTimeout, typeGatewayTimeout
	case engineStatus >= 300 && engineStatus < 400:
		e.Status, e.Type = http.StatusBadGateway, typeBadGateway
		e.Message = fmt.Sprintf("engine answered with a redirect (%d %s), which vrender does not follow",
			engineStatus, http.StatusText(engineStatus))
	default:
		// Other 5xx, and statuses an engine has no business sending.
		e.Status, e.Type = http.StatusBadGateway, typeBadGateway
	}
	return e
}

// eventError maps an in-stream error event. Its code is the status the
// engine would have answered with; without one the engine failed
// mid-generation, which is a bad gateway.
func eventError(data []byte) *Error {
	var env engineErrorBody
	if err := json.Unmarshal(data, &env); err != nil {
		return badGateway(err, "engine sent a malformed error event: %v", err)
	}
	p, ok := parseErrorMember(env.Error)
	if !ok {
		return badGateway(nil, "engine sent a malformed error event: %s", truncate(string(data)))
	}
	if p.message == "" {
		p.message = "engine reported an error without a message"
	}
	if p.code == 0 {
		e := mapEngineError(http.StatusInternalServerError, p.typ, p.message)
		e.EngineStatus = 0
		return e
	}
	return mapEngineError(p.code, p.typ, p.message)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
