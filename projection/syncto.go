package projection

import (
	"context"
	"fmt"
)

// SyncTo waits until the projector has applied stream sequence seq, the
// projector failed, or ctx ends, fetching a short gap itself by direct gets
// (from the stream Follow reads) rather than waiting for the tail. A caller
// that folded a run's commits ahead of the follower (ApplyOwn) waits with
// it until every earlier commit of the stream — a registration, a grant —
// is folded too.
func (p *Projector) SyncTo(ctx context.Context, seq uint64) error {
	if src := p.src.Load(); src != nil {
		if err := p.fetchUpTo(ctx, *src, seq); err != nil {
			return fmt.Errorf("sync projection to stream sequence %d: %w", seq, err)
		}
	}
	return p.WaitFor(ctx, seq)
}

// SyncWith is SyncTo reading src, for a caller that knows the sequence to
// wait for before Follow runs (a host's start: the stream's last sequence
// when it started).
func (p *Projector) SyncWith(ctx context.Context, src Source, seq uint64) error {
	if err := p.fetchUpTo(ctx, src, seq); err != nil {
		return fmt.Errorf("sync projection to stream sequence %d: %w", seq, err)
	}
	return p.WaitFor(ctx, seq)
}
