package replay

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// Log is the stream a backtest reads.
type Log interface {
	// Scan calls fn with every message of the stream, in stream order, and
	// returns when none is left pending (at once for an empty stream), when
	// fn fails (with fn's error) or when ctx ends.
	Scan(ctx context.Context, fn func(seq uint64, data []byte) error) error
}

// Run applies every commit of l to b in stream order, calling emit with
// each change; a message that is not a commit is counted
// (Summary.Unreadable) and skipped. One message is in memory at a time.
func (b *Backtest) Run(ctx context.Context, l Log, emit func(Change)) error {
	err := l.Scan(ctx, func(seq uint64, data []byte) error {
		if c, err := events.Unmarshal(data); err != nil {
			b.Unreadable()
		} else {
			b.Apply(seq, c, emit)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("backtest: read the log: %w", err)
	}
	return nil
}
