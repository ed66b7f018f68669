package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

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

// planAgain is plan after it refused req: when the run has commits this host
// had not folded, the step is decided again against them.
func (h *submitter) planAgain(ctx context.Context, req SubmitStepRequest, refusal error) (*plan, *StepOutcome, error) {
	again, err := h.recheck(ctx, req.Run, refusal)
	if !again {
		return nil, nil, err
	}
	return h.plan(req)
}

// SubmitStep answers [Engine.SubmitStep].
func (h *submitter) SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error) {
	if err := checkSubmit(req, h.cfg.MaxCalls, h.commitBudget()); err != nil {
		return nil, err
	}
	if err := checkStepTurn(req, h.cfg.MaxCalls, h.commitBudget()/2); err != nil {
		return nil, err
	}
	h.known(ctx, req.Run)
	if h.placed(req.Calls) {
		var there StepOutcome
		if handled, err := h.elsewhere(ctx, req.Run, OpSubmitStep, req, &there); handled {
			if err != nil {
				return nil, err
			}
			return &there, nil
		}
	}
	h.reg.mcp.forCalls(ctx, req.Run, callTools(req.Calls)...)
	held := h.lockRun(req.Run)
	defer held.unlock()

	turn, err := h.startTurn(ctx, req) // its commit goes on while the step is planned (stepturn.go)
	if err != nil {
		if again, rerr := h.recheck(ctx, req.Run, err); !again {
			return nil, rerr
		}
		if turn, err = h.startTurn(ctx, req); err != nil {
			return nil, err
		}
	}
	p, recorded, err := h.plan(req)
	if turn != nil && (err != nil || recorded != nil) {
		if _, _, terr := h.land(ctx, turn); terr != nil {
			return nil, terr
		}
		turn = nil
	}
	if err != nil {
		p, recorded, err = h.planAgain(ctx, req, err)
	}
	if err != nil || recorded != nil {
		return recorded, err
	}
	p.turn = turn
	return h.submitPlan(ctx, req, p, 0)
}

// landTurn waits for the plan's turn, if one is in flight, and moves the
// plan to stand after it. When the turn had to be committed again after a
// lost race, the step is planned again against the run as it now stands
// and submitted (again is true, with its outcome).
func (h *submitter) landTurn(ctx context.Context, req SubmitStepRequest, p *plan, attempt int) (again bool, _ *StepOutcome, _ error) {
	if p.turn == nil {
		return false, nil, nil
	}
	at, moved, err := h.land(ctx, p.turn)
	p.turn = nil
	switch {
	case err != nil:
		return true, nil, err
	case !moved:
		p.from = at
		return false, nil, nil
	}
	np, recorded, err := h.plan(req)
	if err != nil || recorded != nil {
		return true, recorded, err
	}
	out, err := h.submitPlan(ctx, req, np, attempt+1)
	return true, out, err
}

// submitPlan executes and commits a decided step; attempt counts the
// decisions taken again after lost races.
func (h *submitter) submitPlan(ctx context.Context, req SubmitStepRequest, p *plan, attempt int) (_ *StepOutcome, err error) {
	if err := h.checkBudget(p); err != nil {
		return nil, err
	}
	spans := h.tr.startCalls(ctx, p) // nil when tracing is off
	defer func() { spans.end(p.calls, err) }()
	defer func() {
		if p.turn != nil { // refused before its first commit: the turn still lands, the run's lock held
			if _, _, terr := h.land(ctx, p.turn); terr != nil && err == nil {
				err = terr
			}
			p.turn = nil
		}
	}()
	// land waits for the step's turn, in flight; again says the step was
	// planned again (or refused) after the turn lost a race, with its outcome.
	land := func() (again bool, _ *StepOutcome, _ error) {
		again, out, err := h.landTurn(ctx, req, p, attempt)
		if again {
			spans.end(p.calls, cmp.Or(err, ErrConflict)) // a step planned again has spans of its own
		}
		return again, out, err
	}
	if p.runsAny() {
		epoch, err := h.leaseEpoch() // before anything is committed
		if err != nil {
			return nil, err
		}
		p.epoch = epoch
	}
	if p.oneCommit() {
		if !p.readOnly() { // a call that may change anything waits for the turn
			if again, out, err := land(); again {
				return out, err
			}
		}
		p.execute(ctx, h)
		if again, out, err := land(); again {
			return out, err
		}
		p.commit = h.newCommit(req.Run, req.Step, events.KindStep, p.settleEvents(p.decideEvents(p.events(4*len(p.calls)+1)))...)
		h.fit(&p.commit, p.from, p.calls...)
		cctx, cancel := settling(ctx) // the calls ran: record them even if the caller gave up
		_, err := h.commit(cctx, &p.commit, p.from)
		cancel()
		if err != nil {
			spans.end(p.calls, err) // a decision taken again has spans of its own
			return h.lostRace(ctx, req, p.from.seq, attempt, err)
		}
		return p.outcome(), nil
	}
	if again, out, err := land(); again {
		return out, err
	}
	decide := h.newCommit(req.Run, req.Step, events.KindDecide, p.decideEvents(make([]events.Event, 0, 3*len(p.calls)))...)
	next, err := h.commit(ctx, &decide, p.from)
	if err != nil {
		spans.end(p.calls, err)
		return h.lostRace(ctx, req, p.from.seq, attempt, err)
	}
	h.pause(ctx, "decided")
	p.execute(ctx, h)
	if err := h.settleResults(ctx, req.Run, req.Step, next, p.settleEvents(make([]events.Event, 0, len(p.calls)+1)), p.calls); err != nil {
		return nil, err
	}
	return p.outcome(), nil
}

// lostRace handles a failed step commit: after a lost race the run is
// refreshed and the submission decided again against it — the recorded
// outcome for the same calls, a conflict for others. When the step is still
// to be committed (the race was lost to another commit of the run: a
// catalogue, a reply, the previous step's settle) it is submitted again, a
// few times at most.
func (h *submitter) lostRace(ctx context.Context, req SubmitStepRequest, last uint64, attempt int, err error) (*StepOutcome, error) {
	if !errors.Is(err, step.ErrConflict) {
		return nil, fmt.Errorf("step %d of run %s: %w", req.Step, req.Run, err)
	}
	if rerr := h.refresh(ctx, req.Run, last); rerr != nil {
		return nil, errors.Join(fmt.Errorf("step %d of run %s: %w", req.Step, req.Run, ErrConflict), rerr)
	}
	p, recorded, perr := h.plan(req)
	if recorded != nil {
		return recorded, nil
	}
	if perr != nil {
		return nil, perr
	}
	if attempt < maxRaceRetries {
		return h.submitPlan(ctx, req, p, attempt+1)
	}
	return nil, fmt.Errorf("step %d of run %s: another host committed first: %w", req.Step, req.Run, ErrConflict)
}

// callTools are the tools the calls name.
func callTools(calls []CallRequest) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.Tool
	}
	return out
}
