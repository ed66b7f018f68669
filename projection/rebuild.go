package projection

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
)

// Rebuilt is every projection folded afresh from the log up to a stream
// sequence, in memory: the runs, the registry's location layer, the saved
// grants (revoked or not), the output files kept, the runs a recovery looks
// at, and the messages the folds quarantined. [Projector.Projections] is
// the same for a projector, so the two compare field by field.
type Rebuilt struct {
	// Seq is the stream sequence the projections stand at.
	Seq  uint64
	Runs map[string]*Run
	// Registry is the location layer, by scope.
	Registry Registry
	// Grants is every saved approval by id, with its revocation if any.
	Grants Grants
	// Outputs is the output files the log says are kept, by path.
	Outputs map[string]events.OutputFileStored
	// Open is the runs with a step left open, sorted (see [Projector.OpenRuns]).
	Open       []string
	Quarantine Quarantine
	// GrantLog is when each grant was saved and revoked, by grant id: a
	// rebuild's alone (a checkpoint keeps no such record), so [Projector.Projections]
	// leaves it nil and verify does not compare it.
	GrantLog map[string]GrantTimes `json:"grant_log,omitempty"`
	idx      indexes
	dirt     indexDirt
}

// RebuildOption tunes a [Rebuild].
type RebuildOption func(*rebuildConfig)

type rebuildConfig struct{ progress func(seq uint64) }

// WithProgress calls fn after each message is folded, with its sequence
// (fn must be quick: it runs on the fold's goroutine).
func WithProgress(fn func(seq uint64)) RebuildOption {
	return func(c *rebuildConfig) { c.progress = fn }
}

// dirtKeep bounds what a rebuild keeps of the marks the indexes' folds
// leave for a checkpoint.
const dirtKeep = 4096

// GrantTimes is where in the log a grant was saved and revoked: the stream
// sequence and time of the commit that did it (zero: not yet).
type GrantTimes struct {
	SavedSeq   uint64    `json:"saved_seq,omitempty"`
	SavedAt    time.Time `json:"saved_at,omitzero"`
	RevokedSeq uint64    `json:"revoked_seq,omitempty"`
	RevokedAt  time.Time `json:"revoked_at,omitzero"`
}

func newRebuilt() *Rebuilt {
	return &Rebuilt{Runs: map[string]*Run{}, idx: newIndexes(), dirt: newIndexDirt(), GrantLog: map[string]GrantTimes{}}
}

// logGrants records when the grants c saves or revokes were, once folded.
func (b *Rebuilt) logGrants(seq uint64, c *events.Commit) {
	for _, e := range c.Events {
		switch e := e.(type) {
		case events.ApprovalSaved:
			if t := b.GrantLog[e.ID]; t.SavedSeq == 0 {
				t.SavedSeq, t.SavedAt = seq, c.At
				b.GrantLog[e.ID] = t
			}
		case events.GrantRevoked:
			if t := b.GrantLog[e.ID]; t.RevokedSeq == 0 {
				t.RevokedSeq, t.RevokedAt = seq, c.At
				b.GrantLog[e.ID] = t
			}
		}
	}
}

// Rebuild folds the stream from sequence 1 up to and including upTo into
// fresh projections, every one of them, without touching any checkpoint:
// `engine verify` compares its result with the checkpointed projection, and
// time travel (replay.At) reads the past with it. It folds each message
// through the projector's own folds (admit, [Run.Apply] and the indexes'
// folds), so it quarantines exactly the messages the projector does, for
// the same reasons: only reading the stream can fail.
func Rebuild(ctx context.Context, src Source, upTo uint64, opts ...RebuildOption) (*Rebuilt, error) {
	var cfg rebuildConfig
	for _, o := range opts {
		o(&cfg)
	}
	out := newRebuilt()
	if upTo > 0 {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errDone := fmt.Errorf("rebuild reached %d", upTo)
		err := src.Follow(ctx, 1, func(seq uint64, subject string, data []byte) error {
			if seq > upTo {
				return errDone // a gap ran past upTo
			}
			out.fold(seq, subject, data)
			if cfg.progress != nil {
				cfg.progress(seq)
			}
			if seq >= upTo {
				return errDone
			}
			return nil
		})
		if !errors.Is(err, errDone) {
			return nil, fmt.Errorf("rebuild to stream sequence %d: %w", upTo, err)
		}
	}
	return out.finish(upTo)
}

// finish gives the projections their exported form at seq.
func (b *Rebuilt) finish(seq uint64) (*Rebuilt, error) {
	for id, r := range b.Runs {
		cp, err := r.Clone()
		if err != nil {
			return nil, err
		}
		b.Runs[id] = cp
	}
	b.Seq = seq
	b.Registry, b.Grants, b.Outputs = b.idx.registry, b.idx.grants, b.idx.outputs
	b.Open = slices.Sorted(maps.Keys(b.idx.open))
	b.Quarantine = b.idx.quarantine
	b.idx, b.dirt = indexes{}, indexDirt{}
	return b, nil
}

// fold folds one message as the projector's applyLocked does.
func (b *Rebuilt) fold(seq uint64, subject string, data []byte) {
	if len(b.dirt.tickets)+len(b.dirt.pending)+len(b.dirt.grants) > dirtKeep {
		// What changed matters to a checkpoint only: a rebuild writes
		// none, and keeps no ticket index (only pending tickets matter).
		b.dirt = newIndexDirt()
		clear(b.idx.tickets)
	}
	c, reason := admit(subject, data)
	if reason == nil && c.Run == "" {
		b.idx.foldOutside(seq, c, &b.dirt)
		b.logGrants(seq, c)
		return
	}
	run, _ := events.IsRunSubject(subject)
	r := b.Runs[run]
	if reason == nil {
		fresh := r == nil
		if fresh {
			r = &Run{ID: run}
		}
		if reason = r.Apply(seq, c); reason == nil {
			b.Runs[run] = r
			b.idx.foldRun(r, c, &b.dirt)
			b.logGrants(seq, c)
			return
		}
		if errors.Is(reason, ErrDiverged) {
			b.Runs[run] = r
			return
		}
		if fresh {
			r = nil
		}
	}
	b.idx.quarantine.Add(fold.NewQuarantined(seq, subject, c, reason))
	if r != nil {
		r.Skip(seq)
	}
}
