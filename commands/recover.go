package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// Recovery's results and limits.
const (
	// IndeterminateResult is what the model reads for a side-effecting call
	// that started before the engine stopped and has no result: it is never
	// run again silently.
	IndeterminateResult = "tool outcome is indeterminate: the engine stopped after the call started"
	// maxAttempts bounds how often a read-only or idempotent call runs.
	maxAttempts = 3
)

// Recover settles what a crash of this host left open, for every run whose
// open step this host committed last: a call that started and has no result
// runs again if it is read-only or idempotent (at most three attempts in
// all), and is settled as indeterminate otherwise; a step whose calls are
// all terminal is finalized. Steps left open by other hosts are theirs to
// recover, or, once a host's lease expired, the host's that takes the lease
// over (see takeovers), or an operator's, with RecoverHost. StartHost runs
// it once the projection has caught up and the host holds its lease.
func (e *Engine) Recover(ctx context.Context) error {
	_, err := e.recoverHost(ctx, e.cfg.Host)
	return err
}

// RecoverRequest names an engine host that is gone for good.
type RecoverRequest struct {
	// Host is the gone engine's --host name.
	Host string `json:"host"`
}

// RecoverResult lists the steps a recovery settled.
type RecoverResult struct {
	Host  string          `json:"host"`
	Steps []RecoveredStep `json:"steps"`
}

// RecoveredStep is one step a recovery committed to.
type RecoveredStep struct {
	Run  string `json:"run"`
	Step int    `json:"step"`
}

// RecoverHost settles, on this host, what the named host left open, exactly
// as that host would on its own start (see Recover). Hosts with a lease do
// this on their own once the gone host's lease expired; RecoverHost is for
// an operator who does not want to wait, or a host without a lease. Named
// wrongly — the host is alive and still running a call — nothing runs
// twice that has an effect: that call settles here as indeterminate and the
// live host's result is refused as a conflict; a read-only call may run
// twice.
func (e *Engine) RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error) {
	if req.Host == "" {
		return nil, fmt.Errorf("recover: name the host: %w", ErrInvalidRequest)
	}
	if err := e.proj.Sync(ctx, e.log); err != nil {
		return nil, err
	}
	steps, err := e.recoverHost(ctx, req.Host)
	return &RecoverResult{Host: req.Host, Steps: steps}, err
}

// recoverHost recovers every open run whose open step host committed last.
func (e *Engine) recoverHost(ctx context.Context, host string) ([]RecoveredStep, error) {
	var (
		errs  []error
		steps = []RecoveredStep{}
	)
	for _, run := range e.proj.OpenRuns() {
		n, err := e.recoverRun(ctx, run, host)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover run %s: %w", run, err))
		} else if n > 0 {
			steps = append(steps, RecoveredStep{Run: run, Step: n})
		}
	}
	return steps, errors.Join(errs...)
}

// recoverRun settles the open step of run if host committed to it last,
// and returns its number (0: nothing to do).
func (e *Engine) recoverRun(ctx context.Context, run, host string) (int, error) {
	held := e.lockRun(run)
	defer held.unlock()
	reg := e.effective()
	r, err := e.header(run)
	if err != nil || !needsRecovery(&r, host) {
		return 0, err
	}
	s := &r.Last
	cfg := e.config(&r)
	w := &progress{run: run, step: s.N, calls: len(s.Calls), last: r.LastSeq, kind: events.KindRecover, limits: cfg.limits}
	for i := range s.Calls {
		c := &s.Calls[i]
		if c.Terminal() || !inDoubt(&r, c) {
			continue
		}
		p := e.rerun(reg, cfg, run, s.N, c, answersOf(&r, c))
		switch {
		case p.terminal:
			w.first = append(w.first, p.result)
		case p.tool.Descriptor().Effect == descriptor.SideEffecting || c.Attempts >= maxAttempts:
			w.first = append(w.first, resultEvent(c.ID, IndeterminateResult))
		default:
			w.first = append(w.first, events.ToolCallStarted{CallID: c.ID, Attempt: c.Attempts + 1})
			w.exec = append(w.exec, p)
		}
	}
	for _, t := range otherPending(&r, "") {
		w.remaining = append(w.remaining, t.ID)
	}
	return w.step, e.advance(ctx, w)
}

// needsRecovery reports whether host's recovery has something to settle in
// r: its open step was committed last by host and holds a call cleared to
// run without a result, or has every call terminal and is not finalized
// (not merely waiting for humans). Recovery and a clean stop's release of
// the lease (leftInDoubt) decide by it alike.
func needsRecovery(r *projection.RunHeader, host string) bool {
	s := r.Step(r.Steps)
	if s == nil || s.Final || s.Host != host || r.Status == projection.StatusEnded {
		return false
	}
	for i := range s.Calls {
		if c := &s.Calls[i]; !c.Terminal() && inDoubt(r, c) {
			return true
		}
	}
	return len(otherPending(r, "")) == 0
}

// inDoubt reports whether a call was cleared to run (allowed, or its ticket
// approved) but has no result.
func inDoubt(r *projection.RunHeader, c *projection.Call) bool {
	if c.Decision == nil {
		return false
	}
	if c.Ticket != "" {
		t := r.Ticket(c.Ticket)
		return t != nil && t.Resolution != nil && t.Resolution.Approved
	}
	return c.Decision.Verdict == events.VerdictAllow
}

// answersOf returns the answers of a call's input ticket.
func answersOf(r *projection.RunHeader, c *projection.Call) []byte {
	if t := r.Ticket(c.Ticket); t != nil && t.Resolution != nil {
		return t.Resolution.Answers
	}
	return nil
}
