package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// startChosen starts the run with the client-chosen id run, or — when that
// run exists already (an earlier attempt of the same start committed it) —
// answers with it, provided it was started the same way.
func (e *Engine) startChosen(ctx context.Context, run string, started events.RunStarted, adv events.CatalogAdvertised, cat Catalog) (*RunInfo, error) {
	e.known(ctx, run)
	held := e.lockRun(run) // attempts of one start on this host, one at a time
	exists, err := e.startedAs(run, started)
	if err == nil && !exists {
		c := e.newCommit(run, 0, events.KindStart, started, adv)
		_, err = e.commit(ctx, c, 0)
		if errors.Is(err, step.ErrConflict) { // started a moment ago elsewhere
			if err = e.refresh(ctx, run, 0); err == nil {
				exists, err = e.startedAs(run, started)
			}
		}
	}
	held.unlock()
	switch {
	case err != nil:
		return nil, fmt.Errorf("start run %s: %w", run, err)
	case !exists:
		return &RunInfo{Run: run, Catalog: cat}, nil
	}
	again, err := e.Materialize(ctx, MaterializeRequest{Run: run})
	if err != nil {
		return nil, fmt.Errorf("start run %s again: %w", run, err)
	}
	return &RunInfo{Run: run, Catalog: *again}, nil
}

// startedAs reports whether run exists; it is an error when it was started
// otherwise than started says (another agent, location, project, narrowing
// or other run overrides): a run id is not a way into someone else's run.
func (e *Engine) startedAs(run string, started events.RunStarted) (bool, error) {
	r, err := e.header(run)
	if errors.Is(err, ErrRunNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	got := r.Snapshot
	same := got.Agent == started.Agent && got.Location == started.Location && got.Project == started.Project &&
		got.Narrowing == started.Narrowing && slices.Equal(runRules(got.Rules), runRules(started.Rules))
	if !same {
		return true, fmt.Errorf("run %s exists and was started otherwise: %w", run, ErrConflict)
	}
	return true, nil
}

// runRules returns the run's own overrides among rules.
func runRules(rules []events.Rule) []events.Rule {
	var out []events.Rule
	for _, r := range rules {
		if r.Source == string(gate.SourceRun) {
			out = append(out, r)
		}
	}
	return out
}
