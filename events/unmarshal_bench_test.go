package events_test

import (
	"testing"

	"github.com/stepgate/stepgate/events"
)

// BenchmarkUnmarshal decodes BenchmarkAppend's commit (w5's step: one echo
// call of 200 printable bytes, allowed, its result and the step's end).
func BenchmarkUnmarshal(b *testing.B) {
	data, err := events.Marshal(benchCommit())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := events.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshalEncodingJSON is the A/B of the fast decoder: the same
// commit through encoding/json alone, Unmarshal's way before it.
func BenchmarkUnmarshalEncodingJSON(b *testing.B) {
	data, err := events.Marshal(benchCommit())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := events.UnmarshalReflect(data); err != nil {
			b.Fatal(err)
		}
	}
}
