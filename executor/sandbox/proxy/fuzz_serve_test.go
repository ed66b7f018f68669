package proxy

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// FuzzServeConn feeds arbitrary client bytes to a connection handler
// whose upstreams are in-memory pipes: it must never panic, and must
// end once the client is gone.
func FuzzServeConn(f *testing.F) {
	for _, s := range []string{
		"CONNECT allowed.test:80 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\nCONNECT other.test:80 HTTP/1.1\r\n\r\n",
		"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET http://other.test/ HTTP/1.1\r\n\r\n",
		"POST http://allowed.test/ HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
		"POST http://allowed.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
		"GET http://a.wild.test:443/ HTTP/1.1\r\n\r\n",
		"CONNECT 127.0.0.1:8080 HTTP/1.1\r\n\r\n",
		"CONNECT 0x7f.1:8080 HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"GET http://allowed.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	p, err := New(Config{
		Allow:          []string{"allowed.test:80", "*.wild.test:443", "127.0.0.1:8080"},
		Resolver:       &fakeResolver{names: map[string][]string{"allowed.test": {"127.0.0.1"}, "a.wild.test": {"10.0.0.1"}}},
		Dial:           pipeUpstream,
		IdleTimeout:    200 * time.Millisecond,
		MaxHeaderBytes: 1024,
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		server, client := net.Pipe()
		var wg sync.WaitGroup
		wg.Go(func() { io.Copy(io.Discard, client) })
		wg.Go(func() { client.Write(data); client.Close() })
		done := make(chan struct{})
		go func() { p.serveConn(context.Background(), server); close(done) }()
		select {
		case <-done:
		case <-time.After(hang):
			t.Fatal("serveConn did not end after the client closed")
		}
		server.Close()
		wg.Wait()
	})
}

// pipeUpstream is an in-memory upstream that answers one fixed response
// and discards what it is sent.
func pipeUpstream(_ context.Context, _, _ string) (net.Conn, error) {
	proxySide, up := net.Pipe()
	go io.Copy(io.Discard, up)
	go func() {
		io.WriteString(up, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		up.Close()
	}()
	return proxySide, nil
}
