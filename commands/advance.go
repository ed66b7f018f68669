package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// progress is what happens next to an open step: events to commit before
// any effect (answers to tickets, grants, ToolCallStarted, results of calls
// that will not run), calls to execute after that commit, and how the step
// closes (final, or awaiting the tickets still open; maybe ending the run).
type progress struct {
	run       string
	step      int
	calls     int   // the step's number of calls
	from      runAt // where the run stood when the work was decided
	kind      events.Kind
	first     []events.Event
	exec      []*planned
	remaining []string         // tickets still pending after this
	limits    executor.Limits  // the run's output bounds
	place     placeAt          // where calls to run may run
	end       *events.RunEnded // ends the run once the step is final
}

// closing is the step's last event: final, or still awaiting.
func (w *progress) closing() []events.Event {
	if len(w.remaining) > 0 {
		return []events.Event{events.StepAwaiting{Tickets: w.remaining}}
	}
	evs := []events.Event{events.StepFinalized{Calls: w.calls}}
	if w.end != nil {
		evs = append(evs, *w.end)
	}
	return evs
}

// maxSettleRetries bounds how often a settle commit is retried after another
// host committed to the run in between (the results are this host's alone).
const maxSettleRetries = 3

// resultsIn reports whether step s holds a result already for a call whose
// result is among evs: another host settled it (a takeover of this host's
// lease, say), and this host's result must not follow.
func resultsIn(s *projection.Step, evs []events.Event) bool {
	for _, ev := range evs {
		if r, ok := ev.(events.ToolResultRecorded); ok {
			for i := range s.Calls {
				if s.Calls[i].ID == r.CallID && s.Calls[i].Terminal() {
					return true
				}
			}
		}
	}
	return false
}

// advance commits w.first, runs w.exec, and commits their results with the
// step's closing. A lost race on the first commit returns an error wrapping
// step.ErrConflict before anything ran; the caller holds the run's lock.
// Calls to run need this host's lease: without it nothing is committed and
// the error is coded unavailable.
func (h *submitter) advance(ctx context.Context, w *progress) error {
	ctx, waits := h.resolving(ctx, w) // nil when tracing is off
	if len(w.exec) == 0 {
		c := h.newCommit(w.run, w.step, w.kind, append(w.first, w.closing()...)...)
		h.fit(&c, w.from)
		_, err := h.commit(ctx, &c, w.from)
		waits.emit(ctx, err)
		return err
	}
	epoch, err := h.leaseEpoch() // before the commit that starts the calls
	if err != nil {
		return err
	}
	c := h.newCommit(w.run, w.step, w.kind, w.first...)
	h.fit(&c, w.from)
	next, err := h.commit(ctx, &c, w.from)
	waits.emit(ctx, err)
	if err != nil {
		return err
	}
	spans := waits.startExec(ctx, w.exec)
	h.runAll(ctx, epoch, w.place, w.exec, w.limits)
	results := make([]events.Event, 0, len(w.exec)+2)
	for _, p := range w.exec {
		if p.escalation != nil { // refused by the sandbox: it asks to run outside
			results = append(results, *p.escalation)
			w.remaining = append(w.remaining, p.escalation.ID)
		} else {
			results = append(results, p.result)
		}
		results = append(results, p.sideEvents()...)
	}
	err = h.settleResults(ctx, w.run, w.step, next, append(results, w.closing()...), w.exec)
	spans.end(w.exec, err)
	return err
}

// settleResults commits the results of calls this host ran, retrying when
// another host appended to the run meanwhile (the results are this host's
// alone: no one else runs a call whose ToolCallStarted it committed). The
// results are fitted to the commit once (see fit), and calls get them.
func (h *submitter) settleResults(ctx context.Context, run string, n int, from runAt, evs []events.Event, calls []*planned) error {
	ctx, cancel := settling(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		c := h.newCommit(run, n, events.KindSettle, evs...)
		if attempt == 0 && h.fit(&c, from, calls...) {
			evs = c.Events // final: a retry commits the same results
		}
		_, err := h.commit(ctx, &c, from)
		if err == nil {
			return nil
		}
		if !errors.Is(err, step.ErrConflict) || attempt == maxSettleRetries {
			return fmt.Errorf("settle step %d of run %s: %w", n, run, err)
		}
		if err := h.refresh(ctx, run, from.seq); err != nil {
			return err
		}
		r, err := h.header(run)
		if err != nil {
			return err
		}
		from = at(&r)
		// Only the last step can be open: every earlier one is final.
		s := r.Step(n)
		if answeredMeanwhile(&r, s, evs) {
			return nil // a reply came first; nothing of this host's is left to record
		}
		open := s != nil && !s.Final && !resultsIn(s, evs)
		if !open {
			return fmt.Errorf("settle step %d of run %s: settled elsewhere: %w", n, run, ErrConflict)
		}
	}
}

// answeredMeanwhile reports whether a settle that lost its race holds
// nothing but the mark that step s awaits its tickets, and a ticket was
// answered meanwhile (or the step is final): a step whose calls all asked
// is settled by the mark alone, and a reply on another host may answer a
// ticket as soon as the decide commit issued it. The reply's own commits
// say what the step awaits now.
func answeredMeanwhile(r *projection.RunHeader, s *projection.Step, evs []events.Event) bool {
	if len(evs) != 1 {
		return false
	}
	aw, ok := evs[0].(events.StepAwaiting)
	if !ok {
		return false
	}
	if s == nil || s.Final {
		return true
	}
	for _, id := range aw.Tickets {
		if t := r.Ticket(id); t != nil && !t.Pending() {
			return true
		}
	}
	return false
}

// rerun prepares a recorded call to run again (an approved call, a call
// recovered after a crash); res is its ticket's resolution, if any: its
// answers go to the tool, and an edit's arguments replace the model's, held
// to what the edited call saw when the reply was decided. A tool that is
// gone, or is no longer the identity the model was shown, settles as a
// stale call instead. It is held to what other calls of its step, s, left
// of what it observed (see heldTo).
func (h *submitter) rerun(reg map[string]effectiveTool, cfg *runConfig, r *projection.RunHeader, s *projection.Step, c *projection.Call, res *events.TicketResolved) *planned {
	args := c.Args
	call := executor.Call{Run: r.ID, Agent: cfg.agent, Step: s.N, CallID: c.ID, Location: cfg.location}
	var edit *events.ArgsEdit
	if res != nil {
		call.Answers, edit = res.Answers, res.Edit
	}
	if edit != nil {
		args = edit.Args
		seenAtDecision(&call, &events.PermissionDecided{Observed: edit.Observed, Paths: edit.Paths})
	} else {
		seenAtDecision(&call, c.Decision) // what the human approved, not what is there now
	}
	call.Observed = heldTo(r, s, c, call.Paths, call.Observed) // or what its step's calls made of it since
	p := &planned{req: CallRequest{ID: c.ID, Tool: c.Tool, Args: args}, identity: c.Identity, edit: edit}
	tool, why := resolveTool(reg, c.Tool, c.Identity)
	if tool == nil {
		p.setResult(executor.ErrorResult(why))
		return p
	}
	prepared, err := tool.Prepare(call, args)
	if err != nil {
		p.setResult(executor.ErrorResult(err.Error()))
		return p
	}
	p.tool, p.prepared = tool, prepared
	return p
}

// settleTimeout bounds the commit of results whose calls ran after their
// caller gave up (see settling).
const settleTimeout = 30 * time.Second

// settling is the context a step's results are committed under once its
// calls ran: the caller's values (its trace) without its cancellation, for
// at most settleTimeout. A caller that gives up while the calls run (an MCP
// client's cancellation, a timeout, a closed connection) cancels the calls,
// which say so in their results, but does not leave the decided step open
// with its effects made and no result: the step is settled and the run goes
// on. A settle that cannot commit within the bound (the servers
// unavailable) leaves the step to recovery, as a crash would.
func settling(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
}
