package events

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/internal/jsonfast"
)

// AppendPayload appends e's payload as JSON: the "data" of its stored form,
// as encoding/json writes e. The payloads of every step are written without
// reflection. Bytes that are not JSON in a raw field give an error wrapping
// [ErrMalformed].
func AppendPayload(dst []byte, e Event) ([]byte, error) {
	w := jsonfast.NewWriter(dst)
	WritePayload(&w, e)
	return bytesOf(&w)
}

// bytesOf returns w's buffer, its error wrapping [ErrMalformed] when a raw
// value was not JSON.
func bytesOf(w *jsonfast.Writer) ([]byte, error) {
	b, err := w.Bytes()
	if errors.Is(err, jsonfast.ErrInvalid) && !errors.Is(err, ErrMalformed) {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return b, err
}

// WritePayload writes e's payload, as [AppendPayload] appends it, as the
// next value of w; a failure is recorded in w.
func WritePayload(w *jsonfast.Writer, e Event) {
	switch e := e.(type) {
	case nil:
		w.Fail(fmt.Errorf("encode a nil event: %w", ErrMalformed))
	case Unknown:
		w.RawValue(e.Data)
	// Each hot payload by its type, not through an interface: a method
	// called through one makes w escape, and every commit would allocate it.
	case ToolCallRequested:
		e.writeJSON(w)
	case PermissionDecided:
		e.writeJSON(w)
	case ToolCallStarted:
		e.writeJSON(w)
	case ToolResultRecorded:
		e.writeJSON(w)
	case StepFinalized:
		e.writeJSON(w)
	default:
		data, err := json.Marshal(e)
		if err != nil {
			w.Fail(fmt.Errorf("encode event %s: %w", e.EventType(), err))
			return
		}
		w.RawValue(data)
	}
}
