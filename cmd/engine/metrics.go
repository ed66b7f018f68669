package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// Bounds of the metrics endpoint.
const (
	// lagTimeout bounds the stream look-up a scrape makes for the
	// projector's lag: a scrape never hangs on an unavailable NATS.
	lagTimeout = 2 * time.Second
	// metricsShutdown bounds how long stopping waits for scrapes in flight.
	metricsShutdown = 2 * time.Second
)

// hostMetrics is commands.Metrics on one host's Prometheus registry. Every
// label child the step path uses is resolved once (a tool's at its first
// run), so an observation is a map read and an atomic add: no allocation.
type hostMetrics struct {
	commitVec, conflictVec *prometheus.CounterVec
	forwardVec, noExecVec  *prometheus.CounterVec             // by location: a host's are few
	commits, conflicts     map[events.Kind]prometheus.Counter // read-only after newHostMetrics
	verdicts               map[string]prometheus.Counter      // read-only after newHostMetrics
	resume                 prometheus.Histogram
	toolVec                *prometheus.HistogramVec

	mu    sync.RWMutex
	tools map[string]prometheus.Observer // a tool's child, once it ran
}

// durationBuckets span a read-only call's 100µs to a long bash's minutes.
func durationBuckets() []float64 { return prometheus.ExponentialBuckets(0.0001, 4, 12) }

// newHostMetrics registers a host's metrics on reg.
func newHostMetrics(reg prometheus.Registerer) (*hostMetrics, error) {
	m := &hostMetrics{
		commitVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_commits_total",
			Help: "Commits this host appended to the log, by kind."}, []string{"kind"}),
		conflictVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_commit_conflicts_total",
			Help: "Commits of this host the log refused because another commit of the subject came first (lost races), by kind."}, []string{"kind"}),
		resume: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "stepgate_resume_latency_seconds",
			Help:    "From a reply approving a call arriving at this host to the call's result committed.",
			Buckets: durationBuckets()}),
		toolVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "stepgate_tool_duration_seconds",
			Help: "How long calls ran on this host, by tool.", Buckets: durationBuckets()}, []string{"tool"}),
		forwardVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_forwarded_total",
			Help: "Requests this host sent to the host that holds the run's location (placement), by location."}, []string{"location"}),
		noExecVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_no_executor_total",
			Help: "Requests this host answered no_executor: no live host held the run's location, by location."}, []string{"location"}),
		commits: map[events.Kind]prometheus.Counter{}, conflicts: map[events.Kind]prometheus.Counter{},
		verdicts: map[string]prometheus.Counter{}, tools: map[string]prometheus.Observer{},
	}
	verdictVec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_verdicts_total",
		Help: "Permission verdicts this host committed, by verdict (allow, block, confirm, reject)."}, []string{"verdict"})
	for _, c := range []prometheus.Collector{m.commitVec, m.conflictVec, verdictVec, m.resume, m.toolVec, m.forwardVec, m.noExecVec} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	// Every kind and verdict the engine commits has its counter from the
	// start, at 0.
	for _, k := range []events.Kind{events.KindStart, events.KindCatalog, events.KindDecide, events.KindSettle, events.KindStep,
		events.KindResolve, events.KindEnd, events.KindGrant, events.KindRecover, events.KindSweep, events.KindRegistry, events.KindTurn} {
		m.commits[k], m.conflicts[k] = m.commitVec.WithLabelValues(string(k)), m.conflictVec.WithLabelValues(string(k))
	}
	for _, v := range []string{events.VerdictAllow, events.VerdictBlock, events.VerdictConfirm, events.VerdictReject} {
		m.verdicts[v] = verdictVec.WithLabelValues(v)
	}
	return m, nil
}

// Commit counts a commit appended, or lost to another.
func (m *hostMetrics) Commit(kind events.Kind, conflict bool) {
	pre, vec := m.commits, m.commitVec
	if conflict {
		pre, vec = m.conflicts, m.conflictVec
	}
	if c, ok := pre[kind]; ok {
		c.Inc()
		return
	}
	vec.WithLabelValues(string(kind)).Inc() // a kind newer than this list
}

// Verdict counts a committed verdict; there are four.
func (m *hostMetrics) Verdict(v string) {
	if c, ok := m.verdicts[v]; ok {
		c.Inc()
	}
}

// ToolDone observes how long a call of tool ran.
func (m *hostMetrics) ToolDone(tool string, took time.Duration) {
	m.mu.RLock()
	o, ok := m.tools[tool]
	m.mu.RUnlock()
	if !ok {
		m.mu.Lock()
		if o, ok = m.tools[tool]; !ok {
			o = m.toolVec.WithLabelValues(tool)
			m.tools[tool] = o
		}
		m.mu.Unlock()
	}
	o.Observe(took.Seconds())
}

// Resumed observes a resume's latency.
func (m *hostMetrics) Resumed(took time.Duration) { m.resume.Observe(took.Seconds()) }

// Forwarded counts a request sent to the holder of location.
func (m *hostMetrics) Forwarded(location string) { m.forwardVec.WithLabelValues(location).Inc() }

// NoExecutor counts a no_executor answer for location.
func (m *hostMetrics) NoExecutor(location string) { m.noExecVec.WithLabelValues(location).Inc() }

// backlogCollector reads what a host has waiting at scrape time, from its
// projection: nothing is kept up per step.
type backlogCollector struct {
	host                                    *commands.Host
	clock                                   func() time.Time
	pending, oldest, lag, applied, quarants *prometheus.Desc
	leaseHeld, takeovers                    *prometheus.Desc
}

func newBacklogCollector(h *commands.Host, clock func() time.Time) *backlogCollector {
	return &backlogCollector{host: h, clock: clock,
		pending: prometheus.NewDesc("stepgate_tickets_pending", "Tickets waiting for an answer.", nil, nil),
		oldest: prometheus.NewDesc("stepgate_tickets_oldest_pending_age_seconds",
			"Age of the oldest ticket waiting for an answer (0 when none waits).", nil, nil),
		lag: prometheus.NewDesc("stepgate_projector_lag_sequences",
			"Stream sequences this host's projection trails the stream by (the stream's last sequence less the last applied).", nil, nil),
		applied: prometheus.NewDesc("stepgate_projector_applied_sequence", "The last stream sequence this host's projection applied.", nil, nil),
		quarants: prometheus.NewDesc("stepgate_quarantined_messages_total",
			"Messages of the log the folds skipped (undecodable, on a wrong subject, or not applicable); see engine quarantine.", nil, nil),
		leaseHeld: prometheus.NewDesc("stepgate_lease_held",
			"1 while this host holds its lease (renewed within its ttl less a margin, not taken over): only then does it start calls; 0 otherwise. Absent for a host without a lease (serve --lease 0).", nil, nil),
		takeovers: prometheus.NewDesc("stepgate_lease_takeovers_total",
			"Leases of other hosts this host took over (their renewals had stopped), settling what they left in doubt.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (b *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{b.pending, b.oldest, b.lag, b.applied, b.quarants, b.leaseHeld, b.takeovers} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The lag asks the stream, for
// lagTimeout at most; when it cannot, the scrape says why and serves the
// rest.
func (b *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	bl := b.host.Backlog()
	age := 0.0
	if !bl.Oldest.IsZero() {
		age = max(0, b.clock().Sub(bl.Oldest).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(b.pending, prometheus.GaugeValue, float64(bl.Pending))
	ch <- prometheus.MustNewConstMetric(b.oldest, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(b.applied, prometheus.GaugeValue, float64(bl.Applied))
	ch <- prometheus.MustNewConstMetric(b.quarants, prometheus.CounterValue, float64(bl.Quarantined))
	if l := b.host.Lease(); l.On {
		held := 0.0
		if l.Held {
			held = 1
		}
		ch <- prometheus.MustNewConstMetric(b.leaseHeld, prometheus.GaugeValue, held)
		ch <- prometheus.MustNewConstMetric(b.takeovers, prometheus.CounterValue, float64(l.Takeovers))
	}
	ctx, cancel := context.WithTimeout(context.Background(), lagTimeout)
	defer cancel()
	lag, err := b.host.Lag(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(b.lag, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(b.lag, prometheus.GaugeValue, float64(lag))
}

// metricsServer serves one registry's /metrics on a listener of its own.
type metricsServer struct {
	ln  net.Listener
	srv *http.Server
}

// listenMetrics binds addr and prepares /metrics for reg (the Go runtime's
// and the process's metrics are added to it). Nothing is served until run.
func listenMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (*metricsServer, error) {
	if err := errors.Join(reg.Register(collectors.NewGoCollector()),
		reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             2 * lagTimeout,
	}))
	return &metricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}, nil
}

// URL is where the metrics are served.
func (s *metricsServer) URL() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// run serves until stop; an actor of serve's group.
func (s *metricsServer) run() error {
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// stop lets the scrapes in flight finish (for metricsShutdown at most) and
// closes the listener; run then returns.
func (s *metricsServer) stop(error) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsShutdown)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
}
