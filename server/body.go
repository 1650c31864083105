package server

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/vrender/vrender/protocol"
)

// readJSONBody reads a POST body with vLLM's checks, in FastAPI's order:
//  1. a non-empty body whose Content-Type is absent or JSON-like is parsed
//     by json.loads: a syntax error is a "json_invalid" validation error;
//  2. validate_json_request: the media type must be exactly
//     application/json, else a 400 "Unsupported Media Type";
//  3. the caller validates the fields (an empty body is "missing").
//
// The body is bounded by the server's limit (413 beyond it).
func (s *server) readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, s.tooLarge(tooBig.Limit)
		}
		return nil, httpError(http.StatusBadRequest, protocol.ErrBodyNotParsable.Error())
	}
	if s.logRequests {
		// --enable-log-requests: the body, as vLLM logs prompts; headers
		// (and so keys) never.
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request body",
			slog.String("request_id", requestIDFrom(r.Context())), slog.String("path", r.URL.Path),
			slog.String("body", string(body)))
	}
	contentType := r.Header.Get("Content-Type")
	if len(body) > 0 && parsesAsJSON(contentType) {
		body, err = protocol.ParseJSONBody(body)
		var syn *protocol.JSONSyntaxError
		switch {
		case errors.As(err, &syn):
			return nil, validationError(&protocol.ValidationError{Errors: []protocol.FieldError{syn.FieldError()}})
		case err != nil:
			return nil, httpError(http.StatusBadRequest, err.Error())
		}
	}
	mediaType, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	if mediaType != "application/json" {
		return nil, &apiError{http.StatusBadRequest, protocol.NewUnsupportedMediaTypeResponse()}
	}
	return body, nil
}

// parsesAsJSON reports whether FastAPI would json.loads a body sent with
// this Content-Type: when there is none, or application/json or
// application/*+json (parameters and case ignored).
func parsesAsJSON(contentType string) bool {
	if strings.TrimSpace(contentType) == "" {
		return true
	}
	mediaType, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	mediaType = strings.TrimSpace(mediaType)
	sub, ok := strings.CutPrefix(mediaType, "application/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}
