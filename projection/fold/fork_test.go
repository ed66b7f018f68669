package fold_test

import (
	"errors"
	"testing"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
)

// A StepCopied opens a step of a fork's copied prefix; in a run that is
// not a fork, or past the step the fork was copied to, it contradicts the
// run and the commit is not applied.
func TestStepCopiedOnlyInAForksPrefix(t *testing.T) {
	mk := func(id string, step int, evs ...events.Event) *events.Commit {
		return &events.Commit{ID: id, Run: "R", Step: step, Kind: events.KindStep, Events: evs}
	}
	copied := func(n int) *events.Commit {
		return mk("c", n, events.StepCopied{Run: "S", Step: n, Commits: []string{"x"}},
			events.ToolCallRequested{CallID: "a", Tool: "echo"},
			events.PermissionDecided{CallID: "a", Verdict: events.VerdictAllow},
			events.ToolResultRecorded{CallID: "a"}, events.StepFinalized{Calls: 1})
	}
	var plain fold.Run
	if err := plain.Apply(1, mk("s", 0, events.RunStarted{Agent: "build"})); err != nil {
		t.Fatal(err)
	}
	if err := plain.Apply(2, copied(1)); !errors.Is(err, fold.ErrInconsistent) || len(plain.Steps) != 0 {
		t.Errorf("a copied step in a run that is no fork: %v, %d steps; want inconsistent, none", err, len(plain.Steps))
	}
	var fork fold.Run
	if err := fork.Apply(1, mk("s", 0, events.RunStarted{Agent: "build", ForkedFrom: &events.ForkedFrom{Run: "S", Step: 1}})); err != nil {
		t.Fatal(err)
	}
	if err := fork.Apply(2, copied(1)); err != nil || len(fork.Steps) != 1 || !fork.Steps[0].Final {
		t.Fatalf("step 1 copied into the fork: %v, %d steps", err, len(fork.Steps))
	}
	c := copied(2)
	c.Prev = "c"
	if err := fork.Apply(3, c); !errors.Is(err, fold.ErrInconsistent) || len(fork.Steps) != 1 {
		t.Errorf("a copied step past the fork point: %v, %d steps; want inconsistent, one", err, len(fork.Steps))
	}
}
