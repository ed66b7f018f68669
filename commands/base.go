package commands

import (
	"context"
	"sync"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// base is what every handler works on: the log it commits to, the read
// model folded from it, the engine's configuration, the run locks (one
// committer per run per host), the output store (the one output boundary),
// the runs' pinned configurations and this host's lease.
type base struct {
	log   *step.Log
	proj  *projection.Projector
	cfg   Config
	store *executor.OutputStore
	floor int // resultFloor of the output store
	tr    tracer

	locks   runLocks     // one committer per run per host
	configs sync.Map     // run id → *runConfig
	shared  sharedConfig // what runs' configurations share
	lease   *hostLease   // nil: no lease (see Host.Run)
	fleet   *fleet       // where locations are
}

// pause calls the configuration's Pause at a named point, if it has one.
func (b *base) pause(ctx context.Context, point string) {
	if b.cfg.Pause != nil {
		b.cfg.Pause(ctx, point)
	}
}
