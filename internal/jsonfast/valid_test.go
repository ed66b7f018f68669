package jsonfast

import (
	"encoding/json"
	"testing"
)

var validCases = []string{
	`{}`, `[]`, `null`, `true`, `0`, `-0`, `1.5e3`, `01`, `1.`, `.5`, `-`, `"a\"b"`, `"\u00e9"`, `"\u12"`, `"\x"`,
	"\"ctl \x01\"", "\"bad \xff\"", `{"a":1,}`, `[1,]`, `{"a"}`, `{1:2}`, `{} {}`, ` [ 1 , { "a" : [ ] } ] `, `nul`, ``, `"`,
}

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range validCases {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid = %v", in, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, in := range validCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := Valid(in), json.Valid(in); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", in, got, want)
		}
	})
}
