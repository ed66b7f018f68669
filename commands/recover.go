package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/client"

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

// A recovery's request and response are the wire contract's.
type (
	RecoverRequest = client.RecoverRequest
	RecoverResult  = client.RecoverResult
	RecoveredStep  = client.RecoveredStep
)

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

// indeterminate reports whether recovery settles in-doubt call c as
// indeterminate whatever its tool's state on this host: the tool the model
// was shown is still the effective one, and it is side-effecting, or the
// call started as often as a call may. Recovery then neither runs it nor
// needs its implementation (an MCP server's tool whose server is down gets
// the indeterminate result at once, without a connection being waited
// for). Other calls go through rerun, which settles a stale or missing tool
// as such.
func indeterminate(reg map[string]effectiveTool, c *projection.Call) bool {
	if !shown(reg, c.Tool, c.Identity) {
		return false
	}
	return reg[c.Tool].desc.Effect == descriptor.SideEffecting || c.Attempts >= maxAttempts
}

// editOf is the edit of the arguments a resolution carries, or nil.
func editOf(res *events.TicketResolved) *events.ArgsEdit {
	if res == nil {
		return nil
	}
	return res.Edit
}

// resolutionOf returns the resolution of a call's ticket (its answers, its
// edit of the arguments), or nil.
func resolutionOf(r *projection.RunHeader, c *projection.Call) *events.TicketResolved {
	if t := r.Ticket(c.Ticket); t != nil {
		return t.Resolution
	}
	return nil
}

// leftInDoubt reports whether an open run's open step was committed last by
// this host and has something recovery would settle: a call cleared to run
// without a result, or every call terminal but the step not finalized.
func (h *recovery) leftInDoubt() bool {
	for _, run := range h.proj.OpenRuns() {
		if r, err := h.header(run); err == nil && needsRecovery(&r, h.cfg.Host) {
			return true
		}
	}
	return false
}

// Recover answers [Engine.Recover].
func (h *recovery) Recover(ctx context.Context) error {
	_, err := h.recoverHost(ctx, h.cfg.Host)
	return err
}

// RecoverHost answers [Engine.RecoverHost].
func (h *recovery) RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error) {
	if req.Host == "" {
		return nil, fmt.Errorf("recover: name the host: %w", ErrInvalidRequest)
	}
	if err := h.proj.Sync(ctx, h.log); err != nil {
		return nil, err
	}
	steps, err := h.recoverHost(ctx, req.Host)
	return &RecoverResult{Host: req.Host, Steps: steps}, err
}

// recoverHost recovers every open run whose open step host committed last.
func (h *recovery) recoverHost(ctx context.Context, host string) ([]RecoveredStep, error) {
	var (
		errs  []error
		steps = []RecoveredStep{}
	)
	for _, run := range h.proj.OpenRuns() {
		// Another host may settle the step first (it took this host's
		// lease over while this host was gone): the commit then loses the
		// race, and recovery looks again at the run as it now stands.
		n, err := raced(ctx, h.base, run, func() (*int, error) {
			n, err := h.recoverRun(ctx, run, host)
			return &n, err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("recover run %s: %w", run, err))
		} else if *n > 0 {
			steps = append(steps, RecoveredStep{Run: run, Step: *n})
		}
	}
	return steps, errors.Join(errs...)
}

// recoverRun settles the open step of run if host committed to it last,
// and returns its number (0: nothing to do).
func (h *recovery) recoverRun(ctx context.Context, run, host string) (int, error) {
	if r, err := h.header(run); err == nil && needsRecovery(&r, host) {
		// A call run again may be an MCP server's: connect to the servers
		// of those only. One that will not run again (indeterminate) waits
		// on no server, dead or alive.
		reg := h.reg.effective()
		var tools []string
		for i := range r.Last.Calls {
			if c := &r.Last.Calls[i]; !c.Terminal() && inDoubt(&r, c) && !indeterminate(reg, c) && !escalatedCall(&r, c) {
				tools = append(tools, c.Tool)
			}
		}
		h.reg.mcp.forCalls(ctx, run, tools...)
	}
	held := h.lockRun(run)
	defer held.unlock()
	reg := h.reg.effective()
	r, err := h.header(run)
	if err != nil || !needsRecovery(&r, host) || !h.mayTakeOver(&r, host) {
		return 0, err
	}
	s := &r.Last
	cfg := h.config(&r)
	w := &progress{run: run, step: s.N, calls: len(s.Calls), from: at(&r), kind: events.KindRecover, limits: cfg.limits, place: cfg.placeAt()}
	for i := range s.Calls {
		c := &s.Calls[i]
		if c.Terminal() || !inDoubt(&r, c) {
			continue
		}
		// Settled without its tool (it may be an MCP server's, not
		// connected); a call that started outside the sandbox never runs
		// again, whatever its tool.
		if indeterminate(reg, c) || escalatedCall(&r, c) {
			w.first = append(w.first, withEditNote(resultEvent(c.ID, IndeterminateResult), editOf(resolutionOf(&r, c))))
			continue
		}
		p := h.steps.rerun(reg, cfg, &r, s, c, resolutionOf(&r, c))
		switch {
		case p.terminal:
			w.first = append(w.first, p.result)
		default:
			w.first = append(w.first, events.ToolCallStarted{CallID: c.ID, Attempt: c.Attempts + 1})
			w.exec = append(w.exec, p)
		}
	}
	for _, t := range otherPending(&r, "") {
		w.remaining = append(w.remaining, t.ID)
	}
	return w.step, h.steps.advance(ctx, w)
}

// mayTakeOver reports whether this host may settle what host left in doubt
// in run r: its own, always (a restart; a call it cannot run again here
// fails there, never elsewhere); another host's only where this host holds
// the run's location, so that a call is run again, or settled, by a holder
// and by no one else (DESIGN.md §8).
func (h *recovery) mayTakeOver(r *projection.RunHeader, host string) bool {
	return host == h.cfg.Host || r.Snapshot.Place == nil || h.runHere(r) == nil
}
