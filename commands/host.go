package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// closeCatchUp bounds how long Close waits for the projector to catch up.
const closeCatchUp = 3 * time.Second

// HostConfig configures a [Host].
type HostConfig struct {
	// StateDir holds this host's projection checkpoints. Required.
	StateDir string
	// Stream sets up the log's stream.
	Stream step.StreamConfig
	// Engine configures command handling.
	Engine Config
	// Projector tunes checkpointing.
	Projector projection.Options
	// SweepInterval is how often the host settles expired and stale
	// tickets; default one second.
	SweepInterval time.Duration
	// OutputSweepInterval is how often the host deletes expired output
	// files (it also does at start); default one hour.
	OutputSweepInterval time.Duration
	// Lease is the host's lease (see LeaseConfig); the zero value is the
	// default lease.
	Lease LeaseConfig
}

// Host is one engine host: the log, a projector following it, and the
// command handlers on top. It is the library entry point.
type Host struct {
	*Engine
	Log  *step.Log
	Proj *projection.Projector

	cancel  context.CancelFunc
	done    chan struct{} // closed when the projector stops
	sweeper chan struct{} // closed when the ticket sweeper stops
	err     error         // why it stopped; read after done is closed
	closed  bool

	leaseStop func() // stops renewing and watching; nil without a lease
}

// StartHost opens the log on js, loads the projection checkpoint from
// StateDir, replays the tail of the stream and starts following it. It
// returns once the projection has caught up with the stream as it was at
// start, so the first command sees every earlier commit.
func StartHost(ctx context.Context, js jetstream.JetStream, tools *executor.Registry, cfg HostConfig) (*Host, error) {
	if cfg.StateDir == "" {
		return nil, fmt.Errorf("start host: a state directory is required: %w", ErrInvalidRequest)
	}
	if !cfg.Lease.Off {
		if err := cfg.Lease.Validate(); err != nil {
			return nil, fmt.Errorf("start host: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	log, err := step.Open(ctx, js, cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	proj, err := projection.Open(filepath.Join(cfg.StateDir, "projections.db"), cfg.Projector)
	if err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	eng, err := New(log, proj, tools, cfg.Engine)
	if err != nil {
		proj.Close()
		return nil, err
	}
	last, err := log.LastSeq(ctx)
	if err != nil {
		proj.Close()
		return nil, fmt.Errorf("start host: %w", err)
	}
	fctx, cancel := context.WithCancel(context.Background())
	h := &Host{Engine: eng, Log: log, Proj: proj, cancel: cancel, done: make(chan struct{})}
	go func() {
		h.err = proj.Follow(fctx, log)
		close(h.done)
	}()
	if err := proj.WaitFor(ctx, last); err != nil {
		return nil, errors.Join(fmt.Errorf("start host: catch up to stream sequence %d: %w", last, err), h.Close())
	}
	if !cfg.Lease.Off {
		if err := h.holdLease(ctx, js, cfg.Lease); err != nil {
			return nil, errors.Join(fmt.Errorf("start host: %w", err), h.Close())
		}
	}
	if err := eng.Recover(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("start host: %w", err), h.Close())
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Second
	}
	if cfg.OutputSweepInterval <= 0 {
		cfg.OutputSweepInterval = time.Hour
	}
	h.sweeper = make(chan struct{})
	go func() {
		defer close(h.sweeper)
		tickets, outputs := time.NewTicker(cfg.SweepInterval), time.NewTicker(cfg.OutputSweepInterval)
		defer tickets.Stop()
		defer outputs.Stop()
		sweepOutputs := func() {
			if _, err := eng.SweepOutputs(fctx); err != nil && fctx.Err() == nil {
				eng.cfg.Logger.Warn("sweeping output files", "err", err)
			}
		}
		sweepOutputs()
		for {
			select {
			case <-fctx.Done():
				return
			case <-tickets.C:
				if err := eng.SweepTickets(fctx); err != nil && fctx.Err() == nil {
					eng.cfg.Logger.Warn("settling expired or stale tickets", "err", err)
				}
			case <-outputs.C:
				sweepOutputs()
			}
		}
	}()
	return h, nil
}

// Done is closed when the projector stops: after Close, or on its own (a
// commit it cannot apply); Err then says why.
func (h *Host) Done() <-chan struct{} { return h.done }

// Err returns why the projector stopped, once Done is closed; nil after a
// clean Close.
func (h *Host) Err() error {
	select {
	case <-h.done:
		if errors.Is(h.err, context.Canceled) {
			return nil
		}
		return h.err
	default:
		return nil
	}
}

// Close lets the projector catch up with the stream (for a few seconds at
// most), stops following, writes the final checkpoint and closes it, so a
// clean restart replays nothing. Not safe to call concurrently; a second call
// returns nil.
func (h *Host) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), closeCatchUp)
	if last, err := h.Log.LastSeq(ctx); err == nil {
		_ = h.Proj.WaitFor(ctx, last) // best effort: the log stays the truth
	}
	cancel()
	h.cancel()
	<-h.done
	if h.sweeper != nil {
		<-h.sweeper
	}
	h.dropLease()
	return errors.Join(h.Err(), h.Proj.Close())
}
