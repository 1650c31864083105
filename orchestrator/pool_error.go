package orchestrator

import (
	"cmp"
	"errors"
	"net/http"

	"github.com/vrender/vrender/orchestrator/engine"
)

// poolError is a request the pools could not place or complete for a
// reason of their own: no engine admitted, or one side of a P/D request
// failed. Status and Type are the HTTP answer's; Message is the client's.
type poolError struct {
	Status  int
	Type    string
	Message string
}

func (e *poolError) Error() string { return http.StatusText(e.Status) + ": " + e.Message }

// sideError names the failing side of a P/D request in the client's
// error; the caller's own cancellation passes through unchanged.
func sideError(role string, err error) error {
	var ee *engine.Error
	var pe *poolError
	switch {
	case errors.As(err, &ee):
		return &poolError{Status: ee.Status, Type: cmp.Or(ee.Type, http.StatusText(ee.Status)),
			Message: role + " engine: " + ee.Message}
	case errors.As(err, &pe):
		return pe
	}
	return err
}
