package executor

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stepgate/stepgate/internal/jsonfast"
)

// BenchmarkEchoInputDecode is the A/B of the tool-input fast path, on echo's
// argument of 200 printable bytes: straight from the bytes (jsonfast's
// Scanner, what Prepare does first), parsed then filled (jsonfast.Parse and
// the flat decoder, the next way), and encoding/json alone.
func BenchmarkEchoInputDecode(b *testing.B) {
	type echoIn struct {
		Text string `json:"text"`
	}
	text := make([]byte, 200)
	for i := range text {
		text[i] = byte(' ' + (i*7)%95)
	}
	raw, _ := json.Marshal(map[string]string{"text": string(text)})
	schema, _ := schemaOf[echoIn]()
	flat := newFlatDecoder(reflect.TypeFor[echoIn]())
	s := newSimpleInput(schema, flat)
	if s == nil {
		b.Fatal("echo's input has no fast path")
	}
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in echoIn
			if !s.decodeBytes(raw, reflect.ValueOf(&in)) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("parse+flat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in echoIn
			doc, _, ok := jsonfast.Parse(raw)
			if !ok || !s.decode(doc, reflect.ValueOf(&in)) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in echoIn
			if err := json.Unmarshal(raw, &in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
