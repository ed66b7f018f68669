package service

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
)

// RequestInfoHeader is the header in which the NATS server names the
// client of a request that crossed into the service's account through a
// service import: JSON with the requester's account ("acc") and, when the
// import shares it (share: true), its user ("user"). The server sets it
// on every such request and replaces a header of that name the client
// sent (nats-server's client.go, processServiceImport: the client's
// Nats-Request-Info is removed before the server's is written), so a
// client in another account cannot forge it. A client in the service's
// own account reaches the service without an import, and its header
// arrives as it wrote it: a deployment that binds runs keeps every client
// out of the engine's account (see deploy/access/principals.conf).
const RequestInfoHeader = "Nats-Request-Info"

// requestInfo is what the service reads of the server's Nats-Request-Info.
type requestInfo struct {
	Account string `json:"acc"`
	User    string `json:"user"`
}

// maxPrincipal bounds a principal's length: the header is the server's,
// but a principal is recorded in every run it starts.
const maxPrincipal = 256

// PrincipalFromRequestInfo is the principal a request's Nats-Request-Info
// names: "nats:ACCOUNT/USER", or "nats:ACCOUNT" when the import does not
// share the user; "" when the header is missing, not JSON, names no
// account (or one with a "/"), or is too long or holds control characters.
func PrincipalFromRequestInfo(h nats.Header) string {
	raw := h.Get(RequestInfoHeader)
	if raw == "" || len(raw) > 64<<10 {
		return ""
	}
	var ri requestInfo
	// An account with a "/" would make "nats:A/B/C" ambiguous: none.
	if err := json.Unmarshal([]byte(raw), &ri); err != nil || ri.Account == "" || strings.Contains(ri.Account, "/") {
		return ""
	}
	p := "nats:" + ri.Account
	if ri.User != "" {
		p += "/" + ri.User
	}
	if len(p) > maxPrincipal || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return ""
	}
	return p
}

// Overseer is a principal that sees runs it did not start: every run, or
// the runs of some projects (an approver limited to them).
type Overseer struct {
	// Principal is "nats:ACCOUNT" (every user of the account) or
	// "nats:ACCOUNT/USER" (that user).
	Principal string
	// Projects limits it to these projects' runs and grants; none: every run.
	Projects []string
}

// ParseOverseer reads an overseer as `engine serve --overseer` takes it:
// PRINCIPAL or PRINCIPAL=PROJECT,PROJECT.
func ParseOverseer(s string) (Overseer, error) {
	who, projects, limited := strings.Cut(s, "=")
	rest, ok := strings.CutPrefix(who, "nats:")
	acc, user, hasUser := strings.Cut(rest, "/")
	if !ok || acc == "" || (hasUser && user == "") || strings.ContainsAny(who, " \t,") {
		return Overseer{}, fmt.Errorf("overseer %q: want nats:ACCOUNT or nats:ACCOUNT/USER, optionally =PROJECT,...: %w", s, commands.ErrInvalidRequest)
	}
	o := Overseer{Principal: who}
	if limited {
		for p := range strings.SplitSeq(projects, ",") {
			if p == "" {
				return Overseer{}, fmt.Errorf("overseer %q: an empty project: %w", s, commands.ErrInvalidRequest)
			}
			o.Projects = append(o.Projects, p)
		}
	}
	return o, nil
}

// covers reports whether the overseer's principal names p.
func (o Overseer) covers(p string) bool {
	return p != "" && (p == o.Principal || strings.HasPrefix(p, o.Principal+"/") && !strings.Contains(o.Principal[len("nats:"):], "/"))
}

// Binding is how a service that binds runs to principals treats its
// callers: each is the principal its request's Nats-Request-Info names,
// sees the runs it started, and an overseer sees more.
type Binding struct {
	Overseers []Overseer
}

// caller is the caller of a request with headers h.
func (b *Binding) caller(h nats.Header) commands.Caller {
	c := commands.Caller{Principal: PrincipalFromRequestInfo(h)}
	for _, o := range b.Overseers {
		if !o.covers(c.Principal) {
			continue
		}
		if len(o.Projects) == 0 {
			c.All = true
		}
		for _, p := range o.Projects {
			if !slices.Contains(c.Projects, p) {
				c.Projects = append(c.Projects, p)
			}
		}
	}
	return c
}
