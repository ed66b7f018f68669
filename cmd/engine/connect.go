package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
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

// tools is the process layer this binary installs; withTest adds the test
// tools (engine serve --test-tools). websearch is installed only when the
// user configuration file names a search endpoint (websearch.endpoint): the
// catalogue is the host's, so a project file's endpoint does not install it.
func tools(withTest bool, userFile string) (*executor.Registry, error) {
	ts, err := builtin.Tools()
	if err != nil {
		return nil, err
	}
	if userFile != "" {
		f, err := config.Load(userFile, gate.SourceUser)
		if err != nil {
			return nil, err
		}
		if f != nil && f.WebsearchEndpoint != "" {
			ws, err := builtin.Websearch(f.WebsearchEndpoint)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", userFile, err)
			}
			ts = append(ts, ws)
		}
	}
	if withTest {
		more, err := builtin.TestTools()
		if err != nil {
			return nil, err
		}
		ts = append(ts, more...)
	}
	return executor.NewRegistry(ts...)
}

// embedded is an engine host on an embedded server, in this process.
type embedded struct {
	srv     *step.Embedded
	nc      *nats.Conn
	host    *commands.Host
	release func() error // the data directory's lock
	// hostName is the name the host commits under.
	hostName string
}

// hostOptions configure a host started by this binary.
type hostOptions struct {
	dataDir   string
	listen    string // embedded server listener, "" for none
	sync      string
	replicas  int
	hostName  string // "" for the data directory's identity (see hostIdentity)
	hostFlag  bool   // hostName came from --host: stored as the identity if there is none yet, warned about if it differs
	log       *slog.Logger
	testTools bool
	// sandbox is the host's floor (--sandbox), and secretFiles the files
	// of its own credentials (password, credentials, TLS key), denied to
	// every sandboxed command.
	sandbox     sandboxFlag
	secretFiles []string
	limits      stepLimits
	metrics     commands.Metrics // nil for none
	// tracer traces the host's calls, commits and waits (nil for none);
	// traceContent records arguments and results on the spans.
	tracer       trace.TracerProvider
	traceContent bool
	lease        commands.LeaseConfig
	// authFile is the embedded server's users and permissions (serve
	// --auth), and clientOpts the host's own credentials on it.
	authFile   string
	clientOpts []nats.Option
	// locations are the directories the host holds (serve --locations);
	// forward has it forward what acts on a location another host holds,
	// and announce its own (serve).
	locations []string
	forward   bool
	// fleet, when set, has the host read its user layer from the cluster's
	// configuration document as it changes (serve --nats; see fleetConfig);
	// startHost starts it.
	fleet *fleetConfig
}

// startEmbedded starts a server on <data>/nats and a host with its state in
// <data>/state.
func startEmbedded(ctx context.Context, o hostOptions) (*embedded, error) {
	release, err := claim(&o)
	if err != nil {
		return nil, err
	}
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(o.dataDir, "nats"), Listen: o.listen, Sync: o.sync, AuthFile: o.authFile})
	if err != nil {
		return nil, errors.Join(err, release())
	}
	e := &embedded{srv: srv, release: release, hostName: o.hostName}
	if e.nc, err = srv.Connect(o.clientOpts...); err != nil {
		e.close()
		return nil, err
	}
	if e.host, err = startHost(ctx, e.nc, o); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *embedded) close() error {
	var err error
	if e.host != nil {
		err = e.host.Close()
	}
	if e.nc != nil {
		e.nc.Close()
	}
	e.srv.Shutdown()
	return errors.Join(err, e.release())
}

// claim takes o's data directory for this process (its lock) and settles
// the name the host commits under (o.hostName: the directory's identity
// unless set). release lets the directory go.
func claim(o *hostOptions) (release func() error, err error) {
	if release, err = lockData(o.dataDir); err != nil {
		return nil, err
	}
	if o.hostName != "" && !o.hostFlag {
		return release, nil // a name of the binary's own (demo, verify): not the directory's
	}
	name, note, err := hostIdentity(o.dataDir, o.hostName)
	if err != nil {
		return nil, errors.Join(err, release())
	}
	if note != "" && o.log != nil {
		o.log.Warn(note)
	}
	o.hostName = name
	return release, nil
}

// startHost starts an engine host on nc with its state under o.dataDir.
func startHost(ctx context.Context, nc *nats.Conn, o hostOptions) (*commands.Host, error) {
	data, err := filepath.Abs(o.dataDir) // output files and rules name absolute paths
	if err != nil {
		return nil, err
	}
	o.dataDir = data
	l := loader(o.dataDir)
	reg, err := tools(o.testTools, l.UserFile)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	var fwd commands.Forwarder
	if o.forward {
		fwd = service.NewForwarder(nc)
	}
	policy, secrets := commands.LoaderPolicy(l, o.log), l.Secrets
	fctx, stopFleet := context.WithCancel(ctx) // the document's watch, for the host's life
	if fc := o.fleet; fc != nil {
		if err := fc.start(fctx, js, step.DefaultStream, o.replicas); err != nil {
			stopFleet()
			return nil, err
		}
		policy, secrets = fc.policy, func() (*config.Secrets, error) { return fc.loader().Secrets() }
	}
	h, err := commands.StartHost(ctx, js, reg, commands.HostConfig{
		StateDir: filepath.Join(o.dataDir, "state"),
		Stream:   step.StreamConfig{Replicas: o.replicas},
		Engine: commands.Config{Host: o.hostName, Version: version(), ToolOutputDir: filepath.Join(o.dataDir, "tool-output"), Logger: o.log,
			Policy: policy, MaxCalls: o.limits.maxCalls, MaxExecutions: o.limits.maxExecutions,
			Metrics: o.metrics, MCP: commands.MCPOptions{Secrets: secrets}, Tracer: o.tracer, TraceContent: o.traceContent,
			Locations: o.locations, Forward: fwd,
			Sandbox: o.sandbox.floor(), SandboxDenied: hostSecrets(o.dataDir, l.UserFile, o.secretFiles)},
		Projector: projectionOptions(o.log),
		Lease:     o.lease,
	})
	if err != nil {
		stopFleet() // a host that does not start follows nothing (startHostWaiting tries again)
		return nil, err
	}
	go func() { <-h.Done(); stopFleet() }()
	return h, nil
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
	e, err := startEmbedded(ctx, hostOptions{dataDir: f.data, log: log, testTools: f.testTools, sandbox: f.sandbox, tracer: f.tracer})
	if err != nil {
		return nil, fmt.Errorf("open the engine on %s (is another engine using it? then use --nats): %w", f.data, err)
	}
	return &backend{api: commands.Wire{Host: e.host}, close: e.close}, nil
}

// registerTestTools registers --test-tools, of the verbs that execute on an
// embedded engine (run, mcp serve).
func (f *connFlags) registerTestTools(fs *flag.FlagSet) {
	fs.BoolVar(&f.testTools, "test-tools", false, "without --nats: also install the test tools echo, echo_fx, wait, wait_fx and append_fx in the embedded engine (for benchmarks and end-to-end tests; never in production)")
	f.sandbox.register(fs, "without --nats: ")
}

// hostSecrets are the paths of a host's own secrets that no sandboxed
// command may read: its data directory (the log's storage, its
// checkpoints, its identity), the user's file and the files of its
// credentials.
func hostSecrets(dataDir, userFile string, files []string) []string {
	out := []string{dataDir}
	if userFile != "" {
		out = append(out, userFile)
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if abs, err := filepath.Abs(f); err == nil {
			out = append(out, abs)
		}
	}
	return out
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
