package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepgate/stepgate/step"
)

// hostLease is this host's own lease. A call may start only while it is
// valid: its last successful renewal was sent less than ttl-margin ago
// (measured from before the write, so every other host, which counts from
// when it saw the write, counts the lease as live for longer) and it was not
// taken over since. Safe for concurrent use; a nil *hostLease is a host
// without a lease, always valid.
type hostLease struct {
	ls       *step.Leases
	host     string
	instance string
	cfg      LeaseConfig
	margin   time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu    sync.Mutex
	held  bool
	rev   uint64        // the record's revision while held
	epoch uint64        // one more at every acquisition
	sent  time.Time     // when the last successful write was sent
	down  bool          // renewals are failing (said once)
	twin  bool          // another process under this name was said
	moved chan struct{} // closed (and replaced) at every renewal, loss and acquisition

	takeovers atomic.Uint64
}

func newHostLease(ls *step.Leases, host, instance string, cfg LeaseConfig, now func() time.Time, log *slog.Logger) *hostLease {
	cfg = cfg.withDefaults()
	return &hostLease{ls: ls, host: host, instance: instance, cfg: cfg, margin: cfg.TTL / 5, now: now, log: log, moved: make(chan struct{})}
}

// elapsed is the time from since to now by the monotonic clock and by the
// wall clock, whichever is longer: the monotonic clock does not count a
// suspended machine's sleep, the wall clock does (and a wall clock set back
// does not shorten the monotonic count).
func elapsed(since, now time.Time) time.Duration {
	return max(now.Sub(since), now.Round(0).Sub(since.Round(0)))
}

// valid returns the lease's epoch while it is valid.
func (l *hostLease) valid() (uint64, bool) {
	if l == nil {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch, l.held && elapsed(l.sent, l.now()) < l.cfg.TTL-l.margin
}

// holds reports whether the lease is valid and is still the one of epoch.
func (l *hostLease) holds(epoch uint64) bool {
	now, ok := l.valid()
	return ok && now == epoch
}

// wait waits until the lease is valid under epoch (true), or is not the one
// of epoch any more — taken over, and maybe acquired again since — or ctx
// ends (false). A lease that lapsed because renewals failed (NATS
// unavailable) and is renewed again is the same lease.
func (l *hostLease) wait(ctx context.Context, epoch uint64) bool {
	if l == nil {
		return true
	}
	for {
		l.mu.Lock()
		now, held, moved := l.epoch, l.held, l.moved
		valid := held && elapsed(l.sent, l.now()) < l.cfg.TTL-l.margin
		l.mu.Unlock()
		switch {
		case now != epoch || !held:
			return false
		case valid:
			return true
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return false
		}
	}
}

// changed wakes the waiters; the caller holds l.mu.
func (l *hostLease) changed() {
	close(l.moved)
	l.moved = make(chan struct{})
}

// record is this host's record as it writes it now.
func (l *hostLease) record(state string) step.Lease {
	return step.Lease{Host: l.host, State: state, By: l.host, Instance: l.instance, TTL: l.cfg.TTL, At: l.now().UTC()}
}

// acquire takes the lease, whatever its record says (a restart of this host
// replaces its own record; a takeover's record is this host's to replace
// once it is back).
func (l *hostLease) acquire(ctx context.Context) error {
	// A bucket just made on a cluster has no leader for a moment ("no
	// responders"), and NATS may be restarting: wait for it, with backoff,
	// for acquirePatience at most.
	wait, patience := 10*time.Millisecond, time.Now().Add(acquirePatience)
	retry := func(err error) bool {
		if !step.Unavailable(err) || !time.Now().Add(wait).Before(patience) {
			return false
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		wait = min(2*wait, 500*time.Millisecond)
		return true
	}
	for attempt := 0; ; attempt++ {
		var rev uint64
		cur, err := l.ls.Get(ctx, l.host)
		switch {
		case err == nil, errors.Is(err, step.ErrBadLease):
			rev = cur.Revision
		case retry(err):
			attempt--
			continue
		case !errors.Is(err, step.ErrNotFound):
			return err
		}
		sent := l.now()
		n, err := l.ls.Put(ctx, l.record(step.LeaseHeld), rev)
		if err == nil {
			l.mu.Lock()
			l.held, l.rev, l.sent, l.down = true, n, sent, false
			l.epoch++
			l.changed()
			l.mu.Unlock()
			if cur.By != "" && cur.By != l.host {
				l.log.Warn("lease held again after another host took it over", "host", l.host, "taken_by", cur.By, "state", cur.State)
			}
			return nil
		}
		if retry(err) {
			attempt-- // the write may have been stored: the next Get says
			continue
		}
		if !errors.Is(err, step.ErrConflict) || attempt == 3 {
			return err
		}
	}
}

// renew writes the record again, naming its revision (each attempt bounded
// by half the TTL). A write refused because the record moved means another
// host took the lease over — unless the record is this process's own write
// whose answer was lost — and the lease is lost at once (no call starts
// under it) and acquired again.
func (l *hostLease) renew(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, l.cfg.TTL/2)
	defer cancel()
	l.mu.Lock()
	held, rev := l.held, l.rev
	l.mu.Unlock()
	var err error
	if held {
		sent := l.now()
		var n uint64
		if n, err = l.ls.Put(ctx, l.record(step.LeaseHeld), rev); err == nil {
			l.mu.Lock()
			l.rev, l.sent, l.down = n, sent, false
			l.changed()
			l.mu.Unlock()
			return
		}
		if errors.Is(err, step.ErrConflict) {
			cur, gerr := l.ls.Get(ctx, l.host)
			if gerr == nil && cur.State == step.LeaseHeld && cur.By == l.host && cur.Instance == l.instance {
				l.mu.Lock() // an earlier renewal of ours was stored after all
				l.rev = cur.Revision
				l.mu.Unlock()
				return
			}
			l.lose(cur)
			err = nil
		}
	}
	if err == nil {
		err = l.acquire(ctx)
	}
	if err != nil && parent.Err() == nil {
		l.mu.Lock()
		said := l.down
		l.down = true
		l.mu.Unlock()
		if !said {
			l.log.Warn("cannot renew this host's lease; no new call starts once it lapses (requests get the retryable code unavailable)", "host", l.host, "err", err)
		}
	}
}

// lose drops the lease: its record was written by someone else (cur).
func (l *hostLease) lose(cur step.LeaseEntry) {
	l.mu.Lock()
	l.held, l.rev = false, 0
	l.changed()
	twin := cur.By == l.host && cur.State == step.LeaseHeld
	said := l.twin
	l.twin = l.twin || twin
	l.mu.Unlock()
	switch {
	case twin && !said:
		l.log.Warn("another process holds this host's lease: two engines run under one host name (a copied data directory, or --host given twice); each stops starting calls whenever the other renews",
			"host", l.host, "instance", cur.Instance)
	case !twin:
		l.log.Warn("this host's lease was taken over (its renewals had stopped for longer than the lease's ttl): no new call starts until it is held again",
			"host", l.host, "taken_by", cur.By, "state", cur.State, "ttl", l.cfg.TTL)
	}
}

// run renews the lease every cfg.Renew until ctx ends.
func (l *hostLease) run(ctx context.Context) {
	t := time.NewTicker(l.cfg.Renew)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.renew(ctx)
		}
	}
}

// release marks the lease released (a clean stop that left nothing of its
// own in doubt): no host takes it over.
func (l *hostLease) release(ctx context.Context) error {
	l.mu.Lock()
	held, rev := l.held, l.rev
	l.held = false
	l.changed()
	l.mu.Unlock()
	if !held {
		return nil
	}
	_, err := l.ls.Put(ctx, l.record(step.LeaseReleased), rev)
	return err
}

// leaseEpoch returns the epoch of this host's lease when it is valid, for a
// caller about to start calls (see holds); else an error coded unavailable.
func (b *base) leaseEpoch() (uint64, error) {
	epoch, ok := b.lease.valid()
	if !ok {
		return 0, fmt.Errorf("%w: host %s does not hold its lease (renewals failing or taken over by another host): it starts no call until it does; send again",
			ErrUnavailable, b.cfg.Host)
	}
	return epoch, nil
}

// leaseFor reports whether a call decided under lease epoch may start:
// once the lease is valid under epoch, waiting for it while renewals fail
// (for outagePatience at most, as a commit waits for NATS); false when the
// lease is not the one of epoch any more.
func (b *base) leaseFor(ctx context.Context, epoch uint64) bool {
	if b.lease.holds(epoch) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, outagePatience)
	defer cancel()
	return b.lease.wait(ctx, epoch)
}

// Lease returns what the host knows of its own lease.
func (b *base) Lease() LeaseStatus {
	if b.lease == nil {
		return LeaseStatus{}
	}
	_, held := b.lease.valid()
	return LeaseStatus{On: true, Held: held, Takeovers: b.lease.takeovers.Load()}
}
