package projection

import (
	"context"
	"errors"
	"time"
)

// A host that commits folds its own commits as it makes them (ApplyOwn), so
// the tail, which delivers every message of the stream, brings it its own
// commits a second time: one more message from the server per commit, about
// a third of a busy host's throughput where server and host share the
// cores. So the follower sets the tail aside while nearly all it delivers is
// already folded, and follows the stream through the host's commits
// instead: each commit's acknowledgement names its stream sequence, so the
// other hosts' commits before it are the gaps between this host's own, which
// the follower fetches by direct gets. It reads the tail again, from where
// the projection stands, as soon as this host stops committing for
// tailQuiet, or a gap is longer than directGetMax (another host is busy
// too: the tail brings that best), or a caller must wait for one. While the
// tail is set aside its consumer is deleted: the stream holds fewer
// consumers, never more.
const (
	// tailWindow is how many deliveries of the tail are judged together.
	tailWindow = 128
	// tailIdleMin of a window's deliveries that brought nothing new set the
	// tail aside.
	tailIdleMin = tailWindow * 7 / 8
	// tailQuiet is how long the tail stays set aside after this host's last
	// commit.
	tailQuiet = 250 * time.Millisecond
)

// errTailPaused ends a reading of the tail that brings this host nothing but
// its own commits.
var errTailPaused = errors.New("the tail brings nothing but this host's own commits")

// tailCount judges the tail by its deliveries, tailWindow at a time (under
// the projector's lock).
type tailCount struct {
	seen, idle int
}

// brought counts a delivery folded from the tail; it reports whether the
// window just judged sets the tail aside. A window closed by such a
// delivery is judged like any other: under load the tail often delivers the
// host's own commit before the host folds it (late, below), and a window
// ending on one must not keep the tail on for another window.
func (t *tailCount) brought() bool { return t.add() }

// skipped counts a delivery folded here before; it reports whether the
// window just judged sets the tail aside.
func (t *tailCount) skipped() bool {
	t.idle++
	return t.add()
}

// late turns a delivery counted as brought into one that brought nothing:
// the host's own commit, delivered before the host folded it.
func (t *tailCount) late() {
	if t.seen > t.idle {
		t.idle++
	}
}

func (t *tailCount) add() bool {
	t.seen++
	if t.seen < tailWindow {
		return false
	}
	pause := t.idle >= tailIdleMin
	*t = tailCount{}
	return pause
}

// resumeTail asks a tail set aside to be read again.
func (p *Projector) resumeTail() {
	if p.tailOn.Load() {
		return
	}
	select {
	case p.resume <- struct{}{}:
	default: // asked already
	}
}

// pause keeps the projection up to date without the tail while this host
// commits: it steps past the host's own commits and fetches the gaps between
// them by direct gets, until the tail should be read again (see above). It
// returns nil then, and an error only when a checkpoint fails or ctx ends.
func (p *Projector) pause(ctx context.Context, src Source) error {
	select {
	case <-p.resume: // asked while the tail was still read
	default:
	}
	quiet := time.NewTicker(tailQuiet)
	defer quiet.Stop()
	seen := p.ownN.Load()
	p.log.Debug("the tail is set aside while this host commits", "seq", p.Seq())
	for {
		changed := p.Changed()
		if long, err := p.fillGaps(ctx, src); err != nil || long {
			var ae errApply
			if errors.As(err, &ae) {
				return err
			}
			return nil // the tail brings a long gap, and retries what failed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.resume:
			return nil
		case <-quiet.C:
			n := p.ownN.Load()
			if n == seen {
				return nil
			}
			seen = n
		case <-changed:
		}
	}
}

// fillGaps folds the other hosts' commits between this host's own ones, by
// direct gets, and writes a checkpoint when one is due. long reports a gap
// longer than directGetMax, left for the tail. A caller fetching already
// (SyncTo) does the same work: fillGaps leaves it to that caller.
func (p *Projector) fillGaps(ctx context.Context, src Source) (long bool, err error) {
	select {
	case p.fetching <- struct{}{}:
	default:
		return false, nil
	}
	defer func() { <-p.fetching }()
	for {
		p.mu.Lock()
		last, pending := p.ownMax, p.pending
		p.mu.Unlock()
		if err := p.checkpointDue(pending); err != nil {
			return false, errApply{err}
		}
		from, gap := p.nextGap(last)
		switch {
		case gap == 0:
			return false, nil
		case gap > directGetMax:
			return true, nil
		}
		if err := p.fetchGap(ctx, src, from, gap); err != nil {
			return false, err
		}
	}
}
