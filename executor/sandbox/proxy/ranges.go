package proxy

import "net/netip"

// special is one range of addresses a name may not resolve to unless the
// allow-list names it explicitly: not the public internet, or a form that
// embeds or translates to another address.
type special struct {
	prefix netip.Prefix
	name   string
}

// specialRanges is the table checked by classify, IPv4 then IPv6.
// Addresses are unmapped before they are checked, so ::ffff:10.0.0.1 is
// the private 10.0.0.1.
func specialRanges() []special {
	p := netip.MustParsePrefix
	return []special{
		{p("0.0.0.0/8"), "this network"},
		{p("10.0.0.0/8"), "private"},
		{p("100.64.0.0/10"), "carrier-grade NAT"},
		{p("127.0.0.0/8"), "loopback"},
		{p("169.254.0.0/16"), "link-local"},
		{p("172.16.0.0/12"), "private"},
		{p("192.0.0.0/24"), "IETF protocol assignments"},
		{p("192.0.2.0/24"), "documentation"},
		{p("192.88.99.0/24"), "6to4 relay"},
		{p("192.168.0.0/16"), "private"},
		{p("198.18.0.0/15"), "benchmarking"},
		{p("198.51.100.0/24"), "documentation"},
		{p("203.0.113.0/24"), "documentation"},
		{p("224.0.0.0/4"), "multicast"},
		{p("240.0.0.0/4"), "reserved"}, // includes 255.255.255.255
		{p("::/128"), "unspecified"},
		{p("::1/128"), "loopback"},
		{p("::/96"), "IPv4-compatible"},
		{p("64:ff9b::/96"), "NAT64"},
		{p("64:ff9b:1::/48"), "NAT64"},
		{p("100::/64"), "discard"},
		{p("2001::/32"), "Teredo"},
		{p("2001:db8::/32"), "documentation"},
		{p("2002::/16"), "6to4"},
		{p("fc00::/7"), "unique-local"},
		{p("fe80::/10"), "link-local"},
		{p("fec0::/10"), "site-local"},
		{p("ff00::/8"), "multicast"},
	}
}

// classify names the special range addr is in, or "" for a public
// address. An invalid address is "invalid".
func classify(table []special, addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid"
	}
	addr = addr.Unmap()
	for _, s := range table {
		if s.prefix.Contains(addr) {
			return s.name
		}
	}
	return ""
}
