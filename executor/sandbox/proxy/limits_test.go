package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestHeaderTooLargeAnswered431(t *testing.T) {
	a := startUpstream(t, "A")
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}, MaxHeaderBytes: 1024},
		map[string][]string{"allowed.test": {"127.0.0.1"}})
	raw := "GET http://" + hp("allowed.test", a.port) + "/ HTTP/1.1\r\nX-Big: " + strings.Repeat("x", 2000) + "\r\n\r\n"
	resp, _ := h.dial(t).roundTrip(t, "GET", raw)
	if resp.StatusCode != 431 {
		t.Fatalf("got %s, want 431", resp.Status)
	}
	if len(a.requests()) != 0 {
		t.Fatal("an oversized request was forwarded")
	}
	// Its record, before the control's: two connections' records land in
	// the order their handlers end, which a busy machine may swap.
	if r := h.waitRecords(t, 1)[0]; r.Code != CodeHeaderTooLarge || r.Verdict != Refused {
		t.Errorf("record %+v", r)
	}
	// Control: the same request under the limit goes through.
	raw = "GET http://" + hp("allowed.test", a.port) + "/ HTTP/1.1\r\nX-Big: " + strings.Repeat("x", 500) + "\r\n\r\n"
	if resp, _ := h.dial(t).roundTrip(t, "GET", raw); resp.StatusCode != 200 {
		t.Fatalf("control: got %s, want 200", resp.Status)
	}
	if r := h.waitRecords(t, 2)[1]; r.Verdict != Allowed || r.Status != 200 {
		t.Errorf("the control's record %+v", r)
	}
}

func TestConnectionsPastMaxConnsAnswered503(t *testing.T) {
	a := startUpstream(t, "A")
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port)}, MaxConns: 1},
		map[string][]string{"allowed.test": {"127.0.0.1"}})
	first := h.dial(t)
	if resp, _ := first.roundTrip(t, "CONNECT", connectReq(hp("allowed.test", a.port))); resp.StatusCode != 200 {
		t.Fatalf("first CONNECT: got %s", resp.Status)
	}
	resp, body := h.dial(t).roundTrip(t, "CONNECT", connectReq(hp("allowed.test", a.port)))
	if resp.StatusCode != 503 {
		t.Fatalf("second CONNECT while the first is open: got %s, want 503", resp.Status)
	}
	mustContain(t, body, "already serves 1 connections")
	// Once the first ends its slot is free again (bounded retry: the
	// handler releases it after recording).
	first.Close()
	h.waitRecords(t, 2)
	deadline := time.Now().Add(hang)
	for {
		resp, _ := h.dial(t).roundTrip(t, "GET", getReq(hp("allowed.test", a.port), "/"))
		if resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot was never released: %s", resp.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIdleTunnelClosed(t *testing.T) {
	// A silent upstream: accepts and never says anything.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	h := startProxy(t, Config{Allow: []string{hp("silent.test", port)}, IdleTimeout: 100 * time.Millisecond},
		map[string][]string{"silent.test": {"127.0.0.1"}})
	c := h.dial(t)
	if resp, _ := c.roundTrip(t, "CONNECT", connectReq(hp("silent.test", port))); resp.StatusCode != 200 {
		t.Fatalf("CONNECT: got %s", resp.Status)
	}
	// The read ends (EOF) when the proxy gives up on the idle tunnel; the
	// client's own deadline is only there to stop a hang.
	if _, err := io.ReadAll(c.br); err != nil {
		t.Fatalf("read: %v (the proxy did not close the idle tunnel)", err)
	}
	if r := h.waitRecords(t, 1)[0]; r.Error != "idle timeout" {
		t.Errorf("record %+v, want error idle timeout", r)
	}
}

func TestGarbageAnswered400(t *testing.T) {
	h := startProxy(t, Config{Allow: []string{"allowed.test:80"}}, nil)
	for _, raw := range []string{
		"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", // a TLS hello, sent to a proxy
		"CONNECT\r\n\r\n",
		"CONNECT allowed.test HTTP/1.1\r\n\r\n",
		"CONNECT allowed.test:0 HTTP/1.1\r\n\r\n",
		"CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n",
		"CONNECT [allowed.test]:80 HTTP/1.1\r\n\r\n",
		"CONNECT [fe80::1%25eth0]:80 HTTP/1.1\r\n\r\n",
		"CONNECT allowed.test:80/path HTTP/1.1\r\n\r\n",
		"CONNECT user@allowed.test:80 HTTP/1.1\r\n\r\n",
		"GET http://allowed.test:80/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET http://allowed.test:80/ HTTP/9.9\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
	} {
		resp, body := h.dial(t).roundTrip(t, "GET", raw)
		if resp.StatusCode != 400 {
			t.Errorf("%q: got %s %q, want 400", raw, resp.Status, body)
		}
	}
}

func TestServeReturnsWhenCancelled(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	c := dialProxy(t, "tcp", ln.Addr().String()) // an open connection, mid-request
	io.WriteString(c, "GET http://a.test/ HTTP/1.1\r\n")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(hang):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := io.ReadAll(c); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Logf("client read after cancel: %v", err)
	}
}

func TestNewRejectsBadAllowEntries(t *testing.T) {
	for _, e := range []string{"example.com", "example.com:*", "*:443", "*.:443", "a*.b:443", "*.*.b:443",
		"127.1:80", "0x7f.1:80", "[example.com]:443", "[fe80::1%eth0]:80", "exa mple.com:80", "example.com:0", "ex%41mple.com:80"} {
		if _, err := New(Config{Allow: []string{e}}); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%q): got %v, want ErrConfig", e, err)
		}
	}
	for _, e := range []string{"example.com:443", "*.example.com:443", "127.0.0.1:8080", "[::1]:8080", "Example.COM.:80"} {
		if _, err := New(Config{Allow: []string{e}}); err != nil {
			t.Errorf("New(%q): %v", e, err)
		}
	}
}

func TestServeReturnsAcceptErrorAfterClosingConnections(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background(), ln) }()
	c := dialProxy(t, "tcp", ln.Addr().String())
	io.WriteString(c, "GET http://a.test/ HTTP/1.1\r\n") // a handler waits for the rest
	ln.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("serve: %v, want the accept error", err)
		}
	case <-time.After(hang):
		t.Fatal("Serve did not return after its listener failed")
	}
	// The handler's connection was closed, not left to its idle timeout.
	if _, err := io.ReadAll(c); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("client read: %v", err)
	}
}
