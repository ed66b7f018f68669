package proxy

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// rule is one allow-list entry: "host:port", "*.suffix:port" (any name
// strictly below suffix, not suffix itself) or "IP:port" ("[v6]:port").
// Ports are exact.
type rule struct {
	text     string
	name     string     // the host, or the suffix of a wildcard
	wildcard bool       // "*." prefix
	ip       netip.Addr // an IP entry (unmapped)
	port     uint16
}

// parseRule parses one allow-list entry.
func parseRule(s string) (rule, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return rule{}, fmt.Errorf("allow entry %q: want host:port: %w", s, err)
	}
	r := rule{text: s}
	if r.port, err = parsePort(port); err != nil {
		return rule{}, fmt.Errorf("allow entry %q: %w", s, err)
	}
	if suffix, ok := strings.CutPrefix(host, "*."); ok {
		r.wildcard = true
		host = suffix
	}
	if !r.wildcard {
		if t, err := parseAuthority(s, 0); err == nil && t.ip.IsValid() {
			r.ip = t.ip
			return r, nil
		}
	}
	if strings.HasPrefix(s, "[") {
		return rule{}, fmt.Errorf("allow entry %q: not an IPv6 literal in brackets", s)
	}
	if r.name, err = parseName(host); err != nil {
		return rule{}, fmt.Errorf("allow entry %q: %w", s, err)
	}
	return r, nil
}

// matches reports whether the rule admits t. A wildcard admits a name
// with at least one more label; an IP rule admits only that IP literal.
func (r rule) matches(t target) bool {
	if r.port != t.port {
		return false
	}
	if r.ip.IsValid() || t.ip.IsValid() {
		return r.ip.IsValid() && t.ip.IsValid() && r.ip == t.ip
	}
	if r.wildcard {
		return strings.HasSuffix(t.name, "."+r.name)
	}
	return t.name == r.name
}

// allowList is a parsed allow-list.
type allowList []rule

// parseAllowList parses every entry; the first bad one is the error.
func parseAllowList(entries []string) (allowList, error) {
	l := make(allowList, 0, len(entries))
	for _, e := range entries {
		r, err := parseRule(e)
		if err != nil {
			return nil, err
		}
		l = append(l, r)
	}
	return l, nil
}

// match returns the first rule admitting t, preferring an exact entry
// over a wildcard (an exact entry also admits a private resolution).
func (l allowList) match(t target) (rule, bool) {
	var found rule
	ok := false
	for _, r := range l {
		if !r.matches(t) {
			continue
		}
		if !r.wildcard {
			return r, true
		}
		if !ok {
			found, ok = r, true
		}
	}
	return found, ok
}

// listsIP reports whether an IP entry names addr:port exactly.
func (l allowList) listsIP(addr netip.Addr, port uint16) bool {
	for _, r := range l {
		if r.ip.IsValid() && r.ip == addr.Unmap() && r.port == port {
			return true
		}
	}
	return false
}
