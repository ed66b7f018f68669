package commands

import (
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// forkPlan is what a fork commits, read from the source run's log: the
// source's pinned snapshot and the catalogue its model had been shown by
// the fork point (the fork's start commit), and, for each copied step, the
// events of that step's commit in the fork.
type forkPlan struct {
	from     events.ForkedFrom
	snapshot events.RunStarted
	catalog  events.CatalogAdvertised
	steps    [][]events.Event // steps[n-1]: step n's events, StepCopied first
}

// forkRunKinds are the kinds of commit a run subject carries; a commit of
// any other kind is one the projection quarantined, and is not copied.
var forkRunKinds = map[events.Kind]bool{events.KindStart: true, events.KindCatalog: true, events.KindDecide: true,
	events.KindSettle: true, events.KindStep: true, events.KindResolve: true, events.KindEnd: true, events.KindRecover: true}

// copied reports whether an event of a source step is carried into the
// fork. What a step's model saw and why is: its calls, their verdicts,
// results and state commands, and the step's finalization. What is not:
// attempts (nothing runs again), tickets and their answers (nobody is
// asked again; the verdict that came of them is copied), saved approvals
// and revocations (a project's grants are the project's, not the fork's to
// save again), output files (the source recorded them; the copied results
// name them) and the run's end.
func copied(e events.Event) bool {
	switch e.(type) {
	case events.ToolCallRequested, events.PermissionDecided, events.ToolResultRecorded,
		events.StateCommand, events.StepFinalized:
		return true
	}
	return false
}

// planFork folds the source run's stored commits up to step at — exactly
// as the projection folds them: a message that does not decode or does not
// fold is skipped, as the projection quarantines it — and returns what the
// fork commits. A chain that breaks before the fork point is
// [ErrRunDiverged]; a step at that the log does not hold final is
// [ErrStepOrder].
func planFork(src string, stored []step.Stored, at int) (*forkPlan, error) {
	r := projection.Run{ID: src}
	p := &forkPlan{steps: make([][]events.Event, at)}
	commits := make([][]string, at)
	for _, s := range stored {
		c := s.Commit
		if c == nil || c.Run != src || !forkRunKinds[c.Kind] {
			continue
		}
		if c.Step > at {
			break // step at+1 began: nothing later belongs to the prefix
		}
		if c.Kind == events.KindEnd {
			continue // the source's end is not the fork's
		}
		err := r.Apply(s.Seq, c)
		switch {
		case errors.Is(err, projection.ErrDiverged):
			return nil, fmt.Errorf("run %s: %w: its history lost a write before step %d (%s); it cannot be forked", src, ErrRunDiverged, at, r.Diverged)
		case err != nil:
			continue // quarantined by every fold
		}
		p.from.Commit = c.ID
		if c.Step < 1 {
			continue
		}
		n := c.Step - 1
		took := false
		for _, e := range c.Events {
			if copied(e) {
				p.steps[n] = append(p.steps[n], e)
				took = true
			}
		}
		if took {
			commits[n] = append(commits[n], c.ID)
		}
	}
	if len(r.Steps) < at || !r.Steps[at-1].Final {
		return nil, fmt.Errorf("run %s: step %d is not final in the log: %w", src, at, ErrStepOrder)
	}
	for i := range p.steps {
		head := events.StepCopied{Run: src, Step: i + 1, Commits: commits[i]}
		p.steps[i] = append([]events.Event{head}, p.steps[i]...)
	}
	p.from.Run, p.from.Step = src, at
	p.snapshot, p.catalog = r.Snapshot, r.Catalog
	return p, nil
}
