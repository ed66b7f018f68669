package hosting

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"go.opentelemetry.io/otel/trace"
)

// Options configure a host: where it keeps its state, what it is called,
// what it installs and what bounds it. The zero value of a field is the
// engine's default.
type Options struct {
	// DataDir is the host's data directory: the embedded server's storage
	// (DataDir/nats), the projection's checkpoints (DataDir/state), the
	// tools' output files and the host's identity (DataDir/host.json).
	DataDir string
	// Listen is the embedded server's listener for other processes, such
	// as 127.0.0.1:4222; "" for none (in-process connections only).
	Listen string
	// Sync is the embedded server's storage sync: step.SyncInterval ("" too)
	// or step.SyncAlways.
	Sync string
	// Replicas is the log stream's replica count (3 on a cluster; 0 is 1).
	Replicas int
	// HostName is the name the host commits under; "" for the data
	// directory's identity, made on its first start, so that a restarted
	// host recovers what it left in doubt.
	HostName string
	// OverrideIdentity says HostName was asked for in place of the data
	// directory's identity (serve --host): it is stored as the identity
	// when the directory has none, and a difference is warned about.
	// Without it a HostName is the program's own for this start (the demo,
	// verify), and the directory's identity is neither read nor written.
	OverrideIdentity bool
	// Log receives the host's warnings and errors; nil for slog.Default().
	Log *slog.Logger
	// Version is the program's version (SemVer), in the host's commits and
	// its service's description; "" for 0.0.0-dev.
	Version string
	// TestTools also installs the test tools echo, echo_fx, wait, wait_fx
	// and append_fx (benchmarks and end-to-end tests; never production).
	TestTools bool
	// Sandbox is the host's floor: the least contained its runs' commands
	// may be (the configuration may only tighten it).
	Sandbox config.SandboxProfile
	// SecretFiles are the files of the host's own credentials (NATS
	// password, credentials, TLS key): with the data directory and the
	// user's file, no sandboxed command may read them.
	SecretFiles []string
	// MaxCalls is the most calls one step may make, and MaxExecutions the
	// most tool calls the host runs at once; 0 for the engine's defaults.
	MaxCalls, MaxExecutions int
	// Metrics observes the host's commits, verdicts and calls; nil for
	// none (Start sets it when ServeOptions.MetricsAddr is set).
	Metrics commands.Metrics
	// Tracer traces the host's calls, commits and waits (nil for none);
	// TraceContent records the calls' arguments and results on the spans.
	Tracer       trace.TracerProvider
	TraceContent bool
	// Pause is the engine's test hook (commands.Config.Pause).
	Pause func(ctx context.Context, point string)
	// Lease is the host's lease (the zero value: the engine's default).
	Lease commands.LeaseConfig
	// AuthFile is the embedded server's users and permissions: a
	// nats-server configuration file whose authorization block is enforced;
	// ClientOptions are the host's own credentials on it.
	AuthFile      string
	ClientOptions []nats.Option
	// Locations are the directories the host holds, as globs of absolute
	// paths; none for whatever exists on its filesystem. Forward has the
	// host forward what acts on a location another host holds, and
	// announce its own.
	Locations []string
	Forward   bool
}

// logger is o's logger, slog.Default() when o has none (as the engine's).
func (o Options) logger() *slog.Logger {
	if o.Log == nil {
		return slog.Default()
	}
	return o.Log
}

// devVersion is the version of a program that names none.
const devVersion = "0.0.0-dev"

// withVersion is o with its version, devVersion when it names none.
func (o Options) withVersion() Options {
	if o.Version == "" {
		o.Version = devVersion
	}
	return o
}
