package hosting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/commands/notify"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/step"
)

// ServeOptions configure a served host: the host's Options and the parts
// served beside it.
type ServeOptions struct {
	Options
	// Dial connects the host to an external NATS server or cluster (with
	// ReconnectOptions, a host waits for a server that is not up yet); nil
	// for an embedded server on DataDir. It is called once the data
	// directory is locked (it keeps the projection's checkpoints); the host
	// then follows the fleet's configuration document, and waits for
	// JetStream for as long as the context of Start lives.
	Dial func() (*nats.Conn, error)
	// MetricsAddr serves Prometheus metrics on http://MetricsAddr/metrics,
	// on a registry of the host's own; "" for none, and then nothing is
	// registered. It replaces Options.Metrics.
	MetricsAddr string
	// Binding binds each run to the NATS principal that starts it (see
	// service.ServeBound); nil for runs unbound.
	Binding *service.Binding
	// PublicURL is the web app's external base URL (behind a proxy):
	// trusted as an origin, and the base of links to tickets, in webhooks
	// too; "" for none.
	PublicURL string
	// Web serves the operators' web app; nil for none.
	Web *WebOptions
}

// Served is a host served as `engine serve` serves it: the host, the
// stepgate service on its connection and, as asked, the metrics endpoint,
// the webhook deliverer of the user's file and the operators' web app. Start
// makes it (everything listens from then on); Run runs it until it stops;
// Close lets go of one that is not run.
type Served struct {
	log      *slog.Logger
	host     *commands.Host
	conn     *nats.Conn
	server   *step.Embedded // nil with ServeOptions.Dial
	hostName string
	stop     func() error // the host, its connection, the server, the data directory's lock

	metrics   *metricsServer
	notifier  *notify.Deliverer // nil when the user layer declares no webhook
	svcCancel context.CancelFunc
	svcWait   func() error
	web       *webApp
	done      bool // run or closed
}

// Start starts the host o asks for and the parts served beside it, and
// binds their listeners; nothing is served over HTTP until Run.
func Start(ctx context.Context, o ServeOptions) (*Served, error) {
	o.Options = o.Options.withVersion()
	log := o.logger()
	var reg *prometheus.Registry
	if o.MetricsAddr != "" {
		reg = prometheus.NewRegistry() // this host's own: several hosts may share a process
		m, err := newHostMetrics(reg)
		if err != nil {
			return nil, err
		}
		o.Metrics = m
	}
	s := &Served{log: log}
	userConfig := Loader(o.DataDir) // the user layer: the local file, or the fleet's document
	if o.Dial != nil {
		fleet := newFleetConfig(userConfig, log)
		release, err := claim(&o.Options) // the checkpoints are in DataDir
		if err != nil {
			return nil, err
		}
		nc, err := o.Dial()
		if err != nil {
			return nil, errors.Join(err, release())
		}
		host, err := startHostWaiting(ctx, nc, o.Options, fleet)
		if err != nil {
			nc.Close()
			return nil, errors.Join(err, release())
		}
		s.conn, s.host = nc, host
		s.stop = func() error { err := host.Close(); nc.Close(); return errors.Join(err, release()) }
		userConfig = fleet.loader() // operators and webhooks: the document as the host started
	} else {
		e, err := StartEmbedded(ctx, o.Options)
		if err != nil {
			return nil, err
		}
		s.conn, s.host, s.server, s.stop = e.Conn, e.Host, e.Server, e.Close
		o.HostName = e.HostName
	}
	s.hostName = o.HostName
	if err := s.assemble(ctx, o, reg, userConfig); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if have, asked := s.host.Log.Replicas(); have != asked {
		log.Warn("the stream exists with another replica count; kept it (change it with the nats CLI: nats stream edit --replicas)",
			"stream", s.host.Log.Name(), "replicas", have, "asked", asked)
	}
	return s, nil
}

// assemble adds to s's host the parts o asks for: the metrics endpoint
// (reg, nil for none), the webhooks and the web app of userConfig, and the
// service.
func (s *Served) assemble(ctx context.Context, o ServeOptions, reg *prometheus.Registry, userConfig config.Loader) error {
	log := o.logger()
	var operators config.Operators
	if o.Web != nil {
		if o.Web.Operators == nil {
			return errors.New("hosting: WebOptions.Operators is required")
		}
		ops, err := o.Web.Operators(userConfig)
		if err != nil {
			return err
		}
		operators = ops
	}
	var notifyReg prometheus.Registerer // webhook counters only with metrics
	if reg != nil {
		err := reg.Register(newBacklogCollector(s.host, time.Now))
		if err == nil {
			s.metrics, err = listenMetrics(o.MetricsAddr, reg, log)
		}
		if err != nil {
			return err
		}
		notifyReg = reg
	}
	notifier, err := newNotifier(ctx, s.conn, s.host, userConfig, o.PublicURL, o.Version, notifyReg, log)
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	s.notifier = notifier
	svcCtx, svcCancel := context.WithCancel(context.Background())
	var svcWait func() error
	if o.Binding == nil {
		svcWait, err = service.Serve(svcCtx, s.conn, s.host, o.Version, log)
	} else {
		svcWait, err = service.ServeBound(svcCtx, s.conn, s.host, o.Version, log, *o.Binding)
	}
	if err != nil {
		svcCancel()
		return err
	}
	s.svcCancel, s.svcWait = svcCancel, svcWait
	if o.Web != nil {
		// What the service answers with, in process.
		if s.web, err = startWeb(*o.Web, o.PublicURL, commands.Wire{Host: s.host}, s.host.Log, operators, log); err != nil {
			return err
		}
	}
	return nil
}

// Host is the engine host.
func (s *Served) Host() *commands.Host { return s.host }

// Conn is the host's NATS connection, the service's too.
func (s *Served) Conn() *nats.Conn { return s.conn }

// HostName is the name the host commits under.
func (s *Served) HostName() string { return s.hostName }

// ClientURL is the embedded server's URL for other processes; "" without
// a listener, or on an external server (ServeOptions.Dial).
func (s *Served) ClientURL() string {
	if s.server == nil {
		return ""
	}
	return s.server.ClientURL()
}

// MetricsURL is where the metrics are served; "" for none.
func (s *Served) MetricsURL() string {
	if s.metrics == nil {
		return ""
	}
	return s.metrics.URL()
}

// WebURL is where the operators' web app is served; "" for none.
func (s *Served) WebURL() string {
	if s.web == nil {
		return ""
	}
	return s.web.URL()
}

// Close lets go of a host that was started and not run: its listeners, the
// service, the host, its connection and server, the data directory. After
// Run it does nothing.
func (s *Served) Close() error {
	if s.done {
		return nil
	}
	s.done = true
	if s.web != nil {
		s.web.close()
	}
	var err error
	if s.svcCancel != nil {
		s.svcCancel()
		err = s.svcWait()
	}
	if s.metrics != nil {
		s.metrics.close()
	}
	return errors.Join(err, s.stop())
}
