package main

import (
	"errors"
	"flag"

	"github.com/stepgate/stepgate/cmd/engine/service"
)

// bindFlags are serve's flags that bind runs to NATS principals.
type bindFlags struct {
	on        bool
	overseers []service.Overseer
}

func (b *bindFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&b.on, "bind-runs", false, "bind each run to the NATS principal that starts it, as the server names it in Nats-Request-Info (clients in accounts of their own that import the service with share: true, deploy/access/principals.conf); anyone else gets run_not_found")
	fs.Func("overseer", "with --bind-runs: a principal that sees runs it did not start, nats:ACCOUNT or nats:ACCOUNT/USER, every run or only those of the projects after =: nats:APPROVERS/approver-web=web,api (repeatable)", func(s string) error {
		o, err := service.ParseOverseer(s)
		if err != nil {
			return err
		}
		b.overseers = append(b.overseers, o)
		return nil
	})
}

// errOverseerUnbound is --overseer without --bind-runs: it would mean
// nothing, and an operator who wrote it expects runs bound.
var errOverseerUnbound = errors.New("--overseer needs --bind-runs")

// errBindWithoutAuth is --bind-runs on an embedded server without users:
// every client is then in the engine's own account, and no request
// carries the server's Nats-Request-Info.
var errBindWithoutAuth = errors.New("--bind-runs needs clients in accounts of their own: give the embedded server --auth deploy/access/principals.conf (or use --nats with servers configured so)")

// binding is the service's binding, nil when runs are not bound.
func (b *bindFlags) binding() (*service.Binding, error) {
	if !b.on {
		if len(b.overseers) > 0 {
			return nil, errOverseerUnbound
		}
		return nil, nil
	}
	return &service.Binding{Overseers: b.overseers}, nil
}
