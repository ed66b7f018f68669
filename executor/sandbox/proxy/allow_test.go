package proxy

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// labelGen draws a DNS label that is not a number.
func labelGen() *rapid.Generator[string] {
	return rapid.StringMatching(`[a-z][a-z0-9-]{0,10}`)
}

// nameGen draws a name of 1 to 4 labels.
func nameGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return strings.Join(rapid.SliceOfN(labelGen(), 1, 4).Draw(t, "labels"), ".")
	})
}

// portGen draws a port.
func portGen() *rapid.Generator[uint16] { return rapid.Uint16Range(1, 65535) }

// target parses "name:port" or fails the property.
func mustTarget(t *rapid.T, name string, port uint16) target {
	tg, err := parseAuthority(name+":"+strconv.Itoa(int(port)), 0)
	if err != nil {
		t.Fatalf("parse %s:%d: %v", name, port, err)
	}
	return tg
}

func TestWildcardMatchesOnlyNamesStrictlyBelowOnItsPort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		suffix, port := nameGen().Draw(t, "suffix"), portGen().Draw(t, "port")
		r, err := parseRule("*." + suffix + ":" + strconv.Itoa(int(port)))
		if err != nil {
			t.Fatal(err)
		}
		sub := labelGen().Draw(t, "sub")
		if !r.matches(mustTarget(t, sub+"."+suffix, port)) {
			t.Fatalf("%s does not match %s.%s:%d", r.text, sub, suffix, port)
		}
		if r.matches(mustTarget(t, suffix, port)) {
			t.Fatalf("%s matches the suffix itself", r.text)
		}
		evil := labelGen().Draw(t, "evil")
		for _, bad := range []string{suffix + "." + evil, sub + suffix, evil + "-" + suffix, sub + "." + suffix + "." + evil} {
			if strings.HasSuffix(bad, "."+suffix) {
				continue // the draw made it a genuine subdomain
			}
			if r.matches(mustTarget(t, bad, port)) {
				t.Fatalf("%s matches %s", r.text, bad)
			}
		}
		other := portGen().Draw(t, "other")
		if other != port && r.matches(mustTarget(t, sub+"."+suffix, other)) {
			t.Fatalf("%s matches port %d", r.text, other)
		}
	})
}

func TestExactEntryMatchesOnlyItsNameAndPort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name, port := nameGen().Draw(t, "name"), portGen().Draw(t, "port")
		upper := rapid.Bool().Draw(t, "upper")
		entry := name
		if upper {
			entry = strings.ToUpper(name) + "."
		}
		l, err := parseAllowList([]string{entry + ":" + strconv.Itoa(int(port))})
		if err != nil {
			t.Fatal(err)
		}
		other := nameGen().Draw(t, "other")
		otherPort := portGen().Draw(t, "otherPort")
		_, ok := l.match(mustTarget(t, other, otherPort))
		if want := other == name && otherPort == port; ok != want {
			t.Fatalf("%s matched %s:%d = %v, want %v", l[0].text, other, otherPort, ok, want)
		}
		if _, ok := l.match(mustTarget(t, "x."+name, port)); ok {
			t.Fatalf("an exact entry matched a subdomain")
		}
	})
}

func TestIPEntriesAndNamesNeverCross(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b [16]byte
		copy(b[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "ip"))
		ip := netip.AddrFrom16(b).Unmap()
		port := portGen().Draw(t, "port")
		name := nameGen().Draw(t, "name")
		l, err := parseAllowList([]string{netip.AddrPortFrom(ip, port).String(), name + ":" + strconv.Itoa(int(port))})
		if err != nil {
			t.Fatal(err)
		}
		lit, err := parseAuthority(netip.AddrPortFrom(ip, port).String(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := l.match(lit); !ok || !r.ip.IsValid() {
			t.Fatalf("the literal %s matched %+v, %v; want its IP entry", lit, r, ok)
		}
		if r, ok := l.match(mustTarget(t, name, port)); !ok || r.ip.IsValid() {
			t.Fatalf("the name %s matched %+v, %v; want its name entry", name, r, ok)
		}
		if _, ok := allowList(l[1:]).match(lit); ok {
			t.Fatalf("a name entry matched the literal %s", lit)
		}
	})
}

func TestAuthorityRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name, port := nameGen().Draw(t, "name"), portGen().Draw(t, "port")
		tg := mustTarget(t, name, port)
		again, err := parseAuthority(tg.String(), 0)
		if err != nil || again != tg {
			t.Fatalf("%s reparsed as %s, %v", tg, again, err)
		}
	})
}

func TestWildcardExamples(t *testing.T) {
	l, err := parseAllowList([]string{"*.a.b:443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		authority string
		want      bool
	}{
		{"x.a.b:443", true},
		{"y.x.a.b:443", true},
		{"X.A.B.:443", true},
		{"a.b:443", false},
		{"a.b.evil:443", false},
		{"x.a.b.evil:443", false},
		{"xa.b:443", false},
		{"x-a.b:443", false},
		{"x.a.b:444", false},
		{"x.a.b:80", false},
	} {
		tg, err := parseAuthority(tc.authority, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := l.match(tg); ok != tc.want {
			t.Errorf("*.a.b:443 matches %s = %v, want %v", tc.authority, ok, tc.want)
		}
	}
}
