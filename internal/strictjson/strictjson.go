// Package strictjson decodes JSON the way every Stepgate input is decoded
// where a typo must not pass silently: one JSON value, no field the target
// does not have.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// ErrTrailing means the input held more than one JSON value.
var ErrTrailing = errors.New("more than one JSON value")

// Decode decodes data into v: exactly one JSON value (surrounding white
// space aside) whose object fields all exist in v. The error is the JSON
// decoder's, or ErrTrailing.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ErrTrailing
	}
	return nil
}
