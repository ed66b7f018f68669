package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
)

// engineAPI is everything a verb may ask an engine, in the wire contract's
// types: the service's Go client (--nats) and the in-process engine
// (commands.Wire) both implement it.
type engineAPI = sgclient.API

// client is the service's Go client, what --nats verbs use.
type client = sgclient.Client

// newClient is a client on nc (which the caller closes); timeout as
// sgclient.WithTimeout.
func newClient(nc *nats.Conn, timeout time.Duration) *client {
	return sgclient.New(nc, sgclient.WithTimeout(timeout))
}

// serveAPI exposes h as the "stepgate" micro service on nc (see
// service.Serve).
func serveAPI(ctx context.Context, nc *nats.Conn, h *commands.Host, version string, log *slog.Logger) (stop func() error, err error) {
	return service.Serve(ctx, nc, h, version, log)
}
