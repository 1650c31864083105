package protocol

import (
	"net/http"

	"github.com/vrender/vrender/internal/pylax"
)

// ErrorInfo is the "error" member of every error body.
type ErrorInfo struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

// ErrorResponse is vLLM's error body: {"error":{"message","type","param","code"}}.
type ErrorResponse struct {
	Error ErrorInfo `json:"error"`
}

// Error types vLLM's create_error_response assigns by exception class.
const (
	ErrorTypeBadRequest     = "BadRequestError"     // ValueError, VLLMValidationError, template errors: 400
	ErrorTypeNotFound       = "NotFoundError"       // unknown model: 404
	ErrorTypeNotImplemented = "NotImplementedError" // 501
	ErrorTypeInternal       = "InternalServerError" // anything else: 500
)

// NewErrorResponse builds an error body; the message is sanitised as vLLM
// sanitises every error message.
func NewErrorResponse(code int, errType, message string, param *string) ErrorResponse {
	return ErrorResponse{Error: ErrorInfo{
		Message: pylax.SanitizeMessage(message),
		Type:    errType,
		Param:   param,
		Code:    code,
	}}
}

// NewHTTPErrorResponse is the body vLLM's HTTPException handler writes
// (unknown route, wrong method, unparsable body): the type is the status
// phrase.
func NewHTTPErrorResponse(code int, detail string) ErrorResponse {
	return NewErrorResponse(code, http.StatusText(code), detail, nil)
}

// NewValidationErrorResponse is the 400 body vLLM's validation handler
// writes for a request body that failed validation.
func NewValidationErrorResponse(err *pylax.ValidationError) ErrorResponse {
	return ErrorResponse{Error: ErrorInfo{
		Message: err.Message(),
		Type:    http.StatusText(http.StatusBadRequest),
		Param:   err.Param(),
		Code:    http.StatusBadRequest,
	}}
}

// unsupportedMediaType is the one error vLLM raises as a bare string rather
// than a pydantic error dict, so its message has no dict repr.
const unsupportedMediaType = "Unsupported Media Type: Only 'application/json' is allowed"

// NewUnsupportedMediaTypeResponse is vLLM's 400 for a POST whose
// Content-Type is not application/json (validate_json_request).
func NewUnsupportedMediaTypeResponse() ErrorResponse {
	return ErrorResponse{Error: ErrorInfo{
		Message: "1 validation error:\n  " + unsupportedMediaType,
		Type:    http.StatusText(http.StatusBadRequest),
		Code:    http.StatusBadRequest,
	}}
}
