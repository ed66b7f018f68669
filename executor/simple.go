package executor

import (
	"encoding/json"
	"reflect"

	"github.com/stepgate/stepgate/internal/jsonfast"
)

// simpleInput checks and decodes the arguments of a tool whose input is a
// flat struct with a plain schema — an object of string, boolean, integer and
// number properties, some required, no others allowed, and no further
// constraints. For such a schema, "every required key is there, no value is
// null, and the flat decoder takes the rest" is the schema's own verdict, so
// the general validator is not needed on the hot path. Anything it declines
// goes the general way (validator, then decoder), which also words the error.
// TestSimpleInputAgreesWithSchema holds the two to the same verdicts.
type simpleInput struct {
	flat     *flatDecoder
	required []string
	// requiredBits has bit i set for the required field with index i;
	// direct says every field index fits in it (see decodeBytes).
	requiredBits uint64
	direct       bool
}

// newSimpleInput returns the fast path for a tool, or nil when its schema
// says more than the flat decoder checks.
func newSimpleInput(schema json.RawMessage, flat *flatDecoder) *simpleInput {
	if flat == nil {
		return nil
	}
	var s struct {
		Schema     string                     `json:"$schema"`
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Additional *bool                      `json:"additionalProperties"`
	}
	if !onlyKeys(schema, "$schema", "type", "properties", "required", "additionalProperties", "description", "title") ||
		json.Unmarshal(schema, &s) != nil ||
		s.Type != "object" || s.Additional == nil || *s.Additional || len(s.Properties) != len(flat.fields) {
		return nil
	}
	for name, raw := range s.Properties {
		f, ok := flat.fields[name]
		var p struct {
			Type string `json:"type"`
		}
		if !ok || !onlyKeys(raw, "type", "description", "title") || json.Unmarshal(raw, &p) != nil || p.Type != schemaType(f.kind) {
			return nil
		}
	}
	for _, r := range s.Required {
		if _, ok := flat.fields[r]; !ok {
			return nil
		}
	}
	in := &simpleInput{flat: flat, required: s.Required, direct: true}
	for _, f := range flat.fields {
		in.direct = in.direct && f.index < 64
	}
	if in.direct {
		for _, r := range s.Required {
			in.requiredBits |= 1 << flat.fields[r].index
		}
	}
	return in
}

// onlyKeys reports whether raw is an object with no keys but allowed.
func onlyKeys(raw json.RawMessage, allowed ...string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	for k := range m {
		found := false
		for _, a := range allowed {
			found = found || k == a
		}
		if !found {
			return false
		}
	}
	return true
}

// schemaType is the JSON Schema type For derives for a field kind.
func schemaType(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		return "integer"
	}
}

// decode fills dst from doc when the schema would accept doc; false means
// "validate and decode the general way".
func (s *simpleInput) decode(doc any, dst reflect.Value) bool {
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	for _, r := range s.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for _, v := range m {
		if v == nil {
			return false // every property has a type, and null is none of them
		}
	}
	return s.flat.decode(doc, dst)
}

// decodeBytes is decode straight from the arguments' text, without building
// the generic document: for the usual arguments — one object of string,
// boolean and number values, each key once and spelled as a field — it
// gives what parsing and decode give. Anything else (null, a nested value,
// a key twice or escaped, a key that is no field, text after the object) it
// declines, and the caller goes the general way, which also words the
// error. FuzzSimpleDecodeBytes holds it to parse-then-decode.
func (s *simpleInput) decodeBytes(raw []byte, dst reflect.Value) bool {
	if !s.direct {
		return false
	}
	p := jsonfast.NewScanner(raw)
	empty, ok := p.Object()
	v := dst.Elem()
	var seen uint64
	for done := empty; ok && !done; done, ok = p.MemberEnd() {
		key, ok := p.Member()
		if !ok {
			return false
		}
		f, ok := s.flat.fields[string(key)]
		if !ok || seen&(1<<f.index) != 0 {
			return false
		}
		seen |= 1 << f.index
		val, ok := p.Scalar()
		if !ok || !f.set(v, val) {
			return false
		}
	}
	return ok && p.End() && seen&s.requiredBits == s.requiredBits
}
