package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	group "github.com/oklog/run"
	"github.com/prometheus/client_golang/prometheus"
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
	opts := hostOptions{authFile: *auth, clientOpts: clientOpts, dataDir: cf.data, listen: *listen, sync: *sync, replicas: *replicas, hostName: *hostName, hostFlag: *hostName != "", log: log, testTools: *testTools, limits: limits, sandbox: floor, secretFiles: []string{cf.passwordFile, cf.creds, cf.tlsKey},
		lease: commands.LeaseConfig{TTL: *lease, Off: *lease == 0}, locations: locations, forward: true}
	tracer, stopTracing, err := newTracing(ctx, os.Getenv)
	if err != nil {
		return err
	}
	defer func() {
		if err := stopTracing(); err != nil {
			log.Warn("trace export did not finish", "err", err)
		}
	}()
	opts.tracer = tracer
	opts.traceContent = *traceContent || envTrue(os.Getenv("STEPGATE_TRACE_CONTENT"))
	reg := prometheus.NewRegistry() // this host's own: several hosts may share a process
	if *metricsAddr != "" {
		m, err := newHostMetrics(reg)
		if err != nil {
			return err
		}
		opts.metrics = m
	}

	var (
		nc    *nats.Conn
		host  *commands.Host
		stop  func() error
		where = cf.natsURL
	)
	userConfig := loader(cf.data) // the user layer: the local file, or the fleet's document
	if cf.natsURL != "" {
		opts.fleet = newFleetConfig(userConfig, log)
		release, err := claim(&opts) // the checkpoints are in --data
		if err != nil {
			return err
		}
		if nc, err = cf.dialServe(log); err != nil {
			return errors.Join(err, release())
		}
		if host, err = startHostWaiting(ctx, nc, opts); err != nil {
			nc.Close()
			return errors.Join(err, release())
		}
		stop = func() error { err := host.Close(); nc.Close(); return errors.Join(err, release()) }
		userConfig = opts.fleet.loader() // operators and webhooks: the document as the host started
		if wf.addr != "" {
			if operators, err = fleetOperators(userConfig, wf); err != nil {
				return errors.Join(err, stop())
			}
		}
	} else {
		e, err := startEmbedded(ctx, opts)
		if err != nil {
			return err
		}
		nc, host, stop = e.nc, e.host, e.close
		opts.hostName = e.hostName
		where = fmt.Sprintf("%s, data in %s", e.srv.ClientURL(), cf.data)
		if e.srv.ClientURL() == "" {
			where = "no listener (in-process only), data in " + cf.data
		}
	}
	var metrics *metricsServer
	if *metricsAddr != "" {
		err := reg.Register(newBacklogCollector(host, time.Now))
		if err == nil {
			metrics, err = listenMetrics(*metricsAddr, reg, log)
		}
		if err != nil {
			return errors.Join(err, stop())
		}
	}
	var notifyReg prometheus.Registerer // webhook counters only with --metrics
	if metrics != nil {
		notifyReg = reg
	}
	notifier, err := newNotifier(ctx, nc, host, userConfig, wf.publicURL, notifyReg, log)
	if err != nil {
		if metrics != nil {
			metrics.stop(err)
		}
		return errors.Join(fmt.Errorf("webhooks: %w", err), stop())
	}
	svcCtx, svcCancel := context.WithCancel(context.Background())
	defer svcCancel()
	svcWait, err := serveAPIBound(svcCtx, nc, host, version(), log, binding)
	if err != nil {
		if metrics != nil {
			metrics.stop(err)
		}
		return errors.Join(err, stop())
	}
	var webapp *webApp
	if wf.addr != "" {
		webapp, err = startWeb(wf, commands.Wire{Host: host}, host.Log, operators, log) // what the service answers with, in process
		if err != nil {
			svcCancel()
			if metrics != nil {
				metrics.stop(err)
			}
			return errors.Join(err, svcWait(), stop())
		}
	}
	have, asked := host.Log.Replicas()
	if have != asked {
		log.Warn("the stream exists with another replica count; kept it (change it with the nats CLI: nats stream edit --replicas)",
			"stream", host.Log.Name(), "replicas", have, "asked", asked)
	}
	fmt.Fprintf(stdout, "stepgate serving on %s (host %s, stream %s with %d replicas)\n", where, opts.hostName, host.Log.Name(), have)
	if metrics != nil {
		fmt.Fprintf(stdout, "metrics on %s\n", metrics.URL())
	}
	if webapp != nil {
		fmt.Fprintf(stdout, "operators' inbox on %s\n", webapp.URL())
	}

	// The long-running parts are actors of one group: the first to stop
	// (a signal, the service failing, the projector failing) stops them all.
	var g group.Group
	sctx, cancel := context.WithCancel(ctx)
	g.Add(func() error {
		<-sctx.Done()
		return ctx.Err()
	}, func(error) { cancel() })
	g.Add(svcWait, func(error) { svcCancel() })
	if metrics != nil {
		g.Add(metrics.run, metrics.stop)
	}
	if notifier != nil { // delivers the fleet's lifecycle events beside the host
		nctx, ncancel := context.WithCancel(context.Background())
		g.Add(func() error { return notifier.Run(nctx) }, func(error) { ncancel() })
	}
	if webapp != nil {
		wctx, wcancel := context.WithCancel(context.Background())
		defer wcancel()
		g.Add(func() error { return webapp.run(wctx) }, func(error) { webapp.stop(wcancel) })
	}
	quit := make(chan struct{})
	g.Add(func() error {
		select {
		case <-host.Done():
			return fmt.Errorf("projector stopped: %w", host.Err())
		case <-quit:
			return nil
		}
	}, func(error) { close(quit) })
	err = g.Run()
	svcCancel()
	cancel()
	if cerr := stop(); cerr != nil {
		log.Error("stopping", "err", cerr)
	}
	if ctx.Err() != nil {
		return nil // interrupted: a clean stop
	}
	return err
}
