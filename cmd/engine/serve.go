package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/step"
)

// runServe is `engine serve`: an engine host with the stepgate service, on an
// embedded server (default) or an external NATS server or cluster (--nats).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	var cf connFlags
	cf.register(fs)
	listen := fs.String("listen", "127.0.0.1:4222", "address of the embedded server's listener for other processes (\"\" for none)")
	replicas := fs.Int("replicas", 1, "stream replicas (3 on a cluster)")
	sync := fs.String("sync", step.SyncInterval, "embedded server storage sync: interval or always")
	hostName := fs.String("host", "", "this host's name in its commits; default the data directory's identity (DATA/host.json, made on the first start), so a restarted host recovers what it left in doubt")
	testTools := fs.Bool("test-tools", false, "also install the test tools echo, echo_fx, wait, wait_fx and append_fx (for benchmarks and end-to-end tests; never in production)")
	var floor sandboxFlag
	floor.register(fs, "")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics on http://ADDR/metrics, e.g. 127.0.0.1:9090 (\"\" for none)")
	lease := fs.Duration("lease", commands.DefaultLeaseTTL, "this host's lease: renewed every fifth of it; a host whose renewals stopped for this long is taken over by another, which settles what it left in doubt (0: no lease, no takeovers)")
	auth := fs.String("auth", "", "the embedded server's users and permissions: a nats-server configuration file whose authorization block is enforced (deploy/access/accounts.conf); the host connects with --user and --password-file (or STEPGATE_NATS_USER and STEPGATE_NATS_PASSWORD), or --creds")
	traceContent := fs.Bool("trace-content", false, "record tool-call arguments and results on the trace spans (also STEPGATE_TRACE_CONTENT=true); tracing itself is on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER=otlp is set")
	var locations []string
	fs.Func("locations", "a directory this host holds, as a glob of absolute paths (/srv/ws/*, /mnt/shared/**; repeatable): runs start, and their calls run, here only in those, and hosts of one cluster forward to each other what acts on a location the other holds; none: whatever exists on this host's filesystem", func(s string) error {
		if err := commands.CheckLocations([]string{s}); err != nil {
			return err
		}
		locations = append(locations, s)
		return nil
	})
	var bind bindFlags
	bind.register(fs)
	var limits stepLimits
	limits.register(fs)
	var wf webFlags
	wf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{fmt.Sprintf("engine serve: unexpected argument %q (the data directory is --data DIR)", fs.Arg(0))}
	}
	if *lease < 0 {
		return usageError{fmt.Sprintf("--lease %s: want a positive duration, or 0 for no lease", *lease)}
	}
	if err := checkPublicURL(wf.publicURL); err != nil {
		return err
	}
	var operators config.Operators
	if wf.addr != "" && cf.natsURL == "" { // with --nats, the fleet's: read once the host has its document
		ops, err := loader(cf.data).Operators()
		if err != nil {
			return err
		}
		if err := wf.check(ops); err != nil {
			return err
		}
		operators = ops
	}
	if *auth != "" && cf.natsURL != "" {
		return errAuthWithNATS
	}
	binding, err := bind.binding()
	if err != nil {
		return err
	}
	if binding != nil && *auth == "" && cf.natsURL == "" {
		return errBindWithoutAuth
	}
	log := logger(stderr)
	clientOpts, err := cf.credentials()
	if err != nil {
		return err
	}
	opts := hosting.ServeOptions{
		Options: hosting.Options{AuthFile: *auth, ClientOptions: clientOpts, DataDir: cf.data, Listen: *listen, Sync: *sync, Replicas: *replicas,
			HostName: *hostName, OverrideIdentity: *hostName != "", Log: log, Version: version(), TestTools: *testTools,
			MaxCalls: limits.maxCalls, MaxExecutions: limits.maxExecutions, Sandbox: floor.floor(), SecretFiles: []string{cf.passwordFile, cf.creds, cf.tlsKey},
			Lease: commands.LeaseConfig{TTL: *lease, Off: *lease == 0}, Locations: locations, Forward: true, Pause: hostPauseHook(os.Getenv)},
		MetricsAddr: *metricsAddr, Binding: binding, PublicURL: wf.publicURL,
	}
	tracer, stopTracing, err := hosting.NewTracing(ctx, os.Getenv, version())
	if err != nil {
		return err
	}
	defer func() {
		if err := stopTracing(); err != nil {
			log.Warn("trace export did not finish", "err", err)
		}
	}()
	opts.Tracer = tracer
	opts.TraceContent = *traceContent || envTrue(os.Getenv("STEPGATE_TRACE_CONTENT"))
	readOperators := func(config.Loader) (config.Operators, error) { return operators, nil } // read and checked above
	if cf.natsURL != "" {
		opts.Dial = func() (*nats.Conn, error) { return cf.dialServe(log) }
		readOperators = wf.operators // the fleet's document as the host started, checked as the local file's
	}
	opts.Web = wf.options(readOperators)
	served, err := hosting.Start(ctx, opts)
	if err != nil {
		return err
	}
	where := cf.natsURL
	if cf.natsURL == "" {
		where = fmt.Sprintf("%s, data in %s", served.ClientURL(), cf.data)
		if served.ClientURL() == "" {
			where = "no listener (in-process only), data in " + cf.data
		}
	}
	have, _ := served.Host().Log.Replicas()
	fmt.Fprintf(stdout, "stepgate serving on %s (host %s, stream %s with %d replicas)\n", where, served.HostName(), served.Host().Log.Name(), have)
	if u := served.MetricsURL(); u != "" {
		fmt.Fprintf(stdout, "metrics on %s\n", u)
	}
	if u := served.WebURL(); u != "" {
		fmt.Fprintf(stdout, "operators' inbox on %s\n", u)
	}
	return served.Run(ctx)
}
