package config

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every configuration error.
var ErrInvalid = errors.New("invalid configuration")

// Error is a configuration error at a place in a file.
type Error struct {
	File string
	Line int
	Key  string // the key path, e.g. agents.build.permission.read
	Msg  string
}

// Error says where the problem is: file, line, key and what is wrong.
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
}

// Unwrap makes every Error an ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }
