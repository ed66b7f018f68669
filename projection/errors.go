package projection

import "errors"

// Sentinel errors of the projections.
var (
	// ErrInconsistent means a commit contradicts the state it is applied to.
	ErrInconsistent = errors.New("commit inconsistent with the projection")
	// ErrClosed means the projector was closed.
	ErrClosed = errors.New("projector closed")
)
