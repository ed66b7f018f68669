package executor

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/internal/jsonfast"
	"pgregory.net/rapid"
)

// flatIn covers every kind the flat decoder reads.
type flatIn struct {
	S   string  `json:"s"`
	B   bool    `json:"b,omitempty"`
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	U16 uint16  `json:"u16"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	N   string  // no tag: its Go name
	Hid string  `json:"-"`
	low string  //lint:ignore U1000 unexported fields are skipped: that is what it tests
}

func TestNewFlatDecoder(t *testing.T) {
	type nested struct{ In flatIn }
	type withSlice struct{ A []string }
	type withPtr struct{ P *string }
	type withStringOpt struct {
		N int `json:"n,string"`
	}
	type embedded struct{ flatIn }
	tests := []struct {
		why  string
		t    reflect.Type
		flat bool
	}{
		{"strings, bools and numbers", reflect.TypeFor[flatIn](), true},
		{"a nested struct", reflect.TypeFor[nested](), false},
		{"a slice", reflect.TypeFor[withSlice](), false},
		{"a pointer", reflect.TypeFor[withPtr](), false},
		{"the string option", reflect.TypeFor[withStringOpt](), false},
		{"an embedded struct", reflect.TypeFor[embedded](), false},
		{"a map", reflect.TypeFor[map[string]any](), false},
		{"a type with its own UnmarshalJSON", reflect.TypeFor[json.RawMessage](), false},
	}
	for _, tt := range tests {
		if got := newFlatDecoder(tt.t) != nil; got != tt.flat {
			t.Errorf("%s: flat = %v, want %v", tt.why, got, tt.flat)
		}
	}
}

// Whatever the flat decoder accepts, encoding/json decodes to the same value.
func TestFlatDecoderAgreesWithEncodingJSON(t *testing.T) {
	d := newFlatDecoder(reflect.TypeFor[flatIn]())
	keys := []string{"s", "b", "i", "i8", "u16", "f32", "f64", "N"}
	values := []string{`"x"`, `"é\n"`, `true`, `false`, `null`, `0`, `-1`, `1.0`, `1e2`, `127`, `128`, `-129`,
		`65535`, `65536`, `3.4e38`, `3.5e38`, `1e400`, `9007199254740993`, `-0`, `0.1`, `[]`, `{}`}
	rapid.Check(t, func(t *rapid.T) {
		doc := genObject(t, keys, []string{"Hid", "S", "low", "x"}, map[string][]string{
			"s": fitString, "N": fitString, "b": fitBool, "i": fitInt, "i8": fitInt, "u16": fitInt,
			"f32": fitFloat, "f64": fitFloat}, values)
		if rapid.Bool().Draw(t, "a key twice") {
			doc = doc[:len(doc)-1] + `,"b":"x"}`
		}
		parsed, dups, ok := jsonfast.Parse([]byte(doc))
		if !ok || dups {
			return // prepare decodes these with encoding/json
		}
		var fast flatIn
		if !d.decode(parsed, reflect.ValueOf(&fast)) {
			return
		}
		var want flatIn
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("%s: the flat decoder accepted what encoding/json refuses: %v", doc, err)
		}
		if diff := cmp.Diff(want, fast, cmp.AllowUnexported(flatIn{})); diff != "" {
			t.Fatalf("%s (-encoding/json +flat):\n%s", doc, diff)
		}
	})
}
