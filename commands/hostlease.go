package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/step"
)

// releaseTimeout bounds the write that releases a lease at Close.
const releaseTimeout = 2 * time.Second

// takeLease opens the lease bucket and takes this host's lease (before the
// host recovers anything: a read-only call recovery runs again starts under
// it). Run keeps renewing it and watching the other hosts' until it stops.
func (h *Host) takeLease(ctx context.Context) (*hostLease, error) {
	ls, err := step.OpenLeases(ctx, h.js, h.Log)
	if err != nil {
		return nil, err
	}
	e := h.Engine
	l := newHostLease(ls, e.cfg.Host, e.cfg.IDs.New(time.Now()), h.hcfg.Lease, time.Now, e.cfg.Logger)
	if err := l.acquire(ctx); err != nil {
		return nil, fmt.Errorf("take this host's lease: %w", err)
	}
	e.lease = l
	return l, nil
}

// releaseLease releases the lease of a stopped host when it left nothing of
// its own in doubt (a clean stop: no host needs to take it over).
// Otherwise the lease lapses and another host takes over what is left,
// unless this host is back first. Releasing is best effort: its failure is
// logged.
func (h *Host) releaseLease() {
	if h.lease == nil || h.recovery.leftInDoubt() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := h.lease.release(ctx); err != nil {
		h.cfg.Logger.Warn("releasing this host's lease (another host takes it over once it lapses)", "host", h.cfg.Host, "err", err)
	}
}
