package client

import "errors"

// Sentinel errors a client branches on, each with one stable code (see
// [Code]). An error a remote engine answers is an [*Error] that errors.Is
// matches against the sentinel of its code, so a caller branches the same
// way on the in-process engine's errors and on the service's.
var (
	// ErrInvalidRequest means the request itself is malformed.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrRunNotFound means no run has that id.
	ErrRunNotFound = errors.New("run not found")
	// ErrRunNotActive means the run has ended; Ended absorbs.
	ErrRunNotActive = errors.New("run is not active")
	// ErrStepOrder means a step number that is not the run's next step, or a
	// step submitted while the previous one is not final.
	ErrStepOrder = errors.New("step out of order")
	// ErrConflict means the step was committed with other calls, or another
	// host committed first: refresh and decide again.
	ErrConflict = errors.New("conflict")
	// ErrTicketNotFound means no ticket has that id (or it belongs to
	// another run than the one named).
	ErrTicketNotFound = errors.New("ticket not found")
	// ErrTicketResolved means the ticket was answered already, or its run
	// no longer awaits.
	ErrTicketResolved = errors.New("ticket already resolved")
	// ErrTicketExpired means the ticket's deadline passed; the call settles
	// as expired.
	ErrTicketExpired = errors.New("ticket expired")
	// ErrTicketStale means the ticket's tool identity is no longer the
	// effective registration; the call settles as a stale tool call.
	ErrTicketStale = errors.New("ticket is stale")
	// ErrTicketKind means the reply does not fit the ticket (answers to a
	// permission ticket, an approval of an input ticket).
	ErrTicketKind = errors.New("reply does not fit the ticket kind")
	// ErrGrantNotFound means no saved approval has that id.
	ErrGrantNotFound = errors.New("grant not found")
	// ErrAwaitTimeout means the awaited step was not final within the
	// request's timeout; nothing changed: ask again.
	ErrAwaitTimeout = errors.New("await timed out")
	// ErrUnavailable means the host that got the request is stopping, or
	// NATS is unavailable to it, and what the request asked is not done:
	// send it again (another host, this one restarted, or this one once NATS
	// is back, answers; a step sent again gets its recorded outcome if an
	// earlier copy committed it).
	ErrUnavailable = errors.New("unavailable")
	// ErrRunDiverged means the run's hash chain broke (its history lost a
	// write): it takes no more steps, replies or end; an operator looks at
	// `engine show`.
	ErrRunDiverged = errors.New("run diverged")
	// ErrEditRefused means an approval's edited arguments were refused:
	// they do not fit the tool's schema, the rules deny them, or they ask
	// for what the ticket did not. Nothing changed; the ticket still waits.
	ErrEditRefused = errors.New("edited arguments refused")
	// ErrPermissionDenied means the NATS server refused the request for the
	// connection's permissions: the user's role may not publish to the
	// endpoint's subject, or may not subscribe to the inbox its answer
	// comes back on (a missing inbox prefix). Nothing was asked of the
	// engine; the same request with the same credentials fails the same way.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrNotAuthenticated means the NATS server refused the connection's
	// credentials (a wrong user or password, an unknown or expired
	// credentials file): the request was never sent, and is not sent
	// again while the credentials stay the same.
	ErrNotAuthenticated = errors.New("not authenticated")
	// ErrNoExecutor means no live host holds the run's location, so the
	// step (or reply, or start) was not executed anywhere and nothing
	// changed: send it again once a holder is back (the Go client does,
	// within its deadline). The message names the location and the host
	// that last ran there.
	ErrNoExecutor = errors.New("no executor")
	// ErrNotHolder means the host a request was forwarded to does not hold
	// the run's location (another directory at that path, or none); the
	// forwarding host tries another holder. Nothing changed.
	ErrNotHolder = errors.New("not a holder of the location")
)

// Stable error codes of the API.
const (
	CodeInvalidInput   = "invalid_input"
	CodeRunNotFound    = "run_not_found"
	CodeRunNotActive   = "run_not_active"
	CodeStepOrder      = "step_order"
	CodeConflict       = "conflict"
	CodeTicketNotFound = "ticket_not_found"
	CodeTicketResolved = "ticket_resolved"
	CodeTicketExpired  = "ticket_expired"
	CodeTicketStale    = "ticket_stale"
	CodeTicketKind     = "ticket_kind"
	CodeGrantNotFound  = "grant_not_found"
	CodeAwaitTimeout   = "await_timeout"
	CodeUnavailable    = "unavailable"
	CodeInternal       = "internal"
	CodeRunDiverged    = "run_diverged"
	CodeEditRefused    = "edit_refused"
	// CodePermissionDenied is a client-side code: the NATS server, not the
	// engine, refused the request (see ErrPermissionDenied).
	CodePermissionDenied = "permission_denied"
	CodeNoExecutor       = "no_executor"
	CodeNotHolder        = "not_holder"
	// CodeNotAuthenticated is a client-side code: the NATS server refused
	// the connection's credentials (see ErrNotAuthenticated).
	CodeNotAuthenticated = "not_authenticated"
)

// codes is the code↔error table, written once: [Code] reads it from the
// error's side, [Sentinel] from the code's. CodeInternal has no sentinel.
var codes = [...]struct {
	code string
	err  error
}{
	{CodeInvalidInput, ErrInvalidRequest},
	{CodeRunNotFound, ErrRunNotFound},
	{CodeRunNotActive, ErrRunNotActive},
	{CodeStepOrder, ErrStepOrder},
	{CodeConflict, ErrConflict},
	{CodeTicketNotFound, ErrTicketNotFound},
	{CodeTicketResolved, ErrTicketResolved},
	{CodeTicketExpired, ErrTicketExpired},
	{CodeTicketStale, ErrTicketStale},
	{CodeTicketKind, ErrTicketKind},
	{CodeGrantNotFound, ErrGrantNotFound},
	{CodeAwaitTimeout, ErrAwaitTimeout},
	{CodeUnavailable, ErrUnavailable},
	{CodeRunDiverged, ErrRunDiverged},
	{CodeEditRefused, ErrEditRefused},
	{CodePermissionDenied, ErrPermissionDenied},
	{CodeNoExecutor, ErrNoExecutor},
	{CodeNotHolder, ErrNotHolder},
	{CodeNotAuthenticated, ErrNotAuthenticated},
}

// Sentinel returns the error a code stands for (nil for CodeInternal and
// unknown codes).
func Sentinel(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}

// Code returns the stable code of err: an [*Error]'s own, else that of the
// first sentinel err wraps ("" for nil, CodeInternal for an error with
// none).
func Code(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeInternal
}

// Error is an error received from a remote engine: its stable code and
// message. errors.Is matches it against the sentinel of its code.
type Error struct {
	Code    string
	Message string
}

// Error returns the message the engine sent.
func (e *Error) Error() string { return e.Message }

// Is reports whether target is the sentinel of e's code.
func (e *Error) Is(target error) bool {
	s := Sentinel(e.Code)
	return s != nil && s == target
}
