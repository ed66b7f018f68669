package sandbox

import (
	"errors"
	"strconv"
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

// ExitError is a pooled command's end (Cmd.Wait) when it did not exit 0:
// its status, 128+n for a command ended by signal n (as the one-shot
// helper reports it), -1 when its helper ended before the command did.
// Like *exec.ExitError it has ExitCode.
type ExitError struct {
	Code int
}

// Error is "exit status N".
func (e *ExitError) Error() string {
	if e.Code < 0 {
		return "the sandbox helper ended before the command"
	}
	return "exit status " + strconv.Itoa(e.Code)
}

// ExitCode is the command's exit status, -1 when it is unknown.
func (e *ExitError) ExitCode() int { return e.Code }
