package main

import (
	"errors"

	"github.com/nats-io/nats.go"
)

// errAuthWithNATS is `serve --auth` with --nats: the file configures the
// embedded server only; an external server or cluster loads it itself.
var errAuthWithNATS = errors.New("--auth configures the embedded server; with --nats, give the servers the file (include it in each node's configuration)")

// credentials returns the client options that identify this process to
// NATS (--user/--password, --creds): those an in-process connection to an
// embedded server with --auth needs as well, where the network options
// (TLS, reconnects) do not apply.
func (f *connFlags) credentials() []nats.Option {
	var opts []nats.Option
	if f.user != "" {
		opts = append(opts, nats.UserInfo(f.user, f.password))
	}
	if f.creds != "" {
		opts = append(opts, nats.UserCredentials(f.creds))
	}
	return opts
}
