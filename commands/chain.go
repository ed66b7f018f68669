package commands

import (
	"fmt"

	"github.com/stepgate/stepgate/projection"
)

// divergedErr is the refusal of a step, reply or end of a run that diverged
// (nil when d is).
func divergedErr(run string, d *projection.Divergence) error {
	if d == nil {
		return nil
	}
	return fmt.Errorf("run %s: %w: its history lost a write (%s); it takes no more steps: see engine show", run, ErrRunDiverged, d)
}

// runAt is where a run stands in the log, as one read of the projection
// saw it: its last sequence (the expectation of its next commit), its last
// commit (the predecessor its next commit names: the run's hash chain) and
// whether it diverged. Both come from the same read, so a commit never
// names a predecessor of another state than the one it expects; when the
// run moved since (another host's commit, a divergence folded), the
// stream's CAS refuses the commit and the caller reads again. The zero
// value is a run not yet started: its first commit names nothing.
type runAt struct {
	seq      uint64
	prev     string
	diverged *projection.Divergence
}

// at is where r stands.
func at(r *projection.RunHeader) runAt {
	return runAt{seq: r.LastSeq, prev: r.LastCommit, diverged: r.Diverged}
}
