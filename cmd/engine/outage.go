package main

import (
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
)

// dialServe connects an engine host to the external NATS server. It does
// not fail when no server is up yet: it keeps trying in the background, for
// ever, waiting longer after each failed attempt; and it says once per
// outage that NATS is unavailable, and again when it is back (see
// hosting.ReconnectOptions).
func (f *connFlags) dialServe(log *slog.Logger) (*nats.Conn, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	opts = append(opts, hosting.ReconnectOptions(f.natsURL, log)...)
	nc, err := nats.Connect(f.natsURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", f.natsURL, err)
	}
	if !nc.IsConnected() {
		log.Warn("NATS unavailable at start; waiting for it", "url", f.natsURL)
	}
	return nc, nil
}
