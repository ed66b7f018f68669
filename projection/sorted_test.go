package projection

import (
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSortedSetAgreesWithASortedMap checks the chunked set against a map
// sorted on every read: inserts, removes, first, has and every walk from
// any bound give what the model gives.
func TestSortedSetAgreesWithASortedMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s sortedSet
		model := map[string]bool{}
		// A small alphabet of ids makes collisions, and a long run splits chunks.
		id := rapid.StringMatching(`[0-9A-F]{1,4}`)
		for i := range rapid.IntRange(0, 2000).Draw(t, "ops") {
			k := id.Draw(t, "id")
			if rapid.IntRange(0, 2).Draw(t, "op") == 0 {
				if got, want := s.remove(k), model[k]; got != want {
					t.Fatalf("op %d: remove(%q) = %v, want %v", i, k, got, want)
				}
				delete(model, k)
			} else {
				if got, want := s.insert(k), !model[k]; got != want {
					t.Fatalf("op %d: insert(%q) = %v, want %v", i, k, got, want)
				}
				model[k] = true
			}
		}
		want := slices.Sorted(maps.Keys(model))
		if s.len() != len(want) {
			t.Fatalf("len %d, want %d", s.len(), len(want))
		}
		if first := s.first(); len(want) > 0 && first != want[0] || len(want) == 0 && first != "" {
			t.Fatalf("first %q, want %v", first, want)
		}
		after := id.Draw(t, "after")
		var got []string
		s.ascend(after, func(k string) bool { got = append(got, k); return true })
		var above []string
		for _, k := range want {
			if k > after {
				above = append(above, k)
			}
		}
		if !slices.Equal(got, above) {
			t.Fatalf("ascend(%q) = %v, want %v", after, got, above)
		}
		for _, c := range s.chunks {
			if len(c) == 0 || len(c) > chunkMax {
				t.Fatalf("chunk of %d ids", len(c))
			}
		}
		if k := id.Draw(t, "probe"); s.has(k) != model[k] {
			t.Fatalf("has(%q) = %v", k, s.has(k))
		}
	})
}
