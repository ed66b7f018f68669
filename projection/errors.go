package projection

import (
	"errors"

	"github.com/stepgate/stepgate/projection/fold"
)

// Sentinel errors of the projections.
var (
	// ErrInconsistent means a commit contradicts the state it is applied to
	// (it is [fold.ErrInconsistent]).
	ErrInconsistent = fold.ErrInconsistent
	// ErrForeign means a message does not belong to the subject it was
	// stored on (another run's commit, a run commit on a registry subject).
	ErrForeign = errors.New("message does not belong to its subject")
	// ErrQuarantined means a fold skipped a message and recorded why (see
	// [Quarantine]); the projection is as if the message were not there,
	// except that its run's last sequence moved past it.
	ErrQuarantined = errors.New("message quarantined")
	// ErrDiverged means a run commit does not name the run's last commit as
	// its predecessor (see [Divergence]): the run's history lost a write (it
	// is [fold.ErrDiverged]).
	ErrDiverged = fold.ErrDiverged
	// ErrClosed means the projector was closed.
	ErrClosed = errors.New("projector closed")
)
