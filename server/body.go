package server

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
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
	body, _, e := s.readBody(w, r, false)
	return body, e
}

// readJSONTree is readJSONBody that also decodes the body, in the pass
// that checks its syntax. The tree is nil for an empty body.
func (s *server) readJSONTree(w http.ResponseWriter, r *http.Request) ([]byte, *wire.Node, *apiError) {
	return s.readBody(w, r, true)
}

func (s *server) readBody(w http.ResponseWriter, r *http.Request, decode bool) ([]byte, *wire.Node, *apiError) {
	body, err := readAll(http.MaxBytesReader(w, r.Body, s.maxBodyBytes), min(r.ContentLength, s.maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, nil, s.tooLarge(tooBig.Limit)
		}
		return nil, nil, httpError(http.StatusBadRequest, protocol.ErrBodyNotParsable.Error())
	}
	if s.logRequests {
		// --enable-log-requests: the body, as vLLM logs prompts; headers
		// (and so keys) never.
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request body",
			slog.String("request_id", requestIDFrom(r.Context())), slog.String("path", r.URL.Path),
			slog.String("body", string(body)))
	}
	contentType := r.Header.Get("Content-Type")
	var tree *wire.Node
	if len(body) > 0 && parsesAsJSON(contentType) {
		if decode {
			body, tree, err = protocol.ParseJSONTree(body)
		} else {
			body, err = protocol.ParseJSONBody(body)
		}
		var syn *protocol.JSONSyntaxError
		switch {
		case errors.As(err, &syn):
			return nil, nil, validationError(&pylax.ValidationError{Errors: []pylax.FieldError{syn.FieldError()}})
		case err != nil:
			return nil, nil, httpError(http.StatusBadRequest, err.Error())
		}
	}
	mediaType, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	if mediaType != "application/json" {
		return nil, nil, &apiError{http.StatusBadRequest, protocol.NewUnsupportedMediaTypeResponse()}
	}
	return body, tree, nil
}

// readAll is io.ReadAll sized by the declared length (when there is one
// and it is sane), so a large body is read into one buffer instead of a
// series of doubling copies.
func readAll(r io.Reader, declared int64) ([]byte, error) {
	const maxPrealloc = 64 << 20
	if declared <= 0 || declared > maxPrealloc {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, declared+1) // +1: EOF is seen without growing
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // the client sent more than it declared
		}
	}
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
