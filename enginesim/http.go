package enginesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// maxBodyBytes bounds a request body: a 1M-token prompt is under 8 MiB of
// JSON, so this is generous.
const maxBodyBytes = 64 << 20

// apiError is an error response ready to write.
type apiError struct {
	status int
	body   protocol.ErrorResponse
}

func badRequest(msg string) *apiError {
	return &apiError{http.StatusBadRequest, protocol.NewErrorResponse(http.StatusBadRequest, protocol.ErrorTypeBadRequest, msg, nil)}
}

func httpError(status int, detail string) *apiError {
	return &apiError{status, protocol.NewHTTPErrorResponse(status, detail)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := protocol.MarshalJSON(v)
	if err != nil { // only our own types are written; they always marshal
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, body protocol.ErrorResponse) {
	writeJSON(w, status, body)
}

func (e *apiError) write(w http.ResponseWriter) { writeError(w, e.status, e.body) }

// readJSONBody reads a POST body with vLLM's checks in FastAPI's order: a
// JSON-typed (or untyped) body must parse, then the media type must be
// exactly application/json. It returns the body's tree too (nil for an
// empty body), made in the same pass: the request, and the features of one
// with pictures, are decoded from it rather than scanned again.
func readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, *wire.Node, *apiError) {
	body, err := readBody(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, nil, httpError(http.StatusRequestEntityTooLarge,
				fmt.Sprintf("Request body is larger than the limit of %d bytes", tooBig.Limit))
		}
		return nil, nil, httpError(http.StatusBadRequest, protocol.ErrBodyNotParsable.Error())
	}
	contentType := r.Header.Get("Content-Type")
	mediaType, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	mediaType = strings.TrimSpace(mediaType)
	sub, isApp := strings.CutPrefix(mediaType, "application/")
	var root *wire.Node
	if len(body) > 0 && (mediaType == "" || isApp && (sub == "json" || strings.HasSuffix(sub, "+json"))) {
		body, root, err = protocol.ParseJSONTree(body)
		var syn *protocol.JSONSyntaxError
		switch {
		case errors.As(err, &syn):
			ve := &pylax.ValidationError{Errors: []pylax.FieldError{syn.FieldError()}}
			return nil, nil, &apiError{http.StatusBadRequest, protocol.NewValidationErrorResponse(ve)}
		case err != nil:
			return nil, nil, httpError(http.StatusBadRequest, err.Error())
		}
	}
	if mediaType != "application/json" {
		return nil, nil, &apiError{http.StatusBadRequest, protocol.NewUnsupportedMediaTypeResponse()}
	}
	return body, root, nil
}

// readBody reads a body of at most maxBodyBytes. One of a stated length is
// read into a buffer of that length: a request carrying pictures is
// megabytes, which io.ReadAll would copy as it doubled its buffer.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	n := r.ContentLength
	if n <= 0 || n > maxBodyBytes {
		return io.ReadAll(body)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(body, b); err != nil {
		return nil, err
	}
	return b, nil
}

// handleAbort is POST /inference/v1/abort_requests (and the legacy
// /abort_requests): {"request_ids": [...]} -> empty 200. vLLM aborts in the
// background; here the running streams are told at once.
func (s *Sim) handleAbort(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		httpError(http.StatusBadRequest, protocol.ErrBodyNotParsable.Error()).write(w)
		return
	}
	var payload map[string]json.RawMessage
	if err := json.Unmarshal(body, &payload); err != nil {
		httpError(http.StatusBadRequest, "JSON decode error: "+err.Error()).write(w)
		return
	}
	raw, ok := payload["request_ids"]
	if !ok || string(raw) == "null" {
		httpError(http.StatusBadRequest, "Missing 'request_ids' in request body").write(w)
		return
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		// vLLM hands anything to engine.abort, which accepts a str or an
		// iterable of them.
		var one string
		if json.Unmarshal(raw, &one) != nil {
			badRequest("request_ids must be a string or a list of strings").write(w)
			return
		}
		ids = []string{one}
	}
	s.abort(ids)
	s.log.Debug("enginesim: abort", "request_ids", ids)
	w.WriteHeader(http.StatusOK)
}
