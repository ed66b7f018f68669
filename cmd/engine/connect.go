package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
	"go.opentelemetry.io/otel/trace"
)

// connFlags are the options every verb that talks to an engine shares:
// either an embedded engine on a data directory, or a NATS server or
// cluster (with its credentials and TLS).
type connFlags struct {
	data     string
	natsURL  string
	user     string
	password string
	creds    string
	tlsCert  string
	tlsKey   string
	tlsCA    string
	inbox    string        // prefix of the reply inboxes (a role's, see deploy/access)
	timeout  time.Duration // client verbs: how long one request may take (0: the endpoint's default)
	// passwordFile holds the NATS password (--password-file).
	passwordFile string
	// creates is set by the verbs that may make an engine on --data (run,
	// mcp serve, mcp ls): every other client verb needs one there.
	creates bool
	// testTools: the embedded engine on --data also installs the test tools
	// (--test-tools of run and mcp serve; with --nats the served host's own
	// --test-tools decides).
	testTools bool
	// sandbox is the embedded engine's floor (--sandbox of run and mcp
	// serve; with --nats the served host's own decides).
	sandbox sandboxFlag
	// tracer traces the embedded engine (engine agent's, when the
	// environment asks); nil for none.
	tracer trace.TracerProvider
	// fs is the verb's flag set: which connection flags the user gave
	// (hints repeat them), and where warnings go.
	fs *flag.FlagSet
	// resolved are the credentials once settled (see credentials).
	resolved *natsCreds
}

// stderr is where the verb's warnings go: its flag set's output.
func (f *connFlags) stderr() io.Writer {
	if f.fs != nil {
		return f.fs.Output()
	}
	return os.Stderr
}

func (f *connFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.data, "data", defaultData, "data directory: the embedded server's storage and this host's projection checkpoints")
	fs.StringVar(&f.natsURL, "nats", "", "URL(s) of a NATS server or cluster, comma-separated (instead of --data)")
	fs.StringVar(&f.user, "user", "", "NATS user name (default $"+envNATSUser+")")
	fs.StringVar(&f.passwordFile, "password-file", "", "a file holding the NATS password (a regular file; its trailing newline is trimmed); default $"+envNATSPassword)
	fs.StringVar(&f.password, "password", "", "deprecated, shows in ps: use --password-file or $"+envNATSPassword)
	fs.StringVar(&f.creds, "creds", "", "NATS credentials file (default $"+envNATSCreds+")")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "client TLS certificate")
	fs.StringVar(&f.tlsKey, "tls-key", "", "client TLS key")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "CA certificate to verify the server")
	fs.StringVar(&f.inbox, "inbox-prefix", "", "prefix of the subjects answers come back on (default _INBOX; a role's own, such as _INBOX.agent, where the NATS permissions give each role its own)")
}

// registerClient registers the flags of a verb that is a client of an
// engine: the connection's and --timeout.
func (f *connFlags) registerClient(fs *flag.FlagSet) {
	f.register(fs)
	fs.DurationVar(&f.timeout, "timeout", 0, "with --nats: how long one request may take, sent again after the engine restarts included, before giving up "+
		"(default 15m for a step, a reply, starting and ending a run; 24h for waiting on a human (run --wait); 1m for queries)")
}

// options returns the NATS client options the flags ask for: reconnect for
// ever, quickly (a restarted engine is back in seconds).
func (f *connFlags) options() ([]nats.Option, error) {
	opts := []nats.Option{nats.Name("stepgate"), nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond), nats.ReconnectJitter(100*time.Millisecond, time.Second)}
	creds, err := f.credentials()
	if err != nil {
		return nil, err
	}
	opts = append(opts, creds...)
	if f.tlsCert != "" || f.tlsKey != "" {
		opts = append(opts, nats.ClientCert(f.tlsCert, f.tlsKey))
	}
	if f.tlsCA != "" {
		opts = append(opts, nats.RootCAs(f.tlsCA))
	}
	if f.inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(f.inbox))
	}
	return opts, nil
}

// dialClient connects a client of the service: one that waits for a NATS
// server that is not up yet (or is restarting) rather than failing, keeps
// what it sends while disconnected (nats.go's reconnect buffer), and sends
// its requests again after a reconnect (see sgclient.Dial).
func (f *connFlags) dialClient(log *slog.Logger, opts ...sgclient.Option) (*client, error) {
	nopts, err := f.options()
	if err != nil {
		return nil, err
	}
	nopts = append(nopts,
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if !errors.Is(err, nats.ErrSlowConsumer) { // late answers to copies of a request are dropped
				log.Warn("NATS", "url", f.natsURL, "err", err)
			}
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("lost the connection to NATS; reconnecting", "url", f.natsURL, "err", err)
			}
		}))
	return sgclient.Dial(f.natsURL, append([]sgclient.Option{sgclient.WithNATSOptions(nopts...), sgclient.WithTimeout(f.timeout)}, opts...)...)
}

// startEmbedded is hosting.StartEmbedded for this binary: a host of its
// version.
func startEmbedded(ctx context.Context, o hosting.Options) (*hosting.Embedded, error) {
	o.Version = version()
	return hosting.StartEmbedded(ctx, o)
}

// backend is an engine a client verb talks to, and how to let go of it.
type backend struct {
	api   engineAPI
	close func() error
}

// open returns the engine the flags name: a client of the stepgate service
// at --nats, or an embedded engine on --data.
func (f *connFlags) open(ctx context.Context, log *slog.Logger) (*backend, error) {
	if f.natsURL != "" {
		c, err := f.dialClient(log)
		if err != nil {
			return nil, err
		}
		return &backend{api: c, close: func() error { c.Close(); return nil }}, nil
	}
	if _, err := os.Stat(f.data); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if !f.creates {
		if err := f.requireEngine(); err != nil {
			return nil, err
		}
	}
	e, err := startEmbedded(ctx, embeddedOptions(f, log))
	if err != nil {
		return nil, fmt.Errorf("open the engine on %s (is another engine using it? then use --nats): %w", f.data, err)
	}
	return &backend{api: commands.Wire{Host: e.Host}, close: e.Close}, nil
}

// embeddedOptions are the options of the host embedded on f's --data: its test
// tools, floor and tracer.
func embeddedOptions(f *connFlags, log *slog.Logger) hosting.Options {
	return hosting.Options{DataDir: f.data, Log: log, TestTools: f.testTools, Sandbox: f.sandbox.floor(), Tracer: f.tracer}
}

// registerTestTools registers --test-tools, of the verbs that execute on an
// embedded engine (run, mcp serve).
func (f *connFlags) registerTestTools(fs *flag.FlagSet) {
	fs.BoolVar(&f.testTools, "test-tools", false, "without --nats: also install the test tools echo, echo_fx, wait, wait_fx and append_fx in the embedded engine (for benchmarks and end-to-end tests; never in production)")
	f.sandbox.register(fs, "without --nats: ")
}

// with opens the engine the flags name, calls fn with it, and lets it go.
func (f *connFlags) with(ctx context.Context, stderr io.Writer, fn func(api engineAPI) error) error {
	b, err := f.open(ctx, logger(stderr))
	if err != nil {
		return err
	}
	defer b.close()
	return fn(b.api)
}
