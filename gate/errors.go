package gate

import "errors"

var (
	// ErrUnknownNarrowing is returned when a narrowing is neither
	// "configured" nor "deny_all".
	ErrUnknownNarrowing = errors.New("unknown narrowing")
	// ErrPathPattern is wrapped by every error of [CheckPathPattern].
	ErrPathPattern = errors.New("bad protected-path pattern")
)
