package commands

import (
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// chain links c, a commit about to be made, to its run's last commit as
// this host's projection holds it; the commit's expectation is the run's
// last sequence read from the same projection, so when the two disagree the
// stream's CAS refuses the commit anyway. A run's first commit (its run not
// yet folded) names nothing. A run that diverged is refused with
// [ErrRunDiverged].
func (e *Engine) chain(c *events.Commit) error {
	if c.Run == "" {
		return nil
	}
	r, err := e.header(c.Run)
	if errors.Is(err, ErrRunNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c.Prev = r.LastCommit
	return divergedErr(c.Run, r.Diverged)
}

// divergedErr is the refusal of a step, reply or end of a run that diverged
// (nil when d is).
func divergedErr(run string, d *projection.Divergence) error {
	if d == nil {
		return nil
	}
	return fmt.Errorf("run %s: %w: its history lost a write (%s); it takes no more steps: see engine show", run, ErrRunDiverged, d)
}
