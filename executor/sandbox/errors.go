package sandbox

import (
	"errors"
	"strings"
)

// The error codes of Error.
const (
	// CodeUnavailable: the host cannot enforce what the policy asks (no
	// Landlock, no user namespaces, a seccomp failure, the helper failing
	// mid-setup). The command did not run.
	CodeUnavailable = "sandbox_unavailable"
	// CodeInvalid: the policy itself is unusable (an unknown mode, a
	// relative path, a proxy without its socket). The command did not run.
	CodeInvalid = "sandbox_invalid"
)

// Error is a sandbox refusal: the command did not run. Its text is
// "<code>: <message>", the message naming what is missing.
type Error struct {
	Code    string   // CodeUnavailable or CodeInvalid
	Message string   // one line, naming what is missing or wrong
	Missing []string // what the host lacks (CodeUnavailable from Command)
	Err     error    // the cause, when there is one
}

// Error is the code and the message.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrUnavailable matches (errors.Is) every Error of code CodeUnavailable.
var ErrUnavailable = errors.New(CodeUnavailable)

// Is matches ErrUnavailable for an Error of its code.
func (e *Error) Is(target error) bool {
	return target == ErrUnavailable && e.Code == CodeUnavailable
}

func unavailable(missing []string) *Error {
	return &Error{Code: CodeUnavailable, Missing: missing,
		Message: "this host cannot enforce the sandbox: " + strings.Join(missing, "; ") + "; the command was not run"}
}

func invalid(msg string) *Error {
	return &Error{Code: CodeInvalid, Message: msg + "; the command was not run"}
}
