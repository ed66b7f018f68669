package projection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/events"
)

// Source is the stream a projector follows. Implementations are safe for
// concurrent use; every method honours ctx.
type Source interface {
	// LastSeq returns the stream's last sequence.
	LastSeq(ctx context.Context) (uint64, error)
	// Get returns the message at seq; found is false when the stream holds
	// no message there (deleted, or never written).
	Get(ctx context.Context, seq uint64) (subject string, data []byte, found bool, err error)
	// Follow delivers every message with a stream sequence ≥ from, in order,
	// to fn (its sequence, subject and encoded commit), and keeps following
	// until ctx ends or fn returns an error; it returns that error.
	Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error
}

// directGetMax is the longest run of other hosts' commits fetched one by one
// with direct gets; a longer gap is streamed with an ordered consumer.
const directGetMax = 16

// errApply marks an error that stops the projector: a checkpoint it cannot
// read or write. A message it cannot fold never does: it is quarantined.
type errApply struct{ err error }

func (e errApply) Error() string { return e.err.Error() }
func (e errApply) Unwrap() error { return e.err }

var errGapDone = errors.New("gap streamed")

// Follow keeps the projection up to date with the stream until ctx ends or
// its checkpoint fails, writing checkpoints in batches (every FlushEvery
// commits and every FlushInterval, from a goroutine of its own while the
// fold goes on) and a final one on return. A message that cannot be folded (undecodable, on a subject it does
// not belong to, impossible for its run) is quarantined and skipped: no
// message stops the projector. A checkpoint that cannot be read or written
// does: Follow returns an error naming the last sequence applied, and
// waiters get it too.
//
// How it follows: the commits this host made were folded when they were
// committed (ApplyOwn), so only the others' commits need reading. Follow
// polls the stream's last sequence (every PollInterval, or at once when a
// caller asks with Sync) and fetches what it has not applied: a short gap by
// direct gets, a long one (a restart's tail, a busy other host) through an
// ordered consumer from the checkpoint's sequence + 1. Errors reading the
// stream (a server restarting) are retried; they never stop the projector.
func (p *Projector) Follow(parent context.Context, src Source) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.flushEvery(ctx)
	}()
	err := p.follow(ctx, src)
	cancel()
	<-done
	if ferr := p.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil && parent.Err() == nil {
		p.fail(err)
	}
	return err
}

func (p *Projector) flushEvery(ctx context.Context) {
	t := time.NewTicker(p.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.flushNow:
		}
		if err := p.Flush(); err != nil {
			p.log.Error("projection checkpoint failed; the log stays the truth", "err", err)
		}
	}
}

func (p *Projector) follow(ctx context.Context, src Source) error {
	t := time.NewTicker(p.opts.PollInterval)
	defer t.Stop()
	failures := 0
	for {
		err := p.catchUp(ctx, src)
		var ae errApply
		switch {
		case errors.As(err, &ae):
			return ae.err
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			failures++
			if failures == 1 || failures%1000 == 0 {
				p.log.Warn("reading the stream failed; retrying", "err", err, "failures", failures)
			}
		default:
			failures = 0
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-p.nudge:
		}
	}
}

// catchUp applies everything up to the stream's current last sequence.
func (p *Projector) catchUp(ctx context.Context, src Source) error {
	last, err := src.LastSeq(ctx)
	if err != nil {
		return err
	}
	for {
		from, gap := p.nextGap(last)
		switch {
		case gap == 0:
			return nil
		case gap <= directGetMax:
			for seq := from; seq < from+gap; seq++ {
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
		default:
			end := from + gap - 1
			err := src.Follow(ctx, from, func(seq uint64, subject string, data []byte) error {
				if seq > end {
					return errGapDone // a newer commit: the next round takes it
				}
				if err := p.applyStream(seq, subject, data); err != nil {
					return errApply{err}
				}
				if seq == end {
					return errGapDone
				}
				return nil
			})
			if !errors.Is(err, errGapDone) {
				return err
			}
		}
	}
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
// until it has: after Sync, every commit made before it is visible.
func (p *Projector) Sync(ctx context.Context, src Source) error {
	last, err := src.LastSeq(ctx)
	if err != nil {
		return fmt.Errorf("sync projection: %w", err)
	}
	select {
	case p.nudge <- struct{}{}:
	default:
	}
	return p.WaitFor(ctx, last)
}

func (p *Projector) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == nil {
		p.failed = fmt.Errorf("projector stopped after stream sequence %d: %w", p.seq, err)
		p.notifyLocked()
	}
}

// applyStream applies one message read from the stream, in stream order. A
// run commit that its own host already folded (ApplyOwn) is not decoded. A
// message that cannot be folded is quarantined; only a checkpoint that
// cannot be read or written is an error.
func (p *Projector) applyStream(seq uint64, subject string, data []byte) error {
	if p.advanceIfApplied(seq, subject) {
		return nil
	}
	c, reason := admit(subject, data)
	if reason == nil {
		for _, e := range c.Events {
			if u, ok := e.(events.Unknown); ok {
				p.log.Warn("skipping an event this build cannot read", "seq", seq, "type", u.Type, "v", u.V)
			}
		}
	}
	p.mu.Lock()
	if seq != p.seq+1 {
		p.mu.Unlock()
		return nil // applied already, or not yet in order
	}
	if _, err := p.applyLocked(seq, subject, c, reason); err != nil {
		p.mu.Unlock()
		return err
	}
	p.advanceLocked(seq, true)
	pending := p.pending
	p.mu.Unlock()
	return p.checkpointDue(pending)
}

// checkpointDue asks for a checkpoint once FlushEvery commits are pending.
// Follow's flusher writes it while the fold goes on (a rebuild decodes on
// one core and checkpoints on another); the caller writes it itself when
// the flusher has fallen a whole batch behind (or does not run), which
// bounds what memory holds, or when the last checkpoint failed, so that a
// checkpoint that cannot be written stops Follow with its error.
func (p *Projector) checkpointDue(pending int) error {
	switch {
	case pending < p.opts.FlushEvery:
		return nil
	case pending >= 2*p.opts.FlushEvery || p.flushBad.Load():
		return p.Flush()
	}
	select {
	case p.flushNow <- struct{}{}:
	default: // asked already
	}
	return nil
}

// advanceIfApplied advances the projector past seq without decoding it when
// seq is a commit of a run in memory that already holds it.
func (p *Projector) advanceIfApplied(seq uint64, subject string) bool {
	run, ok := events.IsRunSubject(subject)
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.runs[run]
	if r == nil || seq > r.LastSeq || seq != p.seq+1 {
		return false
	}
	p.advanceLocked(seq, false)
	return true
}
