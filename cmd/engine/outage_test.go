package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// A host that closes its own connection (serve stopping) has no outage to
// report: the warning is for a connection NATS broke.
func TestServeConnectionClosedByItsHostIsNoOutage(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	defer srv.Shutdown()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	var logs syncbuf.Buffer
	cf := connFlags{natsURL: srv.ClientURL()}
	nc, err := cf.dialServe(slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	time.Sleep(100 * time.Millisecond) // the handlers run on the connection's own goroutine
	if got := logs.String(); strings.Contains(got, "NATS unavailable") {
		t.Errorf("closing the host's own connection logged an outage:\n%s", got)
	}
}
