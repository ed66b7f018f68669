package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/projection"
)

// A step's calls are settled by the host that ran them: the submitter
// settles the calls its decide commit left without a result (the ones it
// runs, and the blocked ones whose results go with them), a reply settles
// the call it approved. Until then such a call is in flight, and nothing
// else may close the step: a reply, a sweep or an automatic approval on
// another host that finalized it would commit a step finalized with a call
// still open, which every fold refuses. On one host the run's lock orders
// them; across hosts they wait for the step's results (see inFlight).

// inFlight names a call of step s of run r that a host is still to settle:
// not terminal, and not waiting on a pending ticket. Nil when every open
// call of s waits for a human (or s has none).
func inFlight(r *projection.RunHeader, s *projection.Step) *stepInFlight {
	for i := range s.Calls {
		c := &s.Calls[i]
		if c.Terminal() {
			continue
		}
		if t := r.Ticket(c.Ticket); t == nil || !t.Pending() {
			return &stepInFlight{run: r.ID, step: s.N, call: c.ID, host: s.Host}
		}
	}
	return nil
}

// stepInFlight is a call in flight as an error: a reply that meets it
// waits for the step's results and tries again; an automatic approval
// gives up.
type stepInFlight struct {
	run, host, call string
	step            int
}

func (e *stepInFlight) Error() string {
	return fmt.Sprintf("step %d of run %s: call %s has no result yet: host %s settles it first (if that host is gone, engine recover %s does)",
		e.step, e.run, e.call, e.host, e.host)
}

// Unwrap codes the error conflict for a caller whose wait ended first.
func (e *stepInFlight) Unwrap() error { return ErrConflict }

// waitForResults waits until the projection changes (another host's commit
// folded, a second at most, after which the run is caught up with the
// stream), or ctx ends; changed is the projection's change channel taken
// before the step was looked at.
func (b *base) waitForResults(ctx context.Context, run string, changed <-chan struct{}, busy error) error {
	t := time.NewTimer(awaitSyncEvery)
	defer t.Stop()
	select {
	case <-changed:
		return nil
	case <-t.C:
		return b.catchUp(ctx, run)
	case <-ctx.Done():
		return fmt.Errorf("%w (%w)", busy, context.Cause(ctx))
	}
}
