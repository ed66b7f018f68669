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

// startChosen starts the run with the client-chosen id run, or — when that
// run exists already (an earlier attempt of the same start committed it) —
// answers with it, provided it was started the same way.
func (h *runs) startChosen(ctx context.Context, run string, started events.RunStarted, adv events.CatalogAdvertised, cat Catalog) (*RunInfo, error) {
	h.known(ctx, run)
	held := h.lockRun(run) // attempts of one start on this host, one at a time
	exists, err := h.startedAs(run, started)
	if err == nil && !exists {
		c := h.newCommit(run, 0, events.KindStart, started, adv)
		_, err = h.commit(ctx, &c, runAt{})
		if errors.Is(err, step.ErrConflict) { // started a moment ago elsewhere
			if err = h.refresh(ctx, run, 0); err == nil {
				exists, err = h.startedAs(run, started)
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
	again, err := h.Materialize(ctx, MaterializeRequest{Run: run})
	if err != nil {
		return nil, fmt.Errorf("start run %s again: %w", run, err)
	}
	return &RunInfo{Run: run, Catalog: *again}, nil
}

// startedAs reports whether run exists; it is an error when it was started
// otherwise than started says (another agent, location, project, principal,
// narrowing or other run overrides): a run id is not a way into someone else's run.
func (h *runs) startedAs(run string, started events.RunStarted) (bool, error) {
	r, err := h.header(run)
	if errors.Is(err, ErrRunNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	got := r.Snapshot
	same := got.Agent == started.Agent && got.Location == started.Location && got.Project == started.Project && got.Principal == started.Principal &&
		got.Narrowing == started.Narrowing && slices.Equal(runRules(got.Rules), runRules(started.Rules))
	if !same {
		return true, fmt.Errorf("run %s exists and was started otherwise: %w", run, ErrConflict)
	}
	return true, nil
}
