package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// lockRun serialises this host's commits to one run.
func (b *base) lockRun(run string) *runLock {
	return b.locks.lock(run)
}

// commit appends c to its run, standing where the caller read it (see
// runAt): c names the run's last commit as its predecessor and expects its
// last sequence. A run that diverged takes no commit ([ErrRunDiverged]).
// The commit is folded into the projection at once (read-your-writes), and
// where the run then stands is returned. While NATS is unavailable the same
// commit is tried again (see commitThrough).
func (b *base) commit(ctx context.Context, c *events.Commit, from runAt) (runAt, error) {
	if err := divergedErr(c.Run, from.diverged); err != nil {
		return runAt{}, err
	}
	c.Prev = from.prev
	sp := b.tr.startCommit(ctx, c)
	seq, err := b.commitThrough(ctx, c, from.seq)
	endCommit(sp, seq, err)
	b.observeCommit(c, err)
	if err != nil {
		return runAt{}, err
	}
	if err := b.proj.ApplyOwn(seq, c); err != nil {
		return runAt{}, fmt.Errorf("fold own commit %s at %d: %w", c.ID, seq, err)
	}
	return runAt{seq: seq, prev: c.ID}, nil
}

// newCommit builds the envelope of a commit: a fresh id, the clock's time
// and this host's name around evs. A commit outside runs (the registry, a
// project's grants, the output sweeps) has run "" and step 0. It is the one
// place a commit is built.
func (b *base) newCommit(run string, n int, kind events.Kind, evs ...events.Event) events.Commit {
	now := b.cfg.Clock()
	return events.Commit{ID: b.cfg.IDs.New(now), Run: run, Step: n, Kind: kind, At: now.UTC(), Host: b.cfg.Host, Events: evs}
}

// commitSubject commits evs to a subject outside runs (a registry scope,
// a project's grants, the output sweeps), expecting the subject's last
// sequence as read just before; after a lost race it reads it again (three
// times at most). The commit is folded here at once.
func (b *base) commitSubject(ctx context.Context, subject string, kind events.Kind, evs []events.Event) error {
	for attempt := 0; ; attempt++ {
		last, err := b.log.SubjectLastSeq(ctx, subject)
		if err != nil {
			return err
		}
		c := b.newCommit("", 0, kind, evs...)
		seq, err := b.log.CommitTo(ctx, subject, &c, last)
		b.observeCommit(&c, err)
		if errors.Is(err, step.ErrConflict) && attempt < 3 {
			continue
		}
		if err != nil {
			return err
		}
		return b.proj.ApplyOwn(seq, &c)
	}
}
