package projection

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// The stub set behaves as a set of step numbers under any sequence of adds
// and removes.
func TestStubsAreASetProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s stubs
		want := map[int]bool{}
		for range rapid.IntRange(0, 200).Draw(t, "ops") {
			n := rapid.IntRange(1, 300).Draw(t, "n")
			if rapid.Bool().Draw(t, "add") {
				s.add(n)
				want[n] = true
			} else {
				s.remove(n)
				delete(want, n)
			}
			probe := rapid.IntRange(-1, 400).Draw(t, "probe")
			if s.has(probe) != want[probe] {
				t.Fatalf("has(%d) = %v, want %v", probe, s.has(probe), want[probe])
			}
		}
		if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), s.list()); diff != "" && len(want)+len(s.list()) > 0 {
			t.Fatalf("list (-want +got):\n%s", diff)
		}
		if s.empty() != (len(want) == 0) {
			t.Fatalf("empty = %v with %d members", s.empty(), len(want))
		}
	})
}
