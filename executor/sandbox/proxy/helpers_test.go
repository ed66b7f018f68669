package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hang bounds every wait in these tests, only to stop a hang.
const hang = 30 * time.Second

// fakeResolver maps test names to addresses, counting the lookups.
type fakeResolver struct {
	names   map[string][]string
	lookups atomic.Int64
}

// LookupNetIP answers from the map, as a resolver on the host would.
func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	var out []netip.Addr
	for _, a := range r.names[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// upstream is a real HTTP server on loopback TCP that says who it is and
// remembers each request line it received (CONNECT ones included).
type upstream struct {
	name string
	port int
	mu   sync.Mutex
	seen []string
}

// startUpstream serves name on 127.0.0.1 until the test ends.
func startUpstream(t *testing.T, name string) *upstream {
	t.Helper()
	return startUpstreamAt(t, name, "127.0.0.1:0")
}

// startUpstreamAt serves name on address until the test ends.
func startUpstreamAt(t *testing.T, name, address string) *upstream {
	t.Helper()
	ln, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	u := &upstream{name: name, port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		line := r.Method + " " + r.RequestURI + " host=" + r.Host
		for _, k := range []string{"Proxy-Authorization", "Proxy-Connection", "Expect", "User-Agent"} {
			if v := r.Header.Get(k); v != "" {
				line += " " + k + "=" + v
			}
		}
		u.seen = append(u.seen, line)
		u.mu.Unlock()
		if r.Method == "CONNECT" {
			http.Error(w, "no tunnels here", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "hello from %s path=%s body=%s", name, r.URL.Path, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return u
}

// requests is what the upstream received so far.
func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// quietListener listens on loopback and never accepts by itself: the
// test checks its backlog (accepted) to prove nothing dialled it.
func quietListener(t *testing.T) (*net.TCPListener, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener), ln.Addr().(*net.TCPAddr).Port
}

// accepted reports whether a connection reached ln (a completed
// handshake waits in its backlog whether or not it was accepted: the
// accept below finds it at once; the short deadline only ends the wait
// when there is none, since a deadline already past skips the accept).
func accepted(t *testing.T, ln *net.TCPListener) bool {
	t.Helper()
	ln.SetDeadline(time.Now().Add(20 * time.Millisecond))
	c, err := ln.Accept()
	if err == nil {
		c.Close()
		return true
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("accept: %v", err)
	}
	return false
}

// harness is a proxy serving a unix socket (as in production) and a TCP
// listener, with its records.
type harness struct {
	p        *Proxy
	sock     string
	tcp      string
	resolver *fakeResolver
	mu       sync.Mutex
	recs     []Conn
}

// startProxy serves cfg (with the harness's resolver and recorder if
// cfg has none) until the test ends.
func startProxy(t *testing.T, cfg Config, names map[string][]string) *harness {
	t.Helper()
	h := &harness{resolver: &fakeResolver{names: names}}
	if cfg.Resolver == nil {
		cfg.Resolver = h.resolver
	}
	cfg.Record = func(c Conn) {
		h.mu.Lock()
		h.recs = append(h.recs, c)
		h.mu.Unlock()
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	dir, err := os.MkdirTemp("", "sgpx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	h.sock = filepath.Join(dir, "proxy.sock")
	uln, err := net.Listen("unix", h.sock)
	if err != nil {
		t.Fatal(err)
	}
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.tcp = tln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, ln := range []net.Listener{uln, tln} {
		wg.Go(func() {
			if err := p.Serve(ctx, ln); err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return h
}

// records is what the proxy recorded so far.
func (h *harness) records() []Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Conn(nil), h.recs...)
}

// waitRecords waits (bounded) until n attempts are recorded: a record is
// made when an attempt ends, after the client saw its answer.
func (h *harness) waitRecords(t *testing.T, n int) []Conn {
	t.Helper()
	deadline := time.Now().Add(hang)
	for {
		if r := h.records(); len(r) >= n || time.Now().After(deadline) {
			if len(r) < n {
				t.Fatalf("got %d records, want %d: %+v", len(r), n, r)
			}
			return r
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dial opens a client connection to the proxy's unix socket.
func (h *harness) dial(t *testing.T) *client {
	t.Helper()
	return dialProxy(t, "unix", h.sock)
}

// client is a raw connection to the proxy.
type client struct {
	net.Conn
	br *bufio.Reader
}

// dialProxy connects to the proxy on network, address.
func dialProxy(t *testing.T, network, address string) *client {
	t.Helper()
	c, err := net.DialTimeout(network, address, hang)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(hang))
	t.Cleanup(func() { c.Close() })
	return &client{Conn: c, br: bufio.NewReader(c)}
}

// roundTrip writes raw and reads one response (to method's request).
func (c *client) roundTrip(t *testing.T, method, raw string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	for err == nil && resp.StatusCode == http.StatusContinue {
		resp, err = http.ReadResponse(c.br, &http.Request{Method: method})
	}
	if err != nil {
		t.Fatalf("read response to %q: %v", raw, err)
	}
	if method == "CONNECT" && resp.StatusCode == 200 {
		return resp, ""
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(body)
}

// connectReq is a CONNECT request for authority.
func connectReq(authority string) string {
	return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"
}

// getReq is an absolute-form GET of http://authority/path.
func getReq(authority, path string) string {
	return "GET http://" + authority + path + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"
}

// hp is "name:port".
func hp(name string, port int) string { return net.JoinHostPort(name, strconv.Itoa(port)) }

// mustContain fails unless s contains every want.
func mustContain(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%q does not contain %q", s, w)
		}
	}
}

// netipAddr is netip.Addr, for the test resolvers.
type netipAddr = netip.Addr

// mustAddr parses an address or panics (test tables only).
func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// writePEM writes cert's leaf as a PEM file in a temporary directory.
func writePEM(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
