package projection

import (
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// applyLocked folds the message at seq on subject: c is its envelope as
// admitted, or reason says why it was not (see admit). A commit outside runs
// goes into the indexes, a run commit into its run; one its run cannot apply
// is quarantined like one that was not admitted, and on a run subject the
// run's last sequence still moves past it. It returns the reason the
// message was quarantined (nil: applied), and an error only when the
// checkpoint could not be read. Its caller wakes the waiters.
func (p *Projector) applyLocked(seq uint64, subject string, c *events.Commit, reason error) (quarantined, err error) {
	if reason == nil && c.Run == "" {
		p.indexOutside(seq, c)
		return nil, nil
	}
	var r *Run
	run, onRun := events.IsRunSubject(subject)
	if onRun && len(run) <= runIDMax {
		if r, err = p.runLocked(run); err != nil {
			return nil, err
		}
	}
	if reason == nil {
		if r != nil && seq <= r.LastSeq {
			return nil, nil // applied already by its own host (read-your-writes)
		}
		fresh := r == nil
		if fresh {
			r = &Run{ID: run}
		} else if err := p.decodeLocked(r, c.Step); err != nil {
			return nil, err
		}
		before := len(r.Steps)
		if reason = r.Apply(seq, c); reason == nil {
			p.runs[run] = r
			p.markLocked(r, c, before)
			p.indexRun(r, c)
			return nil, nil
		}
		if errors.Is(reason, ErrDiverged) { // r is marked, and past seq: not a quarantine
			p.runs[run] = r
			p.dirtyLocked(run)
			if r.Diverged.Seq == seq {
				p.log.Warn("run diverged: its history lost a write; it takes no more steps", "run", run, "seq", seq, "err", reason)
			}
			return nil, nil
		}
		if fresh {
			r = nil // a run that never started is not made up
		}
	}
	p.quarantineLocked(seq, subject, c, reason)
	if r != nil && seq > r.LastSeq {
		r.Skip(seq)
		p.dirtyLocked(run)
	}
	return fmt.Errorf("stream sequence %d on %s: %w: %w", seq, subject, ErrQuarantined, reason), nil
}

// ApplyOwn folds a commit that this host just committed at seq, so that
// the committing handler reads its own write without waiting for the
// stream. The stream's copy is skipped later because seq ≤ the run's LastSeq.
// The caller must hold the run's commit order (it committed with the run's
// last sequence as expectation and the server accepted it). A commit the
// projection cannot apply is quarantined as the stream's copy would be, and
// the error wraps [ErrQuarantined]: the projection stays whole, but the
// caller committed something it should not have.
func (p *Projector) ApplyOwn(seq uint64, c *events.Commit) error {
	if c == nil {
		return fmt.Errorf("apply own commit at %d: no commit: %w", seq, events.ErrMalformed)
	}
	subject := ownSubject(c)
	p.ownN.Add(1)
	return p.applyAt(seq, subject, c, checkEnvelope(subject, c), true)
}

// ApplyFrom folds a message read from the stream out of stream order: a
// run's commits read by its subject after this host lost a commit race.
// Like ApplyOwn it may run ahead of the follower, which then skips the
// message. A message that cannot be folded is quarantined (returning nil):
// the run's last sequence moves past it, so the next commit can be made.
func (p *Projector) ApplyFrom(seq uint64, subject string, data []byte) error {
	c, reason := admit(subject, data)
	err := p.applyAt(seq, subject, c, reason, false)
	if errors.Is(err, ErrQuarantined) {
		return nil
	}
	return err
}

// applyAt folds the message at seq ahead of the follower; own says this
// host committed it. A commit right after the projector's sequence moves
// the projector on (and past the commits folded ahead of it that follow),
// so a host that commits alone needs nothing from the stream to stay whole;
// the checkpoint it makes due is Follow's to write (a commit already made
// does not fail on it).
func (p *Projector) applyAt(seq uint64, subject string, c *events.Commit, reason error, own bool) error {
	p.mu.Lock()
	if seq <= p.seq {
		if own {
			p.tail.late() // the tail delivered it first: a delivery this host did not need
		}
		p.mu.Unlock()
		return nil
	}
	quarantined, err := p.applyLocked(seq, subject, c, reason)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	if seq != p.seq+1 {
		p.own[seq] = true
		p.ownMax = max(p.ownMax, seq)
		p.notifyLocked()
		p.mu.Unlock()
		return quarantined
	}
	p.advanceLocked(seq, false)
	for p.own[p.seq+1] {
		p.advanceLocked(p.seq+1, false)
	}
	pending := p.pending
	p.mu.Unlock()
	if pending >= p.opts.FlushEvery {
		p.askFlush() // the follower writes it, or stops on its failure
	}
	return quarantined
}
