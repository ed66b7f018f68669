package jsonfast

import (
	"bytes"
	"encoding/json"
	"testing"
)

var valueCases = []string{
	`0`, `-0`, `7`, `-12`, `9223372036854775807`, `-9223372036854775808`, `9223372036854775808`, `123456789012345678`,
	`1.0`, `1e2`, `1E+2`, `01`, `-`, `+1`, ` 42 `, `42 x`, `"a"`, `"a\"b"`, `"\u00e9"`, "\"\xff\"", `"é"`, `""`,
	`"unterminated`, `true`, `false`, ` true `, `tru`, `null`, `nul`, `{}`, `[1,{"a":null}]`, ``, ` `, `"2026-12-01T00:00:00Z"`,
}

// checkValues holds each value reader to encoding/json on one document:
// what it accepts as the whole document encoding/json decodes into the
// matching Go type to the same value, and for Int, Str, Bool and Raw the
// converse too.
func checkValues(t *testing.T, in []byte) {
	t.Helper()
	start := bytes.TrimLeft(in, " \t\r\n")
	var n int64
	p := NewScanner(in)
	got, ok := p.Int()
	ok = ok && p.End()
	if err := json.Unmarshal(in, &n); (err == nil && len(start) > 0 && start[0] != 'n') != ok || (ok && got != n) {
		t.Fatalf("Int(%q) = %d, %v; encoding/json: %d, %v", in, got, ok, n, err)
	}
	var s string
	p = NewScanner(in)
	str, ok := p.Str()
	ok = ok && p.End()
	if err := json.Unmarshal(in, &s); (err == nil && len(start) > 0 && start[0] == '"') != ok || (ok && str != s) {
		t.Fatalf("Str(%q) = %q, %v; encoding/json: %q, %v", in, str, ok, s, err)
	}
	p = NewScanner(in)
	if plain, ok := p.Plain(); ok && p.End() && (string(plain) != s || !json.Valid(in)) {
		t.Fatalf("Plain(%q) = %q, encoding/json: %q", in, plain, s)
	}
	p = NewScanner(in)
	if q, ok := p.Quoted(); ok && p.End() && (string(q) != string(bytes.TrimRight(start, " \t\r\n")) || !json.Valid(in)) {
		t.Fatalf("Quoted(%q) = %q", in, q)
	}
	var b bool
	p = NewScanner(in)
	v, ok := p.Bool()
	ok = ok && p.End()
	if err := json.Unmarshal(in, &b); (err == nil && len(start) > 0 && start[0] != 'n') != ok || (ok && v != b) {
		t.Fatalf("Bool(%q) = %v, %v; encoding/json: %v, %v", in, v, ok, b, err)
	}
	p = NewScanner(in)
	raw, ok := p.Raw(0)
	ok = ok && p.End()
	if ok != json.Valid(in) || (ok && !bytes.Equal(raw, bytes.TrimRight(start, " \t\r\n"))) {
		t.Fatalf("Raw(%q) = %q, %v; json.Valid %v", in, raw, ok, json.Valid(in))
	}
	p = NewScanner(in)
	if p.Null() && p.End() && string(bytes.TrimRight(start, " \t\r\n")) != "null" {
		t.Fatalf("Null(%q) = true", in)
	}
}

func TestValuesAgreeWithEncodingJSON(t *testing.T) {
	for _, in := range valueCases {
		checkValues(t, []byte(in))
	}
}

func FuzzValues(f *testing.F) {
	for _, in := range valueCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkValues(t, in) })
}
