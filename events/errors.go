package events

import "errors"

// Sentinel errors of the vocabulary.
var (
	// ErrMalformed means bytes or values that are not a valid commit.
	ErrMalformed = errors.New("malformed commit")
)
