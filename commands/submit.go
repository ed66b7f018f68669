package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// SubmitStep decides, executes and commits one model turn's calls and returns
// their results in model order once every call is terminal.
//
// Each call passes visibility, availability, input and permission before any
// effect. A step whose allowed calls are all read-only or idempotent is one
// commit; otherwise a decide commit (verdicts and ToolCallStarted) precedes
// every effect and a settle commit records the results. A step already
// committed with the same calls returns its recorded outcome; with other
// calls, [ErrConflict]. A host that loses the commit race for the step
// executes nothing with an effect and returns [ErrConflict].
func (e *Engine) SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error) {
	if err := checkSubmit(req, e.cfg.MaxCalls, e.commitBudget()); err != nil {
		return nil, err
	}
	e.known(ctx, req.Run)
	held := e.lockRun(req.Run)
	defer held.unlock()

	p, recorded, err := e.plan(req)
	if err != nil {
		p, recorded, err = e.planAgain(ctx, req, err)
	}
	if err != nil || recorded != nil {
		return recorded, err
	}
	return e.submitPlan(ctx, req, p, 0)
}

// submitPlan executes and commits a decided step; attempt counts the
// decisions taken again after lost races.
func (e *Engine) submitPlan(ctx context.Context, req SubmitStepRequest, p *plan, attempt int) (*StepOutcome, error) {
	if err := e.checkBudget(p); err != nil {
		return nil, err
	}
	if p.runsAny() {
		epoch, err := e.leaseEpoch() // before anything is committed
		if err != nil {
			return nil, err
		}
		p.epoch = epoch
	}
	if p.oneCommit() {
		p.execute(ctx, e)
		p.commit = e.commitOf(req.Run, req.Step, events.KindStep, p.settleEvents(p.decideEvents(p.events(4*len(p.calls)+1))))
		if _, err := e.commit(ctx, &p.commit, p.last); err != nil {
			return e.lostRace(ctx, req, p.last, attempt, err)
		}
		return e.outcome(p)
	}
	decide := e.newCommit(req.Run, req.Step, events.KindDecide, p.decideEvents(make([]events.Event, 0, 3*len(p.calls)))...)
	seq, err := e.commit(ctx, decide, p.last)
	if err != nil {
		return e.lostRace(ctx, req, p.last, attempt, err)
	}
	p.execute(ctx, e)
	if err := e.settleResults(ctx, req.Run, req.Step, seq, p.settleEvents(make([]events.Event, 0, len(p.calls)+1))); err != nil {
		return nil, err
	}
	return e.outcome(p)
}

// outcome is the step's outcome as committed. A step with a result that
// committing may have spilled further (see fit) is read back from the
// projection; any other is the plan's own, as committed.
func (e *Engine) outcome(p *plan) (*StepOutcome, error) {
	if p.tickets() != nil || !p.mayBeFitted(e.commitBudget()) {
		return p.outcome(), nil
	}
	s, err := e.step(p.run, p.step)
	if err != nil {
		return nil, err
	}
	return outcomeOf(p.run, s), nil
}

// lostRace handles a failed step commit: after a lost race the run is
// refreshed and the submission decided again against it — the recorded
// outcome for the same calls, a conflict for others. When the step is still
// to be committed (the race was lost to another commit of the run: a
// catalogue, a reply, the previous step's settle) it is submitted again, a
// few times at most.
func (e *Engine) lostRace(ctx context.Context, req SubmitStepRequest, last uint64, attempt int, err error) (*StepOutcome, error) {
	if !errors.Is(err, step.ErrConflict) {
		return nil, fmt.Errorf("step %d of run %s: %w", req.Step, req.Run, err)
	}
	if rerr := e.refresh(ctx, req.Run, last); rerr != nil {
		return nil, errors.Join(fmt.Errorf("step %d of run %s: %w", req.Step, req.Run, ErrConflict), rerr)
	}
	p, recorded, perr := e.plan(req)
	if recorded != nil {
		return recorded, nil
	}
	if perr != nil {
		return nil, perr
	}
	if attempt < maxRaceRetries {
		return e.submitPlan(ctx, req, p, attempt+1)
	}
	return nil, fmt.Errorf("step %d of run %s: another host committed first: %w", req.Step, req.Run, ErrConflict)
}

// checkSubmit refuses a malformed submission before anything is looked
// at: steps numbered from 1, at least one and at most maxCalls calls, each
// with an id of its own, and arguments that fit one commit of budget bytes.
func checkSubmit(req SubmitStepRequest, maxCalls, budget int) error {
	if req.Step < 1 {
		return fmt.Errorf("step %d: steps are numbered from 1: %w", req.Step, ErrInvalidRequest)
	}
	if len(req.Calls) == 0 {
		return fmt.Errorf("step %d: no calls: %w", req.Step, ErrInvalidRequest)
	}
	if len(req.Calls) > maxCalls {
		return fmt.Errorf("step %d: %d calls, more than the %d a step may make: %w", req.Step, len(req.Calls), maxCalls, ErrInvalidRequest)
	}
	args := 0
	for _, c := range req.Calls {
		args += len(c.Args)
	}
	if args > budget {
		return fmt.Errorf("step %d: %d bytes of arguments, more than the %d bytes a commit holds: %w", req.Step, args, budget, ErrInvalidRequest)
	}
	var seen map[string]bool // past a few calls; fewer are compared pairwise
	if len(req.Calls) > 16 {
		seen = make(map[string]bool, len(req.Calls))
	}
	for i, c := range req.Calls {
		if c.ID == "" {
			return fmt.Errorf("step %d: a call without id: %w", req.Step, ErrInvalidRequest)
		}
		twice := seen[c.ID]
		if seen == nil {
			twice = slices.ContainsFunc(req.Calls[:i], func(o CallRequest) bool { return o.ID == c.ID })
		} else {
			seen[c.ID] = true
		}
		if twice {
			return fmt.Errorf("step %d: call id %q twice: %w", req.Step, c.ID, ErrInvalidRequest)
		}
	}
	return nil
}

// sameCalls reports whether a recorded step holds exactly the submitted calls.
func sameCalls(s *projection.Step, calls []CallRequest) bool {
	return slices.EqualFunc(s.Calls, calls, func(a projection.Call, b CallRequest) bool {
		return a.ID == b.ID && a.Tool == b.Tool && sameJSON(a.Args, recordable(b.Args))
	})
}
