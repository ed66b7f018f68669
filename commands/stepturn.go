package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// A step may bring the model turn whose calls it submits
// (SubmitStepRequest.Turn). The turn is recorded in a commit of its own,
// before any commit of the step, as RecordTurn records it; but its commit
// is not waited for at once. It goes on while the calls are planned (the
// four decisions, in memory) and, when every call to run is read-only,
// run; the step's first commit waits for the turn's acknowledgement and
// names the turn's commit as its predecessor. Nothing of the step is in
// the log, and nothing has changed the world, before the turn is in the
// log: a call that may change anything runs only after the decide commit,
// which follows the turn's. A crash before the turn's acknowledgement
// loses the model's response, as a crash before RecordTurn's does.
//
// What it saves is measured by bench w8: a turn's commit overlapped with
// its step's work (turn_ratio 0.85–0.95 with the turn sent with its step,
// 0.91–1.01 with the turn recorded first, five runs of each, alternated in
// one sitting; the README's departures and docs/benchmarks.md say the same).

// checkStepTurn refuses a step's turn that is not the step's: a turn of
// another number, or whose calls are not the step's (by id and name, in
// order), or one RecordTurn would refuse as malformed.
func checkStepTurn(req SubmitStepRequest, maxCalls, budget int) error {
	t := req.Turn
	if t == nil {
		return nil
	}
	if err := checkTurn(RecordTurnRequest{Run: req.Run, Turn: *t}, maxCalls, budget); err != nil {
		return err
	}
	if t.Turn != req.Step {
		return fmt.Errorf("step %d brings turn %d: a step's turn has the step's number: %w", req.Step, t.Turn, ErrInvalidRequest)
	}
	if len(t.Calls) != len(req.Calls) {
		return fmt.Errorf("step %d has %d calls, its turn %d: %w", req.Step, len(req.Calls), len(t.Calls), ErrInvalidRequest)
	}
	for i, c := range req.Calls {
		if tc := t.Calls[i]; tc.ID != c.ID || tc.Name != c.Tool {
			return fmt.Errorf("step %d: call %d is %s %q, in its turn %s %q: %w", req.Step, i+1, c.Tool, c.ID, tc.Name, tc.ID, ErrInvalidRequest)
		}
	}
	return nil
}

// turnInFlight is a step's turn whose commit goes on beside the step.
type turnInFlight struct {
	run  string
	turn events.ModelTurnRecorded
	done chan struct{}
	at   runAt // where the run stands after the turn, once done
	err  error
}

// startTurn begins the commit of req's turn, the run's lock held. It is nil
// when there is nothing to commit: no turn, or the run has it already, the
// same. A turn the run cannot take is refused here, before the step is
// looked at.
func (h *submitter) startTurn(ctx context.Context, req SubmitStepRequest) (*turnInFlight, error) {
	if req.Turn == nil {
		return nil, nil
	}
	c, from, err := h.turnCommit(req.Run, *req.Turn)
	if err != nil || c == nil {
		return nil, err
	}
	t := &turnInFlight{run: req.Run, turn: *req.Turn, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		t.at, t.err = h.commit(ctx, c, from)
	}()
	return t, nil
}

// land waits for the turn's commit and returns where the run then stands.
// After a lost race (another commit of the run came first) the run is
// caught up and the turn committed again as RecordTurn commits it (raced:
// a few times at most); moved then says the run is not where the step was
// planned, which is planned again.
func (h *submitter) land(ctx context.Context, t *turnInFlight) (at runAt, moved bool, err error) {
	<-t.done
	at, err = t.at, t.err
	if errors.Is(err, step.ErrConflict) {
		if cerr := h.catchUp(ctx, t.run); cerr != nil {
			return runAt{}, true, errors.Join(fmt.Errorf("turn %d of run %s: %w", t.turn.Turn, t.run, err), cerr)
		}
		var again *runAt
		again, err = raced(ctx, h.base, t.run, func() (*runAt, error) {
			return h.commitTurn(ctx, t.run, t.turn) // nil: recorded meanwhile, the same
		})
		switch {
		case errors.Is(err, step.ErrConflict):
			return runAt{}, true, fmt.Errorf("turn %d of run %s: another host committed first: %w", t.turn.Turn, t.run, ErrConflict)
		case err != nil:
			return runAt{}, true, err
		case again == nil:
			return runAt{}, true, nil
		}
		at, moved = *again, true
	} else if err != nil {
		return runAt{}, false, fmt.Errorf("turn %d of run %s: %w", t.turn.Turn, t.run, err)
	}
	h.pause(ctx, "turn-landed")
	return at, moved, nil
}

// readOnly reports whether every call of p that runs is read-only: the
// calls that may run before the step's turn is in the log.
func (p *plan) readOnly() bool {
	for _, c := range p.calls {
		if c.runs() && c.tool.Descriptor().Effect != descriptor.ReadOnly {
			return false
		}
	}
	return true
}
