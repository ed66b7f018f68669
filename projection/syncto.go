package projection

import (
	"context"
	"fmt"
	"time"
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

// fetchUpTo folds what the stream holds up to last that no one has folded
// here. A short gap it fetches itself by direct gets (always, without a
// tail); a long one it leaves to the tail (asking a tail set aside to be
// read again), waiting while the tail brings it, and fetches by direct
// gets only when the tail brings nothing for tailStall (the messages at
// the end of the gap were deleted, so the tail has nothing to deliver, or
// the tail is being set up again). One caller fetches at a time.
func (p *Projector) fetchUpTo(ctx context.Context, src Source, last uint64) error {
	select {
	case p.fetching <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.fetching }()
	var stall *time.Timer
	defer func() {
		if stall != nil {
			stall.Stop()
		}
	}()
	stalled := p.opts.NoTail
	for {
		changed := p.Changed()
		from, gap := p.nextGap(last)
		if gap == 0 {
			return nil
		}
		if gap > directGetMax && !stalled {
			p.resumeTail()
			if stall == nil {
				stall = time.NewTimer(tailStall)
			}
			select {
			case <-changed:
				if !stall.Stop() {
					<-stall.C
				}
				stall.Reset(tailStall)
			case <-stall.C:
				stalled = true
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		if err := p.fetchGap(ctx, src, from, gap); err != nil {
			return err
		}
	}
}

// fetchGap folds the n messages from stream sequence from by direct gets,
// stepping past those gone from the stream. An error folding one (a
// checkpoint that cannot be read) is an errApply.
func (p *Projector) fetchGap(ctx context.Context, src Source, from, n uint64) error {
	for seq := from; seq < from+n; seq++ {
		subject, data, found, err := src.Get(ctx, seq)
		if err != nil {
			return err
		}
		if !found {
			p.advance(seq)
			continue
		}
		if err := p.applyStream(seq, subject, data); err != nil {
			return errApply{err}
		}
	}
	return nil
}

// nextGap skips past commits this host folded itself and returns the next
// run of sequences (at most up to last) that only the stream can supply.
func (p *Projector) nextGap(last uint64) (from, n uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.own[p.seq+1] && p.seq < last {
		p.advanceLocked(p.seq+1, false)
	}
	from = p.seq + 1
	for s := from; s <= last && !p.own[s]; s++ {
		n++
	}
	return from, n
}

// advance records seq as applied with nothing to fold (no message there).
func (p *Projector) advance(seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if seq == p.seq+1 {
		p.advanceLocked(seq, false)
	}
}

// Sync makes the projector catch up with the stream as it is now and waits
// until it has: after Sync, every commit made before it is visible. It asks
// the stream for its last sequence (one request), fetches a short gap
// itself and waits for the tail to deliver a long one.
func (p *Projector) Sync(ctx context.Context, src Source) error {
	last, err := src.LastSeq(ctx)
	if err != nil {
		return fmt.Errorf("sync projection: %w", err)
	}
	return p.SyncWith(ctx, src, last)
}
