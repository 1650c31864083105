package jinja

import "fmt"

// ErrorKind classifies a TemplateError for callers that do not care about the
// exact Python exception class.
type ErrorKind int

const (
	// KindSyntax is a template that does not compile (TemplateSyntaxError).
	KindSyntax ErrorKind = iota + 1
	// KindUndefined is an operation on an undefined value (UndefinedError).
	KindUndefined
	// KindType covers Python's TypeError, ValueError, KeyError, IndexError,
	// ZeroDivisionError, OverflowError and friends.
	KindType
	// KindSecurity is an operation the immutable sandbox refuses (SecurityError).
	KindSecurity
	// KindRaised is raise_exception() called by the template (TemplateError).
	KindRaised
	// KindLimit is a render stopped by Limits or by its context.
	KindLimit
)

func (k ErrorKind) String() string {
	switch k {
	case KindSyntax:
		return "syntax"
	case KindUndefined:
		return "undefined"
	case KindType:
		return "type"
	case KindSecurity:
		return "security"
	case KindRaised:
		return "raised"
	case KindLimit:
		return "limit"
	}
	return "unknown"
}

// TemplateError is every error Compile and Render return.
type TemplateError struct {
	Kind ErrorKind
	// PyType is the name of the exception class Jinja2 would raise, e.g.
	// "UndefinedError", "TypeError", "TemplateSyntaxError".
	PyType string
	// Message is str(exception) as Python prints it.
	Message string
	// Line is the 1-based template line, when known (0 otherwise).
	Line int
}

func (e *TemplateError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: %s (line %d)", e.PyType, e.Message, e.Line)
	}
	return e.PyType + ": " + e.Message
}

func newErr(kind ErrorKind, pyType, msg string) *TemplateError {
	return &TemplateError{Kind: kind, PyType: pyType, Message: msg}
}

func typeErr(format string, a ...any) *TemplateError {
	return newErr(KindType, "TypeError", fmt.Sprintf(format, a...))
}

func valueErr(format string, a ...any) *TemplateError {
	return newErr(KindType, "ValueError", fmt.Sprintf(format, a...))
}

func syntaxErr(line int, format string, a ...any) *TemplateError {
	e := newErr(KindSyntax, "TemplateSyntaxError", fmt.Sprintf(format, a...))
	e.Line = line
	return e
}

func runtimeErr(format string, a ...any) *TemplateError {
	return newErr(KindType, "TemplateRuntimeError", fmt.Sprintf(format, a...))
}

func limitErr(format string, a ...any) *TemplateError {
	return newErr(KindLimit, "LimitExceeded", fmt.Sprintf(format, a...))
}
