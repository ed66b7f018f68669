package jsonfast

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// record is written by hand below and by encoding/json.
type record struct {
	S     string          `json:"s"`
	N     int64           `json:"n"`
	B     bool            `json:"b"`
	Raw   json.RawMessage `json:"raw"`
	Data  []byte          `json:"data"`
	At    time.Time       `json:"at"`
	List  []string        `json:"list"`
	Items []record        `json:"items"`
}

func writeRecord(w *Writer, r *record) {
	w.BeginObject()
	w.String("s", r.S)
	w.Int("n", r.N)
	w.Bool("b", r.B)
	w.Raw("raw", r.Raw)
	w.Base64("data", r.Data)
	w.Time("at", r.At)
	w.Strings("list", r.List)
	w.Field("items")
	if r.Items == nil {
		w.Null()
	} else {
		w.BeginArray()
		for i := range r.Items {
			writeRecord(w, &r.Items[i])
		}
		w.EndArray()
	}
	w.EndObject()
}

func genRecord(t *rapid.T, depth int) record {
	r := record{
		S:    rapid.String().Draw(t, "s"),
		N:    rapid.Int64().Draw(t, "n"),
		B:    rapid.Bool().Draw(t, "b"),
		Raw:  json.RawMessage(rapid.SampledFrom([]string{`null`, ` {"a": [1, 2.5e3, "x\u00e9"]} `, `"s"`, `true`}).Draw(t, "raw")),
		Data: rapid.SliceOf(rapid.Byte()).Draw(t, "data"),
		At:   time.Unix(rapid.Int64Range(0, 1<<35).Draw(t, "sec"), rapid.Int64Range(0, 1e9-1).Draw(t, "ns")).UTC(),
		List: rapid.SliceOfN(rapid.String(), -1, 3).Draw(t, "list"),
	}
	if rapid.Bool().Draw(t, "nil list") {
		r.List = nil
	}
	if depth < 2 && rapid.Bool().Draw(t, "items") {
		r.Items = []record{}
		for range rapid.IntRange(0, 2).Draw(t, "n items") {
			r.Items = append(r.Items, genRecord(t, depth+1))
		}
	}
	return r
}

// What the writer writes decodes to what encoding/json's output decodes to.
func TestWriterAgreesWithEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRecord(t, 0)
		w := NewWriter([]byte("prefix"))
		writeRecord(&w, &r)
		got, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if string(got[:6]) != "prefix" {
			t.Fatalf("the buffer's start was lost: %q", got)
		}
		ref, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		var want, have any
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got[6:], &have); err != nil {
			t.Fatalf("the writer's output does not decode: %v\n%s", err, got)
		}
		if diff := cmp.Diff(want, have); diff != "" {
			t.Fatalf("(-encoding/json +writer):\n%s", diff)
		}
	})
}

func TestWriterRefuses(t *testing.T) {
	w := NewWriter(nil)
	w.BeginObject()
	w.Raw("args", []byte(`{"text":`))
	w.Raw("later", []byte(`[`)) // the first error is the one kept
	w.EndObject()
	if _, err := w.Bytes(); !errors.Is(err, ErrInvalid) || err.Error() != "field args: raw value is not valid JSON" {
		t.Errorf("invalid raw: %v, want the first field's ErrInvalid", err)
	}
	w = NewWriter(nil)
	w.BeginObject()
	w.Time("at", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	if b, err := w.Bytes(); err == nil {
		t.Errorf("a year past 9999 was written: %s", b)
	}
}

// AppendString writes any string as one JSON string that decodes to the
// string encoding/json's does (invalid UTF-8 as U+FFFD).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text", "\"\\\n\r\t\x00\x1f\x7f", "é💥\u2028<&>", "bad \xff\xfe utf8", "12345678\"12345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		if !Valid(got) {
			t.Fatalf("AppendString(%q) = %s, not JSON", s, got)
		}
		ref, _ := json.Marshal(s)
		var want, have string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &have); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", s, got, err)
		}
		if want != have {
			t.Fatalf("AppendString(%q) decodes to %q, encoding/json's to %q", s, have, want)
		}
	})
}
