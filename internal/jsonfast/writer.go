package jsonfast

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrInvalid means a raw value handed to [Writer.Raw] is not JSON.
var ErrInvalid = errors.New("raw value is not valid JSON")

// Writer appends one JSON value to a buffer without reflection: it places
// the commas, quotes names and strings, and checks raw values. Inside an
// object, each method named for a kind writes one member (String("id", v));
// [Writer.Field] writes a name whose value the next call writes (an object,
// an array, null, a raw value). Its output decodes with encoding/json to
// what encoding/json's own output for the same Go value decodes to (the
// writer does not escape '<', '>' and '&'). Names are literals of the
// caller's: printable ASCII without '"' or '\\'. The first error is kept and
// returned by [Writer.Bytes].
type Writer struct {
	// b holds a ',' after every value written: the next member needs no
	// test, and a closer replaces the last one.
	b     []byte
	start int    // len(dst): where the value begins
	name  string // the last Field's name, for an error
	err   error
}

// NewWriter returns a writer appending to dst.
func NewWriter(dst []byte) Writer { return Writer{b: dst, start: len(dst)} }

// Bytes returns the buffer, or the first error met.
func (w *Writer) Bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if len(w.b) > w.start {
		return w.b[:len(w.b)-1], nil // the last value's ','
	}
	return w.b, nil
}

// Fail records err, unless an error is already recorded.
func (w *Writer) Fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// key writes a member's quoted name and its colon.
func (w *Writer) key(name string) {
	b := append(w.b, '"')
	b = append(b, name...)
	w.b = append(b, '"', ':')
}

// end closes a container with closer, over the ',' after its last value.
func (w *Writer) end(closer byte) {
	if n := len(w.b) - 1; w.b[n] == ',' {
		w.b[n] = closer
		w.b = append(w.b, ',')
		return
	}
	w.b = append(w.b, closer, ',') // empty
}

// Field writes a member's name; the next call writes its value.
func (w *Writer) Field(name string) {
	w.key(name)
	w.name = name
}

// BeginObject opens an object.
func (w *Writer) BeginObject() { w.b = append(w.b, '{') }

// EndObject closes an object.
func (w *Writer) EndObject() { w.end('}') }

// BeginArray opens an array.
func (w *Writer) BeginArray() { w.b = append(w.b, '[') }

// EndArray closes an array.
func (w *Writer) EndArray() { w.end(']') }

// Null writes null.
func (w *Writer) Null() { w.b = append(w.b, "null,"...) }

// String writes a member of string s (see [AppendString]).
func (w *Writer) String(name, s string) {
	w.key(name)
	w.b = append(AppendString(w.b, s), ',')
}

// Int writes a member of number n.
func (w *Writer) Int(name string, n int64) {
	w.key(name)
	w.b = append(strconv.AppendInt(w.b, n, 10), ',')
}

// Bool writes a member of boolean v.
func (w *Writer) Bool(name string, v bool) {
	w.key(name)
	w.b = append(strconv.AppendBool(w.b, v), ',')
}

// Strings writes a member of an array of strings; nil is null, as
// encoding/json writes a nil slice.
func (w *Writer) Strings(name string, ss []string) {
	w.key(name)
	if ss == nil {
		w.b = append(w.b, "null,"...)
		return
	}
	w.b = append(w.b, '[')
	for i, s := range ss {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = AppendString(w.b, s)
	}
	w.b = append(w.b, ']', ',')
}

// Base64 writes a member of data as encoding/json writes a []byte: a
// string of its standard base64.
func (w *Writer) Base64(name string, data []byte) {
	w.key(name)
	w.b = append(w.b, '"')
	w.b = base64.StdEncoding.AppendEncode(w.b, data)
	w.b = append(w.b, '"', ',')
}

// Time writes a member of t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds); a time that has no such form is an error.
func (w *Writer) Time(name string, t time.Time) {
	w.key(name)
	b, err := t.AppendText(append(w.b, '"'))
	if err != nil {
		w.Fail(fmt.Errorf("field %s: %w", name, err))
		return
	}
	w.b = append(b, '"', ',')
}

// Raw writes a member of raw, a JSON value, as it is (see [Writer.RawValue]).
func (w *Writer) Raw(name string, raw []byte) {
	w.Field(name)
	w.RawValue(raw)
}

// RawValue writes raw, a JSON value, as it is; empty raw is null. Bytes that
// are not exactly one JSON value record an error wrapping [ErrInvalid]:
// nothing is ever written unreadable.
func (w *Writer) RawValue(raw []byte) {
	if len(raw) == 0 {
		w.Null()
		return
	}
	if !Valid(raw) {
		w.Fail(fmt.Errorf("field %s: %w", w.name, ErrInvalid))
		return
	}
	w.b = append(append(w.b, raw...), ',')
}
