package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
)

// releaseTimeout bounds the write that releases a lease at Close.
const releaseTimeout = 2 * time.Second

// holdLease opens the lease bucket, takes this host's lease (before the
// host recovers anything: a read-only call recovery runs again starts under
// it), and keeps renewing it and watching the other hosts' until Close.
func (h *Host) holdLease(ctx context.Context, js jetstream.JetStream, cfg LeaseConfig) error {
	ls, err := step.OpenLeases(ctx, js, h.Log)
	if err != nil {
		return err
	}
	e := h.Engine
	l := newHostLease(ls, e.cfg.Host, e.cfg.IDs.New(time.Now()), cfg, time.Now, e.cfg.Logger)
	if err := l.acquire(ctx); err != nil {
		return fmt.Errorf("take this host's lease: %w", err)
	}
	e.lease = l
	lctx, cancel := context.WithCancel(context.Background())
	renewed, watched := make(chan struct{}), make(chan struct{})
	go func() { defer close(renewed); l.run(lctx) }()
	go func() { defer close(watched); newTakeovers(e, l).run(lctx) }()
	h.leaseStop = func() { cancel(); <-renewed; <-watched }
	return nil
}

// dropLease stops renewing and watching, and releases the lease when this
// host left nothing of its own in doubt (a clean stop: no host needs to
// take it over). Otherwise the lease lapses and another host takes over
// what is left, unless this host is back first.
func (h *Host) dropLease() {
	if h.leaseStop == nil {
		return
	}
	h.leaseStop()
	h.leaseStop = nil
	if h.leftInDoubt() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := h.lease.release(ctx); err != nil {
		h.cfg.Logger.Warn("releasing this host's lease (another host takes it over once it lapses)", "host", h.cfg.Host, "err", err)
	}
}

// leftInDoubt reports whether an open run's open step was committed last by
// this host and has something recovery would settle: a call cleared to run
// without a result, or every call terminal but the step not finalized.
func (e *Engine) leftInDoubt() bool {
	for _, run := range e.proj.OpenRuns() {
		if r, err := e.header(run); err == nil && needsRecovery(&r, e.cfg.Host) {
			return true
		}
	}
	return false
}
