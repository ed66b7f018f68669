// Package steptest starts real embedded NATS servers for tests. A test that
// cannot start its server fails loudly; it never skips.
package steptest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
)

// Server is an embedded server in a temporary directory with one client.
type Server struct {
	// Dir is the server's data directory.
	Dir string
	// Embedded is the running server.
	Embedded *step.Embedded
	// Conn is an in-process client connection.
	Conn *nats.Conn
	// JS is JetStream on Conn.
	JS jetstream.JetStream
	// Log is the opened commit log.
	Log *step.Log
}

// Start starts a server on dir (a fresh temporary directory when dir is "")
// and opens the log; everything is stopped when the test ends.
func Start(t testing.TB, dir string) *Server {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: dir})
	if err != nil {
		t.Fatalf("start embedded nats-server: %v", err)
	}
	s := &Server{Dir: dir, Embedded: e}
	t.Cleanup(s.Stop)
	if s.Conn, err = e.Connect(); err != nil {
		t.Fatal(err)
	}
	if s.JS, err = jetstream.New(s.Conn); err != nil {
		t.Fatal(err)
	}
	if s.Log, err = step.Open(ctx, s.JS, step.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	return s
}

// Stop closes the client and shuts the server down; calling it twice is safe.
func (s *Server) Stop() {
	if s.Conn != nil {
		s.Conn.Close()
		s.Conn = nil
	}
	if s.Embedded != nil {
		s.Embedded.Shutdown()
		s.Embedded = nil
	}
}

// Listening starts a server with a listener on a free loopback port and no
// stream made yet (what a first host or a config push makes), for a test
// that reaches it from a client of its own: it returns the server's URL
// and JetStream on an in-process connection. Both stop when the test ends.
func Listening(t testing.TB) (url string, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("start embedded nats-server: %v", err)
	}
	t.Cleanup(e.Shutdown)
	nc, err := e.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	return e.ClientURL(), js
}
