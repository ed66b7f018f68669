package hosting

import (
	"context"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// Loader is the configuration a host on dataDir reads: the built-in
// agents, the user's file (config.UserFile) and the location's project
// file; the tools' output files go under dataDir/tool-output.
func Loader(dataDir string) config.Loader {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return config.Loader{UserFile: config.UserFile(), ToolOutputDir: filepath.Join(dataDir, "tool-output")}
}

// StartHost starts an engine host on nc with its state under o.DataDir
// (o's embedded-server fields are not used). It takes no lock on the data
// directory: the caller makes sure no other host uses it (see LockData).
func StartHost(ctx context.Context, nc *nats.Conn, o Options) (*commands.Host, error) {
	return startHost(ctx, nc, o, nil)
}

// startHost is StartHost with the user layer read from fleet, when set,
// and followed as it changes; startHost starts fleet.
func startHost(ctx context.Context, nc *nats.Conn, o Options, fleet *fleetConfig) (*commands.Host, error) {
	data, err := filepath.Abs(o.DataDir) // output files and rules name absolute paths
	if err != nil {
		return nil, err
	}
	o.DataDir = data
	o = o.withVersion()
	log := o.logger()
	l := Loader(o.DataDir)
	reg, err := tools(o.TestTools, l.UserFile)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	var fwd commands.Forwarder
	if o.Forward {
		fwd = service.NewForwarder(nc)
	}
	policy, secrets := commands.LoaderPolicy(l, log), l.Secrets
	fctx, stopFleet := context.WithCancel(ctx) // the document's watch, for the host's life
	if fc := fleet; fc != nil {
		if err := fc.start(fctx, js, step.DefaultStream, o.Replicas); err != nil {
			stopFleet()
			return nil, err
		}
		policy, secrets = fc.policy, func() (*config.Secrets, error) { return fc.loader().Secrets() }
	}
	h, err := commands.StartHost(ctx, js, reg, commands.HostConfig{
		StateDir: filepath.Join(o.DataDir, "state"),
		Stream:   step.StreamConfig{Replicas: o.Replicas},
		Engine: commands.Config{Host: o.HostName, Version: o.Version, ToolOutputDir: filepath.Join(o.DataDir, "tool-output"), Logger: log,
			Policy: policy, MaxCalls: o.MaxCalls, MaxExecutions: o.MaxExecutions,
			Metrics: o.Metrics, MCP: commands.MCPOptions{Secrets: secrets}, Tracer: o.Tracer, TraceContent: o.TraceContent,
			Locations: o.Locations, Forward: fwd, Pause: o.Pause,
			Sandbox: o.Sandbox, SandboxDenied: hostSecrets(o.DataDir, l.UserFile, o.SecretFiles)},
		Projector: projection.Options{Logger: log},
		Lease:     o.Lease,
	})
	if err != nil {
		stopFleet() // a host that does not start follows nothing (startHostWaiting tries again)
		return nil, err
	}
	go func() { <-h.Done(); stopFleet() }()
	return h, nil
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
