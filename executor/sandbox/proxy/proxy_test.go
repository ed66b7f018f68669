package proxy

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Inside a tunnel the client speaks HTTP to the upstream itself.
func getInTunnel(t *testing.T, c *client, authority, path string) string {
	t.Helper()
	_, body := c.roundTrip(t, "GET", "GET "+path+" HTTP/1.1\r\nHost: "+authority+"\r\nConnection: close\r\n\r\n")
	return body
}

func TestAllowedHostReached(t *testing.T) {
	a := startUpstream(t, "A")
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}})
	for _, network := range []string{"unix", "tcp"} {
		addr := map[string]string{"unix": h.sock, "tcp": h.tcp}[network]
		t.Run("connect over "+network, func(t *testing.T) {
			c := dialProxy(t, network, addr)
			resp, _ := c.roundTrip(t, "CONNECT", connectReq(hp("allowed.test", a.port)))
			if resp.StatusCode != 200 {
				t.Fatalf("CONNECT: got %s, want 200", resp.Status)
			}
			mustContain(t, getInTunnel(t, c, hp("allowed.test", a.port), "/in-tunnel"), "hello from A path=/in-tunnel")
		})
		t.Run("absolute-form over "+network, func(t *testing.T) {
			c := dialProxy(t, network, addr)
			resp, body := c.roundTrip(t, "GET", getReq(hp("allowed.test", a.port), "/abs"))
			if resp.StatusCode != 200 {
				t.Fatalf("GET: got %s, want 200", resp.Status)
			}
			mustContain(t, body, "hello from A path=/abs")
		})
	}
	// The upstream saw origin-form requests with the checked host.
	for _, r := range a.requests() {
		mustContain(t, r, "host="+hp("allowed.test", a.port))
		if strings.Contains(r, "http://") {
			t.Errorf("upstream got an absolute URI: %s", r)
		}
	}
}

func TestWildcardListedHostReachedThroughAbsoluteFormAndConnect(t *testing.T) {
	a := startUpstream(t, "A")
	// *.listed.test admits names below it; their loopback address must be
	// listed as IP:port too, since a wildcard never admits a private one.
	h := startProxy(t, Config{Allow: []string{hp("*.listed.test", a.port), hp("127.0.0.1", a.port)}},
		map[string][]string{"api.listed.test": {"127.0.0.1"}})
	c := h.dial(t)
	resp, body := c.roundTrip(t, "GET", getReq(hp("api.listed.test", a.port), "/abs"))
	if resp.StatusCode != 200 {
		t.Fatalf("absolute-form: got %s %q, want 200", resp.Status, body)
	}
	mustContain(t, body, "hello from A path=/abs")
	c = h.dial(t)
	if resp, _ := c.roundTrip(t, "CONNECT", connectReq(hp("api.listed.test", a.port))); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: got %s, want 200", resp.Status)
	}
	mustContain(t, getInTunnel(t, c, hp("api.listed.test", a.port), "/tun"), "hello from A path=/tun")
	c.Close() // a tunnel is recorded when both directions have ended
	recs := h.waitRecords(t, 2)
	for _, r := range recs {
		if r.Verdict != Allowed || r.Rule != hp("*.listed.test", a.port) || r.IP != "127.0.0.1" {
			t.Errorf("record %+v: want allowed by the wildcard, dialled 127.0.0.1", r)
		}
	}
}

func TestUnlistedHostRefused(t *testing.T) {
	a := startUpstream(t, "A")
	quiet, qport := quietListener(t)
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}, "unlisted.test": {"127.0.0.1"}})
	cases := []struct {
		name, method, raw string
	}{
		{"connect to an unlisted name", "CONNECT", connectReq(hp("unlisted.test", qport))},
		{"absolute-form to an unlisted name", "GET", getReq(hp("unlisted.test", qport), "/")},
		{"connect to a listed name on another port", "CONNECT", connectReq(hp("allowed.test", qport))},
		{"absolute-form to a listed name on another port", "GET", getReq(hp("allowed.test", qport), "/")},
		{"connect to a name below a listed one", "CONNECT", connectReq(hp("x.allowed.test", qport))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := h.dial(t).roundTrip(t, tc.method, tc.raw)
			if resp.StatusCode != 403 {
				t.Fatalf("got %s, want 403", resp.Status)
			}
			mustContain(t, body, "stepgate proxy:", "is not on the allow-list", "allowed: "+hp("allowed.test", a.port))
			if got := resp.Header.Get("X-Stepgate-Proxy-Code"); got != CodeNotAllowed {
				t.Errorf("code %q, want %q", got, CodeNotAllowed)
			}
			if accepted(t, quiet) {
				t.Fatal("the unlisted listener was dialled")
			}
		})
	}
	if n := h.resolver.lookups.Load(); n != 0 {
		t.Errorf("%d lookups for unlisted names, want none (names are checked before they are resolved)", n)
	}
}

func TestConnectInsideConnectRefused(t *testing.T) {
	a := startUpstream(t, "A")
	quiet, qport := quietListener(t)
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}, "second.test": {"127.0.0.1"}})
	c := h.dial(t)
	if resp, _ := c.roundTrip(t, "CONNECT", connectReq(hp("allowed.test", a.port))); resp.StatusCode != 200 {
		t.Fatalf("outer CONNECT: got %s, want 200", resp.Status)
	}
	// The inner CONNECT travels the tunnel to A, which answers it itself.
	resp, body := c.roundTrip(t, "CONNECT", connectReq(hp("second.test", qport)))
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("inner CONNECT: got %s %q, want A's 405", resp.Status, body)
	}
	mustContain(t, body, "no tunnels here")
	if got, want := a.requests(), []string{"CONNECT " + hp("second.test", qport) + " host=" + hp("second.test", qport)}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("A received %q, want %q", got, want)
	}
	if accepted(t, quiet) {
		t.Fatal("the second host was dialled from inside a tunnel")
	}
	// Positive control: the same CONNECT sent to the proxy itself does
	// reach the second listener once it is listed.
	h2 := startProxy(t, Config{Allow: []string{hp("second.test", qport)}}, map[string][]string{"second.test": {"127.0.0.1"}})
	if resp, _ := h2.dial(t).roundTrip(t, "CONNECT", connectReq(hp("second.test", qport))); resp.StatusCode != 200 {
		t.Fatalf("control CONNECT: got %s, want 200", resp.Status)
	}
	if !accepted(t, quiet) {
		t.Fatal("control: a listed second host was not dialled, so the check above proves nothing")
	}
}

func TestIPLiteralRefused(t *testing.T) {
	quiet, qport := quietListener(t)
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", qport)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}})
	hosts := []string{"127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0x7f.1", "0x7f000001",
		"2130706433", "0177.0.0.1", "127.1", "127.0.0.1.", "8.8.8.8", "[2001:4860:4860::8888]"}
	for _, host := range hosts {
		for _, form := range []string{"CONNECT", "GET"} {
			t.Run(form+" "+host, func(t *testing.T) {
				authority := host + ":" + itoa(qport)
				raw := connectReq(authority)
				if form == "GET" {
					raw = getReq(authority, "/")
				}
				resp, body := h.dial(t).roundTrip(t, form, raw)
				if resp.StatusCode != 403 || resp.Header.Get("X-Stepgate-Proxy-Code") != CodeIPLiteral {
					t.Fatalf("got %s %q (%s), want 403 ip_literal", resp.Status, body, resp.Header.Get("X-Stepgate-Proxy-Code"))
				}
				mustContain(t, body, "IP")
				if accepted(t, quiet) {
					t.Fatal("an IP literal was dialled")
				}
			})
		}
	}
	if n := h.resolver.lookups.Load(); n != 0 {
		t.Errorf("%d lookups, want none: an IP literal is never resolved", n)
	}
	// Positive control: the literal listed as IP:port is reached.
	h2 := startProxy(t, Config{Allow: []string{hp("127.0.0.1", qport)}}, nil)
	if resp, _ := h2.dial(t).roundTrip(t, "CONNECT", connectReq(hp("127.0.0.1", qport))); resp.StatusCode != 200 {
		t.Fatalf("listed literal: got %s, want 200", resp.Status)
	}
	if !accepted(t, quiet) {
		t.Fatal("control: a listed literal was not dialled")
	}
}

func TestNameResolvingToPrivateAddressRefused(t *testing.T) {
	quiet, qport := quietListener(t)
	names := map[string][]string{
		"loop.wild.test":      {"127.0.0.1"},
		"mapped.wild.test":    {"::ffff:127.0.0.1"},
		"mixed.wild.test":     {"93.184.215.14", "127.0.0.1"},
		"meta.wild.test":      {"169.254.169.254"},
		"ten.wild.test":       {"10.1.2.3"},
		"cgnat.wild.test":     {"100.64.0.1"},
		"ula.wild.test":       {"fd00::1"},
		"v6loop.wild.test":    {"::1"},
		"zero.wild.test":      {"0.0.0.0"},
		"multicast.wild.test": {"239.1.1.1"},
		"nat64.wild.test":     {"64:ff9b::7f00:1"},
	}
	h := startProxy(t, Config{Allow: []string{hp("*.wild.test", qport)}}, names)
	for name := range names {
		for _, form := range []string{"CONNECT", "GET"} {
			t.Run(form+" "+name, func(t *testing.T) {
				raw := connectReq(hp(name, qport))
				if form == "GET" {
					raw = getReq(hp(name, qport), "/")
				}
				resp, body := h.dial(t).roundTrip(t, form, raw)
				if resp.StatusCode != 403 || resp.Header.Get("X-Stepgate-Proxy-Code") != CodePrivateAddress {
					t.Fatalf("got %s %q, want 403 private_address", resp.Status, body)
				}
				mustContain(t, body, "resolves to", "list "+hp(name, qport)+" exactly")
				if accepted(t, quiet) {
					t.Fatal("a private address was dialled")
				}
			})
		}
	}
	// Positive control: the same name listed exactly is reached.
	h2 := startProxy(t, Config{Allow: []string{hp("loop.wild.test", qport)}}, names)
	if resp, _ := h2.dial(t).roundTrip(t, "CONNECT", connectReq(hp("loop.wild.test", qport))); resp.StatusCode != 200 {
		t.Fatalf("listed name: got %s, want 200", resp.Status)
	}
	if !accepted(t, quiet) {
		t.Fatal("control: the listed name was not dialled")
	}
}

func TestOriginFormRefused(t *testing.T) {
	a := startUpstream(t, "A")
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}}, map[string][]string{"allowed.test": {"127.0.0.1"}})
	resp, body := h.dial(t).roundTrip(t, "GET", "GET /x HTTP/1.1\r\nHost: "+hp("allowed.test", a.port)+"\r\n\r\n")
	if resp.StatusCode != 400 {
		t.Fatalf("got %s, want 400", resp.Status)
	}
	mustContain(t, body, "origin-form", "absolute-form")
	if got := a.requests(); len(got) != 0 {
		t.Errorf("A received %q, want nothing", got)
	}
	if r := h.waitRecords(t, 1)[0]; r.Form != FormOrigin || r.Verdict != Refused || r.Status != 400 {
		t.Errorf("record %+v", r)
	}
}

// itoa is strconv.Itoa, short.
func itoa(n int) string { return strconv.Itoa(n) }
