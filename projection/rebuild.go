package projection

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
)

// Rebuild folds the stream from sequence 1 up to and including upTo into
// fresh runs, without touching any checkpoint. `engine verify` compares its
// result with the checkpointed projection.
func Rebuild(ctx context.Context, src Source, upTo uint64) (map[string]*Run, error) {
	runs := map[string]*Run{}
	if upTo == 0 {
		return runs, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errDone := fmt.Errorf("rebuild reached %d", upTo)
	err := src.Follow(ctx, 1, func(seq uint64, _ string, data []byte) error {
		c, err := events.Unmarshal(data)
		if err != nil {
			return fmt.Errorf("rebuild at stream sequence %d: %w", seq, err)
		}
		if c.Run != "" {
			r := runs[c.Run]
			if r == nil {
				r = &Run{ID: c.Run}
				runs[c.Run] = r
			}
			if err := r.Apply(seq, c); err != nil {
				return fmt.Errorf("rebuild at stream sequence %d: %w", seq, err)
			}
		}
		if seq >= upTo {
			return errDone
		}
		return nil
	})
	if !errors.Is(err, errDone) {
		return nil, err
	}
	for id, r := range runs {
		cp, err := deepCopy(r)
		if err != nil {
			return nil, err
		}
		runs[id] = cp
	}
	return runs, nil
}
