package commands

import (
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// header returns the run's header as the projection holds it (a value: it
// does not change as the projection folds on), or ErrRunNotFound.
func (b *base) header(run string) (projection.RunHeader, error) {
	if !events.ValidID(run) {
		return projection.RunHeader{}, fmt.Errorf("run %q: %w", run, ErrRunNotFound)
	}
	h, ok, err := b.proj.Header(run)
	return h, found(run, ok, err)
}

// headerCold is header through the projector's HeaderCold: a page of
// tickets reads runs nobody is working on, and must not keep them in memory.
func (b *base) headerCold(run string) (projection.RunHeader, error) {
	h, ok, err := b.proj.HeaderCold(run)
	return h, found(run, ok, err)
}

// step returns step n of the run (nil when the run has no step n), or
// ErrRunNotFound.
func (b *base) step(run string, n int) (*projection.Step, error) {
	if !events.ValidID(run) {
		return nil, fmt.Errorf("run %q: %w", run, ErrRunNotFound)
	}
	s, ok, err := b.proj.Step(run, n)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run, err)
	}
	if !ok {
		return nil, nil
	}
	return &s, nil
}

// stepOf returns step n of the run h is the header of: its last step, or
// an earlier one read from the projection (final, so as it was when h was
// read); nil when the run has no step n.
func (b *base) stepOf(h *projection.RunHeader, n int) (*projection.Step, error) {
	if s := h.Step(n); s != nil || n < 1 || n > h.Steps {
		return s, nil
	}
	return b.step(h.ID, n)
}

// found is the error of a read of run: err wrapped, or ErrRunNotFound.
func found(run string, ok bool, err error) error {
	if err != nil {
		return fmt.Errorf("run %s: %w", run, err)
	}
	if !ok {
		return fmt.Errorf("run %s: %w", run, ErrRunNotFound)
	}
	return nil
}
