package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// How a commit is tried again while NATS is unavailable (see
// step.Unavailable): the same commit, with the same id and expectation, so
// one that was stored before the connection broke is recognised rather than
// stored twice, and one that was not is stored once NATS is back. Backoff
// doubles from the first wait to the limit; after outagePatience the commit
// gives up with an error coded unavailable (a decide commit that gave up ran
// nothing; a settle commit that gave up leaves the step in doubt, which the
// host's restart, or its recovery, settles).
const (
	outageFirstWait = 50 * time.Millisecond
	outageWaitLimit = 2 * time.Second
	outagePatience  = 5 * time.Minute
)

// commitThrough is e.log.Commit, tried again with backoff while NATS is
// unavailable and ctx lives (for at most outagePatience).
func (b *base) commitThrough(ctx context.Context, c *events.Commit, last uint64) (uint64, error) {
	wait, deadline := outageFirstWait, time.Now().Add(outagePatience)
	for {
		seq, err := b.log.Commit(ctx, c, last)
		if err == nil || !step.Unavailable(err) || ctx.Err() != nil {
			return seq, err
		}
		if time.Now().Add(wait).After(deadline) {
			return 0, fmt.Errorf("%w: NATS unavailable for %s: %w", ErrUnavailable, outagePatience, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, fmt.Errorf("%w: %w", err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, outageWaitLimit)
	}
}
