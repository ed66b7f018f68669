package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// The fork's request and answer are the wire contract's.
type (
	ForkRequest = client.ForkRequest
	ForkResult  = client.ForkResult
)

// Fork answers [Engine.Fork].
func (h *runs) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	if err := checkFork(req); err != nil {
		return nil, err
	}
	if err := h.syncReads(ctx, req.Run); err != nil {
		return nil, err
	}
	src, err := h.header(req.Run)
	if err != nil {
		return nil, err
	}
	if d := src.Diverged; d != nil {
		return nil, fmt.Errorf("run %s: %w: its history lost a write (%s); it cannot be forked", req.Run, ErrRunDiverged, d)
	}
	if req.At > src.Steps {
		return nil, fmt.Errorf("run %s has %d steps: cannot fork at step %d: %w", req.Run, src.Steps, req.At, ErrStepOrder)
	}
	last, err := h.stepOf(&src, req.At)
	if err != nil {
		return nil, err
	}
	if last == nil || !last.Final {
		return nil, fmt.Errorf("run %s: step %d is not final: cannot fork at it: %w", req.Run, req.At, ErrStepOrder)
	}
	stored, err := h.log.ReadRun(ctx, req.Run, 0)
	if err != nil {
		return nil, fmt.Errorf("fork run %s: %w", req.Run, err)
	}
	plan, err := planFork(req.Run, stored, req.At)
	if err != nil {
		return nil, err
	}
	fork := req.Fork
	if fork == "" {
		fork = h.cfg.IDs.New(h.cfg.Clock())
	} else {
		h.known(ctx, fork)
	}
	plan.snapshot.Principal = principalOf(ctx) // a fork belongs to whoever forks
	if err := h.copyFork(ctx, fork, plan); err != nil {
		return nil, fmt.Errorf("fork run %s at step %d into %s: %w", req.Run, req.At, fork, err)
	}
	return &ForkResult{Run: fork, ForkedFrom: plan.from, Steps: req.At}, nil
}

// checkFork refuses a malformed fork request before anything is read.
func checkFork(req ForkRequest) error {
	switch {
	case req.At < 1:
		return fmt.Errorf("fork at step %d: want a step from 1: %w", req.At, ErrInvalidRequest)
	case !events.ValidID(req.Run):
		return fmt.Errorf("run %q: %w", req.Run, ErrRunNotFound)
	case req.Fork != "" && !events.ValidID(req.Fork):
		return fmt.Errorf("fork id %q: want a ULID: %w", req.Fork, ErrInvalidRequest)
	case req.Fork == req.Run:
		return fmt.Errorf("fork id %s: a run cannot be its own fork: %w", req.Fork, ErrInvalidRequest)
	}
	return nil
}

// copyFork commits plan as run fork: the start (the source's snapshot with
// forked_from, and its catalogue), then one commit per copied step, each
// on the one before through the run's chain. A fork that exists already
// with the same forked_from (a request sent again, or one that failed
// halfway) is finished from where it stands.
func (h *runs) copyFork(ctx context.Context, fork string, plan *forkPlan) error {
	held := h.lockRun(fork)
	defer held.unlock()
	from, have, err := h.forkAt(fork, plan)
	if err != nil {
		return err
	}
	budget := h.commitBudget()
	if have < 0 {
		started := plan.snapshot
		started.ForkedFrom = &plan.from
		started.EngineVersion = h.cfg.Version
		c := h.newCommit(fork, 0, events.KindStart, started, plan.catalog)
		if from, err = h.commit(ctx, &c, runAt{}); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		have = 0
	}
	for n := have + 1; n <= len(plan.steps); n++ {
		c := h.newCommit(fork, n, events.KindStep, plan.steps[n-1]...)
		if b, err := events.Marshal(&c); err != nil {
			return fmt.Errorf("copy step %d: %w", n, err)
		} else if len(b) > budget {
			return fmt.Errorf("copy step %d: %d bytes do not fit one commit (at most %d): %w", n, len(b), budget, ErrInvalidRequest)
		}
		if from, err = h.commit(ctx, &c, from); err != nil {
			return fmt.Errorf("copy step %d: %w", n, err)
		}
	}
	return nil
}

// forkAt is where the fork stands: have is -1 for a fork not started, or
// the steps it holds already. A run with that id that is not this fork, or
// that went on past the fork point, is [ErrConflict]: a fork id is not a
// way into another run.
func (h *runs) forkAt(fork string, plan *forkPlan) (runAt, int, error) {
	r, err := h.header(fork)
	if errors.Is(err, ErrRunNotFound) {
		return runAt{}, -1, nil
	}
	if err != nil {
		return runAt{}, 0, err
	}
	f := r.Snapshot.ForkedFrom
	if f == nil || *f != plan.from || r.Snapshot.Principal != plan.snapshot.Principal {
		return runAt{}, 0, fmt.Errorf("run %s exists and is not this fork: %w", fork, ErrConflict)
	}
	if r.Steps > plan.from.Step || r.Status == projection.StatusEnded {
		return runAt{}, 0, fmt.Errorf("fork %s went on past step %d: %w", fork, plan.from.Step, ErrConflict)
	}
	if r.Steps > 0 && !r.Last.Final {
		return runAt{}, 0, fmt.Errorf("fork %s: step %d is not final: %w", fork, r.Steps, ErrConflict)
	}
	return at(&r), r.Steps, nil
}
