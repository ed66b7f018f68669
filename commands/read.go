package commands

import (
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// viewRun calls fn with the run under the projector's lock, or returns
// ErrRunNotFound. The run's last step is whole; earlier ones may be stubs
// (see viewStep).
func (b *base) viewRun(run string, fn func(r *projection.Run)) error {
	return b.viewWith(run, 0, fn)
}

// viewStep is viewRun with step n whole.
func (b *base) viewStep(run string, n int, fn func(r *projection.Run)) error {
	return b.viewWith(run, max(n, 0), fn)
}

// viewWhole is viewRun with every step whole.
func (b *base) viewWhole(run string, fn func(r *projection.Run)) error {
	return b.viewWith(run, -1, fn)
}

// viewWith is viewRun with step n whole (every step when n < 0). The
// projector's methods are called directly, not through a function value,
// so the compiler sees that fn does not outlive the call and callers'
// closures stay off the heap.
func (b *base) viewWith(run string, n int, fn func(r *projection.Run)) error {
	if !events.ValidID(run) {
		return fmt.Errorf("run %q: %w", run, ErrRunNotFound)
	}
	var (
		ok  bool
		err error
	)
	switch {
	case n < 0:
		ok, err = b.proj.ViewWhole(run, fn)
	case n > 0:
		ok, err = b.proj.ViewStep(run, n, fn)
	default:
		ok, err = b.proj.View(run, fn)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", run, err)
	}
	if !ok {
		return fmt.Errorf("run %s: %w", run, ErrRunNotFound)
	}
	return nil
}

// viewCold is viewStep through the projector's ViewCold: a page of tickets
// reads runs nobody is working on, and must not keep them in memory.
func (b *base) viewCold(run string, n int, fn func(r *projection.Run)) error {
	ok, err := b.proj.ViewCold(run, n, fn)
	if err != nil {
		return fmt.Errorf("run %s: %w", run, err)
	}
	if !ok {
		return fmt.Errorf("run %s: %w", run, ErrRunNotFound)
	}
	return nil
}
