package commands

import (
	"context"
	"slices"
)

// Caller is who asks, as the service established it from the NATS
// server's word (never from the request's body), and what it may see: its
// own runs — those it started or forked — and, for an overseer, every
// run or the runs of some projects. See [Bound].
type Caller struct {
	// Principal is who asks ("nats:ACCOUNT/USER", as the service reads it
	// from the server's Nats-Request-Info); "" when the request carried no
	// identity the server set: such a caller owns nothing and may start
	// nothing.
	Principal string
	// All is an overseer of every run (an operator).
	All bool
	// Projects are the projects whose runs the caller oversees besides its
	// own (an approver limited to projects); none with All false: only its
	// own runs.
	Projects []string
}

// sees reports whether c may read and act on a run started by owner in
// project. A run without an owner (started unbound, or before owners were
// recorded) is an overseer's only.
func (c Caller) sees(owner, project string) bool {
	switch {
	case c.All:
		return true
	case owner != "" && owner == c.Principal:
		return true
	}
	return slices.Contains(c.Projects, project)
}

// oversees reports whether c may see project's saved approvals.
func (c Caller) oversees(project string) bool {
	return c.All || slices.Contains(c.Projects, project)
}

// principalKey is the context key of the principal a run is started (or
// forked) for.
type principalKey struct{}

// withPrincipal is ctx carrying the principal a run started under it
// records (see [events.RunStarted.Principal]).
func withPrincipal(ctx context.Context, p string) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalOf is the principal ctx carries, "" for none (an unbound
// caller: the run records no owner).
func principalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
