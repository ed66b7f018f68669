package fold_test

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
	"pgregory.net/rapid"
)

// A commit may name any step number: near the run's steps or far (0, one
// the run has, the next, past it, below 0, the largest int), holding only
// events this build cannot read, or a known event too. Whatever it names,
// the fold either applies it without adding a step it did not begin — the
// steps stay numbered 1 to len, so each has its place in a checkpoint — or
// refuses it as inconsistent, the run exactly as it was; and one for a step
// below 0 or past the next is always refused.
func TestAnyStepNumberFoldsOrIsRefusedWholeProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cs := waitingHistory(rapid.IntRange(0, 3).Draw(t, "steps"))
		cut := rapid.IntRange(1, len(cs)).Draw(t, "cut")
		var r fold.Run
		for i, c := range cs[:cut] {
			if err := r.Apply(uint64(i+1), c); err != nil {
				t.Fatal(err)
			}
		}
		steps := len(r.Steps)
		n := rapid.OneOf(rapid.SampledFrom([]int{0, steps, steps + 1, steps + 2, 1_000_000, math.MaxInt, -1, math.MinInt}),
			rapid.IntRange(-3, steps+3), rapid.Int()).Draw(t, "step")
		evs := []events.Event{events.Unknown{Type: "sg.v1.StepFinalized", V: 1}}
		known := rapid.SampledFrom([]events.Event{nil, events.StepFinalized{}, events.StepAwaiting{},
			events.ToolCallRequested{CallID: "z", Tool: "echo"}, events.ToolResultRecorded{CallID: "a1"},
			events.CatalogAdvertised{Fingerprint: "f"}}).Draw(t, "known event")
		if known != nil {
			evs = append(evs, known)
		}
		c := &events.Commit{ID: "far", Run: "R", Step: n, Kind: events.KindSettle, Host: "intruder", Events: evs}
		before, err := r.Clone()
		if err != nil {
			t.Fatal(err)
		}
		err = r.Apply(uint64(cut+1), c)
		if n < 0 || n > steps+1 {
			if !errors.Is(err, fold.ErrInconsistent) {
				t.Fatalf("a commit for step %d of a run of %d steps: %v, want refused as inconsistent", n, steps, err)
			}
		}
		if err != nil {
			if !errors.Is(err, fold.ErrInconsistent) {
				t.Fatalf("refused as %v, want inconsistent", err)
			}
			if d := cmp.Diff(before, &r); d != "" {
				t.Fatalf("a refused commit changed the run (-before +after):\n%s", d)
			}
			return
		}
		if len(r.Steps) < steps || len(r.Steps) > steps+1 {
			t.Fatalf("%d steps after a commit for step %d of a run of %d", len(r.Steps), n, steps)
		}
		for i, s := range r.Steps {
			if s.N != i+1 {
				t.Fatalf("step %d numbered %d after a commit for step %d", i+1, s.N, n)
			}
		}
		if len(r.Steps) > steps && n != steps+1 {
			t.Fatalf("a commit for step %d began step %d", n, len(r.Steps))
		}
		if known == nil && len(r.Steps) != steps {
			t.Fatalf("a commit of only unknown events for step %d began a step", n)
		}
	})
}
