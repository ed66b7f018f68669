package commands

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/projection/fold"
)

// checkTurn refuses a malformed turn before anything is looked at: turns
// numbered from 1, at most maxCalls calls, each with an id of its own and
// a name, and a turn that fits one commit of budget bytes.
func checkTurn(req RecordTurnRequest, maxCalls, budget int) error {
	t := req.Turn
	if !events.ValidID(req.Run) {
		return fmt.Errorf("run %q: %w", req.Run, ErrRunNotFound)
	}
	if t.Turn < 1 {
		return fmt.Errorf("turn %d: turns are numbered from 1: %w", t.Turn, ErrInvalidRequest)
	}
	if len(t.Calls) > maxCalls {
		return fmt.Errorf("turn %d: %d calls, more than the %d a step may make: %w", t.Turn, len(t.Calls), maxCalls, ErrInvalidRequest)
	}
	size := len(t.Text) + len(t.Response) + len(t.Stop)
	seen := make(map[string]bool, len(t.Calls))
	for _, c := range t.Calls {
		if c.ID == "" || c.Name == "" {
			return fmt.Errorf("turn %d: a call without id or name: %w", t.Turn, ErrInvalidRequest)
		}
		if seen[c.ID] {
			return fmt.Errorf("turn %d: call id %q twice: %w", t.Turn, c.ID, ErrInvalidRequest)
		}
		seen[c.ID] = true
		size += len(c.ID) + len(c.Name) + len(c.Args)
	}
	if size > budget {
		return fmt.Errorf("turn %d: %d bytes, more than the %d bytes a commit holds: %w", t.Turn, size, budget, ErrInvalidRequest)
	}
	return nil
}

// RecordTurn answers [Engine.RecordTurn].
func (h *runs) RecordTurn(ctx context.Context, req RecordTurnRequest) (*TurnRecord, error) {
	if err := checkTurn(req, h.cfg.MaxCalls, h.commitBudget()/2); err != nil {
		return nil, err
	}
	h.known(ctx, req.Run)
	return raced(ctx, h.base, req.Run, func() (*TurnRecord, error) { return h.recordTurn(ctx, req) })
}

// recordTurn is RecordTurn against the run as this host holds it.
func (h *runs) recordTurn(ctx context.Context, req RecordTurnRequest) (*TurnRecord, error) {
	held := h.lockRun(req.Run)
	defer held.unlock()
	at, err := h.commitTurn(ctx, req.Run, req.Turn)
	if err != nil {
		return nil, err
	}
	return &TurnRecord{Run: req.Run, Turn: req.Turn.Turn, Again: at == nil}, nil
}

// commitTurn records turn t of run as this host holds the run, its lock
// held: where the run then stands, or nil, with no error, when the run has
// the turn already, the same (see turnCommit).
func (b *base) commitTurn(ctx context.Context, run string, t events.ModelTurnRecorded) (*runAt, error) {
	c, from, err := b.turnCommit(run, t)
	if err != nil || c == nil {
		return nil, err
	}
	at, err := b.commit(ctx, c, from)
	if err != nil {
		return nil, fmt.Errorf("turn %d of run %s: %w", t.Turn, run, err)
	}
	return &at, nil
}

// turnCommit is the commit that records turn t of run, as this host holds
// the run, and where the run stands before it; nil, with no error, when
// the run has the turn already, the same. Another turn of that number is
// ErrConflict, an ended run ErrRunNotActive, a turn that is not next (or
// comes before the previous turn's step is final) ErrStepOrder. The
// caller holds the run's lock.
func (b *base) turnCommit(run string, t events.ModelTurnRecorded) (*events.Commit, runAt, error) {
	r, err := b.header(run)
	if err != nil {
		return nil, runAt{}, err
	}
	n := t.Turn
	if n <= len(r.Turns) {
		if !sameTurn(r.Turns[n-1], t) {
			return nil, runAt{}, fmt.Errorf("turn %d of run %s: recorded with another response: %w", n, run, ErrConflict)
		}
		return nil, runAt{}, nil
	}
	if r.Status == projection.StatusEnded {
		return nil, runAt{}, fmt.Errorf("turn %d of run %s: %w", n, run, ErrRunNotActive)
	}
	if n != len(r.Turns)+1 {
		return nil, runAt{}, fmt.Errorf("turn %d of run %s: the run has %d turns, the next is %d: %w", n, run, len(r.Turns), len(r.Turns)+1, ErrStepOrder)
	}
	if err := fold.TurnFits(r.Turns, r.Steps, r.Steps == 0 || r.Last.Final); err != nil {
		return nil, runAt{}, fmt.Errorf("turn %d of run %s: %w: %w", n, run, err, ErrStepOrder)
	}
	c := b.newCommit(run, 0, events.KindTurn, t)
	return &c, at(&r), nil
}

// sameTurn reports whether two turns say the same (as stored: an empty
// list of calls is none).
func sameTurn(a, b events.ModelTurnRecorded) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && string(ja) == string(jb)
}
