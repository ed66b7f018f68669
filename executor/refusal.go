package executor

import (
	"errors"
	"strings"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// The kinds of a [Refusal].
const (
	// RefusedWrite: a write outside the writable roots, or to a read-only
	// or denied path (a file tool's own refusal).
	RefusedWrite = "write"
	// RefusedRead: a read of a denied path (a file tool's own refusal).
	RefusedRead = "read"
	// RefusedFilesystem: a command failed and its output says a file
	// operation was not permitted (EACCES, EPERM, EROFS); which one, the
	// engine cannot tell.
	RefusedFilesystem = "filesystem"
	// RefusedNetwork: a connection the proxy refused, or, a command
	// failing without a network, its output saying it could not reach one.
	RefusedNetwork = "network"
)

// Refusal is what the sandbox refused a call: its kind, one line saying
// what, and whether it was read from a command's output (Heuristic)
// rather than known exactly. The engine appends it to the call's result,
// so the model is told plainly, and records it.
type Refusal struct {
	Kind      string
	Detail    string
	Heuristic bool
}

// DeniedError is a file tool's refusal by the call's sandbox policy (see
// [Call.ResolveWrite]): it matches [ErrSandboxDenied], and its text is the
// code, then what was denied and the policy's entry that denied it.
type DeniedError struct {
	Write bool   // a write (else a read)
	Path  string // the real path
	Why   string // "denied path ~/.ssh", "read-only path .git/hooks", "outside the location and the writable roots", …
}

// Error is "sandbox_denied: the sandbox denies writing PATH (WHY)".
func (e *DeniedError) Error() string {
	verb := "reading"
	if e.Write {
		verb = "writing"
	}
	return ErrSandboxDenied.Error() + ": the sandbox denies " + verb + " " + e.Path + " (" + e.Why + ")"
}

// Is matches ErrSandboxDenied.
func (e *DeniedError) Is(target error) bool { return target == ErrSandboxDenied }

// refusal is e as a Refusal.
func (e *DeniedError) refusal() *Refusal {
	r := &Refusal{Kind: RefusedRead, Detail: "reading " + e.Path + " (" + e.Why + ")"}
	if e.Write {
		r.Kind, r.Detail = RefusedWrite, "writing "+e.Path+" ("+e.Why+")"
	}
	return r
}

// deniedRefusal is the refusal err carries when a file tool's sandbox
// policy refused it; nil otherwise.
func deniedRefusal(err error) *Refusal {
	var de *DeniedError
	if errors.As(err, &de) {
		return de.refusal()
	}
	return nil
}

// Failer is implemented by tool outputs that can report a failure the
// result does not flag as an error (bash: a non-zero exit status). A
// sandboxed command that failed is looked at for a refusal (see
// outputRefusal).
type Failer interface {
	Failed() bool
}

// The messages a command prints when the sandbox refused it a file
// operation (Landlock: EACCES; the read-only view: EROFS; seccomp and the
// namespaces: EPERM), as the C library and the usual tools spell them,
// lower-case; and those of a command that found no network.
var (
	fsRefusalMarks  = []string{"read-only file system", "permission denied", "operation not permitted", "eacces", "eperm", "erofs"}
	netRefusalMarks = []string{"network is unreachable", "could not resolve host", "temporary failure in name resolution",
		"name or service not known", "no address associated with hostname", "enetunreach"}
)

// maxRefusalLine bounds the line of output a heuristic refusal quotes.
const maxRefusalLine = 200

// outputRefusal reads a refusal from the text of a command that failed
// under enforced (a heuristic, as Codex's: the command's exit status is
// not zero and its output says a file operation was not permitted, or,
// without a network, that it could not reach one); nil when it says
// neither. The detail is the first line saying so.
func outputRefusal(text string, enforced sandbox.Enforced) *Refusal {
	if enforced.Mode == sandbox.Off || enforced.Mode == "" {
		return nil
	}
	for line := range strings.Lines(text) {
		low := strings.ToLower(line)
		kind := ""
		switch {
		case containsAny(low, fsRefusalMarks):
			kind = RefusedFilesystem
		case enforced.Network == sandbox.NetOff && containsAny(low, netRefusalMarks):
			kind = RefusedNetwork
		default:
			continue
		}
		line = strings.TrimSpace(line)
		if len(line) > maxRefusalLine {
			line = strings.ToValidUTF8(line[:maxRefusalLine], "") + "…"
		}
		return &Refusal{Kind: kind, Detail: line, Heuristic: true}
	}
	return nil
}

func containsAny(s string, marks []string) bool {
	for _, m := range marks {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}
