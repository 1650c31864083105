package fleet

import (
	"cmp"
	"errors"
	"net/http"

	"github.com/vrender/vrender/orchestrator/engine"
)

// Error is a request the pools could not place or complete for a
// reason of their own: no engine admitted, or one side of a P/D request
// failed. Status and Type are the HTTP answer's; Message is the client's.
type Error struct {
	Status  int
	Type    string
	Message string
}

func (e *Error) Error() string { return http.StatusText(e.Status) + ": " + e.Message }

// sideError names the failing side of a P/D request in the client's
// error; the caller's own cancellation passes through unchanged.
func sideError(role string, err error) error {
	var ee *engine.Error
	var pe *Error
	switch {
	case errors.As(err, &ee):
		return &Error{Status: ee.Status, Type: cmp.Or(ee.Type, http.StatusText(ee.Status)),
			Message: role + " engine: " + ee.Message}
	case errors.As(err, &pe):
		return pe
	}
	return err
}
