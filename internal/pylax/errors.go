package pylax

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// FieldError is one pydantic validation error: what failed (Type, Msg), where
// (Loc: field names and list indices inside the request body) and on which
// value (Input, the raw JSON; nil stands for Python's None).
type FieldError struct {
	Type  string
	Loc   []any // string field names and int list indices
	Msg   string
	Input json.RawMessage
	Ctx   []CtxEntry
}

// CtxEntry is one key of a pydantic error's ctx dict, kept in order. Value
// is a string, an int, an int64, a *big.Int, a float64 or a PyException.
type CtxEntry struct {
	Key   string
	Value any
}

// PyException stands for an exception object pydantic keeps in ctx["error"]
// when a validator raised; vLLM reads Parameter from VLLMValidationError.
type PyException struct {
	Class     string
	Message   string
	Parameter *string
}

// ValidationError is a request body that failed validation. It reads as
// vLLM's 400 "Bad Request" error: Message and Param give the error body's
// fields, with locations rooted at "body" as FastAPI reports them.
type ValidationError struct {
	Errors []FieldError
	// Omitted counts errors after the first maxReportedErrors that were
	// counted, not built (a union's refusal of thousands of list items):
	// the message shows only the first ones and the total.
	Omitted int
}

func (e *ValidationError) Error() string { return e.Message() }

// Message renders the errors as vLLM's validation exception handler does:
// a count line, then at most ten errors, each Python's str() of the error
// dict (input summarised, loc joined with dots, cut at 1000 characters).
func (e *ValidationError) Message() string {
	if len(e.Errors) == 0 {
		return "Validation error"
	}
	total := len(e.Errors) + e.Omitted
	label := "errors"
	if total == 1 {
		label = "error"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d validation %s:\n", total, label)
	reported := e.Errors
	if len(reported) > MaxReportedErrors {
		reported = reported[:MaxReportedErrors]
	}
	for _, fe := range reported {
		b.WriteString("  ")
		b.WriteString(truncateChars(fe.Repr(), maxErrorChars, "...[truncated]"))
		b.WriteByte('\n')
	}
	if rest := total - len(reported); rest > 0 {
		fmt.Fprintf(&b, "  ...and %d more %s\n", rest, label)
	}
	return SanitizeMessage(strings.TrimRight(b.String(), " \t\n\r\v\f"))
}

// Param is the error body's "param": the parameter of the first
// VLLMValidationError raised by a validator if there is one, else the
// dotted location of the first error.
func (e *ValidationError) Param() *string {
	if p := e.validatorParam(); p != nil {
		return p
	}
	if len(e.Errors) == 0 {
		return nil
	}
	p := e.Errors[0].Path()
	return &p
}

// validatorParam is the parameter of the first VLLMValidationError found in
// an error's ctx; vLLM stops at that error even when its parameter is None.
func (e *ValidationError) validatorParam() *string {
	for _, fe := range e.Errors {
		for _, c := range fe.Ctx {
			if ex, ok := c.Value.(PyException); ok && c.Key == "error" && ex.Class == "VLLMValidationError" {
				return ex.Parameter
			}
		}
	}
	return nil
}

// Path is the error's location as vLLM's param shows it: "body", then each
// field name or list index, joined with dots.
func (fe FieldError) Path() string {
	parts := make([]string, 0, len(fe.Loc)+1)
	parts = append(parts, "body")
	for _, p := range fe.Loc {
		parts = append(parts, fmt.Sprint(p))
	}
	return strings.Join(parts, ".")
}

// Repr is Python's str() of the error dict after vLLM's clean-up: keys in
// pydantic's order, input summarised, loc replaced by the dotted path.
func (fe FieldError) Repr() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{'type': %s, 'loc': %s, 'msg': %s, 'input': %s",
		StrRepr(fe.Type), StrRepr(fe.Path()), StrRepr(fe.Msg), StrRepr(summarizeInput(fe.Input)))
	if len(fe.Ctx) > 0 {
		b.WriteString(", 'ctx': {")
		for i, c := range fe.Ctx {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(StrRepr(c.Key))
			b.WriteString(": ")
			b.WriteString(ctxValueRepr(c.Value))
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.String()
}

func ctxValueRepr(v any) string {
	switch v := v.(type) {
	case string:
		return StrRepr(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case *big.Int:
		return v.String()
	case float64:
		return FloatStr(v)
	case PyException:
		return v.Class + "(" + StrRepr(v.Message) + ")"
	default:
		return StrRepr(fmt.Sprint(v))
	}
}

// ValidatorError is the error pydantic reports when a model validator
// raises VLLMValidationError (class "VLLMValidationError", param may be "")
// or a plain ValueError (class "ValueError").
func (o *Object) ValidatorError(class, msg, param, value string) *FieldError {
	ex := PyException{Class: class, Message: msg}
	text := msg
	var extras []string
	if param != "" {
		ex.Parameter = &param
		extras = append(extras, "parameter="+param)
	}
	if value != "" {
		extras = append(extras, "value="+value)
	}
	if len(extras) > 0 {
		text += " ("
		for i, x := range extras {
			if i > 0 {
				text += ", "
			}
			text += x
		}
		text += ")"
	}
	return &FieldError{
		Type:  "value_error",
		Msg:   "Value error, " + text,
		Input: o.Raw,
		Ctx:   []CtxEntry{{Key: "error", Value: ex}},
	}
}
