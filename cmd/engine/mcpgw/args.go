package mcpgw

import (
	"bytes"
	"encoding/json"
)

// normalArgs is a call's arguments as submitted: absent or null arguments
// are the empty object.
func normalArgs(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}")
	}
	return raw
}

// canonical is v's JSON with object keys sorted and no insignificant
// space; numbers keep their text. ok is false when v is not one JSON value.
func canonical(v json.RawMessage) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(normalArgs(v)))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // more than one value
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, false
	}
	return b, true
}

// sameArgs reports whether two calls' arguments are the same JSON value
// (key order and spacing aside). Arguments that do not parse are the same
// only when byte for byte equal.
func sameArgs(a, b json.RawMessage) bool {
	ca, oka := canonical(a)
	cb, okb := canonical(b)
	if !oka || !okb {
		return !oka && !okb && bytes.Equal(a, b)
	}
	return bytes.Equal(ca, cb)
}
