package httpguard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveTest serves a handler under limits on a loopback port: POST
// /login reads its body and answers ok; GET /stream and POST /call (after
// reading its body) stream a numbered line every 50 ms until the client
// goes. It returns the address.
func serveTest(t *testing.T, l Limits) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		fmt.Fprint(w, "ok")
	})
	stream := func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "%d\n", i); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}
	mux.HandleFunc("GET /stream", stream)
	mux.HandleFunc("POST /call", stream)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := Server(mux, l, log)
	go func() { _ = srv.Serve(Listen(ln, l, log)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// dialFrom connects to addr from the loopback address from (127.0.0.x).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startLogin sends a sign-in's headers and the first byte of a body of
// 1000: the server holds the connection for the rest.
func startLogin(t *testing.T, c net.Conn) {
	t.Helper()
	if _, err := io.WriteString(c, "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nt"); err != nil {
		t.Fatal(err)
	}
}

// closed is closed when the server closes c (a read ends: an answer and
// then the end, or the end).
func closed(c net.Conn) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, c)
	}()
	return done
}

// signIn is a whole sign-in from 127.0.0.1, which must be answered ok.
func signIn(t *testing.T, addr string) {
	t.Helper()
	res, err := http.Post("http://"+addr+"/login", "application/x-www-form-urlencoded", strings.NewReader("token=x"))
	if err != nil {
		t.Fatalf("a legitimate sign-in: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Fatalf("a legitimate sign-in: %d %q", res.StatusCode, b)
	}
}

// Connections beyond the per-address cap are closed at once while those
// within it are held; a client from another address is still served;
// beyond the total cap every new connection is closed.
func TestCapClosesHoardersAndServesOthers(t *testing.T) {
	l := Limits{HeaderTimeout: time.Hour, RequestTimeout: time.Hour, IdleTimeout: time.Hour, MaxConns: 8, MaxConnsPerAddr: 4}
	addr := serveTest(t, l)
	const extra = 6
	ends := make(chan struct{}, l.MaxConnsPerAddr+extra)
	for range l.MaxConnsPerAddr + extra {
		c := dialFrom(t, "127.0.0.2", addr)
		startLogin(t, c)
		go func() { <-closed(c); ends <- struct{}{} }()
	}
	for gone := 0; gone < extra; gone++ {
		select {
		case <-ends:
		case <-time.After(time.Minute):
			t.Fatalf("%d of %d connections beyond the per-address cap of %d closed", gone, extra, l.MaxConnsPerAddr)
		}
	}
	signIn(t, addr) // another address is served meanwhile
	if n := len(ends); n > 0 {
		t.Errorf("%d more connections closed than the %d beyond the cap", n, extra)
	}

	for range l.MaxConns - l.MaxConnsPerAddr {
		startLogin(t, dialFrom(t, "127.0.0.3", addr))
	}
	over := dialFrom(t, "127.0.0.4", addr)
	startLogin(t, over)
	select {
	case <-closed(over):
	case <-time.After(time.Minute):
		t.Fatalf("a connection beyond the total cap of %d was not closed", l.MaxConns)
	}
}

// A body trickled a byte at a time is cut at the request timeout: the
// server closes the connection. The connection's place is then free.
func TestTrickledBodyIsClosed(t *testing.T) {
	l := Limits{HeaderTimeout: time.Hour, RequestTimeout: 200 * time.Millisecond, IdleTimeout: time.Hour, MaxConns: 8, MaxConnsPerAddr: 1}
	addr := serveTest(t, l)
	c := dialFrom(t, "127.0.0.2", addr)
	startLogin(t, c)
	end := closed(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // trickle until the server is gone
		for ctx.Err() == nil {
			if _, err := c.Write([]byte("a")); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	select {
	case <-end:
	case <-time.After(time.Minute):
		t.Fatal("the server still holds a trickled body a minute on")
	}
	// The one place of 127.0.0.2 is free again: a whole request from it is served.
	again := dialFrom(t, "127.0.0.2", addr)
	if _, err := io.WriteString(again, "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\nConnection: close\r\n\r\ntoken=x"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(again), nil)
	if err != nil {
		t.Fatalf("a request after the trickled one: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("a request after the trickled one: %d", res.StatusCode)
	}
}

// Streams are not cut by the request timeout: a GET without a body, and
// a POST whose body was sent, stream for many times the timeout.
func TestStreamsOutliveTheRequestTimeout(t *testing.T) {
	l := Limits{HeaderTimeout: time.Hour, RequestTimeout: 100 * time.Millisecond, IdleTimeout: 100 * time.Millisecond, MaxConns: 8, MaxConnsPerAddr: 8}
	addr := serveTest(t, l)
	for _, req := range []struct{ method, body string }{{"GET", ""}, {"POST", `{"call":1}`}} {
		r, err := http.NewRequest(req.method, "http://"+addr+map[string]string{"GET": "/stream", "POST": "/call"}[req.method], strings.NewReader(req.body))
		if err != nil {
			t.Fatal(err)
		}
		if req.body == "" {
			r.Body = http.NoBody
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(res.Body)
		start := time.Now()
		n := 0
		for sc.Scan() && time.Since(start) < 20*l.RequestTimeout {
			n++
		}
		res.Body.Close()
		if time.Since(start) < 20*l.RequestTimeout {
			t.Errorf("%s stream ended after %d lines: %v", req.method, n, sc.Err())
		}
	}
}
