package jsonfast

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var parseAnyCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-12.25E-2`, `1e400`, `01`, `1.`, `.5`, `-`, `+1`,
	`"plain"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u20AC"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`,
	`"\ud83d\u0041"`, "\"bad \xff utf8\"", "\"ctl \x01\"", `"\x"`, `"\u12"`, `"unterminated`,
	`{"a":1,"a":2}`, `{"a":[1,{"b":null}],"c":"d"}`, ` { "a" : [ 1 , 2 ] } `, `{"a":1,}`, `[1,]`, `{"a"}`,
	`{1:2}`, `[1 2]`, `{} {}`, `nul`, `truex`, "\t[\n]\r", `"é"`, `[[[[[]]]]]`,
}

func TestParseAnyAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range parseAnyCases {
		checkParseAny(t, []byte(in))
	}
}

// checkParseAny: whatever parseAny accepts, encoding/json accepts with the
// same value; whatever encoding/json accepts, parseAny accepts too.
func checkParseAny(t *testing.T, in []byte) {
	t.Helper()
	got, _, ok := Parse(in)
	want, err := referenceDecode(in)
	if ok != (err == nil) {
		t.Fatalf("%q: parseAny ok=%v, encoding/json err=%v", in, ok, err)
	}
	if ok {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q (-encoding/json +parseAny):\n%s", in, diff)
		}
	}
}

// referenceDecode is encoding/json's reading of a whole document into any,
// numbers as json.Number.
func referenceDecode(in []byte) (any, error) {
	if !json.Valid(in) {
		return nil, errors.New("not JSON") // the whole-document check: trailing data, syntax
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func FuzzParseAny(f *testing.F) {
	for _, in := range parseAnyCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkParseAny(t, in) })
}

func BenchmarkParseAny(b *testing.B) {
	in := []byte(`{"text":"The quick brown fox jumps over the lazy dog, 200 bytes of it: \"quoted\" and \\ slashes and more words to fill the line up to a realistic size for an echo call made by a model ..."}`)
	b.Run("parseAny", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Parse(in)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = referenceDecode(in)
		}
	})
}
