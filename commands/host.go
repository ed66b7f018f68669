package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

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
// command handlers on top. It is the library entry point: [OpenHost] and
// [Host.Run] for a caller that runs the host's actors itself, [StartHost]
// and [Host.Close] for one that wants them run in the background.
type Host struct {
	*Engine
	Log  *step.Log
	Proj *projection.Projector

	js      jetstream.JetStream
	hcfg    HostConfig
	ran     chan struct{} // closed when Run is called: it runs once
	runOnce sync.Once
	ready   chan struct{} // closed once the host serves
	done    chan struct{} // closed when Run has returned
	err     error         // what Run returned; read after done is closed

	// bg is the background Run of StartHost: Close cancels it and waits.
	bgCancel context.CancelFunc
	bgOnce   sync.Once
}

// OpenHost opens the log on js and the projection checkpoint in StateDir,
// and builds the command handlers on them. Nothing runs yet, and commands
// see only what the checkpoint holds: [Host.Run] follows the log and serves.
// A host that never runs is let go with [Host.Close].
func OpenHost(ctx context.Context, js jetstream.JetStream, tools *executor.Registry, cfg HostConfig) (*Host, error) {
	if cfg.StateDir == "" {
		return nil, fmt.Errorf("open host: a state directory is required: %w", ErrInvalidRequest)
	}
	if !cfg.Lease.Off {
		if err := cfg.Lease.Validate(); err != nil {
			return nil, fmt.Errorf("open host: %w", err)
		}
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Second
	}
	if cfg.OutputSweepInterval <= 0 {
		cfg.OutputSweepInterval = time.Hour
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("open host: %w", err)
	}
	log, err := step.Open(ctx, js, cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("open host: %w", err)
	}
	proj, err := projection.Open(filepath.Join(cfg.StateDir, "projections.db"), cfg.Projector)
	if err != nil {
		return nil, fmt.Errorf("open host: %w", err)
	}
	eng, err := New(log, proj, tools, cfg.Engine)
	if err != nil {
		return nil, errors.Join(err, proj.Close())
	}
	return &Host{Engine: eng, Log: log, Proj: proj, js: js, hcfg: cfg,
		ran: make(chan struct{}), ready: make(chan struct{}), done: make(chan struct{})}, nil
}

// StartHost opens a host ([OpenHost]) and runs it in the background
// ([Host.Run]) until [Host.Close]. It returns once the host serves: the
// projection has caught up with the stream as it was at start, so the
// first command sees every earlier commit. ctx bounds the start only.
func StartHost(ctx context.Context, js jetstream.JetStream, tools *executor.Registry, cfg HostConfig) (*Host, error) {
	h, err := OpenHost(ctx, js, tools, cfg)
	if err != nil {
		return nil, fmt.Errorf("start host: %w", err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.bgCancel = cancel
	go func() { _ = h.Run(rctx) }() // its result is Err's
	select {
	case <-h.ready:
		return h, nil
	case <-h.done:
		cancel()
		return nil, fmt.Errorf("start host: %w", h.err)
	case <-ctx.Done():
		cancel()
		<-h.done
		return nil, fmt.Errorf("start host: %w", context.Cause(ctx))
	}
}

// Ready is closed once the host serves (see [Host.Run]).
func (h *Host) Ready() <-chan struct{} { return h.ready }

// Done is closed when the host has stopped: its Run returned (after Close,
// a cancelled ctx, or an actor failing on its own, such as the projector
// meeting a commit it cannot apply); Err then says why.
func (h *Host) Done() <-chan struct{} { return h.done }

// Err returns why the host stopped, once Done is closed; nil after a clean
// stop and while it runs.
func (h *Host) Err() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// Close stops a host that [StartHost] started and waits until it has
// stopped (see [Host.Run] for what stopping does); a host that was opened
// and never run has its checkpoint closed. It is safe to call concurrently
// and more than once; every call returns the same error. A host whose
// caller runs it stops when the caller cancels Run's ctx; Close then only
// waits for that.
func (h *Host) Close() error {
	h.bgOnce.Do(func() {
		if h.bgCancel != nil {
			h.bgCancel()
		}
	})
	h.runOnce.Do(func() { // never ran: nothing but the checkpoint is open
		close(h.ran)
		h.err = h.Proj.Close()
		close(h.done)
	})
	<-h.done
	return h.err
}
