package commands

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stepgate/stepgate/step"
)

// peer is another host's lease record as this host last saw it change.
type peer struct {
	rev   uint64
	state string
	seen  time.Time // this host's clock when the revision was first seen
}

// takeovers watches the other hosts' leases and takes over the lease of a
// host whose record did not change for a TTL, as this host counts it (no
// clock of another host is read). It claims the record by writing it with the
// revision it saw: if the host renewed meanwhile, or another host claimed it
// first, the write is refused and nothing happens. The one host whose claim
// is stored settles what the gone host left in doubt exactly as that host's
// restart would (recoverHost), keeping its claim fresh while it does, and
// then marks the record settled. A claim whose taker stopped before it
// settled goes quiet and is taken over again.
type takeovers struct {
	e     *Engine
	lease *hostLease

	mu    sync.Mutex
	peers map[string]peer
	busy  map[string]bool // takeovers running here
	blind bool            // this host lacked its own lease since the last check
	wg    sync.WaitGroup
}

func newTakeovers(e *Engine, l *hostLease) *takeovers {
	return &takeovers{e: e, lease: l, peers: map[string]peer{}, busy: map[string]bool{}}
}

// run watches the bucket and checks for expired leases every renewal
// interval until ctx ends; a failed watch is started again. It returns once
// every takeover it started has returned.
func (t *takeovers) run(ctx context.Context) {
	defer t.wg.Wait()
	t.wg.Go(func() { t.check(ctx) })
	wait := outageFirstWait
	for ctx.Err() == nil {
		ch, err := t.lease.ls.Watch(ctx)
		if err == nil {
			wait = outageFirstWait
			for u := range ch {
				t.saw(u)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, outageWaitLimit)
	}
}

// saw records one update of the bucket. A revision seen again (a watch
// started again) keeps the time it was first seen.
func (t *takeovers) saw(u *step.LeaseUpdate) {
	t.e.fleet.sawLease(u)
	if u == nil || u.Host == t.lease.host || u.Err != nil && !u.Deleted {
		return // the end of the initial values, this host's own, or not one of ours
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if u.Deleted {
		delete(t.peers, u.Host)
		return
	}
	if p, ok := t.peers[u.Host]; ok && p.rev == u.Revision {
		return
	}
	t.peers[u.Host] = peer{rev: u.Revision, state: u.Lease.State, seen: t.lease.now()}
}

// check looks for expired leases every renewal interval, while this host
// holds its own, and takes each over.
func (t *takeovers) check(ctx context.Context) {
	tick := time.NewTicker(t.lease.cfg.Renew)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_, valid := t.lease.valid()
		for host, rev := range t.due(t.lease.now(), valid) {
			t.wg.Go(func() {
				defer func() { t.mu.Lock(); delete(t.busy, host); t.mu.Unlock() }()
				if _, err := t.takeOver(ctx, host, rev); err != nil && ctx.Err() == nil {
					t.e.cfg.Logger.Warn("taking over a host's lease", "host", host, "err", err)
				}
			})
		}
	}
}

// due returns the hosts (and the revisions seen) whose lease record, held or
// taken, has not changed for a TTL as of now, and marks them busy. A host
// without its own lease (valid false) takes over no one; and while it had
// none it may not have seen the others' renewals either (NATS, or the
// bucket, unavailable to all), so that time does not count against them.
func (t *takeovers) due(now time.Time, valid bool) map[string]uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !valid {
		t.blind = true
		return nil
	}
	if t.blind {
		for host, p := range t.peers {
			p.seen = now
			t.peers[host] = p
		}
		t.blind = false
	}
	var out map[string]uint64
	for host, p := range t.peers {
		if t.busy[host] || p.state != step.LeaseHeld && p.state != step.LeaseTaken || elapsed(p.seen, now) < t.lease.cfg.TTL {
			continue
		}
		if out == nil {
			out = map[string]uint64{}
		}
		t.busy[host] = true
		out[host] = p.rev
	}
	return out
}

// takeOver claims gone's lease at revision rev and, when the claim is
// stored, settles what gone left in doubt. won is false when the record
// had moved (gone renewed, or another host claimed it first).
func (t *takeovers) takeOver(ctx context.Context, gone string, rev uint64) (won bool, err error) {
	l := t.lease
	claim := func() step.Lease {
		return step.Lease{Host: gone, State: step.LeaseTaken, By: l.host, Instance: l.instance, TTL: l.cfg.TTL, At: l.now().UTC()}
	}
	at, err := l.ls.Put(ctx, claim(), rev)
	if errors.Is(err, step.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	l.takeovers.Add(1)
	log := t.e.cfg.Logger
	log.Warn("a host's lease expired: taking over what it left in doubt", "host", gone, "ttl", l.cfg.TTL)

	// Keep the claim fresh while settling, so that no third host takes
	// it over meanwhile.
	hctx, stop := context.WithCancel(ctx)
	last := make(chan uint64, 1)
	go func() {
		tick := time.NewTicker(l.cfg.Renew)
		defer tick.Stop()
		for {
			select {
			case <-hctx.Done():
				last <- at
				return
			case <-tick.C:
			}
			n, err := l.ls.Put(hctx, claim(), at)
			switch {
			case err == nil:
				at = n
			case errors.Is(err, step.ErrConflict): // gone is back, say
				last <- 0
				return
			}
		}
	}()
	steps, err := t.e.recovery.settleFor(ctx, gone)
	stop()
	at = <-last
	if err != nil {
		return true, fmt.Errorf("take over host %s: %w (its lease is taken over again once the claim goes quiet)", gone, err)
	}
	log.Warn("took over a host's lease: settled what it left in doubt", "host", gone, "steps", len(steps))
	if at == 0 {
		return true, nil
	}
	done := claim()
	done.State, done.Steps = step.LeaseSettled, len(steps)
	if _, err := l.ls.Put(ctx, done, at); err != nil && !errors.Is(err, step.ErrConflict) {
		return true, fmt.Errorf("take over host %s: mark its lease settled: %w", gone, err)
	}
	return true, nil
}

// settleFor settles, on this host, what gone left in doubt: as RecoverHost,
// once the projection holds everything the stream held.
func (h *recovery) settleFor(ctx context.Context, gone string) ([]RecoveredStep, error) {
	if err := h.proj.Sync(ctx, h.log); err != nil {
		return nil, err
	}
	return h.recoverHost(ctx, gone)
}
