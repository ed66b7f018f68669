package main

import (
	"errors"
	"os"

	"github.com/nats-io/nats.go"
)

// errAuthWithNATS is `serve --auth` with --nats: the file configures the
// embedded server only; an external server or cluster loads it itself.
var errAuthWithNATS = errors.New("--auth configures the embedded server; with --nats, give the servers the file (include it in each node's configuration)")

// credentials returns the client options that identify this process to
// NATS (see resolveCreds): those an in-process connection to an embedded
// server with --auth needs as well, where the network options (TLS,
// reconnects) do not apply. They are settled once per process: the
// password file is read, and --password warned about, once.
func (f *connFlags) credentials() ([]nats.Option, error) {
	if f.resolved == nil {
		c, err := f.resolveCreds(os.Getenv, f.stderr())
		if err != nil {
			return nil, err
		}
		f.resolved = &c
	}
	return f.resolved.options(), nil
}
