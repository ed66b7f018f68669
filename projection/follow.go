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

// directGetMax is the longest run of other hosts' commits a caller that must
// catch up at once (Sync, SyncTo) fetches itself with direct gets; a longer
// gap is the tail's to deliver.
const directGetMax = 16

// tailStall is how long a caller waiting for the tail to bring a long gap
// waits for any progress before it fetches the gap itself.
const tailStall = time.Second

// tailRetryMax bounds the pause before the tail is followed again after
// reading it failed (a server restarting).
const tailRetryMax = 2 * time.Second

// errApply marks an error that stops the projector: a checkpoint it cannot
// read or write. A message it cannot fold never does: it is quarantined.
type errApply struct{ err error }

func (e errApply) Error() string { return e.err.Error() }
func (e errApply) Unwrap() error { return e.err }

// Follow keeps the projection up to date with the stream until ctx ends or
// its checkpoint fails, writing checkpoints in batches (every FlushEvery
// commits and every FlushInterval, from a goroutine of its own while the
// fold goes on) and a final one on return. A message that cannot be folded
// (undecodable, on a subject it does not belong to, impossible for its run)
// is quarantined and skipped: no message stops the projector. A checkpoint
// that cannot be read or written does: Follow returns an error naming the
// last sequence applied, and waiters get it too.
//
// How it follows: one consumer of the stream's tail for as long as Follow
// runs (src.Follow from the sequence after the checkpoint's), so a host
// costs the servers one consumer and, while nothing is committed, a pull
// request now and then; nothing is polled. The tail delivers this host's
// own commits too: they were folded when they were committed (ApplyOwn), so
// the projector steps past them without decoding them, and while nearly all
// it delivers is such, the tail is set aside and its consumer deleted (see
// pause.go): the projector then follows the host's own commits and fetches
// the other hosts' between them by direct gets. A caller that must
// see the stream as it is now (Sync, SyncTo) fetches a short gap itself by
// direct gets. Errors reading the stream (a server restarting) are
// retried; they never stop the projector.
func (p *Projector) Follow(parent context.Context, src Source) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	p.src.Store(&src)
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

// follow reads the stream's tail until ctx ends or a checkpoint fails.
func (p *Projector) follow(ctx context.Context, src Source) error {
	if p.opts.NoTail {
		<-ctx.Done()
		return ctx.Err()
	}
	failures := 0
	for {
		p.mu.Lock()
		p.tail = tailCount{}
		from := p.seq + 1
		p.mu.Unlock()
		p.tailOn.Store(true)
		err := src.Follow(ctx, from, p.applyTail)
		p.tailOn.Store(false)
		if errors.Is(err, errTailPaused) {
			err = p.pause(ctx, src)
			if err == nil {
				failures = 0
				continue
			}
		}
		var ae errApply
		switch {
		case errors.As(err, &ae):
			return ae.err
		case ctx.Err() != nil:
			return ctx.Err()
		}
		failures++
		if failures == 1 || failures%100 == 0 {
			p.log.Warn("reading the stream failed; retrying", "err", err, "failures", failures)
		}
		pause := min(time.Duration(failures)*100*time.Millisecond, tailRetryMax)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// applyTail applies one message the tail delivered. The tail delivers every
// message in stream order, so a sequence past the next one means the
// messages between are no longer in the stream; one folded already (by
// Sync's direct gets, or by ApplyOwn) is stepped past without decoding.
// When nearly every delivery brought nothing new, it returns errTailPaused
// (see pause.go).
func (p *Projector) applyTail(seq uint64, subject string, data []byte) error {
	p.mu.Lock()
	if seq > p.seq && !p.own[seq] {
		for p.seq+1 < seq {
			p.advanceLocked(p.seq+1, false)
		}
		pause := p.tail.brought()
		p.mu.Unlock()
		if err := p.applyStream(seq, subject, data); err != nil {
			return errApply{err}
		}
		if pause {
			return errTailPaused
		}
		return nil
	}
	for p.seq < seq {
		p.advanceLocked(p.seq+1, false) // seq itself, folded ahead; those before it are gone
	}
	pause := p.tail.skipped()
	pending := p.pending
	p.mu.Unlock()
	if err := p.checkpointDue(pending); err != nil {
		return errApply{err}
	}
	if pause {
		return errTailPaused
	}
	return nil
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
	p.askFlush()
	return nil
}

// askFlush asks Follow's flusher for a checkpoint now.
func (p *Projector) askFlush() {
	select {
	case p.flushNow <- struct{}{}:
	default: // asked already
	}
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
