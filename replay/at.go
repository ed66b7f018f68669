package replay

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// ErrNoStep is the error of a step the log does not hold for a run (a run
// it holds no commit of, step 0, or a step past the run's last).
var ErrNoStep = errors.New("no such step")

// At is every projection as it stood after one step of a run: folded from
// stream sequence 1 to that step's last commit.
type At struct {
	Run  string `json:"run"`
	Step int    `json:"step"`
	// Projections are the runs, registry, grants, outputs and quarantine
	// at Projections.Seq, the sequence of the step's last commit.
	Projections *projection.Rebuilt `json:"-"`
}

// ToStep folds every projection to step n of run: it reads the run's
// commits up to src's last sequence to find the step's last commit, then
// rebuilds to it ([projection.Rebuild]). A run or step the log does not
// hold is an error wrapping [ErrNoStep].
func ToStep(ctx context.Context, src projection.Source, run string, n int, opts ...projection.RebuildOption) (*At, error) {
	seq, err := StepSeq(ctx, src, run, n)
	if err != nil {
		return nil, err
	}
	b, err := projection.Rebuild(ctx, src, seq, opts...)
	if err != nil {
		return nil, err
	}
	if b.Runs[run] == nil {
		return nil, fmt.Errorf("run %s at step %d: the log's commits of it were not folded (see engine quarantine): %w", run, n, ErrNoStep)
	}
	return &At{Run: run, Step: n, Projections: b}, nil
}

// StepSeq returns the stream sequence of the last commit of step n of
// run: the last of the run's commits that name a step from 1 to n, before
// the first that names a later step. It reads the stream from sequence 1 to
// its last, decoding only the run's subject.
func StepSeq(ctx context.Context, src projection.Source, run string, n int) (uint64, error) {
	if n < 1 {
		return 0, fmt.Errorf("run %s step %d: steps count from 1: %w", run, n, ErrNoStep)
	}
	last, err := src.LastSeq(ctx)
	if err != nil {
		return 0, err
	}
	subject := events.RunSubject(run)
	var at uint64
	seen, top := false, 0
	errDone := errors.New("step found")
	if last > 0 {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		err = src.Follow(ctx, 1, func(seq uint64, subj string, data []byte) error {
			if seq > last {
				return errDone
			}
			if subj == subject {
				if c, err := events.Unmarshal(data); err == nil && c.Run == run {
					seen = true
					top = max(top, c.Step)
					switch {
					case c.Step > n:
						return errDone
					case c.Step >= 1:
						at = seq
					}
				}
			}
			if seq >= last {
				return errDone
			}
			return nil
		})
		if !errors.Is(err, errDone) {
			return 0, fmt.Errorf("read run %s's commits: %w", run, err)
		}
	}
	switch {
	case !seen:
		return 0, fmt.Errorf("run %s: the log holds no commit of it: %w", run, ErrNoStep)
	case top < n || at == 0:
		return 0, fmt.Errorf("run %s has %d steps, not %d: %w", run, top, n, ErrNoStep)
	}
	return at, nil
}
