package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParseAuthority: never panics; what parses prints a canonical form
// that parses to the same target; a name never looks like an IP.
func FuzzParseAuthority(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:80", "0x7f.1:80", "2130706433:80", "[::ffff:127.0.0.1]:80",
		"a..b:1", "[fe80::1%eth0]:80", "example.com", "EXAMPLE.COM.:0443", "[1.2.3.4]:80", "x:"} {
		f.Add(s, uint16(0))
		f.Add(s, uint16(80))
	}
	f.Fuzz(func(t *testing.T, s string, def uint16) {
		tg, err := parseAuthority(s, def)
		if err != nil {
			return
		}
		if tg.port == 0 || tg.ip.IsValid() == (tg.name != "") {
			t.Fatalf("%q parsed to %+v", s, tg)
		}
		if tg.ip.IsValid() && (tg.ip.Zone() != "" || tg.ip.Is4In6()) {
			t.Fatalf("%q: literal not canonical: %s", s, tg.ip)
		}
		again, err := parseAuthority(tg.String(), 0)
		if err != nil || again != tg {
			t.Fatalf("%q: %s reparsed as %+v, %v", s, tg, again, err)
		}
	})
}

// FuzzAllowRule: never panics; a parsed rule matches its own target
// (an exact or IP entry) and a wildcard never matches its suffix.
func FuzzAllowRule(f *testing.F) {
	for _, s := range []string{"example.com:443", "*.example.com:443", "127.0.0.1:8080", "[::1]:80", "*.:1", "*:1", "a*.b:1"} {
		f.Add(s, "x.example.com:443")
	}
	f.Fuzz(func(t *testing.T, entry, authority string) {
		r, err := parseRule(entry)
		if err != nil {
			return
		}
		if tg, err := parseAuthority(authority, 0); err == nil {
			r.matches(tg)
		}
		own := strings.TrimPrefix(entry, "*.")
		tg, err := parseAuthority(own, 0)
		if err != nil {
			t.Fatalf("entry %q parsed but its authority %q does not: %v", entry, own, err)
		}
		if r.matches(tg) == r.wildcard {
			t.Fatalf("entry %q (wildcard=%v) matches %s = %v", entry, r.wildcard, tg, r.matches(tg))
		}
	})
}

// FuzzReadRequest: never panics on what a client sends; a request that
// reads has a form, and its header fits the limit.
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET http://example.com/x HTTP/1.1\r\nHost: evil.com\r\n\r\n",
		"GET /x HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"POST http://example.com/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
		"GET http://example.com/ HTTP/1.1\nHost: a\n\n",
		"CONNECT [::1]:80 HTTP/1.0\r\n\r\n",
		"\r\n\r\n",
		"GET http://a/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 512
		br := bufio.NewReaderSize(bytes.NewReader(data), limit)
		req, err := readRequest(br)
		if err != nil {
			if errors.Is(err, errHeaderTooLarge) && headerEnd(data, 0) > 0 && headerEnd(data, 0) <= limit {
				t.Fatalf("header of %d bytes refused as too large", headerEnd(data, 0))
			}
			return
		}
		if headerEnd(data, 0) > limit {
			t.Fatalf("a header past the limit was read")
		}
		switch formOf(req) {
		case FormConnect:
			parseAuthority(req.RequestURI, 0)
		case FormAbsolute:
			parseAuthority(req.URL.Host, 80)
		}
		for _, h := range req.hosts {
			parseAuthority(h, 80)
		}
	})
}
