package proxy

import "testing"

func TestIPv6UpstreamReachedOnlyWhenListed(t *testing.T) {
	a := startUpstreamAt(t, "A6", "[::1]:0")
	names := map[string][]string{"six.test": {"::1"}, "six.wild.test": {"::1"}}
	h := startProxy(t, Config{Allow: []string{hp("::1", a.port), hp("six.test", a.port)}}, names)
	for _, authority := range []string{hp("::1", a.port), hp("six.test", a.port)} {
		c := h.dial(t)
		if resp, _ := c.roundTrip(t, "CONNECT", connectReq(authority)); resp.StatusCode != 200 {
			t.Fatalf("CONNECT %s: got %s, want 200", authority, resp.Status)
		}
		mustContain(t, getInTunnel(t, c, authority, "/v6"), "hello from A6 path=/v6")
	}
	// Not listed: the same address through a wildcard, or in another spelling.
	h2 := startProxy(t, Config{Allow: []string{hp("*.wild.test", a.port)}}, names)
	for _, tc := range []struct{ authority, code string }{
		{hp("six.wild.test", a.port), CodePrivateAddress},
		{hp("::1", a.port), CodeIPLiteral},
		{hp("0:0:0:0:0:0:0:1", a.port), CodeIPLiteral},
	} {
		resp, body := h2.dial(t).roundTrip(t, "CONNECT", connectReq(tc.authority))
		if resp.StatusCode != 403 || resp.Header.Get("X-Stepgate-Proxy-Code") != tc.code {
			t.Errorf("CONNECT %s: got %s %q, want 403 %s", tc.authority, resp.Status, body, tc.code)
		}
	}
	if got := len(a.requests()); got != 2 {
		t.Errorf("A6 received %d requests, want the 2 listed ones", got)
	}
}
