package events

import (
	"encoding/json"
	"fmt"
)

// Encoders for other packages' hand-written JSON (the projection's
// checkpoint). Their output decodes with encoding/json to the value
// encoding/json's own output decodes to.

// AppendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendRaw appends raw, a JSON value, refusing bytes that are not JSON
// with an error wrapping [ErrMalformed]. Empty raw is written as null.
func AppendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(dst, "null"...), nil
	}
	if !validJSON(raw) {
		return nil, fmt.Errorf("raw value is not valid JSON: %w", ErrMalformed)
	}
	return append(dst, raw...), nil
}

// AppendPayload appends e's payload as JSON: the "data" of its stored form,
// as encoding/json writes e. The payloads of every step are written without
// reflection.
func AppendPayload(dst []byte, e Event) ([]byte, error) {
	switch e := e.(type) {
	case nil:
		return nil, fmt.Errorf("encode a nil event: %w", ErrMalformed)
	case Unknown:
		return AppendRaw(dst, e.Data)
	case appender:
		return e.appendJSON(dst)
	default:
		data, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encode event %s: %w", e.EventType(), err)
		}
		return append(dst, data...), nil
	}
}
