package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// refusal is why the proxy answers a request itself.
type refusal struct {
	status int
	code   string
	reason string
	ip     string // the address refused, if any
}

// Error makes a refusal an error for the handlers' plumbing.
func (r *refusal) Error() string { return r.reason }

// decision is an admitted target: the rule that admitted it and the
// addresses to dial, in order, all from one resolution.
type decision struct {
	rule  string
	addrs []netip.Addr
}

// decide checks t against the allow-list and, for a name, resolves it
// once on the host. An IP literal is admitted only by an IP entry naming
// it with its port. A name must match an entry, and every address it
// resolves to must be public, unless the name is listed exactly (not by a
// wildcard) or the address is listed as IP:port.
func (p *Proxy) decide(ctx context.Context, t target) (decision, *refusal) {
	r, ok := p.allow.match(t)
	if t.ip.IsValid() {
		if !ok {
			return decision{}, &refusal{status: 403, code: CodeIPLiteral, ip: t.ip.String(),
				reason: fmt.Sprintf("%s is an IP literal; only IP:port entries of the allow-list are reached by address (%s)", t, p.allowed())}
		}
		return decision{rule: r.text, addrs: []netip.Addr{t.ip}}, nil
	}
	if !ok {
		return decision{}, &refusal{status: 403, code: CodeNotAllowed,
			reason: fmt.Sprintf("%s is not on the allow-list (%s)", t, p.allowed())}
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	addrs, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", t.name)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return decision{}, &refusal{status: 502, code: CodeResolveFailed,
			reason: fmt.Sprintf("cannot resolve %s: %v", t.name, err)}
	}
	for i, a := range addrs {
		a = a.Unmap()
		addrs[i] = a
		kind := classify(p.special, a)
		if kind == "" || !r.wildcard || p.allow.listsIP(a, t.port) {
			continue
		}
		return decision{}, &refusal{status: 403, code: CodePrivateAddress, ip: a.String(),
			reason: fmt.Sprintf("%s resolves to %s, a %s address; list %s exactly to reach it", t.name, a, kind, t)}
	}
	return decision{rule: r.text, addrs: addrs}, nil
}

// allowed is the allow-list as the refusals quote it.
func (p *Proxy) allowed() string {
	if len(p.allow) == 0 {
		return "the allow-list is empty"
	}
	texts := make([]string, len(p.allow))
	for i, r := range p.allow {
		texts[i] = r.text
	}
	return "allowed: " + strings.Join(texts, ", ")
}
