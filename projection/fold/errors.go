package fold

import "errors"

// Sentinel errors of the folds.
var (
	// ErrInconsistent means a commit contradicts the state it is applied to.
	ErrInconsistent = errors.New("commit inconsistent with the projection")
	// ErrDiverged means a run commit does not name the run's last commit as
	// its predecessor (see [Divergence]): the run's history lost a write.
	ErrDiverged = errors.New("run history diverged")
)
