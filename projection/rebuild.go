package projection

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
)

// Rebuilt is the runs projection folded afresh from the log, and the
// messages the fold quarantined.
type Rebuilt struct {
	Runs       map[string]*Run
	Quarantine Quarantine
}

// Rebuild folds the stream from sequence 1 up to and including upTo into
// fresh runs, without touching any checkpoint. `engine verify` compares its
// result with the checkpointed projection. It quarantines exactly the
// messages the projector does, for the same reasons: only reading the
// stream can fail.
func Rebuild(ctx context.Context, src Source, upTo uint64) (*Rebuilt, error) {
	out := &Rebuilt{Runs: map[string]*Run{}}
	if upTo == 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errDone := fmt.Errorf("rebuild reached %d", upTo)
	err := src.Follow(ctx, 1, func(seq uint64, subject string, data []byte) error {
		out.fold(seq, subject, data)
		if seq >= upTo {
			return errDone
		}
		return nil
	})
	if !errors.Is(err, errDone) {
		return nil, err
	}
	for id, r := range out.Runs {
		cp, err := r.Clone()
		if err != nil {
			return nil, err
		}
		out.Runs[id] = cp
	}
	return out, nil
}

// fold folds one message as the projector's applyLocked does.
func (b *Rebuilt) fold(seq uint64, subject string, data []byte) {
	c, reason := admit(subject, data)
	if reason == nil && c.Run == "" {
		return // the indexes outside runs are not rebuilt
	}
	run, _ := events.IsRunSubject(subject)
	r := b.Runs[run]
	if reason == nil {
		fresh := r == nil
		if fresh {
			r = &Run{ID: run}
		}
		if reason = r.Apply(seq, c); reason == nil || errors.Is(reason, ErrDiverged) {
			b.Runs[run] = r
			return
		}
		if fresh {
			r = nil
		}
	}
	b.Quarantine.Add(fold.NewQuarantined(seq, subject, c, reason))
	if r != nil {
		r.Skip(seq)
	}
}
