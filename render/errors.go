package render

import (
	"errors"
	"fmt"

	"github.com/vrender/vrender/render/jinja"
)

// BadRequestError is a request vLLM would refuse with 400 BadRequestError.
// Message is the text vLLM puts in the error body; Param names the offending
// request field when vLLM names one.
type BadRequestError struct {
	Message string
	Param   string
	// Err is the underlying cause (a *jinja.TemplateError for template
	// failures), kept for errors.As.
	Err error
}

func (e *BadRequestError) Error() string { return e.Message }

func (e *BadRequestError) Unwrap() error { return e.Err }

func badRequest(format string, a ...any) *BadRequestError {
	return &BadRequestError{Message: fmt.Sprintf(format, a...)}
}

func badParam(param, format string, a ...any) *BadRequestError {
	return &BadRequestError{Message: fmt.Sprintf(format, a...), Param: param}
}

// templateError maps a Jinja failure to the 400 vLLM answers: vLLM wraps
// whatever apply_chat_template raises in ValueError(str(e)), and str() of a
// Jinja2 exception is its message alone.
func templateError(err error) error {
	var te *jinja.TemplateError
	if errors.As(err, &te) {
		return &BadRequestError{Message: te.Message, Err: err}
	}
	return err
}

// errMultimodal is vrender's answer to image, audio and video parts until
// multimodal input is supported.
const errMultimodal = "multimodal input is not supported"
