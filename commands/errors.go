package commands

import (
	"errors"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/step"
)

// Sentinel errors a client branches on: the wire contract's (package
// client), so a caller of the in-process engine and a caller of the service
// check the same values. [Code] maps each to its stable code.
var (
	// ErrInvalidRequest means the request itself is malformed.
	ErrInvalidRequest = client.ErrInvalidRequest
	// ErrRunNotFound means no run has that id.
	ErrRunNotFound = client.ErrRunNotFound
	// ErrRunNotActive means the run has ended; Ended absorbs.
	ErrRunNotActive = client.ErrRunNotActive
	// ErrStepOrder means a step number that is not the run's next step, or a
	// step submitted while the previous one is not final.
	ErrStepOrder = client.ErrStepOrder
	// ErrConflict means the step was committed with other calls, or another
	// host committed first: refresh and decide again. It is the API's one
	// conflict: a lost commit race (step.ErrConflict) that reaches a client
	// is translated to it (see [Translate]).
	ErrConflict = client.ErrConflict
	// ErrTicketNotFound means no ticket has that id (or it belongs to
	// another run than the one named).
	ErrTicketNotFound = client.ErrTicketNotFound
	// ErrTicketResolved means the ticket was answered already, or its run
	// no longer awaits.
	ErrTicketResolved = client.ErrTicketResolved
	// ErrTicketExpired means the ticket's deadline passed.
	ErrTicketExpired = client.ErrTicketExpired
	// ErrTicketStale means the ticket's tool identity is no longer the
	// effective registration.
	ErrTicketStale = client.ErrTicketStale
	// ErrTicketKind means the reply does not fit the ticket kind.
	ErrTicketKind = client.ErrTicketKind
	// ErrGrantNotFound means no saved approval has that id.
	ErrGrantNotFound = client.ErrGrantNotFound
	// ErrAwaitTimeout means the awaited step was not final within the
	// request's timeout; nothing changed: ask again.
	ErrAwaitTimeout = client.ErrAwaitTimeout
	// ErrUnavailable means the host that got the request is stopping, or
	// NATS is unavailable to it (see step.Unavailable): send it again.
	ErrUnavailable = client.ErrUnavailable
	// ErrRunDiverged means the run's hash chain broke (see
	// projection.Divergence): it takes no more steps, replies or end.
	ErrRunDiverged = client.ErrRunDiverged
	// ErrEditRefused means an approval's edited arguments were refused (see
	// [client.ErrEditRefused]); the ticket still waits.
	ErrEditRefused = client.ErrEditRefused
	// ErrNoExecutor means no live host holds the run's location: nothing
	// was executed or committed; send it again (see [client.ErrNoExecutor]).
	ErrNoExecutor = client.ErrNoExecutor
	// ErrNotHolder means this host does not hold the location a forwarded
	// request needs (see [client.ErrNotHolder]).
	ErrNotHolder = client.ErrNotHolder
)

// Stable error codes of the API (the wire contract's).
const (
	CodeInvalidInput   = client.CodeInvalidInput
	CodeRunNotFound    = client.CodeRunNotFound
	CodeRunNotActive   = client.CodeRunNotActive
	CodeStepOrder      = client.CodeStepOrder
	CodeConflict       = client.CodeConflict
	CodeTicketNotFound = client.CodeTicketNotFound
	CodeTicketResolved = client.CodeTicketResolved
	CodeTicketExpired  = client.CodeTicketExpired
	CodeTicketStale    = client.CodeTicketStale
	CodeTicketKind     = client.CodeTicketKind
	CodeGrantNotFound  = client.CodeGrantNotFound
	CodeAwaitTimeout   = client.CodeAwaitTimeout
	CodeUnavailable    = client.CodeUnavailable
	CodeInternal       = client.CodeInternal
	CodeRunDiverged    = client.CodeRunDiverged
	CodeEditRefused    = client.CodeEditRefused
	CodeNoExecutor     = client.CodeNoExecutor
	CodeNotHolder      = client.CodeNotHolder
)

// Error is an error received from a remote engine (see [client.Error]).
type Error = client.Error

// Code returns the stable code of err ("" for nil, "internal" for errors
// without one): the code of the wire contract's table ([client.Code]) once
// the commit boundary's errors are translated (see [Translate]).
func Code(err error) string { return client.Code(Translate(err)) }

// Translate translates the commit boundary's errors at commands' boundary:
// an error wrapping step.ErrConflict (a lost race) also is [ErrConflict],
// the one conflict a caller checks; one wrapping step.ErrTooLarge is
// [ErrInvalidRequest] — what a request carried (arguments, rules, answers,
// descriptors) is more than one commit holds; results are shortened to fit
// (see fit), so a commit too large is always the request's; one that wraps
// no sentinel and says NATS is unavailable is [ErrUnavailable]. An
// [*Error], and any other error, is returned as it is.
func Translate(err error) error {
	var e *Error
	switch {
	case err == nil || errors.As(err, &e):
		return err
	case errors.Is(err, step.ErrConflict):
		return &translated{err, CodeConflict}
	case errors.Is(err, step.ErrTooLarge):
		return &translated{err, CodeInvalidInput}
	case client.Code(err) == CodeInternal && step.Unavailable(err):
		return &translated{err, CodeUnavailable}
	}
	return err
}

// translated is an error of the commit boundary with the API code of the
// same meaning: errors.Is matches it against that code's sentinel (and its
// cause's chain), errors.As finds it as an [*Error] with that code. Its
// message is the cause's.
type translated struct {
	cause error
	code  string
}

func (t *translated) Error() string { return t.cause.Error() }
func (t *translated) Unwrap() error { return t.cause }

// Is reports whether target is the sentinel of t's code.
func (t *translated) Is(target error) bool { return target == client.Sentinel(t.code) }

// As sets an [*Error] target to t's code and message.
func (t *translated) As(target any) bool {
	e, ok := target.(**Error)
	if ok {
		*e = &Error{Code: t.code, Message: t.Error()}
	}
	return ok
}
