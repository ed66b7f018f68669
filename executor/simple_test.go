package executor

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/internal/jsonfast"
	"pgregory.net/rapid"
)

type simpleIn struct {
	S   string  `json:"s" jsonschema:"description=a string"`
	B   bool    `json:"b,omitempty"`
	I   int     `json:"i"`
	U16 uint16  `json:"u16,omitempty"`
	F64 float64 `json:"f64,omitempty"`
}

func TestNewSimpleInput(t *testing.T) {
	type withEnum struct {
		S string `json:"s" jsonschema:"enum=a,enum=b"`
	}
	type withMin struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	tests := []struct {
		why    string
		schema func() (json.RawMessage, reflect.Type)
		simple bool
	}{
		{"plain properties", schemaOf[simpleIn], true},
		{"an enum is a constraint the fast path does not check", schemaOf[withEnum], false},
		{"a minimum too", schemaOf[withMin], false},
	}
	for _, tt := range tests {
		raw, typ := tt.schema()
		if got := newSimpleInput(raw, newFlatDecoder(typ)) != nil; got != tt.simple {
			t.Errorf("%s: simple = %v, want %v", tt.why, got, tt.simple)
		}
	}
}

func schemaOf[In any]() (json.RawMessage, reflect.Type) {
	d, err := descriptor.For[In, string]("t", "test")
	if err != nil {
		panic(err)
	}
	return d.InputSchema, reflect.TypeFor[In]()
}

// Whatever the fast path accepts, the schema accepts and encoding/json
// decodes to the same value.
func TestSimpleInputAgreesWithSchema(t *testing.T) {
	raw, typ := schemaOf[simpleIn]()
	s := newSimpleInput(raw, newFlatDecoder(typ))
	if s == nil {
		t.Fatal("simpleIn has no fast path")
	}
	schema, err := descriptor.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"s", "b", "i", "u16", "f64"}
	values := []string{`"x"`, `true`, `null`, `0`, `-1`, `1.0`, `1e2`, `65535`, `65536`, `0.5`, `[]`, `{}`, `9223372036854775808`}
	rapid.Check(t, func(t *rapid.T) {
		doc := genObject(t, keys, []string{"S", "x"}, map[string][]string{
			"s": fitString, "b": fitBool, "i": fitInt, "u16": fitInt, "f64": fitFloat}, values)
		parsed, dups, ok := jsonfast.Parse([]byte(doc))
		if !ok || dups {
			return
		}
		var fast simpleIn
		if !s.decode(parsed, reflect.ValueOf(&fast)) {
			return
		}
		if err := schema.Validate(parsed); err != nil {
			t.Fatalf("%s: the fast path accepted what the schema refuses: %v", doc, err)
		}
		var want simpleIn
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("%s: the fast path accepted what encoding/json refuses: %v", doc, err)
		}
		if diff := cmp.Diff(want, fast); diff != "" {
			t.Fatalf("%s (-encoding/json +fast):\n%s", doc, diff)
		}
	})
}

// genObject draws a JSON object: each of keys present or not (most are),
// now and then one of rare; a key's value mostly fits its field
// (fitting[key]), sometimes is any of values.
func genObject(t *rapid.T, keys, rare []string, fitting map[string][]string, values []string) string {
	doc := "{"
	add := func(k string) {
		if len(doc) > 1 {
			doc += ","
		}
		pool := values
		if f := fitting[k]; len(f) > 0 && rapid.IntRange(0, 4).Draw(t, "misfit "+k) > 0 {
			pool = f
		}
		doc += `"` + k + `":` + rapid.SampledFrom(pool).Draw(t, "value of "+k)
	}
	for _, k := range keys {
		if rapid.IntRange(0, 3).Draw(t, "absent "+k) > 0 {
			add(k)
		}
	}
	if len(rare) > 0 && rapid.IntRange(0, 7).Draw(t, "rare") == 0 {
		add(rapid.SampledFrom(rare).Draw(t, "rare key"))
	}
	return doc + "}"
}

// Values that fit each kind of field, with the edge cases of each.
var (
	fitString = []string{`"x"`, `""`, `"é\n\u0000"`}
	fitBool   = []string{`true`, `false`}
	fitInt    = []string{`0`, `-1`, `127`, `128`, `-129`, `65535`, `65536`, `1.0`, `1e2`, `9223372036854775807`, `9223372036854775808`}
	fitFloat  = []string{`0`, `0.5`, `-1e-3`, `3.4e38`, `3.5e38`, `1e308`, `1`}
)

// Whatever decodeBytes accepts, parsing and decode accept too and give the
// same value; on the usual arguments it does accept.
func FuzzSimpleDecodeBytes(f *testing.F) {
	for _, s := range []string{`{"s":"x","i":1}`, ` {"s":"é\n","i":-1,"b":true,"u16":65535,"f64":1e2} `, `{"s":"x","i":1,"s":"y"}`,
		`{"s":null,"i":1}`, `{"s":"x","i":1.5}`, `{"s":"x","i":1,"x":{}}`, `{"\u0073":"x","i":1}`, `{"i":1}`, `{}`, `{"s":"x","i":1}x`,
		`{"s":"x","i":65536,"u16":65536}`, `{"s":"a\"b","i":0}`, `[]`, `{"s":"x","i":1,}`} {
		f.Add([]byte(s))
	}
	raw, typ := schemaOf[simpleIn]()
	s := newSimpleInput(raw, newFlatDecoder(typ))
	if s == nil || !s.direct {
		f.Fatal("simpleIn has no direct path")
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		var fast simpleIn
		if !s.decodeBytes(args, reflect.ValueOf(&fast)) {
			return
		}
		parsed, dups, ok := jsonfast.Parse(args)
		if !ok || dups {
			t.Fatalf("%q: decodeBytes accepted what the parser refuses (ok %v, dups %v)", args, ok, dups)
		}
		var slow simpleIn
		if !s.decode(parsed, reflect.ValueOf(&slow)) {
			t.Fatalf("%q: decodeBytes accepted what decode declines", args)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Fatalf("%q (-parse and decode +decodeBytes):\n%s", args, diff)
		}
	})
}

// The direct path takes the arguments a model usually sends.
func TestSimpleDecodeBytesTakesTheUsualArguments(t *testing.T) {
	raw, typ := schemaOf[simpleIn]()
	s := newSimpleInput(raw, newFlatDecoder(typ))
	var got simpleIn
	if !s.decodeBytes([]byte(` {"s":"a \"b\" é","i":-3,"b":true,"u16":7,"f64":0.5}`), reflect.ValueOf(&got)) {
		t.Fatal("declined plain arguments")
	}
	if want := (simpleIn{S: `a "b" é`, I: -3, B: true, U16: 7, F64: 0.5}); got != want {
		t.Errorf("decodeBytes = %+v, want %+v", got, want)
	}
	for _, declined := range []string{`{"i":1}`, `{"s":"x","i":1,"s":"y"}`, `{"s":null,"i":1}`, `{"s":"x","i":1}x`, `{"\u0073":"x","i":1}`} {
		var v simpleIn
		if s.decodeBytes([]byte(declined), reflect.ValueOf(&v)) {
			t.Errorf("decodeBytes took %s", declined)
		}
	}
}
