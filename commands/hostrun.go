package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	group "github.com/oklog/run"
)

// closeCatchUp bounds how long a stopping host lets the projector catch up.
const closeCatchUp = 3 * time.Second

// Run runs the host's actors until ctx is cancelled or one of them stops on
// its own:
//   - the follower: the projector applying the log's commits as they come;
//   - the start: once the projection has caught up with the stream as it
//     was when Run began, the host takes its lease (unless it is off),
//     recovers what it left in doubt, and [Host.Ready] is closed;
//   - the lease's renewal and the watch over other hosts' leases;
//   - the watch over the other hosts' locations (see announce);
//   - the sweeper: expired and stale tickets every SweepInterval, expired
//     output files at start and every OutputSweepInterval.
//
// When ctx is cancelled, the projector catches up with the stream (for a
// few seconds at most), every actor stops, waiting AwaitSteps are answered
// [ErrUnavailable] (ask again: another host, or this one once it is back),
// the lease is released when this
// host left nothing in doubt (otherwise it lapses and another host takes
// over), and the final checkpoint is written and closed, so a clean restart
// replays nothing. Run returns nil after ctx was cancelled, or the error
// that stopped it (a start step, or the projector meeting a commit it
// cannot apply). A host runs once: a second Run is an error.
func (h *Host) Run(ctx context.Context) error {
	first := false
	h.runOnce.Do(func() { first = true; close(h.ran) })
	if !first {
		return fmt.Errorf("run host: it runs once: %w", ErrInvalidRequest)
	}
	err := h.run(ctx)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil // cancelled while starting: a clean stop
	}
	h.awaiter.waits.stop()  // waiters are answered unavailable, the watcher returns
	h.registrar.mcp.close() // stdio servers' processes are stopped
	h.StopSandboxes()       // and the warm sandbox helpers
	h.releaseLease()
	h.err = errors.Join(err, h.Proj.Close())
	close(h.done)
	return h.err
}

// run is Run's actor group: the follower and everything that serves on it.
func (h *Host) run(ctx context.Context) error {
	last, err := h.Log.LastSeq(ctx)
	if err != nil {
		return fmt.Errorf("run host: %w", err)
	}
	// The follower outlives ctx: a stopping host catches up first.
	fctx, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
	sctx, stopServing := context.WithCancel(ctx)
	var g group.Group
	g.Add(func() error {
		if err := h.Proj.Follow(fctx, h.Log); fctx.Err() == nil {
			return fmt.Errorf("projector stopped: %w", err)
		}
		return nil
	}, func(error) { stopFollowing() })
	g.Add(func() error { return h.serve(sctx, last) }, func(error) { stopServing() })
	return g.Run()
}

// serve starts the host once the projection holds every commit up to last,
// then runs the lease's and the sweeper's actors until ctx is cancelled;
// it catches the projector up before it returns.
func (h *Host) serve(ctx context.Context, last uint64) error {
	if err := h.Proj.SyncWith(ctx, h.Log, last); err != nil {
		return fmt.Errorf("start host: catch up to stream sequence %d: %w", last, err)
	}
	var g group.Group
	actors, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	if !h.hcfg.Lease.Off {
		l, err := h.takeLease(ctx)
		if err != nil {
			return fmt.Errorf("start host: %w", err)
		}
		g.Add(func() error { l.run(actors); return nil }, func(error) { stop() })
		g.Add(func() error { newTakeovers(h.Engine, l).run(actors); return nil }, func(error) { stop() })
	}
	follow, err := h.announce(actors)
	if err != nil {
		return fmt.Errorf("start host: announce its locations: %w", err)
	}
	if follow != nil {
		g.Add(func() error { follow(actors); return nil }, func(error) { stop() })
	}
	if err := h.Recover(ctx); err != nil {
		return fmt.Errorf("start host: %w", err)
	}
	g.Add(func() error { h.sweep(actors); return nil }, func(error) { stop() })
	g.Add(func() error {
		<-ctx.Done()
		h.catchUp()
		return nil
	}, func(error) {})
	close(h.ready)
	return g.Run()
}

// catchUp lets the projector catch up with the stream, for closeCatchUp at
// most: best effort, the log stays the truth.
func (h *Host) catchUp() {
	ctx, cancel := context.WithTimeout(context.Background(), closeCatchUp)
	defer cancel()
	_ = h.Proj.Sync(ctx, h.Log)
}

// sweep settles expired and stale tickets every SweepInterval and deletes
// expired output files at once and every OutputSweepInterval, until ctx is
// cancelled.
func (h *Host) sweep(ctx context.Context) {
	tickets, outputs := time.NewTicker(h.hcfg.SweepInterval), time.NewTicker(h.hcfg.OutputSweepInterval)
	defer tickets.Stop()
	defer outputs.Stop()
	sweepOutputs := func() {
		if _, err := h.SweepOutputs(ctx); err != nil && ctx.Err() == nil {
			h.cfg.Logger.Warn("sweeping output files", "err", err)
		}
	}
	sweepOutputs()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tickets.C:
			if err := h.SweepTickets(ctx); err != nil && ctx.Err() == nil {
				h.cfg.Logger.Warn("settling expired or stale tickets", "err", err)
			}
		case <-outputs.C:
			sweepOutputs()
		}
	}
}
