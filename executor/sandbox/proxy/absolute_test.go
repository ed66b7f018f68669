package proxy

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
)

func TestKeepAliveEachRequestChecked(t *testing.T) {
	a := startUpstream(t, "A")
	quiet, qport := quietListener(t)
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}, "unlisted.test": {"127.0.0.1"}})
	c := h.dial(t)
	for _, path := range []string{"/one", "/two"} {
		resp, body := c.roundTrip(t, "GET", getReq(hp("allowed.test", a.port), path))
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("%s: got %s close=%v, want 200 kept alive", path, resp.Status, resp.Close)
		}
		mustContain(t, body, "path="+path)
	}
	// The third request, on the same connection, goes to an unlisted host.
	resp, body := c.roundTrip(t, "GET", getReq(hp("unlisted.test", qport), "/three"))
	if resp.StatusCode != 403 {
		t.Fatalf("keep-alive request to an unlisted host: got %s, want 403", resp.Status)
	}
	mustContain(t, body, "not on the allow-list")
	if accepted(t, quiet) {
		t.Fatal("the unlisted host was dialled on a kept-alive connection")
	}
	recs := h.waitRecords(t, 3)
	if recs[0].Verdict != Allowed || recs[1].Verdict != Allowed || recs[2].Verdict != Refused {
		t.Errorf("records %+v: want allowed, allowed, refused", recs)
	}
}

func TestHostHeaderDisagreeingWithURIRefused(t *testing.T) {
	a := startUpstream(t, "A")
	quiet, qport := quietListener(t)
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port), hp("other.test", qport)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}, "other.test": {"127.0.0.1"}})
	raw := "GET http://" + hp("allowed.test", a.port) + "/ HTTP/1.1\r\nHost: " + hp("other.test", qport) + "\r\n\r\n"
	resp, body := h.dial(t).roundTrip(t, "GET", raw)
	if resp.StatusCode != 403 || resp.Header.Get("X-Stepgate-Proxy-Code") != CodeHostMismatch {
		t.Fatalf("got %s %q, want 403 host_mismatch", resp.Status, body)
	}
	if len(a.requests()) != 0 || accepted(t, quiet) {
		t.Fatal("a request with a disagreeing Host header was forwarded")
	}
	// Controls: the same Host in another spelling (case, default port
	// omitted) agrees; no Host header at all is accepted (HTTP/1.0).
	for _, raw := range []string{
		"GET http://" + hp("allowed.test", a.port) + "/ HTTP/1.1\r\nHost: " + hp("ALLOWED.test", a.port) + "\r\n\r\n",
		"GET http://" + hp("allowed.test", a.port) + "/ HTTP/1.0\r\n\r\n",
	} {
		if resp, body := h.dial(t).roundTrip(t, "GET", raw); resp.StatusCode != 200 {
			t.Errorf("%q: got %s %q, want 200", raw, resp.Status, body)
		}
	}
}

func TestAbsoluteFormForwardsBodyAndOnlyHTTP(t *testing.T) {
	a := startUpstream(t, "A")
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}}, map[string][]string{"allowed.test": {"127.0.0.1"}})
	c := h.dial(t)
	raw := "POST http://" + hp("allowed.test", a.port) + "/post HTTP/1.1\r\nHost: " + hp("allowed.test", a.port) +
		"\r\nExpect: 100-continue\r\nContent-Length: 5\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\nhello"
	resp, body := c.roundTrip(t, "POST", raw)
	if resp.StatusCode != 200 {
		t.Fatalf("POST: got %s", resp.Status)
	}
	mustContain(t, body, "path=/post body=hello")
	if got := a.requests(); len(got) != 1 || strings.Contains(got[0], "Proxy-") || strings.Contains(got[0], "Expect") || strings.Contains(got[0], "User-Agent") {
		t.Errorf("A received %q: want the request without hop-by-hop headers, and no header the client did not send", got)
	}
	resp, body = h.dial(t).roundTrip(t, "GET", "GET https://"+hp("allowed.test", a.port)+"/ HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 400 {
		t.Fatalf("https absolute-form: got %s, want 400", resp.Status)
	}
	mustContain(t, body, "use CONNECT")
}

func TestResolvedOnceAndDialledByAddress(t *testing.T) {
	// A resolver that answers a public address first and loopback after
	// (DNS rebinding): the proxy must dial what it checked.
	var mu sync.Mutex
	answers := [][]string{{"93.184.215.14"}, {"127.0.0.1"}}
	res := &fakeResolver{}
	rebinding := resolverFunc(func(ctx context.Context, network, host string) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		res.lookups.Add(1)
		a := answers[0]
		answers = answers[1:]
		return a, nil
	})
	var dialled []string
	dial := func(_ context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return nil, errors.New("test dialer: refusing to leave the machine")
	}
	h := startProxy(t, Config{Allow: []string{"*.rebind.test:80"}, Resolver: rebinding, Dial: dial}, nil)
	resp, body := h.dial(t).roundTrip(t, "GET", getReq("x.rebind.test:80", "/"))
	if resp.StatusCode != 502 {
		t.Fatalf("got %s %q, want 502 from the test dialer", resp.Status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialled) != 1 || dialled[0] != "93.184.215.14:80" || res.lookups.Load() != 1 {
		t.Fatalf("dialled %q after %d lookups, want the checked 93.184.215.14:80 after 1", dialled, res.lookups.Load())
	}
	if r := h.waitRecords(t, 1)[0]; r.Verdict != Allowed || r.Code != CodeDialFailed || !strings.Contains(r.Error, "refusing") {
		t.Errorf("record %+v: want allowed, dial_failed", r)
	}
}

// resolverFunc adapts a function returning address strings to Resolver.
type resolverFunc func(ctx context.Context, network, host string) ([]string, error)

// LookupNetIP calls f.
func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netipAddr, error) {
	ss, err := f(ctx, network, host)
	if err != nil {
		return nil, err
	}
	out := make([]netipAddr, len(ss))
	for i, s := range ss {
		out[i] = mustAddr(s)
	}
	return out, nil
}
