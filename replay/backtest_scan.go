package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// Log is the stream a backtest reads: [step.Log] is one.
type Log interface {
	// LastSeq is the stream's last sequence, 0 when it is empty.
	LastSeq(ctx context.Context) (uint64, error)
	// Follow delivers every message from sequence from on, in order, until
	// fn returns an error or ctx ends.
	Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error
}

// reachedEnd stops Follow at the last sequence Run read at its start.
type reachedEnd struct{}

func (reachedEnd) Error() string { return "reached the end of the log" }

// Run applies every commit of l, from sequence 1 to the last one when it
// starts, to b in stream order, calling emit with each change; a message
// that is not a commit is counted (Summary.Unreadable) and skipped. One
// message is in memory at a time.
func (b *Backtest) Run(ctx context.Context, l Log, emit func(Change)) error {
	last, err := l.LastSeq(ctx)
	if err != nil {
		return fmt.Errorf("backtest: %w", err)
	}
	if last == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = l.Follow(ctx, 1, func(seq uint64, _ string, data []byte) error {
		if c, err := events.Unmarshal(data); err != nil {
			b.Unreadable()
		} else {
			b.Apply(seq, c, emit)
		}
		if seq >= last {
			return reachedEnd{}
		}
		return nil
	})
	if err == nil || errors.As(err, new(reachedEnd)) {
		return nil
	}
	return fmt.Errorf("backtest: read the log: %w", err)
}
