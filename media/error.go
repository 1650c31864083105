package media

import (
	"errors"
	"net/http"
)

// Kind names what went wrong, for logs and metrics: an Error's Message may
// quote the client's URL (as vLLM's messages do) and must not be logged.
type Kind uint8

const (
	KindScheme           Kind = iota + 1 // not a data, http(s) or file URL
	KindDataURL                          // a data: URL vLLM cannot read
	KindDataURLEncoding                  // a data: URL whose encoding is not base64
	KindDomain                           // a host outside --allowed-media-domains
	KindPrivateAddress                   // a dial to a non-public address
	KindInvalidURL                       // an http(s) URL (or redirect) that cannot be fetched
	KindHTTPStatus                       // the media server answered an error status
	KindTooManyRedirects                 // more redirects than vLLM's client follows
	KindTooLarge                         // more than --max-media-bytes
	KindTimeout                          // every attempt timed out
	KindConnection                       // every attempt failed to connect or read
	KindLocalDisabled                    // a file: URL without --allowed-local-media-path
	KindLocalPath                        // a file: URL outside --allowed-local-media-path
	KindLocalRead                        // a file: URL that cannot be read
	KindCanceled                         // the caller's context ended first
)

var kindNames = [...]string{
	KindScheme: "scheme", KindDataURL: "data_url", KindDataURLEncoding: "data_url_encoding",
	KindDomain: "domain", KindPrivateAddress: "private_address", KindInvalidURL: "invalid_url",
	KindHTTPStatus: "http_status", KindTooManyRedirects: "too_many_redirects", KindTooLarge: "too_large",
	KindTimeout: "timeout", KindConnection: "connection", KindLocalDisabled: "local_disabled",
	KindLocalPath: "local_path", KindLocalRead: "local_read", KindCanceled: "canceled",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Error is a fetch failure in the shape of vLLM's error answer: Status and
// Type are what vLLM's create_error_response gives the Python exception it
// raises, Param is set where vLLM sets it, Message is the client-facing text.
type Error struct {
	Kind    Kind
	Status  int    // HTTP status of the answer
	Type    string // BadRequestError, UnprocessableEntityError, NotImplementedError, InternalServerError
	Param   string // "image_url" where vLLM names it, else empty
	Message string
	cause   error
	retry   bool // vLLM would try again (a timeout, connection failure or 5xx)
}

func (e *Error) Error() string { return e.Message }

// Unwrap gives the underlying error (a context error for KindCanceled and
// KindTimeout, a net error for KindConnection), for errors.Is.
func (e *Error) Unwrap() error { return e.cause }

// Error types of vLLM's create_error_response, by status.
const (
	typeBadRequest    = "BadRequestError"
	typeUnprocessable = "UnprocessableEntityError"
	typeNotImpl       = "NotImplementedError"
	typeInternal      = "InternalServerError"
)

// badRequest is vLLM's answer to a ValueError: 400, no param.
func badRequest(k Kind, msg string) *Error {
	return &Error{Kind: k, Status: http.StatusBadRequest, Type: typeBadRequest, Message: msg}
}

// unprocessable is VLLMUnprocessableEntityError(msg, parameter="image_url",
// value=url): its str() appends the parameter and the URL.
func unprocessable(k Kind, msg, url string) *Error {
	return &Error{Kind: k, Status: http.StatusUnprocessableEntity, Type: typeUnprocessable, Param: "image_url",
		Message: msg + " (parameter=image_url, value=" + url + ")"}
}

// internal is vLLM's answer to an exception it does not classify
// (RuntimeError, OSError, aiohttp's errors): 500.
func internal(k Kind, msg string, cause error) *Error {
	return &Error{Kind: k, Status: http.StatusInternalServerError, Type: typeInternal, Message: msg, cause: cause}
}

// AsError returns err's *Error, if it has one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
