package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/stepgate/stepgate/commands"
)

// agentBackend is the engine engine agent drives, and the connection
// flags a printed command needs to reach it.
type agentBackend struct {
	api   engineAPI
	close func() error
	hint  string
}

// open is the engine the flags name: the service at --nats; or an engine
// embedded on --data, which with --listen also serves other processes (a
// human answers a ticket while this one waits).
func (a *agentFlags) open(ctx context.Context, cf *connFlags, log *slog.Logger) (*agentBackend, error) {
	if cf.natsURL != "" || a.listen == "" {
		b, err := cf.open(ctx, log)
		if err != nil {
			return nil, err
		}
		return &agentBackend{api: b.api, close: b.close, hint: cf.hint()}, nil
	}
	o := embeddedOptions(cf, log)
	o.Listen = a.listen
	e, err := startEmbedded(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("open the engine on %s (is another engine using it? then use --nats): %w", cf.data, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	stop, err := serveAPI(sctx, e.Conn, e.Host, version(), log)
	if err != nil {
		cancel()
		return nil, errors.Join(err, e.Close())
	}
	closeAll := func() error {
		cancel()
		return errors.Join(stop(), e.Close())
	}
	return &agentBackend{api: commands.Wire{Host: e.Host}, close: closeAll, hint: " --nats " + shellQuote(e.Server.ClientURL())}, nil
}
