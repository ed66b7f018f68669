package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// target is a parsed authority: a DNS name or a canonical IP literal, and
// a port. Names are lower-case, without a trailing dot.
type target struct {
	name string     // empty for an IP literal
	ip   netip.Addr // valid for an IP literal (unmapped)
	port uint16
}

// String is the target's canonical "host:port" form.
func (t target) String() string {
	if t.ip.IsValid() {
		return netip.AddrPortFrom(t.ip, t.port).String()
	}
	return net.JoinHostPort(t.name, strconv.Itoa(int(t.port)))
}

// errNumericHost marks a host that a resolver or a URL parser would read
// as an IPv4 address written in a non-canonical form (0x7f.1, 2130706433,
// 0177.0.0.1, 127.1): it is refused, never resolved nor matched.
var errNumericHost = errors.New("IP address in a non-canonical form")

// parseAuthority parses "host:port" (a CONNECT authority or the host of
// an absolute URI). defaultPort, when not zero, is used if the port is
// absent or empty. IPv6 literals must be bracketed and carry no zone; a
// bracketed host must be IPv6; names must be ASCII labels of letters,
// digits, '-' and '_'.
func parseAuthority(s string, defaultPort uint16) (target, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if defaultPort == 0 {
			return target{}, fmt.Errorf("authority %q: %w", s, err)
		}
		var err2 error
		host, port, err2 = net.SplitHostPort(s + ":")
		if err2 != nil {
			return target{}, fmt.Errorf("authority %q: %w", s, err)
		}
	}
	var t target
	if port == "" && defaultPort != 0 {
		t.port = defaultPort
	} else if t.port, err = parsePort(port); err != nil {
		return target{}, fmt.Errorf("authority %q: %w", s, err)
	}
	bracketed := strings.HasPrefix(s, "[")
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return target{}, fmt.Errorf("authority %q: IPv6 zone not allowed", s)
		}
		if bracketed != addr.Is6() {
			return target{}, fmt.Errorf("authority %q: only IPv6 literals are bracketed", s)
		}
		t.ip = addr.Unmap()
		return t, nil
	}
	if bracketed {
		return target{}, fmt.Errorf("authority %q: not an IPv6 literal in brackets", s)
	}
	name, err := parseName(host)
	if err != nil {
		return target{}, fmt.Errorf("authority %q: %w", s, err)
	}
	t.name = name
	return t, nil
}

// parsePort parses a decimal port, 1 to 65535, digits only.
func parsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("bad port %q", s)
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return uint16(n), nil
}

// parseName validates and normalises a DNS name: lower-case, one trailing
// dot dropped, at most 253 characters, labels of 1 to 63 letters, digits,
// '-' or '_'. A name whose last label is a number (decimal, or hex after
// 0x) is an IPv4 address in disguise (errNumericHost), as the URL standard
// and inet_aton read it.
func parseName(s string) (string, error) {
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	if s == "" || len(s) > 253 {
		return "", fmt.Errorf("bad host name %q", s)
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", fmt.Errorf("bad host name %q", s)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("bad host name %q", s)
			}
		}
	}
	if numericLabel(labels[len(labels)-1]) {
		return "", fmt.Errorf("host %q: %w", s, errNumericHost)
	}
	return s, nil
}

// numericLabel reports whether l is all decimal digits, or "0x" followed
// by hex digits (possibly none), the URL standard's "ends in a number".
func numericLabel(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}
